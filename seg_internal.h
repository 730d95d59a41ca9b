/* SPDX-License-Identifier: MIT */
/* seg_internal.h - what the segmented rooms share: mode_seg.c (the mode's
 * operations and table), seg_pieces.c (the tree of owned blocks and the
 * chunks of piece records) and seg_check.c (the invariants). The small
 * helpers are static inline, so that each operation compiles as it did when
 * the three were one file; the larger ones are BW__INTERNAL, called as they
 * were. The layout of a piece and of a block's trailer is in
 * writer_internal.h. */
#ifndef BW_SEG_INTERNAL_H
#define BW_SEG_INTERNAL_H

#include "writer_internal.h"

/* The current block's trailer, at data + cap. */
static inline bw__blk *bw__cur(const bw_writer *w)
{
    return (bw__blk *)(void *)(w->data + w->cap);
}
static inline size_t bw__blk_size(const bw__blk *b)
{
    return (size_t)((const unsigned char *)b - b->data) + BW__SEG_HDR;
}

/* Where the open piece starts (m.c.open): data[open] is where the last
 * closed piece ends, or base (bw__seg_check states it). */
static inline size_t bw__open(const bw_writer *w) { return w->m.c.open; }

/* A block's key in the tree of owned blocks (seg_pieces.c) is its
 * address, its priority a hash of that address. */
static inline uintptr_t bw__key(const bw__blk *b) { return (uintptr_t)b->data; }
static inline uint64_t bw__prio(const bw__blk *b)
{
    uint64_t x = (uint64_t)bw__key(b); /* murmur3's finalizer: distinct keys differ */
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    return x ^ (x >> 33);
}

/* The closed pieces' records sit in chunks rented from the pool, a list
 * (prev: older, next: newer) from m.c.head, whose held records are
 * [first, cap), to m.c.tail, whose held records are [0, count) (the head's
 * [first, count) when head is tail); every chunk between is full. The
 * chunks after the tail are spares, kept for the next pushes: a chunk
 * emptied by consume goes there, and bw_clear keeps them all, so a writer
 * used again allocates nothing. 0.4 kept one array that doubled by
 * copying itself: 49% of a linked record's instructions at 5,000 records
 * (callgrind, profile_driver refs). A record never moves, so growth costs
 * one rent. seq numbers the records: a chunk's pc[0] is record seq, the
 * next chunk's seq follows its last, so the held count is a subtraction.
 * The head also keeps the address range of the tree's blocks (lo, hi),
 * bw_append_ref's quick answer for memory that is not the writer's. */
typedef struct bw__pchunk bw__pchunk;
struct bw__pchunk {
    bw__pchunk *prev, *next;
    uint64_t seq;     /* pc[0]'s number among the records (64 bits: a
                         size_t wraps after 2^32 on 32-bit, and a queue
                         writer's records are numbered all its life)   */
    size_t cap;       /* records it holds                                */
    size_t bytes;     /* its size as rented                              */
    uintptr_t lo, hi; /* the head's: the tree's blocks lie in [lo, hi)   */
};
#define BW__PC(ch) ((bw__piece *)(void *)((ch) + 1))

/* What a reference with a done keeps beside its record: done(ctx, orig,
 * orig_n) once it leaves (consume and truncate move the record's p and
 * n). A chunk's cap records are followed by cap asides, the one at a
 * record's index its own, written only for a reference with a done: the
 * record that every link, write and walk touches is 32 bytes (on 64-bit)
 * and a link writes 4 fields for it, where one 64-byte record with these
 * in it cost a linked record 16 stores (callgrind, profile_driver refs).
 * Its place never moves, as the record's does not, so the record points
 * to it (own, odd). */
typedef struct bw__aside {
    bw_done_fn done; /* never NULL: a reference without one has no aside */
    void *ctx;
    const void *orig;
    size_t orig_n;
} bw__aside;
#define BW__PA(ch) ((bw__aside *)(void *)(BW__PC(ch) + (ch)->cap))
/* The bytes a record takes in a chunk: itself and its aside. */
#define BW__REC (sizeof(bw__piece) + sizeof(bw__aside))

/* The records after the header are aligned for their 64-bit end, the
 * asides after the records for their pointers, with the low bit of an
 * aside's address free for own's tag. */
typedef char bw__pc_aligned[sizeof(bw__pchunk) % sizeof(uint64_t) == 0 ? 1 : -1];
typedef char bw__pa_aligned[sizeof(bw__piece) % sizeof(void *) == 0 &&
                                    sizeof(void *) >= 2 ? 1 : -1];

/* Record pc's owned block, NULL for a reference. */
static inline bw__blk *bw__pc_blk(const bw__piece *pc)
{
    return (pc->own & 1) ? NULL : (bw__blk *)pc->own;
}

/* Record pc's aside: a reference's with a done, else NULL. */
static inline bw__aside *bw__pc_aside(const bw__piece *pc)
{
    return (pc->own & 1) ? (bw__aside *)(pc->own - 1) : NULL;
}

/* No closed piece held. */
static inline int bw__pc_none(const bw_writer *w)
{
    return w->m.c.head == w->m.c.tail && w->m.c.first == w->m.c.count;
}

/* The closed pieces held. */
static inline size_t bw__pc_held(const bw_writer *w)
{
    if (w->m.c.head == NULL) return 0;
    return (size_t)(w->m.c.tail->seq + w->m.c.count - (w->m.c.head->seq + w->m.c.first));
}

/* The record at (*ch, *i), moved on to the next chunk's first when *i is
 * past a full chunk's last; NULL when it is past the held ones (where the
 * open piece comes). Out of line (seg_pieces.c): inlined, gcc -O2 put it
 * into every caller, 157 bytes more in bw__seg_patch, 88 in bw__seg_take. */
BW__INTERNAL bw__piece *bw__pc_at(const bw_writer *w, bw__pchunk **ch, size_t *i);

/* seg_pieces.c: room for k more closed pieces (bw__pc_reserve's slow way),
 * a piece leaving, and the owned blocks: added to the tree, rented (its
 * trailer set, linked nowhere), the next one for a write. */
BW__INTERNAL BW__COLD int bw__pc_more(bw_writer *w, size_t k);
BW__INTERNAL void bw__piece_drop(bw_writer *w, bw__piece *pc);
BW__INTERNAL void bw__blk_link(bw_writer *w, bw__blk *b);
BW__INTERNAL bw__blk *bw__blk_rent(bw_writer *w, bw__size_req *r);
BW__INTERNAL bw__blk *bw__blk_next(bw_writer *w, size_t need);

/* Room for k more closed pieces: O(1) but for a chunk's rent. */
static inline int bw__pc_reserve(bw_writer *w, size_t k)
{
    const bw__pchunk *t = w->m.c.tail;
    if (BW__LIKELY(t != NULL && w->m.c.count + k <= t->cap)) return BW_OK;
    return bw__pc_more(w, k);
}

/* The tail is full: the next chunk (reserved) becomes the tail. */
static inline bw__pchunk *bw__pc_next_tail(bw_writer *w)
{
    bw__pchunk *t = w->m.c.tail, *nx = t->next;
    nx->seq = t->seq + t->cap;
    w->m.c.tail = nx;
    w->m.c.count = 0;
    return nx;
}

/* The head's records are all consumed (head is not the tail): it becomes
 * the first spare, after the tail, and the next chunk the head. */
static inline void bw__pc_head_done(bw_writer *w)
{
    bw__pchunk *h = w->m.c.head, *t = w->m.c.tail;
    w->m.c.head = h->next;
    h->next->prev = NULL;
    h->next->lo = h->lo;
    h->next->hi = h->hi;
    h->prev = t;
    h->next = t->next;
    if (t->next != NULL) t->next->prev = h;
    t->next = h;
    w->m.c.first = 0;
}

/* The last closed piece leaves (some held): the tail steps back to the
 * chunk before when it is left empty. */
static inline void bw__pc_pop(bw_writer *w)
{
    bw__piece *pc = &BW__PC(w->m.c.tail)[--w->m.c.count];
    if (w->m.c.count == 0 && w->m.c.tail != w->m.c.head) {
        w->m.c.tail = w->m.c.tail->prev;
        w->m.c.count = (uint32_t)w->m.c.tail->cap;
    }
    bw__piece_drop(w, pc);
}

/* No closed piece left: records start again at the head's first. */
static inline void bw__pc_restart(bw_writer *w)
{
    if (w->m.c.head != NULL && bw__pc_none(w)) w->m.c.first = w->m.c.count = 0;
}

/* Take the highest block out of tree *t, or NULL: for emptying a whole
 * tree in O(blocks) (rotations, no stack; the priorities no longer hold,
 * so nothing but more pops may follow). Highest first, as the list gave
 * the newest first: given back lowest first, the blocks of a job of 1,000
 * moved headers that the pool cannot keep cost 716 page faults a job under
 * glibc (bench Z/link_after_move: 45x slower). */
static inline bw__blk *bw__blk_pop(bw__blk **t)
{
    bw__blk *b = *t, *r;
    if (b == NULL) return NULL;
    while ((r = b->right) != NULL) {
        b->right = r->left;
        r->left = b;
        b = r;
    }
    *t = b->left;
    return b;
}

/* Block b (NULL: none) goes back to the pool. */
static inline void bw__blk_return(bw_writer *w, bw__blk *b)
{
    if (b != NULL) (void)bw_pool_return(w->pool, b->data, bw__blk_size(b));
}

#endif /* BW_SEG_INTERNAL_H */
