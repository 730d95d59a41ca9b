/* SPDX-License-Identifier: MIT */
/* learn.c - what a pool learns from its writers' jobs, and the size a
 * contiguous writer moves to because of it.
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
#include "pool_writer.h"

BW__INTERNAL void bw__learn_record(bw_pool *p, size_t len)
{
    unsigned i;
    if (len == 0) return;
    if (p->learn) {
        i = atomic_fetch_add_explicit(&p->recent_next, 1, memory_order_relaxed);
        atomic_store_explicit(&p->recent[i % BW__RECENT], len, memory_order_relaxed);
    }
    if (p->learn_growth && len > p->opt.jump_floor) {
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
    return r < p->opt.max_learned_size ? r : p->opt.max_learned_size;
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

/* The size a contiguous writer moves to for n more bytes: a first block of
 * at least min_first_block (and the learned size with BW_POOL_LEARN_SIZE),
 * so a small message does not climb through the smallest classes (up to the
 * threshold the rent rounds it to its class, as the growth rule would);
 * then the growth rule for the held bytes and n. A move that crosses the
 * jump floor goes to the size recent jobs past the floor ended at (the
 * learned jump), not through every power of two on the way: a stream of
 * similar 256 KiB .. 64 MiB jobs then copies less than 2 x jump_floor
 * (32 KiB) per job. Until the pool has learned a jump, a move past the floor
 * and up to the threshold (not a first block) grows BW__FRESH_GROWTH times:
 * a process's first 10 MiB job went through 8 pooled classes, about 2 MiB
 * copied and faulted in 4 KiB pages (1.5x a fresh huge-page mapping written
 * once); now 16 KiB, 256 KiB, then large blocks (huge pages, resized in
 * place). */
BW__INTERNAL int bw__pool_contig_size(bw_pool *p, size_t held, size_t cap, bool external,
                                      size_t n, size_t *out)
{
    size_t want = n, size;
    int rc;
    if (cap == 0) {
        size_t first = bw__learned(p);
        if (first < p->opt.min_first_block) first = p->opt.min_first_block;
        if (first > want) want = first;
    }
    if (cap == 0 && want <= p->opt.max_pooled_size) {
        size = want;
    } else {
        rc = bw__pool_grow(p, held, want, cap, &size);
        if (rc != BW_OK) return rc;
    }
    if (external && p->learn) {
        /* Out of the caller's buffer: its first block of the pool's, so the
         * learned size as for a writer that started with none. */
        size_t first = bw__grow_size(p, bw__learned(p));
        if (first > size) size = first;
    }
    if (size > p->opt.jump_floor && cap <= p->opt.max_pooled_size && p->learn_growth) {
        size_t learned = bw__learned_large(p), jump = 0, from;
        if (learned != 0 && cap <= p->opt.jump_floor) {
            jump = bw__grow_size(p, learned);
        } else if (learned == 0 && cap != 0) {
            from = cap > p->opt.jump_floor ? cap : p->opt.jump_floor;
            if (from <= SIZE_MAX / BW__FRESH_GROWTH)
                jump = bw__grow_size(p, from * BW__FRESH_GROWTH);
        }
        if (jump > p->opt.max_learned_size) jump = p->opt.max_learned_size;
        if (jump > size) size = jump;
    }
    *out = size;
    return BW_OK;
}

BW__INTERNAL int bw__pool_start_size(bw_pool *p, size_t initial, size_t *out)
{
    size_t learned = bw__learned(p);
    return bw__pool_grow(p, 0, learned > initial ? learned : initial, 0, out);
}
