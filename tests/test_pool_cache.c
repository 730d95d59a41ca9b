/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* POSIX 2008 (clock_gettime, nanosleep) */
/* test_pool_cache.c - the thread caches' medium classes (bufwriter.h,
 * section 5 "Pool"): blocks of 64 KiB .. 1 MiB are kept per thread, within
 * a bound in bytes per thread and pool (4 MiB), and given back by decay at
 * the thread's next slow path and at its exit. What a thread's cache holds
 * is seen from another thread: its blocks are no hits there. */
#include "harness.h"

#include <pthread.h>

#define BOUND (4 * MiB) /* the medium classes' bytes per thread and pool */
#define DECAY 100u      /* ms */

/* A pool over ta with a 1 MiB threshold (the default's) and decay_ms. */
static bw_pool *medium_pool(test_alloc *ta, uint32_t decay_ms)
{
    bw_pool_options o = fresh_opts(ta);
    o.max_pooled_size = MiB;
    o.decay_ms = decay_ms;
    o.flags = BW_POOL_NO_LARGE_RETENTION;
    return mkpool(&o);
}

/* The other thread: rent and return what `sizes` says (then wait for go). */
struct worker {
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

static void worker_start(struct worker *k, pthread_t *th)
{
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    k->done = k->go = 0;
    cr_assert_eq(pthread_create(th, NULL, worker_main, k), 0);
    pthread_mutex_lock(&k->mu);
    while (!k->done) pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
}

static void worker_end(struct worker *k, pthread_t th)
{
    pthread_mutex_lock(&k->mu);
    k->go = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    cr_assert_eq(pthread_join(th, NULL), 0);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
}

Test(pool_cache, medium_blocks_stay_in_a_threads_cache_up_to_its_byte_bound)
{
    /* Four 1 MiB blocks fill the bound; the four 64 KiB blocks after them
     * go to the shared level. */
    static const size_t sizes[8] = { MiB, MiB, MiB, MiB, 64 * KiB, 64 * KiB, 64 * KiB, 64 * KiB };
    test_alloc ta;
    bw_pool *p = medium_pool(&ta, BW_DECAY_NEVER);
    struct worker k;
    pthread_t th;
    bw_pool_stats s0, s1;
    void *b[5];
    size_t cap[5], i;
    k.p = p;
    k.sizes = sizes;
    k.n = 8;
    k.idle_ms = 0;
    worker_start(&k, &th);
    s0 = stats_of(p);
    cr_expect_eq(s0.retained_bytes, BOUND + 4 * 64 * KiB);
    cr_expect_eq(s0.backing_allocs, 8);
    /* This thread gets the shared level's 64 KiB blocks, none of the other
     * thread's 1 MiB ones. */
    for (i = 0; i < 4; i++) b[i] = rent_ok(p, 64 * KiB, &cap[i]);
    b[4] = rent_ok(p, MiB, &cap[4]);
    s1 = stats_of(p);
    cr_expect_eq(s1.hits - s0.hits, 4, "64 KiB hits from the shared level");
    cr_expect_eq(s1.backing_allocs - s0.backing_allocs, 1, "the 1 MiB blocks are the thread's");
    cr_expect_eq(s1.retained_bytes, BOUND);
    for (i = 0; i < 5; i++) cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK);
    worker_end(&k, th);
    ta_finish(&ta, p);
}

Test(pool_cache, a_threads_medium_blocks_go_back_at_its_exit)
{
    static const size_t sizes[2] = { MiB, 128 * KiB };
    test_alloc ta;
    bw_pool *p = medium_pool(&ta, BW_DECAY_NEVER);
    struct worker k;
    pthread_t th;
    bw_pool_stats s0, s1;
    void *b[2];
    size_t cap[2];
    k.p = p;
    k.sizes = sizes;
    k.n = 2;
    k.idle_ms = 0;
    worker_start(&k, &th);
    worker_end(&k, th);
    /* The exit moved them to the shared level: this thread's rents hit. */
    s0 = stats_of(p);
    cr_expect_eq(s0.retained_bytes, MiB + 128 * KiB);
    b[0] = rent_ok(p, MiB, &cap[0]);
    b[1] = rent_ok(p, 128 * KiB, &cap[1]);
    s1 = stats_of(p);
    cr_expect_eq(s1.hits - s0.hits, 2);
    cr_expect_eq(s1.backing_allocs, s0.backing_allocs);
    cr_expect_eq(bw_pool_return(p, b[0], cap[0]), BW_OK);
    cr_expect_eq(bw_pool_return(p, b[1], cap[1]), BW_OK);
    ta_finish(&ta, p);
}

Test(pool_cache, medium_blocks_decay_from_an_idle_threads_cache_at_its_next_slow_path)
{
    static const size_t sizes[2] = { MiB, 256 * KiB };
    test_alloc ta;
    bw_pool *p = medium_pool(&ta, DECAY);
    struct worker k;
    pthread_t th;
    bw_pool_stats s;
    k.p = p;
    k.sizes = sizes;
    k.n = 2;
    k.idle_ms = 3 * DECAY; /* idle, then one slow call, still alive after */
    worker_start(&k, &th);
    s = stats_of(p);
    cr_expect_eq(s.decayed_bytes, MiB + 256 * KiB,
                 "blocks idle for 3 x decay_ms in a live thread's cache survived its slow call");
    cr_expect_eq(s.retained_bytes, 0);
    worker_end(&k, th);
    ta_finish(&ta, p);
}
