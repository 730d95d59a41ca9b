// bench_rent_return.cpp - Workload D: rent + return of one block of each class size
// (16 B .. 1 MiB) on the shared pool, against malloc + free of the same size
// from the process allocator (glibc, or jemalloc / mimalloc when the run
// preloads them). Single thread, and 2 threads (each thread on its own
// blocks; time per operation per thread). Baseline: malloc_free of the same
// size and thread count, same run.
#include "bench_common.h"

#include <cstdlib>

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
    if (o.full) {
        reg("D/malloc_free", bm_malloc, 2);
        reg("D/pool_rent_return", bm_pool, 2);
    }
}

} // namespace bwbench
