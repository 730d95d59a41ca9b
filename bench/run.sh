#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh default|full|scenarios - run the bench binaries under each process
# allocator and summarise. Called by `make run` / `make run-full` / `make
# scenarios` (REPS, PYTHON, SCEN_ARGS from the Makefile). Times are only ever
# compared within one process (one JSON file): every ratio is against a
# baseline row of the same run. The scenarios (build/scenarios: process-level
# targets) write their own CSV, folded into summary.csv by summarize.py.
set -eu
mode=${1:-default}
REPS=${REPS:-5}
PYTHON=${PYTHON:-python3}
cd "$(dirname "$0")"
# A run writes build/results/ (the full run build/results/full/, so that a
# quick run never overwrites the last full one's output): regenerated, never
# committed. `make record` copies the default run's summary.csv and plot into
# results/, the committed record.
SCEN_ARGS=${SCEN_ARGS:-}
OUT=${BENCH_OUT:-build/results}
R=$OUT
[ "$mode" = full ] && R=$OUT/full
mkdir -p "$R"
rm -f "$R"/*.tmp
FILES=""

find_lib() { # find_lib libjemalloc.so.2
  p=$(ldconfig -p 2>/dev/null | awk -v l="$1" '$1 == l && /x86-64|64bit/ {print $NF; exit}')
  [ -z "$p" ] && for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    [ -e "$d/$1" ] && { p="$d/$1"; break; }
  done
  echo "$p"
}
JE=$(find_lib libjemalloc.so.2)
MI=$(find_lib libmimalloc.so.2)

COMMON="--benchmark_repetitions=$REPS --benchmark_enable_random_interleaving=true \
--benchmark_display_aggregates_only=true --benchmark_out_format=json"

# run LABEL PRELOAD BINARY FILTER NAME [extra args]
run() {
  label=$1 pre=$2 bin=$3 filter=$4 name=$5
  shift 5
  out="$R/$name.json"
  tmp="$R/$name.json.tmp" # complete files only: an interrupted run leaves a .tmp
  printf '  %-9s %-28s ' "$label" "$name"
  start=$(date +%s)
  if [ -n "$pre" ]; then
    LD_PRELOAD="$pre" BENCH_ALLOCATOR_LABEL="$label" "$bin" --benchmark_filter="$filter" \
      --benchmark_out="$tmp" $COMMON "$@" >"$R/$name.log" 2>&1
  else
    BENCH_ALLOCATOR_LABEL="$label" "$bin" --benchmark_filter="$filter" \
      --benchmark_out="$tmp" $COMMON "$@" >"$R/$name.log" 2>&1
  fi
  mv "$tmp" "$out"
  FILES="$FILES $out"
  echo "$(( $(date +%s) - start )) s  (log: $R/$name.log)"
}

# The scenarios: everything under glibc, then the first-use scenario (whose
# baseline, a fresh realloc buffer, depends on the allocator) under
# jemalloc and mimalloc. -> $R/scenarios.csv and $R/scenarios.log.
# shellcheck disable=SC2086
scenarios() {
  out="$R/scenarios.csv"
  start=$(date +%s)
  build/scenarios --out "$out" --label glibc $SCEN_ARGS | tee "$R/scenarios.log"
  if [ -n "$JE" ]; then
    LD_PRELOAD="$JE" build/scenarios --append --out "$out" --label jemalloc $SCEN_ARGS first \
      | tee -a "$R/scenarios.log"
  fi
  if [ -n "$MI" ]; then
    LD_PRELOAD="$MI" build/scenarios --append --out "$out" --label mimalloc $SCEN_ARGS first \
      | tee -a "$R/scenarios.log"
  fi
  echo "  scenarios: $(( $(date +%s) - start )) s  (results: $out, log: $R/scenarios.log)"
}

if [ "$mode" = scenarios ]; then
  echo "bufwriter scenarios on $(nproc) CPUs"
  scenarios
  exit 0
fi

echo "bufwriter bench ($mode run, $REPS repetitions, random interleaving) on $(nproc) CPUs"
[ -n "$JE" ] || echo "  jemalloc: libjemalloc.so.2 not found: jemalloc runs skipped (apt-get install libjemalloc2)"
[ -n "$MI" ] || echo "  mimalloc: libmimalloc.so.2 not found: mimalloc runs skipped (apt-get install libmimalloc2.0)"

if [ "$mode" = full ]; then
  # Everything, under each allocator: A; B at 1..256 MiB (8 KiB chunks) and
  # chunks 64 B..64 KiB (10 MiB), main policies; C; D with 1 and 2 threads;
  # E; F; G at 1 GiB; H; I. Then D again in bench_nocount (no malloc
  # interposition): the malloc_free timings without the counting wrappers.
  ALL='^(A|B|C|D|E|F|G|H|I|J|K|T)/'
  run glibc "" build/bench "$ALL" glibc-full --bw_full
  [ -n "$JE" ] && run jemalloc "$JE" build/bench "$ALL" jemalloc-full --bw_full
  [ -n "$MI" ] && run mimalloc "$MI" build/bench "$ALL" mimalloc-full --bw_full
  run glibc "" build/bench_nocount '^D/' glibc-D-nocount --bw_full
  [ -n "$JE" ] && run jemalloc "$JE" build/bench_nocount '^D/' jemalloc-D-nocount --bw_full
  [ -n "$MI" ] && run mimalloc "$MI" build/bench_nocount '^D/' mimalloc-D-nocount --bw_full
else
  # The default run: A, C, single-thread D, E, F, G (256 MiB), H
  # and I under glibc and jemalloc (the min_first_block sweep under glibc); a reduced B (sizes 1..64 MiB at 8 KiB,
  # main policies) under glibc; A and single-thread D (bench_nocount) under
  # mimalloc; the defaults' B rows
  # (limit_warm, bufwriter, bufwriter_steady at 1..64 MiB) under jemalloc and
  # mimalloc; J (the 0.3 sweep) under all three. (The files keep their old
  # names, *-ACDE, so that earlier
  # records stay comparable.)
  ACDE='^(A|C|D|E|F|G|H|I|K|L|R|T)/'
  # jemalloc: the same without the min_first_block sweep (E/mfb*: the pool's
  # thread cache serves those rows, whatever the allocator; ~15 s saved).
  ACDE_NO_MFB='^(A|C|D|F|G|H|I)/|^E/(raw_store|bw_inline|bufwriter)/'
  BRED='^B/(limit_warm|realloc_double|std_string|bufwriter|bufwriter_steady|exact_size)/size:[0-9]+/chunk:8192'
  BDEF='^B/(limit_warm|bufwriter|bufwriter_steady)/size:[0-9]+/chunk:8192'
  # J: the 0.3 sweep (64 KiB .. 256 MiB; defaults, segmented, the peers:
  # realloc doubling, open_memstream, std::string, GByteArray, sds-style;
  # both limits) under every allocator: the record's plot.
  J='^J/'
  run glibc "" build/bench "$ACDE" glibc-ACDE
  run glibc "" build/bench "$BRED" glibc-B --benchmark_repetitions=3
  [ -n "$JE" ] && run jemalloc "$JE" build/bench "$ACDE_NO_MFB" jemalloc-ACDE
  [ -n "$JE" ] && run jemalloc "$JE" build/bench "$BDEF" jemalloc-B --benchmark_repetitions=3
  [ -n "$MI" ] && run mimalloc "$MI" build/bench '^A/' mimalloc-A --benchmark_repetitions=3
  # D under mimalloc, the allocator the small paths' target names (a rent
  # + return of every class <= its malloc + free), single thread
  # as the default run registers it, in bench_nocount: the counting
  # wrappers' cost would land on malloc_free only.
  [ -n "$MI" ] && run mimalloc "$MI" build/bench_nocount '^D/' mimalloc-D-nocount
  [ -n "$MI" ] && run mimalloc "$MI" build/bench "$BDEF" mimalloc-B --benchmark_repetitions=3
  run glibc "" build/bench "$J" glibc-J --benchmark_repetitions=3
  [ -n "$JE" ] && run jemalloc "$JE" build/bench "$J" jemalloc-J --benchmark_repetitions=3
  [ -n "$MI" ] && run mimalloc "$MI" build/bench "$J" mimalloc-J --benchmark_repetitions=3
fi

echo
scenarios

echo
# shellcheck disable=SC2086
"$PYTHON" ./summarize.py --out "$R" --scenarios "$R/scenarios.csv" $FILES
