/* test_jump.c - the learned jump from the jump floor (64 KiB by default,
 * below the threshold), and segmented writers that stay allocation-free in
 * steady state at large sizes (their blocks past the threshold are kept as
 * large blocks, within the pool's bounds). */
#include "helpers.h"

#include <stdio.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static unsigned char chunk[8192];

static void fill_chunk(void)
{
    size_t i;
    for (i = 0; i < sizeof chunk; i++) chunk[i] = pat(i, 3);
}

static bw_pool_stats stats_of(bw_pool *p)
{
    bw_pool_stats s;
    bw_pool_get_stats(p, &s);
    return s;
}

/* Every default but the allocator (counted) and decay (never, so nothing
 * goes back while a test counts). */
static bw_pool *jump_pool(test_alloc *ta, unsigned flags, size_t max_learned, size_t floor)
{
    bw_pool_options o;
    bw_pool *p = NULL;
    memset(&o, 0, sizeof o);
    o.allocator = &ta->hook;
    o.decay_ms = BW_DECAY_NEVER;
    o.flags = flags;
    o.max_learned_size = max_learned;
    o.jump_floor = floor;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    return p;
}

/* A contiguous writer on p writes `total` bytes in 8 KiB chunks and is
 * released. caps[] gets every capacity it had (at most 32), *ncaps their
 * number; returns the largest. */
static size_t job(bw_pool *p, size_t total, size_t *caps, size_t *ncaps)
{
    bw_writer w;
    size_t last = 0, n = 0;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    while (bw_len(&w) < total) {
        size_t k = total - bw_len(&w) < sizeof chunk ? total - bw_len(&w) : sizeof chunk;
        cr_assert_eq(bw_write(&w, chunk, k), BW_OK);
        if (bw_capacity(&w) != last) {
            last = bw_capacity(&w);
            if (n < 32) caps[n++] = last;
        }
    }
    cr_assert_eq(bw_len(&w), total);
    bw_release(&w);
    *ncaps = n;
    return last;
}

/* ------------------------------------------------------------------ */
/* The learned jump                                                     */
/* ------------------------------------------------------------------ */

Test(jump, similar_jobs_reach_their_size_in_one_jump_after_two)
{
    static const size_t sizes[] = { 256 * KiB, MiB, 4 * MiB };
    /* Blocks a job of that size climbed through before: 8 KiB (the first
     * write) doubling up to the size. */
    static const size_t climb[] = { 6, 8, 10 };
    size_t i, k, caps[32], n;
    fill_chunk();
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        test_alloc ta;
        bw_pool *p;
        uint64_t rents;
        ta_init(&ta, 1);
        p = jump_pool(&ta, 0, 0, 0);
        /* Nothing learned, then one sample: both climb. */
        for (k = 0; k < 2; k++) {
            cr_expect_eq(job(p, sizes[i], caps, &n), sizes[i]);
            cr_expect_eq(n, climb[i], "%zu KiB job %zu: %zu capacities", sizes[i] / KiB, k, n);
        }
        cr_expect_eq(stats_of(p).learned_large_size, sizes[i]);
        /* From the third on: up to the floor as before, then one jump. */
        for (k = 0; k < 3; k++) {
            rents = stats_of(p).rents;
            cr_expect_eq(job(p, sizes[i], caps, &n), sizes[i]);
            cr_expect_eq(n, 5, "%zu KiB job %zu: %zu capacities", sizes[i] / KiB, k + 2, n);
            if (n == 5) {
                cr_expect_eq(caps[0], 8 * KiB);
                cr_expect_eq(caps[3], 64 * KiB);
                cr_expect_eq(caps[4], sizes[i], "jumped to %zu", caps[4]);
            }
            cr_expect_eq(stats_of(p).rents - rents, 5, "one rent per capacity");
        }
        ta_finish(&ta, p);
    }
}

Test(jump, writers_that_stay_below_the_floor_never_get_a_large_block)
{
    static const size_t small[] = { 1, 100, 512, 4000, 8 * KiB, 40 * KiB, 64 * KiB };
    test_alloc ta;
    bw_pool *p;
    size_t i, k, caps[32], n;
    ta_init(&ta, 1);
    p = jump_pool(&ta, 0, 0, 0);
    fill_chunk();
    for (k = 0; k < 3; k++) job(p, 4 * MiB, caps, &n);
    cr_assert_eq(stats_of(p).learned_large_size, 4 * MiB);
    for (k = 0; k < 20; k++) {
        for (i = 0; i < sizeof small / sizeof small[0]; i++) {
            size_t top = job(p, small[i], caps, &n);
            cr_expect_leq(top, 64 * KiB, "a %zu-byte writer got %zu", small[i], top);
        }
    }
    /* They teach nothing either: the jump still goes to 4 MiB. */
    cr_expect_eq(stats_of(p).learned_large_size, 4 * MiB);
    cr_expect_eq(job(p, 100 * KiB, caps, &n), 4 * MiB);
    ta_finish(&ta, p);
}

Test(jump, one_outlier_job_does_not_make_later_jobs_jump_to_its_size)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    void *span;
    size_t k, caps[32], n;
    int round;
    ta_init(&ta, 1);
    /* max_learned_size above the outlier, so the cap cannot hide it. */
    p = jump_pool(&ta, 0, 1024 * MiB, 0);
    fill_chunk();
    for (k = 0; k < 3; k++) job(p, MiB, caps, &n);
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
            /* One: the next 1 MiB job still jumps to 1 MiB. */
            cr_expect_eq(stats_of(p).learned_large_size, MiB);
            cr_expect_eq(job(p, MiB, caps, &n), MiB);
            cr_expect_eq(n, 5);
            if (n == 5) cr_expect_eq(caps[4], MiB);
        }
    }
    /* Two of the last 16 are no outlier: the jump follows them. */
    cr_expect_eq(stats_of(p).learned_large_size, 256 * MiB);
    ta_finish(&ta, p);
}

Test(jump, no_learned_growth_climbs_and_records_nothing)
{
    test_alloc ta;
    bw_pool *p;
    size_t k, caps[32], n;
    ta_init(&ta, 1);
    p = jump_pool(&ta, BW_POOL_NO_LEARNED_GROWTH, 0, 0);
    fill_chunk();
    for (k = 0; k < 4; k++) {
        cr_expect_eq(job(p, MiB, caps, &n), MiB);
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
    fill_chunk();
    /* A floor of 256 KiB: 200 KiB jobs teach nothing, 1 MiB jobs jump from
     * 256 KiB. */
    ta_init(&ta, 1);
    p = jump_pool(&ta, 0, 0, 256 * KiB);
    for (k = 0; k < 3; k++) job(p, 200 * KiB, caps, &n);
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    for (k = 0; k < 2; k++) job(p, MiB, caps, &n);
    cr_expect_eq(job(p, MiB, caps, &n), MiB);
    cr_expect_eq(n, 7, "8 KiB .. 256 KiB, then 1 MiB (%zu)", n);
    if (n == 7) cr_expect_eq(caps[5], 256 * KiB);
    ta_finish(&ta, p);
    /* A 32 KiB threshold: the default floor is the threshold. */
    ta_init(&ta, 1);
    memset(&o, 0, sizeof o);
    o.allocator = &ta.hook;
    o.decay_ms = BW_DECAY_NEVER;
    o.max_pooled_size = 32 * KiB;
    p = NULL;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    for (k = 0; k < 2; k++) job(p, 600 * KiB, caps, &n);
    cr_expect_eq(job(p, 600 * KiB, caps, &n), MiB);
    cr_expect_eq(n, 4, "8, 16, 32 KiB, then 1 MiB (%zu)", n);
    ta_finish(&ta, p);
}
