#!/bin/sh
# SPDX-License-Identifier: MIT
# test_summary.sh - the closing lines of `make test`: one line per part it
# ran, from each part's log and exit status, then the total as the plain
# "N passed, N failed" line CI reads.
#
# Usage: scripts/test_summary.sh LOGDIR PART...
#   LOGDIR/PART.log is the part's output, LOGDIR/PART.rc its exit status.
# A part's counts are its own closing "N passed, N failed" line (the
# packaging, seeded, dlclose and mini_criterion runners), or Criterion's
# "Synthesis" line (crashes count as failures), else 1 passed or 1 failed by
# its exit status. A part that exited non-zero counts at least one failure.
# A part's wall time is LOGDIR/PART.time, its CPU time (user + sys, itself
# and its children) LOGDIR/PART.cpu (seconds), when there. Parts that
# did not run (no PART.rc: make test was interrupted) are listed as such
# and not counted. Exits 1 if anything failed or did not run.
set -u
dir=$1
shift
total_p=0
total_f=0
total_c=0
not_run=0
echo "== make test: summary"
for part in "$@"; do
    log=$dir/$part.log
    if [ ! -f "$dir/$part.rc" ]; then
        echo "$part: not run"
        not_run=$((not_run + 1))
        continue
    fi
    rc=$(cat "$dir/$part.rc")
    # (tr: a Windows program's lines end in CR LF under wine)
    counts=$(tr -d '\r' < "$log" |
             sed -n 's/^\(.*: \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\2 \3/p' | tail -1)
    if [ -z "$counts" ]; then
        counts=$(sed -n 's/.*Synthesis: Tested: [0-9]* | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' "$log" |
                 tail -1 | awk '{ print $1, $2 + $3 }')
    fi
    if [ -z "$counts" ]; then
        if [ "$rc" = 0 ]; then counts="1 0"; else counts="0 1"; fi
    fi
    p=${counts% *}
    f=${counts#* }
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    note=""
    if [ "$rc" = 0 ] && grep -q '^m32: built; this kernel cannot run 32-bit programs' "$log"; then
        note=" (built; not run: no 32-bit support in this kernel)"
        p=0
    elif [ "$rc" = 0 ] && grep -q '^m32: not built' "$log"; then
        note=" (not built: no gcc-multilib)"
        p=0
    fi
    if [ -f "$dir/$part.time" ] && [ -f "$dir/$part.cpu" ]; then
        note="$note ($(cat "$dir/$part.time") s, $(cat "$dir/$part.cpu") s CPU)"
        total_c=$((total_c + $(cat "$dir/$part.cpu")))
    elif [ -f "$dir/$part.time" ]; then
        note="$note ($(cat "$dir/$part.time") s)"
    fi
    echo "$part: $p passed, $f failed$note"
    total_p=$((total_p + p))
    total_f=$((total_f + f))
done
[ "$total_c" -gt 0 ] && echo "CPU (user + sys) of the parts: $total_c s"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ] && [ "$not_run" -eq 0 ]
