// SPDX-License-Identifier: MIT
// bench_append.cpp - Workloads A and B: append `size` bytes in `chunk`-byte
// pieces into one buffer (contiguous, or segmented for the bw_chain rows),
// read a few bytes of it, release it.
//
//   A: 10 MiB in 8 KiB chunks, every policy (baseline: limit_warm).
//   B: the same over sizes 1..256 MiB (8 KiB chunks) and chunk sizes
//      64 B..64 KiB at 10 MiB; quadratic policies only where one run stays
//      under a few seconds.
//   J: the 0.3 sweep: 64 KiB .. 256 MiB in 8 KiB chunks, repeated jobs of
//      one size: the defaults (BW_WRITER_INIT on the shared pool), the
//      segmented writer, and what users write today (realloc doubling,
//      open_memstream, std::string, GLib's GByteArray when built with
//      GLib, an sds-style realloc buffer), against both limits (limit_warm
//      and limit_warm_huge), with page faults per job.
//
// Every benchmark runs one untimed warm-up iteration first (steady state:
// the heap, the pool and the page tables have seen the workload once),
// except the quadratic rows, which run one timed iteration per repetition.
//
// Why an A row and the J row of the same peer at 10 MiB can disagree in one
// run (0.3's record, glibc, realloc doubling over limit_warm: A 2.48x, J
// 1.01x, 1.05x of limit_warm_huge; 12 allocations and 0 faults per job in
// both): a peer's cost is mostly what happens to each grown block (grown in
// place at the top of the heap; moved with mremap, no copy, when glibc
// mmapped it; or copied into a new block, as operator new and open_memstream
// always do, with page faults when that block is fresh), and that depends on
// the heap the jobs before it left. A runs one warm-up job, interleaved at
// random with every other policy (the quadratic rows, limit_cold's 10 MiB
// malloc); J runs 16 warm-up jobs of its own size first (3 above 16 MiB).
// glibc's mmap threshold moves too: it rises to the size of the last mmapped
// block freed (up to 32 MiB, mallopt(3)), so the same request is an mmap in
// one state and a heap block in another. Read a row with its faults and
// allocations per job, and compare rows of one workload only.
#include "bench_common.h"

#include <sys/mman.h>
#include <sys/uio.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef BW_BENCH_GLIB
#include <glib.h>
#endif

namespace bwbench {
namespace {

// One policy: appends `size` bytes in `chunk`-byte pieces, returns the
// checksum of the result, frees everything it allocated.
struct Ctx {
    size_t size, chunk;
    const unsigned char *src;
    unsigned char *warm;   // limit_warm's (and limit_warm_huge's) buffer
    bw_pool *pool;         // bufwriter rows
    bool failed;
};

inline size_t piece(const Ctx &c, size_t off)
{
    return c.size - off < c.chunk ? c.size - off : c.chunk;
}

uint64_t run_limit_warm(Ctx &c)
{
    for (size_t off = 0; off < c.size; off += c.chunk)
        memcpy(c.warm + off, c.src, piece(c, off));
    benchmark::ClobberMemory();
    return checksum(c.warm, c.size);
}

// The same into warm memory backed by transparent huge pages (a 2 MiB
// aligned mapping with MADV_HUGEPAGE, touched before timing): the honest
// limit, since bufwriter's large blocks come from mmap and are huge-page
// backed too (fewer TLB misses than the 4 KiB pages of limit_warm).
uint64_t run_limit_warm_huge(Ctx &c) { return run_limit_warm(c); }

uint64_t run_limit_cold(Ctx &c)
{
    unsigned char *p = static_cast<unsigned char *>(malloc(c.size));
    benchmark::DoNotOptimize(p);
    if (p == nullptr) { c.failed = true; return 0; }
    for (size_t off = 0; off < c.size; off += c.chunk) memcpy(p + off, c.src, piece(c, off));
    uint64_t s = checksum(p, c.size);
    free(p);
    return s;
}

uint64_t run_limit_mmap(Ctx &c)
{
    void *m = mmap(nullptr, c.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { c.failed = true; return 0; }
    bench_alloc_note(1, c.size); // the interposer does not see mmap
    unsigned char *p = static_cast<unsigned char *>(m);
    for (size_t off = 0; off < c.size; off += c.chunk) memcpy(p + off, c.src, piece(c, off));
    uint64_t s = checksum(p, c.size);
    munmap(m, c.size);
    return s;
}

// A fresh huge-page mapping per job (the limit of a job larger than what a
// pool keeps): rounded to 2 MiB, aligned to 2 MiB, MADV_HUGEPAGE, then the
// writes, then munmap.
uint64_t run_limit_fresh_huge(Ctx &c)
{
    const size_t huge = 2 * MiB;
    size_t body = (c.size + huge - 1) & ~(huge - 1), len = body + huge;
    void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { c.failed = true; return 0; }
    bench_alloc_note(1, c.size); // the interposer does not see mmap
    uintptr_t a = (reinterpret_cast<uintptr_t>(m) + huge - 1) & ~(uintptr_t)(huge - 1);
    unsigned char *p = reinterpret_cast<unsigned char *>(a);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, body, MADV_HUGEPAGE);
#endif
    for (size_t off = 0; off < c.size; off += c.chunk) memcpy(p + off, c.src, piece(c, off));
    uint64_t s = checksum(p, c.size);
    munmap(m, len);
    return s;
}

// The seed report's 'Before': every append allocates exactly len + chunk,
// copies everything, frees the old block.
uint64_t run_exact_size(Ctx &c)
{
    unsigned char *buf = nullptr;
    size_t len = 0;
    for (size_t off = 0; off < c.size; off += c.chunk) {
        size_t n = piece(c, off);
        unsigned char *nb = static_cast<unsigned char *>(malloc(len + n));
        if (nb == nullptr) { free(buf); c.failed = true; return 0; }
        if (len) memcpy(nb, buf, len);
        memcpy(nb + len, c.src, n);
        free(buf);
        buf = nb;
        len += n;
    }
    uint64_t s = checksum(buf, len);
    free(buf);
    return s;
}

// The hand-rolled C buffer: realloc to max(2 * cap, need).
uint64_t run_realloc_double(Ctx &c)
{
    unsigned char *buf = nullptr;
    size_t len = 0, cap = 0;
    for (size_t off = 0; off < c.size; off += c.chunk) {
        size_t n = piece(c, off);
        if (len + n > cap) {
            size_t nc = cap * 2 > len + n ? cap * 2 : len + n;
            unsigned char *nb = static_cast<unsigned char *>(realloc(buf, nc));
            if (nb == nullptr) { free(buf); c.failed = true; return 0; }
            buf = nb;
            cap = nc;
        }
        memcpy(buf + len, c.src, n);
        len += n;
    }
    uint64_t s = checksum(buf, len);
    free(buf);
    return s;
}

// realloc to exactly len + chunk on every append.
uint64_t run_realloc_exact(Ctx &c)
{
    unsigned char *buf = nullptr;
    size_t len = 0;
    for (size_t off = 0; off < c.size; off += c.chunk) {
        size_t n = piece(c, off);
        unsigned char *nb = static_cast<unsigned char *>(realloc(buf, len + n));
        if (nb == nullptr) { free(buf); c.failed = true; return 0; }
        buf = nb;
        memcpy(buf + len, c.src, n);
        len += n;
    }
    uint64_t s = checksum(buf, len);
    free(buf);
    return s;
}

uint64_t run_open_memstream(Ctx &c)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == nullptr) { c.failed = true; return 0; }
    for (size_t off = 0; off < c.size; off += c.chunk)
        if (fwrite(c.src, 1, piece(c, off), f) != piece(c, off)) c.failed = true;
    if (fclose(f) != 0 || len != c.size) c.failed = true;
    uint64_t s = checksum(reinterpret_cast<unsigned char *>(buf), len);
    free(buf);
    return s;
}

uint64_t run_std_string(Ctx &c)
{
    std::string s;
    for (size_t off = 0; off < c.size; off += c.chunk)
        s.append(reinterpret_cast<const char *>(c.src), piece(c, off));
    if (s.size() != c.size) c.failed = true;
    return checksum(reinterpret_cast<const unsigned char *>(s.data()), s.size());
}

#ifdef BW_BENCH_GLIB
// GLib's byte array, g_byte_array_append per piece. GLib grows it to the
// next power of two of the length needed (the same rule as GString).
uint64_t run_g_byte_array(Ctx &c)
{
    GByteArray *a = g_byte_array_new();
    for (size_t off = 0; off < c.size; off += c.chunk)
        g_byte_array_append(a, c.src, static_cast<guint>(piece(c, off)));
    if (a->len != c.size) c.failed = true;
    uint64_t s = checksum(a->data, a->len);
    g_byte_array_free(a, TRUE);
    return s;
}
#endif

// The growth rule sds (Redis's string library) documents, written here as
// a plain realloc buffer: when a write does not fit, the new capacity is
// twice the length needed below 1 MiB, and the length needed plus 1 MiB
// from there on. Above 1 MiB it is linear growth: a 10 MiB job reallocs
// 15 times in 8 KiB chunks, a 256 MiB job 260 times.
uint64_t run_sds_style(Ctx &c)
{
    const size_t max_prealloc = 1 * MiB;
    unsigned char *buf = nullptr;
    size_t len = 0, cap = 0;
    for (size_t off = 0; off < c.size; off += c.chunk) {
        size_t n = piece(c, off);
        if (len + n > cap) {
            size_t need = len + n;
            size_t nc = need < max_prealloc ? 2 * need : need + max_prealloc;
            unsigned char *nb = static_cast<unsigned char *>(realloc(buf, nc));
            if (nb == nullptr) { free(buf); c.failed = true; return 0; }
            buf = nb;
            cap = nc;
        }
        memcpy(buf + len, c.src, n);
        len += n;
    }
    uint64_t s = checksum(buf, len);
    free(buf);
    return s;
}

uint64_t write_with(Ctx &c, bw_writer &w)
{
    for (size_t off = 0; off < c.size; off += c.chunk) bw_write(&w, c.src, piece(c, off));
    if (bw_error(&w) != BW_OK || bw_len(&w) != c.size) c.failed = true;
    uint64_t s = checksum(bw_data(&w), bw_len(&w));
    bw_release(&w);
    return s;
}

// The shared pool, default options (steady state: the warm-up iteration
// has filled it): the 0.2 defaults' target row, a plain BW_WRITER_INIT
// writer with nothing configured (A/bufwriter <= 1.25x of limit_warm,
// B/bufwriter <= 1.3x, 0 faults and 0 backing allocations per op).
uint64_t run_bufwriter(Ctx &c)
{
    bw_writer w = BW_WRITER_INIT;
    return write_with(c, w);
}

// A pool created for this iteration only: first use.
uint64_t run_bufwriter_fresh_pool(Ctx &c)
{
    bw_pool *p = nullptr;
    if (bw_pool_create(&p, nullptr) != BW_OK) { c.failed = true; return 0; }
    bw_writer w;
    bw_init(&w, p, 0);
    uint64_t s = write_with(c, w);
    bw_pool_destroy(p);
    return s;
}

// The steady state: a pool created once with BW_POOL_LEARN_SIZE and
// large retention (max_large_bytes; default threshold 1 MiB). After the
// warm-up jobs the writer starts at the learned size and its block above
// the threshold is a kept, warm one: no growth, no copy, no backing
// allocation.
uint64_t run_bufwriter_steady(Ctx &c)
{
    bw_writer w;
    bw_init(&w, c.pool, 0);
    return write_with(c, w);
}

// A pool whose threshold covers the whole buffer: every block is pooled.
uint64_t run_bufwriter_big_pool(Ctx &c)
{
    bw_writer w;
    bw_init(&w, c.pool, 0);
    return write_with(c, w);
}

// The shared pool, the final size reserved up front (one block).
uint64_t run_bufwriter_reserved(Ctx &c)
{
    bw_writer w;
    if (bw_init(&w, nullptr, c.size) != BW_OK) { c.failed = true; return 0; }
    return write_with(c, w);
}

// The segmented writer (bw_init_chain) on the shared
// pool, default options (blocks of 4 KiB doubling to the 1 MiB threshold,
// all pooled): never copies on growth. Read back through its iovec (the
// checksum's few bytes). The row names keep 0.1's "bw_chain".
uint64_t chain_checksum(const bw_writer &w)
{
    struct iovec iov[64];
    size_t n = bw_iovec(&w, iov, 64), i;
    uint64_t s = bw_len(&w);
    for (i = 0; i < n && i < 64; i++)
        s ^= checksum(static_cast<const unsigned char *>(iov[i].iov_base), iov[i].iov_len) * (i + 1);
    return s;
}

// Segmented writer, 10 MiB in 8 KiB chunks, a new writer per job (blocks from
// the warm shared pool), against limit_warm.
uint64_t run_bw_chain(Ctx &c)
{
    bw_writer w;
    bw_init_chain(&w, nullptr);
    for (size_t off = 0; off < c.size; off += c.chunk) bw_write(&w, c.src, piece(c, off));
    if (bw_error(&w) != BW_OK || bw_len(&w) != c.size) c.failed = true;
    uint64_t s = chain_checksum(w);
    bw_release(&w);
    return s;
}

// The segmented writer, then bw_pullup: one copy into one contiguous block
// (0.1's bw_chain_flatten into a writer).
uint64_t run_bw_chain_flatten(Ctx &c)
{
    bw_writer w;
    bw_init_chain(&w, nullptr);
    for (size_t off = 0; off < c.size; off += c.chunk) bw_write(&w, c.src, piece(c, off));
    const unsigned char *p = bw_pullup(&w);
    if (p == nullptr || bw_error(&w) != BW_OK || bw_len(&w) != c.size) c.failed = true;
    uint64_t s = checksum(p, bw_len(&w));
    bw_release(&w);
    return s;
}

enum Kind { NONE, WARM_BUFFER, WARM_HUGE, BIG_POOL, SHARED_POOL, FRESH_POOL, STEADY_POOL };

struct Policy {
    const char *name;
    uint64_t (*fn)(Ctx &);
    Kind kind;
    bool quadratic;
    bool sweep; // also in B's size and chunk sweeps (the main policies only)
    bool jsweep; // in J, the 0.3 size sweep
};

const Policy kPolicies[] = {
    {"limit_warm", run_limit_warm, WARM_BUFFER, false, true, true},
    {"limit_warm_huge", run_limit_warm_huge, WARM_HUGE, false, true, true},
    {"limit_cold", run_limit_cold, NONE, false, true, false},
    {"limit_mmap", run_limit_mmap, NONE, false, false, false},
    {"limit_fresh_huge", run_limit_fresh_huge, NONE, false, false, true},
    {"exact_size", run_exact_size, NONE, true, true, false},
    {"realloc_double", run_realloc_double, NONE, false, true, true},
    {"realloc_exact", run_realloc_exact, NONE, true, false, false},
    {"open_memstream", run_open_memstream, NONE, false, false, true},
    {"std_string", run_std_string, NONE, false, true, true},
#ifdef BW_BENCH_GLIB
    {"g_byte_array", run_g_byte_array, NONE, false, false, true},
#endif
    {"sds_style", run_sds_style, NONE, false, false, true},
    {"bufwriter", run_bufwriter, SHARED_POOL, false, true, true},
    {"bufwriter_steady", run_bufwriter_steady, STEADY_POOL, false, true, false},
    {"bufwriter_fresh_pool", run_bufwriter_fresh_pool, FRESH_POOL, false, false, false},
    {"bufwriter_big_pool", run_bufwriter_big_pool, BIG_POOL, false, false, false},
    {"bufwriter_reserved", run_bufwriter_reserved, SHARED_POOL, false, false, false},
    {"bw_chain", run_bw_chain, SHARED_POOL, false, false, true},
    {"bw_chain_flatten", run_bw_chain_flatten, SHARED_POOL, false, false, false},
};

// A warm buffer of `size` bytes backed by transparent huge pages: an
// anonymous mapping rounded to 2 MiB, aligned to 2 MiB, MADV_HUGEPAGE,
// every byte touched. Whether the kernel really used huge pages shows in
// /proc/self/smaps (AnonHugePages); with THP "never" this is limit_warm.
struct HugeBuf {
    void *map = nullptr;
    size_t len = 0;
    unsigned char *p = nullptr;
    bool make(size_t size)
    {
        const size_t huge = 2 * MiB;
        size_t body = (size + huge - 1) & ~(huge - 1);
        len = body + huge;
        map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED) { map = nullptr; return false; }
        uintptr_t a = (reinterpret_cast<uintptr_t>(map) + huge - 1) & ~(uintptr_t)(huge - 1);
        p = reinterpret_cast<unsigned char *>(a);
#ifdef MADV_HUGEPAGE
        (void)madvise(p, body, MADV_HUGEPAGE);
#endif
        memset(p, 1, body);
        return true;
    }
    ~HugeBuf() { if (map) munmap(map, len); }
};

size_t pow2_ceil(size_t x)
{
    size_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

// repeated: J's rows (repeated jobs of one size, more warm-up).
void bm_policy(benchmark::State &st, const Policy *pol, bool repeated)
{
    Ctx c{};
    c.size = static_cast<size_t>(st.range(0));
    c.chunk = static_cast<size_t>(st.range(1));
    c.src = source_bytes();
    std::vector<unsigned char> warm;
    HugeBuf huge;
    if (pol->kind == WARM_BUFFER) {
        warm.assign(c.size, 1); // allocated and touched before timing
        c.warm = warm.data();
    }
    if (pol->kind == WARM_HUGE) {
        if (!huge.make(c.size)) {
            st.SkipWithError("mmap failed");
            return;
        }
        c.warm = huge.p;
    }
    if (pol->kind == BIG_POOL) {
        bw_pool_options o{};
        o.max_pooled_size = pow2_ceil(c.size);
        o.max_retained_bytes = 4 * o.max_pooled_size;
        if (bw_pool_create(&c.pool, &o) != BW_OK) {
            st.SkipWithError("bw_pool_create failed");
            return;
        }
    }
    if (pol->kind == STEADY_POOL) {
        // Learned size + large retention, threshold at its default (1 MiB).
        // Keep room for two blocks of the job's size class; the learned
        // size may reach it (max_learned_size defaults to 64 MiB).
        bw_pool_options o{};
        o.flags = BW_POOL_LEARN_SIZE;
        o.max_large_bytes = 2 * pow2_ceil(c.size) > 64 * MiB ? 2 * pow2_ceil(c.size) : 64 * MiB;
        o.max_learned_size = pow2_ceil(c.size) > 64 * MiB ? pow2_ceil(c.size) : 0;
        if (bw_pool_create(&c.pool, &o) != BW_OK) {
            st.SkipWithError("bw_pool_create failed");
            return;
        }
        // Warm-up: the first job grows and teaches the pool its size; the
        // next ones run as every later job will.
        for (int i = 0; i < 3; i++) benchmark::DoNotOptimize(pol->fn(c));
    } else if (repeated) {
        // J: repeated jobs of one size. Enough warm-up jobs that the shared
        // pool's learned jump (the last 16 jobs) has seen this size, not
        // the row run before: 16 up to 16 MiB, 3 above (there the largest
        // size decides the jump anyway).
        int n = c.size <= 16 * MiB ? 16 : 3;
        for (int i = 0; i < n; i++) benchmark::DoNotOptimize(pol->fn(c));
    } else if (!pol->quadratic) {
        benchmark::DoNotOptimize(pol->fn(c)); // warm-up
    }

    bw_pool *counted = (pol->kind == BIG_POOL || pol->kind == STEADY_POOL) ? c.pool
                     : pol->kind == SHARED_POOL ? bw_pool_shared() : nullptr;
    bw_pool_stats ps0{}, ps1{};
    if (counted) bw_pool_get_stats(counted, &ps0);
    AllocScope as;
    for (auto _ : st) {
        uint64_t s = pol->fn(c);
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    if (counted) {
        bw_pool_get_stats(counted, &ps1);
        st.counters["pool_backing_allocs"] = benchmark::Counter(
            static_cast<double>(ps1.backing_allocs - ps0.backing_allocs),
            benchmark::Counter::kAvgIterations);
    }
    if (pol->kind == STEADY_POOL) {
        st.counters["learned_size"] = static_cast<double>(ps1.learned_size);
        st.counters["large_retained"] = static_cast<double>(ps1.large_retained_bytes);
    }
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(c.size));
    if (c.pool) bw_pool_destroy(c.pool);
    if (c.failed) st.SkipWithError("wrong result (length or write error)");
}

// Bytes a quadratic policy copies: size^2 / (2 chunk). Keep one run under
// about 1.5 s at ~8 GB/s.
bool quadratic_ok(size_t size, size_t chunk)
{
    double copied = static_cast<double>(size) * static_cast<double>(size) / (2.0 * chunk);
    return copied <= 12e9;
}

// min_time per repetition: A 0.1 s; B 0.05 s (0.2 s from 64 MiB up, where
// one iteration takes 20-500 ms). Quadratic rows: one timed iteration per
// repetition (--bw_slow_reps, default 3).
void add(const char *workload, const Policy &p, size_t size, size_t chunk, const Options &o)
{
    std::string name = std::string(workload) + "/" + p.name;
    benchmark::internal::Benchmark *b =
        benchmark::RegisterBenchmark(name.c_str(), bm_policy, &p, workload[0] == 'J');
    b->Args({static_cast<int64_t>(size), static_cast<int64_t>(chunk)})
        ->ArgNames({"size", "chunk"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    if (p.quadratic)
        b->Iterations(1)->Repetitions(o.slow_reps);
    else if (o.min_time > 0)
        b->MinTime(o.min_time);
    else if (workload[0] == 'A')
        b->MinTime(0.1);
    else
        b->MinTime(size >= 64 * MiB ? 0.2 : 0.05);
}

} // namespace

// A: every policy at 10 MiB / 8 KiB. B: the main policies (Policy::sweep)
// over sizes 1..64 MiB (default) or 1..256 MiB (--bw_full) at 8 KiB, and
// over chunk sizes 64 B..64 KiB at 10 MiB; quadratic policies only where
// one run copies at most 12 GB (exact_size: 1 and 4 MiB, chunks >= 8 KiB;
// nothing above 16 MiB).
void register_append(const Options &o)
{
    for (const Policy &p : kPolicies) add("A", p, 10 * MiB, 8 * KiB, o);

    const size_t sizes_quick[] = {1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB};
    const size_t sizes_full[] = {1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB};
    const size_t chunks[] = {64, 256, 1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB};
    const size_t *sizes = o.full ? sizes_full : sizes_quick;
    size_t nsizes = o.full ? 5 : 4;
    for (const Policy &p : kPolicies) {
        if (!p.sweep) continue;
        for (size_t i = 0; i < nsizes; i++)
            if (!p.quadratic || (sizes[i] <= 16 * MiB && quadratic_ok(sizes[i], 8 * KiB)))
                add("B", p, sizes[i], 8 * KiB, o);
        for (size_t ch : chunks)
            if (!p.quadratic || quadratic_ok(10 * MiB, ch)) add("B", p, 10 * MiB, ch, o);
    }

    // J: the 0.3 sweep, every size in every run (the targets' rows, and
    // the headline's 10 MiB, so the plot has it under every allocator).
    const size_t jsizes[] = {64 * KiB,  256 * KiB, 1 * MiB,   4 * MiB,
                             10 * MiB, 16 * MiB,  64 * MiB, 256 * MiB};
    for (const Policy &p : kPolicies)
        if (p.jsweep)
            for (size_t sz : jsizes) add("J", p, sz, 8 * KiB, o);
}

} // namespace bwbench
