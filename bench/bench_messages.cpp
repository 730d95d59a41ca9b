// bench_messages.cpp - Workload E (issue 6): small messages. Each message is a u32
// little-endian length and `size` payload bytes (16, 64, 256), then read
// (checksum of a few bytes) and dropped. Baseline: raw_store, a memcpy /
// pointer bump into a stack array already big enough. Time per message.
//
//   raw_store         the limit: st32le + memcpy into a 512-byte stack array
//   bw_inline         one writer started once in a 512-byte stack buffer
//                     (bw_init_buffer); per message: bw_put_u32le, bw_write,
//                     bw_clear
//   bw_inline_init    per message: bw_init_buffer, the writes, bw_release
//   bufwriter         per message: bw_init on the shared pool (no initial
//                     capacity), the writes, bw_release (block back)
//
// 512 bytes hold the largest message (260 B): the inline writers never move
// to pooled memory, so they must show 0 allocations per message.
#include "bench_common.h"

#include <cstring>

namespace bwbench {
namespace {

constexpr size_t kInline = 512;

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
    alignas(16) unsigned char buf[kInline];
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

void bm_pooled(benchmark::State &st)
{
    size_t n = static_cast<size_t>(st.range(0));
    const unsigned char *src = source_bytes();
    bool bad = false;
    {
        bw_writer w; // warm-up: this thread's cache holds the classes
        bw_init(&w, nullptr, 0);
        bw_put_u32le(&w, 0);
        bw_write(&w, src, n);
        bw_release(&w);
    }
    AllocScope as;
    for (auto _ : st) {
        bw_writer w;
        bw_init(&w, nullptr, 0);
        bw_put_u32le(&w, static_cast<uint32_t>(n));
        bw_write(&w, src, n);
        if (bw_len(&w) != n + 4) bad = true;
        consume(bw_data(&w), bw_len(&w));
        bw_release(&w);
    }
    as.report(st);
    if (bad) st.SkipWithError("wrong result");
}

void reg(const char *name, void (*fn)(benchmark::State &))
{
    benchmark::RegisterBenchmark(name, fn)
        ->Arg(16)
        ->Arg(64)
        ->Arg(256)
        ->ArgName("size")
        ->UseRealTime()
        ->Unit(benchmark::kNanosecond)
        ->MinTime(0.05);
}

} // namespace

void register_messages(const Options &)
{
    reg("E/raw_store", bm_raw_store);
    reg("E/bw_inline", bm_inline);
    reg("E/bw_inline_init", bm_inline_init);
    reg("E/bufwriter", bm_pooled);
}

} // namespace bwbench
