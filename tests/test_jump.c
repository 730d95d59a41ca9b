/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* nanosleep */
/* test_jump.c - the learned jump (what contiguous writers past the jump
 * floor, 16 KiB by default, teach the pool), the bound on how far a move
 * goes towards it with fresh memory (16 x the bytes needed; a block of the
 * learned size the pool holds idle is taken whatever its size), and
 * segmented writers that stay allocation-free in
 * steady state at large sizes (their blocks past the threshold are kept as
 * large blocks, within the pool's bounds). */
#include "harness.h"

#include <stdio.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <time.h>

/* Every default but the allocator (counted) and decay (never, so nothing
 * goes back while a test counts). */
static bw_pool *jump_pool(test_alloc *ta, unsigned flags, size_t max_learned, size_t floor)
{
    bw_pool_options o = fresh_opts(ta); /* every caller wants a fresh count */
    o.decay_ms = BW_DECAY_NEVER;
    o.flags = flags;
    o.max_learned_size = max_learned;
    o.jump_floor = floor;
    return mkpool(&o);
}

/* ------------------------------------------------------------------ */
/* The learned jump                                                     */
/* ------------------------------------------------------------------ */

Test(jump, similar_jobs_reach_their_size_within_the_bound_after_two)
{
    static const size_t sizes[] = { 256 * KiB, MiB, 4 * MiB };
    /* Blocks a job of that size climbs through while nothing is learned:
     * 8 KiB (the first write), 16 KiB, then 16 times the capacity per move
     * (256 KiB, 4 MiB) instead of every power of two; the fresh 256 KiB
     * block is the writer's in four windows (32 .. 256 KiB), so 3 more
     * capacities than blocks; the second job takes it idle, whole. */
    static const size_t climb[2][3] = { { 6, 7, 7 }, { 3, 4, 4 } };
    size_t i, k, caps[32], n;
    fill_chunk(3);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        test_alloc ta;
        bw_pool *p = jump_pool(&ta, 0, 0, 0);
        uint64_t rents;
        /* Nothing learned, then one sample: both climb. */
        for (k = 0; k < 2; k++) {
            cr_expect_eq(write_job(p, sizes[i], caps, &n), sizes[i] <= 256 * KiB ? 256 * KiB : 4 * MiB);
            cr_expect_eq(n, climb[k][i], "%zu KiB job %zu: %zu capacities", sizes[i] / KiB, k, n);
        }
        cr_expect_eq(stats_of(p).learned_large_size, sizes[i]);
        /* From the third on: the first 8 KiB write takes the block of the
         * learned size a job left idle (the thread's cache up to 1 MiB, the
         * kept large blocks above): one block, one rent, nothing copied, no
         * fresh memory. The climbs of 1 MiB jobs ended in 4 MiB blocks, so
         * the first 1 MiB block is made by the third job (64 KiB, then
         * 1 MiB, within the bound). */
        for (k = 0; k < 3; k++) {
            long allocs = ta.allocs + ta.reallocs;
            size_t want = i == 1 && k == 0 ? 2 : 1;
            rents = stats_of(p).rents;
            cr_expect_eq(write_job(p, sizes[i], caps, &n), sizes[i]);
            /* The fresh 1 MiB block in windows: 128 KiB .. 1 MiB. */
            cr_expect_eq(n, want == 1 ? 1 : 5, "%zu KiB job %zu: %zu capacities",
                         sizes[i] / KiB, k + 2, n);
            cr_expect_eq(caps[0], want == 1 ? sizes[i] : 64 * KiB,
                         "%zu KiB job: its first block is %zu", sizes[i] / KiB, caps[0]);
            cr_expect_eq(stats_of(p).rents - rents, want, "one rent per block");
            if (want == 1) cr_expect_eq(ta.allocs + ta.reallocs, allocs, "no fresh memory");
        }
        /* With nothing idle (the block is out), the bound: the first 8 KiB
         * write goes towards the learned size as far as 16 x 8 KiB allows
         * (1 MiB: its sixteenth, 64 KiB; 256 KiB and 4 MiB: 16 KiB), each
         * later move as far again. */
        {
            /* The fresh blocks below the threshold in windows (the 4 MiB
             * job's 256 KiB is idle: whole). */
            static const size_t path[3][5] = {
                { 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB },
                { 64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, MiB },
                { 16 * KiB, 256 * KiB, 4 * MiB } };
            size_t want = i == 2 ? 3 : 5, j, got;
            bw_writer hold;
            cr_assert_eq(bw_init(&hold, p, 0), BW_OK);
            cr_assert_not_null(bw_get_span(&hold, sizes[i] / 2 + 1, &got));
            cr_assert_eq(bw_capacity(&hold), sizes[i]);
            cr_expect_eq(write_job(p, sizes[i], caps, &n), sizes[i]);
            cr_expect_eq(n, want, "%zu KiB job, none idle: %zu capacities", sizes[i] / KiB, n);
            for (j = 0; j < n && j < want; j++)
                cr_expect_eq(caps[j], path[i][j], "%zu KiB job: capacity %zu is %zu",
                             sizes[i] / KiB, j, caps[j]);
            bw_release(&hold);
        }
        ta_finish(&ta, p);
    }
}

Test(jump, small_jobs_after_big_ones_take_the_idle_block_or_16x_fresh_memory)
{
    static const size_t small[] = { 1, 100, 512, 4000, 8 * KiB, 12 * KiB, 16 * KiB };
    test_alloc ta;
    bw_pool *p = jump_pool(&ta, 0, 0, 0);
    size_t i, k, caps[32], n;
    fill_chunk(3);
    for (k = 0; k < 3; k++) write_job(p, 4 * MiB, caps, &n);
    cr_assert_eq(stats_of(p).learned_large_size, 4 * MiB);
    for (k = 0; k < 20; k++) {
        for (i = 0; i < sizeof small / sizeof small[0]; i++) {
            long allocs = ta.allocs + ta.reallocs;
            size_t top = write_job(p, small[i], caps, &n);
            /* Past the first block, the idle 4 MiB block (no fresh
             * memory); a small message keeps its first block. */
            if (small[i] <= 512) {
                cr_expect_eq(top, 512, "the first block");
                continue;
            }
            cr_expect_eq(top, 4 * MiB, "a %zu-byte writer got %zu", small[i], top);
            cr_expect_eq(ta.allocs + ta.reallocs, allocs, "a %zu-byte writer: fresh memory",
                         small[i]);
        }
    }
    /* They teach nothing either: the learned size is still 4 MiB. With
     * the idle block out, a 100 KiB job goes from 8 KiB to its sixteenth,
     * 256 KiB (at most 16 x the 16 KiB it needed then), which holds it. */
    cr_expect_eq(stats_of(p).learned_large_size, 4 * MiB);
    {
        void *out = rent_ok(p, 4 * MiB, &n);
        cr_expect_eq(write_job(p, 100 * KiB, caps, &n), 256 * KiB);
        cr_expect_eq(n, 2);
        for (k = 0; k < 20; k++)
            for (i = 0; i < sizeof small / sizeof small[0]; i++)
                cr_expect_leq(write_job(p, small[i], caps, &n),
                              small[i] * 16 > 512 ? small[i] * 16 : 512,
                              "none idle: a %zu-byte writer", small[i]);
        cr_expect_eq(bw_pool_return(p, out, 4 * MiB), BW_OK);
    }
    ta_finish(&ta, p);
}

Test(jump, one_outlier_job_does_not_make_later_jobs_jump_to_its_size)
{
    test_alloc ta;
    bw_pool *p = jump_pool(&ta, 0, 1024 * MiB, 0);
    bw_writer w;
    void *span;
    size_t k, caps[32], n;
    int round;
    /* max_learned_size above the outlier, so the cap cannot hide it. */
    fill_chunk(3);
    for (k = 0; k < 3; k++) write_job(p, MiB, caps, &n);
    cr_assert_eq(stats_of(p).learned_large_size, MiB);
    for (round = 0; round < 2; round++) {
        /* A 256 MiB job (its bytes reserved and committed, not written:
         * only its length matters here). */
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        span = bw_get_span(&w, 256 * MiB, &n);
        cr_assert_not_null(span);
        cr_assert_eq(bw_advance(&w, 256 * MiB), BW_OK);
        cr_assert_eq(bw_len(&w), 256 * MiB);
        bw_release(&w);
        if (round == 0) {
            /* One: the next 1 MiB job still jumps to 1 MiB (its idle
             * block, from the first write). */
            cr_expect_eq(stats_of(p).learned_large_size, MiB);
            cr_expect_eq(write_job(p, MiB, caps, &n), MiB);
            cr_expect_eq(n, 1);
            if (n == 1) cr_expect_eq(caps[0], MiB);
        }
    }
    /* Two of the last 16 are no outlier: the jump follows them. */
    cr_expect_eq(stats_of(p).learned_large_size, 256 * MiB);
    ta_finish(&ta, p);
}

Test(jump, a_first_write_past_the_first_block_goes_towards_the_jump)
{
    static unsigned char big[20 * 1024];
    test_alloc ta;
    bw_pool *p = jump_pool(&ta, 0, 0, 0);
    size_t k, caps[32], n;
    fill_chunk(3);
    for (k = 0; k < 2; k++) write_job(p, MiB, caps, &n);
    cr_assert_eq(stats_of(p).learned_large_size, MiB);
    /* A small message's first block is min_first_block, as ever. */
    cr_expect_eq(first_write_block(p, big, 512), 512);
    /* A first write past it goes towards the learned size as far as 16 x
     * its bytes allow: 1 MiB / 16 / 16 = 4 KiB for 513 bytes, 1 MiB / 16
     * for 16 and 20 KiB. */
    cr_expect_eq(first_write_block(p, big, 513), 4 * KiB);
    cr_expect_eq(first_write_block(p, big, 16 * KiB), 64 * KiB);
    cr_expect_eq(first_write_block(p, big, sizeof big), 64 * KiB);
    ta_finish(&ta, p);
}

Test(jump, no_learned_growth_climbs_and_records_nothing)
{
    test_alloc ta;
    bw_pool *p = jump_pool(&ta, BW_POOL_NO_LEARNED_GROWTH, 0, 0);
    size_t k, caps[32], n;
    fill_chunk(3);
    for (k = 0; k < 4; k++) {
        cr_expect_eq(write_job(p, MiB, caps, &n), MiB);
        cr_expect_eq(n, 8, "job %zu: 8 KiB .. 1 MiB, every doubling (%zu)", k, n);
    }
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    ta_finish(&ta, p);
}

Test(jump, the_floor_is_an_option_and_never_above_a_small_threshold)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    size_t k, caps[32], n;
    fill_chunk(3);
    /* A floor of 256 KiB: 200 KiB jobs teach nothing; once two 1 MiB jobs
     * have, a 1 MiB job goes 64 KiB, 1 MiB, and the next takes that idle
     * 1 MiB block at its first write. */
    p = jump_pool(&ta, 0, 0, 256 * KiB);
    for (k = 0; k < 3; k++) write_job(p, 200 * KiB, caps, &n);
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    for (k = 0; k < 2; k++) write_job(p, MiB, caps, &n);
    cr_expect_eq(write_job(p, MiB, caps, &n), MiB);
    cr_expect_eq(n, 2, "64 KiB, then 1 MiB (%zu)", n);
    if (n == 2) cr_expect_eq(caps[0], 64 * KiB);
    cr_expect_eq(write_job(p, MiB, caps, &n), MiB);
    cr_expect_eq(n, 1, "1 MiB at once (%zu)", n);
    ta_finish(&ta, p);
    /* An 8 KiB threshold: the default floor is the threshold. */
    o = fresh_opts(&ta);
    o.decay_ms = BW_DECAY_NEVER;
    o.max_pooled_size = 8 * KiB;
    p = NULL;
    p = mkpool(&o);
    for (k = 0; k < 2; k++) write_job(p, 600 * KiB, caps, &n);
    cr_expect_eq(write_job(p, 600 * KiB, caps, &n), MiB);
    cr_expect_eq(n, 1, "1 MiB at once, the kept large block (%zu)", n);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* Segmented writers: allocation-free in steady state                   */
/* ------------------------------------------------------------------ */

/* A segmented writer on p writes `total` bytes in 8 KiB chunks; with
 * `check`, its bytes are read back; then it is released. Returns its
 * largest full block's capacity (a write fills the rest of the last block
 * first, so every block but the last holds exactly its capacity). */
static size_t chain_job(bw_pool *p, size_t total, int check)
{
    bw_writer w;
    struct iovec iov[64];
    size_t i, n, top = 0;
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    write_chunks(&w, total);
    cr_assert_eq(bw_len(&w), total);
    n = bw_iovec(&w, iov, 64);
    cr_assert_leq(n, 64, "%zu blocks", n);
    for (i = 0; i + 1 < n; i++)
        if (iov[i].iov_len > top) top = iov[i].iov_len;
    if (check) {
        static unsigned char back[8192];
        for (i = 0; i < total; i += (total / 7) & ~(size_t)8191) {
            cr_assert_eq(bw_copy_out(&w, i, back, sizeof back), BW_OK);
            cr_assert(memcmp(back, chunk, sizeof back) == 0, "bytes at %zu", i);
        }
    }
    bw_release(&w);
    return top;
}

static bw_pool *chain_pool(test_alloc *ta, size_t large_bytes, size_t large_blocks, uint32_t decay)
{
    bw_pool_options o = fresh_opts(ta); /* every caller wants a fresh count */
    o.decay_ms = decay;
    o.max_large_bytes = large_bytes;
    o.max_large_blocks = large_blocks;
    return mkpool(&o);
}

Test(chain_steady, repeated_16_and_64_mib_jobs_allocate_nothing_after_the_first)
{
    static const size_t sizes[] = { 16 * MiB, 64 * MiB };
    size_t i, k;
    fill_chunk(3);
    for (i = 0; i < 2; i++) {
        test_alloc ta;
        bw_pool *p = chain_pool(&ta, 0, 0, BW_DECAY_NEVER);
        bw_pool_stats s0, s;
        size_t top;
        top = chain_job(p, sizes[i], 1);
        /* Past the 1 MiB threshold the blocks keep doubling. */
        cr_expect_geq(top, sizes[i] / 2 - 64, "%zu MiB: largest block %zu", sizes[i] / MiB, top);
        s0 = stats_of(p);
        for (k = 0; k < 3; k++) {
            chain_job(p, sizes[i], k == 2);
            s = stats_of(p);
            cr_expect_eq(s.backing_allocs, s0.backing_allocs, "%zu MiB job %zu: %llu new",
                         sizes[i] / MiB, k + 1,
                         (unsigned long long)(s.backing_allocs - s0.backing_allocs));
            cr_expect_eq(s.backing_frees, s0.backing_frees);
            /* The same blocks as the first job, every one a retained one. */
            cr_expect_eq(s.rents - s0.rents, (k + 1) * s0.rents);
            cr_expect_eq(s.hits - s0.hits, s.rents - s0.rents);
            cr_expect_leq(s.large_retained_bytes, 80 * MiB);
            cr_expect_leq(s.retained_bytes - s.large_retained_bytes, 64 * MiB);
        }
        ta_finish(&ta, p);
    }
}

Test(chain_steady, large_chain_blocks_stay_within_the_large_bounds)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    size_t k, top;
    fill_chunk(3);
    /* 8 MiB and 3 blocks kept above the threshold: a 16 MiB chain takes 2
     * and 4 MiB, then the 2 MiB that still fit, then doubles on (4 MiB,
     * then 8 MiB for the last 2 MiB), and only the first three are kept. */
    p = chain_pool(&ta, 8 * MiB, 3, BW_DECAY_NEVER);
    for (k = 0; k < 3; k++) {
        top = chain_job(p, 16 * MiB, k == 2);
        cr_expect_eq(top, 4 * MiB - 32, "largest block %zu", top);
        s = stats_of(p);
        cr_expect_eq(s.large_retained_bytes, 8 * MiB);
        cr_expect_leq(s.retained_bytes - s.large_retained_bytes, 64 * MiB);
    }
    ta_finish(&ta, p);
    /* Without large retention, threshold-sized blocks as before. */
    ta_init(&ta, 1);
    {
        bw_pool_options o;
        o = opts_for(&ta);
        o.flags = BW_POOL_NO_LARGE_RETENTION;
        p = NULL;
        p = mkpool(&o);
    }
    top = chain_job(p, 4 * MiB, 1);
    cr_expect_leq(top, MiB, "largest block %zu", top);
    cr_expect_eq(stats_of(p).large_retained_bytes, 0);
    ta_finish(&ta, p);
}

Test(chain_steady, kept_chain_blocks_decay)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    void *b;
    size_t cap;
    fill_chunk(3);
    p = chain_pool(&ta, 0, 0, 50);
    chain_job(p, 16 * MiB, 0);
    s = stats_of(p);
    /* 2 + 4 + 8 + 16 MiB kept, or given back by decay already when the job
     * took longer than decay_ms (ASan, valgrind, a loaded machine): decay
     * then gives back the job's smaller blocks too, so at least. */
    cr_expect_leq(s.large_retained_bytes, 30 * MiB);
    cr_expect_geq(s.large_retained_bytes + s.decayed_bytes, 30 * MiB,
                  "2 + 4 + 8 + 16 MiB kept or decayed: %zu kept, %llu decayed",
                  s.large_retained_bytes, (unsigned long long)s.decayed_bytes);
    /* Well past decay_ms, a slow-path rent gives them back. */
    {
        struct timespec ts = { 0, 300 * 1000000L };
        while (nanosleep(&ts, &ts) != 0) {}
    }
    b = bw_pool_rent(p, 3 * MiB, &cap);
    cr_assert_not_null(b);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    s = stats_of(p);
    cr_expect_geq(s.decayed_bytes, 30 * MiB);
    cr_expect_eq(s.large_retained_bytes, 3 * MiB, "only the block just returned");
    ta_finish(&ta, p);
}
