#!/bin/sh
# tests/dl/run.sh [CC] [BUILD_DIR] - dlopen BUILD_DIR/libbufwriter.so, use
# a pool on a thread, dlclose, let the thread exit: the process must
# survive (0.1 crashed in the thread-exit cleanup, which pointed into the
# unloaded library). Prints "dlclose: N passed, N failed"; exits non-zero
# on failure. make test-dlclose runs it as: sh tests/dl/run.sh $(CC) build
CC=${1:-cc}
B=${2:-build}
dir=$(dirname "$0")
lib="$B/libbufwriter.so"
exe="$B/dlclose-test"
case $lib in /*|./*|../*) ;; *) lib="./$lib" ;; esac  # dlopen searches without a slash
if [ ! -f "$lib" ]; then
    echo "dlclose: $lib not found (run make first)" >&2
    echo "dlclose: 0 passed, 1 failed"
    exit 1
fi
if ! $CC -std=c11 -Wall -Wextra -Werror -pthread -o "$exe" "$dir/dlclose.c" -ldl; then
    echo "dlclose: 0 passed, 1 failed (could not build $dir/dlclose.c)"
    exit 1
fi
"$exe" "$lib"
status=$?
if [ $status -eq 0 ]; then
    echo "dlclose: 1 passed, 0 failed"
    exit 0
fi
echo "dlclose: thread exit after dlclose failed (status $status)" >&2
echo "dlclose: 0 passed, 1 failed"
exit 1
