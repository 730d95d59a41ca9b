/* SPDX-License-Identifier: MIT */
/* mode_seg.c - the segmented room (bw_init_chain): held bytes as pieces
 * over blocks the writer owns and over caller memory linked by reference
 * (bw_append_ref, bw_move). It holds the open piece, every operation on
 * the held bytes and the mode's table, bw__seg_ops. The tree of owned
 * blocks and the chunks of piece records are seg_pieces.c's, the
 * invariants seg_check.c's, what they share seg_internal.h's. */
#include "seg_internal.h"

/* One rule (writer_internal.h, bw__piece): the held bytes are the closed
 * pieces, then the open piece data[open, len) of the current block. A
 * reference or a move closes the open piece and pushes pieces; a full
 * block is closed the same way and a new one becomes current. Nothing
 * moves once written, so every pointer to a held byte stays valid until
 * that byte leaves; a piece leaves by consume (front), truncate (back) or
 * reset, and a block goes back when the last piece in it leaves. */

/* The one way a closed piece joins the records (room reserved): p[0, n)
 * owned as own says (bw__piece: a block, 0 for a reference; a reference
 * with a done is bw__push_ref's), at the place of the open piece, so it
 * ends n bytes after pos + open. The caller then moves the open piece
 * after it: open = len when it was the open piece's bytes, else pos += n
 * (the open piece was empty). A block's count is the caller's (a relinked
 * piece is counted already). Fields stored one by one: a struct copy cost
 * a linked record 5 more instructions (callgrind, profile_driver refs). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline bw__piece *bw__push(bw_writer *w, const unsigned char *p, size_t n, uintptr_t own)
{
    bw__pchunk *t = w->m.c.tail;
    bw__piece *pc;
    if (BW__UNLIKELY(w->m.c.count == t->cap)) t = bw__pc_next_tail(w);
    pc = &BW__PC(t)[w->m.c.count++];
    pc->p = p;
    pc->n = n;
    pc->end = w->pos + w->m.c.open + n;
    pc->own = own;
    return pc;
}

/* A reference pushed (room reserved), its done (a: none when NULL or a's
 * done is NULL) kept in the aside at its record's place. */
static void bw__push_ref(bw_writer *w, const unsigned char *p, size_t n, const bw__aside *a)
{
    bw__piece *pc = bw__push(w, p, n, 0);
    bw__aside *to;
    if (a == NULL || a->done == NULL) return;
    to = BW__PA(w->m.c.tail) + (w->m.c.count - 1);
    *to = *a;
    pc->own = (uintptr_t)to | 1;
    w->flags |= BW__DONES;
}

/* Whether the open piece holds bytes, which closing it pushes. */
static int bw__must_close(const bw_writer *w) { return w->data != NULL && bw__open(w) != w->len; }

/* Close the open piece (room for it reserved): it joins the array, and
 * the open piece starts again, empty, at len. */
static void bw__close_open(bw_writer *w)
{
    bw__blk *b;
    if (!bw__must_close(w)) return;
    b = bw__cur(w);
    b->pieces++;
    (void)bw__push(w, w->data + w->m.c.open, w->len - w->m.c.open, (uintptr_t)b);
    w->m.c.open = w->len;
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
    const bw__aside *a;
    bw__blk *b;
    for (; (w->flags & BW__DONES) && (pc = bw__pc_at(w, &ch, &i)) != NULL; i++)
        if ((a = bw__pc_aside(pc)) != NULL) a->done(a->ctx, a->orig, a->orig_n);
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
    bw__size_req r = {.kind = BW__SIZE_BLOCK};
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
    bw__size_req r = {.kind = BW__SIZE_BLOCK, .n = bytes + BW__SEG_HDR};
    bw__blk *b = bw__blk_rent(w, &r);
    bw__piece *pc;
    size_t off = 0;
    if (b == NULL) return BW_ENOMEM;
    for (; (pc = bw__pc_at(w, &ch, &i)) != NULL && pc->end - pc->n < end; i++) {
        if (bw__pc_blk(pc) != NULL) continue;
        memcpy(b->data + off, pc->p, pc->n);
        bw__piece_drop(w, pc);
        pc->p = b->data + off;
        pc->own = (uintptr_t)b;
        b->pieces++;
        off += pc->n;
    }
    bw__blk_link(w, b);
    return BW_OK;
}

/* Not a piece: where a loop over the records starts. */
static const bw__piece bw__piece_none = {NULL, 0, 0, 0};

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
        if (pc != NULL && bw__pc_blk(pc) == NULL) {
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
 * The general way, which bw__seg_link takes when its quick one cannot:
 * and always for a reference with a done, whose aside it writes. */
static BW__COLD int bw__seg_link_slow(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                                      void *ctx)
{
    bw__aside a;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (n == 0 || bw__seg_overlaps(w, data, n)) return bw__link_copy(w, data, n, done, ctx);
    if (bw__pc_reserve(w, 2) != BW_OK) return w->err;
    bw__close_open(w);
    a.done = done;
    a.ctx = ctx;
    a.orig = data;
    a.orig_n = n;
    bw__push_ref(w, (const unsigned char *)data, n, &a);
    w->pos += n; /* the open piece starts after it, in the same block */
    /* lim is cap (no error: the caller checked) unless a size limit is
     * set, which is nearer now */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__set_lim(w);
    return BW_OK;
}

/* Link, the usual case: no done, no size limit, caller memory outside the
 * current block and the tree's range, room in the tail for the two
 * records (the open piece closed, the reference), written in place with
 * no call. A linked record cost 320 instructions at 1,000 records in 0.4,
 * 165 with the chunks and bw__seg_link_slow's way, 118 with 64-byte
 * records written here (callgrind, profile_driver refs 1000 256 linked,
 * the 10-byte header's write included); what it costs now is in
 * bench/BENCHMARKS.md. */
static int bw__seg_link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    bw__pchunk *t = w->m.c.tail;
    uintptr_t a = (uintptr_t)data, d = (uintptr_t)w->data;
    bw__piece *pc;
    uint64_t at;
    size_t k;
    if (BW__UNLIKELY(done != NULL)) return bw__seg_link_slow(w, data, n, done, ctx);
    if (BW__UNLIKELY(n - 1 >= BW__MAX_BLOCK || t == NULL || w->m.c.count + 2 > t->cap ||
                     (a + n > d && a < d + w->cap) || /* no block: cap 0 */
                     (w->m.c.blocks != NULL && a + n > w->m.c.head->lo &&
                      a < w->m.c.head->hi) ||
                     (w->flags & BW__LIMITED)))
        return bw__seg_link_slow(w, data, n, NULL, NULL);
    k = w->m.c.count;
    pc = BW__PC(t) + k;
    at = w->pos + w->len;
    /* the open piece starts after it, in the same block (stored first:
     * gcc then saves one register fewer, 2 instructions a link) */
    w->pos += n;
    if (w->m.c.open != w->len) { /* the open piece (so a current block) closes */
        bw__blk *cur = bw__cur(w);
        cur->pieces++;
        pc->p = w->data + w->m.c.open;
        pc->n = w->len - w->m.c.open;
        pc->end = at;
        pc->own = (uintptr_t)cur;
        w->m.c.open = w->len;
        pc++;
        k++;
    }
    pc->p = (const unsigned char *)data;
    pc->n = n;
    pc->end = at + n;
    pc->own = 0;
    w->m.c.count = (uint32_t)(k + 1);
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
    const bw__blk *b = bw__pc_blk(pc);
    return b != NULL && dst->data != NULL && dst->cap - dst->len >= pc->n &&
           bw__blk_size(b) / BW__MOVE_COPY > pc->n;
}

/* Src's closed piece `from`, after dst's bytes: copied onto dst's open
 * piece (bw__take_copies; its block's count drops, and a block left with
 * none goes back with src's), or relinked after dst's open piece, closed. */
static void bw__take_piece(bw_writer *dst, bw__piece *from)
{
    if (bw__take_copies(dst, from)) {
        memcpy(dst->data + dst->len, from->p, from->n);
        dst->len += from->n;
        bw__pc_blk(from)->pieces--;
        return;
    }
    bw__close_open(dst);
    if (bw__pc_blk(from) != NULL) (void)bw__push(dst, from->p, from->n, from->own);
    else bw__push_ref(dst, from->p, from->n, bw__pc_aside(from)); /* its aside copied */
    dst->pos += from->n;
}

/* Src's open piece (not empty; cur is src's current block), after dst's
 * bytes: copied as above; or dst takes cur as its current block when cur
 * has more free room, so that the small pieces of later moves have
 * somewhere to go (a writer that only moves and links has no block of its
 * own): 1, cur is dst's now; or relinked, counted in cur. */
static int bw__take_open(bw_writer *dst, bw_writer *src, bw__blk *cur)
{
    bw__piece last = {NULL, 0, 0, 0};
    last.p = src->data + src->m.c.open;
    last.n = src->len - src->m.c.open;
    last.own = (uintptr_t)cur;
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
    (void)bw__push(dst, last.p, last.n, (uintptr_t)cur);
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
/* The operations that change the state, each followed by the check
 * (seg_check.c). */
static int bw__room_seg_chk(bw_writer *w, size_t n, const void *src)
{
    int rc = bw__room_seg(w, n, src);
    bw__seg_check(w);
    return rc;
}
static int bw__seg_room_keep_chk(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    int rc = bw__seg_room_keep(w, n, old, old_cap);
    bw__seg_check(w);
    return rc;
}
static void bw__seg_drop_storage_chk(bw_writer *w)
{
    bw__seg_drop_storage(w);
    bw__seg_check(w);
}
static unsigned char *bw__seg_contiguous_chk(bw_writer *w, size_t extra)
{
    unsigned char *p = bw__seg_contiguous(w, extra);
    bw__seg_check(w);
    return p;
}
static void bw__seg_drop_front_chk(bw_writer *w, size_t n)
{
    bw__seg_drop_front(w, n);
    bw__seg_check(w);
}
static void bw__seg_cut_chk(bw_writer *w, uint64_t pos)
{
    bw__seg_cut(w, pos);
    bw__seg_check(w);
}
static int bw__seg_patch_chk(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    int rc = bw__seg_patch(w, pos, src, n);
    bw__seg_check(w);
    return rc;
}
static int bw__printf_seg_chk(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    int rc = bw__printf_seg(w, need, fmt, ap);
    bw__seg_check(w);
    return rc;
}
static int bw__seg_link_chk(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    int rc = bw__seg_link(w, data, n, done, ctx);
    bw__seg_check(w);
    return rc;
}
static int bw__seg_take_chk(bw_writer *dst, bw_writer *src)
{
    int rc = bw__seg_take(dst, src);
    if (bw__traits(src) & BW__LINKS) bw__seg_check(src); /* src segmented too */
    bw__seg_check(dst);
    return rc;
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
    if (w == NULL || !(bw__traits(w) & BW__LINKS)) return BW_EINVAL; /* not segmented */
    if (size == 0) {
        w->blk_log2 = 0;
        return BW_OK;
    }
    if (size > ((size_t)1 << BW__BLK_MAX_LOG2)) return BW_EINVAL;
    while (((size_t)1 << k) < size) k++; /* rounded up to a power of two */
    w->blk_log2 = (unsigned char)k;
    return BW_OK;
}

