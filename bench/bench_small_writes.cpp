// SPDX-License-Identifier: MIT
// bench_small_writes.cpp - many small writes.
//
//   C: 1M little-endian u32 writes (the length-prefix pattern of Arrow IPC),
//      in every writer mode. Baseline: raw_store, a pointer-bump store into
//      a pre-sized, already touched buffer.
//   H: 1M CSV lines of three integers ("%d,%d,%d\n"): bw_put_dec_i64 and
//      bw_put_u8 against bw_printf. Baseline: bw_printf.
//   R: 1M records of u32 + uvarint + u64 + f64 (a serializer's loop): the
//      cursor (bw_enc_* into a span, bw_advance_to), a span per record and
//      one span for all, and the puts. Baseline: the same stores written by
//      hand through a bumped pointer into a touched buffer.
#include "bench_common.h"

#include <sys/uio.h>

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

// The 1M stores (a u32 each, pointer bump) into a touched 4 MiB buffer.
// Scalar = false is the baseline as it always was: g++ 12 -O2 vectorises
// this loop with SSE2, which has no 32-bit multiply (pmulld), so value()
// becomes a chain of shifts and adds and the loop is SLOWER than the scalar
// one. raw_store_scalar is the same loop with vectorisation off: the floor
// for a put, which can never be vectorised.
void raw_store_vec(unsigned char *p, uint32_t key)
{
    for (uint32_t i = 0; i < kCount; i++) {
        st32le(p, value(i, key));
        p += 4;
    }
}

// The empty asm makes p opaque at each step, which stops vectorisation and
// nothing else (an optimize("no-tree-vectorize") attribute also loses g++'s
// store merging: four byte stores instead of one).
void raw_store_novec(unsigned char *p, uint32_t key)
{
    for (uint32_t i = 0; i < kCount; i++) {
        st32le(p, value(i, key));
        p += 4;
        __asm__("" : "+r"(p));
    }
}

template <bool Scalar> void bm_raw_store(benchmark::State &st)
{
    std::vector<unsigned char> buf(kCount * 4, 1);
    uint32_t key = make_key();
    AllocScope as;
    for (auto _ : st) {
        if (Scalar) raw_store_novec(buf.data(), key);
        else raw_store_vec(buf.data(), key);
        benchmark::ClobberMemory();
        uint64_t s = checksum(buf.data(), kCount * 4);
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

// Contiguous, block present: one writer kept across iterations, bw_clear
// between them: the put path alone (the pure comparison with raw_store).
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

// The cursor: the same 1M u32 through bw_enc_u32le into one span
// of a writer kept across iterations, committed once with bw_advance_to.
// The loop has raw_store's shape (a pointer bump, no asm), so it compares
// with raw_store: the same code, vectorised the same way.
void bm_bw_enc_u32le(benchmark::State &st)
{
    uint32_t key = make_key();
    bw_writer w = BW_WRITER_INIT;
    bw_reserve(&w, kCount * 4);
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_clear(&w);
        unsigned char *p = static_cast<unsigned char *>(bw_get_span(&w, kCount * 4, nullptr));
        if (p == nullptr) {
            bad = true;
            break;
        }
        for (uint32_t i = 0; i < kCount; i++) p = bw_enc_u32le(p, value(i, key));
        if (bw_advance_to(&w, p) != BW_OK || bw_len(&w) != kCount * 4) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result");
}

// Back-patching: a u32 placeholder, the 1M u32 writes, then the
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
            uint64_t at = bw_tell(&w);
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

// The same 1M puts into a segmented writer (bw_init_chain), a new writer per
// iteration on the shared pool: blocks of 4 KiB doubling to 1 MiB are linked
// (pooled, warm), never copied. Read back through bw_iovec.
void bm_bw_put_u32le_chain(benchmark::State &st)
{
    uint32_t key = make_key();
    auto once = [key](bool &bad) {
        bw_writer w;
        bw_init_chain(&w, nullptr);
        for (uint32_t i = 0; i < kCount; i++) bw_put_u32le(&w, value(i, key));
        if (bw_error(&w) != BW_OK || bw_len(&w) != kCount * 4) bad = true;
        struct iovec iov[64];
        size_t n = bw_iovec(&w, iov, 64);
        uint64_t s = n;
        for (size_t i = 0; i < n && i < 64; i++)
            s ^= checksum(static_cast<const unsigned char *>(iov[i].iov_base), iov[i].iov_len);
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

// Streaming: the 1M puts through bw_init_fd(/dev/null, 64 KiB), one writer
// kept across iterations: 64 write() calls per iteration, bw_flush at the end.
void bm_bw_put_u32le_fd(benchmark::State &st)
{
    uint32_t key = make_key();
    bw_writer w;
    bw_init_fd(&w, nullptr, 64 * KiB, devnull_fd());
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        uint64_t start = bw_tell(&w);
        for (uint32_t i = 0; i < kCount; i++) bw_put_u32le(&w, value(i, key));
        if (bw_flush(&w) != BW_OK || bw_tell(&w) - start != kCount * 4 || bw_len(&w) != 0) bad = true;
        benchmark::DoNotOptimize(bw_tell(&w));
    }
    as.report(st);
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result (write error or length)");
}

// Fixed: the 1M puts into bw_init_fixed over a 4 MiB, already touched buffer
// (a new fixed writer per iteration: no allocation, no cold path).
void bm_bw_put_u32le_fixed(benchmark::State &st)
{
    uint32_t key = make_key();
    std::vector<unsigned char> buf(kCount * 4, 1);
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_writer w;
        bw_init_fixed(&w, buf.data(), buf.size());
        for (uint32_t i = 0; i < kCount; i++) bw_put_u32le(&w, value(i, key));
        if (bw_error(&w) != BW_OK || bw_len(&w) != kCount * 4) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
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

// ---- R: records through the cursor -------------------------------------
// Record i: u32, a uvarint of up to 4 bytes, u64, f64 (21..24 bytes). The
// hand-written floor stores the fixed widths with memcpy (one mov each on a
// little-endian host) and the varint with the usual loop.
constexpr size_t kRecMax = 4 + 10 + 8 + 8;

struct Rec {
    uint32_t a;
    uint64_t var, u;
    double d;
};
inline Rec rec(uint32_t i, uint32_t key)
{
    return Rec{value(i, key), uint64_t{i} * 37u, uint64_t{i} << 32 | key, i * 0.5};
}

void bm_rec_hand(benchmark::State &st)
{
    uint32_t key = make_key();
    std::vector<unsigned char> buf(kCount * kRecMax, 1);
    size_t len = 0;
    AllocScope as;
    for (auto _ : st) {
        unsigned char *p = buf.data();
        for (uint32_t i = 0; i < kCount; i++) {
            Rec r = rec(i, key);
            memcpy(p, &r.a, 4);
            p += 4;
            uint64_t v = r.var;
            while (v >= 0x80) {
                *p++ = static_cast<unsigned char>(v | 0x80);
                v >>= 7;
            }
            *p++ = static_cast<unsigned char>(v);
            memcpy(p, &r.u, 8);
            memcpy(p + 8, &r.d, 8);
            p += 16;
        }
        len = static_cast<size_t>(p - buf.data());
        benchmark::ClobberMemory();
        uint64_t s = checksum(buf.data(), len);
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
}

inline unsigned char *enc_rec(unsigned char *p, const Rec &r)
{
    p = bw_enc_u32le(p, r.a);
    p = bw_enc_uvarint(p, r.var);
    p = bw_enc_u64le(p, r.u);
    return bw_enc_f64le(p, r.d);
}

// The records into one contiguous writer kept across iterations (its block
// present; bw_clear between iterations). Kind 0: a span per record (a
// serializer that does not know what follows), 1: one span for all, 2: the
// puts.
template <int Kind> void bm_rec_writer(benchmark::State &st)
{
    uint32_t key = make_key();
    bw_writer w = BW_WRITER_INIT;
    bw_reserve(&w, kCount * kRecMax);
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_clear(&w);
        if (Kind == 0) {
            for (uint32_t i = 0; i < kCount; i++) {
                unsigned char *p = static_cast<unsigned char *>(bw_get_span(&w, kRecMax, nullptr));
                if (p == nullptr) break;
                bw_advance_to(&w, enc_rec(p, rec(i, key)));
            }
        } else if (Kind == 1) {
            unsigned char *p =
                static_cast<unsigned char *>(bw_get_span(&w, kCount * kRecMax, nullptr));
            if (p != nullptr) {
                for (uint32_t i = 0; i < kCount; i++) p = enc_rec(p, rec(i, key));
                bw_advance_to(&w, p);
            }
        } else {
            for (uint32_t i = 0; i < kCount; i++) {
                Rec r = rec(i, key);
                bw_put_u32le(&w, r.a);
                bw_put_uvarint(&w, r.var);
                bw_put_u64le(&w, r.u);
                bw_put_f64le(&w, r.d);
            }
        }
        if (bw_error(&w) != BW_OK || bw_len(&w) < kCount * 21) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result");
}

// ---- H: CSV lines of integers ------------------------------------------
constexpr size_t kLines = 1u << 20;

// The three columns of line i: an id (1..7 digits), a signed value of up to
// 6 digits and a signed 32-bit value (up to 10 digits): about 27 bytes a line.
struct Row {
    int32_t a, b, c;
};
inline Row row(uint32_t i, uint32_t key)
{
    uint32_t x = (i * 2654435761u) ^ key;
    return Row{static_cast<int32_t>(i), static_cast<int32_t>(x) >> 12,
               static_cast<int32_t>(x * 0x9e3779b1u)};
}

// Both rows write into one contiguous writer kept across iterations (its
// block present after the warm-up; bw_clear between iterations), so they
// compare the formatting alone.
template <typename Line> void csv_rows(benchmark::State &st, Line line)
{
    uint32_t key = make_key();
    bw_writer w = BW_WRITER_INIT;
    for (uint32_t i = 0; i < kLines; i++) line(&w, row(i, key)); // warm-up
    size_t expect = bw_len(&w);
    bool bad = bw_error(&w) != BW_OK;
    AllocScope as;
    for (auto _ : st) {
        bw_clear(&w);
        for (uint32_t i = 0; i < kLines; i++) line(&w, row(i, key));
        if (bw_error(&w) != BW_OK || bw_len(&w) != expect) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(expect));
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result");
}

// Baseline: bw_printf(w, "%d,%d,%d\n", a, b, c) per line.
void bm_csv_printf(benchmark::State &st)
{
    csv_rows(st, [](bw_writer *w, Row r) { bw_printf(w, "%d,%d,%d\n", r.a, r.b, r.c); });
}

// The same lines with bw_put_dec_i64 and bw_put_u8 (no printf).
void bm_csv_put_dec(benchmark::State &st)
{
    csv_rows(st, [](bw_writer *w, Row r) {
        bw_put_dec_i64(w, r.a);
        bw_put_u8(w, ',');
        bw_put_dec_i64(w, r.b);
        bw_put_u8(w, ',');
        bw_put_dec_i64(w, r.c);
        bw_put_u8(w, '\n');
    });
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

void register_small_writes(const Options &)
{
    reg("C/raw_store", bm_raw_store<false>);
    // The scalar floor (raw_store without auto-vectorisation).
    reg("C/raw_store_scalar", bm_raw_store<true>);
    reg("C/bw_put_u32le", bm_bw_put_u32le);
    reg("C/bw_put_u32le_clear", bm_bw_put_u32le_clear);
    // The same 1M puts in the other modes (segmented, streaming to
    // /dev/null, fixed over a 4 MiB buffer); contiguous is bw_put_u32le_clear.
    reg("C/bw_put_u32le_chain", bm_bw_put_u32le_chain);
    reg("C/bw_put_u32le_fd", bm_bw_put_u32le_fd);
    reg("C/bw_put_u32le_fixed", bm_bw_put_u32le_fixed);
    // The cursor, 1M u32 through bw_enc_u32le into one span.
    reg("C/bw_enc_u32le", bm_bw_enc_u32le);
    reg("C/bw_patch", bm_bw_patch);
    reg("C/bw_patch_records", bm_bw_patch_records);
    reg("C/open_memstream", bm_memstream<false>);
    reg("C/open_memstream_unlocked", bm_memstream<true>);
    reg("C/std_string", bm_std_string);

    // 1M records u32 + uvarint + u64 + f64: by hand, through the
    // cursor (a span per record, one span), through the puts.
    reg("R/hand", bm_rec_hand);
    reg("R/cursor_span_per_record", bm_rec_writer<0>);
    reg("R/cursor_one_span", bm_rec_writer<1>);
    reg("R/puts", bm_rec_writer<2>);

    // 1M CSV lines "%d,%d,%d\n", printf against the decimal puts.
    benchmark::RegisterBenchmark("H/bw_printf", bm_csv_printf)
        ->Arg(static_cast<int64_t>(kLines))->ArgName("count")
        ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.1);
    benchmark::RegisterBenchmark("H/bw_put_dec", bm_csv_put_dec)
        ->Arg(static_cast<int64_t>(kLines))->ArgName("count")
        ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.1);
}

} // namespace bwbench
