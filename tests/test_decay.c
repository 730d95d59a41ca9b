/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* POSIX 2008 (clock_gettime, nanosleep) */
/* test_decay.c - decay (bufwriter.h, section 5 "Pool"): what the pool and
 * the thread caches keep is given back once it is older than decay_ms, at
 * the next slow path or the thread's exit; trim is not decay.
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

#define DECAY 100u       /* ms */

/* ------------------------------------------------------------------ */
/* Decay                                                                 */
/* ------------------------------------------------------------------ */

/* decay_ms DECAY over ta, threshold TH, with extra flags. */
static bw_pool *decay_pool(test_alloc *ta, unsigned flags, uint32_t decay_ms)
{
    bw_pool_options o = fresh_opts(ta); /* every caller wants a fresh count */
    o.max_pooled_size = TH;
    o.flags = flags;
    o.decay_ms = decay_ms;
    return mkpool(&o);
}

/* A decay pool whose thread caches hold 256 KiB blocks (a medium class:
 * max_pooled_size 1 MiB), no large retention. */
static bw_pool *medium_decay_pool(test_alloc *ta)
{
    bw_pool_options o = fresh_opts(ta);
    o.max_pooled_size = 1 * MiB;
    o.flags = BW_POOL_NO_LARGE_RETENTION;
    o.decay_ms = DECAY;
    return mkpool(&o);
}

/* The thread's next slow call (a 2 MiB rent, which no cache serves) gives
 * back the 256 KiB block idle since t0, and p retains `left` bytes then. */
static void expect_big_block_given_back_now(bw_pool *p, uint64_t t0, uint64_t left)
{
    bw_pool_stats s;
    size_t pcap;
    void *probe = rent_ok(p, 2 * MiB, &pcap);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, 256 * KiB, "idle %llu ms, not given back at the next slow call",
                 (unsigned long long)(mono_ms() - t0));
    cr_expect_eq(s.retained_bytes, left);
    cr_expect_eq(bw_pool_return(p, probe, pcap), BW_OK);
}

/* Checked only while less than half of decay_ms has really passed between
 * t0 and t1: nothing was given back yet, p still retains `kept` bytes. */
static void expect_kept_while_young(bw_pool *p, uint64_t t0, uint64_t t1, uint64_t kept)
{
    bw_pool_stats s;
    if (t1 - t0 >= DECAY / 2) return;
    s = stats_of(p);
    cr_expect_eq(s.retained_bytes, kept, "given back after %llu ms", (unsigned long long)(t1 - t0));
    cr_expect_eq(s.decayed_bytes, 0);
}

Test(decay, pooled_block_decays_at_first_slow_return_after_decay_ms_not_before)
{
    test_alloc ta, tn, td;
    bw_pool *p, *never, *dflt;
    bw_pool_stats s;
    void *b, *big, *probe, *bn, *bd;
    size_t cap, bigcap, pcap, cn, cd;
    uint64_t t0, t1;
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
    expect_kept_while_young(p, t0, t1, 4096);
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

Test(decay, thread_cache_block_decays_at_its_threads_first_slow_rent_after_decay_ms)
{
    test_alloc ta;
    bw_pool *p = decay_pool(&ta, BW_POOL_NO_LARGE_RETENTION, DECAY);
    bw_pool_stats s;
    void *b, *probe[2];
    size_t cap, pcap[2];
    uint64_t t0, t1;
    b = rent_ok(p, 256, &cap);
    t0 = mono_ms();
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK); /* into this thread's cache */
    cr_expect_eq(stats_of(p).retained_bytes, 256);
    sleep_ms(20);
    probe[0] = rent_ok(p, 128 * KiB, &pcap[0]); /* a slow path on this thread */
    t1 = mono_ms();
    expect_kept_while_young(p, t0, t1, 256);
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

/* Issue 34: a 256 KiB block idle in the thread cache for 4 x decay_ms was
 * not given back at the thread's next slow call while the thread kept
 * serving small messages from its cache: the cache judged the age of all
 * its blocks by one count of its operations, so each small rent made the
 * idle block look young, and it went back only at a slow call decay_ms
 * after the first. Each class is judged by its own count now. The check
 * needs no tight timing: the block is idle at least 4 x decay_ms when the
 * slow call comes, and it must be given back then. */
Test(decay, idle_block_decays_at_next_slow_call_while_small_messages_use_the_cache)
{
    test_alloc ta;
    bw_pool *p = medium_decay_pool(&ta);
    void *big, *small;
    size_t bigcap, scap;
    uint64_t t0;
    int i;
    big = rent_ok(p, 256 * KiB, &bigcap);
    for (i = 0; i < 2; i++) { /* the small class's slot: later calls are fast */
        small = rent_ok(p, 64, &scap);
        cr_expect_eq(bw_pool_return(p, small, scap), BW_OK);
    }
    cr_expect_eq(bw_pool_return(p, big, bigcap), BW_OK); /* into this thread's cache */
    t0 = mono_ms();
    cr_expect_eq(stats_of(p).retained_bytes, 256 * KiB + 64);
    /* Small messages every few ms, served by the cache alone. */
    while (mono_ms() < t0 + 4 * DECAY) {
        small = rent_ok(p, 64, &scap);
        cr_expect_eq(bw_pool_return(p, small, scap), BW_OK);
        sleep_ms(5);
    }
    cr_expect_eq(stats_of(p).decayed_bytes, 0, "decayed without a slow call");
    expect_big_block_given_back_now(p, t0, 64);
    ta_finish(&ta, p);
}

/* Issue 34, the same with the big block's own return on the fast path: it
 * was rented and returned twice (the second time served by the cache),
 * then left idle 4 x decay_ms. A return above the small classes reads the
 * clock, so its age starts there and the thread's next slow call gives it
 * back. */
Test(decay, a_big_block_returned_twice_decays_at_the_next_slow_call)
{
    test_alloc ta;
    bw_pool *p = medium_decay_pool(&ta);
    void *big;
    size_t bigcap;
    uint64_t t0;
    int i;
    for (i = 0; i < 2; i++) {
        big = rent_ok(p, 256 * KiB, &bigcap);
        cr_expect_eq(bw_pool_return(p, big, bigcap), BW_OK);
    }
    t0 = mono_ms();
    cr_expect_eq(stats_of(p).retained_bytes, 256 * KiB);
    sleep_until(t0 + 4 * DECAY);
    expect_big_block_given_back_now(p, t0, 0);
    ta_finish(&ta, p);
}

/* The same with the block a writer's job ended in: a 256 KiB job's
 * release records its length for the learned jump and returns its medium
 * block with one clock read between them, and the block's age still
 * starts at that return. Two jobs, so the second takes its block from the
 * cache at its first move; the smaller blocks of the climb stay (their
 * returns read no clock, and each job used them). */
Test(decay, a_big_block_a_writer_released_twice_decays_at_the_next_slow_call)
{
    test_alloc ta;
    bw_pool *p = medium_decay_pool(&ta);
    static unsigned char chunk[8 * KiB];
    uint64_t t0;
    int i;
    size_t off, held;
    for (i = 0; i < 2; i++) {
        bw_writer w;
        cr_expect_eq(bw_init(&w, p, 0), BW_OK);
        for (off = 0; off < 256 * KiB; off += sizeof chunk)
            cr_expect_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
        cr_expect_eq(bw_len(&w), 256 * KiB);
        bw_release(&w);
    }
    t0 = mono_ms();
    held = stats_of(p).retained_bytes;
    cr_expect_geq(held, 256 * KiB);
    cr_expect_lt(held, 512 * KiB);
    sleep_until(t0 + 4 * DECAY);
    expect_big_block_given_back_now(p, t0, held - 256 * KiB);
    ta_finish(&ta, p);
}

/* Until the clock passes `until`, every 5 ms: `stream` rents and returns
 * of 256 B (the fast path), then one of `slow` bytes (a slow call, which
 * runs decay); 1 as soon as decay has given anything back, else 0. *t1 is
 * the last slow call's time, *gap the longest time between two. */
static int slow_calls_until_decay(bw_pool *p, uint64_t until, int stream, size_t slow,
                                  uint64_t *t1, uint64_t *gap)
{
    while (mono_ms() < until) {
        size_t c;
        void *x;
        int i;
        for (i = 0; i < stream; i++) {
            x = rent_ok(p, 256, &c);
            cr_expect_eq(bw_pool_return(p, x, c), BW_OK);
        }
        x = rent_ok(p, slow, &c);
        cr_expect_eq(bw_pool_return(p, x, c), BW_OK);
        if (*t1 != 0 && mono_ms() - *t1 > *gap) *gap = mono_ms() - *t1;
        *t1 = mono_ms();
        if (stats_of(p).decayed_bytes != 0) return 1;
        sleep_ms(5);
    }
    return 0;
}

/* The low-water mark: of two blocks in one class, the one a stream of
 * rents and returns keeps using stays, the one below it, untouched since
 * the stream began, goes back at a slow call once it has been idle past a
 * decay pass, and never younger than decay_ms. The fast path pops only
 * above the mark and the slow path lowers it (the pop that would go below
 * it is the slow path's): this holds the rule where it is now counted. */
Test(decay, busy_class_keeps_its_used_block_and_gives_back_the_idle_one)
{
    test_alloc ta;
    bw_pool *p = medium_decay_pool(&ta);
    void *a, *b;
    size_t ca, cb;
    uint64_t t0, t1 = 0, gap = 0;
    int decayed;
    a = rent_ok(p, 256, &ca);
    b = rent_ok(p, 256, &cb);
    cr_expect_eq(bw_pool_return(p, a, ca), BW_OK);
    cr_expect_eq(bw_pool_return(p, b, cb), BW_OK); /* on top: the stream's */
    t0 = mono_ms();
    decayed = slow_calls_until_decay(p, t0 + 8 * DECAY, 50, 2 * MiB, &t1, &gap);
    cr_expect(decayed, "the idle block never decayed in %u ms", 8 * DECAY);
    /* As in the test above: the coarse clock's tick, and a busy VM. */
    if (decayed)
        cr_expect_geq(t1 - t0 + 10, DECAY, "decayed %llu ms after its return",
                      (unsigned long long)(t1 - t0));
    /* The stream's block is used every few ms: it stays, unless the
     * machine stalled the stream for half of decay_ms or more (then it
     * may have been idle that long, and its going back is decay too). */
    if (gap < DECAY / 2) {
        cr_expect_eq(stats_of(p).decayed_bytes, 256, "the stream's block went too");
        cr_expect_eq(stats_of(p).retained_bytes, 256);
    }
    /* The stream's block is still this thread's cache's: no backing call. */
    if (gap < DECAY / 2) {
        uint64_t allocs = stats_of(p).backing_allocs;
        size_t c;
        void *x = rent_ok(p, 256, &c);
        cr_expect_eq(stats_of(p).backing_allocs, allocs);
        cr_expect_eq(bw_pool_return(p, x, c), BW_OK);
    }
    ta_finish(&ta, p);
}

Test(decay, thread_cache_block_is_never_given_back_younger_than_decay_ms)
{
    test_alloc ta;
    bw_pool *p = decay_pool(&ta, BW_POOL_NO_LARGE_RETENTION, DECAY);
    void *b;
    size_t cap;
    uint64_t t0, t1 = 0, gap = 0;
    int decayed;
    b = rent_ok(p, 256, &cap);
    t0 = mono_ms();
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    /* A slow call on this thread every 5 ms. */
    decayed = slow_calls_until_decay(p, t0 + 6 * DECAY, 0, 128 * KiB, &t1, &gap);
    cr_expect(decayed, "a thread-cached block never decayed with slow calls for %u ms", 6 * DECAY);
    /* The pool reads CLOCK_MONOTONIC_COARSE, which steps by a tick (4 ms
     * on Linux at HZ=250) and can lag a tick more after a sleep on a busy
     * VM: a block returned just after a step looks that much older. This
     * run measured 94 ms once under ASan and load with 5 ms allowed, so
     * allow 10 ms (two and a half ticks) below decay_ms. */
    if (decayed)
        cr_expect_geq(t1 - t0 + 10, DECAY, "decayed %llu ms after its return",
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

Test(decay, thread_cache_decays_at_its_threads_exit)
{
    test_alloc ta;
    bw_pool *p;
    pthread_t th;
    struct exit_arg a;
    bw_pool_stats s;
    void *r, *probe;
    size_t pcap;
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

Test(decay, kept_large_block_decays_at_first_slow_rent_after_decay_ms_not_before)
{
    test_alloc ta;
    bw_pool *p = decay_pool(&ta, BW_POOL_NO_THREAD_CACHE, DECAY);
    bw_pool_stats s;
    void *a, *b, *probe[2];
    size_t ca, cb, pcap[2];
    uint64_t t0, t1;
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

Test(decay, trim_frees_everything_at_once_and_is_not_decay)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats s;
    void *b[3];
    size_t cap[3];
    size_t sz[3] = { 256, 512 * KiB, 2 * MiB }; /* thread cache, shared level, large */
    uint32_t decays[2] = { DECAY, BW_DECAY_NEVER };
    unsigned k;
    for (k = 0; k < 2; k++) {
        o = fresh_opts(&ta);
        o.decay_ms = decays[k];
        p = mkpool(&o);
        rent_each(p, 3, sz, 0, b, cap);
        return_each(p, 3, b, cap);
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
