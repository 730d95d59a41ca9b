// SPDX-License-Identifier: MIT
// bench_main.cpp - the bufwriter benchmark. Registers the
// workloads, records which allocator really serves malloc, runs
// google-benchmark. Row names start with their workload's letter:
//   A, B  appending (10 MiB in 8 KiB chunks; size and chunk sweeps)
//   J     the 0.3 size sweep, 64 KiB .. 256 MiB, against both limits
//                                            bench_append.cpp
//   C     1M u32 puts in every writer mode    bench_small_writes.cpp
//   H     1M CSV lines: decimal puts vs printf
//   D     pool rent+return vs malloc+free     bench_rent_return.cpp
//   I     rent+return over 10,000 pools vs 1 (bench_rent_return.cpp)
//   E     small messages (and the min_first_block sweep) bench_messages.cpp
//   F     10 MiB out to an fd or a FILE*      bench_output.cpp
//   G     streaming 256 MiB / 1 GiB to /dev/null
//
// Own options (removed before google-benchmark sees the rest):
//   --bw_full          run-full sizes (B up to 256 MiB, D with 2 threads,
//                      G 1 GiB)
//   --bw_slow_reps=N   repetitions of the quadratic rows (default 3)
//   --bw_min_time=S    min time per repetition of the A, B and J rows (a
//                      quick look; default: each row's own)
// Select workloads with --benchmark_filter (e.g. '^(A|C)/').
#include "bench_common.h"

#include <fcntl.h>

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

int devnull_fd()
{
    static int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    return fd;
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
        else if (strncmp(argv[i], "--bw_min_time=", 14) == 0) o.min_time = atof(argv[i] + 14);
        else rest.push_back(argv[i]);
    }
    if (o.slow_reps < 1) o.slow_reps = 1;
    int n = static_cast<int>(rest.size());
    rest.push_back(nullptr);

    (void)bwbench::source_bytes();
    bwbench::register_append(o);
    bwbench::register_small_writes(o);
    bwbench::register_rent_return(o);
    bwbench::register_many_pools(o);
    bwbench::register_messages(o);
    bwbench::register_output(o);
    bwbench::register_zero_copy(o);
    bwbench::register_float_text(o);
    bwbench::register_handoff(o);
    bwbench::register_align(o);

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
