/* SPDX-License-Identifier: MIT */
/* large.c - what a pool keeps and learns about its writers' big jobs:
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
 * The learned jump (on by default): contiguous writers that passed the jump
 * floor (16 KiB) record the length they ended at; a writer whose growth
 * crosses the floor jumps straight to the size for the second largest of
 * the last 16, instead of stepping through every power of two (and copying
 * at each). The floor, not the threshold: a stream of 256 KiB .. 1 MiB jobs
 * climbed 512 B -> 1 MiB a doubling at a time and never taught the jump.
 * The second largest of 16, needing 2: one outlier job (the 256 MiB export
 * among 1 MiB responses) never decides the jump alone. Until then (a fresh
 * pool) a writer past the floor grows 16x per move up to the threshold
 * (BW__FRESH_GROWTH), so a process's first big job is not the slow one.
 *
 * Learned starting size (BW_POOL_LEARN_SIZE): writers record the length they
 * ended at; a new writer starts at about the 90th percentile of the last 16,
 * so similar jobs stop growing (and copying) altogether. */
#include "pool_internal.h"
#include "track.h"

#include <stdlib.h>
#include <string.h>

#define BW__EVICT_MAX 8 /* evictions per keep; the rest on later calls */

BW__INTERNAL bool bw__large_init(bw_pool *p, const bw_pool_options *o)
{
    p->learn = (o->flags & BW_POOL_LEARN_SIZE) != 0;
    p->learn_growth = (o->flags & BW_POOL_NO_LEARNED_GROWTH) == 0;
    p->jump_floor = o->jump_floor;
    p->max_learned = o->max_learned_size;
    p->max_large_bytes = o->max_large_bytes;
    p->max_large_blocks = o->max_large_blocks;
    p->keep_large = (o->flags & (BW_POOL_NO_LARGE_RETENTION | BW_POOL_BYPASS)) == 0 && !p->bypass;
    if (!p->keep_large) return true;
    if (pthread_mutex_init(&p->large_lock, NULL) != 0) return false;
    p->large = (bw__large *)calloc(p->max_large_blocks, sizeof *p->large);
    if (p->large == NULL) {
        pthread_mutex_destroy(&p->large_lock);
        return false;
    }
    return true;
}

BW__INTERNAL void *bw__large_take(bw_pool *p, size_t size)
{
    void *b = NULL;
    size_t i;
    if (!p->keep_large) return NULL;
    pthread_mutex_lock(&p->large_lock);
    for (i = p->nlarge; i-- > 0;) { /* newest first: the warmest */
        if (p->large[i].size == size) {
            b = p->large[i].block;
            memmove(&p->large[i], &p->large[i + 1], (p->nlarge - i - 1) * sizeof *p->large);
            p->nlarge--;
            atomic_fetch_sub_explicit(&p->large_bytes, size, memory_order_relaxed);
            break;
        }
    }
    pthread_mutex_unlock(&p->large_lock);
    if (b != NULL && (p->flags & BW_POOL_ZERO_ON_RETURN)) BW__TRACK_DEFINED(b, size);
    else if (b != NULL) BW__TRACK_UNDEFINED(b, size);
    return b;
}

BW__INTERNAL bool bw__large_keep(bw_pool *p, void *b, size_t size, uint64_t now)
{
    bw__large evicted[BW__EVICT_MAX];
    size_t nev = 0, i;
    if (!p->keep_large || size > p->max_large_bytes) return false;
    BW__TRACK_NOACCESS(b, size); /* (zeroed by the caller under ZERO_ON_RETURN) */
    pthread_mutex_lock(&p->large_lock);
    /* Make room: evict the oldest (at most a handful per call; the rest of
     * an oversized backlog goes on later calls). */
    while (p->nlarge > 0 &&
           (p->nlarge == p->max_large_blocks ||
            atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size > p->max_large_bytes) &&
           nev < BW__EVICT_MAX) {
        evicted[nev++] = p->large[0];
        atomic_fetch_sub_explicit(&p->large_bytes, p->large[0].size, memory_order_relaxed);
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
    }
    if (p->nlarge < p->max_large_blocks &&
        atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size <= p->max_large_bytes) {
        p->large[p->nlarge].block = b;
        p->large[p->nlarge].size = size;
        p->large[p->nlarge].since = now;
        p->nlarge++;
        atomic_fetch_add_explicit(&p->large_bytes, size, memory_order_relaxed);
        b = NULL;
    }
    pthread_mutex_unlock(&p->large_lock);
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
        pthread_mutex_lock(&p->large_lock);
        if (p->nlarge == 0 || now - p->large[0].since < p->decay_ms) {
            pthread_mutex_unlock(&p->large_lock);
            break;
        }
        e = p->large[0];
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        pthread_mutex_unlock(&p->large_lock);
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
        pthread_mutex_lock(&p->large_lock);
        if (p->nlarge == 0) {
            pthread_mutex_unlock(&p->large_lock);
            return;
        }
        e = p->large[--p->nlarge];
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        pthread_mutex_unlock(&p->large_lock);
        bw__backing_free(p, NULL, e.block, e.size);
    }
}

BW__INTERNAL void bw__learn_record(bw_pool *p, size_t len)
{
    unsigned i;
    if (len == 0) return;
    if (p->learn) {
        i = atomic_fetch_add_explicit(&p->recent_next, 1, memory_order_relaxed);
        atomic_store_explicit(&p->recent[i % BW__RECENT], len, memory_order_relaxed);
    }
    if (p->learn_growth && len > p->jump_floor) {
        i = atomic_fetch_add_explicit(&p->big_next, 1, memory_order_relaxed);
        atomic_store_explicit(&p->big[i % BW__RECENT], len, memory_order_relaxed);
    }
}

/* The second largest of the recorded lengths in ring (k of them): about the
 * 90th percentile of 16, so one outlier job does not make every later writer
 * huge. With `need2`, nothing until there are two. At most max_learned. */
static size_t bw__second_largest(bw_pool *p, _Atomic size_t *ring, bool need2)
{
    size_t v[BW__RECENT], r;
    unsigned k = 0, i, j;
    for (i = 0; i < BW__RECENT; i++) {
        size_t x = atomic_load_explicit(&ring[i], memory_order_relaxed);
        if (x == 0) continue;
        /* insertion sort, largest first */
        for (j = k++; j > 0 && v[j - 1] < x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
    if (k == 0 || (need2 && k < 2)) return 0;
    r = v[need2 ? 1 : k / 10];
    return r < p->max_learned ? r : p->max_learned;
}

/* BW_POOL_LEARN_SIZE: the (k/10 + 1)-th largest of k lengths; 0 when off. */
BW__INTERNAL size_t bw__learned(bw_pool *p)
{
    return p->learn ? bw__second_largest(p, p->recent, false) : 0;
}

/* The learned jump: the second largest of the last 16 jobs that passed the
 * floor (needs 2). */
BW__INTERNAL size_t bw__learned_large(bw_pool *p)
{
    return p->learn_growth ? bw__second_largest(p, p->big, true) : 0;
}
