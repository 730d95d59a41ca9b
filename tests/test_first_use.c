/* SPDX-License-Identifier: MIT */
/* test_first_use.c - the first big job of a fresh pool (nothing learned, nothing
 * retained): past the jump floor a contiguous writer grows 16 times its
 * capacity per move up to the threshold, so it climbs through a few blocks
 * (each copied and faulted in once) instead of every power of two, until the
 * pool has learned a jump; then the learned jump and plain doubling again. */
#include "harness.h"

/* A BW_WRITER_INIT-like writer on p writes `total` bytes in 8 KiB chunks,
 * checks them and is released. caps[] gets every capacity it had (at most
 * 32), *ncaps their number. */
static void job(bw_pool *p, size_t total, size_t *caps, size_t *ncaps)
{
    fill_chunk(5);
    write_job(p, total, caps, ncaps);
}

static void expect_caps(const size_t *caps, size_t n, const size_t *want, size_t nwant,
                        const char *what)
{
    size_t i;
    cr_expect_eq(n, nwant, "%s: %zu capacities, expected %zu", what, n, nwant);
    for (i = 0; i < n && i < nwant; i++)
        cr_expect_eq(caps[i], want[i], "%s: capacity %zu is %zu, expected %zu", what, i, caps[i],
                     want[i]);
}

Test(first_use, a_10_mib_first_job_rents_six_blocks_and_copies_280_kib)
{
    /* 0.2 climbed 8, 16, 32 .. 1024 KiB, 2 .. 16 MiB: 12 blocks, about
     * 2 MiB copied and faulted in 4 KiB pages below the threshold. The
     * fresh 256 KiB block is the writer's in windows of the growth rule's
     * size (32 .. 256 KiB, widened in place: no rent, no copy). */
    static const size_t want[] = { 8 * KiB,   16 * KiB,  32 * KiB, 64 * KiB, 128 * KiB,
                                   256 * KiB, 4 * MiB,   8 * MiB,  16 * MiB };
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    size_t caps[32], n;
    job(p, 10 * MiB, caps, &n);
    expect_caps(caps, n, want, 9, "fresh pool");
    /* The moves below the threshold copy what they held (8 + 16 + 256
     * KiB); above it the blocks are resized by the allocator. */
    cr_expect_eq(stats_of(p).rents, 6);
    cr_expect_eq(atomic_load(&ta.allocs) + atomic_load(&ta.reallocs), 6);
    cr_expect_eq(atomic_load(&ta.reallocs), 2, "8 and 16 MiB: resized, not copied");
    ta_finish(&ta, p);
}

Test(first_use, the_fast_climb_stops_once_the_pool_has_learned_a_jump)
{
    /* Fresh blocks the climb made larger come in windows (32 KiB .. 256
     * KiB of the 256 KiB block, 128 KiB .. 1 MiB of the 1 MiB one); an
     * idle one (the first job's 256 KiB) is the writer's whole. */
    static const size_t fresh[] = { 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB,
                                    4 * MiB };
    static const size_t warm[] = { 8 * KiB, 16 * KiB, 256 * KiB, 4 * MiB };
    static const size_t learned[] = { 64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, MiB,
                                      2 * MiB,  4 * MiB,   8 * MiB,   16 * MiB };
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    size_t caps[32], n;
    /* One recorded job is not a learned jump: the second climbs fast too. */
    job(p, MiB, caps, &n);
    expect_caps(caps, n, fresh, 7, "first 1 MiB job");
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    job(p, MiB, caps, &n);
    expect_caps(caps, n, warm, 4, "second 1 MiB job");
    cr_expect_eq(stats_of(p).learned_large_size, MiB);
    /* Learned 1 MiB: a 10 MiB job goes there by its sixteenth (64 KiB, the
     * most 16 x its first 8 KiB allows), then doubles. */
    job(p, 10 * MiB, caps, &n);
    expect_caps(caps, n, learned, 9, "10 MiB job after two of 1 MiB");
    ta_finish(&ta, p);
}

Test(first_use, writers_at_most_at_the_floor_never_climb_fast)
{
    static const size_t want[] = { 8 * KiB, 16 * KiB };
    static const size_t past[] = { 8 * KiB, 16 * KiB, 32 * KiB }; /* of a 256 KiB block */
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    size_t caps[32], n, i;
    for (i = 0; i < 20; i++) {
        job(p, 16 * KiB, caps, &n);
        expect_caps(caps, n, want, 2, "16 KiB job");
    }
    cr_expect_eq(stats_of(p).learned_large_size, 0, "they teach nothing");
    /* One byte past the floor on a fresh pool: 16 times the floor. */
    job(p, 16 * KiB + 1, caps, &n);
    expect_caps(caps, n, past, 3, "16 KiB + 1 job");
    ta_finish(&ta, p);
}

Test(first_use, a_given_first_block_is_kept_and_grows_16_times_when_outgrown)
{
    static unsigned char big[100 * 1024];
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_writer w;
    cr_assert_eq(bw_init(&w, p, 100 * KiB), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128 * KiB);
    cr_assert_eq(bw_write(&w, big, sizeof big), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128 * KiB);
    cr_assert_eq(bw_write(&w, big, sizeof big), BW_OK);
    cr_expect_eq(bw_capacity(&w), 2 * MiB);
    bw_release(&w);
    /* A first write past the floor gets the growth rule's block, not 16
     * times it. */
    cr_expect_eq(first_write_block(p, big, sizeof big), 128 * KiB);
    ta_finish(&ta, p);
}

Test(first_use, the_fast_climb_is_bounded_by_max_learned_size_and_the_option)
{
    static const size_t bounded[] = { 8 * KiB,   16 * KiB,  32 * KiB, 64 * KiB, 128 * KiB,
                                      256 * KiB, 512 * KiB, MiB,      2 * MiB };
    static const size_t doubling[] = { 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB,
                                       256 * KiB, 512 * KiB, MiB, 2 * MiB };
    bw_pool_options o;
    test_alloc ta;
    bw_pool *p = NULL;
    size_t caps[32], n;
    o = fresh_opts(&ta);
    o.max_learned_size = 256 * KiB;
    p = mkpool(&o);
    job(p, 2 * MiB, caps, &n);
    expect_caps(caps, n, bounded, 9, "max_learned_size 256 KiB");
    ta_finish(&ta, p);

    ta_init(&ta, 1);
    o.max_learned_size = 0;
    o.flags = BW_POOL_NO_LEARNED_GROWTH;
    p = NULL;
    p = mkpool(&o);
    job(p, 2 * MiB, caps, &n);
    expect_caps(caps, n, doubling, 9, "BW_POOL_NO_LEARNED_GROWTH");
    ta_finish(&ta, p);
}
