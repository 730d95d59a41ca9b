/* SPDX-License-Identifier: MIT */
/* mode_seg.c - the segmented room (bw_init_chain): held bytes as pieces
 * over blocks the writer owns and over caller memory linked by reference
 * (bw_append_ref, bw_move). It owns the piece records (m.c.head), the tree of
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

/* Where the open piece starts (m.c.open): data[open] is where the last
 * closed piece ends, or base (bw__seg_check states it). */
static size_t bw__open(const bw_writer *w) { return w->m.c.open; }

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

static void bw__range_add(bw_writer *w, const bw__blk *b);

/* Add b: down to where its priority belongs, the subtree there split
 * around it. */
static void bw__blk_link(bw_writer *w, bw__blk *b)
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
/* The first chunk's size; each next one twice the last, up to the largest:
 * O(log records) chunks (bw__seg_find walks them) for what a writer holds
 * at once, and one chunk never much larger than it needs. */
#define BW__PC_FIRST ((size_t)1024)
#define BW__PC_LARGEST ((size_t)1 << 20)

/* The records after the header are aligned for their 64-bit end. */
typedef char bw__pc_aligned[sizeof(bw__pchunk) % sizeof(uint64_t) == 0 ? 1 : -1];

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

/* No closed piece held. */
static int bw__pc_none(const bw_writer *w)
{
    return w->m.c.head == w->m.c.tail && w->m.c.first == w->m.c.count;
}

/* The closed pieces held. */
static size_t bw__pc_held(const bw_writer *w)
{
    if (w->m.c.head == NULL) return 0;
    return (size_t)(w->m.c.tail->seq + w->m.c.count - (w->m.c.head->seq + w->m.c.first));
}

/* The record at (*ch, *i), moved on to the next chunk's first when *i is
 * past a full chunk's last; NULL when it is past the held ones (where the
 * open piece comes). */
static bw__piece *bw__pc_at(const bw_writer *w, bw__pchunk **ch, size_t *i)
{
    if (*ch != NULL && *ch != w->m.c.tail && *i == (*ch)->cap) {
        *ch = (*ch)->next;
        *i = 0;
    }
    if (*ch == NULL || (*ch == w->m.c.tail && *i >= w->m.c.count)) return NULL;
    return &BW__PC(*ch)[*i];
}

/* A new chunk of at least `want` bytes after `last` (NULL: the first). */
static int bw__pc_rent(bw_writer *w, bw__pchunk *last, size_t want)
{
    bw_pool *p = bw__pool_of(w);
    size_t got = 0;
    bw__pchunk *c = p != NULL ? (bw__pchunk *)bw_pool_rent(p, want, &got) : NULL;
    if (c == NULL) return bw__fail(w, BW_ENOMEM);
    c->bytes = got;
    c->cap = (got - sizeof *c) / sizeof(bw__piece);
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
static BW__COLD int bw__pc_more(bw_writer *w, size_t k)
{
    bw__pchunk *last = w->m.c.tail, *c;
    size_t room = last != NULL ? last->cap - w->m.c.count : 0, want;
    for (c = last != NULL ? last->next : NULL; c != NULL && room < k; c = c->next) {
        room += c->cap;
        last = c;
    }
    if (room >= k) return BW_OK;
    if (k - room > (BW__MAX_BLOCK - sizeof *c) / sizeof(bw__piece) || k > UINT32_MAX / 2)
        return bw__fail(w, BW_EOVERFLOW);
    want = last == NULL ? BW__PC_FIRST : last->bytes < BW__PC_LARGEST ? 2 * last->bytes
                                                                      : BW__PC_LARGEST;
    if (want < sizeof *c + (k - room) * sizeof(bw__piece))
        want = sizeof *c + (k - room) * sizeof(bw__piece);
    return bw__pc_rent(w, last, want);
}

/* Room for k more closed pieces: O(1) but for a chunk's rent. */
static int bw__pc_reserve(bw_writer *w, size_t k)
{
    const bw__pchunk *t = w->m.c.tail;
    if (BW__LIKELY(t != NULL && w->m.c.count + k <= t->cap)) return BW_OK;
    return bw__pc_more(w, k);
}

/* The tail is full: the next chunk (reserved) becomes the tail. */
static bw__pchunk *bw__pc_next_tail(bw_writer *w)
{
    bw__pchunk *t = w->m.c.tail, *nx = t->next;
    nx->seq = t->seq + t->cap;
    w->m.c.tail = nx;
    w->m.c.count = 0;
    return nx;
}

/* The head's records are all consumed (head is not the tail): it becomes
 * the first spare, after the tail, and the next chunk the head. */
static void bw__pc_head_done(bw_writer *w)
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
static void bw__pc_pop(bw_writer *w)
{
    bw__piece *pc = &BW__PC(w->m.c.tail)[--w->m.c.count];
    if (w->m.c.count == 0 && w->m.c.tail != w->m.c.head) {
        w->m.c.tail = w->m.c.tail->prev;
        w->m.c.count = (uint32_t)w->m.c.tail->cap;
    }
    bw__piece_drop(w, pc);
}

/* No closed piece left: records start again at the head's first. */
static void bw__pc_restart(bw_writer *w)
{
    if (w->m.c.head != NULL && bw__pc_none(w)) w->m.c.first = w->m.c.count = 0;
}

/* The one way a closed piece joins the records (room reserved): p[0, n)
 * in block blk (NULL: a reference, whose done, ctx and orig the caller
 * sets), at the place of the open piece, so it ends n bytes after pos +
 * open. The caller then moves the open piece after it: open = len when
 * it was the open piece's bytes, else pos += n (the open piece was
 * empty). A block's count is the caller's (a relinked piece is counted
 * already). Fields stored one by one: a struct copy cost a linked record
 * 5 more instructions (callgrind, profile_driver refs). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline bw__piece *bw__push(bw_writer *w, const unsigned char *p, size_t n, bw__blk *blk)
{
    bw__pchunk *t = w->m.c.tail;
    bw__piece *pc;
    if (BW__UNLIKELY(w->m.c.count == t->cap)) t = bw__pc_next_tail(w);
    pc = &BW__PC(t)[w->m.c.count++];
    pc->p = p;
    pc->n = n;
    pc->end = w->pos + w->m.c.open + n;
    pc->blk = blk;
    return pc;
}

/* Whether the open piece holds bytes, which closing it pushes. */
static int bw__must_close(const bw_writer *w) { return w->data != NULL && bw__open(w) != w->len; }

/* Close the open piece (room for it reserved): it joins the array, and
 * the open piece starts again, empty, at len. */
static void bw__close_open(bw_writer *w)
{
    if (!bw__must_close(w)) return;
    bw__cur(w)->pieces++;
    (void)bw__push(w, w->data + w->m.c.open, w->len - w->m.c.open, bw__cur(w));
    w->m.c.open = w->len;
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
    bw__size_req r = {BW__SIZE_SEG, false, 0, 0, 0, 0, 0, 1, 0};
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
    w->len = w->m.c.open = 0;
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
    bw__pchunk *ch = c->started ? (bw__pchunk *)(uintptr_t)c->chunk : w->m.c.head;
    size_t i = c->started ? c->i + 1 : w->m.c.first;
    const bw__piece *pc = bw__pc_at(w, &ch, &i);
    int past = c->started && c->chunk == NULL; /* the open piece was walked */
    c->started = 1;
    c->chunk = pc != NULL ? (const void *)ch : NULL;
    c->i = i;
    if (pc != NULL) {
        *p = pc->p;
        *n = pc->n;
        return 1;
    }
    if (past || w->data == NULL) return 0;
    *p = w->data + bw__open(w);
    *n = w->len - bw__open(w);
    return 1;
}

static size_t bw__seg_pieces(const bw_writer *w)
{
    return bw__pc_held(w) + (w->data != NULL && bw__open(w) != w->len);
}

/* Drop from the front (base has moved): whole pieces leave, the first kept
 * one starts later; what is left of n is the open piece's, whose start
 * follows base. All gone: the open piece starts over at data[0]. */
static void bw__seg_drop_front(bw_writer *w, size_t n)
{
    while (n != 0 && !bw__pc_none(w)) {
        bw__piece *pc = &BW__PC(w->m.c.head)[w->m.c.first];
        if (n < pc->n) {
            pc->p += n;
            pc->n -= n;
            return;
        }
        n -= pc->n;
        w->m.c.first++;
        if (w->m.c.head != w->m.c.tail && w->m.c.first == w->m.c.head->cap) bw__pc_head_done(w);
        bw__piece_drop(w, pc);
    }
    if (!bw__pc_none(w)) return;
    bw__pc_restart(w);
    if (w->base == bw_tell(w)) {
        w->pos = w->base;
        w->len = 0;
        bw__set_lim(w);
    }
    w->m.c.open = (size_t)(w->base - w->pos);
}

/* The first closed piece that ends after pos (*i in the chunk returned;
 * past the held ones: the open piece's): O(1) in the open piece (a patch
 * at the end), else back over the chunks from the tail (O(log records)
 * of them, bw__pc_more) and a binary search in one. */
static bw__pchunk *bw__seg_find(const bw_writer *w, uint64_t pos, size_t *i)
{
    bw__pchunk *ch = w->m.c.tail;
    size_t lo, hi = w->m.c.count;
    if (bw__pc_none(w) || BW__PC(ch)[hi - 1].end <= pos) {
        *i = hi;
        return ch;
    }
    while (ch != w->m.c.head && BW__PC(ch->prev)[ch->prev->cap - 1].end > pos) {
        ch = ch->prev;
        hi = ch->cap;
    }
    lo = ch == w->m.c.head ? w->m.c.first : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (BW__PC(ch)[mid].end > pos) hi = mid;
        else lo = mid + 1;
    }
    *i = lo;
    return ch;
}

/* Cut: in the open piece, len moves back; else the piece holding pos is
 * shortened, every later one leaves, and writes go on at the current
 * block's len (from its start when no piece is left in it). */
static void bw__seg_cut(bw_writer *w, uint64_t pos)
{
    size_t i;
    bw__pchunk *ch;
    bw__piece *pc;
    uint64_t keep, open_at = w->pos + bw__open(w);
    if (pos >= open_at || bw__pc_none(w)) {
        w->len = (size_t)(pos - w->pos);
        bw__set_lim(w);
        return;
    }
    ch = bw__seg_find(w, pos, &i);
    pc = &BW__PC(ch)[i];
    keep = ch->seq + i; /* the records before this one stay */
    if (pos > pc->end - pc->n) { /* pos inside it: it stays */
        pc->n -= (size_t)(pc->end - pos);
        pc->end = pos;
        keep++;
    }
    while (w->m.c.tail->seq + w->m.c.count > keep) bw__pc_pop(w);
    bw__pc_restart(w);
    if (w->data != NULL && bw__cur(w)->pieces == 0) w->len = 0;
    w->pos = pos - w->len;
    w->m.c.open = w->len;
    bw__set_lim(w);
}

/* Reset: every piece leaves (a reference's done is called: the records
 * are walked only when one was linked with a done, BW__DONES), every
 * block and every chunk of records go back; no block unlinked one by
 * one. */
static void bw__seg_drop_storage(bw_writer *w)
{
    bw__pchunk *ch = w->m.c.head, *nx;
    size_t i = w->m.c.first;
    const bw__piece *pc;
    bw__blk *b;
    for (; (w->flags & BW__DONES) && (pc = bw__pc_at(w, &ch, &i)) != NULL; i++)
        if (pc->blk == NULL && pc->done != NULL) pc->done(pc->ctx, pc->orig, pc->orig_n);
    w->flags &= (unsigned char)~BW__DONES;
    while ((b = bw__blk_pop(&w->m.c.blocks)) != NULL) bw__blk_return(w, b);
    if (w->data != NULL) bw__blk_return(w, bw__cur(w));
    for (ch = w->m.c.head; ch != NULL; ch = nx) {
        nx = ch->next;
        (void)bw_pool_return(w->pool, ch, ch->bytes);
    }
    w->m.c.head = w->m.c.tail = NULL;
    w->m.c.first = w->m.c.count = 0;
    w->m.c.blocks = NULL;
    w->m.c.open = 0;
    w->data = NULL;
    w->cap = w->len = w->lim = 0; /* holding nothing, at base */
    w->pos = w->base;
}

/* Make contiguous: the held bytes as the open piece of one block with
 * extra free bytes after them (already so: as they are); else copied into
 * a new block, every piece leaving. */
static unsigned char *bw__seg_contiguous(bw_writer *w, size_t extra)
{
    size_t held, off = 0, k;
    bw__size_req r = {BW__SIZE_BLOCK, false, 0, 0, 0, 0, 0, 1, 0};
    bw__cursor c = {0, 0, NULL};
    const unsigned char *src;
    bw__blk *b;
    BW__ASSUME(w != NULL); /* every caller checked; bw_len's own check hides it from gcc */
    if (bw__pc_none(w) && w->data != NULL && w->cap - w->len >= extra)
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
    w->m.c.open = 0;
    bw__set_lim(w);
    return b->data;
}

/* Overlaps: the writer's own blocks (references are the caller's): the
 * current block, then no when outside the tree's range (caller memory
 * mostly is: static data, the stack, another mapping), else in
 * O(log blocks): blocks do not overlap, so of those in the tree only the
 * last that starts below the end of [p, p + n) can reach into it. */
static int bw__seg_overlaps(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, e = a + n;
    const bw__blk *b = w->m.c.blocks, *below = NULL;
    if (n == 0) return 0;
    if (bw__in_block(w, p, n)) return 1;
    if (b == NULL || e <= w->m.c.head->lo || a >= w->m.c.head->hi) return 0; /* the range */
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
    return bw__pc_none(w) ? w->cap + BW__SEG_HDR : 0;
}

/* Closed piece pc's part of [pos, end) (NULL: the open piece's): where
 * it starts in memory, and its length in *k (0: none). */
static unsigned char *bw__seg_span(const bw_writer *w, const bw__piece *pc, uint64_t pos,
                                     uint64_t end, size_t *k)
{
    const unsigned char *p;
    uint64_t from, to;
    if (pc != NULL) {
        to = pc->end;
        from = to - pc->n;
        p = pc->p;
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

/* Own: the references among [pos, end) from record (ch, i) on are copied
 * into one new block (a patch never writes the caller's memory); their
 * done is called. */
static int bw__seg_own(bw_writer *w, bw__pchunk *ch, size_t i, uint64_t end, size_t bytes)
{
    bw__size_req r = {BW__SIZE_BLOCK, false, bytes + BW__SEG_HDR, 0, 0, 0, 0, 1, 0};
    bw__blk *b = bw__blk_rent(w, &r);
    bw__piece *pc;
    size_t off = 0;
    if (b == NULL) return BW_ENOMEM;
    for (; (pc = bw__pc_at(w, &ch, &i)) != NULL && pc->end - pc->n < end; i++) {
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

/* Not a piece: where a loop over the records starts. */
static const bw__piece bw__piece_none = {NULL, 0, 0, NULL, NULL, NULL, NULL, 0};

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
    size_t i0, i, k, refs = 0, last_off = 0, last_k = 0, tmp_cap = 0;
    bw__pchunk *ch0 = bw__seg_find(w, pos, &i0), *ch = ch0;
    const bw__piece *pc = &bw__piece_none;
    uint64_t end = pos + n;
    int in_ref = 0, hits = 0, rc = BW_OK;
    for (i = i0; pc != NULL; i++) { /* the open piece (NULL) last */
        pc = bw__pc_at(w, &ch, &i);
        d = bw__seg_span(w, pc, pos, end, &k);
        if (k == 0) break;
        if (pc != NULL && pc->blk == NULL) {
            refs += pc->n;
            in_ref |= e > (uintptr_t)pc->p && a < (uintptr_t)pc->p + pc->n;
        } else if (e > (uintptr_t)d && a < (uintptr_t)d + k) {
            hits++;
        }
    }
    if (in_ref || hits > 1) {
        in = (const unsigned char *)bw__stable_copy(w, src, n, buf, sizeof buf, &tmp, &tmp_cap);
        if (in == NULL) return BW_ENOMEM;
    }
    if (refs != 0) rc = bw__seg_own(w, ch0, i0, end, refs);
    for (ch = ch0, i = i0, pc = &bw__piece_none; rc == BW_OK && pc != NULL; i++) {
        pc = bw__pc_at(w, &ch, &i);
        d = bw__seg_span(w, pc, pos, end, &k);
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
 * back under the reference). Caller memory is linked as often as given.
 * The general way, which bw__seg_link takes when its quick one cannot. */
static BW__COLD int bw__seg_link_slow(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                                      void *ctx)
{
    bw__piece *pc;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (n == 0 || bw__seg_overlaps(w, data, n)) return bw__link_copy(w, data, n, done, ctx);
    if (bw__pc_reserve(w, 2) != BW_OK) return w->err;
    bw__close_open(w);
    pc = bw__push(w, (const unsigned char *)data, n, NULL);
    pc->done = done;
    pc->ctx = ctx;
    pc->orig = data;
    pc->orig_n = n;
    if (done != NULL) w->flags |= BW__DONES;
    w->pos += n; /* the open piece starts after it, in the same block */
    /* lim is cap (no error: the caller checked) unless a size limit is
     * set, which is nearer now */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__set_lim(w);
    return BW_OK;
}

/* Link, the usual case: caller memory outside the current block and the
 * tree's range, room in the tail for the two records (the open piece
 * closed, the reference), written in place with no call. A linked record
 * cost 320 instructions at 1,000 records in 0.4 and 165 with the chunks
 * and bw__seg_link_slow's way (callgrind, profile_driver refs 1000 256
 * linked); what it costs now is in bench/BENCHMARKS.md. */
static int bw__seg_link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    bw__pchunk *t = w->m.c.tail;
    bw__piece *pc;
    uint64_t at;
    if (BW__UNLIKELY(n - 1 >= BW__MAX_BLOCK || t == NULL || w->m.c.count + 2 > t->cap ||
                     ((uintptr_t)data + n > (uintptr_t)w->data && /* no block: cap 0 */
                      (uintptr_t)data < (uintptr_t)w->data + w->cap) ||
                     (w->m.c.blocks != NULL && (uintptr_t)data + n > w->m.c.head->lo &&
                      (uintptr_t)data < w->m.c.head->hi)))
        return bw__seg_link_slow(w, data, n, done, ctx);
    pc = BW__PC(t) + w->m.c.count;
    at = w->pos + w->len;
    if (w->m.c.open != w->len) { /* the open piece (so a current block) closes */
        bw__blk *cur = bw__cur(w);
        cur->pieces++;
        pc->p = w->data + w->m.c.open;
        pc->n = w->len - w->m.c.open;
        pc->end = at;
        pc->blk = cur;
        pc++;
        w->m.c.count++;
        w->m.c.open = w->len;
    }
    pc->p = (const unsigned char *)data;
    pc->n = n;
    pc->end = at + n;
    pc->blk = NULL;
    pc->done = done;
    pc->ctx = ctx;
    pc->orig = data;
    pc->orig_n = n;
    w->m.c.count++;
    if (done != NULL) w->flags |= BW__DONES;
    w->pos += n; /* the open piece starts after it, in the same block */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__set_lim(w); /* see bw__seg_link_slow */
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

/* Src's closed piece `from`, after dst's bytes: copied onto dst's open
 * piece (bw__take_copies; its block's count drops, and a block left with
 * none goes back with src's), or relinked after dst's open piece, closed. */
static void bw__take_piece(bw_writer *dst, bw__piece *from)
{
    bw__piece *pc;
    if (bw__take_copies(dst, from)) {
        memcpy(dst->data + dst->len, from->p, from->n);
        dst->len += from->n;
        from->blk->pieces--;
        return;
    }
    bw__close_open(dst);
    pc = bw__push(dst, from->p, from->n, from->blk);
    pc->done = from->done;
    pc->ctx = from->ctx;
    pc->orig = from->orig;
    pc->orig_n = from->orig_n;
    dst->pos += from->n;
}

/* Src's open piece (not empty; cur is src's current block), after dst's
 * bytes: copied as above; or dst takes cur as its current block when cur
 * has more free room, so that the small pieces of later moves have
 * somewhere to go (a writer that only moves and links has no block of its
 * own): 1, cur is dst's now; or relinked, counted in cur. */
static int bw__take_open(bw_writer *dst, bw_writer *src, bw__blk *cur)
{
    bw__piece last = {NULL, 0, 0, NULL, NULL, NULL, NULL, 0};
    last.p = src->data + src->m.c.open;
    last.n = src->len - src->m.c.open;
    last.blk = cur;
    if (bw__take_copies(dst, &last)) {
        memcpy(dst->data + dst->len, last.p, last.n);
        dst->len += last.n;
        return 0;
    }
    bw__close_open(dst);
    if (dst->data == NULL || src->cap - src->len > dst->cap - dst->len) {
        if (dst->data != NULL) {
            if (bw__cur(dst)->pieces != 0) bw__blk_link(dst, bw__cur(dst));
            else bw__blk_return(dst, bw__cur(dst));
        }
        dst->pos = bw_tell(dst) - src->m.c.open; /* data[open] is at dst's tell */
        dst->data = src->data;
        dst->cap = src->cap;
        dst->len = src->len;
        dst->m.c.open = src->m.c.open;
        return 1;
    }
    cur->pieces++;
    (void)bw__push(dst, last.p, last.n, cur);
    dst->pos += last.n;
    return 0;
}

/* After a take: src's blocks that still hold pieces are dst's (cur: src's
 * current block, unless dst took it), the others go back; src is left
 * empty at its tell, its chunks of records kept. */
static void bw__take_blocks(bw_writer *dst, bw_writer *src, bw__blk *cur)
{
    bw__blk *b;
    while ((b = bw__blk_pop(&src->m.c.blocks)) != NULL) {
        if (b->pieces != 0) bw__blk_link(dst, b);
        else bw__blk_return(src, b);
    }
    if (cur != NULL) {
        if (cur->pieces != 0) bw__blk_link(dst, cur);
        else bw__blk_return(src, cur);
    }
    src->m.c.tail = src->m.c.head; /* its chunks kept, all spares */
    src->m.c.first = src->m.c.count = 0;
    src->pos = src->base = bw_tell(src);
    src->data = NULL;
    src->cap = src->len = src->m.c.open = 0;
    src->flags &= (unsigned char)~BW__CSTR;
    bw__set_lim(src);
}

/* Take (bw_move) between segmented writers of one pool: src's pieces
 * follow dst's in order, as closed pieces (their positions moved) whose
 * blocks join dst's tree, but for a small piece of src's own, whose bytes
 * go on dst's open piece (bw__take_copies), as a write would put them.
 * Nothing is rented but room for the records: one per src piece, and one
 * for closing dst's open piece before each piece relinked after bytes
 * copied (at most one more than src's pieces in all). 1 done, 0 to have
 * the bytes copied, or the recorded error. */
static int bw__seg_take(bw_writer *dst, bw_writer *src)
{
    size_t i;
    bw__blk *cur = src->data != NULL ? bw__cur(src) : NULL;
    bw__pchunk *ch = src->m.c.head;
    bw__piece *pc;
    if (!(bw__traits(src) & BW__LINKS) || bw_writer_pool(dst) != bw_writer_pool(src)) return 0;
    if (bw__pc_reserve(dst, bw__pc_held(src) + 2) != BW_OK) return dst->err;
    for (i = src->m.c.first; (pc = bw__pc_at(src, &ch, &i)) != NULL; i++) bw__take_piece(dst, pc);
    if (cur != NULL && src->m.c.open != src->len && bw__take_open(dst, src, cur)) cur = NULL;
    bw__take_blocks(dst, src, cur);
    dst->pool = bw__pool_of(src);
    dst->flags &= (unsigned char)~BW__CSTR;
    dst->flags |= (unsigned char)(src->flags & BW__DONES);
    src->flags &= (unsigned char)~BW__DONES;
    bw__set_lim(dst);
    return 1;
}

static int bw__printf_seg(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    return bw__printf_grow(w, need, fmt, ap, 0);
}

#ifdef BW__SEG_CHECKS
/* ---- the invariants (BW_DEBUG, and the fuzzer's build) ----
 * bw__seg_check states every rule of the segmented storage, as mimalloc's
 * mi_page_is_valid and _mi_heap_check do for theirs: the tests and the
 * fuzzer see the bytes, this sees the state behind them, after every
 * operation (the table below is wrapped). It aborts naming the rule. */
#include <stdio.h>
#include <stdlib.h>

static void bw__seg_broken(const char *rule)
{
    fprintf(stderr, "bw__seg_check: broken invariant: %s\n", rule);
    abort();
}
#define BW__SEG_RULE(c, rule) ((c) ? (void)0 : bw__seg_broken(rule))

/* The tree t in address order: heap-ordered by priority, blocks apart,
 * each holding a piece; counted in *k, and listed in out[] if not NULL. */
static void bw__check_tree(const bw__blk *t, const bw__blk **prev, const bw__blk **out,
                           size_t *k)
{
    for (; t != NULL; t = t->right) {
        BW__SEG_RULE(t->left == NULL || bw__prio(t->left) <= bw__prio(t),
                     "the block tree is a heap by priority (left)");
        BW__SEG_RULE(t->right == NULL || bw__prio(t->right) <= bw__prio(t),
                     "the block tree is a heap by priority (right)");
        bw__check_tree(t->left, prev, out, k);
        BW__SEG_RULE((const unsigned char *)t > t->data, "a block's trailer follows its bytes");
        BW__SEG_RULE(*prev == NULL || (uintptr_t)*prev + BW__SEG_HDR <= bw__key(t),
                     "the block tree is in address order, blocks apart");
        BW__SEG_RULE(t->pieces != 0, "a block in the tree holds a closed piece");
        if (out != NULL) out[*k] = t;
        (*k)++;
        *prev = t;
    }
}

/* Closed piece pc's block: blks[i] (blocks in address order, n of them),
 * or n for the current block cur; its bytes inside it. A reference's
 * bytes lie in what the caller linked. */
static size_t bw__check_owner(const bw__blk *const *blks, size_t n, const bw__blk *cur,
                              const bw__piece *pc)
{
    size_t lo = 0, hi = n;
    BW__SEG_RULE(pc->n != 0 && pc->p != NULL, "a closed piece holds bytes");
    if (pc->blk == NULL) {
        BW__SEG_RULE((const unsigned char *)pc->orig <= pc->p &&
                         pc->p + pc->n <= (const unsigned char *)pc->orig + pc->orig_n,
                     "a reference's bytes lie in the memory linked");
        return n + 1;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bw__key(blks[mid]) < bw__key(pc->blk)) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n || blks[lo] != pc->blk) lo = n;
    BW__SEG_RULE(lo < n || pc->blk == cur, "a piece's block is owned (current or in the tree)");
    BW__SEG_RULE(pc->p >= pc->blk->data && pc->p + pc->n <= (const unsigned char *)pc->blk,
                 "a piece's bytes lie inside its block");
    return lo;
}

/* The chunks of records: a list from head (no prev) through tail to the
 * spares, each of its rented size; held records [first, cap) in the head,
 * [0, count) in the tail ([first, count) when one chunk), every chunk
 * between full; a chunk's seq follows the last's; the head a spare only
 * when nothing is held, and the tail empty only then. */
static void bw__check_chunks(const bw_writer *w)
{
    const bw__pchunk *ch = w->m.c.head, *prev = NULL;
    int at_tail = 0;
    BW__SEG_RULE((w->m.c.head == NULL) == (w->m.c.tail == NULL),
                 "a head of the records when a tail");
    BW__SEG_RULE(w->m.c.head != NULL || (w->m.c.first == 0 && w->m.c.count == 0),
                 "no chunk of records: none held");
    for (; ch != NULL; prev = ch, ch = ch->next) {
        BW__SEG_RULE(ch->prev == prev, "the chunks of records are a list (prev)");
        BW__SEG_RULE(ch->cap != 0 && ch->cap <= UINT32_MAX / 2 &&
                         sizeof *ch + ch->cap * sizeof(bw__piece) <= ch->bytes,
                     "a chunk's records fit its rented size");
        if (at_tail) continue; /* a spare: nothing more to hold */
        BW__SEG_RULE(prev == NULL || ch->seq == prev->seq + prev->cap,
                     "a chunk's records are numbered after the last's");
        if (ch == w->m.c.tail) {
            at_tail = 1;
            BW__SEG_RULE(w->m.c.count <= ch->cap, "the tail's records [0, count) fit it");
            BW__SEG_RULE(ch == w->m.c.head ? w->m.c.first <= w->m.c.count : w->m.c.count != 0,
                         "the tail holds a record unless nothing is held");
        }
        if (ch == w->m.c.head && ch != w->m.c.tail)
            BW__SEG_RULE(w->m.c.first < ch->cap, "the head holds a record unless it is the tail");
    }
    BW__SEG_RULE(w->m.c.head == NULL || at_tail, "the tail follows the head");
}

/* The writer's fields: storage, the open piece, the records, lim. */
static void bw__check_fields(const bw_writer *w)
{
    BW__SEG_RULE(w->data != NULL || (w->cap == 0 && w->len == 0 && w->m.c.open == 0),
                 "no current block: no capacity, no open piece");
    BW__SEG_RULE(w->data == NULL || (w->m.c.open <= w->len && w->len <= w->cap),
                 "the open piece data[open, len) lies in the current block");
    BW__SEG_RULE(w->data == NULL || bw__cur(w)->data == w->data,
                 "the current block's trailer is at data + cap");
    BW__SEG_RULE(w->base <= bw_tell(w), "base is at or before tell");
    BW__SEG_RULE(w->err != BW_OK ? w->lim == w->len
                                 : w->lim <= w->cap &&
                                       ((w->flags & BW__LIMITED) || w->lim == w->cap),
                 "lim: cap (or the size limit's), len while an error is recorded");
}

BW__INTERNAL void bw__seg_check(const bw_writer *w)
{
    const bw__blk *prev = NULL, *cur = w->data != NULL ? bw__cur(w) : NULL, **blks;
    size_t nblk = 0, i, k, *counts, sum = 0;
    uint64_t at = w->base;
    bw__pchunk *ch = w->m.c.head;
    const bw__piece *pc;
    bw__check_fields(w);
    bw__check_chunks(w);
    bw__check_tree(w->m.c.blocks, &prev, NULL, &nblk);
    blks = (const bw__blk **)malloc((nblk + 1) * sizeof *blks);
    counts = (size_t *)calloc(nblk + 2, sizeof *counts);
    BW__SEG_RULE(blks != NULL && counts != NULL, "(the check's own memory)");
    prev = NULL;
    nblk = 0;
    bw__check_tree(w->m.c.blocks, &prev, blks, &nblk);
    for (i = w->m.c.first; (pc = bw__pc_at(w, &ch, &i)) != NULL; i++) {
        BW__SEG_RULE(pc->blk != NULL || pc->done == NULL || (w->flags & BW__DONES),
                     "a reference with a done is flagged (BW__DONES)");
        counts[bw__check_owner(blks, nblk, cur, pc)]++;
        BW__SEG_RULE(pc->end - pc->n == at, "each closed piece starts where the last ended");
        at = pc->end;
        sum += pc->n;
    }
    BW__SEG_RULE(at == w->pos + w->m.c.open,
                 "the open piece starts where the last closed piece ends (or base)");
    BW__SEG_RULE(bw_tell(w) - w->base == sum + (w->len - w->m.c.open),
                 "the held bytes are the closed pieces and the open piece");
    for (k = 0; k < nblk; k++) {
        BW__SEG_RULE(counts[k] == blks[k]->pieces, "a block's piece count");
        BW__SEG_RULE(w->m.c.head->lo <= bw__key(blks[k]) &&
                         (uintptr_t)blks[k] + BW__SEG_HDR <= w->m.c.head->hi,
                     "the tree's blocks lie in the head's range [lo, hi)");
    }
    BW__SEG_RULE(cur == NULL || counts[nblk] == cur->pieces, "the current block's piece count");
    for (k = 0; cur != NULL && k < nblk; k++)
        BW__SEG_RULE(blks[k] != cur, "the current block is not in the tree");
    free(blks);
    free(counts);
}

/* The operations that change the state, each followed by the check. */
static int bw__room_seg_chk(bw_writer *w, size_t n, const void *src)
{
    int rc = bw__room_seg(w, n, src);
    return bw__seg_check(w), rc;
}
static int bw__seg_room_keep_chk(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    int rc = bw__seg_room_keep(w, n, old, old_cap);
    return bw__seg_check(w), rc;
}
static void bw__seg_drop_storage_chk(bw_writer *w) { bw__seg_drop_storage(w), bw__seg_check(w); }
static unsigned char *bw__seg_contiguous_chk(bw_writer *w, size_t extra)
{
    unsigned char *p = bw__seg_contiguous(w, extra);
    return bw__seg_check(w), p;
}
static void bw__seg_drop_front_chk(bw_writer *w, size_t n)
{
    bw__seg_drop_front(w, n), bw__seg_check(w);
}
static void bw__seg_cut_chk(bw_writer *w, uint64_t pos) { bw__seg_cut(w, pos), bw__seg_check(w); }
static int bw__seg_patch_chk(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    int rc = bw__seg_patch(w, pos, src, n);
    return bw__seg_check(w), rc;
}
static int bw__printf_seg_chk(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    int rc = bw__printf_seg(w, need, fmt, ap);
    return bw__seg_check(w), rc;
}
static int bw__seg_link_chk(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    int rc = bw__seg_link(w, data, n, done, ctx);
    return bw__seg_check(w), rc;
}
static int bw__seg_take_chk(bw_writer *dst, bw_writer *src)
{
    int rc = bw__seg_take(dst, src);
    if (src->mode == BW__SEG) bw__seg_check(src);
    return bw__seg_check(dst), rc;
}
#  define BW__SEG_OP(f) f##_chk
#else
#  define BW__SEG_OP(f) f
#endif

const bw__mode_ops bw__seg_ops = {
    .room = BW__SEG_OP(bw__room_seg),
    .room_keep = BW__SEG_OP(bw__seg_room_keep),
    .send = bw__keeps_bytes,
    .drop_storage = BW__SEG_OP(bw__seg_drop_storage),
    .contiguous = BW__SEG_OP(bw__seg_contiguous),
    .walk = bw__seg_walk,
    .pieces = bw__seg_pieces,
    .drop_front = BW__SEG_OP(bw__seg_drop_front),
    .cut = BW__SEG_OP(bw__seg_cut),
    .overlaps = bw__seg_overlaps,
    .patch = BW__SEG_OP(bw__seg_patch),
    .block_size = bw__seg_block_size,
    .printf_rest = BW__SEG_OP(bw__printf_seg),
    .link = BW__SEG_OP(bw__seg_link),
    .take = BW__SEG_OP(bw__seg_take),
    .room_at_once = bw__at_once,
    .hand_out = bw__block_hand_out,
    .traits = BW__LINKS,
    .name = "segmented",
};

int bw_init_chain(bw_writer *w, bw_pool *pool)
{
    if (bw__init_mode(w, pool, BW__SEG) != BW_OK) return BW_EINVAL;
    w->m.c.head = w->m.c.tail = NULL;
    w->m.c.first = w->m.c.count = 0;
    w->m.c.blocks = NULL;
    w->m.c.open = 0;
    w->blk_log2 = 0; /* the pool's chain_block_size */
    return BW_OK;
}

/* The sizes bw_set_block_size takes, as log2: 64 B to 1 GiB. */
#define BW__BLK_MIN_LOG2 6
#define BW__BLK_MAX_LOG2 30

int bw_set_block_size(bw_writer *w, size_t size)
{
    unsigned k = BW__BLK_MIN_LOG2;
    if (w == NULL || w->mode != BW__SEG) return BW_EINVAL;
    if (size == 0) {
        w->blk_log2 = 0;
        return BW_OK;
    }
    if (size > ((size_t)1 << BW__BLK_MAX_LOG2)) return BW_EINVAL;
    while (((size_t)1 << k) < size) k++; /* rounded up to a power of two */
    w->blk_log2 = (unsigned char)k;
    return BW_OK;
}

