// SPDX-License-Identifier: MIT
// bench_rent_return.cpp - Workload D: rent + return of one block of each class size
// (16 B .. 1 MiB) on the shared pool, against malloc + free of the same size
// from the process allocator (glibc, or jemalloc / mimalloc when the run
// preloads them). Single thread, and 2 threads (each thread on its own
// blocks; time per operation per thread). Baseline: malloc_free of the same
// size and thread count, same run.
//
// Workload I: many pools. One thread rents and returns one block (64 B or
// 4 KiB: thread-cached classes) per op, the pool of each op taken from a
// fixed shuffled 10,000-entry index array (every row walks the same array,
// so the rows differ only in the pools):
//   pools_1            1 pool (baseline, same size): the "last pool used"
//                      fast path every time
//   pools_16           16 pools, a different one nearly every op: the
//                      thread's cache table is looked up each time, all hot
//   pools_10000_use16  10,000 pools exist (this thread has a cache in each),
//                      ops on 16 of them: does the lookup slow down with the
//                      number of pools?
//   pools_10000        10,000 pools, every op on another one in shuffled
//                      order: the target row (within 2x of pools_1); the
//                      10,000 pools' and caches' memory does not stay in L1/L2
// The pools are created and warmed (each has this thread's cache and a block
// of the class) before timing, destroyed after.
//
// D/zero_20KiB_in_64MiB_block: a BW_POOL_ZERO_ON_RETURN pool that learned
// to start writers at 64 MiB (two 63 MiB jobs, BW_POOL_LEARN_SIZE, taught
// again untimed every 12 ops) and keeps that block; each op is a 20 KiB
// job (1 KiB writes) in it and its release, which zeroes what the job may
// have written (0.4.0 zeroed the whole 64 MiB).
#include "bench_common.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace bwbench {
namespace {

void bm_pool(benchmark::State &st)
{
    size_t size = static_cast<size_t>(st.range(0));
    bw_pool *p = bw_pool_shared();
    size_t cap = 0;
    void *b = bw_pool_rent(p, size, &cap); // warm-up: this thread's cache
    bw_pool_return(p, b, cap);
    AllocScope as;
    for (auto _ : st) {
        b = bw_pool_rent(p, size, &cap);
        benchmark::DoNotOptimize(b);
        bw_pool_return(p, b, cap);
    }
    as.report(st);
}

void bm_malloc(benchmark::State &st)
{
    size_t size = static_cast<size_t>(st.range(0));
    void *b = malloc(size); // warm-up
    benchmark::DoNotOptimize(b);
    free(b);
    AllocScope as;
    for (auto _ : st) {
        b = malloc(size);
        benchmark::DoNotOptimize(b);
        free(b);
    }
    as.report(st);
}

constexpr size_t kManyPools = 10000;

void bm_pools(benchmark::State &st, size_t npools, size_t nused)
{
    size_t size = static_cast<size_t>(st.range(0));
    std::vector<bw_pool *> pools(npools, nullptr);
    for (size_t i = 0; i < npools; i++)
        if (bw_pool_create(&pools[i], nullptr) != BW_OK) {
            for (size_t j = 0; j < i; j++) bw_pool_destroy(pools[j]);
            st.SkipWithError("bw_pool_create failed");
            return;
        }
    // The order: a fixed shuffle of 0..kManyPools-1 taken mod nused, each
    // used pool spread over the created ones (all zeros for one pool).
    std::vector<uint32_t> idx(kManyPools);
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (size_t i = 0; i < kManyPools; i++) idx[i] = static_cast<uint32_t>(i);
    for (size_t i = kManyPools - 1; i > 0; i--) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t j = static_cast<size_t>(x % (i + 1));
        uint32_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
    for (size_t i = 0; i < kManyPools; i++)
        idx[i] = static_cast<uint32_t>((idx[i] % nused) * (npools / nused));
    size_t cap = 0;
    for (size_t i = 0; i < npools; i++) { // warm-up: every pool's cache for this thread
        void *b = bw_pool_rent(pools[i], size, &cap);
        bw_pool_return(pools[i], b, cap);
    }
    uint64_t backing0 = 0, backing1 = 0;
    for (bw_pool *p : pools) {
        bw_pool_stats s;
        bw_pool_get_stats(p, &s);
        backing0 += s.backing_allocs;
    }
    size_t k = 0;
    AllocScope as;
    for (auto _ : st) {
        bw_pool *p = pools[idx[k]];
        k = k + 1 == kManyPools ? 0 : k + 1;
        void *b = bw_pool_rent(p, size, &cap);
        benchmark::DoNotOptimize(b);
        bw_pool_return(p, b, cap);
    }
    as.report(st);
    for (bw_pool *p : pools) {
        bw_pool_stats s;
        bw_pool_get_stats(p, &s);
        backing1 += s.backing_allocs;
    }
    st.counters["pool_backing_allocs"] = benchmark::Counter(
        static_cast<double>(backing1 - backing0), benchmark::Counter::kAvgIterations);
    for (bw_pool *p : pools) bw_pool_destroy(p);
}

void bm_zero_small_job(benchmark::State &st)
{
    static unsigned char chunk[1024];
    const size_t job = 63 * MiB;
    bw_pool_options o = {};
    bw_pool *p = nullptr;
    bw_writer w = BW_WRITER_INIT;
    o.flags = BW_POOL_ZERO_ON_RETURN | BW_POOL_LEARN_SIZE | BW_POOL_NO_LEARNED_GROWTH;
    if (bw_pool_create(&p, &o) != BW_OK) {
        st.SkipWithError("pool");
        return;
    }
    auto teach = [&] {
        for (int i = 0; i < 2; i++) {
            bw_init(&w, p, 0);
            bw_reserve(&w, job);
            bw_advance(&w, job);
            bw_release(&w);
        }
    };
    std::memset(chunk, 'z', sizeof chunk);
    teach();
    int jobs = 0;
    for (auto _ : st) {
        /* Every 20 KiB job is recorded too: two 63 MiB ones again (not
         * timed) before they leave the last 16 lengths. */
        if (++jobs == 12) {
            st.PauseTiming();
            teach();
            jobs = 0;
            st.ResumeTiming();
        }
        bw_init(&w, p, 0);
        for (int i = 0; i < 20; i++) bw_write(&w, chunk, sizeof chunk);
        benchmark::DoNotOptimize(bw_data(&w));
        bw_release(&w);
    }
    bw_pool_destroy(p);
}

void reg(const char *name, void (*fn)(benchmark::State &), int threads)
{
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(name, fn);
    for (size_t s = 16; s <= MiB; s *= 2) b->Arg(static_cast<int64_t>(s));
    b->ArgName("size")->Unit(benchmark::kNanosecond)->MinTime(0.05);
    if (threads > 1) b->Threads(threads);
}

} // namespace

void register_rent_return(const Options &o)
{
    reg("D/malloc_free", bm_malloc, 1);
    reg("D/pool_rent_return", bm_pool, 1);
    benchmark::RegisterBenchmark("D/zero_20KiB_in_64MiB_block", bm_zero_small_job)
        ->Unit(benchmark::kMicrosecond)->MinTime(0.2);
    if (o.full) {
        reg("D/malloc_free", bm_malloc, 2);
        reg("D/pool_rent_return", bm_pool, 2);
    }
}

void register_many_pools(const Options &)
{
    struct { const char *name; size_t npools, nused; } rows[] = {
        {"I/pools_1", 1, 1},
        {"I/pools_16", 16, 16},
        {"I/pools_10000_use16", kManyPools, 16},
        {"I/pools_10000", kManyPools, kManyPools},
    };
    for (const auto &r : rows)
        benchmark::RegisterBenchmark(r.name, bm_pools, r.npools, r.nused)
            ->Arg(64)->Arg(4096)->ArgName("size")->Unit(benchmark::kNanosecond)->MinTime(0.05);
}

} // namespace bwbench
