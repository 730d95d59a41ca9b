// bench_main.cpp - the bufwriter benchmark (issue 3). Registers workloads
// A-E, records which allocator really serves malloc, runs google-benchmark.
//
// Own options (removed before google-benchmark sees the rest):
//   --bw_full          run-full sizes (B up to 256 MiB, D with 2 threads)
//   --bw_slow_reps=N   repetitions of the quadratic rows (default 3)
// Select workloads with --benchmark_filter (e.g. '^(A|C)/').
#include "bench_common.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bwbench {

const unsigned char *source_bytes()
{
    static unsigned char buf[kMaxChunk];
    static bool init = false;
    if (!init) {
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (size_t i = 0; i < kMaxChunk; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            buf[i] = static_cast<unsigned char>(x);
        }
        init = true;
    }
    return buf;
}

uint64_t checksum(const unsigned char *p, size_t len)
{
    uint64_t a = 0, b = 0, c = 0;
    if (p == nullptr || len < 8) return len;
    memcpy(&a, p, 8);
    memcpy(&b, p + (len / 2 & ~static_cast<size_t>(7)), 8);
    memcpy(&c, p + len - 8, 8);
    return a ^ (b * 31) ^ (c * 131) ^ len;
}

} // namespace bwbench

int main(int argc, char **argv)
{
    bwbench::Options o;
    std::vector<char *> rest;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--bw_full") == 0) o.full = true;
        else if (strncmp(argv[i], "--bw_slow_reps=", 15) == 0) o.slow_reps = atoi(argv[i] + 15);
        else rest.push_back(argv[i]);
    }
    if (o.slow_reps < 1) o.slow_reps = 1;
    int n = static_cast<int>(rest.size());
    rest.push_back(nullptr);

    (void)bwbench::source_bytes();
    bwbench::register_ab(o);
    bwbench::register_c(o);
    bwbench::register_d(o);
    bwbench::register_e(o);
    bwbench::register_f(o);

    benchmark::AddCustomContext("allocator", bench_alloc_provider());
    benchmark::AddCustomContext("alloc_counting", bench_alloc_counting() ? "malloc interposition" : "off");
    const char *label = getenv("BENCH_ALLOCATOR_LABEL");
    benchmark::AddCustomContext("allocator_label", label ? label : "glibc");
    benchmark::AddCustomContext("bufwriter_version", bw_version());
    benchmark::AddCustomContext("profile", o.full ? "full" : "default");

    benchmark::Initialize(&n, rest.data());
    if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
