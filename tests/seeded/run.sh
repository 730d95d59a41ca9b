#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - seeded-bug programs under AddressSanitizer, pooled and in bypass
# mode (BW_BYPASS=1): write after return, read past the end, double return;
# each must be caught, with the report that names it; a segmented writer's
# piece count broken, caught by bw__seg_check (BW_DEBUG). Then correct programs
# that must run clean: with the program and the library instrumented or not
# in every combination, and in checked bypass mode.
# Usage: tests/seeded/run.sh CC BUILD_DIR LIBRARY_SOURCES...
set -u
cc=$1 out=$2
shift 2
here=$(dirname "$0")
mkdir -p "$out"
pass=0 fail=0
check() { # check NAME MODE EXPECTED
  name=$1 mode=$2 want=$3
  if [ "$mode" = bypass ]; then env=BW_BYPASS=1; else env=BW_BYPASS=0; fi
  log="$out/$name-$mode.log"
  env "$env" ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 "$out/$name" >"$log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && grep -q -- "$want" "$log"; then
    echo "ok   $name ($mode): caught: $want"; pass=$((pass + 1))
  else
    echo "FAIL $name ($mode): exit $rc, wanted '$want' (see $log)"; fail=$((fail + 1))
  fi
}
asan="-fsanitize=address -fno-omit-frame-pointer"
libsrcs="$*"
# lib_objs NAME FLAGS: the library's sources compiled once into
# $out/lib-NAME/, for every program below built with the same flags (the
# sources, compiled one by one either way, were compiled again for each).
lib_objs() {
  d="$out/lib-$1"
  rm -rf "$d" && mkdir -p "$d"
  for src in $libsrcs; do
    "$cc" -std=c11 -g -O1 $2 -pthread -I. -c "$src" -o "$d/$(echo "$src" | tr / _).o" || return 1
  done
}
lib_objs asan "$asan" || echo "the library does not build with $asan"
lib_objs plain "" || echo "the library does not build"
for prog in write_after_return read_past_end double_return; do
  if ! "$cc" -std=c11 -g -O1 $asan -pthread -I. \
       -o "$out/$prog" "$here/$prog.c" "$out"/lib-asan/*.o; then
    echo "FAIL $prog: does not build"; fail=$((fail + 1))
  fi
done
check write_after_return pooled "use-after-poison"
check write_after_return bypass "heap-use-after-free"
check read_past_end      pooled "heap-buffer-overflow"
check read_past_end      bypass "heap-buffer-overflow"
check double_return      pooled "returned twice"
check double_return      bypass "double-free"
# A segmented writer's state broken behind its bytes: with BW_DEBUG the
# library checks every invariant after each segmented operation.
if "$cc" -std=c11 -g -O1 -DBW_DEBUG -pthread -I. -o "$out/piece_count" \
     "$here/piece_count.c" "$@"; then
  check piece_count pooled "broken invariant: the current block's piece count"
else
  echo "FAIL piece_count: does not build"; fail=$((fail + 1))
fi

# clean NAME ENV: the program must exit 0 with no sanitizer report.
clean() {
  name=$1 env=$2
  log="$out/$name.log"
  env $env ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 "$out/$name" >"$log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && ! grep -q "Sanitizer" "$log"; then
    echo "ok   $name: clean"; pass=$((pass + 1))
  else
    echo "FAIL $name: exit $rc (see $log)"; fail=$((fail + 1))
  fi
}
build() { # build NAME PROG_FLAGS LIB: the program over the library's objects lib-LIB
  name=$1 pf=$2 lib=$3
  if ! "$cc" -std=c11 -g -O1 $pf -pthread -I. -c "$here/clean_mixed.c" -o "$out/$name.o" ||
     ! "$cc" $asan -pthread -o "$out/$name" "$out/$name.o" "$out/lib-$lib"/*.o; then
    echo "FAIL $name: does not build"; fail=$((fail + 1))
  fi
}
build mixed_both "$asan" asan
build mixed_program_only "$asan" plain
build mixed_library_only "" asan
clean mixed_both ""
clean mixed_program_only ""
clean mixed_library_only ""
if "$cc" -std=c11 -g -O1 $asan -pthread -I. -o "$out/checked_bypass" \
     "$here/clean_checked_bypass.c" "$out"/lib-asan/*.o; then
  clean checked_bypass "BW_CHECKED=1 BW_BYPASS=1"
else
  echo "FAIL checked_bypass: does not build"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
