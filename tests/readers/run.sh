#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/readers/run.sh - the two format examples, read back by their own
# formats' readers: examples/arrow_stream.c by Apache Arrow's JavaScript
# reader (the apache-arrow package from the npm registry, installed here
# into READERS/node_modules, pinned), examples/pickle_stream.c by Python's
# own pickle.loads. Every build given is run on every shape: 1, 1,000 and
# 100,000 rows, batches of 1 to 100,000 rows (one batch of 100,000 rows, a
# 3.4 MB body, is larger than the pool's 1 MiB threshold), empty strings,
# all-null columns, the segmented writer (references, writev) and the
# contiguous one (-c).
#
# Usage: sh tests/readers/run.sh READERS BIN SUFFIX...
#   READERS  a folder for node_modules (make: build/readers)
#   BIN      where the builds are: BIN/arrow_stream-SUFFIX, BIN/pickle_stream-SUFFIX
# Installs apache-arrow when it is missing (npm, the npm registry); when
# that fails, the Arrow checks count as failed (a reader the test could not
# run checked nothing) and the pickle checks still run. Prints a line per
# check and "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
readers=$1
bin=$2
shift 2
ARROW_VERSION=21.2.0
passed=0
failed=0
out=$(mktemp -d "${TMPDIR:-/tmp}/bw-readers.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT

have_arrow() {
    grep -qs "\"version\": \"$ARROW_VERSION\"" "$readers/node_modules/apache-arrow/package.json"
}
arrow=1
if ! have_arrow; then
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "readers: no node or npm (scripts/deps.sh test installs nodejs and npm)"
    else
        mkdir -p "$readers"
        echo "readers: npm install --prefix $readers apache-arrow@$ARROW_VERSION"
        npm install --prefix "$readers" --no-audit --no-fund --loglevel=error \
            "apache-arrow@$ARROW_VERSION" || echo "readers: npm install failed"
    fi
    if ! have_arrow; then
        arrow=0
        failed=$((failed + 1))
        echo "FAIL  readers: apache-arrow $ARROW_VERSION could not be installed from the" \
             "npm registry (see above), so no Arrow stream was checked"
    fi
fi
[ $arrow = 0 ] || cp "$here/arrow_check.mjs" "$readers/arrow_check.mjs"

check() { # what, then the command
    what=$1
    shift
    if "$@" > "$out/log" 2>&1; then
        passed=$((passed + 1))
        echo "ok    $what"
    else
        failed=$((failed + 1))
        echo "FAIL  $what"
        sed 's/^/      /' "$out/log" | tail -n 15
    fi
}

arrow_case() { # suffix, then arrow_stream's arguments (flags, ROWS [BATCH])
    s=$1
    shift
    flags=""
    while [ "${1#-}" != "$1" ]; do flags="$flags $1"; shift; done
    # shellcheck disable=SC2086
    "$bin/arrow_stream-$s" $flags "$@" > "$out/a.arrows" &&
        node "$readers/arrow_check.mjs" "$out/a.arrows" "$1" "${2:-1024}" $flags
}

pickle_case() { # suffix, N
    "$bin/pickle_stream-$1" "$2" > "$out/p.pickle" &&
        python3 "$here/pickle_check.py" "$out/p.pickle" "$2"
}

for s in "$@"; do
    if [ $arrow = 1 ]; then
        for args in "1" "1000" "100000" "1000 1" "100000 100000" "-e 1000 100" "-n 1000 100" \
                    "-e -n 7 3" "-c 1" "-c 100000" "-c 100000 100000" "-c -e -n 1000 64"; do
            check "arrow_stream-$s $args: apache-arrow reads what was meant" arrow_case "$s" $args
        done
    fi
    for n in 0 1 1000 100000; do
        check "pickle_stream-$s $n: pickle.loads gives what was meant, frames exact" \
            pickle_case "$s" "$n"
    done
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
