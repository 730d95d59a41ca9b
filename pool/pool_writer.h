/* SPDX-License-Identifier: MIT */
/* pool_writer.h - what the writer's files ask of the pool, and all
 * it asks: every size it gets (one request, one answer: bw__pool_size,
 * which alone applies the growth rule), learning from a finished job, the
 * inline thread-cache rent and return of a small message, growing a large
 * block in place and handing a block to free(); beyond these, only the
 * public bw_pool_* functions. The writer never reads the fields of
 * struct bw_pool itself: the policies live in the pool, once, and the few
 * facts a fast path needs are inline accessors here (as cheap as the field
 * read they replace). Nothing here is part of the public API. */
#ifndef BW_POOL_WRITER_H
#define BW_POOL_WRITER_H

#include "pool_internal.h"

#include <stdint.h>

/* The largest block the writer ever asks for: blocks never exceed
 * PTRDIFF_MAX bytes (pointer differences inside one stay defined). */
#define BW__MAX_BLOCK ((size_t)PTRDIFF_MAX)

/* The growth rule's size for n bytes: the pool's class at or below its
 * threshold, the next power of two above it; 0 for 0 or when that cannot
 * be represented. The pool's (growth.c, and pool.c's options and stats):
 * the writer asks bw__pool_size for every size it gets. */
static inline size_t bw__grow_size(const bw_pool *p, size_t n)
{
    if (n == 0 || n > BW__MAX_BLOCK / 2 + 1) return 0;
    if (n <= p->opt.max_pooled_size) return bw__class_size(p, n);
    return bw__pow2_ceil(n);
}

/* What a writer asks the pool for, one request for every size it gets;
 * bw__pool_size (growth.c) is the one function that answers, and the pool
 * derives its shortcuts (first_block, learn_above) by asking it too.
 * Written with designated initializers: a field a kind does not read is 0. */
enum {
    BW__SIZE_CONTIG, /* a contiguous writer's first block (cap 0) or move   */
    BW__SIZE_START,  /* bw_init's block for an initial capacity of n       */
    BW__SIZE_SEG,    /* a segmented writer's next block                    */
    BW__SIZE_BLOCK,  /* a block for n bytes by the growth rule: a segmented
                        writer's for n contiguous bytes, a streaming
                        writer's buffer, bw_detach's copy of n held bytes  */
    BW__SIZE_WINDOW  /* a zeroing pool's or a reservation's window (the
                        writer's capacity) in a block of `block` bytes      */
};
typedef struct bw__size_req {
    unsigned kind;
    bool external;      /* CONTIG: held bytes in the caller's buffer           */
    size_t n;           /* CONTIG, WINDOW: bytes more; START: the initial
                           capacity; SEG, BLOCK: bytes (SEG: contiguous,
                           trailer included)                                 */
    size_t held;        /* CONTIG: bytes held; SEG: the writer's length;
                           WINDOW: bytes below the n more                    */
    size_t cap;         /* CONTIG: the block held; SEG: the last block;
                           WINDOW: the window now, or the capacity a move
                           leaves (0: none yet)                              */
    size_t block;       /* WINDOW: the block the window is of                */
    size_t large_held;  /* SEG: bytes in its blocks above the threshold      */
    size_t large_count; /* SEG: and how many                                 */
    size_t align;       /* SEG, BLOCK: a power of two the size is rounded to
                           (0: none)                                         */
    size_t first;       /* SEG: the writer's smallest block (bw_set_block_size;
                           0: the pool's chain_block_size)                   */
} bw__size_req;
/* The answer: rent size (SEG and BLOCK: exactly; WINDOW: the window), unless the pool has a
 * block of warm bytes idle (0: do not look), which costs no fresh memory
 * (bw__pool_rent_size). learned: a learned statistic took part, so the
 * answer may change as the pool learns. fill (CONTIG): the bytes of the
 * block the writer is about to fill, which a block fresh from the backing
 * allocator gets faulted in at once (bw__populate): what it writes now on
 * a first block, the growth rule's size on a move (room for held + n, at
 * least twice the old block, so the writer holds more than half of it);
 * never the rest of a block the climb made 16x larger (the writer faults
 * that in window by window as it fills it: mode_contig.c). */
typedef struct bw__size {
    size_t size, warm;
    bool learned;
    size_t fill;
} bw__size;
BW__INTERNAL int bw__pool_size(bw_pool *p, const bw__size_req *r, bw__size *out);
/* bw_pool_rent of a size bw__pool_size gave: an idle block of s->warm
 * bytes when the pool holds one (one thread gets it), else s->size. And
 * *filled, when filled is not NULL (the caller's 0 before), becomes
 * s->fill when the block is fresh from the backing allocator and longer
 * than s->fill, faulted in up to it alone where the platform can (its
 * other pages untouched: the writer faults them in as it comes within the
 * growth rule of them, mode_contig.c); not for an idle block, or one of
 * exactly s->fill. */
BW__INTERNAL void *bw__pool_rent_fill(bw_pool *p, const bw__size *s, size_t *capacity,
                                      size_t *filled);
/* The same without *filled: a first block (its fill is all it gets). */
static inline void *bw__pool_rent_size(bw_pool *p, const bw__size *s, size_t *capacity)
{
    return bw__pool_rent_fill(p, s, capacity, NULL);
}

/* The pool's threshold: rents at or below it come from its classes. */
static inline size_t bw__pool_threshold(const bw_pool *p) { return p->opt.max_pooled_size; }

/* A contiguous writer's usual first block when it needs at most this many
 * bytes (rent it with bw__rent_first); 0 when learning decides instead
 * (bw__pool_shortcuts). */
static inline size_t bw__pool_first_block(const bw_pool *p) { return p->first_block; }

/* Whether a contiguous writer that ends at len bytes teaches the pool
 * (then bw__learn_record): one compare, so a small message's release makes
 * no call for nothing. */
static inline bool bw__pool_learns(const bw_pool *p, size_t len)
{
    return len > p->learn_above;
}

/* A writer's final length, when bw__pool_learns says so (growth.c):
 * BW_POOL_LEARN_SIZE's samples, and the learned jump's when it passed the
 * jump floor. Returns the clock it read for the jump (bw__now_ms), 0 when
 * it read none. */
BW__INTERNAL uint64_t bw__learn_record(bw_pool *p, size_t len);

/* A writer's usual first block (first_block bytes) from the calling
 * thread's cache when its first write of n bytes fits it, or NULL: then
 * the general way. *pp is the writer's pool, NULL for the shared pool:
 * then the shared pool's cache answers (shared_first, 0 in every other
 * cache) and *pp becomes its pool, with no load of bw__shared_pool and no
 * compare of ids, which a pool that may be destroyed needs (the shared
 * pool is not). The cache knows the class and whether the fast paths
 * serve it (first_size, 0 when not), so this is the pool id's compare (or
 * none), one for the size, and the pop. */
static inline void *bw__rent_first(bw_pool **pp, size_t n, size_t *capacity)
{
    bw__tcache *tc = bw__tl_last;
    bw_pool *p = *pp;
    if (BW__LIKELY(p == NULL)) { /* bw_init(&w, NULL, 0): the usual writer */
        if (n - 1 >= tc->shared_first) return NULL;
        *pp = tc->pool;
        return bw__tc_pop_class(tc->first, tc->shared_first, capacity);
    }
    if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id &&
        n - 1 < tc->first_size)
        return bw__tc_pop_class(tc->first, tc->first_size, capacity);
    return NULL;
}

/* Keep a writer's block in the calling thread's cache; false when it
 * cannot (then bw_pool_return, which tries the general fast path too). A
 * block of the first size goes to its class with no arithmetic. */
static inline bool bw__return_fast(bw_pool *p, void *block, size_t capacity)
{
    bw__tcache *tc = bw__tl_last;
    if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) != p->id ||
        BW__TRACK_IS_NOACCESS(block))
        return false;
    if (capacity == tc->first_size) return bw__tc_push_class(tc->first, block, capacity);
    return bw__return_fast_ok(p, block, capacity) && bw__tc_push(p, tc, block, capacity);
}

/* Keep a writer's block of the first size in the calling thread's cache
 * (no arithmetic: the cache knows the class); false for any other block,
 * or when the class is full. capacity is 0 for a writer with no block,
 * which first_back never is, so b may be NULL and p NULL then: the size's
 * compare comes first and says there is a block (which implies its pool).
 * Such a writer never teaches the pool: a first size is set only where no
 * learned size applies to it, and then it is at most learn_above
 * (bw_pool_create), so bw__pool_learns is false for every length it
 * holds. */
static inline bool bw__return_first(bw_pool *p, void *block, size_t capacity)
{
    bw__tcache *tc = bw__tl_last;
    return capacity == tc->first_back &&
           atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id &&
           !BW__TRACK_IS_NOACCESS(block) && bw__tc_push_class(tc->first, block, capacity);
}

/* Whether the pool zeroes what comes back (BW_POOL_ZERO_ON_RETURN): then
 * a contiguous writer lets its caller write only into a window of its
 * block, widened on the cold path, and returns the block with the
 * window's end (bw__pool_return_written), so that only what may have been
 * written is zeroed. */
static inline bool bw__pool_zeroes(const bw_pool *p)
{
    return (p->opt.flags & BW_POOL_ZERO_ON_RETURN) != 0;
}

/* bw_pool_return for a block whose user wrote nothing at or past
 * `written` since it was rented: a zeroing pool zeroes [0, written) only
 * (the rest still holds the zeros the block was handed out with); any
 * other pool is given a reservation back cut to `written` (bw__pool_cut).
 * The public bw_pool_return cannot know, so it zeroes the whole block. */
BW__INTERNAL int bw__pool_return_written(bw_pool *p, void *block, size_t capacity,
                                         size_t written);

/* The end of a contiguous writer's job of len bytes: the length teaches
 * the pool when bw__pool_learns says so, then block (NULL: none) goes back
 * as by bw__return_fast, else bw__pool_return_written. */
BW__INTERNAL void bw__pool_job_end(bw_pool *p, void *block, size_t capacity, size_t written,
                                   size_t len);

/* Reservations: a contiguous writer whose move must take fresh memory
 * above the threshold rents, where the pool's blocks there are the
 * platform's mappings (Linux; bw__pool_reserves), `reserve` bytes of
 * address space of which it writes only a window below the growth rule's
 * size (m.g.block and cap in mode_contig.c), widened in place as it
 * grows: no copy and no remap until the window reaches the reservation.
 * Pages of a mapping that were never written cost no memory, so the
 * writer's fresh memory is its window, within the bound as any block the
 * rule gives. A kept block of `size` comes first (*capacity = size);
 * a reservation only while the pool keeps no block above the threshold
 * (else the writer's later moves take kept ones: no fresh pages in steady
 * state); otherwise, or when the mapping fails, a plain rent of size.
 * NULL on failure. */
BW__INTERNAL void *bw__pool_rent_reserve(bw_pool *p, size_t size, size_t reserve,
                                         size_t *capacity);
/* Cut a reservation of capacity bytes to its first `size` (a power of two
 * of at least 2 MiB, the window) in place: the pages past it were never
 * written. Then a block of size, as any rented one (its return, regrow). */
BW__INTERNAL void bw__pool_cut(bw_pool *p, void *block, size_t capacity, size_t size);
/* Whether bw__pool_rent_reserve may hand out more than the size asked. */
static inline bool bw__pool_reserves(const bw_pool *p) { return p->reserves; }

/* bw__shared_pool, the shared pool once created, is pool_internal.h's:
 * the thread cache asks it too (shared_first). */

/* Grow a block above the threshold (used by the writer) to what
 * bw__pool_size said: into an idle kept large block of s->warm bytes, else
 * of s->size, when there is one (copying len bytes: warm memory beats
 * fresh pages), else with the allocator's realloc hook to s->size (glibc
 * moves large blocks with mremap instead of copying). Returns the new
 * block and its size in *new_cap, or NULL with b untouched. Only where
 * bw__pool_can_regrow says so. */
BW__INTERNAL void *bw__pool_regrow(bw_pool *p, void *b, size_t old_cap, size_t len,
                                   const bw__size *s, size_t *new_cap);
/* Whether bw__pool_regrow may be used: the hook has a realloc, and the pool
 * does not zero what comes back (realloc gives the old bytes to the
 * allocator as they are, so the next malloc in the process could read
 * them). */
static inline bool bw__pool_can_regrow(const bw_pool *p)
{
    return p->alloc.realloc != NULL && (p->opt.flags & BW_POOL_ZERO_ON_RETURN) == 0;
}

/* bw_detach_malloc's first question, inline: whether need bytes (the text
 * and its NUL) in a block of cap from p are copied rather than handed
 * over, for what a hand-off costs the pool. A block of a class the thread
 * cache keeps is the one the next job rents from it at once; handed over,
 * it leaves the pool and the next job's rent goes to the backing
 * allocator: a 252-byte text handed over in its 512-byte first block cost
 * 3.6x the instructions of building it and copying it out (the slow rent,
 * malloc and the general return; bench/profile_driver textoff).
 * So texts up to 64 KiB in those blocks are copied, whatever the block's
 * size, and the caller's memory fits them. Past 64 KiB the block goes, as
 * before: a copy and a hand-off count the same instructions there (1.000x
 * at 64 KiB, 0.997x-1.000x at 128-512 KiB), and a hand-off copies nothing
 * (a memcpy that big is a few instructions, rep movsb, to callgrind). */
#define BW__HAND_OFF_COPY_MAX ((size_t)64 << 10 | 1)
static inline bool bw__pool_copies(const bw_pool *p, size_t cap, size_t need)
{
    return p != NULL && need <= BW__HAND_OFF_COPY_MAX && cap <= p->fast_rent_limit;
}

/* bw_detach_malloc, when bw__pool_copies said no: true when block b,
 * rented from p with capacity cap, is to be handed over as memory free()
 * releases; it then leaves the pool's counts (a return and a backing free)
 * and is the caller's. False changes nothing: copy the bytes instead
 * (the block is not malloc's, or carries a canary). */
BW__INTERNAL bool bw__pool_hand_off(bw_pool *p, void *b, size_t cap, size_t need);
/* After bw__pool_hand_off, the need bytes at the start of b in place: the
 * block the caller gets. One much larger than need (more than twice need,
 * plus 64 bytes) is shrunk to need with the allocator's realloc hook (one
 * of malloc's: the hand-off allowed no other); otherwise, or when that
 * realloc fails, b itself. Nothing was written at or past `written` (a
 * zeroing pool zeroes the tail up to there only). */
BW__INTERNAL void *bw__pool_hand_off_fit(bw_pool *p, void *b, size_t cap, size_t need,
                                         size_t written);

#endif /* BW_POOL_WRITER_H */
