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
//
// Z/vref, Z/vref_iovec: msgpack's vrefbuffer shape against a plain iovec
// array (see bm_vref).
//
// Z/link_after_move: examples/http_response.c's pattern, N messages in one
// writer: each a 16-byte header written in a segmented writer of its own
// and moved in (bw_move), then a 200-byte body linked (bw_append_ref);
// then the writer is read out (bw_iovec) and released. per_msg is the time
// per message, move and link (0.4: every header brought its block, and
// every link walked them all, so it grew with N; it should not).
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

// Z/vref: msgpack's vrefbuffer shape: N records of a 10-byte
// header written and a 4 KiB body linked, read out as iovecs, released;
// against Z/vref_iovec, a plain iovec-array writer: a malloc'd struct iovec
// array growing by realloc, the headers copied into 4 KiB side chunks.
struct SideChunk {
    SideChunk *next;
    size_t used;
    unsigned char b[4096 - 2 * sizeof(void *)];
};

void iov_push(struct iovec *&v, size_t &n, size_t &cap, const void *p, size_t len)
{
    if (n == cap) {
        cap = cap ? 2 * cap : 16;
        v = static_cast<struct iovec *>(realloc(v, cap * sizeof *v));
        if (v == nullptr) abort();
    }
    v[n].iov_base = const_cast<void *>(p);
    v[n++].iov_len = len;
}

void bm_vref(benchmark::State &st, bool plain)
{
    int recs = static_cast<int>(st.range(0));
    const size_t size = 4096;
    const unsigned char *b = bodies(size), *hdr = source_bytes();
    std::vector<struct iovec> iov(2 * static_cast<size_t>(recs) + 4);
    bool failed = false;
    for (auto _ : st) {
        uint64_t s = 0, len = 0;
        if (plain) {
            struct iovec *v = nullptr;
            size_t n = 0, cap = 0;
            SideChunk *c = nullptr, *t;
            for (int i = 0; i < recs; i++) {
                if (c == nullptr || c->used + kHeader > sizeof c->b) {
                    t = static_cast<SideChunk *>(malloc(sizeof *t));
                    if (t == nullptr) abort();
                    t->next = c;
                    t->used = 0;
                    c = t;
                }
                memcpy(c->b + c->used, hdr + i % 64, kHeader);
                iov_push(v, n, cap, c->b + c->used, kHeader);
                c->used += kHeader;
                iov_push(v, n, cap, b + static_cast<size_t>(i % kBodies) * size, size);
            }
            for (size_t i = 0; i < n; i++) {
                s += static_cast<const unsigned char *>(v[i].iov_base)[0];
                len += v[i].iov_len;
            }
            free(v);
            while ((t = c) != nullptr) {
                c = c->next;
                free(t);
            }
        } else {
            bw_writer w;
            bw_init_chain(&w, nullptr);
            for (int i = 0; i < recs; i++) {
                bw_write(&w, hdr + i % 64, kHeader);
                bw_append_ref(&w, b + static_cast<size_t>(i % kBodies) * size, size, nullptr,
                              nullptr);
            }
            size_t n = bw_iovec(&w, iov.data(), iov.size());
            for (size_t i = 0; i < n && i < iov.size(); i++)
                s += static_cast<const unsigned char *>(iov[i].iov_base)[0];
            len = bw_len(&w);
            failed |= bw_error(&w) != BW_OK;
            bw_release(&w);
        }
        benchmark::DoNotOptimize(s);
        failed |= len != static_cast<uint64_t>(recs) * (kHeader + size);
    }
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * recs *
                         static_cast<int64_t>(kHeader + size));
    if (failed) st.SkipWithError("wrong result (length or write error)");
}

constexpr size_t kHttpHeader = 16;
constexpr size_t kHttpBody = 200;

void bm_link_after_move(benchmark::State &st)
{
    int msgs = static_cast<int>(st.range(0));
    const unsigned char *b = bodies(kHttpBody), *hdr = source_bytes();
    std::vector<struct iovec> iov(2 * static_cast<size_t>(msgs) + 4);
    bw_pool *pool = bw_pool_shared();
    bool failed = false;
    PoolScope ps(pool);
    AllocScope as;
    for (auto _ : st) {
        bw_writer w, h;
        bw_init_chain(&w, nullptr);
        for (int i = 0; i < msgs; i++) {
            bw_init_chain(&h, nullptr);
            bw_write(&h, hdr + i % 64, kHttpHeader);
            bw_move(&w, &h);
            bw_release(&h);
            bw_append_ref(&w, b + static_cast<size_t>(i % kBodies) * kHttpBody, kHttpBody,
                          nullptr, nullptr);
        }
        size_t n = bw_iovec(&w, iov.data(), iov.size());
        uint64_t s = 0;
        for (size_t i = 0; i < n && i < iov.size(); i++)
            s += static_cast<const unsigned char *>(iov[i].iov_base)[0];
        benchmark::DoNotOptimize(s);
        failed |= bw_error(&w) != BW_OK ||
                  bw_len(&w) != static_cast<size_t>(msgs) * (kHttpHeader + kHttpBody);
        bw_release(&w);
    }
    as.report(st);
    ps.report(st);
    st.counters["per_msg"] =
        benchmark::Counter(static_cast<double>(msgs), benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * msgs *
                         static_cast<int64_t>(kHttpHeader + kHttpBody));
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
    for (bool plain : {false, true})
        benchmark::RegisterBenchmark(plain ? "Z/vref_iovec" : "Z/vref",
                                     [plain](benchmark::State &st) { bm_vref(st, plain); })
            ->ArgName("records")
            ->Arg(1000)
            ->Arg(5000)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("Z/link_after_move", bm_link_after_move)
        ->ArgName("msgs")
        ->Arg(1000)
        ->Arg(8000)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}

} // namespace bwbench
