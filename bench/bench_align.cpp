// SPDX-License-Identifier: MIT
// bench_align.cpp - L: why the pool's blocks of 16 KiB and more start on a
// page. 64 KiB copied in 8 KiB memcpy calls from a source 0x480 past a page
// boundary (where J's source buffer sat in the build that showed it) into a
// warm buffer whose start lies at a chosen distance past the source modulo
// 4 KiB, and into the shared pool's 64 KiB block. A memcpy whose
// destination lies a little past its source modulo 4 KiB can run much
// slower (its loads look like they alias the stores it just made), so a
// block's place in the heap decided a J row before blocks were aligned.
//
//   dst_page           the destination on a page boundary (0xb80 past the
//                      source): the baseline, as limit_warm_huge's buffer
//   dst_src_plus_N     the destination N bytes past the source modulo 4 KiB
//                      (16, 256, 400: glibc's 64 KiB block at 0x610 in
//                      that build, 1024, 2048)
//   pool_block         the pool's own 64 KiB block (bw_pool_rent)
#include "bench_common.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace bwbench {
namespace {

constexpr size_t kJob = 64 * KiB, kChunk = 8 * KiB, kPage = 4096, kSrcOff = 0x480;

// -1: the pool's block; else the destination's distance past the source.
void bm_align(benchmark::State &st)
{
    long delta = static_cast<long>(st.range(0));
    unsigned char *src = static_cast<unsigned char *>(aligned_alloc(kPage, 4 * kPage));
    unsigned char *buf = static_cast<unsigned char *>(aligned_alloc(kPage, kJob + kPage));
    unsigned char *dst = buf;
    size_t cap = 0;
    if (src == nullptr || buf == nullptr) {
        st.SkipWithError("aligned_alloc failed");
        free(src);
        free(buf);
        return;
    }
    src += kSrcOff;
    memset(src, 7, kChunk);
    if (delta >= 0) dst = buf + (kSrcOff + static_cast<size_t>(delta)) % kPage;
    else dst = static_cast<unsigned char *>(bw_pool_rent(bw_pool_shared(), kJob, &cap));
    memset(dst, 1, kJob);
    size_t chunk = kChunk;
    for (auto _ : st) {
        benchmark::DoNotOptimize(chunk); // a size memcpy cannot inline, as J's
        for (size_t off = 0; off < kJob; off += chunk) memcpy(dst + off, src, chunk);
        benchmark::ClobberMemory();
    }
    st.counters["dst_page_offset"] = static_cast<double>(reinterpret_cast<uintptr_t>(dst) % kPage);
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(kJob));
    if (delta < 0) bw_pool_return(bw_pool_shared(), dst, cap);
    free(src - kSrcOff);
    free(buf);
}

void add(const char *name, long delta)
{
    benchmark::RegisterBenchmark((std::string("L/") + name).c_str(), bm_align)
        ->Arg(delta)
        ->ArgName("delta")
        ->Unit(benchmark::kMicrosecond);
}

} // namespace

void register_align(const Options &)
{
    add("dst_page", static_cast<long>(kPage - kSrcOff));
    add("dst_src_plus_16", 16);
    add("dst_src_plus_256", 256);
    add("dst_src_plus_400", 400);
    add("dst_src_plus_1024", 1024);
    add("dst_src_plus_2048", 2048);
    add("pool_block", -1);
}

} // namespace bwbench
