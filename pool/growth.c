/* SPDX-License-Identifier: MIT */
/* growth.c - the sizes writers get, in one place: a contiguous writer's
 * first block and every move, a segmented writer's next block, and what
 * the pool learns from finished jobs to choose them. The growth rule
 * itself (a class at or below the threshold, a power of two above it; at
 * least twice the old block) is bw__pool_grow, and the writer asks for
 * every size through bw__pool_size, at the end of this file.
 *
 * The bound is on fresh memory, not warm memory. A move towards the
 * learned size first takes a block of that size already idle in the pool
 * (the thread's cache, a class's shared level, the kept large blocks)
 * whatever its size, because it costs no new memory: a stream of similar
 * jobs takes its block at the first move and copies only its first block.
 * Only a block the pool must get from its backing allocator is bounded:
 * past the jump floor (16 KiB), never larger than BW__BOUND (16) times the
 * bytes the writer needs, whatever other jobs or threads did, so a burst
 * of 20 KiB jobs on many threads after 64 MiB jobs takes the one idle
 * 64 MiB block (one thread: the levels hand out a block under their lock)
 * and reserves at most 256 KiB each, where 0.3 gave each a fresh 64 MiB
 * block. Within the bound a move goes as far towards the learned size as
 * it can: to it when it is at most 16 x the need, else to the learned
 * size divided by 16 as often as it takes to fit, so each later move can
 * reach it in one step and the whole climb copies at most 1/15 of the job
 * (a stream of 1 MiB jobs with nothing idle: 64 KiB, then 1 MiB).
 *
 * The learned jump (on unless BW_POOL_NO_LEARNED_GROWTH): contiguous
 * writers that end past the jump floor record their length and when; the
 * learned size is the second largest of the last 16 recorded within
 * decay_ms (so one outlier never decides alone, and a size nobody has
 * needed for decay_ms is forgotten, as retained memory is). Until two are
 * recorded a move past the floor of a writer at or below the threshold
 * climbs 16x (16 KiB, 256 KiB, 4 MiB; where blocks from 2 MiB up are
 * huge-page mappings 16 KiB, 128 KiB, 2 MiB: bw__fresh_stop), so a
 * process's first big job copies and faults in few blocks; above the
 * threshold blocks double, resized in place.
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

/* The growth rule for a writer holding len bytes in a block of cap (0:
 * none) that needs n more: room for len + n, at least twice cap, by
 * bw__grow_size. BW_EOVERFLOW when that cannot be represented. Inline, as
 * it was in pool_writer.h: out of line, gcc calls it from bw__pool_size,
 * and a segmented writer's 64 KiB job cost 156 instructions more. */
static inline int bw__pool_grow(const bw_pool *p, size_t len, size_t n, size_t cap, size_t *out)
{
    size_t need;
    if (n > BW__MAX_BLOCK - len) return BW_EOVERFLOW;
    need = len + n;
    if (cap > BW__MAX_BLOCK / 2) return BW_EOVERFLOW;
    if (need < cap * 2) need = cap * 2;
    *out = bw__grow_size(p, need | (need == 0)); /* a need of 0 gets a class */
    return *out != 0 ? BW_OK : BW_EOVERFLOW;
}

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

/* Compute the learned jump at `now` from the ring: the growth rule's
 * block for the second largest of the lengths recorded within decay_ms
 * (so a move takes it as it is), and when it next changes by ageing
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
        j = bw__grow_size(p, bw__capped(p, v[b])); /* a block size: moves take it as is */
        if (age != BW_DECAY_NEVER) until = (ms[a] < ms[b] ? ms[a] : ms[b]) + age;
    }
    atomic_store_explicit(&p->jump_until, until, memory_order_relaxed);
    atomic_store_explicit(&p->jump, j, memory_order_relaxed);
    return j;
}

/* The learned jump ages at the clock reads the pool makes anyway, never
 * by one of its own (bufwriter.h, jump_floor): a slow call, a job's end
 * that records, a return above the small classes, bw_pool_get_stats. A
 * move used to read the clock to age it (about 6 ns a read here, one of
 * the two a repeated job paid). Now the first job after an idle period
 * may still go towards a size nobody has needed for decay_ms, within the
 * bound on fresh memory, and its own clock read (its end, or the return
 * of the block the jump gave it, above the small classes) forgets it. */
BW__INTERNAL void bw__jump_age(bw_pool *p, uint64_t now)
{
    if (now >= atomic_load_explicit(&p->jump_until, memory_order_relaxed))
        (void)bw__jump_update(p, now);
}

BW__INTERNAL uint64_t bw__learn_record(bw_pool *p, size_t len)
{
    unsigned i;
    if (len == 0) return 0;
    if (p->learn) {
        i = atomic_fetch_add_explicit(&p->recent_next, 1, memory_order_relaxed);
        atomic_store_explicit(&p->recent[i % BW__RECENT], len, memory_order_relaxed);
    }
    if (p->learn_growth && len > p->opt.jump_floor) {
        uint64_t now = bw__now_ms(), age = p->opt.decay_ms, was_ms;
        size_t was;
        /* The next slot by a load and a store, not a read-modify-write:
         * threads that end jobs at the same instant may write one slot and
         * lose a record, which a statistic of the last 16 lengths shrugs
         * off (the next job records again), while the locked add cost
         * every job about 6 ns, a third of a 64 KiB job's cost over its
         * memcpy. */
        i = atomic_load_explicit(&p->big_next, memory_order_relaxed);
        atomic_store_explicit(&p->big_next, i + 1, memory_order_relaxed);
        i %= BW__RECENT;
        was = atomic_load_explicit(&p->big[i].len, memory_order_relaxed);
        was_ms = atomic_load_explicit(&p->big[i].ms, memory_order_relaxed);
        /* The time first: a reader that sees the new length sees a time
         * at least as new (or the slot's old one: then it ages early). */
        atomic_store_explicit(&p->big[i].ms, now, memory_order_relaxed);
        atomic_store_explicit(&p->big[i].len, len, memory_order_relaxed);
        /* A stream of similar jobs replaces a length that still counted
         * with the same one: the lengths that count are the same, so is
         * the statistic, and the time it next changes by ageing can only
         * be later (the stored one recomputes it no later than due). The
         * recomputation cost a 64 KiB job 530 of its 9,400 instructions. */
        if (was == len && (age == BW_DECAY_NEVER || now - was_ms < age || was_ms > now))
            bw__jump_age(p, now);
        else
            bw__jump_update(p, now);
        return now;
    }
    return 0;
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

/* The learned jump as of now, for bw_pool_get_stats: aged by a clock
 * read of its own. */
BW__INTERNAL size_t bw__learned_large(bw_pool *p)
{
    if (atomic_load_explicit(&p->jump, memory_order_relaxed) != 0) bw__jump_age(p, bw__now_ms());
    return atomic_load_explicit(&p->jump, memory_order_relaxed);
}

/* The block on the way to `target` that a writer needing `need` bytes may
 * take fresh: target when it is at most BW__BOUND x need, else
 * target / 16^k for the least k that fits (both powers of two by the
 * growth rule), so that every later move can reach target in one step. */
static size_t bw__toward(const bw_pool *p, size_t target, size_t need)
{
    size_t t = bw__grow_size(p, target), bound;
    if (t == 0) return 0;
    bound = need <= BW__MAX_BLOCK / BW__BOUND ? need * BW__BOUND : BW__MAX_BLOCK;
    while (t > bound) t /= BW__BOUND;
    return t;
}

/* Where the pool's blocks from BW__MAP_MIN (2 MiB) up are huge-page
 * mappings it can widen in place (bw__pool_reserves), a fresh climb stops
 * at BW__MAP_MIN / BW__BOUND (128 KiB), the largest block whose next step
 * may be a huge-page mapping within the bound: the climb goes 16 KiB,
 * 128 KiB, then a 2 MiB window of a reservation. Climbing to 256 KiB first
 * cost a first 10 MiB job 32 more 4 KiB page faults (12-20 us each on the
 * VM of bench/BENCHMARKS.md) than the bound asks for. */
static size_t bw__fresh_stop(const bw_pool *p, size_t cap, size_t target)
{
#ifdef BW__MAP_MIN
    const size_t stop = BW__MAP_MIN / BW__BOUND;
    if (bw__pool_reserves(p) && cap < stop && target > stop) return stop;
#else
    (void)p, (void)cap;
#endif
    return target;
}

/* A contiguous writer's first block or move (see the top of this file and
 * bufwriter.h's bw_init): its first block (min_first_block, the learned
 * starting size), else the growth rule; then, for a move or a first block
 * for more than min_first_block (not a small message), as far towards the
 * learned jump (or, for a move in a fresh pool, 16x past the floor) as the
 * bound allows, and the learned jump itself as the warm size: a stream of
 * 1 MiB jobs in 8 KiB writes then takes its idle 1 MiB block at the first
 * move and copies 8 KiB. */
static int bw__size_contig(bw_pool *p, const bw__size_req *r, bw__size *out)
{
    size_t want = r->n, size, need, target, t;
    int rc;
    if (r->cap == 0) {
        size_t first = p->learn ? bw__learned(p) : 0;
        if (first < p->opt.min_first_block) first = p->opt.min_first_block;
        if (first > want) want = first;
    }
    out->learned = p->learn && (r->cap == 0 || r->external);
    if (r->cap == 0 && want <= p->opt.max_pooled_size) {
        size = bw__class_size(p, want); /* want >= min_first_block */
    } else {
        rc = bw__pool_grow(p, r->held, want, r->cap, &size);
        if (rc != BW_OK) return rc;
    }
    need = r->held + r->n; /* bw__pool_grow checked the sum */
    /* What the writer is about to fill: the growth rule's block on a move,
     * not the learned or climbed one that may follow (bw__size's fill). */
    out->fill = r->cap == 0 ? need : size;
    if (r->external && p->learn) {
        /* Out of the caller's buffer: its first block of the pool's, so the
         * learned size as for a writer that started with none. */
        size_t first = bw__grow_size(p, bw__learned(p));
        if (first > size) size = first;
    }
    out->size = size;
    if (!p->learn_growth || (r->cap == 0 && need <= p->opt.min_first_block)) return BW_OK;
    out->learned = true;
    target = atomic_load_explicit(&p->jump, memory_order_relaxed); /* a block size */
    if (target > size) {
        /* Warm: the learned size itself, if the pool has one idle. */
        out->warm = target;
    } else if (target == 0 && r->cap != 0 && r->cap <= p->opt.max_pooled_size &&
               size > p->opt.jump_floor) {
        /* Fresh: 16x from the floor, up to the threshold. */
        target = r->cap > p->opt.jump_floor ? r->cap : p->opt.jump_floor;
        target = target <= p->opt.max_learned_size / BW__BOUND ? target * BW__BOUND
                                                              : p->opt.max_learned_size;
        target = bw__fresh_stop(p, r->cap, target);
    }
    if (target > size) {
        t = bw__toward(p, target, need);
        if (t > size) out->size = t;
    }
    if (out->warm <= out->size) out->warm = 0;
    return BW_OK;
}

/* A segmented writer's next block for n contiguous bytes (its trailer
 * included) after a block of r->cap (0: its first), the writer holding
 * r->held bytes: max(the growth rule's size for n, chain_block_size,
 * min(2 x prev, the growth rule's size for held + n)). Doubling only as
 * far as the held bytes justify: a growing writer holds what its blocks
 * did, so its blocks double (O(log n) of them), while a writer that
 * consumes as it goes (a queue, a socket's backlog) stays at the size of
 * what it holds; 0.4 doubled on whatever was held, and a queue of at most
 * 1,100 bytes ended with a 32 MiB block. Blocks above the threshold are
 * kept as large blocks when they come back, so a segmented writer keeps
 * doubling there while its large blocks (r->large_held bytes in
 * r->large_count blocks) still fit the large retention bounds, then takes
 * the largest power of two that fits: a 64 MiB job is ten pooled blocks
 * and six large ones that all come back to the next job (with 1 MiB
 * blocks only 32 of its 64 were kept, max_blocks_per_class, and every job
 * paid for 32 MiB of fresh pages). Past the bounds it doubles on, as a
 * contiguous writer does: large blocks are huge-page mappings (alloc.c),
 * so a 256 MiB job costs about a fresh mapping of its size, where
 * threshold-sized blocks from malloc cost 4-5x that in page faults.
 * Without large retention, threshold-sized blocks, which the classes keep
 * for the next job. At least the writer's own block size (r->first,
 * bw_set_block_size), else the pool's chain_block_size. */
static size_t bw__size_seg(const bw_pool *p, const bw__size_req *r)
{
    size_t prev = r->cap, need = r->n, len = r->held, held = r->large_held, first;
    size_t want = prev > BW__MAX_BLOCK / 2 ? BW__MAX_BLOCK : 2 * prev, room, fit;
    const size_t max = p->opt.max_pooled_size;
    fit = bw__grow_size(p, len < BW__MAX_BLOCK - need ? len + need : BW__MAX_BLOCK);
    if (fit != 0 && want > fit) want = fit;
    first = r->first != 0 ? r->first : p->opt.chain_block_size;
    if (want < first) want = first;
    if (want > max) {
        if (!p->keep_large) {
            want = max;
        } else if (r->large_count < p->opt.max_large_blocks && held < p->opt.max_large_bytes) {
            room = p->opt.max_large_bytes - held;
            if (want > room) {
                room = (size_t)1 << bw__log2(room); /* the largest power of two that fits */
                want = room > max ? room : max;
            }
        }
    }
    return want > need ? want : need;
}

/* The smallest window: a small job in a large block zeroes a page. */
#define BW__ZERO_STEP ((size_t)4096)

/* A window (mode_contig.c says what it is for) in a block of r->block
 * bytes for r->n more bytes after r->held, the window being r->cap: by
 * the growth rule, so capacities stay the sizes the rule gives (room for
 * held + n, at least twice cap), at least BW__ZERO_STEP; and the whole
 * block when the rule's size is more than half of it (or past what it
 * can represent), so widening a window at least doubles it as the rule
 * does: a block of an exact size (BW_POOL_BYPASS rents what is asked
 * for, 4205 bytes for a learned 4205) less than twice the rule's size is
 * taken whole (widening 4096 to 4205 broke the rule). */
static size_t bw__size_window(const bw_pool *p, const bw__size_req *r)
{
    size_t n = r->n, size;
    if (r->held < BW__ZERO_STEP && n < BW__ZERO_STEP - r->held) n = BW__ZERO_STEP - r->held;
    if (bw__pool_grow(p, r->held, n, r->cap, &size) != BW_OK) return r->block;
    return size <= r->block / 2 ? size : r->block;
}

/* Every size a writer gets, decided here (the request kinds: pool_writer.h). */
BW__INTERNAL int bw__pool_size(bw_pool *p, const bw__size_req *r, bw__size *out)
{
    size_t n = r->n, learned, mask;
    int rc;
    out->size = out->warm = out->fill = 0;
    out->learned = false;
    switch (r->kind) {
    case BW__SIZE_CONTIG:
        return bw__size_contig(p, r, out);
    case BW__SIZE_START:
        /* bw_init's initial capacity, or the learned size when larger. */
        learned = bw__learned(p);
        out->learned = p->learn;
        return bw__pool_grow(p, 0, learned > n ? learned : n, 0, &out->size);
    case BW__SIZE_SEG:
        n = bw__size_seg(p, r);
        break;
    case BW__SIZE_WINDOW:
        out->size = bw__size_window(p, r);
        return BW_OK;
    default: /* BW__SIZE_BLOCK */
        break;
    }
    /* By the growth rule, rounded up to r->align (a segmented block: a
     * rent of exactly that size, BW_POOL_BYPASS or above the threshold,
     * may not be aligned). */
    rc = bw__pool_grow(p, 0, n, 0, &n);
    if (rc != BW_OK) return rc;
    mask = (r->align | (r->align == 0)) - 1;
    if (n > BW__MAX_BLOCK - mask) return BW_EOVERFLOW;
    out->size = (n + mask) & ~mask;
    return BW_OK;
}

/* Whether a contiguous writer's final length teaches the pool: above
 * this. The two learners of bw__learn_record: BW_POOL_LEARN_SIZE takes
 * every length, the learned jump those past the floor. */
static size_t bw__learn_above(const bw_pool *p)
{
    return p->learn ? 0 : p->learn_growth ? p->opt.jump_floor : SIZE_MAX;
}

/* The writer's shortcuts, asked of bw__pool_size once at creation: a small
 * message's first block is what a first write of min_first_block bytes
 * gets (the same for every smaller one), kept only when no learned
 * statistic decided it and its writers cannot teach the pool (at most
 * learn_above): then the size rule and bw__learn_record have nothing to
 * say about such a writer, and the inline paths skip both. */
BW__INTERNAL void bw__pool_shortcuts(bw_pool *p)
{
    bw__size_req r = {.kind = BW__SIZE_CONTIG, .n = p->opt.min_first_block};
    bw__size s;
    p->learn_above = bw__learn_above(p);
    p->first_block = bw__pool_size(p, &r, &s) == BW_OK && !s.learned && s.warm == 0 &&
                             s.size <= p->learn_above
                         ? s.size
                         : 0;
    p->first_class = bw__class_index(p, p->first_block);
    /* The thread cache serves it inline only when its class is cached. */
    p->first_fast = p->first_block - 1 < p->fast_rent_limit ? p->first_block : 0;
}
