#!/bin/sh
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2086  # flag lists ($WARN, $2, $3) are split on purpose
# tests/packaging/run.sh - the two ways users get bufwriter, tested end to end.
#
#   1. The single header, as checked in (single_include/bufwriter.h): it
#      compiles warning-free with gcc and clang (C11, -Wpedantic) with and
#      without the implementation, and as C++ (declarations only); the
#      examples and a self-checking consumer build from it alone and run;
#      two translation units link without duplicate symbols; private
#      functions stay out of the symbol table; a C89 and a C99 includer
#      build and run; so do a POSIX 2008 and an XSI 7 includer whose own
#      headers come first, with BW_NO_FILE_ADAPTER (gcc, clang, musl-gcc);
#      <stdio.h> before a late _GNU_SOURCE still gives the
#      FILE* adapter; _GNU_SOURCE before <stdio.h> (glibc's own fopencookie
#      declarations) builds under -Werror, the single header and the
#      library's sources (LIB_SRCS, with the library's LIB_WARN set) alike.
#      The C++ wrapper,
#      bufwriter.hpp, beside it: bufwriter.h and a self-checking program
#      (cpp_wrapper.cpp) compile under g++ and clang++ at C++17 with the
#      strict set (CXXSTRICT), and the program runs.
#   2. The installed library: `make install` into a staging folder (DESTDIR,
#      PREFIX=/usr); the examples and the consumers (C, C++, the wrapper
#      test) are built through `pkg-config --cflags --libs bufwriter` and run
#      against the staged libbufwriter.so; CMake consumers through
#      find_package(bufwriter) (the installed bufwriterConfig.cmake: shared,
#      static and C++ targets; which versions it accepts) and through
#      pkg_check_modules; nm -D shows only bw_ symbols; the soname;
#      `make uninstall` removes everything install put there; the .pc is
#      relative to ${prefix} (pkg-config --define-prefix relocates it) and
#      links statically (--static), and the README's way to take the archive
#      alone (-Wl,-Bstatic) gives a program that runs with the .so removed.
#   3. The other ways a project takes it in, each building a consumer that
#      runs: CMake add_subdirectory (shared and static targets; a vendoring
#      project's installed program runs, bufwriter static by default, or
#      with BUILD_SHARED_LIBS its .so installed beside it), CMake
#      FetchContent from a local path (static only), a Meson subproject
#      (dependency('bufwriter') and bufwriter_dep; static, nothing of it
#      installed with the program) and Meson at the top level, CMake's own install
#      found with find_package; all three builds report the header's
#      version and make the same soname.
#   4. The Makefile's flags: `make CFLAGS=-DBW_DEBUG` (CPPFLAGS from the
#      environment, LDFLAGS, AR and RANLIB on the command line) builds a checked library
#      that still exports only bw_ symbols.
#
# Usage: sh tests/packaging/run.sh     (from anywhere; `make test-packaging`)
# Env:   MAKE (default make); KEEP=1 keeps the work folder and prints it;
#        LIB_BUILD: a build folder (the Makefile's B, made with the flags
#        MAKE passes on) to install from, rather than a fresh one;
#        LIB_SRCS, LIB_WARN: the library's sources and warning flags (the
#        Makefile's SRCS and strict set; without them, every .c file at the
#        top, in platform/ and in pool/, and -std=c11 $WARN).
# Prints one line per check, then "N passed, N failed"; exits 1 on any
# failure. Needs gcc, clang, g++, clang++, pkg-config, cmake, meson, ninja,
# nm, readelf, od.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/packaging
single=$root/single_include
MAKE=${MAKE:-make}
work=$(mktemp -d "${TMPDIR:-/tmp}/bw-packaging.XXXXXX") || exit 2
if [ "${KEEP:-0}" = 1 ]; then
    echo "work folder: $work"
else
    trap 'rm -rf "$work"' EXIT
    trap 'exit 130' INT TERM
fi

WARN="-Wall -Wextra -Wpedantic -Werror"
CXXWARN="-Wall -Wextra -Werror"
# The C++ wrapper's bar, which bufwriter.h must pass too. clang has no
# -Wuseless-cast (an unknown warning is an error under -Werror), so
# cxxstrict adds -Wno-unknown-warning-option for a compiler that lacks it.
CXXSTRICT="-std=c++17 -Wall -Wextra -Wpedantic -Wold-style-cast -Wzero-as-null-pointer-constant -Wuseless-cast -Werror"
EXAMPLES="message report records http_response packer"
LIB_SRCS=${LIB_SRCS:-$(cd "$root" && echo *.c platform/*.c pool/*.c)}
LIB_WARN=${LIB_WARN:-"-std=c11 $WARN"}
passed=0
failed=0
log=$work/log

# check NAME COMMAND...: run it; one line of outcome; the log on failure.
check() {
    name=$1
    shift
    if ( "$@" ) >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        sed -n '1,40s/^/     | /p' "$log"
    fi
}

have() { command -v "$1" >/dev/null 2>&1; }

# run_example BIN NAME: run it, compare its output with the expected one.
run_example() {
    case $2 in
      message)
        "$1" "$1.bin" || return 1
        od -An -tx1 -v "$1.bin" >"$1.out" || return 1
        diff -u "$here/expected/message.hex" "$1.out" ;;
      report)
        "$1" >"$1.out" || return 1
        diff -u "$here/expected/report.txt" "$1.out" ;;
      records)
        "$1" "$1.bin" >"$1.out" || return 1
        diff -u "$here/expected/records.txt" "$1.out" ;;
      http_response) # the exact bytes: CRLFs, and a Content-Length that is the body's
        "$1" >"$1.out" || return 1
        cmp "$here/expected/http_response.txt" "$1.out" ;;
      packer) # MessagePack bytes, from the stack buffer, the pool and a fixed buffer
        "$1" >"$1.out" || return 1
        diff -u "$here/expected/packer.txt" "$1.out" ;;
      *) echo "no expected output for $2"; return 1 ;;
    esac
}

# The private (bw__) functions the public header exports on purpose: the
# out-of-line grow paths the inline writes call.
exported_private() {
    sed -n 's/^BW_API [^(]*\(bw__[a-z0-9_]*\)(.*/\1/p' "$root/bufwriter.h" | sort -u
}

# Global symbols defined in object/library $1 (nm flags in $2).
defined_globals() {
    nm $2 --defined-only "$1" | awk 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3 }' | sort -u
}

version=$(sed -n 's/^#define BW_VERSION_STRING "\(.*\)"/\1/p' "$root/bufwriter.h")
hv() { sed -n "s/^#define BW_VERSION_$1 \([0-9]*\)\$/\1/p" "$root/bufwriter.h"; }
hversion=$(hv MAJOR).$(hv MINOR).$(hv PATCH)
major=${version%%.*}
# the soname's version: before 1.0 it is major.minor (libbufwriter.so.0.2)
if [ "$major" = 0 ]; then minor=${version#*.}; major=0.${minor%%.*}; fi

# ------------------------------------------------------------ single header
cat >"$work/decl.c" <<'EOF'
#include "bufwriter.h"
int bw_test_decl(bw_writer *w);
int bw_test_decl(bw_writer *w)
{
    return bw_put_u16be(w, 7) | bw_put_f64le(w, 0.5) | bw_put_svarint(w, -1) |
           bw_puts(w, "x") | bw_printf(w, "%d", 1) | bw_error(w);
}
EOF
cp "$work/decl.c" "$work/decl.cpp"
printf '#define BUFWRITER_IMPLEMENTATION\n#include "bufwriter.h"\n' >"$work/impl.cpp"

header_compiles() { # COMPILER STD FLAGS SOURCE
    $1 $2 $3 -O2 -I"$single" -c "$4" -o "$work/scratch.o"
}

example_single() { # CC EXAMPLE
    $1 -std=c11 $WARN -O2 -I"$single" -DBUFWRITER_IMPLEMENTATION \
        "$root/examples/$2.c" -pthread -o "$work/$2-single-$1" &&
    run_example "$work/$2-single-$1" "$2"
}

# impl_obj CC: impl.c (the implementation, -std=c11 $WARN
# -Werror=implicit-function-declaration -O2) compiled once per C compiler
# into $work/impl-CC.o: the check that it compiles with $WARN, the check that
# it compiles first in its own file, and every check that links it use that
# one compile, rather than the same compile of the whole library again in
# each. (-Werror=implicit-function-declaration adds nothing to $WARN's -Wall
# -Werror but says what impl_first_strict checks.)
impl_obj() {
    [ -f "$work/impl-$1.o" ] ||
        $1 -std=c11 $WARN -Werror=implicit-function-declaration -O2 -I"$single" -c "$here/impl.c" \
            -o "$work/impl-$1.o"
}

two_units() { # CC: impl.c + consumer.c, linked, run; no duplicate symbols
    impl_obj $1 &&
    $1 -std=c11 $WARN -O2 -I"$single" -c "$here/consumer.c" -o "$work/consumer-$1.o" &&
    $1 "$work/impl-$1.o" "$work/consumer-$1.o" -pthread -o "$work/consumer-$1" &&
    "$work/consumer-$1"
}

impl_symbols() { # CC: impl.o defines only bw_ globals; private ones static
    defined_globals "$work/impl-$1.o" "" >"$work/globals-$1" || return 1
    bad=$(grep -v '^bw_' "$work/globals-$1")
    [ -z "$bad" ] || { echo "globals without the bw_ prefix:"; echo "$bad"; return 1; }
    exported_private >"$work/allowed"
    priv=$(grep '^bw__' "$work/globals-$1" | grep -vxF -f "$work/allowed")
    [ -z "$priv" ] || { echo "private symbols that should be static:"; echo "$priv"; return 1; }
    # the declarations-only unit defines no bw_ function at all
    more=$(defined_globals "$work/consumer-$1.o" "" | grep -v '^main$')
    [ -z "$more" ] || { echo "consumer.o defines:"; echo "$more"; return 1; }
    echo "$(wc -l <"$work/globals-$1") global symbols, all bw_"
}

old_includer() { # CC STD: c89_includer.c at -std=STD -pedantic + impl.o (C11), run
    $1 -std=$2 -pedantic -Wall -Wextra -Werror -O2 -I"$single" "$here/c89_includer.c" "$work/impl-$1.o" \
        -pthread -o "$work/c89-$1-$2" &&
    "$work/c89-$1-$2"
}

gnu_source_late() { # CC: <stdio.h>, then _GNU_SOURCE, then the implementation: the #error
    if $1 -std=c11 $WARN -O2 -I"$single" -c "$here/gnu_source_late.c" -o "$work/scratch.o" \
        2>"$work/lateerr"; then
        echo "built: the prelude's check let a too-late _GNU_SOURCE through"; return 1
    fi
    cat "$work/lateerr"
    grep -q "first in their own .c file" "$work/lateerr" &&
    ! grep -q "implicit declaration" "$work/lateerr"
}

impl_first_strict() { # CC: impl.c, -std=c11 -Werror=implicit-function-declaration, no -D
    impl_obj $1
}

gnu_source_cmdline() { # CC: <stdio.h> first in a file built with -D_GNU_SOURCE: fine
    $1 -std=c11 $WARN -D_GNU_SOURCE -O2 -I"$single" -c "$here/gnu_source_late.c" -o "$work/scratch.o"
}

gnu_source_first() { # CC: _GNU_SOURCE before <stdio.h>, then the implementation; runs
    $1 -std=c11 $WARN -O2 -I"$single" "$here/gnu_source_first.c" -pthread -o "$work/gnu-first-$1" &&
    "$work/gnu-first-$1" &&
    $1 -std=c11 $WARN -D_GNU_SOURCE -O2 -I"$single" -c "$here/impl.c" -o "$work/scratch.o"
}

posix_includer() { # CC LEVEL: a POSIX level, <stdio.h>, BW_NO_FILE_ADAPTER's implementation; runs
    $1 -std=c11 $WARN $2 -O2 -I"$single" "$here/posix_includer.c" -pthread \
        -o "$work/posix-includer-$1" &&
    "$work/posix-includer-$1"
}

library_gnu_source() { # CC: each library source with -D_GNU_SOURCE -Werror
    for f in $LIB_SRCS; do
        $1 $LIB_WARN -Werror -D_GNU_SOURCE -fsyntax-only "$root/$f" || return 1
    done
}

cxx_consumer_single() { # CXX CC: consumer.cpp (C++) + impl.c (C)
    $1 -std=c++11 $CXXWARN -O2 -I"$single" -I"$here" -c "$here/consumer.cpp" -o "$work/cxx-$1.o" &&
    impl_obj $2 &&
    $1 "$work/cxx-$1.o" "$work/impl-$2.o" -pthread -o "$work/cxx-$1" &&
    "$work/cxx-$1"
}

cxxstrict() { # CXX: CXXSTRICT, as that compiler can take it
    if echo 'int x;' | $1 $CXXSTRICT -fsyntax-only -x c++ - >/dev/null 2>&1; then
        echo "$CXXSTRICT"
    else
        echo "$CXXSTRICT -Wno-unknown-warning-option"
    fi
}

# The single header and bufwriter.hpp copied side by side, as a user who
# drops them into a project has them (bufwriter.hpp includes "bufwriter.h").
drop=$work/drop
mkdir -p "$drop" && cp "$single/bufwriter.h" "$root/bufwriter.hpp" "$drop/"

strict_decl() { # CXX: bufwriter.h (public and single) as C++17, strict set
    f=$(cxxstrict $1)
    $1 $f -O2 -I"$root" -c "$work/decl.cpp" -o "$work/scratch.o" &&
    $1 $f -O2 -I"$single" -c "$work/decl.cpp" -o "$work/scratch.o"
}

wrapper_single() { # CXX CC: cpp_wrapper.cpp (strict C++17) + impl.c (C), run
    f=$(cxxstrict $1)
    $1 $f -O2 -I"$drop" -c "$here/cpp_wrapper.cpp" -o "$work/wrap-$1.o" &&
    impl_obj $2 &&
    $1 "$work/wrap-$1.o" "$work/impl-$2.o" -pthread -o "$work/wrap-$1" &&
    "$work/wrap-$1"
}

# cpp_fail/*.cpp: each compiles as it is (at C++17, the control) and fails
# with -DBW_FAIL (cxx14.cpp: at -std=c++14) with a message that matches its
# "// expect:" line (an extended regex).
compile_fail() { # CXX FILE
    std=-std=c++17 fail=-DBW_FAIL
    case $2 in *cxx14.cpp) fail=-std=c++14 ;; esac
    re=$(sed -n 's|^// expect: ||p' "$2")
    [ -n "$re" ] || { echo "$2: no // expect: line"; return 1; }
    $1 $std -I"$drop" -fsyntax-only "$2" || { echo "the control does not compile"; return 1; }
    if $1 $std $fail -I"$drop" -fsyntax-only "$2" 2>"$work/cxxerr"; then
        echo "compiled with $fail"; return 1
    fi
    grep -E "$re" "$work/cxxerr" || { echo "no line matches: $re"; head -20 "$work/cxxerr"; return 1; }
}

wrapper_cxx20() { # CXX: the C++20 parts (std::span) build warning-free and work
    f=$(cxxstrict $1 | sed 's/-std=c++17/-std=c++20/')
    $1 $f -O2 -I"$drop" -c "$here/cpp_wrapper.cpp" -o "$work/wrap20-$1.o" &&
    impl_obj gcc &&
    $1 "$work/wrap20-$1.o" "$work/impl-gcc.o" -pthread -o "$work/wrap20-$1" &&
    "$work/wrap20-$1" | grep 'std::span checked'
}

wrapper_no_exceptions() { # CXX: bufwriter.hpp needs neither exceptions nor RTTI
    f=$(cxxstrict $1)
    $1 $f -fno-exceptions -fno-rtti -O2 -I"$drop" -c "$here/cpp_wrapper.cpp" -o "$work/scratch.o"
}

impl_refused_in_cxx() { # CXX: a clear #error, not a page of template noise
    if $1 -std=c++11 -I"$single" -c "$work/impl.cpp" -o "$work/scratch.o" 2>"$work/cxxerr"; then
        echo "the implementation compiled as C++: drop the #error guard?"; return 1
    fi
    grep 'define BUFWRITER_IMPLEMENTATION in a C11 file' "$work/cxxerr"
}

impl_below_c11() { # CC STD: the implementation below C11 stops with an #error naming C11
    if $1 -std=$2 -I"$single" -c "$here/impl.c" -o "$work/scratch.o" 2>"$work/c11err"; then
        echo "the implementation compiled as $2"; return 1
    fi
    grep 'needs C11' "$work/c11err"
}

impl_warnings() { # CC FLAGS ALLOWED: the implementation's warnings are only of the kinds allowed
    $1 -std=c11 $2 -O2 -I"$single" -c "$here/impl.c" -o "$work/scratch.o" 2>"$work/warn.log" || {
        cat "$work/warn.log"; return 1; }
    left=$(grep -o '\[-W[a-z0-9-]*\]' "$work/warn.log" | sort | uniq -c)
    echo "${left:-no warnings}"
    bad=$(grep -o '\[-W[a-z0-9-]*\]' "$work/warn.log" | grep -v -x -e "$3" | head -3)
    [ -z "$bad" ] || { grep -m3 -F -e "$bad" "$work/warn.log"; return 1; }
}

check "single header's implementation below C11 (gcc -std=c99): an #error naming C11" \
    impl_below_c11 gcc c99
if have gcc; then
    check "single header's implementation: no warning (gcc -Wall -Wextra -Wnull-dereference)" \
        impl_warnings gcc "-Wall -Wextra -Wnull-dereference" 'none'
fi
if have clang; then
    check "single header's implementation, clang -Weverything: only the documented -Wpadded and -Wformat-nonliteral" \
        impl_warnings clang -Weverything '\[-W\(padded\|format-nonliteral\)\]'
fi

for cc in gcc clang; do
    if ! have $cc; then echo "note: $cc not found, its checks are skipped"; continue; fi
    check "single header, declarations only: $cc -std=c11 $WARN" \
        header_compiles $cc -std=c11 "$WARN" "$work/decl.c"
    check "single header, implementation:    $cc -std=c11 $WARN" \
        impl_obj $cc
    for opt in BW_DEBUG BW_VALGRIND BW_HAVE_JEMALLOC; do
        [ $opt = BW_HAVE_JEMALLOC ] && ! echo '#include <jemalloc/jemalloc.h>' |
            $cc -E -x c - >/dev/null 2>&1 && continue
        check "single header, implementation with -D$opt ($cc)" \
            header_compiles $cc -std=c11 "$WARN -D$opt" "$here/impl.c"
    done
    for ex in $EXAMPLES; do
        check "example $ex from the single header alone ($cc), runs, expected output" \
            example_single $cc $ex
    done
    check "two units ($cc): impl.c + consumer.c link (no duplicate symbols) and run" \
        two_units $cc
    check "single-header program ($cc): only bw_ globals, private functions static" \
        impl_symbols $cc
    for std in c89 c99; do
        check "a $std includer ($cc -std=$std -pedantic -Werror) + impl.c: builds, right bytes" \
            old_includer $cc $std
    done
    check "implementation first in its own file ($cc -std=c11 -Werror=implicit-function-declaration)" \
        impl_first_strict $cc
    check "<stdio.h>, then _GNU_SOURCE, then the implementation ($cc): the prelude's #error" \
        gnu_source_late $cc
    check "<stdio.h> first in a file built with -D_GNU_SOURCE ($cc): builds" \
        gnu_source_cmdline $cc
    check "_GNU_SOURCE, then <stdio.h> and the implementation ($cc -Werror): builds, bw_fopen works" \
        gnu_source_first $cc
    check "the library's sources with -D_GNU_SOURCE ($cc, its strict set, -Werror)" \
        library_gnu_source $cc
    check "_POSIX_C_SOURCE 200809L, <stdio.h>, BW_NO_FILE_ADAPTER's implementation ($cc): runs" \
        posix_includer $cc ""
    check "_XOPEN_SOURCE 700, <stdio.h>, BW_NO_FILE_ADAPTER's implementation ($cc): runs" \
        posix_includer $cc -DBW_TEST_XOPEN
done

# The implementation alone, first in its file, with the other C libraries
# and Windows: musl (musl-tools) and MinGW-w64.
for cc in musl-gcc x86_64-w64-mingw32-gcc-posix; do
    if ! have $cc; then echo "note: $cc not found, its check is skipped"; continue; fi
    check "implementation first in its own file ($cc -std=c11 -Werror=implicit-function-declaration)" \
        impl_first_strict $cc
    [ $cc = musl-gcc ] || continue
    check "_POSIX_C_SOURCE 200809L, <stdio.h>, BW_NO_FILE_ADAPTER's implementation ($cc): runs" \
        posix_includer $cc ""
    check "_XOPEN_SOURCE 700, <stdio.h>, BW_NO_FILE_ADAPTER's implementation ($cc): runs" \
        posix_includer $cc -DBW_TEST_XOPEN
done

for cxx in g++ clang++; do
    if ! have $cxx; then echo "note: $cxx not found, its checks are skipped"; continue; fi
    check "single header as C++, declarations only: $cxx -std=c++11 $CXXWARN" \
        header_compiles $cxx -std=c++11 "$CXXWARN" "$work/decl.cpp"
    check "C++ consumer ($cxx) + implementation in a C unit: link and run" \
        cxx_consumer_single $cxx gcc
    check "implementation in a C++ unit ($cxx): refused with a clear #error" \
        impl_refused_in_cxx $cxx
    check "bufwriter.h (public, single) as C++17, declarations only: $cxx $(cxxstrict $cxx)" \
        strict_decl $cxx
    check "bufwriter.hpp + single header: cpp_wrapper.cpp ($cxx, C++17 strict) + impl.c (gcc), runs" \
        wrapper_single $cxx gcc
    check "bufwriter.hpp with -fno-exceptions -fno-rtti ($cxx, strict)" \
        wrapper_no_exceptions $cxx
    check "bufwriter.hpp under C++20 (std::span in and out): cpp_wrapper.cpp builds, runs ($cxx)" \
        wrapper_cxx20 $cxx
    for f in "$here"/cpp_fail/*.cpp; do
        check "compile-fail ($cxx): cpp_fail/${f##*/}: $(sed -n '2s|^// ||p' "$f" | cut -c1-60)..." \
            compile_fail $cxx "$f"
    done
done

# ------------------------------------------------------ the staged install
stage=$work/stage
build=${LIB_BUILD:-$work/build}
libdir=$stage/usr/lib
export PKG_CONFIG_SYSROOT_DIR="$stage"
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig"   # the staged .pc only
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
unset PKG_CONFIG_PATH

install_staged() {
    # Its own build folder, so that no earlier build (another PREFIX in a
    # cached bufwriter.pc, other flags) leaks in; or LIB_BUILD, the build
    # folder make test-packaging has just brought up to date with its own
    # flags (the Makefile rebuilds on other flags and rewrites the .pc for
    # this PREFIX), so that the library is not compiled again for this.
    $MAKE -C "$root" --no-print-directory B="$build" PREFIX=/usr DESTDIR="$stage" install &&
    find "$stage" \( -type f -o -type l \) | sed "s|^$stage||" | sort >"$work/installed" &&
    for f in /usr/include/bufwriter.h /usr/include/bufwriter.hpp /usr/lib/libbufwriter.a \
             /usr/lib/libbufwriter.so "/usr/lib/libbufwriter.so.$major" \
             "/usr/lib/libbufwriter.so.$version" /usr/lib/pkgconfig/bufwriter.pc \
             /usr/lib/cmake/bufwriter/bufwriterConfig.cmake \
             /usr/lib/cmake/bufwriter/bufwriterConfigVersion.cmake \
             /usr/share/doc/bufwriter/LICENSE; do
        grep -qxF "$f" "$work/installed" || { echo "not installed: $f"; return 1; }
    done
    cat "$work/installed"
}

pkgconfig_sane() {
    v=$(pkg-config --modversion bufwriter) || return 1
    [ "$v" = "$version" ] || { echo "pkg-config version $v, header $version"; return 1; }
    flags=$(pkg-config --cflags --libs bufwriter) || return 1
    echo "pkg-config --cflags --libs bufwriter: $flags"
    case $flags in *"-I$stage/usr/include"*) ;; *) echo "no -I into the stage"; return 1 ;; esac
    case $flags in *"-L$libdir"*) ;; *) echo "no -L into the stage"; return 1 ;; esac
}

example_pkgconfig() { # CC EXAMPLE
    # shellcheck disable=SC2046
    $1 -std=c11 $WARN -O2 "$root/examples/$2.c" $(pkg-config --cflags --libs bufwriter) \
        -o "$work/$2-pc-$1" &&
    readelf -d "$work/$2-pc-$1" | grep -q "NEEDED.*libbufwriter.so.$major" &&
    LD_LIBRARY_PATH=$libdir run_example "$work/$2-pc-$1" "$2"
}

consumer_pkgconfig() { # COMPILER STD FLAGS SOURCE NAME
    # shellcheck disable=SC2046
    $1 $2 $3 -O2 -I"$here" "$4" $(pkg-config --cflags --libs bufwriter) -o "$work/$5" &&
    LD_LIBRARY_PATH=$libdir "$work/$5"
}

exports_only_bw() {
    so=$build/libbufwriter.so
    defined_globals "$so" -D >"$work/exports" || return 1
    [ -s "$work/exports" ] || { echo "nothing exported?"; return 1; }
    bad=$(grep -v '^bw_' "$work/exports")
    [ -z "$bad" ] || { echo "exported without the bw_ prefix:"; echo "$bad"; return 1; }
    echo "$(wc -l <"$work/exports") exports, all bw_"
    # the staged copy is the same library
    cmp "$so" "$libdir/libbufwriter.so"
}

soname_ok() {
    readelf -d "$libdir/libbufwriter.so.$version" | grep "SONAME.*\[libbufwriter.so.$major\]"
}

uninstall_clean() {
    $MAKE -C "$root" --no-print-directory B="$build" PREFIX=/usr DESTDIR="$stage" uninstall &&
    left=$(find "$stage" \( -type f -o -type l \)) &&
    { [ -z "$left" ] || { echo "left behind:"; echo "$left"; return 1; }; } &&
    { [ ! -d "$libdir/cmake/bufwriter" ] || { echo "left behind: lib/cmake/bufwriter/"; return 1; }; }
}

pkgconfig_static() { # the .a through pkg-config --static, a fully static program
    flags=$(pkg-config --static --cflags --libs bufwriter) || return 1
    echo "pkg-config --static --cflags --libs bufwriter: $flags"
    case $flags in *-pthread*) ;; *) echo "no -pthread in --static"; return 1 ;; esac
    # shellcheck disable=SC2086
    gcc -std=c11 $WARN -O2 "$here/consumer.c" -static $flags -o "$work/consumer-static" &&
    if readelf -d "$work/consumer-static" 2>/dev/null | grep -q NEEDED; then
        echo "the static program needs shared libraries"; return 1
    fi &&
    "$work/consumer-static"
}

pkgconfig_archive() { # the README's way to take libbufwriter.a alone, the rest dynamic
    flags=$(pkg-config --cflags bufwriter) && libs=$(pkg-config --libs bufwriter) &&
    other=$(pkg-config --static --libs-only-other bufwriter) || return 1
    echo "cc ... $flags -Wl,-Bstatic $libs -Wl,-Bdynamic $other"
    # shellcheck disable=SC2086
    gcc -std=c11 $WARN -O2 "$here/consumer.c" $flags -Wl,-Bstatic $libs -Wl,-Bdynamic $other \
        -o "$work/consumer-archive" || return 1
    if readelf -d "$work/consumer-archive" | grep 'NEEDED.*libbufwriter'; then
        echo "linked to the shared library"; return 1
    fi
    # It runs with the shared library gone (moved aside, then put back).
    mkdir -p "$work/so-aside" && mv "$libdir"/libbufwriter.so* "$work/so-aside/" &&
    LD_LIBRARY_PATH=$libdir "$work/consumer-archive"; rc=$?
    mv "$work/so-aside"/libbufwriter.so* "$libdir/" && return $rc
}

pkgconfig_relocated() { # the staged tree moved elsewhere: --define-prefix follows it
    grep -x 'libdir=${prefix}/lib' "$libdir/pkgconfig/bufwriter.pc" &&
    grep -x 'includedir=${prefix}/include' "$libdir/pkgconfig/bufwriter.pc" || {
        cat "$libdir/pkgconfig/bufwriter.pc"; return 1; }
    rm -rf "$work/moved" && mkdir -p "$work/moved" && cp -a "$stage/usr" "$work/moved/opt" &&
    flags=$(PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_LIBDIR="$work/moved/opt/lib/pkgconfig" \
            pkg-config --define-prefix --cflags --libs bufwriter) || return 1
    echo "moved: $flags"
    case $flags in *"-I$work/moved/opt/include"*"-L$work/moved/opt/lib"*) ;;
        *) echo "not relocated to $work/moved/opt"; return 1 ;; esac
    v=$(PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_LIBDIR="$work/moved/opt/lib/pkgconfig" \
        pkg-config --define-variable=prefix=/elsewhere --variable=libdir bufwriter)
    [ "$v" = /elsewhere/lib ] || { echo "--define-variable=prefix: libdir=$v"; return 1; }
    # shellcheck disable=SC2086
    gcc -std=c11 $WARN -O2 "$here/consumer.c" $flags -o "$work/consumer-moved" &&
    LD_LIBRARY_PATH=$work/moved/opt/lib "$work/consumer-moved"
}

cmake_subdir() { # add_subdirectory(<source tree>): shared and static, and installs
    cmake_build "$here/cmake-subdir" "$work/cm-sub" -DBW_ROOT="$root" -DBUFWRITER_INSTALL=ON \
        -DBUILD_SHARED_LIBS=ON \
        -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib || return 1
    readelf -d "$work/cm-sub/main_sub_shared" | grep "NEEDED.*\[libbufwriter.so.$major\]" &&
    "$work/cm-sub/main_sub_shared" && "$work/cm-sub/main_sub_static"
}

cmake_vendor() { # add_subdirectory + install(TARGETS app): the installed app runs
    # $1: static (the default) or shared (BUILD_SHARED_LIBS=ON)
    bld=$work/cm-vendor-$1 inst=$work/cm-vendor-$1-inst
    if [ "$1" = shared ]; then
        set -- -DBUILD_SHARED_LIBS=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib'
    else
        set --
    fi
    cmake_build "$here/cmake-vendor" "$bld" -DBW_ROOT="$root" -DCMAKE_INSTALL_PREFIX="$inst" \
        -DCMAKE_INSTALL_LIBDIR=lib "$@" || return 1
    cmake --install "$bld" >"$bld.install" 2>&1 || { cat "$bld.install"; return 1; }
    find "$inst" -type f -o -type l | sed "s|$inst/||" | sort
    [ ! -e "$inst/include/bufwriter.h" ] || { echo "installed bufwriter's headers"; return 1; }
    # the build tree's library is out of reach: only what was installed counts
    mv "$bld" "$bld.moved" && "$inst/bin/vendored_app"; rc=$?
    mv "$bld.moved" "$bld" && return $rc
}

cmake_fetch() { # FetchContent_Declare(bufwriter SOURCE_DIR <source tree>), static
    cmake_build "$here/cmake-fetch" "$work/cm-fetch" -DBW_ROOT="$root" || return 1
    if readelf -d "$work/cm-fetch/main_fetch" | grep -q 'NEEDED.*libbufwriter'; then
        echo "BUFWRITER_SHARED=OFF, yet main_fetch needs libbufwriter.so"; return 1
    fi
    "$work/cm-fetch/main_fetch"
}

meson_subproject() { # subprojects/bufwriter -> the source tree; then bufwriter's own build
    mkdir -p "$work/meson-src/subprojects" &&
    cp "$here/meson/meson.build" "$here/cmake/main.c" "$work/meson-src/" &&
    ln -sfn "$root" "$work/meson-src/subprojects/bufwriter" &&
    if ! meson setup "$work/meson-build" "$work/meson-src" >"$work/meson.configure" 2>&1; then
        cat "$work/meson.configure"; return 1
    fi
    if ! ninja -C "$work/meson-build" -j 2 >"$work/meson.build.log" 2>&1; then
        cat "$work/meson.build.log"; return 1
    fi
    grep "bufwriter version $version" "$work/meson.configure" &&
    "$work/meson-build/main_meson" && "$work/meson-build/main_meson_var" || return 1
    # A subproject goes into the program: no libbufwriter.so needed, and
    # the program's install holds nothing of bufwriter's.
    if readelf -d "$work/meson-build/main_meson" | grep -q 'NEEDED.*libbufwriter'; then
        echo "as a subproject, main_meson needs libbufwriter.so"; return 1
    fi
    DESTDIR="$work/meson-stage" meson install -C "$work/meson-build" >"$work/meson.install.log" 2>&1 || {
        cat "$work/meson.install.log"; return 1; }
    if [ -n "$(find "$work/meson-stage" -name '*bufwriter*' 2>/dev/null)" ]; then
        echo "the consumer's install holds:"; find "$work/meson-stage" -name '*bufwriter*'; return 1
    fi
    # At the top level: both libraries, and Meson's pkgconfig module
    # writes a .pc of the same version.
    if ! meson setup "$work/meson-top" "$root" >"$work/meson-top.configure" 2>&1 ||
       ! ninja -C "$work/meson-top" -j 2 >"$work/meson-top.log" 2>&1; then
        cat "$work/meson-top.configure" "$work/meson-top.log"; return 1
    fi
    v=$(PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_LIBDIR="$work/meson-top/meson-private" \
        pkg-config --modversion bufwriter) &&
    { [ "$v" = "$version" ] || { echo "meson's bufwriter.pc says $v"; return 1; }; }
}

cmake_install_find_package() { # the add_subdirectory build's install, then find_package
    DESTDIR="$work/cmstage" cmake --install "$work/cm-sub" >"$work/cm-install.log" 2>&1 || {
        cat "$work/cm-install.log"; return 1; }
    for f in include/bufwriter.h include/bufwriter.hpp lib/libbufwriter.a "lib/libbufwriter.so.$version" \
             lib/pkgconfig/bufwriter.pc lib/cmake/bufwriter/bufwriterConfig.cmake; do
        [ -e "$work/cmstage/usr/$f" ] || { echo "CMake did not install $f"; return 1; }
    done
    # The same templates filled in the same way as the Makefile's install.
    for f in pkgconfig/bufwriter.pc cmake/bufwriter/bufwriterConfig.cmake \
             cmake/bufwriter/bufwriterConfigVersion.cmake; do
        diff -u "$libdir/$f" "$work/cmstage/usr/lib/$f" || return 1
    done
    cmake_build "$here/cmake" "$work/cm-cmstage" -DCMAKE_PREFIX_PATH="$work/cmstage/usr" || return 1
    grep -x "bufwriter_DIR:PATH=$work/cmstage/usr/lib/cmake/bufwriter" "$work/cm-cmstage/CMakeCache.txt" &&
    LD_LIBRARY_PATH=$work/cmstage/usr/lib "$work/cm-cmstage/main_shared" &&
    "$work/cm-cmstage/main_static"
}

same_version() { # header macros = Makefile = CMake = Meson; one soname
    [ "$hversion" = "$version" ] || { echo "BW_VERSION_STRING $version, macros $hversion"; return 1; }
    mk=$($MAKE -C "$root" --no-print-directory -s version) &&
    cm=$(cat "$work/cm-sub/bufwriter-version.txt") &&
    ms=$(sed -n "s/^ *version: '\(.*\)',\$/\1/p" "$root/meson.build") &&
    echo "header $hversion, make $mk, cmake $cm, meson $ms" &&
    [ "$mk" = "$version" ] && [ "$cm" = "$version" ] && [ "$ms" = "$version" ] || return 1
    for so in "$build/libbufwriter.so" "$work/cm-sub/bufwriter/libbufwriter.so" \
              "$work/meson-top/libbufwriter.so"; do
        readelf -d "$so" | grep "SONAME.*\[libbufwriter.so.$major\]" || { echo "$so: soname?"; return 1; }
        real=$(readlink -f "$so")
        [ "${real##*/}" = "libbufwriter.so.$version" ] || { echo "$so is $real"; return 1; }
    done
}

checked_build() { # make CFLAGS=-DBW_DEBUG: a checked library, the user's flags after the project's
    # --no-silent: the compile lines are checked, and `make -s test` must not hide them.
    # AR and RANLIB are the user's too: wrappers that log, then run the real ones.
    printf '#!/bin/sh\necho "AR-WRAPPER $*"\nexec ar "$@"\n' >"$work/my-ar" &&
    printf '#!/bin/sh\necho "RANLIB-WRAPPER $*"\nexec ranlib "$@"\n' >"$work/my-ranlib" &&
    chmod +x "$work/my-ar" "$work/my-ranlib" &&
    CPPFLAGS=-DBW_TEST_ENV_CPPFLAGS $MAKE -C "$root" --no-print-directory --no-silent -j2 B="$work/dbg" \
        CFLAGS=-DBW_DEBUG LDFLAGS=-Wl,-z,now AR="$work/my-ar" RANLIB="$work/my-ranlib" all \
        >"$work/dbg.log" 2>&1 || { cat "$work/dbg.log"; return 1; }
    grep -q '^AR-WRAPPER ' "$work/dbg.log" && grep -q '^RANLIB-WRAPPER ' "$work/dbg.log" || {
        echo "AR or RANLIB ignored"; return 1; }
    grep -q -- '-fvisibility=hidden .*-DBW_TEST_ENV_CPPFLAGS -DBW_DEBUG' "$work/dbg.log" || {
        echo "the compile lines lack the project's flags, CPPFLAGS or CFLAGS in that order:"
        grep -m1 'pool.c' "$work/dbg.log"; return 1; }
    readelf -d "$work/dbg/libbufwriter.so" | grep -q 'BIND_NOW' || { echo "LDFLAGS=-Wl,-z,now ignored"; return 1; }
    bad=$(defined_globals "$work/dbg/libbufwriter.so" -D | grep -v '^bw_')
    [ -z "$bad" ] || { echo "exported without bw_ (visibility lost?):"; echo "$bad"; return 1; }
    gcc -std=c11 $WARN -O2 -I"$root" "$here/checked.c" "$work/dbg/libbufwriter.a" -pthread \
        -o "$work/checked" &&
    env -u BW_CHECKED "$work/checked"
}

# The CMake consumers: configured and built in the work folder, run against
# the staged library.
cmake_build() { # SOURCE-FOLDER BUILD-FOLDER CMAKE-ARGS...
    src=$1 bld=$2
    shift 2
    if ! cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release "$@" >"$bld.configure" 2>&1; then
        cat "$bld.configure"; return 1
    fi
    if ! cmake --build "$bld" -j 2 >"$bld.build" 2>&1; then
        cat "$bld.build"; return 1
    fi
}

cmake_find_package() {
    # find_package(bufwriter 0.2): the staged package, not some other one
    cmake_build "$here/cmake" "$work/cm" -DCMAKE_PREFIX_PATH="$stage/usr" || return 1
    grep -x "bufwriter_DIR:PATH=$libdir/cmake/bufwriter" "$work/cm/CMakeCache.txt" || {
        grep bufwriter_DIR "$work/cm/CMakeCache.txt"; return 1; }
    readelf -d "$work/cm/main_shared" | grep "NEEDED.*\[libbufwriter.so.$major\]" || return 1
    if readelf -d "$work/cm/main_static" | grep -q 'NEEDED.*libbufwriter'; then
        echo "main_static needs libbufwriter.so"; return 1
    fi
    LD_LIBRARY_PATH=$libdir "$work/cm/main_shared" &&
    "$work/cm/main_static" &&
    LD_LIBRARY_PATH=$libdir "$work/cm/cpp_wrapper"
}

cmake_versions() { # the version file, through find_package: what it accepts
    # the ABI is $major (0.2: major.minor before 1.0, else the major): next
    # and previous ABIs are refused, and so is a newer release of this one
    M=${version%%.*} rest=${version#*.}
    m=${rest%%.*}
    if [ "$M" = 0 ]; then next=0.$((m + 1)) prev=0.$((m - 1)); else next=$((M + 1)) prev=$((M - 1)); fi
    accept="$major;$version;$major...<$next;$major...$version"
    refuse="$next;$next.0;$((M + 1)).0;$major.99;$major...$next;$next...<$next.9"
    case $prev in *-1|0) ;; *) refuse="$refuse;$prev;$prev...<$next" ;; esac
    cmake -S "$here/cmake-version" -B "$work/cm-version" -DCMAKE_PREFIX_PATH="$stage/usr" \
        "-DBW_ACCEPT=$accept" "-DBW_REFUSE=$refuse" &&
    echo "accepted: $accept" && echo "refused:  $refuse"
}

cmake_pkgconfig() {
    # pkg_check_modules(BW REQUIRED IMPORTED_TARGET bufwriter), with the
    # PKG_CONFIG_LIBDIR and PKG_CONFIG_SYSROOT_DIR set above
    cmake_build "$here/cmake-pkgconfig" "$work/cm-pc" || return 1
    grep "bufwriter $version: .*$libdir/libbufwriter.so" "$work/cm-pc.configure" || {
        cat "$work/cm-pc.configure"; return 1; }
    readelf -d "$work/cm-pc/main_pc" | grep "NEEDED.*\[libbufwriter.so.$major\]" &&
    LD_LIBRARY_PATH=$libdir "$work/cm-pc/main_pc"
}

if have pkg-config; then
    check "make install DESTDIR=<tmp> PREFIX=/usr (headers, .a, .so*, .pc, CMake package)" install_staged
    if [ -f "$libdir/pkgconfig/bufwriter.pc" ]; then
        check "pkg-config finds the staged bufwriter.pc (version $version, sysroot paths)" pkgconfig_sane
        for cc in gcc clang; do
            have $cc || continue
            for ex in $EXAMPLES; do
                check "example $ex via pkg-config ($cc), linked to libbufwriter.so.$major, expected output" \
                    example_pkgconfig $cc $ex
            done
            check "consumer.c via pkg-config ($cc), runs" \
                consumer_pkgconfig $cc -std=c11 "$WARN" "$here/consumer.c" consumer-pc-$cc
        done
        for cxx in g++ clang++; do
            have $cxx || continue
            check "consumer.cpp via pkg-config ($cxx -std=c++11 $CXXWARN), runs" \
                consumer_pkgconfig $cxx -std=c++11 "$CXXWARN" "$here/consumer.cpp" consumer-pc-$cxx
            check "cpp_wrapper.cpp + installed bufwriter.hpp via pkg-config ($cxx $(cxxstrict $cxx)), runs" \
                consumer_pkgconfig $cxx "$(cxxstrict $cxx)" "" "$here/cpp_wrapper.cpp" wrapper-pc-$cxx
        done
        if have cmake; then
            check "CMake find_package(bufwriter $major) (CMAKE_PREFIX_PATH=<stage>/usr): shared, static, C++ targets build and run" \
                cmake_find_package
            check "CMake bufwriterConfigVersion.cmake: accepts $major and ranges within it; refuses other ABIs, newer $major" \
                cmake_versions
            check "CMake pkg_check_modules(BW REQUIRED IMPORTED_TARGET bufwriter): builds, runs" \
                cmake_pkgconfig
        else
            failed=$((failed + 1))
            echo "FAIL cmake not found (apt-get install cmake): the CMake package is not tested"
        fi
        check "nm -D libbufwriter.so exports only bw_ symbols" exports_only_bw
        check "soname is libbufwriter.so.$major" soname_ok
        check "pkg-config --static: a fully static consumer links and runs" pkgconfig_static
        check "pkg-config, -Wl,-Bstatic: libbufwriter.a alone; runs with the .so removed" \
            pkgconfig_archive
        check "bufwriter.pc is relative to \${prefix}: moved tree via --define-prefix builds, runs" \
            pkgconfig_relocated
        if have cmake; then
            check "CMake add_subdirectory(<source tree>): bufwriter::bufwriter and _static build, run" \
                cmake_subdir
            check "CMake FetchContent from a local path, BUFWRITER_SHARED=OFF: builds, runs" \
                cmake_fetch
            check "CMake add_subdirectory + install(TARGETS app): the installed app runs (static)" \
                cmake_vendor static
            check "... with BUILD_SHARED_LIBS=ON: the .so installed beside it, the app runs" \
                cmake_vendor shared
            check "CMake's own install (same .pc and package as make install) + find_package: runs" \
                cmake_install_find_package
        fi
        if have meson && have ninja; then
            check "Meson subproject: dependency('bufwriter'), bufwriter_dep; static, installs nothing; top level's .pc" \
                meson_subproject
        else
            failed=$((failed + 1))
            echo "FAIL meson or ninja not found (apt-get install meson ninja-build)"
        fi
        check "one version: header macros = make version = CMake = meson.build; one soname" \
            same_version
        check "make uninstall removes every file install put" uninstall_clean
    fi
else
    failed=$((failed + 1))
    echo "FAIL pkg-config not found (apt-get install pkg-config)"
fi

check "make CFLAGS=-DBW_DEBUG (CPPFLAGS in the environment, LDFLAGS=-Wl,-z,now, AR, RANLIB): checked library, bw_ exports only" \
    checked_build

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
