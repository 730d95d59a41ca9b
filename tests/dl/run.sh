#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/dl/run.sh [CC] [BUILD_DIR] - dlopen, use a pool on a thread,
# dlclose, let the thread exit: the process must survive. Three cases:
#   lib     BUILD_DIR/libbufwriter.so itself (-z nodelete: it stays mapped);
#   single  a plugin built from single_include/bufwriter.h with
#           BUFWRITER_IMPLEMENTATION (tests/dl/plugin.c);
#   static  the same plugin linked with BUILD_DIR/libbufwriter.a.
# The plugins are really unmapped by dlclose: 0.1 and 0.2 crashed there in
# the thread-exit cleanup (a pthread key destructor), which pointed into the
# unloaded code. Prints "dlclose: N passed, N failed"; exits non-zero on
# failure. make test-dlclose runs it as: sh tests/dl/run.sh $(CC) build
CC=${1:-cc}
B=${2:-build}
dir=$(dirname "$0")
root="$dir/../.."
exe="$B/dlclose-test"
case $B in /*|./*|../*) lib_dir="$B" ;; *) lib_dir="./$B" ;; esac  # dlopen searches without a slash
PLUGIN_CFLAGS="-std=c11 -Wall -Wextra -Werror -O2 -g -fPIC -shared -pthread"
passed=0
failed=0

fail() {
    echo "dlclose: $1" >&2
    failed=$((failed + 1))
}

# run NAME ARGS...: the host on one library or plugin.
run() {
    name=$1
    shift
    "$exe" "$@"
    status=$?
    if [ $status -eq 0 ]; then
        echo "dlclose: $name: the thread exited after dlclose, the process survived"
        passed=$((passed + 1))
    else
        fail "$name: thread exit after dlclose failed (status $status)"
    fi
}

if ! $CC -std=c11 -Wall -Wextra -Werror -pthread -o "$exe" "$dir/dlclose.c" -ldl; then
    echo "dlclose: 0 passed, 1 failed (could not build $dir/dlclose.c)"
    exit 1
fi

if [ -f "$B/libbufwriter.so" ]; then
    run lib "$lib_dir/libbufwriter.so"
else
    fail "lib: $B/libbufwriter.so not found (run make first)"
fi

if $CC $PLUGIN_CFLAGS -DPLUGIN_SINGLE -I"$root/single_include" \
        -o "$B/dl-plugin-single.so" "$dir/plugin.c"; then
    run single --plugin "$lib_dir/dl-plugin-single.so"
else
    fail "single: could not build the plugin from $root/single_include/bufwriter.h"
fi

if [ ! -f "$B/libbufwriter.a" ]; then
    fail "static: $B/libbufwriter.a not found (run make first)"
elif $CC $PLUGIN_CFLAGS -I"$root" -o "$B/dl-plugin-static.so" "$dir/plugin.c" \
        "$B/libbufwriter.a"; then
    run static --plugin "$lib_dir/dl-plugin-static.so"
else
    fail "static: could not build the plugin with $B/libbufwriter.a"
fi

echo "dlclose: $passed passed, $failed failed"
[ $failed -eq 0 ]
