/* SPDX-License-Identifier: MIT */
// bench_common.h - helpers shared by the workloads of the bufwriter bench.
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <sys/resource.h>
#include <string>

#include "../bufwriter.h"
#include "alloc_count.h"

namespace bwbench {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;
constexpr size_t kMaxChunk = 64 * KiB;

// kMaxChunk bytes of pseudo-random data, the source of every append.
const unsigned char *source_bytes();

// Reads a few bytes of the result (first, middle, last 8), as a consumer
// would, so that no write can be optimised away.
uint64_t checksum(const unsigned char *p, size_t len);

// Allocation counters over a benchmark loop: snapshot before the loop,
// report() after it sets the user counters allocs_per_op and bytes_per_op
// (averaged over iterations; with several threads, over all of them).
class AllocScope {
public:
    AllocScope() : start_(bench_alloc_snapshot()), faults_(minor_faults()) {}
    // Minor page faults of this thread (fresh pages touched), per op.
    static long minor_faults()
    {
        struct rusage ru;
        return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_minflt : 0;
    }
    void report(benchmark::State &st) const
    {
        bench_alloc_counts end = bench_alloc_snapshot();
        st.counters["faults_per_op"] = benchmark::Counter(
            static_cast<double>(minor_faults() - faults_), benchmark::Counter::kAvgIterations);
        if (!bench_alloc_counting()) return;
        st.counters["allocs_per_op"] = benchmark::Counter(
            static_cast<double>(end.allocs - start_.allocs), benchmark::Counter::kAvgIterations);
        st.counters["bytes_per_op"] = benchmark::Counter(
            static_cast<double>(end.bytes - start_.bytes), benchmark::Counter::kAvgIterations);
    }

private:
    bench_alloc_counts start_;
    long faults_;
};

// Pool counters over a loop: backing allocations per iteration.
class PoolScope {
public:
    explicit PoolScope(bw_pool *p) : pool_(p) { bw_pool_get_stats(p, &start_); }
    void report(benchmark::State &st) const
    {
        bw_pool_stats end;
        bw_pool_get_stats(pool_, &end);
        st.counters["pool_backing_allocs"] = benchmark::Counter(
            static_cast<double>(end.backing_allocs - start_.backing_allocs),
            benchmark::Counter::kAvgIterations);
    }

private:
    bw_pool *pool_;
    bw_pool_stats start_;
};

// A write-only descriptor of /dev/null, opened once.
int devnull_fd();

// What the runs of this process register (set from the command line).
struct Options {
    bool full = false;        // run-full sizes (B up to 256 MiB, D with 2 threads,
                              // G 1 GiB instead of 256 MiB)
    int slow_reps = 3;        // repetitions of the quadratic rows (1 iteration each)
    double min_time = 0;      // A, B, J rows' min time per repetition (s); 0 = their own
};

void register_append(const Options &o);        // bench_append.cpp: A, B, J
void register_small_writes(const Options &o);  // bench_small_writes.cpp: C, H
void register_rent_return(const Options &o);   // bench_rent_return.cpp: D
void register_many_pools(const Options &o);    // bench_rent_return.cpp: I
void register_messages(const Options &o);      // bench_messages.cpp: E
void register_output(const Options &o);        // bench_output.cpp: F, G
void register_zero_copy(const Options &o);     // bench_zero_copy.cpp: Z
void register_float_text(const Options &o);    // bench_float_text.cpp: T
void register_handoff(const Options &o);       // bench_handoff.cpp: K
void register_align(const Options &o);         // bench_align.cpp: L

} // namespace bwbench

#endif
