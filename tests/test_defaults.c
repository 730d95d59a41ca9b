/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* POSIX 2008 (clock_gettime, nanosleep, fork) and MAP_ANONYMOUS */
/* test_defaults.c - the pool's defaults (bufwriter.h, section 5 "Pool"):
 * options, flags and bounds, the learned jump, min_first_block, stats and
 * BW_POOL_ZERO_ON_RETURN. Decay is in test_decay.c, the bounds on what a
 * writer may hold in test_bounds.c. */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DECAY 100u       /* ms */

/* A big job (write_job) on p. Returns the capacity right after it first
 * went above TH (0 if it never did); caps[] (if given) receives every
 * capacity it had. */
static size_t big_job(bw_pool *p, size_t total, size_t *caps, size_t *ncaps)
{
    size_t all[32], n, i, cross = 0;
    fill_chunk(7);
    write_job(p, total, all, &n);
    for (i = 0; i < n && cross == 0; i++)
        if (all[i] > TH) cross = all[i];
    if (caps != NULL) memcpy(caps, all, n * sizeof all[0]);
    if (ncaps != NULL) *ncaps = n;
    return cross;
}

/* Two 600 KiB jobs on p: two samples, so the pool learns to jump to 1 MiB
 * (the growth rule's size for 600 KiB). */
static void learn_1_mib_jump(bw_pool *p)
{
    big_job(p, 600 * KiB, NULL, NULL);
    big_job(p, 600 * KiB, NULL, NULL);
    cr_assert_eq(stats_of(p).learned_large_size, MiB);
}

/* A 128 KiB block (above TH) rented and returned is freed at once, not
 * kept; renting it again allocates again. *cap: the block's capacity. */
static void expect_large_block_not_kept(bw_pool *p, size_t *cap)
{
    bw_pool_stats s;
    void *b = rent_ok(p, 128 * KiB, cap);
    cr_expect_eq(bw_pool_return(p, b, *cap), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.backing_frees, 1);
    cr_expect_eq(s.large_retained_bytes, 0);
    cr_expect_eq(s.retained_bytes, 0);
    b = rent_ok(p, 128 * KiB, cap);
    s = stats_of(p);
    cr_expect_eq(s.backing_allocs, 2);
    cr_expect_eq(s.large_hits, 0);
    cr_expect_eq(bw_pool_return(p, b, *cap), BW_OK);
}

/* ------------------------------------------------------------------ */
/* Options, flags, bounds, stats                                        */
/* ------------------------------------------------------------------ */



Test(defaults, zeroed_options_behave_as_null)
{
    bw_pool_options zero;
    bw_pool *pools[2];
    size_t sizes[] = { 0, 1, 16, 17, 255, 256, 1000, 4096, 32 * KiB, MiB - 1, MiB, MiB + 1 };
    size_t i, k;
    memset(&zero, 0, sizeof zero);
    pools[0] = mkpool(NULL);
    pools[1] = mkpool(&zero);
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        cr_expect_eq(bw_pool_class_size(pools[0], sizes[k]), bw_pool_class_size(pools[1], sizes[k]),
                     "class_size(%zu)", sizes[k]);
    for (i = 0; i < 2; i++) {
        bw_pool *p = pools[i];
        bw_pool_stats s = stats_of(p);
        bw_writer w;
        size_t cap, cross;
        void *b, *b2;
        cr_expect_eq(s.rents + s.returns + s.hits + s.backing_allocs + s.backing_frees, 0);
        cr_expect_eq(s.retained_bytes + s.outstanding_bytes + s.learned_size, 0);
        cr_expect_eq(s.learned_large_size + s.decayed_bytes + s.large_hits, 0);
        /* The first block is min_first_block's default, 512. */
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_put_u32le(&w, 1), BW_OK);
        cr_expect_eq(bw_capacity(&w), 512, "pool %zu: first block %zu", i, bw_capacity(&w));
        bw_release(&w);
        /* Large retention is on. */
        b = rent_ok(p, 2 * MiB, &cap);
        cr_expect_eq(cap, 2 * MiB);
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
        s = stats_of(p);
        cr_expect_eq(s.large_retained_bytes, 2 * MiB, "pool %zu", i);
        b2 = rent_ok(p, 2 * MiB, &cap);
        cr_expect_eq(b2, b, "pool %zu: the kept block comes back", i);
        cr_expect_eq(stats_of(p).large_hits, 1, "pool %zu", i);
        cr_expect_eq(bw_pool_return(p, b2, cap), BW_OK);
        /* The learned jump is on: before anything is learned a writer
         * climbs 16 times its capacity per move past 16 KiB (16 KiB ->
         * 256 KiB -> 4 MiB; on Linux, where blocks from 2 MiB up are
         * huge-page mappings, it stops at 128 KiB first: 16 KiB ->
         * 128 KiB -> 2 MiB -> 4 MiB); after two 3 MiB jobs it goes from
         * 8 KiB to 4 MiB's sixteenth (at most 16 x the 16 KiB it needs),
         * then to 4 MiB. */
        fill_chunk(7);
        for (k = 0; k < 3; k++) {
            cross = 0;
            cr_assert_eq(bw_init(&w, p, 0), BW_OK);
            while (bw_len(&w) < 3 * MiB) {
                cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
                if (cross == 0 && bw_capacity(&w) > 16 * KiB) cross = bw_capacity(&w);
            }
            cr_expect_eq(bw_capacity(&w), 4 * MiB, "pool %zu job %zu", i, k);
            bw_release(&w);
            /* The third job's first move takes the kept 4 MiB block; the
             * first climbs to a fresh 128 KiB (256 KiB) block, the
             * writer's in windows from the growth rule's 32 KiB, and the
             * second takes it idle, whole. */
            cr_expect_eq(cross, k == 0 ? 32 * KiB : k == 1 ? (maps_large() ? 128 : 256) * KiB
                                                           : 4 * MiB,
                         "pool %zu job %zu: %zu", i, k, cross);
        }
        cr_expect_eq(stats_of(p).learned_large_size, 4 * MiB, "pool %zu", i);
        /* Decay is on with a default of seconds: nothing went yet. */
        cr_expect_eq(stats_of(p).decayed_bytes, 0);
    }
    bw_pool_destroy(pools[0]);
    bw_pool_destroy(pools[1]);
}

Test(defaults, unknown_flag_bits_are_einval)
{
    bw_pool_options o;
    bw_pool *p;
    unsigned bit;
    for (bit = 0x100u; bit != 0; bit <<= 1) {
        memset(&o, 0, sizeof o);
        o.flags = bit;
        p = (bw_pool *)&o;
        cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL, "flag 0x%x", bit);
        cr_expect_null(p, "flag 0x%x", bit);
        o.flags = bit | BW_POOL_NO_THREAD_CACHE;
        cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL, "flag 0x%x with a known one", bit);
    }
    /* Every documented flag together is accepted. */
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE | BW_POOL_CHECKED |
              BW_POOL_LEARN_SIZE | BW_POOL_FILL | BW_POOL_BYPASS | BW_POOL_NO_LARGE_RETENTION |
              BW_POOL_NO_LEARNED_GROWTH;
    cr_expect_eq(o.flags, 0xFFu);
    p = NULL;
    cr_expect_eq(bw_pool_create(&p, &o), BW_OK);
    bw_pool_destroy(p);
}

Test(defaults, no_large_retention_flag_frees_blocks_above_the_threshold)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    bw_pool_stats s;
    size_t cap;
    o.max_pooled_size = TH;
    o.flags = BW_POOL_NO_LARGE_RETENTION;
    p = mkpool(&o);
    expect_large_block_not_kept(p, &cap);
    s = stats_of(p);
    cr_expect_eq(s.hits, 0);
    ta_finish(&ta, p);
}

Test(defaults, default_keeps_a_16_mib_block_and_counts_it_in_retained_bytes)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_pool_stats s;
    size_t cap, cap2;
    void *b, *b2;
    b = rent_ok(p, 16 * MiB, &cap);
    cr_expect_eq(cap, 16 * MiB);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.backing_frees, 0, "the 16 MiB block is kept");
    cr_expect_eq(s.large_retained_bytes, 16 * MiB);
    cr_expect_eq(s.retained_bytes, 16 * MiB);
    b2 = rent_ok(p, 16 * MiB, &cap);
    cr_expect_eq(b2, b);
    s = stats_of(p);
    cr_expect_eq(s.backing_allocs, 1);
    cr_expect_eq(s.hits, 1);
    cr_expect_eq(s.large_hits, 1);
    cr_expect_eq(s.retained_bytes, 0);
    /* Only a block of exactly the size asked for is used. */
    b = rent_ok(p, 16 * MiB + 4096, &cap2);
    cr_expect_eq(stats_of(p).large_hits, 1);
    cr_expect_eq(bw_pool_return(p, b2, cap), BW_OK);
    cr_expect_eq(bw_pool_return(p, b, cap2), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 32 * MiB + 4096);
    cr_expect_eq(s.retained_bytes, 32 * MiB + 4096);
    ta_finish(&ta, p);
}

Test(defaults, default_large_bounds_are_8_blocks_and_80_mib)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_pool_stats s;
    void *b[9];
    size_t cap[9], i;
    /* Nine 2 MiB blocks: eight are kept, the oldest goes. */
    rent_each(p, 9, NULL, 2 * MiB, b, cap);
    return_each(p, 9, b, cap);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 16 * MiB);
    cr_expect_eq(s.backing_frees, 1);
    for (i = 0; i < 8; i++) {
        void *x = rent_ok(p, 2 * MiB, &cap[i]);
        cr_expect_neq(x, b[0], "the oldest block was the one given back");
        b[i] = x;
    }
    cr_expect_eq(stats_of(p).large_hits, 8);
    return_each(p, 8, b, cap);
    bw_pool_trim(p);
    cr_expect_eq(stats_of(p).retained_bytes, 0);
    /* Six 16 MiB blocks: 80 MiB are kept. */
    rent_each(p, 6, NULL, 16 * MiB, b, cap);
    return_each(p, 6, b, cap);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 80 * MiB);
    cr_expect_eq(s.retained_bytes, 80 * MiB);
    /* A block larger than the byte bound is never kept. */
    b[0] = rent_ok(p, 80 * MiB + 4096, &cap[0]);
    cr_expect_eq(bw_pool_return(p, b[0], cap[0]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 80 * MiB);
    ta_finish(&ta, p);
}

Test(defaults, max_retained_bytes_bounds_pooled_classes_and_large_blocks_have_their_own)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats s;
    void *b[4];
    size_t cap[4], i;
    static const struct {
        size_t size, large_retained;
        uint64_t frees;
    } large[] = {
        { 512 * KiB, 512 * KiB, 2 },
        { 768 * KiB, 768 * KiB, 3 },
        { 2 * MiB, 768 * KiB, 4 },
    };
    o = fresh_opts(&ta);
    o.max_pooled_size = TH;
    o.max_retained_bytes = 64 * KiB;
    o.max_large_bytes = MiB;
    o.flags = BW_POOL_NO_THREAD_CACHE;
    o.decay_ms = BW_DECAY_NEVER;
    p = mkpool(&o);
    rent_each(p, 4, NULL, 32 * KiB, b, cap);
    return_each(p, 4, b, cap);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 64 * KiB, "two of four 32 KiB blocks fit the bound");
    cr_expect_eq(s.backing_frees, 2);
    /* One large block rented and returned per row: a kept one does not
     * count against max_retained_bytes but against max_large_bytes (the
     * oldest goes); one above max_large_bytes is never kept. */
    for (i = 0; i < sizeof large / sizeof large[0]; i++) {
        b[0] = rent_ok(p, large[i].size, &cap[0]);
        cr_expect_eq(bw_pool_return(p, b[0], cap[0]), BW_OK);
        s = stats_of(p);
        cr_expect_eq(s.large_retained_bytes, large[i].large_retained, "row %zu", i);
        cr_expect_eq(s.retained_bytes, 64 * KiB + large[i].large_retained, "row %zu", i);
        cr_expect_eq(s.backing_frees, large[i].frees, "row %zu", i);
    }
    ta_finish(&ta, p);
}

Test(defaults, max_large_blocks_evicts_the_oldest)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    void *b[3];
    size_t cap[3];
    size_t sz[3] = { 100 * KiB, 200 * KiB, 300 * KiB };
    o.max_pooled_size = TH;
    o.max_large_blocks = 2;
    o.decay_ms = BW_DECAY_NEVER;
    p = mkpool(&o);
    rent_each(p, 3, sz, 0, b, cap);
    return_each(p, 3, b, cap);
    cr_expect_eq(stats_of(p).large_retained_bytes, 500 * KiB);
    rent_each(p, 3, sz, 0, b, cap);
    cr_expect_eq(stats_of(p).large_hits, 2, "200 and 300 KiB kept, 100 KiB (oldest) evicted");
    cr_expect_eq(stats_of(p).backing_allocs, 4);
    return_each(p, 3, b, cap);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* The learned jump                                                     */
/* ------------------------------------------------------------------ */

Test(defaults, jump_to_learned_size_after_two_big_writers_not_one)
{
    test_alloc ta;
    bw_pool *p = fresh_learn_pool(&ta, 0, 0);
    size_t caps[32], n;
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    /* Nothing learned yet: the growth rule, at 16 times the capacity past
     * the floor, 64 KiB -> 1 MiB. */
    cr_expect_eq(big_job(p, 100 * KiB, caps, &n), MiB);
    cr_expect_eq(stats_of(p).learned_large_size, 0, "one sample is not enough");
    /* One sample: still the growth rule. */
    cr_expect_eq(big_job(p, 100 * KiB, NULL, NULL), MiB);
    cr_expect_eq(stats_of(p).learned_large_size, 128 * KiB);
    /* Two: the first 8 KiB write goes straight to the growth rule's size
     * for 100 KiB (at most 16 x its 8 KiB): one block, nothing copied. */
    cr_expect_eq(big_job(p, 100 * KiB, caps, &n), 128 * KiB);
    cr_expect_eq(n, 1, "capacities: one jump");
    if (n == 1) cr_expect_eq(caps[0], 128 * KiB);
    /* A small message's first block is as ever; past it a writer takes
     * the idle 128 KiB block (no fresh memory), or with that one out holds
     * at most 16 x its bytes. */
    {
        bw_writer w, w2;
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, 500), BW_OK);
        cr_expect_eq(bw_capacity(&w), 512);
        cr_assert_eq(bw_write(&w, chunk, 500), BW_OK);
        cr_expect_eq(bw_capacity(&w), 128 * KiB, "the idle block");
        cr_assert_eq(bw_init(&w2, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w2, chunk, 500), BW_OK);
        cr_assert_eq(bw_write(&w2, chunk, 500), BW_OK);
        cr_expect_eq(bw_capacity(&w2), 8 * KiB, "128 KiB / 16, within 16 x 1000 bytes");
        cr_assert_eq(bw_write(&w2, chunk, 8000), BW_OK);
        cr_expect_eq(bw_capacity(&w2), 128 * KiB);
        cr_expect_leq(bw_capacity(&w2), 16 * bw_len(&w2));
        bw_release(&w2);
        bw_release(&w);
    }
    /* The jump lands in the kept large block. */
    cr_expect_gt(stats_of(p).large_hits, 0);
    cr_expect_eq(stats_of(p).learned_large_size, 128 * KiB);
    ta_finish(&ta, p);
}

Test(defaults, learned_size_is_the_second_largest_of_the_last_16)
{
    test_alloc ta;
    bw_pool *p = fresh_learn_pool(&ta, 0, 0);
    int i;
    big_job(p, 300 * KiB, NULL, NULL);
    big_job(p, 600 * KiB, NULL, NULL);
    cr_expect_eq(stats_of(p).learned_large_size, 512 * KiB, "second largest 300 KiB -> 512 KiB");
    cr_expect_eq(big_job(p, 200 * KiB, NULL, NULL), 512 * KiB);
    cr_expect_eq(stats_of(p).learned_large_size, 512 * KiB);
    cr_expect_eq(big_job(p, 900 * KiB, NULL, NULL), 512 * KiB);
    cr_expect_eq(stats_of(p).learned_large_size, MiB, "second largest now 600 KiB");
    /* Only the last 16 count: samples 300, 600, 200, 900 KiB, then 100 KiB
     * ones push them out one by one (the 15th writer sees 200 and 900 as
     * the largest, the 16th only 900). */
    for (i = 0; i < 16; i++) {
        size_t want = i <= 13 ? MiB : i == 14 ? 256 * KiB : 128 * KiB;
        cr_expect_eq(big_job(p, 100 * KiB, NULL, NULL), want, "100 KiB writer %d", i);
    }
    cr_expect_eq(stats_of(p).learned_large_size, 128 * KiB);
    cr_expect_eq(big_job(p, 100 * KiB, NULL, NULL), 128 * KiB);
    ta_finish(&ta, p);
}

Test(defaults, jump_is_capped_by_max_learned_size)
{
    test_alloc ta;
    bw_pool *p = fresh_learn_pool(&ta, 0, 256 * KiB);
    big_job(p, 600 * KiB, NULL, NULL);
    big_job(p, 600 * KiB, NULL, NULL);
    cr_expect_eq(stats_of(p).learned_large_size, 256 * KiB);
    cr_expect_eq(big_job(p, 600 * KiB, NULL, NULL), 256 * KiB);
    ta_finish(&ta, p);
}

Test(defaults, no_learned_growth_flag_turns_the_jump_off)
{
    test_alloc ta;
    bw_pool *p = fresh_learn_pool(&ta, BW_POOL_NO_LEARNED_GROWTH, 0);
    int i;
    for (i = 0; i < 3; i++) cr_expect_eq(big_job(p, 600 * KiB, NULL, NULL), 128 * KiB);
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    ta_finish(&ta, p);
}

Test(defaults, segmented_streaming_and_fixed_writers_neither_record_nor_jump)
{
    static unsigned char fixed_buf[200 * 1024];
    wpool f;
    size_t i, maxfree;
    int k;
    wp_open_learn(&f, 0, 0);
    fill_chunk(7);
    for (k = 0; k < 2; k++) {
        /* segmented, 600 KiB */
        cr_assert_eq(bw_init_chain(&f.w, f.p), BW_OK);
        write_chunks(&f.w, 600 * KiB);
        cr_expect_eq(bw_len(&f.w), 600 * KiB);
        bw_release(&f.w);
        /* streaming, 200 KiB held in a 256 KiB buffer */
        cr_assert_eq(bw_init_sink(&f.w, f.p, 256 * KiB, discard_sink, NULL), BW_OK);
        write_chunks(&f.w, 200 * KiB);
        cr_expect_eq(bw_len(&f.w), 200 * KiB);
        bw_release(&f.w);
        /* fixed, 150 KiB */
        cr_assert_eq(bw_init_fixed(&f.w, fixed_buf, sizeof fixed_buf), BW_OK);
        write_chunks(&f.w, 150 * KiB);
        bw_release(&f.w);
    }
    cr_expect_eq(stats_of(f.p).learned_large_size, 0, "only contiguous writers record");
    learn_1_mib_jump(f.p);
    /* A segmented writer's blocks double past the threshold (4 KiB ..
     * 512 KiB for 600 KiB), they do not jump to the learned 1 MiB ... */
    cr_assert_eq(bw_init_chain(&f.w, f.p), BW_OK);
    maxfree = 0;
    for (i = 0; i < 600 * KiB; i += sizeof chunk) {
        cr_assert_eq(bw_write(&f.w, chunk, sizeof chunk), BW_OK);
        if (bw_free_capacity(&f.w) > maxfree) maxfree = bw_free_capacity(&f.w);
    }
    cr_expect_leq(maxfree, 512 * KiB, "a segmented block of %zu", maxfree);
    bw_release(&f.w);
    /* ... nor when one request needs more than the threshold. */
    cr_assert_eq(bw_init_chain(&f.w, f.p), BW_OK);
    cr_assert_eq(bw_reserve(&f.w, 100 * KiB), BW_OK);
    cr_expect_geq(bw_free_capacity(&f.w), 100 * KiB);
    cr_expect_leq(bw_free_capacity(&f.w), 128 * KiB);
    bw_release(&f.w);
    /* A streaming writer's block for a big reserve does not jump. */
    cr_assert_eq(bw_init_sink(&f.w, f.p, 16 * KiB, discard_sink, NULL), BW_OK);
    cr_assert_eq(bw_put_u8(&f.w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&f.w), 16 * KiB);
    cr_assert_eq(bw_reserve(&f.w, 100 * KiB), BW_OK);
    cr_expect_geq(bw_free_capacity(&f.w), 100 * KiB);
    cr_expect_leq(bw_capacity(&f.w), 128 * KiB, "streaming block %zu", bw_capacity(&f.w));
    wp_close(&f);
}

Test(defaults, explicit_initial_capacity_is_not_overridden)
{
    static unsigned char buf[100 * 1024];
    wpool f;
    wp_open_learn(&f, 0, 0);
    learn_1_mib_jump(f.p);
    cr_assert_eq(bw_init(&f.w, f.p, 100 * KiB), BW_OK);
    cr_expect_eq(bw_capacity(&f.w), 128 * KiB);
    cr_assert_eq(bw_write(&f.w, chunk, 1000), BW_OK);
    cr_expect_eq(bw_capacity(&f.w), 128 * KiB);
    bw_release(&f.w);
    cr_assert_eq(bw_init(&f.w, f.p, 1000), BW_OK);
    cr_expect_eq(bw_capacity(&f.w), 1024);
    bw_release(&f.w);
    cr_assert_eq(bw_init_buffer(&f.w, f.p, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_capacity(&f.w), sizeof buf);
    wp_close(&f);
}

Test(defaults, bypass_turns_large_retention_off)
{
    test_alloc ta;
    bw_pool *p = fresh_learn_pool(&ta, BW_POOL_BYPASS, 0);
    size_t cap;
    expect_large_block_not_kept(p, &cap);
    cr_expect_eq(cap, 128 * KiB);
    ta_finish(&ta, p);
}

Test(defaults, zero_on_return_zeroes_kept_large_blocks)
{
    test_alloc ta;
    bw_pool *p;
    void *b, *b2;
    size_t cap;
    garbage_init(&ta);
    p = learn_pool(&ta, BW_POOL_ZERO_ON_RETURN, 0);
    b = rent_ok(p, 128 * KiB, &cap);
    memset(b, 0xCC, cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    cr_expect_eq(stats_of(p).large_retained_bytes, 128 * KiB);
    b2 = rent_ok(p, 128 * KiB, &cap);
    cr_expect_eq(b2, b);
    cr_expect_eq(stats_of(p).large_hits, 1);
    cr_expect(all_bytes(b2, cap, 0), "a kept large block holds the last renter's bytes");
    cr_expect_eq(bw_pool_return(p, b2, cap), BW_OK);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* min_first_block                                                      */
/* ------------------------------------------------------------------ */

/* first_block on a pool made from o, destroyed again. */
static size_t first_block_for(const bw_pool_options *o)
{
    bw_pool *p = mkpool(o);
    size_t cap = first_block(p);
    bw_pool_destroy(p);
    return cap;
}

Test(defaults, min_first_block_defaults_to_512)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w = BW_WRITER_INIT;
    cr_assert_eq(bw_put_u32le(&w, 42), BW_OK);
    cr_expect_eq(bw_capacity(&w), 512);
    cr_expect_eq(bw_len(&w), 4);
    bw_release(&w);
    p = fresh_pool_defaults(&ta);
    cr_expect_eq(first_block(p), 512);
    ta_finish(&ta, p);
}

Test(defaults, min_first_block_rounds_up_to_a_class_and_above_threshold_is_einval)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    o.max_pooled_size = TH;
    o.min_first_block = 1000;
    cr_expect_eq(first_block_for(&o), 1024);
    o.min_first_block = TH;
    cr_expect_eq(first_block_for(&o), TH);
    o.min_first_block = TH + 1;
    p = (bw_pool *)&o;
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    cr_expect_null(p);
    o.min_first_block = 2 * TH;
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    /* The smallest class rounds it too. */
    o.min_first_block = 1;
    o.min_block_size = 64;
    cr_expect_eq(first_block_for(&o), 64);
    ta_finish(&ta, NULL); /* every pool is gone: the allocator balances */
}

Test(defaults, min_first_block_1_is_the_class_of_the_first_write)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    bw_writer w;
    o.min_first_block = 1;
    p = mkpool(&o);
    cr_expect_eq(first_block(p), 16);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, chunk, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(defaults, caller_given_sizes_are_kept)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_writer w;
    unsigned char buf[40];
    cr_assert_eq(bw_init(&w, p, 20), BW_OK);
    cr_expect_eq(bw_capacity(&w), 32, "an initial capacity is rounded by the growth rule only");
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), sizeof buf);
    bw_release(&w);
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), sizeof buf);
    bw_release(&w);
    cr_assert_eq(bw_init_sink(&w, p, 100, discard_sink, NULL), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128, "buffer_size 100 rounds to 128, not to min_first_block");
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(defaults, with_learn_size_the_larger_wins)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p = fresh_flags_pool(&ta, BW_POOL_LEARN_SIZE, 0);
    small_jobs(p, 3, 100);
    cr_expect_eq(stats_of(p).learned_size, 128);
    cr_expect_eq(first_block(p), 512, "min_first_block beats a smaller learned size");
    small_jobs(p, 16, 5000);
    cr_expect_eq(stats_of(p).learned_size, 8192);
    cr_expect_eq(first_block(p), 8192, "a larger learned size beats min_first_block");
    bw_pool_destroy(p);
    o = opts_for(&ta);
    o.flags = BW_POOL_LEARN_SIZE;
    o.min_first_block = 16 * KiB;
    p = mkpool(&o);
    small_jobs(p, 3, 5000);
    cr_expect_eq(first_block(p), 16 * KiB);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* Stats                                                                */
/* ------------------------------------------------------------------ */

Test(defaults, large_hits_are_part_of_hits_and_learned_large_size_starts_at_0)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    bw_pool_stats s;
    void *b;
    size_t cap;
    o.max_pooled_size = TH;
    o.flags = BW_POOL_NO_THREAD_CACHE;
    o.decay_ms = BW_DECAY_NEVER;
    p = mkpool(&o);
    s = stats_of(p);
    cr_expect_eq(s.learned_large_size, 0);
    cr_expect_eq(s.decayed_bytes, 0);
    b = rent_ok(p, 128 * KiB, &cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    b = rent_ok(p, 128 * KiB, &cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    b = rent_ok(p, 1000, &cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    b = rent_ok(p, 1000, &cap);
    s = stats_of(p);
    cr_expect_eq(s.rents, 4);
    cr_expect_eq(s.hits, 2);
    cr_expect_eq(s.large_hits, 1);
    cr_expect_eq(s.backing_allocs, 2);
    cr_expect_eq(s.outstanding_bytes, 1024);
    cr_expect_eq(s.large_retained_bytes, 128 * KiB);
    cr_expect_eq(s.retained_bytes, 128 * KiB, "retained_bytes includes the kept large block");
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 128 * KiB + 1024);
    cr_expect_eq(s.outstanding_bytes, 0);
    cr_expect_eq(s.learned_large_size, 0);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* BW_POOL_ZERO_ON_RETURN                                               */
/* ------------------------------------------------------------------ */

/* The zeroing pools the two tests below run on: with and without the
 * thread cache. */
static const unsigned zero_flags[2] = { BW_POOL_ZERO_ON_RETURN,
                                        BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE };

Test(defaults, zero_on_return_fresh_blocks_read_as_zeros)
{
    test_alloc ta;
    bw_pool *p;
    void *b[3];
    size_t cap[3], i;
    size_t sz[3] = { 100, 40 * KiB, 128 * KiB }; /* thread-cached class, class, large */
    unsigned k;
    for (k = 0; k < 2; k++) {
        garbage_init(&ta);
        p = learn_pool(&ta, zero_flags[k], 0);
        for (i = 0; i < 3; i++) {
            b[i] = rent_ok(p, sz[i], &cap[i]);
            cr_expect(all_bytes(b[i], cap[i], 0), "fresh block of %zu holds the allocator's bytes",
                      cap[i]);
        }
        cr_expect_eq(stats_of(p).hits, 0);
        return_each(p, 3, b, cap);
        ta_finish(&ta, p);
    }
}

Test(defaults, zero_on_return_retained_class_blocks_read_as_zeros)
{
    test_alloc ta;
    bw_pool *p;
    void *b, *b2;
    size_t cap, cap2, k;
    size_t sz[2] = { 100, 40 * KiB };
    unsigned f;
    for (f = 0; f < 2; f++) {
        garbage_init(&ta);
        p = learn_pool(&ta, zero_flags[f], 0);
        for (k = 0; k < 2; k++) {
            b = rent_ok(p, sz[k], &cap);
            memset(b, 0xCC, cap);
            cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
            b2 = rent_ok(p, sz[k], &cap2);
            cr_expect_eq(b2, b, "the retained block is reused");
            cr_expect(all_bytes(b2, cap2, 0),
                      "a retained block of %zu holds the last renter's bytes", cap2);
            cr_expect_eq(bw_pool_return(p, b2, cap2), BW_OK);
        }
        ta_finish(&ta, p);
    }
}

Test(defaults, defect_zero_on_return_block_above_threshold_rented_again_reads_as_zeros)
{
    test_alloc ta;
    bw_pool *p;
    unsigned char *b;
    size_t cap, i;
    unsigned flags[2] = { BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_LARGE_RETENTION,
                          BW_POOL_ZERO_ON_RETURN };
    unsigned k;
    for (k = 0; k < 2; k++) {
        garbage_init(&ta);
        p = learn_pool(&ta, flags[k], 0);
        for (i = 0; i < 3; i++) {
            b = (unsigned char *)rent_ok(p, 100 * KiB, &cap);
            cr_expect_eq(cap, 100 * KiB);
            cr_expect(all_bytes(b, cap, 0), "round %zu (flags 0x%x): the block is not zeros", i,
                      flags[k]);
            memset(b, 0x5A, cap);
            cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
        }
        ta_finish(&ta, p);
    }
    /* The same over malloc's own reuse. */
    p = fresh_learn_pool(&ta, BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_LARGE_RETENTION, 0);
    for (i = 0; i < 3; i++) {
        b = (unsigned char *)rent_ok(p, 100 * KiB, &cap);
        cr_expect(all_bytes(b, cap, 0), "round %zu: the last renter's bytes", i);
        memset(b, 0x5A, cap);
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    }
    ta_finish(&ta, p);
}

/* Every block a zeroing pool holds reads as zeros: rent every class until
 * the pool has to allocate, checking each block. *seen: whether `b` was
 * among them (the writer's block came back and was rented again). */
static void expect_pool_holds_zeros(bw_pool *p, const void *b, int *seen, const char *what)
{
    size_t c, cap;
    for (c = 16; c <= MiB; c *= 2) {
        void *got[64];
        size_t n = 0, allocs = stats_of(p).backing_allocs, i;
        while (n < 64) {
            got[n] = rent_ok(p, c, &cap);
            if (got[n] == b) *seen = 1;
            cr_expect(all_bytes(got[n], cap, 0), "%s: a kept block of %zu is not zeros", what,
                      cap);
            n++;
            if (stats_of(p).backing_allocs != allocs) break;
        }
        for (i = 0; i < n; i++) cr_expect_eq(bw_pool_return(p, got[i], cap), BW_OK);
    }
}

/* The writer's share of the zeroing: a block goes back zeroed only as far
 * as its writer let the caller write, so every byte that may have been
 * written must be within that. Each mode on a zeroing pool writes past the
 * jump floor (a contiguous writer then holds a block 16 x its bytes, of
 * which it zeroes a window), then writes into spans it never commits
 * (bw_get_span's whole room, bw_try_span's, bw_reserve's), truncates back
 * over written bytes, patches and consumes; after the release, every block
 * the pool keeps, the writer's own included, reads as zeros. */
Test(defaults, zero_on_return_writer_blocks_read_as_zeros_after_every_write)
{
    static unsigned char big[20 * KiB];
    int mode;
    memset(big, 'A', sizeof big);
    for (mode = M_CONTIG; mode < M_FIXED; mode++) {
        harness h;
        unsigned char *sp;
        const unsigned char *b;
        size_t avail = 0;
        int seen = 0;
        h_open_ex(&h, mode, mode == M_SINK ? 64 * KiB : default_param(mode), 0,
                  BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE);
        cr_assert_eq(bw_write(&h.w, big, sizeof big), BW_OK, "%s", mode_name[mode]);
        b = bw_data(&h.w);
        /* A span filled to its end, 10 bytes of it committed. */
        sp = (unsigned char *)bw_get_span(&h.w, 100, &avail);
        cr_assert_not_null(sp);
        memset(sp, 0xEE, avail);
        cr_assert_eq(bw_advance(&h.w, 10), BW_OK);
        /* Truncated back over written bytes, then a try-span never
         * committed. */
        cr_assert_eq(bw_truncate(&h.w, bw_tell(&h.w) - 5000), BW_OK);
        sp = (unsigned char *)bw_try_span(&h.w, 9);
        cr_assert_not_null(sp);
        memset(sp, 0xEE, 9);
        cr_assert_eq(bw_patch(&h.w, bw_tell(&h.w) - 20, "xx", 2), BW_OK);
        cr_assert_eq(bw_consume(&h.w, 100), BW_OK);
        /* Room reserved, then a span over all of it, none committed. */
        cr_assert_eq(bw_reserve(&h.w, 30 * KiB), BW_OK);
        sp = (unsigned char *)bw_get_span(&h.w, 1, &avail);
        cr_assert_not_null(sp);
        memset(sp, 0xEE, avail);
        bw_release(&h.w);
        expect_pool_holds_zeros(h.p, b, &seen, mode_name[mode]);
        if (mode != M_CHAIN) /* (its first block holds the pieces' records) */
            cr_expect(seen, "%s: the writer's block was not rented again", mode_name[mode]);
        h_close(&h);
    }
}


/* What broke (0.4.0): a zeroing pool zeroed a block's whole
 * capacity when a writer gave it back, so a 20 KiB job that started in a
 * kept 64 MiB block (the learned starting size of a stream of 63 MiB jobs)
 * cost a 64 MiB memset at every release. The block's pages are dropped
 * (they read as zeros again, as the pool keeps them) before the 20 KiB
 * job: after it, only the start of the block has been touched. */
Test(defaults, zero_on_return_small_job_in_large_block_zeroes_what_it_wrote)
{
    static unsigned char chunk[KiB];
    const size_t job = 63 * MiB, big = 64 * MiB;
    bw_allocator hook = { map_alloc, NULL, map_free, NULL };
    bw_pool_options o;
    bw_pool *p;
    bw_writer w = BW_WRITER_INIT;
    void *last = NULL, *block;
    size_t i, cap;
    hook.ctx = &last;
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_ZERO_ON_RETURN | BW_POOL_LEARN_SIZE | BW_POOL_NO_LEARNED_GROWTH;
    o.allocator = &hook;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    /* Two 63 MiB jobs: the pool learns to start writers at 64 MiB. */
    for (i = 0; i < 2; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_reserve(&w, job), BW_OK);
        cr_assert_eq(bw_advance(&w, job), BW_OK);
        bw_release(&w);
    }
    cr_assert_eq(stats_of(p).large_retained_bytes, big);
    block = last;
    cr_assert_eq(madvise(block, big, MADV_DONTNEED), 0);
    cr_assert_eq(resident_pages(block, big), 0);
    /* The 20 KiB job, in that block. */
    memset(chunk, 'z', sizeof chunk);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (i = 0; i < 20; i++) cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
    cr_assert_eq(bw_data(&w), block, "the job is not in the kept block");
    bw_release(&w);
    /* Written (and zeroed): at most the first 64 KiB; a huge page may
     * bring in 2 MiB, nothing past 4 MiB. */
    cr_expect_eq(resident_pages((unsigned char *)block + 4 * MiB, big - 4 * MiB), 0,
                 "the release touched the block past what the job wrote");
    /* And it reads as zeros, as the pool promises. */
    cr_assert_eq(rent_ok(p, big, &cap), block);
    cr_expect(all_bytes(block, cap, 0));
    cr_expect_eq(bw_pool_return(p, block, cap), BW_OK);
    bw_pool_destroy(p);
}
