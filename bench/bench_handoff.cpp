// SPDX-License-Identifier: MIT
// bench_handoff.cpp - K: a text handed to the caller as memory
// free() releases, at every length from 16 B to 64 KiB (powers of two, and
// the 223..511 B band where 0.4 handed over a 512-byte first block and the
// pool rented a new one for the next text). Per text: a writer on the
// shared pool, the text written in pieces of up to 256 bytes, the caller's
// copy read (a checksum of a few bytes) and free()d. Time per text.
//
//   build_copy       the baseline: the text built in a writer, then
//                    malloc(len + 1), memcpy, the NUL, bw_release
//   detach_malloc    the same text built, then bw_detach_malloc
//
// The target: detach_malloc <= 1.01x build_copy at every length.
#include "bench_common.h"

#include <cstdlib>
#include <cstring>

namespace bwbench {
namespace {

constexpr size_t kPiece = 256;

void build(bw_writer *w, const unsigned char *src, size_t n)
{
    bw_init(w, nullptr, 0);
    for (size_t i = 0; i < n; i += kPiece) bw_write(w, src + i % 4096, n - i < kPiece ? n - i : kPiece);
}

inline void consume(const char *s, size_t len)
{
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
    uint64_t c = checksum(reinterpret_cast<const unsigned char *>(s), len);
    benchmark::DoNotOptimize(c);
}

template <bool Detach> void bm_handoff(benchmark::State &st)
{
    size_t n = static_cast<size_t>(st.range(0));
    const unsigned char *src = source_bytes();
    bool bad = false;
    AllocScope as;
    for (auto _ : st) {
        bw_writer w;
        char *s;
        size_t len = n;
        build(&w, src, n);
        if (Detach) {
            s = static_cast<char *>(bw_detach_malloc(&w, &len));
        } else {
            s = static_cast<char *>(malloc(n + 1));
            if (s != nullptr) {
                memcpy(s, bw_data(&w), n);
                s[n] = 0;
            }
            bw_release(&w);
        }
        if (s == nullptr || len != n) {
            bad = true;
            break;
        }
        consume(s, n);
        free(s);
    }
    as.report(st);
    if (bad) st.SkipWithError("no text");
}

void reg(const char *name, void (*fn)(benchmark::State &))
{
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(name, fn);
    for (int64_t n = 16; n <= 65536; n *= 2) {
        b->Arg(n);
        if (n == 128)
            for (int64_t k : {224, 252, 300, 400, 480, 511}) b->Arg(k);
    }
    b->ArgName("len")->UseRealTime()->Unit(benchmark::kNanosecond)->MinTime(0.2);
}

} // namespace

void register_handoff(const Options &)
{
    reg("K/build_copy", bm_handoff<false>);
    reg("K/detach_malloc", bm_handoff<true>);
}

} // namespace bwbench
