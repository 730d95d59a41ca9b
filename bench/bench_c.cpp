// bench_c.cpp - Workload C: 1M little-endian u32 writes (the length-prefix
// pattern of Arrow IPC). Baseline: raw_store, a pointer-bump store into a
// pre-sized, already touched buffer.
#include "bench_common.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bwbench {
namespace {

constexpr size_t kCount = 1u << 20;

// The values written: cheap, not foldable (key comes from DoNotOptimize).
inline uint32_t value(uint32_t i, uint32_t key) { return (i * 2654435761u) ^ key; }

inline void st32le(unsigned char *p, uint32_t v)
{
    p[0] = static_cast<unsigned char>(v);
    p[1] = static_cast<unsigned char>(v >> 8);
    p[2] = static_cast<unsigned char>(v >> 16);
    p[3] = static_cast<unsigned char>(v >> 24);
}

uint32_t make_key()
{
    uint32_t k = 0x5bd1e995u;
    benchmark::DoNotOptimize(k);
    return k;
}

void bm_raw_store(benchmark::State &st)
{
    std::vector<unsigned char> buf(kCount * 4, 1);
    uint32_t key = make_key();
    AllocScope as;
    for (auto _ : st) {
        unsigned char *p = buf.data();
        for (uint32_t i = 0; i < kCount; i++) {
            st32le(p, value(i, key));
            p += 4;
        }
        benchmark::ClobberMemory();
        uint64_t s = checksum(buf.data(), static_cast<size_t>(p - buf.data()));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
}

// A new writer per iteration on the shared pool: growth 16 B .. 4 MiB and
// the release are included.
void bm_bw_put_u32le(benchmark::State &st)
{
    uint32_t key = make_key();
    auto once = [key](bool &bad) {
        bw_writer w = BW_WRITER_INIT;
        for (uint32_t i = 0; i < kCount; i++) bw_put_u32le(&w, value(i, key));
        if (bw_error(&w) != BW_OK || bw_len(&w) != kCount * 4) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        bw_release(&w);
        return s;
    };
    bool bad = false;
    benchmark::DoNotOptimize(once(bad)); // warm-up: fills the pool
    AllocScope as;
    for (auto _ : st) benchmark::DoNotOptimize(once(bad));
    as.report(st);
    if (bad) st.SkipWithError("wrong result");
}

// One writer kept across iterations, bw_clear between them: the put path
// alone, block already there (the pure comparison with raw_store).
void bm_bw_put_u32le_clear(benchmark::State &st)
{
    uint32_t key = make_key();
    bw_writer w = BW_WRITER_INIT;
    bw_reserve(&w, kCount * 4);
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_clear(&w);
        for (uint32_t i = 0; i < kCount; i++) bw_put_u32le(&w, value(i, key));
        if (bw_error(&w) != BW_OK || bw_len(&w) != kCount * 4) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result");
}

// Back-patching (issue 6): a u32 placeholder, the 1M u32 writes, then the
// placeholder patched with the byte length (bw_patch_u32le). A new writer
// per iteration on the shared pool, as bw_put_u32le.
void bm_bw_patch(benchmark::State &st)
{
    uint32_t key = make_key();
    auto once = [key](bool &bad) {
        bw_writer w = BW_WRITER_INIT;
        bw_put_u32le(&w, 0); // placeholder
        for (uint32_t i = 0; i < kCount; i++) bw_put_u32le(&w, value(i, key));
        if (bw_patch_u32le(&w, 0, static_cast<uint32_t>(bw_len(&w) - 4)) != BW_OK) bad = true;
        if (bw_error(&w) != BW_OK || bw_len(&w) != kCount * 4 + 4) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        bw_release(&w);
        return s;
    };
    bool bad = false;
    benchmark::DoNotOptimize(once(bad));
    AllocScope as;
    for (auto _ : st) benchmark::DoNotOptimize(once(bad));
    as.report(st);
    if (bad) st.SkipWithError("wrong result");
}

// The Arrow IPC shape: records of a u32 length prefix and 15 u32 values,
// the prefix written as a placeholder and patched when the record ends
// (65536 patches; 1M u32 stores in all). One writer kept, bw_clear between
// iterations (compare with bw_put_u32le_clear).
void bm_bw_patch_records(benchmark::State &st)
{
    uint32_t key = make_key();
    bw_writer w = BW_WRITER_INIT;
    bw_reserve(&w, kCount * 4);
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_clear(&w);
        for (uint32_t i = 0; i < kCount; i += 16) {
            size_t at = bw_len(&w);
            bw_put_u32le(&w, 0);
            for (uint32_t j = 1; j < 16; j++) bw_put_u32le(&w, value(i + j, key));
            bw_patch_u32le(&w, at, 60u);
        }
        if (bw_error(&w) != BW_OK || bw_len(&w) != kCount * 4) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result");
}

template <bool Unlocked> void bm_memstream(benchmark::State &st)
{
    uint32_t key = make_key();
    bool bad = false;
    auto once = [key, &bad]() {
        char *buf = nullptr;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (f == nullptr) { bad = true; return uint64_t{0}; }
        for (uint32_t i = 0; i < kCount; i++) {
            unsigned char b[4];
            st32le(b, value(i, key));
            if (Unlocked) fwrite_unlocked(b, 4, 1, f);
            else fwrite(b, 4, 1, f);
        }
        if (fclose(f) != 0 || len != kCount * 4) bad = true;
        uint64_t s = checksum(reinterpret_cast<unsigned char *>(buf), len);
        free(buf);
        return s;
    };
    benchmark::DoNotOptimize(once());
    AllocScope as;
    for (auto _ : st) benchmark::DoNotOptimize(once());
    as.report(st);
    if (bad) st.SkipWithError("wrong result");
}

void bm_std_string(benchmark::State &st)
{
    uint32_t key = make_key();
    auto once = [key]() {
        std::string s;
        for (uint32_t i = 0; i < kCount; i++) {
            unsigned char b[4];
            st32le(b, value(i, key));
            s.append(reinterpret_cast<const char *>(b), 4);
        }
        return checksum(reinterpret_cast<const unsigned char *>(s.data()), s.size());
    };
    benchmark::DoNotOptimize(once());
    AllocScope as;
    for (auto _ : st) benchmark::DoNotOptimize(once());
    as.report(st);
}

void reg(const char *name, void (*fn)(benchmark::State &))
{
    benchmark::RegisterBenchmark(name, fn)
        ->Arg(static_cast<int64_t>(kCount))
        ->ArgName("count")
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.1);
}

} // namespace

void register_c(const Options &)
{
    reg("C/raw_store", bm_raw_store);
    reg("C/bw_put_u32le", bm_bw_put_u32le);
    reg("C/bw_put_u32le_clear", bm_bw_put_u32le_clear);
    reg("C/bw_patch", bm_bw_patch);
    reg("C/bw_patch_records", bm_bw_patch_records);
    reg("C/open_memstream", bm_memstream<false>);
    reg("C/open_memstream_unlocked", bm_memstream<true>);
    reg("C/std_string", bm_std_string);
}

} // namespace bwbench
