/* SPDX-License-Identifier: MIT */
/* growth.c - the sizes writers get, in one place: a contiguous writer's
 * first block and every move, a segmented writer's next block, and what
 * the pool learns from finished jobs to choose them. The growth rule
 * itself (a class at or below the threshold, a power of two above it; at
 * least twice the old block) is bw__pool_grow in pool_writer.h, inline
 * for the writer's fast paths.
 *
 * The bound. Past the jump floor (16 KiB), a contiguous writer never moves
 * to a block larger than BW__BOUND (16) times the bytes it needs, whatever
 * other jobs or threads did: a 20 KiB job after 64 MiB jobs holds at most
 * 256 KiB, where 0.3 gave it the 64 MiB block. Within the bound a move goes
 * as far towards the learned size as it can: to it when it is at most 16 x
 * the need, else to the learned size divided by 16 as often as it takes to
 * fit, so each later move can reach it in one step and the whole climb
 * copies at most 1/15 of the job (a stream of 1 MiB jobs written 8 KiB at
 * a time: 64 KiB, then 1 MiB).
 *
 * The learned jump (on unless BW_POOL_NO_LEARNED_GROWTH): contiguous
 * writers that end past the jump floor record their length and when; the
 * learned size is the second largest of the last 16 recorded within
 * decay_ms (so one outlier never decides alone, and a size nobody has
 * needed for decay_ms is forgotten, as retained memory is). Until two are
 * recorded a move past the floor of a writer at or below the threshold
 * climbs 16x (16 KiB, 256 KiB, 4 MiB), so a process's first big job copies
 * and faults in few blocks; above the threshold blocks double, resized in
 * place.
 *
 * Learned starting size (BW_POOL_LEARN_SIZE, opt-in, outside the bound:
 * its stream chose it): writers record every length; a new writer starts
 * at the second largest of the last 16, once two are recorded. */
#include "pool_writer.h"

/* The bound factor. A climb by factor f copies at most 1/(f - 1) of the
 * job; the block it holds is at most f x its bytes. 16 keeps the copy near
 * a jump's (a 1 MiB job copies 64 KiB) and a 20 KiB job's block at
 * 256 KiB; bench/BENCHMARKS.md, "The sweep", has what it costs. */
#define BW__BOUND ((size_t)16)

/* The indexes of the largest (*a) and second largest (*b) of k >= 2
 * values: one pass, shared by both learned statistics. */
static void bw__top2(const size_t *v, unsigned k, unsigned *a, unsigned *b)
{
    unsigned i;
    *a = v[1] > v[0];
    *b = !*a;
    for (i = 2; i < k; i++) {
        if (v[i] > v[*a]) {
            *b = *a;
            *a = i;
        } else if (v[i] > v[*b]) {
            *b = i;
        }
    }
}

/* A learned size, at most max_learned_size: the one place that cap is
 * applied. */
static size_t bw__capped(const bw_pool *p, size_t x)
{
    return x < p->opt.max_learned_size ? x : p->opt.max_learned_size;
}

/* Compute the learned jump at `now` from the ring: the second largest of
 * the lengths recorded within decay_ms, and when it next changes by ageing
 * (when the older of the two largest ages out). Threads that race here
 * store results from about the same ring; either is as good. */
static size_t bw__jump_update(bw_pool *p, uint64_t now)
{
    size_t v[BW__RECENT], j = 0;
    uint64_t ms[BW__RECENT], age = p->opt.decay_ms, until = UINT64_MAX;
    unsigned i, k = 0, a, b;
    for (i = 0; i < BW__RECENT; i++) {
        ms[k] = atomic_load_explicit(&p->big[i].ms, memory_order_relaxed);
        v[k] = atomic_load_explicit(&p->big[i].len, memory_order_relaxed);
        k += v[k] != 0 && (age == BW_DECAY_NEVER || now - ms[k] < age || ms[k] > now);
    }
    if (k >= 2) {
        bw__top2(v, k, &a, &b);
        j = bw__capped(p, v[b]);
        if (age != BW_DECAY_NEVER) until = (ms[a] < ms[b] ? ms[a] : ms[b]) + age;
    }
    atomic_store_explicit(&p->jump_until, until, memory_order_relaxed);
    atomic_store_explicit(&p->jump, j, memory_order_relaxed);
    return j;
}

BW__INTERNAL void bw__learn_record(bw_pool *p, size_t len)
{
    unsigned i;
    if (len == 0) return;
    if (p->learn) {
        i = atomic_fetch_add_explicit(&p->recent_next, 1, memory_order_relaxed);
        atomic_store_explicit(&p->recent[i % BW__RECENT], len, memory_order_relaxed);
    }
    if (p->learn_growth && len > p->opt.jump_floor) {
        uint64_t now = bw__now_ms();
        i = atomic_fetch_add_explicit(&p->big_next, 1, memory_order_relaxed);
        /* The time first: a reader that sees the new length sees a time
         * at least as new (or the slot's old one: then it ages early). */
        atomic_store_explicit(&p->big[i % BW__RECENT].ms, now, memory_order_relaxed);
        atomic_store_explicit(&p->big[i % BW__RECENT].len, len, memory_order_relaxed);
        bw__jump_update(p, now);
    }
}

/* BW_POOL_LEARN_SIZE: the second largest of the last 16 lengths; 0 when
 * off or fewer than two are recorded. */
BW__INTERNAL size_t bw__learned(bw_pool *p)
{
    size_t v[BW__RECENT];
    unsigned i, k = 0, a, b;
    if (!p->learn) return 0;
    for (i = 0; i < BW__RECENT; i++) {
        v[k] = atomic_load_explicit(&p->recent[i], memory_order_relaxed);
        k += v[k] != 0;
    }
    if (k < 2) return 0;
    bw__top2(v, k, &a, &b);
    return bw__capped(p, v[b]);
}

/* The learned jump: the second largest of the last 16 lengths past the
 * floor recorded within decay_ms; 0 when off or fewer than two. */
BW__INTERNAL size_t bw__learned_large(bw_pool *p)
{
    size_t j = atomic_load_explicit(&p->jump, memory_order_relaxed);
    uint64_t now;
    if (j == 0) return 0; /* nothing learned: no clock read */
    if (atomic_load_explicit(&p->jump_until, memory_order_relaxed) == UINT64_MAX) return j;
    now = bw__now_ms();
    if (now < atomic_load_explicit(&p->jump_until, memory_order_relaxed)) return j;
    return bw__jump_update(p, now);
}

/* The block on the way to `target` that a writer needing `need` bytes may
 * move to: target when it is at most BW__BOUND x need, else target / 16^k
 * for the least k that fits (both powers of two by the growth rule), so
 * that every later move can reach target in one step. */
static size_t bw__toward(const bw_pool *p, size_t target, size_t need)
{
    size_t t = bw__grow_size(p, target), bound;
    if (t == 0) return 0;
    bound = need <= BW__MAX_BLOCK / BW__BOUND ? need * BW__BOUND : BW__MAX_BLOCK;
    while (t > bound) t /= BW__BOUND;
    return t;
}

/* The size a contiguous writer moves to for n more bytes, the block size a
 * rent of it gives (see the top of this file and bufwriter.h's bw_init):
 * its first block (min_first_block, the learned starting size), else the
 * growth rule; then, for a move or a first block for more than
 * min_first_block (not a small message), as far towards the learned jump
 * (or, for a move in a fresh pool, 16x past the floor) as the bound
 * allows: a stream of 64 KiB jobs in 8 KiB writes then rents one block a
 * job and copies nothing. */
BW__INTERNAL int bw__pool_contig_size(bw_pool *p, size_t held, size_t cap, bool external,
                                      size_t n, size_t *out)
{
    size_t want = n, size, need, target;
    int rc;
    if (cap == 0) {
        size_t first = bw__learned(p);
        if (first < p->opt.min_first_block) first = p->opt.min_first_block;
        if (first > want) want = first;
    }
    if (cap == 0 && want <= p->opt.max_pooled_size) {
        size = bw_pool_class_size(p, want);
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
    need = held + n; /* bw__pool_grow checked the sum */
    if (!p->learn_growth || (cap == 0 && need <= p->opt.min_first_block)) {
        *out = size;
        return BW_OK;
    }
    target = bw__learned_large(p);
    if (target == 0 && cap != 0 && cap <= p->opt.max_pooled_size &&
        size > p->opt.jump_floor) {
        /* Fresh: 16x from the floor, up to the threshold. */
        target = cap > p->opt.jump_floor ? cap : p->opt.jump_floor;
        target = target <= p->opt.max_learned_size / BW__BOUND ? target * BW__BOUND
                                                              : p->opt.max_learned_size;
    }
    if (target > size) {
        target = bw__toward(p, target, need);
        if (target > size) size = target;
    }
    *out = size;
    return BW_OK;
}

BW__INTERNAL int bw__pool_start_size(bw_pool *p, size_t initial, size_t *out)
{
    size_t learned = bw__learned(p);
    return bw__pool_grow(p, 0, learned > initial ? learned : initial, 0, out);
}

/* A segmented writer's next block for `need` contiguous bytes after a
 * block of prev (0: its first), the writer holding len bytes:
 * max(the growth rule's size for need, chain_block_size, min(2 x prev,
 * the growth rule's size for len + need)). Doubling only as far as the
 * held bytes justify: a growing writer holds what its blocks did, so its
 * blocks double (O(log n) of them), while a writer that consumes as it
 * goes (a queue, a socket's backlog) stays at the size of what it holds;
 * 0.4 doubled on whatever was held, and a queue of at most 1,100 bytes
 * ended with a 32 MiB block. Blocks above the threshold are kept as
 * large blocks when they come back, so a chain keeps doubling there while
 * its large blocks (held bytes in count blocks) still fit the large
 * retention bounds, then takes the largest power of two that fits: a
 * 64 MiB chain is ten pooled blocks and six large ones that all come back
 * to the next job (with 1 MiB blocks only 32 of its 64 were kept,
 * max_blocks_per_class, and every job paid for 32 MiB of fresh pages).
 * Past the bounds it doubles on, as a contiguous writer does: large blocks
 * are huge-page mappings (alloc.c), so a 256 MiB job costs about a fresh
 * mapping of its size, where threshold-sized blocks from malloc cost 4-5x
 * that in page faults. Without large retention, threshold-sized blocks,
 * which the classes keep for the next job. The caller adds its trailer to
 * need and rounds the result by the growth rule; first is the writer's
 * smallest block (bw_set_block_size), 0 for the pool's. */
BW__INTERNAL size_t bw__pool_seg_size(const bw_pool *p, size_t prev, size_t len, size_t held,
                                      size_t count, size_t need, size_t first)
{
    size_t want = prev > BW__MAX_BLOCK / 2 ? BW__MAX_BLOCK : 2 * prev, room, fit;
    const size_t max = p->opt.max_pooled_size;
    fit = bw__grow_size(p, len < BW__MAX_BLOCK - need ? len + need : BW__MAX_BLOCK);
    if (fit != 0 && want > fit) want = fit;
    if (first == 0) first = p->opt.chain_block_size; /* the writer's, else the pool's */
    if (want < first) want = first;
    if (want > max) {
        if (!p->keep_large) {
            want = max;
        } else if (count < p->opt.max_large_blocks && held < p->opt.max_large_bytes) {
            room = p->opt.max_large_bytes - held;
            if (want > room) {
                room = (size_t)1 << bw__log2(room); /* the largest power of two that fits */
                want = room > max ? room : max;
            }
        }
    }
    return want > need ? want : need;
}
