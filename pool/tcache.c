/* SPDX-License-Identifier: MIT */
/* tcache.c - per-thread caches in front of the pool's shared level, and
 * what the caches need across fork (the handlers are in fork.c).
 *
 * Each thread keeps, per pool it has used, a bw__tcache: up to
 * BW_THREAD_CACHE_SLOTS blocks per class (classes up to BW__TCACHE_MAX),
 * used without locks. A thread finds its cache for a pool in O(1): the last
 * one used (one TLS load, the rent/return fast path), else a per-thread hash
 * table keyed by pool id. The caches of one pool form a registry in the pool,
 * guarded by one process-wide lock (taken only when a cache is created or
 * ends, and for stats/trim/destroy, never on the fast path).
 *
 * Lifetimes, the part that is easy to get wrong:
 *   - thread exit: the platform's thread-exit hook (a pthread key's
 *     destructor; on Windows a fiber-local slot's) flushes every cache of the
 *     thread into its pool (shared level, or freed) and frees the caches;
 *     the thread has no cache from the start of that cleanup, so a hook
 *     it calls that uses a pool goes to the shared level;
 *   - unload (dlclose of a plugin that embeds the library, or exit): the
 *     key is deleted, so that destructor never runs in unmapped code; the
 *     caches of live threads then leak (bw__unload);
 *   - pool destroy: takes the blocks of every registered cache and marks
 *     each cache orphaned (pool_id = 0) under the lock, so a later thread
 *     exit never touches the destroyed pool. An orphaned cache is freed by
 *     its thread, at exit or when its table is rebuilt;
 *   - allocator hooks are never called with a lock held (a hook may use
 *     bufwriter itself): blocks to free are gathered under the lock and
 *     freed after it; destroy waits for exiting threads still doing so;
 *   - fork: the child drops the caches of the threads it does not have
 *     (bw__tcache_fork_child, called by fork.c's handlers).
 * Pool ids are never reused, so a new pool at a destroyed pool's address
 * never matches an old cache. */
#include "pool_internal.h"
#include "track.h"

#include <stdlib.h>
#include <string.h>

/* The empty cache every thread starts with: pool id 0 matches no pool, a
 * first_back of SIZE_MAX no capacity, a shared_first of 0 no size. */
static bw__tcache bw__no_cache = {.first_back = SIZE_MAX};

BW__THREAD_LOCAL bw__tcache *bw__tl_last = &bw__no_cache;
static BW__THREAD_LOCAL bw__tcache *bw__tl_head;
/* This thread's caches by pool id: open addressing, linear probing. */
static BW__THREAD_LOCAL bw__tcache **bw__tl_map;
static BW__THREAD_LOCAL size_t bw__tl_mask, bw__tl_used;
/* Set while this thread's exit cleanup runs: the thread has no cache then. */
static BW__THREAD_LOCAL bool bw__tl_exiting;

static bw__mutex bw__reg_lock = BW__MUTEX_INIT;
static bw__once bw__exit_once = BW__ONCE_INIT;
/* The key exists and is ours: set once it is created, cleared when the
 * library is unloaded (bw__unload). Without it no cache is created. */
static _Atomic bool bw__exit_key_ok;
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
    for (ci = 0; ci < p->tc_classes; ci++) {
        uint64_t push = atomic_load_explicit(&tc->cls[ci].push, memory_order_relaxed);
        uint64_t pop = atomic_load_explicit(&tc->cls[ci].pop, memory_order_relaxed);
        s->hits += pop;
        s->returns += push;
        s->out_bytes += (pop - push) * (uint64_t)(p->opt.min_block_size << ci);
        if (held) *held += (size_t)(push - pop) * (p->opt.min_block_size << ci);
    }
}

/* Give back the budget of class ci's reserved slots beyond the first
 * `keep`, and their share of the medium bound. */
static void bw__tcache_unreserve(bw__tcache *tc, unsigned ci, size_t keep)
{
    bw_pool *p = tc->pool;
    size_t cap = p->opt.min_block_size << ci, k;
    if (tc->cls[ci].resv <= keep) return;
    k = tc->cls[ci].resv - keep;
    bw__budget_give(p, k * cap);
    if (cap > BW__TCACHE_SMALL) tc->medium -= k * cap;
    tc->cls[ci].resv = (unsigned char)keep;
}

/* Take the bottom k blocks of class ci out of tc (not a rent: the hit and
 * the bytes out that the pop counter reports for them are undone) and give
 * back their slots' budget. */
static void bw__tcache_take(bw__tcache *tc, unsigned ci, size_t k, bw__frees *f)
{
    bw_pool *p = tc->pool;
    bw__tc_class *c = &tc->cls[ci];
    size_t cap = p->opt.min_block_size << ci, n = bw__tc_held(tc, ci), i;
    for (i = 0; i < k; i++) {
        f->e[f->n].block = c->slots[i];
        f->e[f->n].size = cap;
        f->n++;
    }
    memmove(c->slots, c->slots + k, (n - k) * sizeof *c->slots);
    /* The low-water mark counts untouched blocks from the bottom. */
    c->low = (unsigned char)(c->low > k ? c->low - k : 0);
    atomic_store_explicit(&c->pop, atomic_load_explicit(&c->pop, memory_order_relaxed) + k,
                          memory_order_relaxed);
    BW__TC_ADD(tc, hits, (uint64_t)0 - k);
    BW__TC_ADD(tc, out_bytes, (uint64_t)0 - k * cap);
    bw__tcache_unreserve(tc, ci, n - k);
}

BW__INTERNAL void bw__tcache_flush(bw__tcache *tc, bool to_shared, bw__frees *f)
{
    bw_pool *p = tc->pool;
    uint64_t now = to_shared && p->opt.decay_ms != BW_DECAY_NEVER ? bw__now_ms() : 0;
    unsigned ci;
    for (ci = 0; ci < p->tc_classes; ci++) {
        size_t n = bw__tc_held(tc, ci), first = f->n, i;
        bw__tcache_take(tc, ci, n, f);
        if (to_shared) { /* keep what the shared level takes */
            size_t kept = first;
            for (i = first; i < f->n; i++)
                if (!bw__shared_push(p, ci, f->e[i].block, now)) f->e[kept++] = f->e[i];
            f->n = kept;
        }
        bw__tcache_unreserve(tc, ci, 0);
    }
}

BW__INTERNAL void bw__tcache_seen(bw_pool *p, bw__tcache *tc, uint64_t now)
{
    unsigned ci;
    for (ci = 0; ci < p->tc_classes; ci++) {
        uint64_t ops = bw__tc_ops(tc, ci);
        if (ops != tc->seen[ci].ops) {
            tc->seen[ci].ops = ops;
            tc->seen[ci].ms = now;
        }
    }
}

/* Decay of a thread's own cache, gathered into f. Two ways to know a block
 * is old enough: its class untouched since a slow call saw it decay_ms ago
 * (then all its blocks go), or the blocks below the class's low-water mark,
 * untouched since the last decay, decay_ms or more ago. Each class is
 * judged by its own count: a thread whose small messages keep one class
 * busy on the fast path still gives back, at its next slow call, the big
 * block another class has held untouched for decay_ms.
 *
 * An empty class is skipped: it has nothing to give back, its mark is 0
 * already (the mark is never above what a class holds: a pop below it is
 * the slow path's, which lowers it), and its count is judged at the first
 * slow call that finds a block in it, which sees the count moved since
 * (the block's push) and ages the block from then, as it would have with
 * the count noted here. Most of a cache's 17 classes are empty: J's
 * 4 MiB job's two passes (its large rent and return) took 986
 * instructions, 608 with the skip (make -C bench callgrind). */
static uint64_t bw__tcache_decay_into(bw_pool *p, bw__tcache *tc, uint64_t now, bw__frees *f)
{
    uint64_t bytes = 0;
    bool pass = now - tc->last_decay >= p->opt.decay_ms;
    unsigned ci;
    for (ci = 0; ci < p->tc_classes; ci++) {
        bw__tc_seen *seen = &tc->seen[ci];
        size_t n = bw__tc_held(tc, ci), k = 0;
        uint64_t ops;
        if (n == 0) continue;
        ops = bw__tc_ops(tc, ci);
        if (ops != seen->ops) {
            seen->ops = ops;
            seen->ms = now;
        } else if (now - seen->ms >= p->opt.decay_ms) {
            k = n;
        }
        if (pass && k < tc->cls[ci].low) k = tc->cls[ci].low < n ? tc->cls[ci].low : n;
        if (k != 0) {
            bw__tcache_take(tc, ci, k, f);
            bytes += (uint64_t)k * (p->opt.min_block_size << ci);
            /* Taken is not used: what is left keeps its age. */
            seen->ops = bw__tc_ops(tc, ci);
        }
        if (pass) tc->cls[ci].low = (unsigned char)(n - k);
    }
    if (pass) tc->last_decay = now;
    if (bytes) BW__TC_ADD(tc, decayed, bytes);
    return bytes;
}

BW__INTERNAL void bw__tcache_decay(bw_pool *p, bw__tcache *tc, uint64_t now)
{
    bw__frees f;
    f.n = 0;
    (void)bw__tcache_decay_into(p, tc, now, &f);
    bw__frees_flush(p, &f);
}

/* Thread exit: every cache of this thread goes back to its pool, one at a
 * time; blocks the shared level does not take are freed outside the lock.
 *
 * Those frees call the allocator hooks, and a hook may use bufwriter (a
 * free hook that logs a line through a writer on another pool). Such a
 * call must never reach one of the caches being given back: a block it
 * returned would be parked in a cache that is then freed, lost with its
 * retention budget and its counts. So the thread forgets its caches before
 * the first one goes back (its map, its list, its last cache), and until
 * the cleanup ends it creates none: every call from a hook uses the shared
 * level. Nothing is created during the cleanup, so nothing can be lost. */
static void bw__thread_exit(void *head)
{
    bw__tcache *tc, *next;
    free(bw__tl_map);
    bw__tl_map = NULL;
    bw__tl_mask = bw__tl_used = 0;
    bw__tl_head = NULL;
    bw__tl_last = &bw__no_cache;
    bw__tl_exiting = true;
    for (tc = (bw__tcache *)head; tc != NULL; tc = tc->thread_next) {
        bw_pool *p = NULL;
        bw__frees f;
        f.n = 0;
        bw__mutex_lock(&bw__reg_lock);
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) != 0) {
            bw__sums s;
            p = tc->pool;
            memset(&s, 0, sizeof s);
            /* What has been idle long enough goes back now, not to the
             * shared level with a fresh age. */
            if (p->opt.decay_ms != BW_DECAY_NEVER)
                (void)bw__tcache_decay_into(p, tc, bw__now_ms(), &f);
            bw__tcache_flush(tc, true, &f);
            bw__tcache_totals(tc, &s, NULL);
            bw__counters_fold(&p->ctr, &s);
            bw__reg_unlink(tc);
            atomic_fetch_add_explicit(&p->exiting, 1, memory_order_acq_rel);
        }
        bw__mutex_unlock(&bw__reg_lock);
        if (p != NULL) {
            bw__frees_flush(p, &f);
            atomic_fetch_sub_explicit(&p->exiting, 1, memory_order_acq_rel);
        }
    }
    for (tc = (bw__tcache *)head; tc != NULL; tc = next) {
        next = tc->thread_next;
        free(tc);
    }
    /* A later destructor of another library may use a pool again: it then
     * starts a fresh cache and sets the key again. */
    bw__tl_exiting = false;
}

static void bw__exit_key_init(void)
{
    atomic_store_explicit(&bw__exit_key_ok,
                          bw__thread_exit_init(bw__thread_exit),
                          memory_order_release);
}

/* Unload. A copy of the library inside a plugin (the single header, or
 * libbufwriter.a linked into a shared object) is unmapped by dlclose, but
 * the key's destructor would still point into it and run whenever a thread
 * that used a pool exits: the process would crash. So the key goes with the
 * library (at dlclose, or at exit): no destructor into unmapped code is
 * left. The price: the caches of the threads still alive then (the calling
 * one too) are never given back; their blocks and the caches themselves
 * leak at unload (they cannot be taken from here: their owners may be using
 * them, and the pools may be gone). From then on, a thread that has no
 * cache for a pool uses the shared level. The shared library is linked
 * -z nodelete and never unmapped, so for it this runs at exit only, where
 * nothing is lost. Compilers without destructor functions keep the key:
 * there a plugin must not be unloaded while threads that used it live. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void bw__unload(void)
{
    if (atomic_exchange_explicit(&bw__exit_key_ok, false, memory_order_acq_rel))
        bw__thread_exit_remove();
}
#endif

static size_t bw__id_hash(uint64_t id, size_t mask)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

/* Rebuild this thread's table at twice the live count (at least 16),
 * freeing the caches of destroyed pools on the way. False when out of
 * memory (the old table stays). */
static bool bw__map_rebuild(void)
{
    bw__tcache **pp, *tc;
    size_t live = 0, n = 16, i;
    bw__tcache **map;
    for (pp = &bw__tl_head; (tc = *pp) != NULL;) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) == 0) {
            *pp = tc->thread_next;
            if (bw__tl_last == tc) bw__tl_last = &bw__no_cache;
            free(tc);
        } else {
            live++;
            pp = &tc->thread_next;
        }
    }
    /* The exit hook walks the list from the key's value: keep it the head. */
    (void)bw__thread_exit_set(bw__tl_head);
    while (n < 4 * (live + 1)) n *= 2;
    map = (bw__tcache **)calloc(n, sizeof *map);
    if (map == NULL) return false;
    for (tc = bw__tl_head; tc != NULL; tc = tc->thread_next) {
        for (i = bw__id_hash(atomic_load_explicit(&tc->pool_id, memory_order_relaxed), n - 1);
             map[i] != NULL; i = (i + 1) & (n - 1)) {}
        map[i] = tc;
    }
    free(bw__tl_map);
    bw__tl_map = map;
    bw__tl_mask = n - 1;
    bw__tl_used = live;
    return true;
}

BW__INTERNAL bw__tcache *bw__tcache_find(bw_pool *p)
{
    bw__tcache *tc;
    size_t i;
    if (bw__tl_map == NULL) return NULL;
    for (i = bw__id_hash(p->id, bw__tl_mask); (tc = bw__tl_map[i]) != NULL;
         i = (i + 1) & bw__tl_mask) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) {
            bw__tl_last = tc;
            return tc;
        }
    }
    return NULL;
}

BW__INTERNAL bw__tcache *bw__tcache_get_slow(bw_pool *p)
{
    bw__tcache *tc;
    size_t i;
    if ((tc = bw__tcache_find(p)) != NULL) return tc;
    if (bw__tl_exiting) return NULL; /* the exit cleanup: the shared level */
    bw__once_run(&bw__exit_once, bw__exit_key_init);
    /* Without the exit hook a cache would leak its blocks at thread exit:
     * then this thread uses the shared level only. */
    if (!atomic_load_explicit(&bw__exit_key_ok, memory_order_acquire)) return NULL;
    if ((bw__tl_used + 1) * 4 > (bw__tl_mask + 1) * 3 && !bw__map_rebuild()) return NULL;
    tc = (bw__tcache *)calloc(1, sizeof *tc + (size_t)p->tc_classes *
                                              (sizeof(bw__tc_class) + sizeof(bw__tc_seen)));
    if (tc == NULL) return NULL;
    tc->seen = (bw__tc_seen *)(void *)&tc->cls[p->tc_classes];
    tc->thread_next = bw__tl_head;
    if (!bw__thread_exit_set(tc)) {
        free(tc);
        return NULL;
    }
    tc->pool = p;
    /* A small message's block: the pool's first block, when the fast paths
     * serve its class (bw__rent_first, bw__return_fast). */
    tc->first_size = p->first_fast;
    tc->first_back = p->first_fast != 0 ? p->first_fast : SIZE_MAX;
    tc->shared_first =
        p == atomic_load_explicit(&bw__shared_pool, memory_order_acquire) ? p->first_fast : 0;
    tc->first = &tc->cls[p->first_class];
    tc->last_decay = p->opt.decay_ms != BW_DECAY_NEVER ? bw__now_ms() : 0;
    for (i = 0; i < p->tc_classes; i++) tc->seen[i].ms = tc->last_decay;
    atomic_store_explicit(&tc->pool_id, p->id, memory_order_relaxed);
    bw__tl_head = tc;
    for (i = bw__id_hash(p->id, bw__tl_mask); bw__tl_map[i] != NULL; i = (i + 1) & bw__tl_mask) {}
    bw__tl_map[i] = tc;
    bw__tl_used++;
    bw__mutex_lock(&bw__reg_lock);
    tc->pool_next = p->caches;
    if (p->caches) p->caches->pool_prev = tc;
    p->caches = tc;
    bw__mutex_unlock(&bw__reg_lock);
    bw__tl_last = tc;
    return tc;
}

BW__INTERNAL void bw__tcache_orphan_all(bw_pool *p)
{
    bw__tcache *tc, *next;
    bw__frees *f = NULL;
    size_t count = 0, i;
    /* Every block of every cache, gathered under the lock (an owner thread
     * may free its orphaned cache as soon as the lock is released), freed
     * after it. */
    bw__mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = tc->pool_next) count++;
    if (count != 0) f = (bw__frees *)calloc(count, sizeof *f);
    for (tc = p->caches, i = 0; tc != NULL; tc = next, i++) {
        bw__frees one;
        next = tc->pool_next;
        one.n = 0;
        bw__tcache_flush(tc, false, f != NULL ? &f[i] : &one);
        if (f == NULL) bw__frees_flush(p, &one); /* out of memory: under the lock */
        tc->pool_prev = tc->pool_next = NULL;
        atomic_store_explicit(&tc->pool_id, 0, memory_order_release);
    }
    p->caches = NULL;
    bw__mutex_unlock(&bw__reg_lock);
    for (i = 0; f != NULL && i < count; i++) bw__frees_flush(p, &f[i]);
    free(f);
    /* Threads that unlinked their cache before us may still be freeing
     * its blocks through the hook: the pool must outlive that. */
    while (atomic_load_explicit(&p->exiting, memory_order_acquire) != 0) bw__yield();
}

BW__INTERNAL void bw__tcache_sum(bw_pool *p, bw__sums *s, size_t *held)
{
    bw__tcache *tc;
    bw__mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = tc->pool_next) bw__tcache_totals(tc, s, held);
    bw__mutex_unlock(&bw__reg_lock);
}

BW__INTERNAL void bw__tcache_trim_self(bw_pool *p)
{
    bw__tcache *tc;
    bw__frees f;
    if (!p->use_tcache || (tc = bw__tcache_get(p)) == NULL) return;
    f.n = 0;
    bw__tcache_flush(tc, false, &f);
    bw__frees_flush(p, &f);
}

/* Fork (fork.c) --------------------------------------------------------- */

BW__INTERNAL void bw__tcache_fork_lock(bool lock)
{
    if (lock) bw__mutex_lock(&bw__reg_lock);
    else bw__mutex_unlock(&bw__reg_lock);
}

/* The child has one thread: the caches of the others are unregistered and
 * left as they are (their counters are kept, their budget given back, their
 * blocks and structs leaked: an owner may have been mid-update). */
BW__INTERNAL void bw__tcache_fork_child(bw_pool *p)
{
    bw__tcache *tc, *next, *mine;
    for (tc = p->caches; tc != NULL; tc = next) {
        bw__sums s;
        unsigned ci;
        next = tc->pool_next;
        for (mine = bw__tl_head; mine != NULL && mine != tc; mine = mine->thread_next) {}
        if (mine != NULL) continue;
        memset(&s, 0, sizeof s);
        bw__tcache_totals(tc, &s, NULL);
        bw__counters_fold(&p->ctr, &s);
        for (ci = 0; ci < p->tc_classes; ci++) bw__tcache_unreserve(tc, ci, 0);
        bw__reg_unlink(tc);
    }
    atomic_store_explicit(&p->exiting, 0, memory_order_relaxed);
}
