// SPDX-License-Identifier: MIT
// bench_output.cpp - getting bytes out: to a file descriptor (/dev/null) or
// through a FILE*.
//
// Workload F: 10 MiB (8 KiB appends). Baseline writer_write_fd: build a
// contiguous bw_writer and write() it (a write to
// /dev/null itself costs next to nothing, so the rows compare the building).
//   writer_write_fd   build a contiguous writer, bw_write_fd (one write call)
//   chain_writev      build a segmented writer (bw_init_chain), bw_write_fd
//                     (writev, IOV_MAX respected, consumed as it goes)
//   fopen_writer      fwrite 8 KiB pieces into bw_fopen over a contiguous
//                     writer, fclose
//   open_memstream    fwrite 8 KiB pieces into open_memstream, fclose
//
// Workload G: streaming, 256 MiB (1 GiB with --bw_full) in 8 KiB
// writes to /dev/null, bounded memory. Baseline fwrite_setvbuf.
//   fwrite_setvbuf    fwrite to fopen("/dev/null") with a 64 KiB setvbuf buffer
//   bw_fd             bw_write into bw_init_fd(/dev/null, 64 KiB), bw_flush
// Counters: bytes_per_second (SetBytesProcessed), peak_rss (ru_maxrss, bytes,
// the process high-water mark reset at the start of the run where Linux
// allows it: rss_reset = 1) and rss_growth (peak_rss - RSS at the start).
#include "bench_common.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bwbench {
namespace {

constexpr size_t kSize = 10 * MiB, kChunk = 8 * KiB;

int devnull() { return devnull_fd(); }

void bm_writer_write_fd(benchmark::State &st)
{
    const unsigned char *src = source_bytes();
    for (int warm = 0; warm < 2; warm++) {
        bw_writer w = BW_WRITER_INIT;
        for (size_t off = 0; off < kSize; off += kChunk) bw_write(&w, src, kChunk);
        bw_release(&w);
    }
    AllocScope as;
    for (auto _ : st) {
        bw_writer w = BW_WRITER_INIT;
        size_t sent = 0;
        for (size_t off = 0; off < kSize; off += kChunk) bw_write(&w, src, kChunk);
        if (bw_write_fd(&w, devnull(), &sent) != BW_OK || sent != kSize) st.SkipWithError("write");
        bw_release(&w);
    }
    as.report(st);
}

void bm_chain_writev(benchmark::State &st)
{
    const unsigned char *src = source_bytes();
    for (int warm = 0; warm < 2; warm++) {
        bw_writer w;
        bw_init_chain(&w, nullptr);
        for (size_t off = 0; off < kSize; off += kChunk) bw_write(&w, src, kChunk);
        bw_release(&w);
    }
    AllocScope as;
    for (auto _ : st) {
        bw_writer w;
        bw_init_chain(&w, nullptr);
        size_t sent = 0;
        for (size_t off = 0; off < kSize; off += kChunk) bw_write(&w, src, kChunk);
        if (bw_write_fd(&w, devnull(), &sent) != BW_OK || sent != kSize || bw_len(&w) != 0)
            st.SkipWithError("writev");
        bw_release(&w);
    }
    as.report(st);
}

void bm_fopen_writer(benchmark::State &st)
{
#ifdef BW_HAVE_FILE_ADAPTER
    const unsigned char *src = source_bytes();
    AllocScope as;
    for (auto _ : st) {
        bw_writer w = BW_WRITER_INIT;
        FILE *f = bw_fopen(&w);
        for (size_t off = 0; off < kSize; off += kChunk) fwrite(src, 1, kChunk, f);
        fclose(f); // flushes; the writer stays
        if (bw_len(&w) != kSize) st.SkipWithError("length");
        benchmark::DoNotOptimize(checksum(bw_data(&w), bw_len(&w)));
        bw_release(&w);
    }
    as.report(st);
#else
    st.SkipWithError("no FILE* adapter");
#endif
}

void bm_open_memstream(benchmark::State &st)
{
    const unsigned char *src = source_bytes();
    AllocScope as;
    for (auto _ : st) {
        char *buf = nullptr;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        for (size_t off = 0; off < kSize; off += kChunk) fwrite(src, 1, kChunk, f);
        fclose(f);
        if (len != kSize) st.SkipWithError("length");
        benchmark::DoNotOptimize(checksum(reinterpret_cast<unsigned char *>(buf), len));
        free(buf);
    }
    as.report(st);
}

// ---- G: streaming ------------------------------------------------------
constexpr size_t kStreamBuf = 64 * KiB;

// Resets the process's RSS high-water mark to its current RSS (Linux >= 4.0,
// /proc/self/clear_refs "5"); false where that is not allowed.
bool reset_peak_rss()
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == nullptr) return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

// Current RSS in bytes (/proc/self/statm), 0 if unknown.
double current_rss()
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == nullptr) return 0;
    unsigned long size = 0, res = 0;
    int n = fscanf(f, "%lu %lu", &size, &res);
    fclose(f);
    return n == 2 ? static_cast<double>(res) * static_cast<double>(sysconf(_SC_PAGESIZE)) : 0;
}

// Peak RSS in bytes (getrusage ru_maxrss, which Linux gives in KiB).
double peak_rss()
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? static_cast<double>(ru.ru_maxrss) * 1024.0 : 0;
}

// Runs one streaming row: `job` writes st.range(0) bytes in 8 KiB pieces and
// returns false on a failure. Reports throughput and peak RSS.
template <typename Job> void stream_row(benchmark::State &st, Job job)
{
    const size_t size = static_cast<size_t>(st.range(0));
    bool bad = !job(size < MiB ? size : MiB); // warm-up: buffers allocated and touched
    bool reset = reset_peak_rss();
    double rss0 = current_rss();
    AllocScope as;
    for (auto _ : st)
        if (!job(size)) bad = true;
    as.report(st);
    double peak = peak_rss();
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(size));
    st.counters["peak_rss"] = benchmark::Counter(peak, benchmark::Counter::kDefaults,
                                                 benchmark::Counter::kIs1024);
    st.counters["rss_growth"] = benchmark::Counter(peak > rss0 ? peak - rss0 : 0.0,
                                                   benchmark::Counter::kDefaults,
                                                   benchmark::Counter::kIs1024);
    st.counters["rss_reset"] = reset ? 1 : 0;
    if (bad) st.SkipWithError("write error");
}

// Baseline: fwrite of 8 KiB pieces to /dev/null through a 64 KiB setvbuf
// buffer (one FILE for the run, fflush at the end of each iteration).
void bm_stream_fwrite(benchmark::State &st)
{
    const unsigned char *src = source_bytes();
    FILE *f = fopen("/dev/null", "w");
    std::vector<char> buf(kStreamBuf);
    if (f == nullptr || setvbuf(f, buf.data(), _IOFBF, buf.size()) != 0) {
        if (f) fclose(f);
        st.SkipWithError("fopen/setvbuf failed");
        return;
    }
    stream_row(st, [&](size_t size) {
        bool ok = true;
        for (size_t off = 0; off < size; off += kChunk)
            if (fwrite(src, 1, kChunk, f) != kChunk) ok = false;
        return fflush(f) == 0 && ok;
    });
    fclose(f);
}

// The streaming writer: bw_write of 8 KiB pieces into bw_init_fd(/dev/null,
// 64 KiB) (one writer for the run), bw_flush at the end of each iteration.
void bm_stream_bw_fd(benchmark::State &st)
{
    const unsigned char *src = source_bytes();
    bw_writer w;
    bw_init_fd(&w, nullptr, kStreamBuf, devnull());
    stream_row(st, [&](size_t size) {
        uint64_t start = bw_tell(&w);
        for (size_t off = 0; off < size; off += kChunk) bw_write(&w, src, kChunk);
        return bw_flush(&w) == BW_OK && bw_tell(&w) - start == size && bw_len(&w) == 0;
    });
    bw_release(&w);
}

void reg(const char *name, void (*fn)(benchmark::State &))
{
    benchmark::RegisterBenchmark(name, fn)
        ->Args({static_cast<int64_t>(kSize), static_cast<int64_t>(kChunk)})
        ->ArgNames({"size", "chunk"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.1);
}

} // namespace

void register_output(const Options &o)
{
    reg("F/writer_write_fd", bm_writer_write_fd);
    reg("F/chain_writev", bm_chain_writev);
    reg("F/fopen_writer", bm_fopen_writer);
    reg("F/open_memstream", bm_open_memstream);

    // Streaming 256 MiB (1 GiB in run-full) to /dev/null in 8 KiB
    // writes with a 64 KiB buffer: fwrite + setvbuf against bw_init_fd.
    const size_t size = o.full ? 1024 * MiB : 256 * MiB;
    const struct { const char *name; void (*fn)(benchmark::State &); } g[] = {
        {"G/fwrite_setvbuf", bm_stream_fwrite},
        {"G/bw_fd", bm_stream_bw_fd},
    };
    for (const auto &r : g)
        benchmark::RegisterBenchmark(r.name, r.fn)
            ->Args({static_cast<int64_t>(size), static_cast<int64_t>(kChunk)})
            ->ArgNames({"size", "chunk"})
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(o.full ? 0.3 : 0.1);
}

} // namespace bwbench
