/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* POSIX 2008 (fork, nanosleep) and MAP_ANONYMOUS */
/* test_pool_regressions.c - the pool's defects that 0.2 fixed, each with the
 * test that guards it: fork while other threads are inside the pool, an
 * allocator hook that uses the pool, one thread with many pools,
 * class_size at the edges, destroying the shared pool, learned_size as
 * writers get it. */
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

Test(pool_regressions, defect_fork_while_other_threads_churn_the_pools, .timeout = 120)
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

Test(pool_regressions, defect_free_hook_that_uses_the_same_pool_does_not_deadlock, .timeout = 20)
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
Test(pool_regressions, defect_one_thread_with_10000_pools, .timeout = 120)
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
Test(pool_regressions, defect_class_size_agrees_with_rent_for_0_on_bypass_and_above_ptrdiff_max)
{
    test_alloc ta;
    bw_pool *p;
    size_t cap, huge[2] = { (size_t)PTRDIFF_MAX + 1, SIZE_MAX }, k;
    void *b;
    unsigned flags[2] = { BW_POOL_BYPASS, 0 };
    unsigned f;
    for (f = 0; f < 2; f++) {
        long calls;
        p = fresh_learn_pool(&ta, flags[f], 0);
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
Test(pool_regressions, defect_destroying_the_shared_pool_is_ignored)
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
Test(pool_regressions, defect_learned_size_stat_is_the_size_writers_get)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    bw_writer w;
    o.flags = BW_POOL_LEARN_SIZE;
    p = mkpool(&o);
    cr_expect_eq(stats_of(p).learned_size, 0);
    small_jobs(p, 3, 5000);
    cr_expect_eq(stats_of(p).learned_size, 8192, "learned_size %zu", stats_of(p).learned_size);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), stats_of(p).learned_size);
    bw_release(&w);
    ta_finish(&ta, p);
}
