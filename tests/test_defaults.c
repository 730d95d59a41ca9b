/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* POSIX 2008 (clock_gettime, nanosleep, fork) and MAP_ANONYMOUS */
/* test_defaults.c - the pool's defaults (bufwriter.h, section 5 "Pool":
 * options, decay, the learned jump, min_first_block, stats, zero on return)
 * and the defects 0.2 fixed: fork while other
 * threads are inside the pool, an allocator hook that uses the pool, one
 * thread with many pools, class_size at the edges, destroying the shared
 * pool, learned_size as writers get it, unknown flag bits.
 *
 * Timing: the decay tests use decay_ms = 100 and check "not yet" only while
 * less than half of it has really passed, and "given back" only after three
 * times it, so a loaded machine cannot make them flaky. */
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

#define TH    (64 * KiB) /* a small threshold keeps the large-job tests fast */
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

/* A pool over ta with threshold TH, no decay, the jump floor at the
 * threshold (where 0.2 jumped: these tests pin that rule's mechanics;
 * test_jump.c tests the default floor), everything else default. */
static bw_pool *learn_pool(test_alloc *ta, unsigned flags, size_t max_learned)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = TH;
    o.jump_floor = TH;
    o.decay_ms = BW_DECAY_NEVER;
    o.flags = flags;
    o.max_learned_size = max_learned;
    return mkpool(&o);
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
        /* The learned jump is on: after two 3 MiB jobs a writer that
         * outgrows 16 KiB jumps to 4 MiB; before, it climbs 16 times its
         * capacity per move (16 KiB -> 256 KiB). */
        fill_chunk(7);
        for (k = 0; k < 3; k++) {
            cross = 0;
            cr_assert_eq(bw_init(&w, p, 0), BW_OK);
            while (bw_len(&w) < 3 * MiB) {
                cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
                if (cross == 0 && bw_capacity(&w) > 16 * KiB) cross = bw_capacity(&w);
            }
            bw_release(&w);
            cr_expect_eq(cross, k < 2 ? 256 * KiB : 4 * MiB, "pool %zu job %zu: %zu", i, k, cross);
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
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats s;
    size_t cap;
    void *b;
    ta_init(&ta, 1);
    o = opts_for(&ta);
    o.max_pooled_size = TH;
    o.flags = BW_POOL_NO_LARGE_RETENTION;
    p = mkpool(&o);
    b = rent_ok(p, 128 * KiB, &cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.backing_frees, 1);
    cr_expect_eq(s.large_retained_bytes, 0);
    cr_expect_eq(s.retained_bytes, 0);
    b = rent_ok(p, 128 * KiB, &cap);
    s = stats_of(p);
    cr_expect_eq(s.backing_allocs, 2);
    cr_expect_eq(s.hits, 0);
    cr_expect_eq(s.large_hits, 0);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    ta_finish(&ta, p);
}

Test(defaults, default_keeps_a_16_mib_block_and_counts_it_in_retained_bytes)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    size_t cap, cap2;
    void *b, *b2;
    ta_init(&ta, 1);
    p = ta_pool_defaults(&ta);
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

Test(defaults, default_large_bounds_are_8_blocks_and_64_mib)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    void *b[9];
    size_t cap[9], i;
    ta_init(&ta, 1);
    p = ta_pool_defaults(&ta);
    /* Nine 2 MiB blocks: eight are kept, the oldest goes. */
    for (i = 0; i < 9; i++) b[i] = rent_ok(p, 2 * MiB, &cap[i]);
    for (i = 0; i < 9; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 16 * MiB);
    cr_expect_eq(s.backing_frees, 1);
    for (i = 0; i < 8; i++) {
        void *x = rent_ok(p, 2 * MiB, &cap[i]);
        cr_expect_neq(x, b[0], "the oldest block was the one given back");
        b[i] = x;
    }
    cr_expect_eq(stats_of(p).large_hits, 8);
    for (i = 0; i < 8; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    bw_pool_trim(p);
    cr_expect_eq(stats_of(p).retained_bytes, 0);
    /* Five 16 MiB blocks: 64 MiB are kept. */
    for (i = 0; i < 5; i++) b[i] = rent_ok(p, 16 * MiB, &cap[i]);
    for (i = 0; i < 5; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 64 * MiB);
    cr_expect_eq(s.retained_bytes, 64 * MiB);
    /* A block larger than the byte bound is never kept. */
    b[0] = rent_ok(p, 64 * MiB + 4096, &cap[0]);
    cr_expect_eq(bw_pool_return(p, b[0], cap[0]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 64 * MiB);
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
    ta_init(&ta, 1);
    o = opts_for(&ta);
    o.max_pooled_size = TH;
    o.max_retained_bytes = 64 * KiB;
    o.max_large_bytes = MiB;
    o.flags = BW_POOL_NO_THREAD_CACHE;
    o.decay_ms = BW_DECAY_NEVER;
    p = mkpool(&o);
    for (i = 0; i < 4; i++) b[i] = rent_ok(p, 32 * KiB, &cap[i]);
    for (i = 0; i < 4; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 64 * KiB, "two of four 32 KiB blocks fit the bound");
    cr_expect_eq(s.backing_frees, 2);
    /* A kept large block does not count against max_retained_bytes ... */
    b[0] = rent_ok(p, 512 * KiB, &cap[0]);
    cr_expect_eq(bw_pool_return(p, b[0], cap[0]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 512 * KiB);
    cr_expect_eq(s.retained_bytes, 64 * KiB + 512 * KiB);
    cr_expect_eq(s.backing_frees, 2);
    /* ... but against max_large_bytes: the oldest goes. */
    b[1] = rent_ok(p, 768 * KiB, &cap[1]);
    cr_expect_eq(bw_pool_return(p, b[1], cap[1]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 768 * KiB);
    cr_expect_eq(s.retained_bytes, 64 * KiB + 768 * KiB);
    cr_expect_eq(s.backing_frees, 3);
    /* Above max_large_bytes: never kept. */
    b[2] = rent_ok(p, 2 * MiB, &cap[2]);
    cr_expect_eq(bw_pool_return(p, b[2], cap[2]), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 768 * KiB);
    cr_expect_eq(s.backing_frees, 4);
    ta_finish(&ta, p);
}

Test(defaults, max_large_blocks_evicts_the_oldest)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    void *b[3];
    size_t cap[3], i;
    size_t sz[3] = { 100 * KiB, 200 * KiB, 300 * KiB };
    ta_init(&ta, 1);
    o = opts_for(&ta);
    o.max_pooled_size = TH;
    o.max_large_blocks = 2;
    o.decay_ms = BW_DECAY_NEVER;
    p = mkpool(&o);
    for (i = 0; i < 3; i++) b[i] = rent_ok(p, sz[i], &cap[i]);
    for (i = 0; i < 3; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    cr_expect_eq(stats_of(p).large_retained_bytes, 500 * KiB);
    for (i = 0; i < 3; i++) b[i] = rent_ok(p, sz[i], &cap[i]);
    cr_expect_eq(stats_of(p).large_hits, 2, "200 and 300 KiB kept, 100 KiB (oldest) evicted");
    cr_expect_eq(stats_of(p).backing_allocs, 4);
    for (i = 0; i < 3; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* Decay                                                                 */
/* ------------------------------------------------------------------ */

/* decay_ms DECAY over ta, threshold TH, with extra flags. */
static bw_pool *decay_pool(test_alloc *ta, unsigned flags, uint32_t decay_ms)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = TH;
    o.flags = flags;
    o.decay_ms = decay_ms;
    return mkpool(&o);
}

Test(defaults, pooled_block_decays_at_first_slow_return_after_decay_ms_not_before)
{
    test_alloc ta, tn, td;
    bw_pool *p, *never, *dflt;
    bw_pool_stats s;
    void *b, *big, *probe, *bn, *bd;
    size_t cap, bigcap, pcap, cn, cd;
    uint64_t t0, t1;
    ta_init(&ta, 1);
    ta_init(&tn, 1);
    ta_init(&td, 1);
    /* No thread cache: the block sits in the shared level, and every call
     * is a slow one. */
    p = decay_pool(&ta, BW_POOL_NO_THREAD_CACHE | BW_POOL_NO_LARGE_RETENTION, DECAY);
    never = decay_pool(&tn, BW_POOL_NO_THREAD_CACHE, BW_DECAY_NEVER);
    dflt = decay_pool(&td, BW_POOL_NO_THREAD_CACHE, 0);
    b = rent_ok(p, 4096, &cap);
    big = rent_ok(p, 128 * KiB, &bigcap);
    bn = rent_ok(never, 4096, &cn);
    bd = rent_ok(dflt, 4096, &cd);
    t0 = mono_ms();
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    cr_expect_eq(bw_pool_return(never, bn, cn), BW_OK);
    cr_expect_eq(bw_pool_return(dflt, bd, cd), BW_OK);
    cr_expect_eq(stats_of(p).retained_bytes, 4096);
    /* Younger than decay_ms: a slow rent keeps it. */
    sleep_ms(20);
    probe = rent_ok(p, 16, &pcap);
    t1 = mono_ms();
    if (t1 - t0 < DECAY / 2) {
        s = stats_of(p);
        cr_expect_eq(s.retained_bytes, 4096, "given back after %llu ms",
                     (unsigned long long)(t1 - t0));
        cr_expect_eq(s.decayed_bytes, 0);
    }
    /* Past decay_ms: stats alone change nothing ... */
    sleep_until(t0 + 3 * DECAY);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 4096, "bw_pool_get_stats must not decay");
    cr_expect_eq(s.decayed_bytes, 0);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 4096);
    cr_expect_eq(s.backing_frees, 0);
    /* ... the first slow-path return gives it back, as decay. */
    cr_expect_eq(bw_pool_return(p, big, bigcap), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 0, "still retained after %llu ms",
                 (unsigned long long)(mono_ms() - t0));
    cr_expect_eq(s.decayed_bytes, 4096);
    cr_expect_eq(s.backing_frees, 2); /* the decayed block, the large one */
    /* Cumulative, and trim is not decay. */
    cr_expect_eq(bw_pool_return(p, probe, pcap), BW_OK);
    bw_pool_trim(p);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, 4096);
    cr_expect_eq(s.retained_bytes, 0);
    /* BW_DECAY_NEVER and the default (seconds) keep it. */
    bn = rent_ok(never, 16, &cn);
    bd = rent_ok(dflt, 16, &cd);
    s = stats_of(never);
    cr_expect_eq(s.retained_bytes, 4096);
    cr_expect_eq(s.decayed_bytes, 0);
    s = stats_of(dflt);
    cr_expect_eq(s.retained_bytes, 4096);
    cr_expect_eq(s.decayed_bytes, 0);
    cr_expect_eq(bw_pool_return(never, bn, cn), BW_OK);
    cr_expect_eq(bw_pool_return(dflt, bd, cd), BW_OK);
    ta_finish(&ta, p);
    ta_finish(&tn, never);
    ta_finish(&td, dflt);
}

Test(defaults, thread_cache_block_decays_at_its_threads_first_slow_rent_after_decay_ms)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    void *b, *probe[2];
    size_t cap, pcap[2];
    uint64_t t0, t1;
    ta_init(&ta, 1);
    p = decay_pool(&ta, BW_POOL_NO_LARGE_RETENTION, DECAY);
    b = rent_ok(p, 256, &cap);
    t0 = mono_ms();
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK); /* into this thread's cache */
    cr_expect_eq(stats_of(p).retained_bytes, 256);
    sleep_ms(20);
    probe[0] = rent_ok(p, 128 * KiB, &pcap[0]); /* a slow path on this thread */
    t1 = mono_ms();
    if (t1 - t0 < DECAY / 2) {
        s = stats_of(p);
        cr_expect_eq(s.retained_bytes, 256, "given back after %llu ms",
                     (unsigned long long)(t1 - t0));
        cr_expect_eq(s.decayed_bytes, 0);
    }
    sleep_until(t0 + 3 * DECAY);
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, 256, "bw_pool_get_stats must not decay");
    probe[1] = rent_ok(p, 128 * KiB, &pcap[1]);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, 256, "returned %llu ms ago, not decayed at this slow rent",
                 (unsigned long long)(mono_ms() - t0));
    cr_expect_eq(s.retained_bytes, 0);
    cr_expect_eq(bw_pool_return(p, probe[0], pcap[0]), BW_OK);
    cr_expect_eq(bw_pool_return(p, probe[1], pcap[1]), BW_OK);
    ta_finish(&ta, p);
}

Test(defaults, thread_cache_block_is_never_given_back_younger_than_decay_ms)
{
    test_alloc ta;
    bw_pool *p;
    void *b;
    size_t cap;
    uint64_t t0, t1 = 0;
    int decayed = 0;
    ta_init(&ta, 1);
    p = decay_pool(&ta, BW_POOL_NO_LARGE_RETENTION, DECAY);
    b = rent_ok(p, 256, &cap);
    t0 = mono_ms();
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    /* A slow call on this thread every 5 ms. */
    while (mono_ms() < t0 + 6 * DECAY) {
        size_t c;
        void *x = rent_ok(p, 128 * KiB, &c);
        cr_expect_eq(bw_pool_return(p, x, c), BW_OK);
        t1 = mono_ms();
        if (stats_of(p).decayed_bytes != 0) {
            decayed = 1;
            break;
        }
        sleep_ms(5);
    }
    cr_expect(decayed, "a thread-cached block never decayed with slow calls for %u ms", 6 * DECAY);
    /* Allow the coarse clock's step (a few ms) below decay_ms. */
    if (decayed)
        cr_expect_geq(t1 - t0 + 5, DECAY, "decayed %llu ms after its return",
                      (unsigned long long)(t1 - t0));
    cr_expect_eq(stats_of(p).decayed_bytes, decayed ? 256 : 0);
    ta_finish(&ta, p);
}

struct exit_arg {
    bw_pool *p;
    uint64_t t0;
};

static void *return_then_idle(void *arg)
{
    struct exit_arg *a = (struct exit_arg *)arg;
    size_t cap;
    void *b = bw_pool_rent(a->p, 256, &cap);
    if (b != NULL) {
        a->t0 = mono_ms();
        (void)bw_pool_return(a->p, b, cap); /* into this thread's cache */
    }
    sleep_ms(3 * DECAY);
    return b;
}

Test(defaults, thread_cache_decays_at_its_threads_exit)
{
    test_alloc ta;
    bw_pool *p;
    pthread_t th;
    struct exit_arg a;
    bw_pool_stats s;
    void *r, *probe;
    size_t pcap;
    ta_init(&ta, 1);
    p = decay_pool(&ta, BW_POOL_NO_LARGE_RETENTION, DECAY);
    a.p = p;
    a.t0 = 0;
    cr_assert_eq(pthread_create(&th, NULL, return_then_idle, &a), 0);
    cr_assert_eq(pthread_join(th, &r), 0);
    cr_assert_not_null(r);
    /* The block is 3 x decay_ms old: the thread's exit, or at the latest
     * the next slow call, gives it back. */
    probe = rent_ok(p, 128 * KiB, &pcap);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, 256, "a block %llu ms old survived its thread's exit",
                 (unsigned long long)(mono_ms() - a.t0));
    cr_expect_eq(s.retained_bytes, 0);
    cr_expect_eq(bw_pool_return(p, probe, pcap), BW_OK);
    ta_finish(&ta, p);
}

Test(defaults, kept_large_block_decays_at_first_slow_rent_after_decay_ms_not_before)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    void *a, *b, *probe[2];
    size_t ca, cb, pcap[2];
    uint64_t t0, t1;
    ta_init(&ta, 1);
    p = decay_pool(&ta, BW_POOL_NO_THREAD_CACHE, DECAY);
    a = rent_ok(p, 128 * KiB, &ca);
    b = rent_ok(p, 256 * KiB, &cb);
    t0 = mono_ms();
    cr_expect_eq(bw_pool_return(p, a, ca), BW_OK);
    cr_expect_eq(stats_of(p).large_retained_bytes, 128 * KiB);
    sleep_ms(20);
    probe[0] = rent_ok(p, 16, &pcap[0]);
    t1 = mono_ms();
    if (t1 - t0 < DECAY / 2) {
        s = stats_of(p);
        cr_expect_eq(s.large_retained_bytes, 128 * KiB, "given back after %llu ms",
                     (unsigned long long)(t1 - t0));
        cr_expect_eq(s.decayed_bytes, 0);
    }
    sleep_until(t0 + 3 * DECAY);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 128 * KiB, "bw_pool_get_stats must not decay");
    probe[1] = rent_ok(p, 16, &pcap[1]);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, 128 * KiB);
    cr_expect_eq(s.large_retained_bytes, 0);
    cr_expect_eq(s.retained_bytes, 0);
    /* A block returned now is young: kept. */
    cr_expect_eq(bw_pool_return(p, b, cb), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.large_retained_bytes, 256 * KiB);
    cr_expect_eq(s.decayed_bytes, 128 * KiB);
    cr_expect_eq(bw_pool_return(p, probe[0], pcap[0]), BW_OK);
    cr_expect_eq(bw_pool_return(p, probe[1], pcap[1]), BW_OK);
    ta_finish(&ta, p);
}

Test(defaults, trim_frees_everything_at_once_and_is_not_decay)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats s;
    void *b[3];
    size_t cap[3], i;
    size_t sz[3] = { 256, 512 * KiB, 2 * MiB }; /* thread cache, shared level, large */
    uint32_t decays[2] = { DECAY, BW_DECAY_NEVER };
    unsigned k;
    for (k = 0; k < 2; k++) {
        ta_init(&ta, 1);
        o = opts_for(&ta);
        o.decay_ms = decays[k];
        p = mkpool(&o);
        for (i = 0; i < 3; i++) b[i] = rent_ok(p, sz[i], &cap[i]);
        for (i = 0; i < 3; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
        s = stats_of(p);
        cr_expect_eq(s.retained_bytes, 256 + 512 * KiB + 2 * MiB);
        cr_expect_eq(s.large_retained_bytes, 2 * MiB);
        bw_pool_trim(p);
        s = stats_of(p);
        cr_expect_eq(s.retained_bytes, 0, "decay_ms %u", decays[k]);
        cr_expect_eq(s.large_retained_bytes, 0);
        cr_expect_eq(s.backing_frees, 3);
        cr_expect_eq(s.decayed_bytes, 0, "trim is not decay");
        ta_finish(&ta, p);
    }
}

/* ------------------------------------------------------------------ */
/* The learned jump                                                     */
/* ------------------------------------------------------------------ */

Test(defaults, jump_to_learned_size_after_two_big_writers_not_one)
{
    test_alloc ta;
    bw_pool *p;
    size_t caps[32], n, i;
    size_t below[4] = { 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB };
    ta_init(&ta, 1);
    p = learn_pool(&ta, 0, 0);
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    /* Nothing learned yet: the growth rule, at 16 times the capacity past
     * the floor, 64 KiB -> 1 MiB. */
    cr_expect_eq(big_job(p, 100 * KiB, caps, &n), MiB);
    cr_expect_eq(stats_of(p).learned_large_size, 0, "one sample is not enough");
    /* One sample: still the growth rule. */
    cr_expect_eq(big_job(p, 100 * KiB, NULL, NULL), MiB);
    cr_expect_eq(stats_of(p).learned_large_size, 128 * KiB);
    /* Two: straight to the growth rule's size for 100 KiB. */
    cr_expect_eq(big_job(p, 100 * KiB, caps, &n), 128 * KiB);
    cr_expect_eq(n, 5, "capacities: below the threshold as 0.1, then one jump");
    for (i = 0; i < 4 && i < n; i++) cr_expect_eq(caps[i], below[i], "capacity %zu", i);
    if (n == 5) cr_expect_eq(caps[4], 128 * KiB);
    /* A writer that stays small never pays for it. */
    {
        bw_writer w;
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, 1000), BW_OK);
        cr_expect_eq(bw_capacity(&w), 1024);
        cr_assert_eq(bw_write(&w, chunk, 8000), BW_OK);
        cr_expect_eq(bw_capacity(&w), 16 * KiB);
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
    bw_pool *p;
    int i;
    ta_init(&ta, 1);
    p = learn_pool(&ta, 0, 0);
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
    bw_pool *p;
    ta_init(&ta, 1);
    p = learn_pool(&ta, 0, 256 * KiB);
    big_job(p, 600 * KiB, NULL, NULL);
    big_job(p, 600 * KiB, NULL, NULL);
    cr_expect_eq(stats_of(p).learned_large_size, 256 * KiB);
    cr_expect_eq(big_job(p, 600 * KiB, NULL, NULL), 256 * KiB);
    ta_finish(&ta, p);
}

Test(defaults, no_learned_growth_flag_turns_the_jump_off)
{
    test_alloc ta;
    bw_pool *p;
    int i;
    ta_init(&ta, 1);
    p = learn_pool(&ta, BW_POOL_NO_LEARNED_GROWTH, 0);
    for (i = 0; i < 3; i++) cr_expect_eq(big_job(p, 600 * KiB, NULL, NULL), 128 * KiB);
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    ta_finish(&ta, p);
}

Test(defaults, segmented_streaming_and_fixed_writers_neither_record_nor_jump)
{
    static unsigned char fixed_buf[200 * 1024];
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    size_t i, maxfree;
    int k;
    ta_init(&ta, 1);
    p = learn_pool(&ta, 0, 0);
    fill_chunk(7);
    for (k = 0; k < 2; k++) {
        /* segmented, 600 KiB */
        cr_assert_eq(bw_init_chain(&w, p), BW_OK);
        for (i = 0; i < 600 * KiB; i += sizeof chunk)
            cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
        cr_expect_eq(bw_len(&w), 600 * KiB);
        bw_release(&w);
        /* streaming, 200 KiB held in a 256 KiB buffer */
        cr_assert_eq(bw_init_sink(&w, p, 256 * KiB, discard_sink, NULL), BW_OK);
        for (i = 0; i < 200 * KiB; i += sizeof chunk)
            cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
        cr_expect_eq(bw_len(&w), 200 * KiB);
        bw_release(&w);
        /* fixed, 150 KiB */
        cr_assert_eq(bw_init_fixed(&w, fixed_buf, sizeof fixed_buf), BW_OK);
        for (i = 0; i < 150 * KiB; i += sizeof chunk)
            cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
        bw_release(&w);
    }
    cr_expect_eq(stats_of(p).learned_large_size, 0, "only contiguous writers record");
    big_job(p, 600 * KiB, NULL, NULL);
    big_job(p, 600 * KiB, NULL, NULL);
    cr_assert_eq(stats_of(p).learned_large_size, MiB);
    /* A segmented writer's blocks double past the threshold (4 KiB ..
     * 512 KiB for 600 KiB), they do not jump to the learned 1 MiB ... */
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    maxfree = 0;
    for (i = 0; i < 600 * KiB; i += sizeof chunk) {
        cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
        if (bw_free_capacity(&w) > maxfree) maxfree = bw_free_capacity(&w);
    }
    cr_expect_leq(maxfree, 512 * KiB, "a segmented block of %zu", maxfree);
    bw_release(&w);
    /* ... nor when one request needs more than the threshold. */
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    cr_assert_eq(bw_reserve(&w, 100 * KiB), BW_OK);
    cr_expect_geq(bw_free_capacity(&w), 100 * KiB);
    cr_expect_leq(bw_free_capacity(&w), 128 * KiB);
    bw_release(&w);
    /* A streaming writer's block for a big reserve does not jump. */
    cr_assert_eq(bw_init_sink(&w, p, 16 * KiB, discard_sink, NULL), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16 * KiB);
    cr_assert_eq(bw_reserve(&w, 100 * KiB), BW_OK);
    cr_expect_geq(bw_free_capacity(&w), 100 * KiB);
    cr_expect_leq(bw_capacity(&w), 128 * KiB, "streaming block %zu", bw_capacity(&w));
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(defaults, explicit_initial_capacity_is_not_overridden)
{
    static unsigned char buf[100 * 1024];
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    ta_init(&ta, 1);
    p = learn_pool(&ta, 0, 0);
    big_job(p, 600 * KiB, NULL, NULL);
    big_job(p, 600 * KiB, NULL, NULL);
    cr_assert_eq(stats_of(p).learned_large_size, MiB);
    cr_assert_eq(bw_init(&w, p, 100 * KiB), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128 * KiB);
    cr_assert_eq(bw_write(&w, chunk, 1000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128 * KiB);
    bw_release(&w);
    cr_assert_eq(bw_init(&w, p, 1000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 1024);
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_capacity(&w), sizeof buf);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(defaults, bypass_turns_large_retention_off)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats s;
    void *b;
    size_t cap;
    ta_init(&ta, 1);
    p = learn_pool(&ta, BW_POOL_BYPASS, 0);
    b = rent_ok(p, 128 * KiB, &cap);
    cr_expect_eq(cap, 128 * KiB);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    s = stats_of(p);
    cr_expect_eq(s.backing_frees, 1);
    cr_expect_eq(s.large_retained_bytes, 0);
    cr_expect_eq(s.retained_bytes, 0);
    b = rent_ok(p, 128 * KiB, &cap);
    s = stats_of(p);
    cr_expect_eq(s.large_hits, 0);
    cr_expect_eq(s.backing_allocs, 2);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
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

static size_t first_block(bw_pool *p)
{
    bw_writer w;
    size_t cap;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 7), BW_OK);
    cap = bw_capacity(&w);
    bw_release(&w);
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
    ta_init(&ta, 1);
    p = ta_pool_defaults(&ta);
    cr_expect_eq(first_block(p), 512);
    ta_finish(&ta, p);
}

Test(defaults, min_first_block_rounds_up_to_a_class_and_above_threshold_is_einval)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    ta_init(&ta, 1);
    o = opts_for(&ta);
    o.max_pooled_size = TH;
    o.min_first_block = 1000;
    p = mkpool(&o);
    cr_expect_eq(first_block(p), 1024);
    bw_pool_destroy(p);
    o.min_first_block = TH;
    p = mkpool(&o);
    cr_expect_eq(first_block(p), TH);
    bw_pool_destroy(p);
    o.min_first_block = TH + 1;
    p = (bw_pool *)&o;
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    cr_expect_null(p);
    o.min_first_block = 2 * TH;
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    /* The smallest class rounds it too. */
    o.min_first_block = 1;
    o.min_block_size = 64;
    p = mkpool(&o);
    cr_expect_eq(first_block(p), 64);
    ta_finish(&ta, p);
}

Test(defaults, min_first_block_1_is_the_class_of_the_first_write)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    ta_init(&ta, 1);
    o = opts_for(&ta);
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
    bw_pool *p;
    bw_writer w;
    unsigned char buf[40];
    ta_init(&ta, 1);
    p = ta_pool_defaults(&ta);
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
    bw_pool *p;
    bw_writer w;
    int i;
    ta_init(&ta, 1);
    o = opts_for(&ta);
    o.flags = BW_POOL_LEARN_SIZE;
    p = mkpool(&o);
    for (i = 0; i < 3; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, 100), BW_OK);
        bw_release(&w);
    }
    cr_expect_eq(stats_of(p).learned_size, 128);
    cr_expect_eq(first_block(p), 512, "min_first_block beats a smaller learned size");
    for (i = 0; i < 16; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, 5000), BW_OK);
        bw_release(&w);
    }
    cr_expect_eq(stats_of(p).learned_size, 8192);
    cr_expect_eq(first_block(p), 8192, "a larger learned size beats min_first_block");
    bw_pool_destroy(p);
    o.min_first_block = 16 * KiB;
    p = mkpool(&o);
    for (i = 0; i < 3; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, 5000), BW_OK);
        bw_release(&w);
    }
    cr_expect_eq(first_block(p), 16 * KiB);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* Stats                                                                */
/* ------------------------------------------------------------------ */

Test(defaults, large_hits_are_part_of_hits_and_learned_large_size_starts_at_0)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats s;
    void *b;
    size_t cap;
    ta_init(&ta, 1);
    o = opts_for(&ta);
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

Test(defaults, zero_on_return_fresh_blocks_read_as_zeros)
{
    test_alloc ta;
    bw_pool *p;
    void *b[3];
    size_t cap[3], i;
    size_t sz[3] = { 100, 40 * KiB, 128 * KiB }; /* thread-cached class, class, large */
    unsigned flags[2] = { BW_POOL_ZERO_ON_RETURN,
                          BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE };
    unsigned k;
    for (k = 0; k < 2; k++) {
        garbage_init(&ta);
        p = learn_pool(&ta, flags[k], 0);
        for (i = 0; i < 3; i++) {
            b[i] = rent_ok(p, sz[i], &cap[i]);
            cr_expect(all_bytes(b[i], cap[i], 0), "fresh block of %zu holds the allocator's bytes",
                      cap[i]);
        }
        cr_expect_eq(stats_of(p).hits, 0);
        for (i = 0; i < 3; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
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
    unsigned flags[2] = { BW_POOL_ZERO_ON_RETURN,
                          BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE };
    unsigned f;
    for (f = 0; f < 2; f++) {
        garbage_init(&ta);
        p = learn_pool(&ta, flags[f], 0);
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
    ta_init(&ta, 1);
    p = learn_pool(&ta, BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_LARGE_RETENTION, 0);
    for (i = 0; i < 3; i++) {
        b = (unsigned char *)rent_ok(p, 100 * KiB, &cap);
        cr_expect(all_bytes(b, cap, 0), "round %zu: the last renter's bytes", i);
        memset(b, 0x5A, cap);
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    }
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* Defects of 0.1                                                       */
/* ------------------------------------------------------------------ */

/* (a) fork while other threads are inside the pool: the child must be able
 * to use every pool (0.1: a child could hang on a lock another thread held
 * at the fork).
 *
 * Under AddressSanitizer the churning threads use pools over an mmap-backed
 * allocator instead of the shared pool (over malloc): gcc 12's libasan does
 * not hold its allocator lock across fork, so a child forked while another
 * thread is inside ASan's malloc hangs in malloc, whatever the library
 * does. */
#if defined(__SANITIZE_ADDRESS__)
#  define TEST_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TEST_ASAN 1
#  endif
#endif

static void *map_alloc(void *ctx, size_t size)
{
    void *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    (void)ctx;
    return b == MAP_FAILED ? NULL : b;
}

static void map_free(void *ctx, void *block, size_t size)
{
    (void)ctx;
    munmap(block, size);
}

static const bw_allocator map_allocator = { map_alloc, NULL, map_free, NULL };

/* Under valgrind a child's leak report would fail it (the -DBW_VALGRIND
 * build runs with --leak-check=full): the blocks the other threads held, and
 * their caches (which the library leaves alone in the child on purpose: an
 * owner may have been mid-update), are unreachable there. The child's work
 * is still checked; only its exit skips the leak check. Valgrind also makes
 * each child cost about 0.4 s: fewer forks, a longer deadline. */
#if defined(__has_include)
#  if __has_include(<valgrind/valgrind.h>)
#    include <valgrind/valgrind.h>
#    define UNDER_VALGRIND()   (RUNNING_ON_VALGRIND != 0)
#    define CHILD_QUIET_EXIT() VALGRIND_CLO_CHANGE("--leak-check=no")
#  endif
#endif
#ifndef UNDER_VALGRIND
#  define UNDER_VALGRIND()   0
#  define CHILD_QUIET_EXIT() ((void)0)
#endif
#if defined(TEST_ASAN)
#  define FORKS 30 /* a sanitized child costs about 50 ms */
#elif defined(__SANITIZE_THREAD__)
#  define FORKS 50
#  define TEST_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define FORKS 50
#    define TEST_TSAN 1
#  endif
#endif
/* TSan's runtime, like gcc 12's libasan, does not hold its allocator locks
 * across fork: under either, the churning threads use an mmap allocator. */
#if defined(TEST_TSAN) && !defined(TEST_ASAN)
#  define TEST_FORK_MAP 1
#elif defined(TEST_ASAN)
#  define TEST_FORK_MAP 1
#endif
#ifndef FORKS
#  define FORKS 100
#endif

struct churn {
    bw_pool *p;
    _Atomic int stop;
    _Atomic long rounds;
};

static void *churn_main(void *arg)
{
    struct churn *c = (struct churn *)arg;
    static const size_t sizes[] = { 16, 100, 256, 4096, 40 * 1024, 300 * 1024, 1536 * 1024 };
    void *held[4] = { NULL, NULL, NULL, NULL };
    size_t caps[4] = { 0, 0, 0, 0 };
    unsigned i = 0;
    while (!atomic_load(&c->stop)) {
        size_t sz = sizes[i % (sizeof sizes / sizeof sizes[0])];
        unsigned slot = i % 4;
        if (held[slot] != NULL) (void)bw_pool_return(c->p, held[slot], caps[slot]);
        held[slot] = bw_pool_rent(c->p, sz, &caps[slot]);
        if (held[slot] != NULL)
            memset(held[slot], (int)(i & 0xff), caps[slot] < 64 ? caps[slot] : 64);
        if (i % 8 == 0) {
            bw_writer w;
            if (bw_init(&w, c->p, 0) == BW_OK) {
                (void)bw_printf(&w, "churn %u %s", i, "x");
                bw_release(&w);
            }
        }
        if (i % 64 == 0) bw_pool_trim(c->p);
        i++;
        atomic_fetch_add(&c->rounds, 1);
    }
    for (i = 0; i < 4; i++)
        if (held[i] != NULL) (void)bw_pool_return(c->p, held[i], caps[i]);
    return NULL;
}

static int child_cycle(bw_pool *p, size_t sz)
{
    size_t cap;
    unsigned char *b = (unsigned char *)bw_pool_rent(p, sz, &cap);
    if (b == NULL || cap < sz) return 0;
    memset(b, 0x42, sz < 256 ? sz : 256); /* (touching all of it is slow in a fork child) */
    return bw_pool_return(p, b, cap) == BW_OK;
}

static void child_work(bw_pool *a, bw_pool *b)
{
    bw_writer w = BW_WRITER_INIT;
    static const size_t sizes[] = { 16, 256, 4096, 40 * 1024, 300 * 1024, 1536 * 1024 };
    size_t i;
    int ok = 1;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ok &= child_cycle(bw_pool_shared(), sizes[i]);
        ok &= child_cycle(a, sizes[i]);
        ok &= child_cycle(b, sizes[i]);
    }
    ok &= bw_printf(&w, "child %d says %s", 7, "hello") == BW_OK;
    ok &= bw_len(&w) == 18 && memcmp(bw_data(&w), "child 7 says hello", 18) == 0;
    bw_release(&w);
    if (ok) CHILD_QUIET_EXIT();
    _exit(ok ? 0 : 3);
}

Test(defaults, defect_fork_while_other_threads_churn_the_pools, .timeout = 120)
{
    struct churn a, b;
    pthread_t ta_, tb_;
    bw_pool_options o;
    bw_pool *own = NULL;
    /* valgrind runs one thread at a time and a child costs ~0.4 s there: a
     * few forks with a generous deadline, so a loaded machine cannot fail
     * it; the full count runs in the other flavours. */
    int i, hung = 0, bad = 0, forks = UNDER_VALGRIND() ? 4 : FORKS;
    uint64_t wait_ms = UNDER_VALGRIND() ? 30000 : 1000;
    memset(&o, 0, sizeof o);
#ifdef TEST_FORK_MAP
    o.allocator = &map_allocator;
    own = mkpool(&o); /* stands in for the shared pool */
    a.p = own;
#else
    (void)map_allocator;
    a.p = bw_pool_shared();
#endif
    o.flags = BW_POOL_NO_THREAD_CACHE;
    b.p = mkpool(&o);
    atomic_init(&a.stop, 0);
    atomic_init(&b.stop, 0);
    atomic_init(&a.rounds, 0);
    atomic_init(&b.rounds, 0);
    cr_assert_eq(pthread_create(&ta_, NULL, churn_main, &a), 0);
    cr_assert_eq(pthread_create(&tb_, NULL, churn_main, &b), 0);
    while (atomic_load(&a.rounds) < 100 || atomic_load(&b.rounds) < 100) sleep_ms(1);
    for (i = 0; i < forks; i++) {
        int status = 0;
        uint64_t deadline;
        pid_t pid, r;
        fflush(NULL);
        pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) child_work(a.p, b.p);
        deadline = mono_ms() + wait_ms;
        while ((r = waitpid(pid, &status, WNOHANG)) == 0 && mono_ms() < deadline) sleep_ms(1);
        if (r == 0) {
            kill(pid, SIGKILL);
            (void)waitpid(pid, &status, 0);
            hung++;
        } else if (r != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad++;
        }
    }
    atomic_store(&a.stop, 1);
    atomic_store(&b.stop, 1);
    pthread_join(ta_, NULL);
    pthread_join(tb_, NULL);
    cr_expect_eq(hung, 0, "%d of %d children hung", hung, forks);
    cr_expect_eq(bad, 0, "%d of %d children failed", bad, forks);
    bw_pool_destroy(b.p);
    bw_pool_destroy(own);
}

/* (b) a free hook that uses the same pool: hooks must never run under one
 * of the pool's locks. */
typedef struct reent {
    test_alloc ta; /* first: ta_alloc takes the same ctx */
    bw_pool *p;
    size_t when; /* re-enter when a block of this size is freed */
    size_t use;  /* rent and return a block of this size */
    _Atomic int depth;
    _Atomic long reentries;
} reent;

static void reent_free(void *ctx, void *block, size_t size)
{
    reent *r = (reent *)ctx;
    if (r->p != NULL && size == r->when) {
        if (atomic_fetch_add(&r->depth, 1) == 0) {
            size_t cap;
            void *b = bw_pool_rent(r->p, r->use, &cap);
            if (b != NULL) {
                memset(b, 0x11, cap);
                (void)bw_pool_return(r->p, b, cap);
                atomic_fetch_add(&r->reentries, 1);
            }
        }
        atomic_fetch_sub(&r->depth, 1);
    }
    ta_free(&r->ta, block, size);
}

Test(defaults, defect_free_hook_that_uses_the_same_pool_does_not_deadlock, .timeout = 20)
{
    reent r;
    bw_pool_options o;
    bw_pool_stats s;
    void *b[40];
    size_t cap[40], i, nb = 40;
    memset(&r, 0, sizeof r);
    ta_init(&r.ta, 1);
    r.ta.hook.free = reent_free;
    o = opts_for(&r.ta);
    o.flags = BW_POOL_NO_THREAD_CACHE;
    o.max_blocks_per_class = 32;
    o.decay_ms = BW_DECAY_NEVER;
    r.p = mkpool(&o);
    r.when = 64;
    r.use = 64;
    /* Fill the shared level of the 64-byte class and overflow it. */
    for (i = 0; i < nb; i++) b[i] = rent_ok(r.p, 64, &cap[i]);
    for (i = 0; i < nb; i++) cr_expect_eq(bw_pool_return(r.p, b[i], cap[i]), BW_OK);
    cr_expect_eq(stats_of(r.p).retained_bytes, 32 * 64);
    cr_expect_gt(atomic_load(&r.reentries), 0);
    /* Trim frees the class: the hook rents and returns a block of it. */
    bw_pool_trim(r.p);
    s = stats_of(r.p);
    cr_expect_leq(s.retained_bytes, 64, "what the hook returned during trim, at most");
    cr_expect_geq(atomic_load(&r.reentries), (long)nb, "8 on overflow, 32 in trim");
    /* Destroy: fill again; the hook now uses a larger class (which it does
     * not re-enter for, so destroy can finish with nothing left). */
    for (i = 0; i < nb; i++) b[i] = rent_ok(r.p, 64, &cap[i]);
    for (i = 0; i < nb; i++) cr_expect_eq(bw_pool_return(r.p, b[i], cap[i]), BW_OK);
    r.use = 1024;
    bw_pool_destroy(r.p);
    r.p = NULL;
    cr_expect_eq(atomic_load(&r.ta.live_blocks), 0, "blocks leaked: %ld",
                 atomic_load(&r.ta.live_blocks));
    cr_expect_eq(atomic_load(&r.ta.live_bytes), 0);
    cr_expect_eq(atomic_load(&r.ta.size_errors), 0);
}

/* (c) one thread, many pools. */
Test(defaults, defect_one_thread_with_10000_pools, .timeout = 120)
{
    enum { NPOOLS = 10000 };
    test_alloc ta;
    bw_pool **pools;
    void **blocks;
    size_t cap, i;
    bw_pool *p;
    ta_init(&ta, 1);
    pools = (bw_pool **)calloc(NPOOLS, sizeof *pools);
    blocks = (void **)calloc(NPOOLS, sizeof *blocks);
    cr_assert_not_null(pools);
    cr_assert_not_null(blocks);
    for (i = 0; i < NPOOLS; i++) pools[i] = ta_pool_defaults(&ta);
    for (i = 0; i < NPOOLS; i++) {
        blocks[i] = rent_ok(pools[i], 64, &cap);
        cr_assert_eq(cap, 64);
        memset(blocks[i], (int)(i & 0xff), cap);
        cr_assert_eq(bw_pool_return(pools[i], blocks[i], cap), BW_OK);
    }
    /* Each pool's block comes back from this thread's cache for that pool. */
    for (i = 0; i < NPOOLS; i++) {
        void *b = rent_ok(pools[i], 64, &cap);
        cr_assert_eq(b, blocks[i], "pool %zu", i);
        cr_assert_eq(bw_pool_return(pools[i], b, cap), BW_OK);
    }
    for (i = 0; i < NPOOLS; i += 997) {
        bw_pool_stats s = stats_of(pools[i]);
        cr_expect_eq(s.rents, 2, "pool %zu", i);
        cr_expect_eq(s.hits, 1, "pool %zu", i);
        cr_expect_eq(s.retained_bytes, 64, "pool %zu", i);
    }
    for (i = 0; i < NPOOLS; i++) bw_pool_destroy(pools[i]);
    cr_expect_eq(atomic_load(&ta.live_blocks), 0);
    /* A new pool after all that still works on this thread. */
    p = ta_pool_defaults(&ta);
    blocks[0] = rent_ok(p, 64, &cap);
    cr_expect_eq(bw_pool_return(p, blocks[0], cap), BW_OK);
    ta_finish(&ta, p);
    free(pools);
    free(blocks);
}

/* (d) class_size agrees with rent at the edges. */
Test(defaults, defect_class_size_agrees_with_rent_for_0_on_bypass_and_above_ptrdiff_max)
{
    test_alloc ta;
    bw_pool *p;
    size_t cap, huge[2] = { (size_t)PTRDIFF_MAX + 1, SIZE_MAX }, k;
    void *b;
    unsigned flags[2] = { BW_POOL_BYPASS, 0 };
    unsigned f;
    for (f = 0; f < 2; f++) {
        long calls;
        ta_init(&ta, 1);
        p = learn_pool(&ta, flags[f], 0);
        if (flags[f] == BW_POOL_BYPASS) {
            cr_expect_eq(bw_pool_class_size(p, 0), 1);
            b = rent_ok(p, 0, &cap);
            cr_expect_eq(cap, 1);
            cr_expect_eq(cap, bw_pool_class_size(p, 0));
            cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
            cr_expect_eq(bw_pool_class_size(p, 100), 100);
        }
        for (k = 0; k < 2; k++) {
            cr_expect_eq(bw_pool_class_size(p, huge[k]), 0, "flags 0x%x size %zu", flags[f],
                         huge[k]);
            calls = atomic_load(&ta.calls);
            cap = 12345;
            cr_expect_null(bw_pool_rent(p, huge[k], &cap));
            cr_expect_eq(cap, 0);
            cr_expect_eq(atomic_load(&ta.calls), calls, "no allocator call");
        }
        cr_expect_eq(bw_pool_class_size(p, (size_t)PTRDIFF_MAX), (size_t)PTRDIFF_MAX);
        ta_finish(&ta, p);
    }
}

/* (e) the shared pool cannot be destroyed. */
Test(defaults, defect_destroying_the_shared_pool_is_ignored)
{
    bw_writer w = BW_WRITER_INIT;
    bw_pool *shared = bw_pool_shared();
    size_t cap;
    void *b;
    cr_assert_not_null(shared);
    cr_assert_eq(bw_printf(&w, "before %d", 1), BW_OK);
    bw_release(&w);
    b = rent_ok(shared, 100, &cap);
    cr_expect_eq(bw_pool_return(shared, b, cap), BW_OK);
    bw_pool_destroy(bw_pool_shared());
    cr_expect_eq(bw_pool_shared(), shared);
    cr_assert_eq(bw_printf(&w, "after %d", 2), BW_OK);
    cr_expect_eq(bw_len(&w), 7);
    cr_expect(memcmp(bw_data(&w), "after 2", 7) == 0);
    bw_release(&w);
    b = rent_ok(shared, 100, &cap);
    cr_expect_eq(bw_pool_return(shared, b, cap), BW_OK);
    b = rent_ok(shared, 4 * MiB, &cap);
    cr_expect_eq(bw_pool_return(shared, b, cap), BW_OK);
    bw_pool_trim(shared);
}

/* (f) learned_size reports what writers get. */
Test(defaults, defect_learned_size_stat_is_the_size_writers_get)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    int i;
    ta_init(&ta, 1);
    o = opts_for(&ta);
    o.flags = BW_POOL_LEARN_SIZE;
    p = mkpool(&o);
    cr_expect_eq(stats_of(p).learned_size, 0);
    for (i = 0; i < 3; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, 5000), BW_OK);
        bw_release(&w);
    }
    cr_expect_eq(stats_of(p).learned_size, 8192, "learned_size %zu", stats_of(p).learned_size);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), stats_of(p).learned_size);
    bw_release(&w);
    ta_finish(&ta, p);
}
