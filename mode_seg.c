/* SPDX-License-Identifier: MIT */
/* mode_seg.c - the segmented room (bw_init_chain): held bytes as pieces
 * over blocks the writer owns and over caller memory linked by reference
 * (bw_append_ref, bw_move). It owns the piece array (m.c.pc), the tree of
 * owned blocks (m.c.blocks, a treap by address), the open piece, every
 * operation on them and its table, bw__seg_ops. The layout of a piece and
 * of a block's trailer is in writer_internal.h. */
#include "writer_internal.h"

typedef char bw__seg_fits[sizeof(bw__blk) <= BW__SEG_HDR ? 1 : -1];
typedef char bw__seg_hdr_aligned[BW__SEG_HDR % BW__SEG_ALIGN == 0 ? 1 : -1];

/* One rule (writer_internal.h, bw__piece): the held bytes are the closed
 * pieces, then the open piece data[open, len) of the current block. A
 * reference or a move closes the open piece and pushes pieces; a full
 * block is closed the same way and a new one becomes current. Nothing
 * moves once written, so every pointer to a held byte stays valid until
 * that byte leaves; a piece leaves by consume (front), truncate (back) or
 * reset, and a block goes back when the last piece in it leaves. */

static bw__blk *bw__cur(const bw_writer *w) { return (bw__blk *)(void *)(w->data + w->cap); }
static size_t bw__blk_size(const bw__blk *b)
{
    return (size_t)((const unsigned char *)b - b->data) + BW__SEG_HDR;
}

/* Where the open piece starts: where the last closed piece ends, or base. */
static size_t bw__open(const bw_writer *w)
{
    uint64_t at = w->m.c.count != w->m.c.first ? w->m.c.pc[w->m.c.count - 1].end : w->base;
    return (size_t)(at - w->pos);
}

/* The owned blocks but the current one are a treap keyed by address
 * (m.c.blocks its root), a block's priority a hash of its address: found,
 * added and removed in O(log blocks) expected, whatever order they come
 * in. 0.4 kept a list, and bw_append_ref's overlap check walked it: after
 * n moves that each brought a block, n links cost O(n^2). The links live
 * in the trailer, so the tree costs no memory. */
static uintptr_t bw__key(const bw__blk *b) { return (uintptr_t)b->data; }
static uint64_t bw__prio(const bw__blk *b)
{
    uint64_t x = (uint64_t)bw__key(b); /* murmur3's finalizer: distinct keys differ */
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    return x ^ (x >> 33);
}

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

/* Add b: down to where its priority belongs, the subtree there split
 * around it. */
static void bw__blk_link(bw_writer *w, bw__blk *b)
{
    bw__blk **at = &w->m.c.blocks;
    uint64_t pr = bw__prio(b);
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

/* Take the highest block out of tree *t, or NULL: for emptying a whole
 * tree in O(blocks) (rotations, no stack; the priorities no longer hold,
 * so nothing but more pops may follow). Highest first, as the list gave
 * the newest first: given back lowest first, the blocks of a job of 1,000
 * moved headers that the pool cannot keep cost 716 page faults a job under
 * glibc (bench Z/link_after_move: 45x slower). */
static bw__blk *bw__blk_pop(bw__blk **t)
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

/* A piece leaves: a reference's done is called; a block of the tree that
 * holds no piece any more goes back (the current block stays). */
static void bw__piece_drop(bw_writer *w, bw__piece *pc)
{
    bw__blk *b = pc->blk;
    if (b == NULL) {
        if (pc->done != NULL) pc->done(pc->ctx, pc->orig, pc->orig_n);
        return;
    }
    if (--b->pieces == 0 && (w->data == NULL || b != bw__cur(w))) {
        bw__blk_unlink(w, b);
        (void)bw_pool_return(w->pool, b->data, bw__blk_size(b));
    }
}

/* Room for k more closed pieces (amortized O(1): the array doubles, or
 * moves down over consumed pieces); BW_ENOMEM recorded, nothing changed. */
static int bw__pc_reserve(bw_writer *w, size_t k)
{
    size_t held = w->m.c.count - w->m.c.first, room = w->m.c.pc_cap / sizeof(bw__piece);
    size_t want, got = 0;
    bw__piece *pc;
    bw_pool *p;
    if (w->m.c.count + k <= room) return BW_OK;
    if (held + k <= room / 2) { /* half the array consumed: move down */
        memmove(w->m.c.pc, w->m.c.pc + w->m.c.first, held * sizeof(bw__piece));
    } else {
        want = room < 16 ? 16 : 2 * room;
        if (want < held + k) want = held + k;
        if (want > UINT32_MAX / 2) return bw__fail(w, BW_EOVERFLOW);
        p = bw__pool_of(w);
        pc = p != NULL ? (bw__piece *)bw_pool_rent(p, want * sizeof(bw__piece), &got) : NULL;
        if (pc == NULL) return bw__fail(w, BW_ENOMEM);
        if (held != 0) memcpy(pc, w->m.c.pc + w->m.c.first, held * sizeof(bw__piece));
        if (w->m.c.pc != NULL) (void)bw_pool_return(p, w->m.c.pc, w->m.c.pc_cap);
        w->m.c.pc = pc;
        w->m.c.pc_cap = got;
    }
    w->m.c.first = 0;
    w->m.c.count = (uint32_t)held;
    return BW_OK;
}

/* Whether the open piece holds bytes, which closing it pushes. */
static int bw__must_close(const bw_writer *w) { return w->data != NULL && bw__open(w) != w->len; }

/* Close the open piece (room for it reserved): it joins the array. */
static void bw__close_open(bw_writer *w)
{
    size_t open;
    bw__piece *pc;
    if (!bw__must_close(w)) return;
    open = bw__open(w);
    pc = &w->m.c.pc[w->m.c.count++];
    pc->p = w->data + open;
    pc->n = w->len - open;
    pc->end = bw_tell(w);
    pc->blk = bw__cur(w);
    pc->blk->pieces++;
}

/* Rent a block of the size the pool's rule gives for request r (SEG or
 * BLOCK: n bytes, trailer included, aligned to BW__SEG_ALIGN): its trailer
 * set, not linked anywhere. NULL: recorded. */
static bw__blk *bw__blk_rent(bw_writer *w, bw__size_req *r)
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
static bw__blk *bw__blk_next(bw_writer *w, size_t need)
{
    bw_pool *p = bw__pool_of(w);
    bw__size_req r = {BW__SIZE_SEG, false, 0, 0, 0, 0, 0, 1};
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
    return bw__blk_rent(w, &r);
}

static void bw__blk_return(bw_writer *w, bw__blk *b)
{
    if (b != NULL) (void)bw_pool_return(w->pool, b->data, bw__blk_size(b));
}

/* b becomes the current block (room for closing the open piece reserved).
 * The old one joins the tree when it holds pieces; else it is returned
 * for the caller to give back (bw_cstr's "" may still be read in it). */
static bw__blk *bw__blk_switch(bw_writer *w, bw__blk *b)
{
    bw__blk *gone = NULL;
    if (w->data != NULL) {
        bw__close_open(w);
        if (bw__cur(w)->pieces != 0) bw__blk_link(w, bw__cur(w));
        else gone = bw__cur(w);
    }
    w->pos = bw_tell(w);
    w->data = b->data;
    w->cap = (size_t)((unsigned char *)b - b->data);
    w->len = 0;
    bw__set_lim(w);
    return gone;
}


/* Room: a write fills the rest of the current block first; room alone
 * (src NULL) must be contiguous and leaves that rest. */
static BW__COLD int bw__room_seg(bw_writer *w, size_t n, const void *src)
{
    size_t first = src != NULL && w->data != NULL ? w->cap - w->len : 0;
    bw__blk *b = bw__blk_next(w, n - first), *gone;
    if (b == NULL || bw__pc_reserve(w, (size_t)(bw__must_close(w) || first != 0)) != BW_OK) {
        bw__blk_return(w, b);
        return w->err;
    }
    if (first != 0) {
        memcpy(w->data + w->len, src, first);
        w->len += first;
    }
    gone = bw__blk_switch(w, b);
    if (src != NULL) {
        memcpy(w->data, (const unsigned char *)src + first, n - first);
        w->len = n - first;
    }
    bw__blk_return(w, gone); /* it held nothing, so src was not in it */
    return BW_OK;
}

/* Room kept (bw__room_keep): a new current block; nothing moves. */
static int bw__seg_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw__blk *b = bw__blk_next(w, n), *gone;
    if (b == NULL || bw__pc_reserve(w, (size_t)bw__must_close(w)) != BW_OK) {
        bw__blk_return(w, b);
        return w->err;
    }
    gone = bw__blk_switch(w, b);
    if (gone != NULL) {
        *old = gone->data;
        *old_cap = bw__blk_size(gone);
    }
    return BW_OK;
}

/* Walk: the closed pieces, then the open one. */
static int bw__seg_walk(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    size_t i = c->started ? c->i + 1 : w->m.c.first;
    c->started = 1;
    c->i = i;
    if (i < w->m.c.count) {
        *p = w->m.c.pc[i].p;
        *n = w->m.c.pc[i].n;
        return 1;
    }
    if (i > w->m.c.count || w->data == NULL) return 0;
    *p = w->data + bw__open(w);
    *n = w->len - bw__open(w);
    return 1;
}

static size_t bw__seg_pieces(const bw_writer *w)
{
    return w->m.c.count - w->m.c.first + (w->data != NULL && bw__open(w) != w->len);
}

/* Drop from the front (base has moved): whole pieces leave, the first kept
 * one starts later; what is left of n is the open piece's, whose start
 * follows base. */
static void bw__seg_drop_front(bw_writer *w, size_t n)
{
    while (n != 0 && w->m.c.first != w->m.c.count) {
        bw__piece *pc = &w->m.c.pc[w->m.c.first];
        if (n < pc->n) {
            pc->p += n;
            pc->n -= n;
            return;
        }
        n -= pc->n;
        w->m.c.first++;
        bw__piece_drop(w, pc);
    }
    if (w->m.c.first == w->m.c.count) w->m.c.first = w->m.c.count = 0;
}

/* The first closed piece that ends after pos (count: the open piece's):
 * O(1) in the open piece (a patch at the end), else a binary search. */
static size_t bw__seg_find(const bw_writer *w, uint64_t pos)
{
    size_t lo = w->m.c.first, hi = w->m.c.count;
    if (lo == hi || w->m.c.pc[hi - 1].end <= pos) return hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->m.c.pc[mid].end > pos) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* Cut: in the open piece, len moves back; else the piece holding pos is
 * shortened, every later one leaves, and writes go on at the current
 * block's len (from its start when no piece is left in it). */
static void bw__seg_cut(bw_writer *w, uint64_t pos)
{
    size_t i, k;
    uint64_t open_at = w->pos + bw__open(w);
    if (pos >= open_at || w->m.c.first == w->m.c.count) {
        w->len = (size_t)(pos - w->pos);
        bw__set_lim(w);
        return;
    }
    i = bw__seg_find(w, pos);
    k = i;
    if (pos > w->m.c.pc[i].end - w->m.c.pc[i].n) { /* pos inside piece i: it stays */
        w->m.c.pc[i].n -= (size_t)(w->m.c.pc[i].end - pos);
        w->m.c.pc[i].end = pos;
        k++;
    }
    while (w->m.c.count > k) bw__piece_drop(w, &w->m.c.pc[--w->m.c.count]);
    if (w->m.c.first == w->m.c.count) w->m.c.first = w->m.c.count = 0;
    if (w->data != NULL && bw__cur(w)->pieces == 0) w->len = 0;
    w->pos = pos - w->len;
    bw__set_lim(w);
}

/* Reset: every piece leaves (a reference's done is called), every block
 * and the array go back; one pass, no block unlinked one by one. */
static void bw__seg_drop_storage(bw_writer *w)
{
    uint32_t i;
    bw__blk *b;
    for (i = w->m.c.first; i < w->m.c.count; i++) {
        const bw__piece *pc = &w->m.c.pc[i];
        if (pc->blk == NULL && pc->done != NULL) pc->done(pc->ctx, pc->orig, pc->orig_n);
    }
    while ((b = bw__blk_pop(&w->m.c.blocks)) != NULL) bw__blk_return(w, b);
    w->m.c.first = w->m.c.count = 0;
    if (w->data != NULL) bw__blk_return(w, bw__cur(w));
    if (w->m.c.pc != NULL) (void)bw_pool_return(w->pool, w->m.c.pc, w->m.c.pc_cap);
    w->m.c.pc = NULL;
    w->m.c.pc_cap = 0;
    w->m.c.blocks = NULL;
    w->data = NULL;
    w->cap = 0;
}

/* Make contiguous: the held bytes as the open piece of one block with
 * extra free bytes after them (already so: as they are); else copied into
 * a new block, every piece leaving. */
static unsigned char *bw__seg_contiguous(bw_writer *w, size_t extra)
{
    size_t held, off = 0, k;
    bw__size_req r = {BW__SIZE_BLOCK, false, 0, 0, 0, 0, 0, 1};
    bw__cursor c = {0, 0};
    const unsigned char *src;
    bw__blk *b;
    BW__ASSUME(w != NULL); /* every caller checked; bw_len's own check hides it from gcc */
    if (w->m.c.first == w->m.c.count && w->data != NULL && w->cap - w->len >= extra)
        return w->data + bw__open(w);
    held = bw_len(w);
    if (held > BW__MAX_BLOCK - BW__SEG_HDR - extra) {
        bw__fail(w, BW_EOVERFLOW);
        return NULL;
    }
    r.n = held + extra + BW__SEG_HDR;
    b = bw__blk_rent(w, &r);
    if (b == NULL) return NULL;
    while (bw__seg_walk(w, &c, &src, &k)) {
        if (k != 0) memcpy(b->data + off, src, k);
        off += k;
    }
    bw__seg_drop_front(w, held);
    if (w->data != NULL) bw__blk_return(w, bw__cur(w));
    w->data = b->data;
    w->cap = (size_t)((unsigned char *)b - b->data);
    w->pos = w->base;
    w->len = held;
    bw__set_lim(w);
    return b->data;
}

/* Overlaps: the writer's own blocks (references are the caller's), in
 * O(log blocks): blocks do not overlap, so of those in the tree only the
 * last that starts below the end of [p, p + n) can reach into it. */
static int bw__seg_overlaps(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, e = a + n;
    const bw__blk *b = w->m.c.blocks, *below = NULL;
    if (n == 0) return 0;
    if (bw__in_block(w, p, n)) return 1;
    while (b != NULL) {
        if (bw__key(b) < e) {
            below = b;
            b = b->right;
        } else {
            b = b->left;
        }
    }
    return below != NULL && a < (uintptr_t)below + BW__SEG_HDR; /* the trailer ends it */
}

/* Block size: the current block's, its trailer included, when it holds
 * every held byte. */
static size_t bw__seg_block_size(const bw_writer *w)
{
    return w->m.c.first == w->m.c.count ? w->cap + BW__SEG_HDR : 0;
}

/* Piece i's part of [pos, end) (i == count: the open piece): where it
 * starts in memory, and its length in *k (0: none). */
static unsigned char *bw__seg_span(const bw_writer *w, size_t i, uint64_t pos, uint64_t end,
                                     size_t *k)
{
    const unsigned char *p;
    uint64_t from, to;
    if (i < w->m.c.count) {
        to = w->m.c.pc[i].end;
        from = to - w->m.c.pc[i].n;
        p = w->m.c.pc[i].p;
    } else if (w->data == NULL) {
        *k = 0;
        return NULL;
    } else {
        from = w->pos + bw__open(w);
        to = bw_tell(w);
        p = w->data + bw__open(w);
    }
    if (from < pos) {
        p += pos - from;
        from = pos;
    }
    if (to > end) to = end;
    *k = to > from ? (size_t)(to - from) : 0;
    return (unsigned char *)(uintptr_t)p;
}

/* Own: the references among [pos, end) are copied into one new block (a
 * patch never writes the caller's memory); their done is called. */
static int bw__seg_own(bw_writer *w, size_t i, uint64_t end, size_t bytes)
{
    bw__size_req r = {BW__SIZE_BLOCK, false, bytes + BW__SEG_HDR, 0, 0, 0, 0, 1};
    bw__blk *b = bw__blk_rent(w, &r);
    size_t off = 0;
    if (b == NULL) return BW_ENOMEM;
    for (; i < w->m.c.count && w->m.c.pc[i].end - w->m.c.pc[i].n < end; i++) {
        bw__piece *pc = &w->m.c.pc[i];
        if (pc->blk != NULL) continue;
        memcpy(b->data + off, pc->p, pc->n);
        bw__piece_drop(w, pc);
        pc->p = b->data + off;
        pc->blk = b;
        b->pieces++;
        off += pc->n;
    }
    bw__blk_link(w, b);
    return BW_OK;
}

/* Patch: O(log pieces) to find the first piece, then each piece's part. A
 * source among the writer's blocks needs no copy unless it overlaps two
 * of the parts written (a part that overlaps it is written last, with
 * memmove); a source in a reference that own gives back is copied first.
 * Memory only for references (own) and for such a source. */
static int bw__seg_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    unsigned char buf[64], *last = NULL, *d;
    const unsigned char *in = (const unsigned char *)src;
    uintptr_t a = (uintptr_t)src, e = a + n;
    void *tmp = NULL;
    size_t i0 = bw__seg_find(w, pos), i, k, refs = 0, last_off = 0, last_k = 0;
    uint64_t end = pos + n;
    int in_ref = 0, hits = 0, rc = BW_OK;
    size_t tmp_cap = 0;
    for (i = i0; i <= w->m.c.count; i++) {
        d = bw__seg_span(w, i, pos, end, &k);
        if (k == 0) break;
        if (i < w->m.c.count && w->m.c.pc[i].blk == NULL) {
            refs += w->m.c.pc[i].n;
            in_ref |= e > (uintptr_t)w->m.c.pc[i].p &&
                      a < (uintptr_t)w->m.c.pc[i].p + w->m.c.pc[i].n;
        } else if (e > (uintptr_t)d && a < (uintptr_t)d + k) {
            hits++;
        }
    }
    if (in_ref || hits > 1) {
        in = (const unsigned char *)bw__stable_copy(w, src, n, buf, sizeof buf, &tmp, &tmp_cap);
        if (in == NULL) return BW_ENOMEM;
    }
    if (refs != 0) rc = bw__seg_own(w, i0, end, refs);
    for (i = i0; rc == BW_OK && i <= w->m.c.count; i++) {
        d = bw__seg_span(w, i, pos, end, &k);
        if (k == 0) break;
        if (in == src && e > (uintptr_t)d && a < (uintptr_t)d + k) {
            last = d; /* over the source: written last, when it has been read */
            last_k = k;
            last_off = (size_t)(pos - end + n);
        } else {
            memcpy(d, in + (pos - end + n), k);
        }
        pos += k;
    }
    if (last != NULL) memmove(last, in + last_off, last_k);
    if (tmp != NULL) (void)bw_pool_return(w->pool, tmp, tmp_cap);
    return rc;
}

/* Link: O(1) amortized; the bytes are copied instead when they are empty
 * or lie in a block of the writer's (consume or truncate would give it
 * back under the reference). Caller memory is linked as often as given. */
static int bw__seg_link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    bw__piece *pc;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (n == 0 || bw__seg_overlaps(w, data, n)) return bw__link_copy(w, data, n, done, ctx);
    if (bw__pc_reserve(w, 2) != BW_OK) return w->err;
    bw__close_open(w);
    pc = &w->m.c.pc[w->m.c.count++];
    pc->p = (const unsigned char *)data;
    pc->n = pc->orig_n = n;
    pc->end = bw_tell(w) + n;
    pc->blk = NULL;
    pc->done = done;
    pc->ctx = ctx;
    pc->orig = data;
    w->pos += n; /* the open piece starts after it, in the same block */
    bw__set_lim(w); /* a size limit is nearer now */
    return BW_OK;
}

/* A moved piece in a block of src's is copied rather than relinked when
 * that block is more than this many times its bytes, the bound a writer
 * keeps to (no block larger than 16 x its bytes, pool/growth.c): a 16-byte
 * header written in a writer of its own would otherwise bring its 4 KiB
 * block, and 8,000 of them 32 MiB for 128 KB. The copy is at most 1/16 of
 * a block that goes back to the pool at once, and needs no memory. */
#define BW__MOVE_COPY ((size_t)16)

/* Whether take copies src's piece pc into dst's current block: it lies in
 * a block of src's more than BW__MOVE_COPY times its bytes, and fits. */
static int bw__take_copies(const bw_writer *dst, const bw__piece *pc)
{
    return pc->blk != NULL && dst->data != NULL && dst->cap - dst->len >= pc->n &&
           bw__blk_size(pc->blk) / BW__MOVE_COPY > pc->n;
}

/* Take (bw_move) between segmented writers of one pool: src's pieces
 * follow dst's in order, as closed pieces (their positions moved) whose
 * blocks join dst's tree, but for a small piece of src's own, whose bytes
 * go on dst's open piece (bw__take_copies), as a write would put them;
 * and src's current block becomes dst's when it has more free room, so
 * that the small pieces of later moves have somewhere to go (a writer
 * that only moves and links has no block of its own). Nothing is rented
 * but room for the records: one per src piece, and one for closing dst's
 * open piece before each piece relinked after bytes copied (at most one
 * more than src's pieces in all). 1 done, 0 to have the bytes copied, or
 * the recorded error. */
static int bw__seg_take(bw_writer *dst, bw_writer *src)
{
    size_t i, open = 0;
    bw__piece last = {NULL, 0, 0, NULL, NULL, NULL, NULL, 0};
    bw__blk *b, *cur = src->data != NULL ? bw__cur(src) : NULL;
    int adopt;
    if (!(bw__traits(src) & BW__LINKS) || bw_writer_pool(dst) != bw_writer_pool(src)) return 0;
    if (bw__pc_reserve(dst, src->m.c.count - src->m.c.first + 2) != BW_OK) return dst->err;
    if (cur != NULL) open = bw__open(src);
    for (i = src->m.c.first; i <= src->m.c.count; i++) {
        const bw__piece *from = &last;
        bw__piece *pc;
        if (i < src->m.c.count) {
            from = &src->m.c.pc[i];
            if (bw__take_copies(dst, from)) {
                memcpy(dst->data + dst->len, from->p, from->n);
                dst->len += from->n;
                from->blk->pieces--; /* a block left with none goes back below */
                continue;
            }
        } else { /* src's open piece, when it holds bytes */
            if (cur == NULL || open == src->len) break;
            last.p = src->data + open;
            last.n = src->len - open;
            last.blk = cur; /* not counted in cur's pieces (yet) */
            if (bw__take_copies(dst, &last)) {
                memcpy(dst->data + dst->len, last.p, last.n);
                dst->len += last.n;
                break;
            }
            /* dst takes src's current block when it has more room. */
            adopt = dst->data == NULL || src->cap - src->len > dst->cap - dst->len;
            bw__close_open(dst);
            if (adopt) {
                if (dst->data != NULL) {
                    if (bw__cur(dst)->pieces != 0) bw__blk_link(dst, bw__cur(dst));
                    else bw__blk_return(dst, bw__cur(dst));
                }
                dst->pos = bw_tell(dst) + last.n - src->len;
                dst->data = src->data;
                dst->cap = src->cap;
                dst->len = src->len;
                cur = NULL; /* dst's now */
                break;
            }
            cur->pieces++;
        }
        bw__close_open(dst);
        pc = &dst->m.c.pc[dst->m.c.count++];
        *pc = *from;
        pc->end = bw_tell(dst) + pc->n;
        dst->pos += pc->n; /* the open piece starts after it, in the same block */
    }
    /* src's blocks that still hold pieces are dst's now; the others go
     * back. */
    while ((b = bw__blk_pop(&src->m.c.blocks)) != NULL) {
        if (b->pieces != 0) bw__blk_link(dst, b);
        else bw__blk_return(src, b);
    }
    if (cur != NULL) {
        if (cur->pieces != 0) bw__blk_link(dst, cur);
        else bw__blk_return(src, cur);
    }
    dst->pool = bw__pool_of(src);
    dst->flags &= (unsigned char)~BW__CSTR;
    bw__set_lim(dst);
    src->m.c.first = src->m.c.count = 0;
    src->pos = src->base = bw_tell(src);
    src->data = NULL;
    src->cap = src->len = 0;
    src->flags &= (unsigned char)~BW__CSTR;
    bw__set_lim(src);
    return 1;
}

static int bw__printf_seg(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    return bw__printf_grow(w, need, fmt, ap, 0);
}

const bw__mode_ops bw__seg_ops = {
    .room = bw__room_seg,
    .room_keep = bw__seg_room_keep,
    .send = bw__keeps_bytes,
    .drop_storage = bw__seg_drop_storage,
    .contiguous = bw__seg_contiguous,
    .walk = bw__seg_walk,
    .pieces = bw__seg_pieces,
    .drop_front = bw__seg_drop_front,
    .cut = bw__seg_cut,
    .overlaps = bw__seg_overlaps,
    .patch = bw__seg_patch,
    .block_size = bw__seg_block_size,
    .printf_rest = bw__printf_seg,
    .link = bw__seg_link,
    .take = bw__seg_take,
    .room_at_once = bw__at_once,
    .hand_out = bw__block_hand_out,
    .traits = BW__LINKS,
    .name = "segmented",
};

int bw_init_chain(bw_writer *w, bw_pool *pool)
{
    if (bw__init_mode(w, pool, BW__SEG) != BW_OK) return BW_EINVAL;
    w->m.c.pc = NULL;
    w->m.c.pc_cap = 0;
    w->m.c.first = w->m.c.count = 0;
    w->m.c.blocks = NULL;
    return BW_OK;
}

