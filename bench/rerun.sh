#!/bin/sh
# SPDX-License-Identifier: MIT
# Needs a finished run-full (same binaries). Library paths are the Debian 12 x86-64 ones.
# Focused reruns (9-11 interleaved repetitions) of rows whose full-run figure sat near a target.
cd "$(dirname "$0")"
R=build/results/full
JE=/lib/x86_64-linux-gnu/libjemalloc.so.2
MI=/lib/x86_64-linux-gnu/libmimalloc.so.2
C="--benchmark_repetitions=9 --benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true --benchmark_out_format=json"
r() { label=$1 pre=$2 bin=$3 filter=$4 name=$5; shift 5
  echo "  $label $name: $bin --benchmark_filter='$filter' $C $*"
  env ${pre:+LD_PRELOAD=$pre} BENCH_ALLOCATOR_LABEL=$label $bin --bw_full --benchmark_filter="$filter" $C "$@" --benchmark_out=$R/$name.json > $R/$name.log 2>&1; }
AF='^A/(limit_warm|limit_cold|realloc_double|std_string|bufwriter/|bufwriter_steady)'
r glibc "" build/bench "$AF" rerun-glibc-A
r jemalloc $JE build/bench "$AF" rerun-jemalloc-A
r mimalloc $MI build/bench "$AF" rerun-mimalloc-A
BF='^B/(limit_warm|bufwriter_steady)/size:(4194304|16777216|67108864)/chunk:8192/'
r mimalloc $MI build/bench "$BF" rerun-mimalloc-B
CF='^C/(raw_store|bw_put_u32le|bw_put_u32le_clear|open_memstream)/'
r glibc "" build/bench "$CF" rerun-glibc-C
r jemalloc $JE build/bench "$CF" rerun-jemalloc-C
r mimalloc $MI build/bench "$CF" rerun-mimalloc-C
EF='^E/(raw_store|bw_inline|bw_inline_init)/'
r glibc "" build/bench "$EF" rerun-glibc-E
r mimalloc $MI build/bench "$EF" rerun-mimalloc-E
r jemalloc $JE build/bench_nocount '^D/.*/size:(16|32|64|128|256|512|1024|2048|4096)/min_time:0.050$' rerun-jemalloc-D-nocount --benchmark_repetitions=11
# The segmented writer against the memcpy limit (A), the put
# in every mode (C), streaming 1 GiB (G) and CSV lines (H).
IF='^(A/(limit_warm|bufwriter|bw_chain)/|C/(raw_store|bw_put_u32le_clear|bw_put_u32le_chain|bw_put_u32le_fd|bw_put_u32le_fixed)/|G/|H/)'
r glibc "" build/bench "$IF" rerun-glibc-AGCH
r jemalloc $JE build/bench "$IF" rerun-jemalloc-AGCH
r mimalloc $MI build/bench "$IF" rerun-mimalloc-AGCH
