/* SPDX-License-Identifier: MIT */
/* test_growth.c - the growth rule, block moves, reuse across runs, spans,
 * aliasing, detach and release. */
#include "harness.h"

/* Append total bytes in chunk-sized pieces of a known pattern. */
static void grow_fill(bw_writer *w, size_t total, size_t chunk, unsigned seed, size_t *moves)
{
    unsigned char buf[8192];
    size_t done = 0;
    const unsigned char *last = bw_data(w);
    cr_assert_leq(chunk, sizeof buf);
    while (done < total) {
        size_t n = total - done < chunk ? total - done : chunk, i;
        for (i = 0; i < n; i++) buf[i] = pat(done + i, seed);
        cr_assert_eq(bw_write(w, buf, n), BW_OK);
        if (bw_data(w) != last) {
            if (moves) (*moves)++;
            last = bw_data(w);
        }
        done += n;
    }
}

static void check_bytes(const bw_writer *w, size_t total, unsigned seed)
{
    size_t i, bad = 0;
    cr_assert_eq(bw_len(w), total);
    for (i = 0; i < total; i++) bad += bw_data(w)[i] != pat(i, seed);
    cr_assert_eq(bad, 0, "%zu bytes differ", bad);
}

/* A contiguous writer on p takes 10 MiB in 8 KiB pieces of pattern seed:
 * every byte arrives, and it ends at 16 MiB after at most 20 moves (8 KiB,
 * then doubling: log2(16 MiB / 16 B) = 20). The writer is left open. */
static void ten_mib(bw_pool *p, bw_writer *w, unsigned seed)
{
    size_t moves = 0;
    cr_assert_eq(bw_init(w, p, 0), BW_OK);
    grow_fill(w, 10u << 20, 8192, seed, &moves);
    check_bytes(w, 10u << 20, seed);
    cr_expect_eq(bw_capacity(w), 16u << 20);
    cr_expect_leq(moves, 20, "moved %zu times", moves);
}

Test(growth, ten_mib_in_8k_chunks)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_pool_stats st1, st2;
    bw_writer w;
    ten_mib(p, &w, 1);
    bw_release(&w);
    bw_pool_get_stats(p, &st1);

    /* Second run over the same pool: every block at or below the threshold
     * comes from retained blocks. */
    grow_fill(&w, 10u << 20, 8192, 2, NULL);
    check_bytes(&w, 10u << 20, 2);
    bw_pool_get_stats(p, &st2);
    /* Classes 8 KiB .. 1 MiB (8 rents) all hit; 2..16 MiB go to the
     * allocator (the first above-threshold block, then reallocs). */
    cr_expect_eq(st2.hits - st1.hits, 8, "hits %llu", (unsigned long long)(st2.hits - st1.hits));
    cr_expect_eq(st2.rents - st1.rents, 8 + 4);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(growth, ten_mib_without_realloc_hook)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    ta_init(&ta, 0);
    p = ta_pool(&ta, 0, 0);
    ten_mib(p, &w, 3);
    cr_expect_eq(atomic_load(&ta.reallocs), 0);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(growth, rule_class_then_double_then_pow2)
{
    /* With one byte held, each reserve and the capacity it leaves. */
    static const struct {
        size_t reserve, cap;
        const char *why;
    } steps[] = {
        { 15, 16, "a request that fits never moves" },
        { 16, 32, "never below twice the old capacity" },
        { 100, 128, "class of len + n" },
        { 4095, 4096, "len + n at the threshold: its class" },
        { 4096, 4096 * 2, "above the threshold: next power of two" },
        { 8192, 16384, "the next power of two" },
        { 20000, 32768, "the next power of two" },
    };
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 4096, 0);
    bw_writer w;
    size_t i;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_null(bw_data(&w));
    cr_expect_eq(atomic_load(&ta.allocs), 0, "an empty writer allocates nothing");
    bw_put_u8(&w, 1);
    cr_expect_eq(bw_capacity(&w), 16);
    for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        cr_expect_eq(bw_reserve(&w, steps[i].reserve), BW_OK, "reserve %zu", steps[i].reserve);
        cr_expect_eq(bw_capacity(&w), steps[i].cap, "reserve %zu: %s", steps[i].reserve,
                     steps[i].why);
    }
    cr_expect_eq(bw_len(&w), 1);
    cr_expect_eq(bw_data(&w)[0], 1);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(growth, varint_at_block_end_takes_exactly_its_bytes)
{
    /* The fast path wants room for 10 bytes; the cold path writes exactly
     * the varint's bytes, so a block with just enough room takes it (0.1
     * grew here: it asked the cold path for 10). */
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    int i;
    p = fresh_pool(&ta, 0, 0); /* first block: the class of the first write */
    bw_init(&w, p, 0);
    for (i = 0; i < 6; i++) bw_put_u8(&w, 0);
    cr_assert_eq(bw_capacity(&w), 16);
    cr_expect_eq(bw_put_uvarint(&w, 1), BW_OK); /* 6 + 10 fits in 16 */
    cr_expect_eq(bw_capacity(&w), 16);
    for (i = 0; i < 7; i++) bw_put_u8(&w, 0);
    cr_expect_eq(bw_put_uvarint(&w, 1), BW_OK); /* 14 + 1 fits exactly */
    cr_expect_eq(bw_capacity(&w), 16);
    cr_expect_eq(bw_put_uvarint(&w, 300), BW_OK); /* 15 + 2 does not */
    cr_expect_eq(bw_capacity(&w), 32);
    cr_expect_eq(bw_len(&w), 17);
    cr_expect_eq(bw_data(&w)[15], 0xac);
    cr_expect_eq(bw_data(&w)[16], 0x02);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(growth, init_capacity_is_rounded)
{
    /* An initial capacity and the capacity it is rounded to. */
    static const size_t rounded[][2] = { { 1, 16 }, { 1000, 1024 }, { (1u << 20) + 1, 2u << 20 } };
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer w;
    size_t i;
    for (i = 0; i < sizeof rounded / sizeof rounded[0]; i++) {
        cr_assert_eq(bw_init(&w, p, rounded[i][0]), BW_OK);
        cr_expect_eq(bw_capacity(&w), rounded[i][1], "initial capacity %zu", rounded[i][0]);
        bw_release(&w);
    }
    cr_expect_eq(bw_init(&w, p, SIZE_MAX), BW_EOVERFLOW);
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "a failed init is recorded");
    cr_expect_eq(bw_init(&w, p, (size_t)PTRDIFF_MAX), BW_EOVERFLOW);
    ta_finish(&ta, p);
}

Test(growth, span_and_advance)
{
    bw_writer w = BW_WRITER_INIT;
    size_t avail = 0;
    unsigned char *s;
    s = (unsigned char *)bw_get_span(&w, 0, &avail);
    cr_assert_not_null(s);
    cr_expect_geq(avail, 1);
    cr_expect_eq(avail, bw_free_capacity(&w));
    cr_expect_eq(s, bw_data(&w) + bw_len(&w));
    memcpy(s, "abc", 3);
    cr_expect_eq(bw_advance(&w, 3), BW_OK);
    s = (unsigned char *)bw_get_span(&w, 1000, &avail);
    cr_assert_not_null(s);
    cr_expect_geq(avail, 1000);
    cr_expect_eq(avail, bw_capacity(&w) - 3);
    memset(s, 'x', 1000);
    cr_expect_eq(bw_advance(&w, 1000), BW_OK);
    cr_expect_eq(bw_len(&w), 1003);
    cr_expect(memcmp(bw_data(&w), "abcxxx", 6) == 0);
    cr_expect_eq(bw_advance(&w, 0), BW_OK);
    cr_expect_not_null(bw_get_span(&w, 5, NULL)); /* avail may be NULL */
    bw_release(&w);
}

Test(growth, aliasing_write_while_growing)
{
    bw_writer w = BW_WRITER_INIT;
    size_t i;
    for (i = 0; i < 512; i++) bw_put_u8(&w, (uint8_t)i);
    cr_assert_eq(bw_capacity(&w), 512, "the default first block");
    /* The source is the writer's own block, which must move. */
    cr_assert_eq(bw_write(&w, bw_data(&w) + 4, 12), BW_OK);
    cr_expect_eq(bw_len(&w), 524);
    for (i = 0; i < 12; i++) cr_expect_eq(bw_data(&w)[512 + i], 4 + i);
    /* Doubling itself, many times. */
    for (i = 0; i < 14; i++) cr_assert_eq(bw_write(&w, bw_data(&w), bw_len(&w)), BW_OK);
    cr_expect_eq(bw_len(&w), (size_t)524 << 14);
    cr_expect_eq(bw_data(&w)[(524u << 13) + 20], bw_data(&w)[20]);
    bw_release(&w);
}

Test(growth, aliasing_above_threshold)
{
    wpool f;
    wp_open(&f, 1024, 0);
    cr_assert_eq(bw_init(&f.w, f.p, 0), BW_OK);
    put_pat_bytes(&f.w, 3000, 9);
    cr_assert_eq(bw_capacity(&f.w), 4096);
    cr_assert_eq(bw_write(&f.w, bw_data(&f.w) + 100, 2000), BW_OK);
    cr_expect_eq(pat_mismatches(bw_data(&f.w) + 3000, 2000, 100, 9), 0);
    wp_close(&f);
}

Test(growth, detach_and_return)
{
    wpool f;
    size_t len = 1, cap = 1;
    unsigned char *b;
    wp_open(&f, 0, 0);
    cr_assert_eq(bw_init(&f.w, f.p, 0), BW_OK);
    cr_expect_null(bw_detach(&f.w, &len, &cap), "never allocated");
    cr_expect_eq(len, 0);
    cr_expect_eq(cap, 0);
    bw_puts(&f.w, "hello");
    b = (unsigned char *)bw_detach(&f.w, &len, &cap);
    cr_assert_not_null(b);
    cr_expect_eq(len, 5);
    cr_expect_eq(cap, 16);
    cr_expect(memcmp(b, "hello", 5) == 0);
    cr_expect_eq(bw_len(&f.w), 0);
    cr_expect_eq(bw_capacity(&f.w), 0);
    cr_expect_eq(bw_writer_pool(&f.w), f.p, "detach keeps the pool");
    cr_expect_eq(bw_pool_return(bw_writer_pool(&f.w), b, cap), BW_OK);
    /* Reusable without init; NULL out-pointers are fine. */
    bw_puts(&f.w, "again");
    b = (unsigned char *)bw_detach(&f.w, NULL, NULL);
    cr_expect_eq(bw_pool_return(f.p, b, 16), BW_OK);
    wp_close(&f);
}

/* bw_detach out of a caller's first buffer copies the held bytes (not
 * the buffer, nor what was consumed) into the pool's block for them: the
 * growth rule's size, a class up to the threshold (4096 here), the next
 * power of two above it. */
Test(growth, detach_from_a_callers_buffer_copies_into_the_growth_rules_block)
{
    static const struct {
        size_t written, consumed, cap;
    } cases[] = {
        { 70, 10, 64 },       /* 60 held: their class, not 70's (128) */
        { 3000, 0, 4096 },    /* the class at the threshold */
        { 5000, 0, 8192 },    /* above it: the next power of two */
    };
    static unsigned char buf[6000];
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 4096, 0);
    bw_writer w;
    size_t i, k, len, cap, bad;
    unsigned char *b;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
        for (i = 0; i < cases[k].written; i++) cr_assert_eq(bw_put_u8(&w, pat(i, 5)), BW_OK);
        cr_assert_eq(bw_consume(&w, cases[k].consumed), BW_OK);
        b = (unsigned char *)bw_detach(&w, &len, &cap);
        cr_assert_not_null(b);
        cr_expect(b != buf, "copied out of the caller's buffer");
        cr_expect_eq(len, cases[k].written - cases[k].consumed);
        cr_expect_eq(cap, cases[k].cap, "%zu held", len);
        for (i = bad = 0; i < len; i++) bad += b[i] != pat(cases[k].consumed + i, 5);
        cr_expect_eq(bad, 0, "%zu bytes differ", bad);
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
        bw_release(&w);
    }
    ta_finish(&ta, p);
}

Test(growth, release_and_clear_keep_the_pool)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer w;
    const unsigned char *blk;
    cr_assert_eq(bw_init(&w, p, 100), BW_OK);
    bw_puts(&w, "abc");
    blk = bw_data(&w);
    bw_clear(&w);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_capacity(&w), 128);
    cr_expect_eq(bw_data(&w), blk, "clear keeps the block");
    bw_release(&w);
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_null(bw_data(&w));
    cr_expect_eq(bw_writer_pool(&w), p);
    bw_puts(&w, "xyz");
    cr_expect(memcmp(bw_data(&w), "xyz", 3) == 0);
    bw_release(&w);
    bw_release(&w); /* twice is fine */
    ta_finish(&ta, p);
}

Test(growth, static_initializer_uses_shared_pool)
{
    static bw_writer w = BW_WRITER_INIT;
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_null(bw_data(&w));
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(bw_writer_pool(&w), bw_pool_shared());
    cr_expect_eq(bw_init(&w, NULL, 0), BW_OK);
    cr_expect_eq(bw_writer_pool(&w), bw_pool_shared());
    bw_release(&w);
}

/* What broke: on a pool with BW_POOL_BYPASS (rents of exactly the size
 * asked for), BW_POOL_ZERO_ON_RETURN and BW_POOL_LEARN_SIZE, a writer's
 * first block is the learned size exactly (4205 bytes), and its zeroing
 * window (4096, the rule's size) widened in place to the block's end:
 * capacity 4096 -> 4205, not the growth rule's doubling (the fuzzer found
 * it). Every growth must give at least twice the old capacity, and keep
 * every byte. */
Test(growth, zeroing_window_on_an_exact_size_block_still_doubles)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0,
                            BW_POOL_BYPASS | BW_POOL_ZERO_ON_RETURN | BW_POOL_LEARN_SIZE);
    bw_writer w;
    size_t i, prev, grew = 0, bad = 0;
    unsigned char b[3 * 4205];
    for (i = 0; i < sizeof b; i++) b[i] = pat(i, 17);
    for (i = 0; i < 2; i++) { /* teach the learned size: 4205 */
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, b, 4205), BW_OK);
        bw_release(&w);
    }
    cr_assert_eq(stats_of(p).learned_size, 4205);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    prev = bw_capacity(&w);
    cr_assert_geq(prev, 4096);
    for (i = 100; i < sizeof b; i += 100) {
        size_t n = sizeof b - i < 100 ? sizeof b - i : 100;
        cr_assert_eq(bw_write(&w, b + i, n), BW_OK);
        if (bw_capacity(&w) != prev) {
            cr_expect_geq(bw_capacity(&w), 2 * prev, "capacity %zu -> %zu", prev,
                          bw_capacity(&w));
            grew++;
        }
        prev = bw_capacity(&w);
    }
    cr_expect_geq(grew, 1);
    cr_assert_eq(bw_len(&w), sizeof b);
    for (i = 0; i < sizeof b; i++) bad += bw_data(&w)[i] != b[i];
    cr_expect_eq(bad, 0, "%zu bytes differ", bad);
    bw_release(&w);
    ta_finish(&ta, p);
}

/* A zeroing pool's window (BW_POOL_ZERO_ON_RETURN): a writer in a block
 * larger than it needs (the learned starting size, 256 KiB for jobs of
 * 200 KiB) gets as its capacity the growth rule's size for what it asked
 * for, at least 4 KiB, at least doubling as it widens, and the whole block
 * once half of it no longer holds the next window; a move's window is
 * the rule's size for the move. */
Test(growth, zeroing_window_capacities_follow_the_growth_rule)
{
    static const size_t caps[] = { 4096, 8192, 16384, 32768, 65536, 131072,
                                   262144, 524288 };
    static unsigned char b[KiB];
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, BW_POOL_ZERO_ON_RETURN | BW_POOL_LEARN_SIZE);
    bw_writer w;
    size_t i, k = 0, prev = 0;
    memset(b, 'w', sizeof b);
    for (i = 0; i < 2; i++) { /* teach the learned size: 200 KiB */
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_reserve(&w, 200 * KiB), BW_OK);
        cr_assert_eq(bw_advance(&w, 200 * KiB), BW_OK);
        bw_release(&w);
    }
    cr_assert_eq(stats_of(p).learned_size, 256 * KiB, "the growth rule's size for it");
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    for (i = 0; i < 300; i++) {
        if (bw_capacity(&w) != prev) {
            prev = bw_capacity(&w);
            cr_assert_lt(k, sizeof caps / sizeof caps[0], "capacity %zu", prev);
            cr_expect_eq(prev, caps[k], "window %zu", k);
            k++;
        }
        cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
    }
    cr_expect_eq(k, sizeof caps / sizeof caps[0]);
    bw_release(&w);
    /* An initial capacity, and a reserve that jumps past doubling. */
    cr_assert_eq(bw_init(&w, p, 10000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "the rule's size for 10000");
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_assert_eq(bw_reserve(&w, 100000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 131072, "the rule's size for 100100");
    bw_release(&w);
    ta_finish(&ta, p);
}


/* Reservations (the pool's own allocator, on Linux): a first job's move
 * into fresh memory above the threshold takes 16 x its block of address
 * space and writes only a window of it, widened in place, so growing from
 * 2 MiB to 16 MiB neither copies nor remaps; the block goes back cut to
 * the window. Elsewhere (no mapping) the same job grows as before: the
 * bytes and the pool's counts are checked everywhere. */
static bw_pool *libc_pool(unsigned flags)
{
    bw_pool_options o;
    memset(&o, 0, sizeof o); /* the libc allocator */
    o.flags = flags;
    return mkpool(&o);
}

Test(growth, a_first_large_job_widens_its_reservation_in_place)
{
    bw_pool *p = libc_pool(0);
    bw_writer w;
    bw_pool_stats s0, s1;
    const unsigned char *large = NULL;
    size_t moves = 0;
    unsigned char buf[8192];
    size_t done, i;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (done = 0; done < (10u << 20); done += sizeof buf) {
        for (i = 0; i < sizeof buf; i++) buf[i] = pat(done + i, 21);
        cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
        if (large == NULL && bw_capacity(&w) > (1u << 20)) {
            if (maps_large())
                cr_expect_eq(bw_capacity(&w), 2u << 20, "128 KiB, then 2 MiB");
            else
                cr_expect_eq(bw_capacity(&w), 4u << 20, "256 KiB, then 4 MiB");
            large = bw_data(&w);
            bw_pool_get_stats(p, &s0);
        } else if (large != NULL && bw_data(&w) != large) {
            moves++;
            large = bw_data(&w);
        }
    }
    check_bytes(&w, 10u << 20, 21);
    cr_expect_eq(bw_capacity(&w), 16u << 20, "the growth rule's capacity");
    bw_pool_get_stats(p, &s1);
#ifdef __linux__
    cr_expect_eq(moves, 0, "2 MiB to 16 MiB moved %zu times", moves);
    cr_expect_eq(s1.backing_allocs, s0.backing_allocs, "no fresh block past the first");
#endif
    bw_release(&w);
    bw_pool_get_stats(p, &s1);
    cr_expect_eq(s1.outstanding_bytes, 0);
    cr_expect_eq(s1.large_retained_bytes, 16u << 20, "kept as the window, not the reservation");
    /* The next job takes the kept block whole. */
    grow_fill(&w, 10u << 20, 8192, 22, NULL);
    check_bytes(&w, 10u << 20, 22);
    bw_release(&w);
    bw_pool_get_stats(p, &s1);
    cr_expect_eq(s1.outstanding_bytes, 0);
    cr_expect_leq(s1.large_retained_bytes, 32u << 20);
    bw_pool_destroy(p);
}

/* A first job's climb where blocks from 2 MiB up are huge-page mappings
 * (Linux): 16 KiB, then 128 KiB from malloc (4 KiB pages: 16 x 8 KiB is
 * all the bound allows before), then a 2 MiB window of a reservation (a
 * huge page is within 16 x the 136 KiB needed), widened in place. 0.4
 * climbed to a 256 KiB malloc block first: 32 more 4 KiB page faults,
 * about 0.4 ms of a first 10 MiB job on the VM of bench/BENCHMARKS.md.
 * Elsewhere the climb is 16 KiB, 256 KiB, 4 MiB. Never a block of more
 * than 16 x the bytes needed past the floor. */
Test(growth, a_first_job_maps_its_block_after_128_kib)
{
    bw_pool *p = libc_pool(0);
    bw_writer w;
    static unsigned char buf[8192];
    /* The fresh 128 KiB (256 KiB) block in windows of the growth rule's
     * size, widened in place. */
    static const size_t mapped[] = {16384,    32768,    65536,    131072,
                                    2u << 20, 4u << 20, 8u << 20, 16u << 20};
    static const size_t other[] = {16384,  32768,    65536,    131072,
                                   262144, 4u << 20, 8u << 20, 16u << 20};
    const size_t *want = maps_large() ? mapped : other;
    size_t nwant = 8, seen[16], n = 0, done, i;
    memset(buf, 0x33, sizeof buf);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (done = 0; done < (10u << 20); done += sizeof buf) {
        cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
        if (bw_capacity(&w) >= 16384 && (n == 0 || seen[n - 1] != bw_capacity(&w)) && n < 16) {
            seen[n++] = bw_capacity(&w);
            cr_expect_leq(bw_capacity(&w), 16 * bw_len(&w), "%zu for %zu bytes", bw_capacity(&w),
                          bw_len(&w));
        }
    }
    cr_expect_eq(n, nwant, "%zu capacities", n);
    for (i = 0; i < n && i < nwant; i++)
        cr_expect_eq(seen[i], want[i], "step %zu: %zu, not %zu", i, seen[i], want[i]);
    cr_expect_eq(bw_data(&w)[(10u << 20) - 1], 0x33);
    bw_release(&w);
    cr_expect_eq(outstanding(p), 0);
    bw_pool_destroy(p);
}

/* Out of a reservation every other way: a copy of its own bytes (in
 * place), bw_detach (a block of the window, returned by its capacity), and
 * growth past the reservation's end (a regrow of the window's block). */
Test(growth, a_reservation_leaves_as_a_block_of_its_window)
{
    bw_pool *p = libc_pool(BW_POOL_NO_LEARNED_GROWTH); /* 1 MiB, then 2 MiB */
    bw_writer w;
    size_t len = 0, cap = 0, i, bad = 0;
    unsigned char *b;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    grow_fill(&w, 3u << 20, 8192, 23, NULL);
    cr_assert_eq(bw_capacity(&w), 4u << 20);
    cr_assert_eq(bw_write(&w, bw_data(&w), 3u << 20), BW_OK); /* its own bytes */
    cr_expect_eq(bw_capacity(&w), 8u << 20);
    for (i = 0; i < (3u << 20); i++) bad += bw_data(&w)[(3u << 20) + i] != pat(i, 23);
    cr_expect_eq(bad, 0, "%zu bytes differ", bad);
    b = (unsigned char *)bw_detach(&w, &len, &cap);
    cr_assert_not_null(b);
    cr_expect_eq(len, 6u << 20);
    cr_expect_eq(cap, 8u << 20, "the window's capacity");
    cr_expect_eq(b[12345], pat(12345, 23));
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    cr_expect_eq(outstanding(p), 0);
    /* Past the end: 2 MiB in a reservation of 32 MiB, then 40 MiB. */
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    grow_fill(&w, (1u << 20) + 1, 8192, 24, NULL);
    cr_assert_eq(bw_capacity(&w), 2u << 20);
    cr_assert_eq(bw_reserve(&w, 40u << 20), BW_OK);
    cr_expect_geq(bw_capacity(&w), (40u << 20) + (1u << 20) + 1);
    check_bytes(&w, (1u << 20) + 1, 24);
    bw_release(&w);
    cr_expect_eq(outstanding(p), 0);
    bw_pool_destroy(p);
}

/* A reservation is fresh memory: taken only when the pool keeps no block
 * above the threshold, where growth would take fresh memory all the way.
 * Jobs of 20 MiB (learned jump 32 MiB: 128 KiB, 2 MiB, 32 MiB) take the
 * blocks the pool keeps once it has seen two, and no fresh one after. */
Test(growth, a_steady_stream_of_large_jobs_takes_no_reservation)
{
    bw_pool *p = libc_pool(0);
    bw_writer w;
    bw_pool_stats s0, s1;
    static unsigned char buf[8192];
    size_t done;
    int job;
    memset(buf, 0x5a, sizeof buf);
    for (job = 0; job < 5; job++) {
        bw_pool_get_stats(p, &s0);
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        for (done = 0; done < (20u << 20); done += sizeof buf)
            cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
        cr_assert_eq(bw_len(&w), 20u << 20);
        cr_expect_eq(bw_data(&w)[(20u << 20) - 1], 0x5a);
        bw_release(&w);
        bw_pool_get_stats(p, &s1);
        if (job >= 3)
            cr_expect_eq(s1.backing_allocs, s0.backing_allocs, "job %d: %llu fresh blocks", job,
                         (unsigned long long)(s1.backing_allocs - s0.backing_allocs));
    }
    cr_expect_eq(s1.outstanding_bytes, 0);
    bw_pool_destroy(p);
}
