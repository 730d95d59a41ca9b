// bench_f.cpp - Workload F: getting 10 MiB (8 KiB appends) out to a file
// descriptor (/dev/null) or through a FILE*. Baseline writer_write_fd: build
// a contiguous bw_writer and write() it (the comparison; a write to
// /dev/null itself costs next to nothing, so the rows compare the building).
// Rows:
//   writer_write_fd   build a bw_writer, bw_write_fd (one write call)
//   chain_writev      build a bw_chain, bw_chain_write_fd (writev, IOV_MAX
//                     respected, consumed as it goes)
//   fopen_writer      fwrite 8 KiB pieces into bw_fopen_writer, fflush
//   open_memstream    fwrite 8 KiB pieces into open_memstream, fflush
#include "bench_common.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace bwbench {
namespace {

constexpr size_t kSize = 10 * MiB, kChunk = 8 * KiB;

int devnull()
{
    static int fd = open("/dev/null", O_WRONLY);
    return fd;
}

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
        bw_chain c = BW_CHAIN_INIT;
        for (size_t off = 0; off < kSize; off += kChunk) bw_chain_write(&c, src, kChunk);
        bw_chain_release(&c);
    }
    AllocScope as;
    for (auto _ : st) {
        bw_chain c = BW_CHAIN_INIT;
        size_t sent = 0;
        for (size_t off = 0; off < kSize; off += kChunk) bw_chain_write(&c, src, kChunk);
        if (bw_chain_write_fd(&c, devnull(), &sent) != BW_OK || sent != kSize) st.SkipWithError("writev");
        bw_chain_release(&c);
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
        FILE *f = bw_fopen_writer(&w);
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

void register_f(const Options &o)
{
    (void)o;
    reg("F/writer_write_fd", bm_writer_write_fd);
    reg("F/chain_writev", bm_chain_writev);
    reg("F/fopen_writer", bm_fopen_writer);
    reg("F/open_memstream", bm_open_memstream);
}

} // namespace bwbench
