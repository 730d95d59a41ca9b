// SPDX-License-Identifier: MIT
// bench_messages.cpp - Workload E: small messages. Each message is a u32
// little-endian length and `size` payload bytes (16, 64, 256; 1024 for
// raw_store, bufwriter and the min_first_block rows), then read (checksum of
// a few bytes) and dropped. Baseline: raw_store, a memcpy / pointer bump
// into a stack array already big enough. Time per message.
//
//   raw_store         the limit: st32le + memcpy into a 2 KiB stack array
//   bw_inline         one writer started once in a 512-byte stack buffer
//                     (bw_init_buffer); per message: bw_put_u32le, bw_write,
//                     bw_clear
//   bw_inline_init    per message: bw_init_buffer, the writes, bw_release
//   bufwriter         per message: bw_init on the shared pool (no initial
//                     capacity), the writes, bw_release (block back): the
//                     0.2 defaults (min_first_block 512 B)
//
// Choosing min_first_block's default (0.2): the same message on a pool of
// its own, created once per benchmark with only min_first_block set
// (1 = 0.1's behaviour, the class of the first write; 64, 128, 256, 512):
//   mfb<M>            u32 length, then the payload in one bw_write
//   mfb<M>_fields     u32 length, then the payload in 16-byte writes (a
//                     message built field by field: with a small first block
//                     it climbs 16 -> 32 -> 64 ... with a rent and a copy at
//                     each step)
//
// 512 bytes hold the largest inline message (260 B): the inline writers
// never move to pooled memory, so they must show 0 allocations per message.
#include "bench_common.h"

#include <cstring>
#include <string>

namespace bwbench {
namespace {

constexpr size_t kInline = 512;
constexpr size_t kRawBuf = 2048; // raw_store's array: up to 1 KiB messages

inline void st32le(unsigned char *p, uint32_t v)
{
    p[0] = static_cast<unsigned char>(v);
    p[1] = static_cast<unsigned char>(v >> 8);
    p[2] = static_cast<unsigned char>(v >> 16);
    p[3] = static_cast<unsigned char>(v >> 24);
}

// The consumer: the message's bytes must exist (escape the pointer, force
// the stores) and a few are read.
inline void consume(const unsigned char *p, size_t len)
{
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
    uint64_t s = checksum(p, len);
    benchmark::DoNotOptimize(s);
}

void bm_raw_store(benchmark::State &st)
{
    size_t n = static_cast<size_t>(st.range(0));
    const unsigned char *src = source_bytes();
    alignas(16) unsigned char buf[kRawBuf];
    memset(buf, 0, sizeof buf);
    AllocScope as;
    for (auto _ : st) {
        unsigned char *p = buf;
        st32le(p, static_cast<uint32_t>(n));
        p += 4;
        memcpy(p, src, n);
        p += n;
        consume(buf, static_cast<size_t>(p - buf));
    }
    as.report(st);
}

void bm_inline(benchmark::State &st)
{
    size_t n = static_cast<size_t>(st.range(0));
    const unsigned char *src = source_bytes();
    alignas(16) unsigned char buf[kInline];
    bw_writer w;
    if (bw_init_buffer(&w, nullptr, buf, sizeof buf) != BW_OK) {
        st.SkipWithError("bw_init_buffer failed");
        return;
    }
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_put_u32le(&w, static_cast<uint32_t>(n));
        bw_write(&w, src, n);
        consume(bw_data(&w), bw_len(&w));
        bw_clear(&w);
    }
    as.report(st);
    if (bw_data(&w) != buf || bw_error(&w) != BW_OK) bad = true;
    bw_release(&w);
    if (bad) st.SkipWithError("writer left its inline buffer or failed");
}

void bm_inline_init(benchmark::State &st)
{
    size_t n = static_cast<size_t>(st.range(0));
    const unsigned char *src = source_bytes();
    alignas(16) unsigned char buf[kInline];
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_writer w;
        bw_init_buffer(&w, nullptr, buf, sizeof buf);
        bw_put_u32le(&w, static_cast<uint32_t>(n));
        bw_write(&w, src, n);
        if (bw_data(&w) != buf || bw_len(&w) != n + 4) bad = true;
        consume(bw_data(&w), bw_len(&w));
        bw_release(&w);
    }
    as.report(st);
    if (bad) st.SkipWithError("writer left its inline buffer or failed");
}

// One message into a fresh writer on `pool` (nullptr = shared): u32
// length, then the payload in one write or in 16-byte fields.
inline bool one_message(bw_pool *pool, const unsigned char *src, size_t n, bool fields)
{
    bw_writer w;
    bw_init(&w, pool, 0);
    bw_put_u32le(&w, static_cast<uint32_t>(n));
    if (fields)
        for (size_t off = 0; off < n; off += 16) bw_write(&w, src + off, n - off < 16 ? n - off : 16);
    else
        bw_write(&w, src, n);
    bool ok = bw_len(&w) == n + 4;
    consume(bw_data(&w), bw_len(&w));
    bw_release(&w);
    return ok;
}

void pooled_loop(benchmark::State &st, bw_pool *pool, bool fields)
{
    size_t n = static_cast<size_t>(st.range(0));
    const unsigned char *src = source_bytes();
    bool bad = false;
    // Warm-up: this thread's cache holds the classes.
    for (int i = 0; i < 4; i++) (void)one_message(pool, src, n, fields);
    bw_pool *counted = pool ? pool : bw_pool_shared();
    PoolScope ps(counted);
    AllocScope as;
    for (auto _ : st)
        if (!one_message(pool, src, n, fields)) bad = true;
    as.report(st);
    ps.report(st);
    if (bad) st.SkipWithError("wrong result");
}

void bm_pooled(benchmark::State &st) { pooled_loop(st, nullptr, false); }

// The min_first_block rows: a pool of their own with only that option set.
void bm_mfb(benchmark::State &st, size_t mfb, bool fields)
{
    bw_pool_options o{};
    o.min_first_block = mfb;
    bw_pool *p = nullptr;
    if (bw_pool_create(&p, &o) != BW_OK) {
        st.SkipWithError("bw_pool_create failed");
        return;
    }
    pooled_loop(st, p, fields);
    bw_pool_destroy(p);
}

benchmark::internal::Benchmark *reg(benchmark::internal::Benchmark *b, bool with_1k)
{
    b->Arg(16)->Arg(64)->Arg(256);
    if (with_1k) b->Arg(1024);
    return b->ArgName("size")->UseRealTime()->Unit(benchmark::kNanosecond)->MinTime(0.05);
}

void reg(const char *name, void (*fn)(benchmark::State &), bool with_1k)
{
    reg(benchmark::RegisterBenchmark(name, fn), with_1k);
}

} // namespace

void register_messages(const Options &)
{
    reg("E/raw_store", bm_raw_store, true);
    reg("E/bw_inline", bm_inline, false);
    reg("E/bw_inline_init", bm_inline_init, false);
    reg("E/bufwriter", bm_pooled, true);
    static const size_t mfbs[] = {1, 64, 128, 256, 512};
    for (size_t m : mfbs)
        for (int fields = 0; fields < 2; fields++) {
            std::string name = "E/mfb" + std::to_string(m) + (fields ? "_fields" : "");
            reg(benchmark::RegisterBenchmark(name.c_str(), bm_mfb, m, fields != 0), true);
        }
}

} // namespace bwbench
