/* SPDX-License-Identifier: MIT */
/* test_steady.c - the allocation-free steady state: learned starting size,
 * large retention, the caller's first buffer, segmented jobs on retained
 * blocks, pooled small messages. (Back-patching: test_positions.c.) */
#include "harness.h"

/* A fresh counting allocator ta and a pool over it with 0.1's mechanics,
 * but for flags, large retention (large_bytes 0: off), max_large_blocks and
 * max_learned_size. */
static bw_pool *steady_pool(test_alloc *ta, unsigned flags, size_t large_bytes,
                            size_t large_blocks, size_t max_learned)
{
    bw_pool_options o;
    bw_pool *p = NULL;
    ta_init(ta, 1);
    memset(&o, 0, sizeof o);
    /* 0.1's mechanics apart from what is under test (0 large bytes: off). */
    o.flags = flags | BW_POOL_NO_LEARNED_GROWTH | (large_bytes ? 0u : BW_POOL_NO_LARGE_RETENTION);
    o.min_first_block = 1;
    o.decay_ms = BW_DECAY_NEVER;
    o.allocator = &ta->hook;
    o.max_large_bytes = large_bytes;
    o.max_large_blocks = large_blocks;
    o.max_learned_size = max_learned;
    p = mkpool(&o);
    return p;
}

/* One job: total bytes in 8 KiB chunks; returns how often the block moved. */
static size_t job(bw_writer *w, size_t total, unsigned seed)
{
    unsigned char buf[8192];
    size_t done = 0, moves = 0, i, bad = 0;
    const unsigned char *last = bw_data(w);
    while (done < total) {
        size_t n = total - done < sizeof buf ? total - done : sizeof buf;
        for (i = 0; i < n; i++) buf[i] = pat(done + i, seed);
        cr_assert_eq(bw_write(w, buf, n), BW_OK);
        if (bw_data(w) != last) moves++;
        last = bw_data(w);
        done += n;
    }
    for (i = 0; i < total; i += 997) bad += bw_data(w)[i] != pat(i, seed);
    cr_assert_eq(bad, 0);
    return moves;
}

/* n jobs of `total` bytes on w, job i with pattern seed + i * step, each
 * ended by a release. */
static void released_jobs(bw_writer *w, int n, size_t total, unsigned seed, unsigned step)
{
    int i;
    for (i = 0; i < n; i++) {
        job(w, total, seed + (unsigned)i * step);
        bw_release(w);
    }
}

Test(steady, learned_size_stops_growth)
{
    test_alloc ta;
    bw_pool *p = steady_pool(&ta, BW_POOL_LEARN_SIZE, 0, 0, 0);
    bw_pool_stats st;
    bw_writer w;
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 0, "nothing learned yet");
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_expect_gt(job(&w, 10u << 20, 1), 5, "the first job grows");
    bw_release(&w);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 0, "one length has no second largest");
    cr_expect_gt(job(&w, 10u << 20, 3), 5, "so the second grows too");
    bw_release(&w);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 16u << 20,
                 "the first block writers now get: the growth rule's size for 10 MiB");
    /* The next job starts at the learned size: one block, never moves. */
    cr_expect_eq(job(&w, 10u << 20, 2), 1);
    cr_expect_eq(bw_capacity(&w), 16u << 20);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(steady, learned_size_is_a_high_percentile_and_bounded)
{
    test_alloc ta;
    bw_pool *p = steady_pool(&ta, BW_POOL_LEARN_SIZE, 0, 0, 1u << 20);
    bw_pool_stats st;
    bw_writer w;
    int i;
    bw_init(&w, p, 0);
    for (i = 0; i < 15; i++) {
        bw_write(&w, "0123456789", 10);
        bw_printf(&w, "%0990d", 0); /* 1000 bytes in all */
        bw_clear(&w);               /* clear ends a job too */
    }
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 1024, "the class a 1000-byte first write gets");
    job(&w, 3u << 20, 3); /* one outlier */
    bw_release(&w);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 1024, "one outlier in 16 does not move it");
    bw_put_u8(&w, 1);
    cr_expect_eq(bw_capacity(&w), 1024, "first block sized for the learned length");
    bw_release(&w);
    released_jobs(&w, 16, 3u << 20, 4, 0);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 1u << 20, "bounded by max_learned_size");
    ta_finish(&ta, p);
}

Test(steady, large_retention_reuses_warm_blocks)
{
    test_alloc ta;
    bw_pool *p = steady_pool(&ta, BW_POOL_LEARN_SIZE, 64u << 20, 0, 0);
    bw_pool_stats a, b;
    bw_writer w;
    bw_init(&w, p, 0);
    job(&w, 10u << 20, 5); /* two jobs: the learned size needs two lengths */
    bw_release(&w);
    job(&w, 10u << 20, 5);
    bw_release(&w);
    bw_pool_get_stats(p, &a);
    cr_expect_geq(a.large_retained_bytes, 16u << 20);
    cr_expect_geq(a.retained_bytes, a.large_retained_bytes);
    /* Steady state: no backing allocation at all. */
    released_jobs(&w, 5, 10u << 20, 0, 1);
    bw_pool_get_stats(p, &b);
    cr_expect_eq(b.backing_allocs, a.backing_allocs, "allocations in steady state: %llu",
                 (unsigned long long)(b.backing_allocs - a.backing_allocs));
    cr_expect_eq(b.hits - a.hits, 5);
    bw_pool_trim(p);
    bw_pool_get_stats(p, &b);
    cr_expect_eq(b.large_retained_bytes, 0);
    cr_expect_eq(b.retained_bytes, 0);
    cr_expect_eq(atomic_load(&ta.live_blocks), 0);
    ta_finish(&ta, p);
}

Test(steady, large_retention_without_learning_reaches_steady_state)
{
    test_alloc ta;
    bw_pool *p = steady_pool(&ta, 0, 64u << 20, 0, 0);
    bw_pool_stats a, b;
    bw_writer w;
    bw_init(&w, p, 0);
    /* Growth moves into kept blocks of the next size when there are any
     * (and keeps the one it leaves), so after a few jobs every size along
     * the way is kept: 2, 4 and 8 MiB. */
    released_jobs(&w, 3, 6u << 20, 0, 1);
    bw_pool_get_stats(p, &a);
    cr_expect_eq(a.large_retained_bytes, (2u + 4u + 8u) << 20);
    released_jobs(&w, 3, 6u << 20, 10, 1);
    bw_pool_get_stats(p, &b);
    cr_expect_eq(b.backing_allocs, a.backing_allocs, "no allocation in steady state");
    ta_finish(&ta, p);
}

Test(steady, large_retention_bounds_and_exact_sizes)
{
    test_alloc ta;
    bw_pool *p = steady_pool(&ta, 0, 10u << 20, 2, 0);
    bw_pool_stats st;
    void *blk[4];
    size_t cap[4], c;
    int i;
    for (i = 0; i < 4; i++) blk[i] = bw_pool_rent(p, (size_t)(2 + i) << 20, &cap[i]);
    for (i = 0; i < 4; i++) cr_expect_eq(bw_pool_return(p, blk[i], cap[i]), BW_OK);
    bw_pool_get_stats(p, &st);
    /* 2 blocks at most, 10 MiB at most, oldest evicted: 4 + 5 MiB kept. */
    cr_expect_eq(st.large_retained_bytes, 9u << 20);
    /* Served only at exactly the size asked for. */
    blk[0] = bw_pool_rent(p, 3u << 20, &c);
    cr_expect_eq(c, 3u << 20);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.large_retained_bytes, 9u << 20, "no kept block was 3 MiB");
    cr_expect_eq(bw_pool_return(p, blk[0], c), BW_OK);
    blk[1] = bw_pool_rent(p, 5u << 20, &c);
    bw_pool_get_stats(p, &st);
    cr_expect_lt(st.large_retained_bytes, 9u << 20, "the 5 MiB block was reused");
    bw_pool_return(p, blk[1], c);
    /* A block bigger than the whole budget is never kept. */
    blk[2] = bw_pool_rent(p, 11u << 20, &c);
    bw_pool_return(p, blk[2], c);
    bw_pool_get_stats(p, &st);
    cr_expect_leq(st.large_retained_bytes, 10u << 20);
    ta_finish(&ta, p);
}

/* Caller's first buffer ----------------------------------------------- */

Test(steady, inline_buffer_small_messages_allocate_nothing)
{
    wpool f;
    unsigned char buf[256];
    int i;
    wp_open(&f, 0, 0);
    cr_assert_eq(bw_init_buffer(&f.w, f.p, buf, sizeof buf), BW_OK);
    for (i = 0; i < 100; i++) {
        bw_put_u32le(&f.w, (uint32_t)i);
        bw_puts(&f.w, "message body");
        bw_put_uvarint(&f.w, 300);
        cr_assert_eq(bw_error(&f.w), BW_OK);
        cr_assert_eq(bw_data(&f.w), buf, "still in the caller's buffer");
        cr_assert_eq(bw_data(&f.w)[0], (unsigned char)i);
        bw_clear(&f.w);
    }
    cr_expect_eq(atomic_load(&f.ta.calls), 0, "no allocation for small messages");
    wp_close(&f);
}

Test(steady, inline_buffer_overflows_into_the_pool)
{
    wpool f;
    unsigned char buf[64];
    wp_open(&f, 0, 0);
    cr_assert_eq(bw_init_buffer(&f.w, f.p, buf, sizeof buf), BW_OK);
    put_pat_bytes(&f.w, 5000, 8);
    cr_assert_eq(bw_error(&f.w), BW_OK);
    cr_expect_neq(bw_data(&f.w), buf);
    cr_expect_eq(bw_capacity(&f.w), 8192);
    cr_expect_eq(pat_mismatches(bw_data(&f.w), 5000, 0, 8), 0);
    cr_expect_eq(pat_mismatches(buf, 64, 0, 8), 0, "the caller's buffer is left as it was written");
    wp_close(&f); /* the stack buffer was never given to the allocator */
}

Test(steady, inline_buffer_detach_hands_out_pooled_memory)
{
    wpool f;
    unsigned char buf[32];
    size_t len, cap;
    unsigned char *b;
    wp_open(&f, 0, 0);
    bw_init_buffer(&f.w, f.p, buf, sizeof buf);
    bw_puts(&f.w, "twenty bytes of text");
    b = (unsigned char *)bw_detach(&f.w, &len, &cap);
    cr_assert_not_null(b);
    cr_expect_neq(b, buf);
    cr_expect_eq(len, 20);
    cr_expect_eq(cap, 32);
    cr_expect(memcmp(b, "twenty bytes of text", 20) == 0);
    cr_expect_eq(bw_pool_return(f.p, b, cap), BW_OK);
    cr_expect_eq(bw_capacity(&f.w), 0);
    /* An empty inline writer detaches to nothing. */
    bw_init_buffer(&f.w, f.p, buf, sizeof buf);
    cr_expect_null(bw_detach(&f.w, &len, &cap));
    cr_expect_eq(len, 0);
    /* If the copy cannot be rented, nothing is lost. */
    bw_init_buffer(&f.w, f.p, buf, sizeof buf);
    bw_puts(&f.w, "keep me");
    atomic_store(&f.ta.fail_at, atomic_load(&f.ta.calls) + 1);
    atomic_store(&f.ta.fail_sticky, 1);
    bw_pool_trim(f.p); /* no retained block to fall back on */
    cr_expect_null(bw_detach(&f.w, &len, &cap));
    cr_expect_eq(len, 0);
    cr_expect_eq(bw_error(&f.w), BW_ENOMEM);
    cr_expect_eq(bw_len(&f.w), 7);
    cr_expect(memcmp(bw_data(&f.w), "keep me", 7) == 0);
    cr_expect_eq(bw_data(&f.w), buf);
    wp_close(&f);
}

Test(steady, inline_buffer_bad_input)
{
    bw_writer w;
    unsigned char buf[1];
    cr_expect_eq(bw_init_buffer(NULL, NULL, buf, 1), BW_EINVAL);
    cr_expect_eq(bw_init_buffer(&w, NULL, NULL, 100), BW_EINVAL);
    cr_expect_eq(bw_capacity(&w), 0, "a valid empty writer");
    cr_expect_eq(bw_error(&w), BW_EINVAL, "with the failure recorded");
    cr_expect_eq(bw_init_buffer(&w, NULL, buf, 0), BW_EINVAL);
    cr_expect_eq(bw_capacity(&w), 0);
    /* A tiny buffer is fine: it just overflows at once. */
    cr_expect_eq(bw_init_buffer(&w, NULL, buf, 1), BW_OK);
    cr_expect_eq(bw_put_u8(&w, 7), BW_OK);
    cr_expect_eq(bw_data(&w), buf);
    cr_expect_eq(bw_put_uvarint(&w, 300), BW_OK);
    cr_expect_eq(bw_len(&w), 3);
    cr_expect(memcmp(bw_data(&w), "\x07\xac\x02", 3) == 0);
    bw_release(&w);
}

/* One small message on p: a u32 length and 64 payload bytes in a fresh
 * contiguous writer, checked, then released. Returns the block it used. */
static const unsigned char *small_message(bw_pool *p, unsigned seed)
{
    unsigned char body[64];
    const unsigned char *d;
    bw_writer w;
    size_t i, bad = 0;
    for (i = 0; i < sizeof body; i++) body[i] = pat(i, seed);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 64), BW_OK);
    cr_assert_eq(bw_write(&w, body, sizeof body), BW_OK);
    d = bw_data(&w);
    cr_assert_eq(bw_len(&w), 68);
    cr_assert_eq(bw_capacity(&w), 512, "the first block is min_first_block");
    cr_assert_eq(d[0], 64);
    for (i = 0; i < sizeof body; i++) bad += d[4 + i] != pat(i, seed);
    cr_assert_eq(bad, 0);
    bw_release(&w);
    cr_assert_eq(bw_len(&w), 0);
    cr_assert_eq(bw_capacity(&w), 0, "released: no storage");
    cr_assert_eq(bw_error(&w), BW_OK);
    return d;
}

Test(steady, pooled_small_messages_reuse_one_block_through_the_thread_cache)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_pool_stats st;
    const unsigned char *first;
    unsigned i;
    first = small_message(p, 0);
    for (i = 1; i < 100; i++)
        cr_assert_eq(small_message(p, i), first, "message %u: the same block again", i);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.rents, 100);
    cr_expect_eq(st.hits, 99, "every block after the first is a retained one");
    cr_expect_eq(st.returns, 100);
    cr_expect_eq(st.backing_allocs, 1);
    cr_expect_eq(st.outstanding_bytes, 0);
    cr_expect_eq(st.retained_bytes, 512);
    cr_expect_eq(st.learned_large_size, 0, "jobs below the jump floor teach no jump");
    ta_finish(&ta, p);
}

Test(steady, pooled_small_messages_keep_each_pools_promises)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *learn, *zero, *checked, *other;
    bw_pool_stats st;
    bw_writer w;
    const unsigned char *a, *b;
    size_t i, nonzero = 0;
    unsigned k;
    /* A learning pool: every release records the job's 68 bytes. */
    o.flags = BW_POOL_LEARN_SIZE;
    learn = mkpool(&o);
    for (k = 0; k < 4; k++) (void)small_message(learn, k);
    bw_pool_get_stats(learn, &st);
    cr_expect_eq(st.learned_size, 128, "learned from small jobs: the class of 68 B");
    cr_expect_eq(st.hits, 3);
    /* A zeroing pool: the block a message left reads as zeros next time. */
    o.flags = BW_POOL_ZERO_ON_RETURN;
    zero = mkpool(&o);
    (void)small_message(zero, 1);
    cr_assert_eq(bw_init(&w, zero, 0), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 7), BW_OK);
    for (i = 4; i < bw_capacity(&w); i++) nonzero += bw_data(&w)[i] != 0;
    cr_expect_eq(nonzero, 0, "the last message's bytes never reach the next");
    bw_release(&w);
    /* A checked pool: its blocks go through the checks, still reused. */
    o.flags = BW_POOL_CHECKED;
    checked = mkpool(&o);
    for (k = 0; k < 4; k++) (void)small_message(checked, k);
    bw_pool_get_stats(checked, &st);
    cr_expect_eq(st.hits, 3);
    cr_expect_eq(st.outstanding_bytes, 0);
    /* Two pools in turn (the thread's last cache is the other's): each
     * message gets its own pool's block, and each pool keeps its own. */
    o.flags = 0;
    other = mkpool(&o);
    a = small_message(learn, 9);
    b = small_message(other, 9);
    for (k = 0; k < 10; k++) {
        cr_expect_eq(small_message(learn, k), a);
        cr_expect_eq(small_message(other, k), b);
    }
    cr_expect_neq(a, b);
    bw_pool_get_stats(other, &st);
    cr_expect_eq(st.rents, 11);
    cr_expect_eq(st.hits, 10);
    bw_pool_destroy(learn);
    bw_pool_destroy(zero);
    bw_pool_destroy(checked);
    ta_finish(&ta, other);
}

/* A writer on the shared pool by NULL takes its first block from the
 * shared pool's thread cache without loading the pool: whichever pool's
 * cache the thread used last, it gets a shared block and the shared pool,
 * and the other pool's cache keeps its own. A writer with no block is
 * released with no pool touched, whatever the last cache (one whose first
 * block the fast paths do not serve included: a learning pool's). */
Test(steady, pooled_small_messages_on_the_shared_pool_by_null_keep_to_it)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *other, *learn;
    bw_pool_stats st;
    bw_writer w;
    const unsigned char *a, *b;
    unsigned k;
    other = mkpool(&o);
    o.flags = BW_POOL_LEARN_SIZE;
    learn = mkpool(&o);
    b = small_message(other, 0);
    for (k = 0; k < 10; k++) {
        a = small_message(NULL, k);
        cr_expect_neq(a, b, "message %u: not the other pool's block", k);
        cr_expect_eq(small_message(other, k), b, "message %u: the other pool's own", k);
        cr_assert_eq(bw_init(&w, NULL, 0), BW_OK);
        cr_assert_eq(bw_put_u32le(&w, k), BW_OK);
        cr_expect(bw_writer_pool(&w) == bw_pool_shared());
        cr_expect(bw_data(&w) != b);
        bw_release(&w);
    }
    bw_pool_get_stats(other, &st);
    cr_expect_eq(st.rents, 11);
    cr_expect_eq(st.hits, 10);
    cr_expect_eq(st.returns, 11);
    cr_expect_eq(st.outstanding_bytes, 0);
    /* Released with no block: after the learning pool's cache, then the
     * other's, on the shared pool and on each pool. */
    (void)small_message(learn, 0);
    for (k = 0; k < 2; k++) {
        bw_pool *last = k == 0 ? learn : other;
        (void)small_message(last, k);
        cr_assert_eq(bw_init(&w, NULL, 0), BW_OK);
        bw_release(&w);
        cr_expect_eq(bw_capacity(&w), 0);
        cr_assert_eq(bw_init(&w, last, 0), BW_OK);
        bw_release(&w);
        cr_expect_eq(bw_capacity(&w), 0);
        cr_expect_eq(bw_put_u32le(&w, 1), BW_OK, "and the writer works after");
        cr_expect_eq(bw_len(&w), 4);
        bw_release(&w);
    }
    bw_pool_get_stats(learn, &st);
    cr_expect_eq(st.rents, st.returns, "nothing but blocks went back");
    bw_pool_destroy(learn);
    ta_finish(&ta, other);
}

/* A first put on a writer with no storage is refused while an error is
 * recorded (it rents nothing), and served from the thread cache again once
 * bw_clear_error or bw_clear forgets it. */
Test(steady, a_first_put_after_a_recorded_error_is_refused_then_served)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_pool_stats st;
    bw_writer w;
    unsigned char b[8];
    int k;
    (void)small_message(p, 0); /* a block in the cache */
    for (k = 0; k < 3; k++) {
        if (k < 2) {
            cr_assert_eq(bw_init(&w, p, 0), BW_OK);
            cr_expect_eq(bw_write(&w, NULL, 5), BW_EINVAL);
        } else {
            cr_expect_eq(bw_init_buffer(&w, p, NULL, sizeof b), BW_EINVAL);
        }
        cr_expect_eq(bw_put_u32le(&w, 7), BW_EINVAL, "case %d: refused", k);
        cr_expect_eq(bw_capacity(&w), 0, "case %d: no block", k);
        bw_pool_get_stats(p, &st);
        cr_expect_eq(st.rents, 1 + (uint64_t)k, "case %d: nothing rented", k);
        if (k == 1) bw_clear(&w);
        else bw_clear_error(&w);
        cr_expect_eq(bw_put_u32le(&w, 7), BW_OK, "case %d: forgotten", k);
        cr_expect_eq(bw_capacity(&w), 512, "case %d: the first block", k);
        cr_expect_eq(bw_len(&w), 4);
        cr_expect(memcmp(bw_data(&w), "\x07\0\0\0", 4) == 0);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.rents, 4);
    cr_expect_eq(st.hits, 3, "each from the thread cache");
    /* A release forgets an error recorded after the first block came,
     * and gives the block back to the cache. */
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 7), BW_OK);
    cr_expect_eq(bw_write(&w, NULL, 5), BW_EINVAL);
    bw_release(&w);
    cr_expect_eq(bw_error(&w), BW_OK, "released: no error");
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_eq(bw_put_u32le(&w, 8), BW_OK);
    cr_expect_eq(bw_len(&w), 4);
    bw_release(&w);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.rents, 6);
    cr_expect_eq(st.hits, 5);
    cr_expect_eq(st.returns, 6);
    ta_finish(&ta, p);
}

Test(steady, learned_size_wins_over_a_smaller_first_capacity)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats st;
    bw_writer w;
    unsigned char buf[64], b[10000];
    int i;
    fill(b, sizeof b, 50);
    p = fresh_pool(&ta, 0, BW_POOL_LEARN_SIZE);
    for (i = 0; i < 4; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &st);
    cr_assert_eq(st.learned_size, 16384);
    cr_assert_eq(bw_init(&w, p, 256), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "the larger of 256 and the learned size");
    bw_release(&w);
    cr_assert_eq(bw_init(&w, p, 40000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 65536, "a larger first capacity wins");
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "out of the caller's buffer: the learned size");
    bw_release(&w);
    ta_finish(&ta, p);
    /* without learning, as given */
    p = fresh_pool(&ta, 0, 0);
    cr_assert_eq(bw_init(&w, p, 256), BW_OK);
    cr_expect_eq(bw_capacity(&w), 256);
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128);
    bw_release(&w);
    ta_finish(&ta, p);
}

/* A stream of similar segmented jobs is served from
 * the pool's retained blocks, with no backing allocation at steady state. */
Test(steady, segmented_jobs_reuse_pooled_blocks_at_steady_state, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 64u << 10, 0);
    bw_pool_stats a, b;
    bw_writer w;
    unsigned char buf[8192];
    int i, job;
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    memset(buf, 1, sizeof buf);
    for (i = 0; i < 64; i++) cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK); /* 512 KiB */
    bw_release(&w);
    bw_pool_get_stats(p, &a);
    for (job = 0; job < 5; job++) {
        for (i = 0; i < 64; i++) cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
        cr_assert_eq(bw_len(&w), 64 * sizeof buf);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &b);
    cr_expect_eq(b.backing_allocs, a.backing_allocs, "no backing allocation at steady state "
                 "(%" PRIu64 " more)", b.backing_allocs - a.backing_allocs);
    ta_finish(&ta, p);
}

/* The libc allocator's blocks of 16 KiB or more start on a page: a memcpy
 * into glibc's usual block, 16 bytes past a page or anywhere in its heap,
 * ran up to 1.3x slower when its source lay just below it modulo 4 KiB
 * (pool/alloc.c). Classes, a block above the threshold and a mapped one,
 * and a writer's block; not a checked pool's, whose canary makes the
 * size odd, nor on Windows, where free() cannot release an aligned block. */
Test(steady, blocks_of_16_kib_or_more_start_on_a_page)
{
#if !defined(_WIN32) && !defined(BW_DEBUG)
    static const size_t sizes[] = {16 * KiB, 32 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB};
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    size_t i, cap;
    if (getenv("BW_CHECKED") != NULL) return;
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_NO_THREAD_CACHE; /* every rent from the allocator */
    p = mkpool(&o);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *b = rent_ok(p, sizes[i], &cap);
        cr_expect_eq((uintptr_t)b % 4096, 0, "a %zu-byte block at %p", sizes[i], b);
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
        bw_pool_trim(p);
    }
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_reserve(&w, 64 * KiB), BW_OK);
    cr_expect_eq((uintptr_t)bw_data(&w) % 4096, 0);
    bw_release(&w);
    bw_pool_destroy(p);
#endif
}
