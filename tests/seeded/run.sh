#!/bin/sh
# run.sh - seeded-bug programs under AddressSanitizer, pooled and in bypass
# mode: write after return, read past the end, double return, read past a
# writer's length
# (BW_BYPASS=1 for bypass): each must be caught, with the report that names it.
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
for prog in write_after_return read_past_end double_return read_past_len; do
  if ! "$cc" -std=c11 -g -O1 -fsanitize=address -fno-omit-frame-pointer -pthread -I. \
       -o "$out/$prog" "$here/$prog.c" "$@"; then
    echo "FAIL $prog: does not build"; fail=$((fail + 1))
  fi
done
check write_after_return pooled "use-after-poison"
check write_after_return bypass "heap-use-after-free"
check read_past_end      pooled "heap-buffer-overflow"
check read_past_end      bypass "heap-buffer-overflow"
check double_return      pooled "returned twice"
check double_return      bypass "double-free"
check read_past_len      pooled "container-overflow"
check read_past_len      bypass "buffer-overflow"   # ASan names it so in an exact-size block
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
