/* SPDX-License-Identifier: MIT */
/* large.c - what a pool keeps of its writers' big jobs:
 *
 * Large retention (on by default): blocks above the threshold are kept
 * when they come back, bounded in bytes and count, oldest evicted first, so
 * a steady stream of 10 MiB jobs reuses warm memory instead of asking the
 * backing allocator for fresh pages each time (jemalloc hands blocks of
 * 8 MiB and more back to the kernel at once: every job then pays page
 * faults, several times the cost of the copy). A rent above the threshold is
 * served from a kept block of exactly that size; writers only ask for powers
 * of two there, so sizes repeat.
 *
 * Kept blocks decay: one unused for decay_ms goes back to the allocator.
 *
 * A writer's large blocks also move here: a reservation widened in place
 * (bw__pool_rent_reserve, bw__pool_cut) and a move that takes a kept block
 * or the hook's realloc (bw__pool_regrow).
 *
 * The sizes writers ask for, and what the pool learns, are in growth.c. */
#include "pool_writer.h"
#include "track.h"

#include <stdlib.h>
#include <string.h>

#define BW__EVICT_MAX 8 /* evictions per keep; the rest on later calls */

BW__INTERNAL bool bw__large_init(bw_pool *p)
{
    if (!p->keep_large) return true;
    if (!bw__mutex_init(&p->large_lock)) return false;
    p->large = (bw__large *)calloc(p->opt.max_large_blocks, sizeof *p->large);
    if (p->large == NULL) {
        bw__mutex_destroy(&p->large_lock);
        return false;
    }
    return true;
}

BW__INTERNAL void *bw__large_take(bw_pool *p, size_t size)
{
    void *b = NULL;
    size_t i;
    if (!p->keep_large) return NULL;
    bw__mutex_lock(&p->large_lock);
    for (i = p->nlarge; i-- > 0;) { /* newest first: the warmest */
        if (p->large[i].size == size) {
            b = p->large[i].block;
            memmove(&p->large[i], &p->large[i + 1], (p->nlarge - i - 1) * sizeof *p->large);
            p->nlarge--;
            atomic_fetch_sub_explicit(&p->large_bytes, size, memory_order_relaxed);
            break;
        }
    }
    bw__mutex_unlock(&p->large_lock);
    if (b != NULL && (p->opt.flags & BW_POOL_ZERO_ON_RETURN)) BW__TRACK_DEFINED(b, size);
    else if (b != NULL) BW__TRACK_UNDEFINED(b, size);
    return b;
}

BW__INTERNAL bool bw__large_keep(bw_pool *p, void *b, size_t size, uint64_t now)
{
    bw__large evicted[BW__EVICT_MAX];
    size_t nev = 0, i;
    if (!p->keep_large || size > p->opt.max_large_bytes) return false;
    BW__TRACK_NOACCESS(b, size); /* (zeroed by the caller under ZERO_ON_RETURN) */
    bw__mutex_lock(&p->large_lock);
    /* Make room: evict the oldest (at most a handful per call; the rest of
     * an oversized backlog goes on later calls). */
    while (p->nlarge > 0 &&
           (p->nlarge == p->opt.max_large_blocks ||
            atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size >
                p->opt.max_large_bytes) &&
           nev < BW__EVICT_MAX) {
        evicted[nev++] = p->large[0];
        atomic_fetch_sub_explicit(&p->large_bytes, p->large[0].size, memory_order_relaxed);
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
    }
    if (p->nlarge < p->opt.max_large_blocks &&
        atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size <=
            p->opt.max_large_bytes) {
        p->large[p->nlarge].block = b;
        p->large[p->nlarge].size = size;
        p->large[p->nlarge].since = now;
        p->nlarge++;
        atomic_fetch_add_explicit(&p->large_bytes, size, memory_order_relaxed);
        b = NULL;
    }
    bw__mutex_unlock(&p->large_lock);
    if (b != NULL) BW__TRACK_DEFINED(b, size); /* not kept: the caller frees it */
    for (i = 0; i < nev; i++) bw__backing_free(p, NULL, evicted[i].block, evicted[i].size);
    return b == NULL;
}

/* Give back the kept blocks unused for decay_ms (oldest first). */
BW__INTERNAL void bw__large_decay(bw_pool *p, uint64_t now)
{
    uint64_t bytes = 0;
    if (!p->keep_large) return;
    for (;;) {
        bw__large e;
        bw__mutex_lock(&p->large_lock);
        if (p->nlarge == 0 || now - p->large[0].since < p->opt.decay_ms) {
            bw__mutex_unlock(&p->large_lock);
            break;
        }
        e = p->large[0];
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        bw__mutex_unlock(&p->large_lock);
        bw__backing_free(p, NULL, e.block, e.size);
        bytes += e.size;
    }
    if (bytes) BW__POOL_ADD(p, decayed, bytes);
}

BW__INTERNAL void bw__large_free_all(bw_pool *p)
{
    if (!p->keep_large) return;
    for (;;) {
        bw__large e;
        bw__mutex_lock(&p->large_lock);
        if (p->nlarge == 0) {
            bw__mutex_unlock(&p->large_lock);
            return;
        }
        e = p->large[--p->nlarge];
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        bw__mutex_unlock(&p->large_lock);
        bw__backing_free(p, NULL, e.block, e.size);
    }
}

/* Reservations and moves of large blocks ---------------------------------- */

BW__INTERNAL void *bw__pool_rent_reserve(bw_pool *p, size_t size, size_t reserve,
                                         size_t *capacity)
{
#ifdef BW__MAP_MIN
    bw__tcache *tc;
    uint64_t now;
    void *b;
    if (p->reserves && size >= BW__MAP_MIN && size > p->opt.max_pooled_size &&
        reserve > size) {
        tc = bw__slow_enter(p, &now);
        if ((b = bw__large_take(p, size)) != NULL) {
            /* Idle memory first: it costs no fresh pages. */
            BW__COUNT(p, tc, hits, 1);
            BW__COUNT(p, tc, large_hits, 1);
            BW__COUNT(p, tc, out_bytes, size);
            *capacity = size;
            return b;
        }
        /* Only where growth would take fresh memory all the way: with
         * blocks kept above the threshold, the writer's next moves take
         * them (warm memory beats fresh pages, even with a copy), and a
         * reservation would fault in fresh pages every job. */
        if (atomic_load_explicit(&p->large_bytes, memory_order_relaxed) == 0 &&
            (b = bw__backing_alloc(p, tc, reserve)) != NULL) {
            BW__COUNT(p, tc, misses, 1);
            BW__COUNT(p, tc, out_bytes, reserve);
            *capacity = reserve;
            return b;
        }
        /* No address space for it: the block alone. */
    }
#else
    (void)reserve;
#endif
    return bw_pool_rent(p, size, capacity);
}

BW__INTERNAL void bw__pool_cut(bw_pool *p, void *block, size_t capacity, size_t size)
{
#ifdef BW__MAP_MIN
    bw__tcache *tc = p->use_tcache ? bw__tcache_get(p) : NULL;
    bw__unmap_tail(block, capacity, size);
    BW__COUNT(p, tc, out_bytes, (uint64_t)size - (uint64_t)capacity);
#else
    (void)p, (void)block, (void)capacity, (void)size;
#endif
}

BW__INTERNAL void *bw__pool_regrow(bw_pool *p, void *b, size_t old_cap, size_t len,
                                   const bw__size *s, size_t *new_cap)
{
    bw__tcache *tc = p->use_tcache ? bw__tcache_get(p) : NULL;
    void *nb = NULL;
    if (s->warm > s->size && (nb = bw__large_take(p, s->warm)) != NULL) *new_cap = s->warm;
    if (nb == NULL && (nb = bw__large_take(p, s->size)) != NULL) *new_cap = s->size;
    if (nb != NULL) {
        /* Warm memory: a copy of len bytes costs less than fresh pages. */
        BW__COUNT(p, tc, hits, 1);
        BW__COUNT(p, tc, large_hits, 1);
        BW__COUNT(p, tc, out_bytes, *new_cap);
        if (p->checked) bw__check_rented(p, nb, *new_cap);
        memcpy(nb, b, len);
        (void)bw_pool_return(p, b, old_cap);
        return nb;
    }
    *new_cap = s->size;
    if (p->checked && !bw__check_return(p, b, old_cap, false)) return NULL;
    nb = p->alloc.realloc(p->alloc.ctx, b, old_cap + p->extra, *new_cap + p->extra);
    if (nb == NULL) {
        if (p->checked) bw__check_rented(p, b, old_cap); /* still the caller's */
        return NULL;
    }
    if (p->checked) {
        bw__canary_set(nb, *new_cap);
        bw__check_freed(p, b);
        bw__check_rented(p, nb, *new_cap);
    }
    /* One realloc is one backing free and one backing allocation, one
     * return and one rent: the counters stay balanced. */
    BW__COUNT(p, tc, backing_allocs, 1);
    BW__COUNT(p, tc, backing_frees, 1);
    BW__COUNT(p, tc, misses, 1);
    BW__COUNT(p, tc, returns, 1);
    BW__COUNT(p, tc, out_bytes, (uint64_t)*new_cap - (uint64_t)old_cap);
    return nb;
}
