/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* POSIX 2008 (clock_gettime, nanosleep) */
/* test_pool_threads.c - a pool's thread caches: what a thread's exit does
 * with them, one thread with many pools, decay when the thread cache
 * serves every call, and the medium classes (64 KiB .. 1 MiB) kept within
 * a byte bound per thread and pool (4 MiB). (Several threads on one pool: test_threads.c.
 * Unloading a plugin that embeds bufwriter while threads that used it
 * live: tests/dl/run.sh, make test-dlclose, which needs a separately built
 * plugin that dlclose really unmaps.) */
#include "harness.h"

#include <pthread.h>

/* ------------------------------------------------------------------ */
/* Thread exit with a free hook that writes through bufwriter           */
/* ------------------------------------------------------------------ */

/* What broke (after 0.2): pool P's free hook writes a line through a
 * writer on pool L. A thread's exit cleanup gives its caches back one pool
 * at a time; when it freed P's blocks, the hook's rent and return on L went
 * through the thread's cache for L, already given back but still the
 * thread's current cache: the returned block was parked there and freed
 * with it, one block of L (and its retention budget, and its counts) lost
 * per thread exit. Once the cleanup starts the thread now has no cache, so
 * such calls use L's shared level. */

#define EXIT_THREADS 200

static bw_pool *log_pool;         /* L: the hook's lines go there */
static _Atomic long log_lines;    /* lines written on L           */
static _Atomic long hook_lines;   /* of which by P's free hook    */

static int log_line(const char *what)
{
    bw_writer w;
    bw_pool *l = log_pool;
    int ok;
    if (l == NULL || bw_init(&w, l, 0) != BW_OK) return 0;
    ok = bw_printf(&w, "%s\n", what) == BW_OK && bw_len(&w) == strlen(what) + 1;
    bw_release(&w);
    if (ok) atomic_fetch_add(&log_lines, 1);
    return ok;
}

/* P's free hook: the counting allocator's free, then a line on L. */
static void logging_free(void *ctx, void *block, size_t size)
{
    ta_free(ctx, block, size);
    if (log_line("P freed a block")) atomic_fetch_add(&hook_lines, 1);
}

static bw_pool *exit_pool_p;

/* P first, then L: the thread's cache for L is the newer one, and the exit
 * cleanup gives it back before P's, whose freed blocks then call the hook. */
static void *exit_worker(void *arg)
{
    void *b[2];
    size_t cap[2];
    int i, ok = 1;
    for (i = 0; i < 2; i++) ok &= (b[i] = bw_pool_rent(exit_pool_p, 64, &cap[i])) != NULL;
    for (i = 0; i < 2; i++)
        if (b[i] != NULL) ok &= bw_pool_return(exit_pool_p, b[i], cap[i]) == BW_OK;
    ok &= log_line("thread done");
    return ok ? arg : NULL;
}

Test(pool_threads, thread_exit_with_a_free_hook_that_writes_loses_nothing, .timeout = 120)
{
    test_alloc ta_p, ta_l;
    bw_allocator hook;
    bw_pool_options o;
    bw_pool *p = NULL, *l;
    bw_pool_stats st;
    int i;
    ta_init(&ta_p, 1);
    ta_init(&ta_l, 1);
    hook = ta_p.hook;
    hook.free = logging_free;
    l = ta_pool(&ta_l, 0, 0);
    /* P keeps little: one block per class in the shared level, so of the
     * two blocks in an exiting thread's cache one is freed (the hook). */
    memset(&o, 0, sizeof o);
    o.allocator = &hook;
    o.max_blocks_per_class = 1;
    o.max_retained_bytes = 1024;
    o.decay_ms = BW_DECAY_NEVER;
    o.flags = BW_POOL_NO_LARGE_RETENTION | BW_POOL_NO_LEARNED_GROWTH;
    o.min_first_block = 1;
    p = mkpool(&o);
    log_pool = l;
    exit_pool_p = p;
    /* One thread after another: each exit frees a block of P. */
    for (i = 0; i < EXIT_THREADS; i++) {
        pthread_t th;
        void *ret = NULL;
        cr_assert_eq(pthread_create(&th, NULL, exit_worker, &ta_p), 0);
        cr_assert_eq(pthread_join(th, &ret), 0);
        cr_assert_eq(ret, (void *)&ta_p, "thread %d: the pools did not work", i);
    }
    cr_expect_geq(atomic_load(&hook_lines), EXIT_THREADS,
                  "the free hook ran %ld times", atomic_load(&hook_lines));
    ta_finish(&ta_p, p); /* the hook writes on L again (P's last block) */
    log_pool = NULL;
    /* Every line was one rent and one return of L, all counted. */
    bw_pool_get_stats(l, &st);
    cr_expect_eq(st.rents, (uint64_t)atomic_load(&log_lines), "L: %llu rents for %ld lines",
                 (unsigned long long)st.rents, atomic_load(&log_lines));
    cr_expect_eq(st.returns, st.rents, "L: %llu returns, %llu rents",
                 (unsigned long long)st.returns, (unsigned long long)st.rents);
    cr_expect_eq(st.outstanding_bytes, 0, "L: %zu bytes outstanding", st.outstanding_bytes);
    ta_finish(&ta_l, l); /* L's allocator balances: no block was lost */
}

/* ------------------------------------------------------------------ */
/* One thread, many pools                                               */
/* ------------------------------------------------------------------ */

/* What broke (0.1): a thread had room for the caches of a few pools only.
 * Each pool's block comes back from this thread's cache for that pool. */
Test(pool_threads, one_thread_with_10000_pools, .timeout = 120)
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

/* ------------------------------------------------------------------ */
/* Decay when every call is served by the thread cache                  */
/* ------------------------------------------------------------------ */

/* What broke (after 0.2): decay ran only on slow paths (where the clock is
 * read), so a program whose later calls were all served by the thread
 * cache (small messages) never gave back what its bigger jobs left
 * retained (a kept large block, mid-size blocks in the shared level),
 * however long ago. One rent in 1024 of a class now takes the slow path,
 * which decays: the test makes only small calls after those returns and
 * expects the memory back soon after decay_ms. */
Test(pool_threads, decay_when_the_thread_cache_serves_every_call, .timeout = 60)
{
    enum { DECAY_MS = 100, MID = 64 << 10, NMID = 4, LARGE = 4 << 20 };
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p = NULL;
    bw_pool_stats st;
    void *mid[NMID], *b;
    size_t cap, mid_cap[NMID];
    uint64_t start, now, deadline;
    long pairs = 0;
    int i;
    o.decay_ms = DECAY_MS;
    p = mkpool(&o);
    /* A small block: its class is in the thread cache from now on. */
    b = bw_pool_rent(p, 100, &cap);
    cr_assert_not_null(b);
    cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
    start = mono_ms();
    /* What a bigger job leaves: a kept large block (above the threshold)
     * and mid-size blocks in the shared level (above the thread cache). */
    b = bw_pool_rent(p, LARGE, &cap);
    cr_assert_not_null(b);
    memset(b, 1, 4096);
    cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
    for (i = 0; i < NMID; i++) cr_assert_not_null(mid[i] = bw_pool_rent(p, MID, &mid_cap[i]));
    for (i = 0; i < NMID; i++) cr_assert_eq(bw_pool_return(p, mid[i], mid_cap[i]), BW_OK);
    bw_pool_get_stats(p, &st);
    cr_assert_eq(st.large_retained_bytes, (size_t)LARGE);
    cr_assert_geq(st.retained_bytes, (size_t)LARGE + NMID * MID);
    /* From now on only small rents and returns, all served by the thread
     * cache, until the memory is back (decay_ms after the returns, give or
     * take a clock tick) or a deadline far beyond that. */
    deadline = start + 5000;
    do {
        for (i = 0; i < 1000; i++, pairs++) {
            b = bw_pool_rent(p, 100, &cap);
            cr_assert_not_null(b);
            cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
        }
        bw_pool_get_stats(p, &st); /* changes nothing: no decay here */
        now = mono_ms();
        if (st.large_retained_bytes == 0 && st.retained_bytes < (size_t)MID) break;
    } while (now < deadline);
    cr_expect_eq(st.large_retained_bytes, 0,
                 "%zu large bytes still kept %llu ms after their return (%ld small pairs)",
                 st.large_retained_bytes, (unsigned long long)(now - start), pairs);
    cr_expect_lt(st.retained_bytes, (size_t)MID,
                 "%zu bytes still retained %llu ms after their return (%ld small pairs)",
                 st.retained_bytes, (unsigned long long)(now - start), pairs);
    cr_expect_geq(st.decayed_bytes, (uint64_t)LARGE + NMID * MID);
    /* Not before they were unused for decay_ms (half of it: clock ticks). */
    cr_expect_geq(now - start, (uint64_t)DECAY_MS / 2, "given back after %llu ms",
                  (unsigned long long)(now - start));
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* The medium classes (64 KiB .. 1 MiB): a byte bound per thread        */
/* ------------------------------------------------------------------ */


#define BOUND (4 * MiB) /* the medium classes' bytes per thread and pool */
#define DECAY 100u      /* ms */


/* The other thread: rent and return what `sizes` says (then wait for go). */
/* Another thread on a pool of its own over a counting allocator (ta). */
struct worker {
    pthread_t th;
    test_alloc ta;
    bw_pool *p;
    const size_t *sizes;
    size_t n;
    int idle_ms;          /* after the returns: sleep, then one slow call */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, go;
};

static void *worker_main(void *arg)
{
    struct worker *k = (struct worker *)arg;
    void *b[16];
    size_t cap[16], i;
    for (i = 0; i < k->n; i++) b[i] = bw_pool_rent(k->p, k->sizes[i], &cap[i]);
    for (i = 0; i < k->n; i++)
        if (b[i] != NULL) (void)bw_pool_return(k->p, b[i], cap[i]);
    if (k->idle_ms) {
        size_t c;
        void *x;
        sleep_ms((uint64_t)k->idle_ms);
        x = bw_pool_rent(k->p, 2 * MiB, &c); /* a slow path on this thread */
        if (x != NULL) (void)bw_pool_return(k->p, x, c);
    }
    pthread_mutex_lock(&k->mu);
    k->done = 1;
    pthread_cond_broadcast(&k->cv);
    while (!k->go) pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* A pool over k->ta with a 1 MiB threshold (the default's) and decay_ms,
 * and a thread that rents sizes[0, n) from it and returns them (then idles
 * idle_ms and makes one slow call), and waits for worker_end. Returns the
 * pool; ta_finish(&k->ta, pool) ends it. */
static bw_pool *worker_start(struct worker *k, uint32_t decay_ms, const size_t *sizes, size_t n,
                             int idle_ms)
{
    bw_pool_options o = fresh_opts(&k->ta);
    o.max_pooled_size = MiB;
    o.decay_ms = decay_ms;
    o.flags = BW_POOL_NO_LARGE_RETENTION;
    k->p = mkpool(&o);
    k->sizes = sizes;
    k->n = n;
    k->idle_ms = idle_ms;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    k->done = k->go = 0;
    cr_assert_eq(pthread_create(&k->th, NULL, worker_main, k), 0);
    pthread_mutex_lock(&k->mu);
    while (!k->done) pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
    return k->p;
}

static void worker_end(struct worker *k)
{
    pthread_mutex_lock(&k->mu);
    k->go = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    cr_assert_eq(pthread_join(k->th, NULL), 0);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
}

Test(pool_cache, medium_blocks_stay_in_a_threads_cache_up_to_its_byte_bound)
{
    /* Four 1 MiB blocks fill the bound; the four 64 KiB blocks after them
     * go to the shared level. */
    static const size_t sizes[8] = { MiB, MiB, MiB, MiB, 64 * KiB, 64 * KiB, 64 * KiB, 64 * KiB };
    struct worker k;
    bw_pool *p;
    bw_pool_stats s0, s1;
    void *b[5];
    size_t cap[5];
    p = worker_start(&k, BW_DECAY_NEVER, sizes, 8, 0);
    s0 = stats_of(p);
    cr_expect_eq(s0.retained_bytes, BOUND + 4 * 64 * KiB);
    cr_expect_eq(s0.backing_allocs, 8);
    /* This thread gets the shared level's 64 KiB blocks, none of the other
     * thread's 1 MiB ones. */
    rent_each(p, 4, NULL, 64 * KiB, b, cap);
    b[4] = rent_ok(p, MiB, &cap[4]);
    s1 = stats_of(p);
    cr_expect_eq(s1.hits - s0.hits, 4, "64 KiB hits from the shared level");
    cr_expect_eq(s1.backing_allocs - s0.backing_allocs, 1, "the 1 MiB blocks are the thread's");
    cr_expect_eq(s1.retained_bytes, BOUND);
    return_each(p, 5, b, cap);
    worker_end(&k);
    ta_finish(&k.ta, p);
}

Test(pool_cache, a_threads_medium_blocks_go_back_at_its_exit)
{
    static const size_t sizes[2] = { MiB, 128 * KiB };
    struct worker k;
    bw_pool *p;
    bw_pool_stats s0, s1;
    void *b[2];
    size_t cap[2];
    p = worker_start(&k, BW_DECAY_NEVER, sizes, 2, 0);
    worker_end(&k);
    /* The exit moved them to the shared level: this thread's rents hit. */
    s0 = stats_of(p);
    cr_expect_eq(s0.retained_bytes, MiB + 128 * KiB);
    rent_each(p, 2, sizes, 0, b, cap);
    s1 = stats_of(p);
    cr_expect_eq(s1.hits - s0.hits, 2);
    cr_expect_eq(s1.backing_allocs, s0.backing_allocs);
    return_each(p, 2, b, cap);
    ta_finish(&k.ta, p);
}

Test(pool_cache, medium_blocks_decay_from_an_idle_threads_cache_at_its_next_slow_path)
{
    static const size_t sizes[2] = { MiB, 256 * KiB };
    struct worker k;
    bw_pool *p;
    bw_pool_stats s;
    /* idle, then one slow call, still alive after */
    p = worker_start(&k, DECAY, sizes, 2, 3 * DECAY);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, MiB + 256 * KiB,
                 "blocks idle for 3 x decay_ms in a live thread's cache survived its slow call");
    cr_expect_eq(s.retained_bytes, 0);
    worker_end(&k);
    ta_finish(&k.ta, p);
}
