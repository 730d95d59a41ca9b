// SPDX-License-Identifier: MIT
// bench_zero_copy.cpp - Workload Z: zero-copy against copying. A job is
// 1,000 records, each a 10-byte header written and a body (256 B, 4 KiB or
// 64 KiB, from 16 distinct buffers in turn), built on the shared pool, then
// read out the way a sender would (bw_iovec, a checksum of the headers)
// and released. Time per job.
//
//   linked         segmented writer, the body linked (bw_append_ref)
//   copied         segmented writer, the body copied (bw_write)
//   copied_contig  contiguous writer (bw_init), the body copied
#include "bench_common.h"

#include <sys/uio.h>

#include <vector>

namespace bwbench {
namespace {

constexpr int kRecords = 1000;
constexpr int kBodies = 16;
constexpr size_t kHeader = 10;

enum Kind { LINKED, COPIED, COPIED_CONTIG };

const unsigned char *bodies(size_t size)
{
    static std::vector<unsigned char> mem;
    if (mem.size() < kBodies * size) {
        mem.resize(kBodies * size);
        for (size_t i = 0; i < mem.size(); i++) mem[i] = static_cast<unsigned char>(i * 7);
    }
    return mem.data();
}

void bm_zero_copy(benchmark::State &st, Kind kind)
{
    size_t size = static_cast<size_t>(st.range(0));
    const unsigned char *b = bodies(size), *hdr = source_bytes();
    std::vector<struct iovec> iov(4 * kRecords + 4);
    bw_pool *pool = bw_pool_shared();
    bool failed = false;
    PoolScope ps(pool);
    AllocScope as;
    for (auto _ : st) {
        bw_writer w;
        if (kind == COPIED_CONTIG) bw_init(&w, nullptr, 0);
        else bw_init_chain(&w, nullptr);
        for (int i = 0; i < kRecords; i++) {
            const unsigned char *body = b + static_cast<size_t>(i % kBodies) * size;
            bw_write(&w, hdr + i % 64, kHeader);
            if (kind == LINKED) bw_append_ref(&w, body, size, nullptr, nullptr);
            else bw_write(&w, body, size);
        }
        size_t n = bw_iovec(&w, iov.data(), iov.size());
        uint64_t s = 0;
        for (size_t i = 0; i < n && i < iov.size(); i++)
            s += static_cast<const unsigned char *>(iov[i].iov_base)[0];
        benchmark::DoNotOptimize(s);
        failed |= bw_error(&w) != BW_OK || bw_len(&w) != kRecords * (kHeader + size);
        bw_release(&w);
    }
    as.report(st);
    ps.report(st);
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * kRecords *
                         static_cast<int64_t>(kHeader + size));
    if (failed) st.SkipWithError("wrong result (length or write error)");
}

} // namespace

void register_zero_copy(const Options &)
{
    const struct {
        const char *name;
        Kind kind;
    } rows[] = {{"Z/linked", LINKED}, {"Z/copied", COPIED}, {"Z/copied_contig", COPIED_CONTIG}};
    for (const auto &r : rows) {
        Kind k = r.kind;
        benchmark::RegisterBenchmark(r.name, [k](benchmark::State &st) { bm_zero_copy(st, k); })
            ->ArgName("body")
            ->Arg(256)
            ->Arg(4096)
            ->Arg(65536)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
    }
}

} // namespace bwbench
