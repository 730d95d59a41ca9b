/* tcache.c - per-thread caches in front of the pool's shared level.
 *
 * Each thread keeps, per pool it has used, a bw__tcache: up to
 * BW_THREAD_CACHE_SLOTS blocks per class, used without locks. The caches of
 * one thread form a list in thread-local storage; the caches of one pool
 * form a registry in the pool, guarded by one process-wide lock (taken only
 * when a cache is created or ends, and for stats/trim/destroy, never on the
 * rent/return fast path).
 *
 * Lifetimes, the part that is easy to get wrong:
 *   - thread exit: a pthread key destructor flushes every cache of the
 *     thread into its pool (shared level, or freed) and frees the caches;
 *   - pool destroy: frees the blocks of every registered cache and marks
 *     each cache orphaned (pool_id = 0) under the lock, so a later thread
 *     exit never touches the destroyed pool. An orphaned cache is freed by
 *     its thread, at exit or when it next creates a cache.
 * Pool ids are never reused, so a new pool at a destroyed pool's address
 * never matches an old cache. */
#include "pool_internal.h"
#include "track.h"

#include <stdlib.h>
#include <string.h>

/* The empty cache every thread starts with: pool id 0 matches no pool. */
static bw__tcache bw__no_cache;

_Thread_local bw__tcache *bw__tl_last BW__TLS_MODEL = &bw__no_cache;
static _Thread_local bw__tcache *bw__tl_head BW__TLS_MODEL;

static pthread_mutex_t bw__reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t bw__exit_key;
static pthread_once_t bw__exit_once = PTHREAD_ONCE_INIT;
static bool bw__exit_key_ok;
static _Atomic uint64_t bw__pool_ids;

BW__INTERNAL uint64_t bw__next_pool_id(void)
{
    return atomic_fetch_add_explicit(&bw__pool_ids, 1, memory_order_relaxed) + 1;
}

static void bw__reg_unlink(bw__tcache *tc)
{
    if (tc->pool_prev) tc->pool_prev->pool_next = tc->pool_next;
    else tc->pool->caches = tc->pool_next;
    if (tc->pool_next) tc->pool_next->pool_prev = tc->pool_prev;
    tc->pool_prev = tc->pool_next = NULL;
}

/* Add tc's counts to s: its slow-path counters, and what its push/pop
 * counters mean (a pop is a hit and bytes out, a push a return). */
static void bw__tcache_totals(bw__tcache *tc, bw__sums *s, size_t *held)
{
    bw_pool *p = tc->pool;
    unsigned ci;
    bw__sums_add(s, &tc->ctr);
    for (ci = 0; ci < p->nclasses; ci++) {
        uint64_t push = atomic_load_explicit(&tc->n[ci].push, memory_order_relaxed);
        uint64_t pop = atomic_load_explicit(&tc->n[ci].pop, memory_order_relaxed);
        s->hits += pop;
        s->returns += push;
        s->out_bytes += (pop - push) * (uint64_t)(p->min_size << ci);
        if (held) *held += (size_t)(push - pop) * (p->min_size << ci);
    }
}

BW__INTERNAL void bw__tcache_flush(bw__tcache *tc, bool to_shared)
{
    bw_pool *p = tc->pool;
    unsigned ci;
    for (ci = 0; ci < p->nclasses; ci++) {
        size_t cap = p->min_size << ci, n;
        while ((n = bw__tc_held(tc, ci)) > 0) {
            void *b = tc->slots[ci * BW_THREAD_CACHE_SLOTS + n - 1];
            /* Taking a block out is not a rent: undo the hit and the bytes
             * out that the pop counter will report for it. */
            bw__inc(&tc->n[ci].pop);
            BW__TC_ADD(tc, hits, (uint64_t)0 - 1);
            BW__TC_ADD(tc, out_bytes, (uint64_t)0 - cap);
            if (!to_shared || !bw__shared_push(p, ci, b))
                bw__backing_free(p, tc, b, cap);
        }
        bw__budget_give(p, (size_t)tc->resv[ci] * cap);
        tc->resv[ci] = 0;
    }
}

/* Thread exit: every cache of this thread goes back to its pool. */
static void bw__thread_exit(void *head)
{
    bw__tcache *tc, *next;
    pthread_mutex_lock(&bw__reg_lock);
    for (tc = (bw__tcache *)head; tc != NULL; tc = tc->thread_next) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) == 0) continue;
        bw__sums s;
        memset(&s, 0, sizeof s);
        bw__tcache_flush(tc, true);
        bw__tcache_totals(tc, &s, NULL);
        bw__counters_fold(&tc->pool->ctr, &s);
        bw__reg_unlink(tc);
    }
    pthread_mutex_unlock(&bw__reg_lock);
    for (tc = (bw__tcache *)head; tc != NULL; tc = next) {
        next = tc->thread_next;
        free(tc);
    }
    /* A later destructor of another library may use a pool again: it then
     * starts a fresh cache and sets the key again. */
    bw__tl_head = NULL;
    bw__tl_last = &bw__no_cache;
}

static void bw__exit_key_init(void)
{
    bw__exit_key_ok = pthread_key_create(&bw__exit_key, bw__thread_exit) == 0;
}

/* Free this thread's caches whose pool has been destroyed. */
static void bw__drop_orphans(void)
{
    bw__tcache **pp = &bw__tl_head;
    while (*pp != NULL) {
        bw__tcache *tc = *pp;
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) == 0) {
            *pp = tc->thread_next;
            if (bw__tl_last == tc) bw__tl_last = &bw__no_cache;
            free(tc);
        } else {
            pp = &tc->thread_next;
        }
    }
    /* The exit hook walks the list from the key's value: keep it the head. */
    (void)pthread_setspecific(bw__exit_key, bw__tl_head);
}

BW__INTERNAL bw__tcache *bw__tcache_get_slow(bw_pool *p)
{
    bw__tcache *tc;
    for (tc = bw__tl_head; tc != NULL; tc = tc->thread_next) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) {
            bw__tl_last = tc;
            return tc;
        }
    }
    pthread_once(&bw__exit_once, bw__exit_key_init);
    /* Without the exit hook a cache would leak its blocks at thread exit:
     * then this thread uses the shared level only. */
    if (!bw__exit_key_ok) return NULL;
    bw__drop_orphans();
    tc = (bw__tcache *)calloc(1, sizeof *tc +
                              (size_t)p->nclasses * BW_THREAD_CACHE_SLOTS * sizeof(void *));
    if (tc == NULL) return NULL;
    if (pthread_setspecific(bw__exit_key, tc) != 0) {
        free(tc);
        return NULL;
    }
    tc->pool = p;
    atomic_store_explicit(&tc->pool_id, p->id, memory_order_relaxed);
    tc->thread_next = bw__tl_head;
    bw__tl_head = tc;
    pthread_mutex_lock(&bw__reg_lock);
    tc->pool_next = p->caches;
    if (p->caches) p->caches->pool_prev = tc;
    p->caches = tc;
    pthread_mutex_unlock(&bw__reg_lock);
    bw__tl_last = tc;
    return tc;
}

BW__INTERNAL void bw__tcache_orphan_all(bw_pool *p)
{
    bw__tcache *tc, *next;
    pthread_mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = next) {
        next = tc->pool_next;
        bw__tcache_flush(tc, false);
        tc->pool_prev = tc->pool_next = NULL;
        atomic_store_explicit(&tc->pool_id, 0, memory_order_release);
    }
    p->caches = NULL;
    pthread_mutex_unlock(&bw__reg_lock);
}

BW__INTERNAL void bw__tcache_sum(bw_pool *p, bw__sums *s, size_t *held)
{
    bw__tcache *tc;
    pthread_mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = tc->pool_next) bw__tcache_totals(tc, s, held);
    pthread_mutex_unlock(&bw__reg_lock);
}

BW__INTERNAL void bw__tcache_trim_self(bw_pool *p)
{
    bw__tcache *tc;
    for (tc = bw__tl_head; tc != NULL; tc = tc->thread_next) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) {
            bw__tcache_flush(tc, false);
            return;
        }
    }
}
