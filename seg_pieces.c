/* SPDX-License-Identifier: MIT */
/* seg_pieces.c - the segmented mode's storage room: the tree of blocks a
 * segmented writer owns (m.c.blocks, a treap by address) and the chunks
 * its closed pieces' records sit in (m.c.head to m.c.tail), with renting a
 * block and a chunk. The operations on the held bytes are in mode_seg.c;
 * what the rooms share, in seg_internal.h. */
#include "seg_internal.h"

typedef char bw__seg_fits[sizeof(bw__blk) <= BW__SEG_HDR ? 1 : -1];
typedef char bw__seg_hdr_aligned[BW__SEG_HDR % BW__SEG_ALIGN == 0 ? 1 : -1];

/* The owned blocks but the current one are a treap keyed by address
 * (m.c.blocks its root), a block's priority a hash of its address: found,
 * added and removed in O(log blocks) expected, whatever order they come
 * in. 0.4 kept a list, and bw_append_ref's overlap check walked it: after
 * n moves that each brought a block, n links cost O(n^2). The links live
 * in the trailer, so the tree costs no memory. */

/* Split tree t into the blocks below key k (*l) and the rest (*r). */
static void bw__blk_split(bw__blk *t, uintptr_t k, bw__blk **l, bw__blk **r)
{
    while (t != NULL) {
        if (bw__key(t) < k) {
            *l = t;
            l = &t->right;
            t = t->right;
        } else {
            *r = t;
            r = &t->left;
            t = t->left;
        }
    }
    *l = *r = NULL;
}

static void bw__range_add(bw_writer *w, const bw__blk *b);

/* Add b: down to where its priority belongs, the subtree there split
 * around it. */
BW__INTERNAL void bw__blk_link(bw_writer *w, bw__blk *b)
{
    bw__blk **at = &w->m.c.blocks;
    uint64_t pr = bw__prio(b);
    bw__range_add(w, b);
    while (*at != NULL && bw__prio(*at) > pr)
        at = bw__key(b) < bw__key(*at) ? &(*at)->left : &(*at)->right;
    bw__blk_split(*at, bw__key(b), &b->left, &b->right);
    *at = b;
}

/* Remove b (in the tree): its two subtrees merged in its place. */
static void bw__blk_unlink(bw_writer *w, bw__blk *b)
{
    bw__blk **at = &w->m.c.blocks, *l = b->left, *r = b->right;
    while (*at != b) at = bw__key(b) < bw__key(*at) ? &(*at)->left : &(*at)->right;
    while (l != NULL && r != NULL) { /* every key in l is below every key in r */
        if (bw__prio(l) > bw__prio(r)) {
            *at = l;
            at = &l->right;
            l = l->right;
        } else {
            *at = r;
            at = &r->left;
            r = r->left;
        }
    }
    *at = l != NULL ? l : r;
}

/* A piece leaves: a reference's done is called; a block of the tree that
 * holds no piece any more goes back (the current block stays). */
BW__INTERNAL void bw__piece_drop(bw_writer *w, bw__piece *pc)
{
    bw__blk *b = bw__pc_blk(pc);
    if (b == NULL) {
        const bw__aside *a = bw__pc_aside(pc);
        if (a != NULL) a->done(a->ctx, a->orig, a->orig_n);
        return;
    }
    if (--b->pieces == 0 && (w->data == NULL || b != bw__cur(w))) {
        bw__blk_unlink(w, b);
        (void)bw_pool_return(w->pool, b->data, bw__blk_size(b));
    }
}

/* The first chunk of records' size (seg_internal.h, bw__pchunk); each next
 * one twice the last, up to the largest: O(log records) chunks
 * (bw__seg_find walks them) for what a writer holds at once, and one chunk
 * never much larger than it needs. */
#define BW__PC_FIRST ((size_t)1024)
#define BW__PC_LARGEST ((size_t)1 << 20)

/* The tree's address range (the head's lo, hi) takes in block b, about
 * to join it: the range of b alone when the tree is empty. A block that
 * leaves does not narrow it: a wider range only sends bw__seg_overlaps to
 * the tree. The tree holds blocks only while closed pieces are held, so
 * there is a head to keep it. */
static void bw__range_add(bw_writer *w, const bw__blk *b)
{
    bw__pchunk *h = w->m.c.head;
    uintptr_t lo = bw__key(b), hi = (uintptr_t)b + BW__SEG_HDR;
    if (h == NULL) return;
    if (w->m.c.blocks == NULL) {
        h->lo = lo;
        h->hi = hi;
        return;
    }
    if (lo < h->lo) h->lo = lo;
    if (hi > h->hi) h->hi = hi;
}

/* A new chunk of at least `want` bytes after `last` (NULL: the first). */
static int bw__pc_rent(bw_writer *w, bw__pchunk *last, size_t want)
{
    bw_pool *p = bw__pool_of(w);
    size_t got = 0;
    bw__pchunk *c = p != NULL ? (bw__pchunk *)bw_pool_rent(p, want, &got) : NULL;
    if (c == NULL) return bw__fail(w, BW_ENOMEM);
    c->bytes = got;
    c->cap = (got - sizeof *c) / BW__REC;
    if (c->cap > UINT32_MAX / 2) c->cap = UINT32_MAX / 2; /* count is 32 bits */
    c->prev = last;
    c->next = NULL;
    c->seq = 0;
    c->lo = c->hi = 0;
    if (last != NULL) {
        last->next = c;
    } else {
        w->m.c.head = w->m.c.tail = c;
        w->m.c.first = w->m.c.count = 0;
    }
    return BW_OK;
}

/* Room for k more closed pieces beyond the tail's: the spares count, and
 * one chunk is rented for the rest. BW_ENOMEM recorded, nothing changed. */
BW__INTERNAL BW__COLD int bw__pc_more(bw_writer *w, size_t k)
{
    bw__pchunk *last = w->m.c.tail, *c;
    size_t room = last != NULL ? last->cap - w->m.c.count : 0, want;
    for (c = last != NULL ? last->next : NULL; c != NULL && room < k; c = c->next) {
        room += c->cap;
        last = c;
    }
    if (room >= k) return BW_OK;
    if (k - room > (BW__MAX_BLOCK - sizeof *c) / BW__REC || k > UINT32_MAX / 2)
        return bw__fail(w, BW_EOVERFLOW);
    want = last == NULL ? BW__PC_FIRST : last->bytes < BW__PC_LARGEST ? 2 * last->bytes
                                                                      : BW__PC_LARGEST;
    if (want < sizeof *c + (k - room) * BW__REC) want = sizeof *c + (k - room) * BW__REC;
    return bw__pc_rent(w, last, want);
}

/* Rent a block of the size the pool's rule gives for request r (SEG or
 * BLOCK: n bytes, trailer included, aligned to BW__SEG_ALIGN): its trailer
 * set, not linked anywhere. NULL: recorded. */
BW__INTERNAL bw__blk *bw__blk_rent(bw_writer *w, bw__size_req *r)
{
    bw_pool *p = bw__pool_of(w);
    size_t got = 0;
    bw__size want;
    unsigned char *d;
    bw__blk *b;
    int rc;
    r->align = BW__SEG_ALIGN;
    rc = p != NULL ? bw__pool_size(p, r, &want) : BW_ENOMEM;
    d = rc == BW_OK ? (unsigned char *)bw_pool_rent(p, want.size, &got) : NULL;
    if (d == NULL) {
        bw__fail(w, rc != BW_OK ? rc : BW_ENOMEM);
        return NULL;
    }
    b = (bw__blk *)(void *)(d + got - BW__SEG_HDR);
    b->data = d;
    b->left = b->right = NULL;
    b->pieces = 0;
    return b;
}

/* The blocks of tree t larger than `above`: their bytes added to *held,
 * their number to *count (recursion as deep as the tree). */
static void bw__blk_large(const bw__blk *t, size_t above, size_t *held, size_t *count)
{
    for (; t != NULL; t = t->right) {
        bw__blk_large(t->left, above, held, count);
        if (bw__blk_size(t) > above) {
            *held += bw__blk_size(t);
            (*count)++;
        }
    }
}

/* The next block for `need` contiguous bytes: one request to the pool's
 * size rule, told what the writer holds, and what it holds above the
 * threshold. One request, however large. */
BW__INTERNAL bw__blk *bw__blk_next(bw_writer *w, size_t need)
{
    bw_pool *p = bw__pool_of(w);
    bw__size_req r = {.kind = BW__SIZE_SEG};
    if (p == NULL || need > BW__MAX_BLOCK - BW__SEG_HDR) {
        bw__fail(w, p == NULL ? BW_ENOMEM : BW_EOVERFLOW);
        return NULL;
    }
    r.n = need + BW__SEG_HDR;
    r.held = bw_len(w);
    r.cap = w->data != NULL ? w->cap + BW__SEG_HDR : 0;
    /* Only a segmented writer about to pass the threshold walks its blocks. */
    if (r.cap > bw__pool_threshold(p) / 2)
        bw__blk_large(w->m.c.blocks, bw__pool_threshold(p), &r.large_held, &r.large_count);
    if (r.cap > bw__pool_threshold(p)) {
        r.large_held += r.cap;
        r.large_count++;
    }
    r.first = w->blk_log2 != 0 ? (size_t)1 << w->blk_log2 : 0;
    return bw__blk_rent(w, &r);
}

/* The record at (*ch, *i) (seg_internal.h). */
BW__INTERNAL bw__piece *bw__pc_at(const bw_writer *w, bw__pchunk **ch, size_t *i)
{
    if (*ch != NULL && *ch != w->m.c.tail && *i == (*ch)->cap) {
        *ch = (*ch)->next;
        *i = 0;
    }
    if (*ch == NULL || (*ch == w->m.c.tail && *i >= w->m.c.count)) return NULL;
    return &BW__PC(*ch)[*i];
}
