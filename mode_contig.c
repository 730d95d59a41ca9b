/* SPDX-License-Identifier: MIT */
/* mode_contig.c - the contiguous room (bw_init, bw_init_buffer,
 * bw_set_first_buffer): one block that growth moves to a bigger one, or
 * grows in place above the pool's threshold; the caller's first buffer
 * (BW__EXTERNAL); a zeroing pool's window (m.g.block). It owns the moves,
 * the first block's general way (its inline way is bw__contig_first_in in
 * writer_internal.h) and its table, bw__contig_ops. */
#include "writer_internal.h"

/* On a zeroing pool (BW_POOL_ZERO_ON_RETURN) a contiguous writer's cap is a
 * window of its block (m.g.block bytes): every byte the caller may write
 * lies below cap (the inline puts and spans stop at lim <= cap, and
 * bw_free_capacity, bw_reserve and bw_advance count to cap), and the
 * window never narrows while the writer holds the block, so the block goes
 * back with cap as the end of what was written (bw__pool_return_written),
 * and a 20 KiB job in a 64 MiB block zeroes at most 40 KiB, not 64 MiB.
 * The window is the pool's size for what was asked for (bw__pool_size's
 * BW__SIZE_WINDOW: the growth rule's, at least 4 KiB, or the block whole)
 * and at least doubles when the cold path widens it, so it costs a cold
 * path per doubling, as growth does, and is at most twice the furthest
 * byte asked for (or the block whole, when that is less than twice it). */
static size_t bw__contig_window(bw_pool *p, size_t block, size_t held, size_t n, size_t cap)
{
    bw__size_req r = {.kind = BW__SIZE_WINDOW, .n = n, .held = held, .cap = cap, .block = block};
    bw__size s;
    (void)bw__pool_size(p, &r, &s); /* a window always has one: at most the block */
    return s.size;
}

/* A newly rented block of got bytes for a writer that asked for n more
 * bytes after held, its capacity having been cap (0: none): its window on
 * a zeroing pool or in a reservation (BW__RESERVED, set by
 * bw__contig_rent), the whole block otherwise. */
static inline void bw__contig_take(bw_writer *w, bw_pool *p, size_t got, size_t held, size_t n,
                                   size_t cap)
{
    w->m.g.block = got;
    w->cap = bw__contig_windowed(w) ? bw__contig_window(p, got, held, n, cap) : got;
}

/* A fresh block that the climb or the learned jump made larger than the
 * growth rule's size comes faulted in up to that size alone (pool.c,
 * bw__rent_slow; the fresh-memory bound). Its other pages would fault in
 * one at a time as the writer fills them: on the VM of bench/BENCHMARKS.md
 * 10 us a 4 KiB page, against 1 us populated (and the 4.7 us of the first
 * touch that a guest pays either way). So the writer gets the filled part
 * as its window (BW__FILLING), and each widening by the growth rule faults
 * in the new part with one call: never a page the writer has not come
 * within the growth rule of. Where the platform cannot fault pages in, the
 * windows are the same (so are the capacities a writer reports, on every
 * platform), each costing a cold path, as a move does. Only past
 * jump_floor (the usual first block is at most it, so the inline release
 * never takes a window for one) and at most at the threshold (no
 * reservation: bw__pool_return_written cuts only those); a zeroing pool
 * zeroes a fresh block whole. */
static void bw__contig_fill_window(bw_writer *w, bw_pool *p, size_t got, size_t filled)
{
    if (filled <= p->opt.jump_floor || got > p->opt.max_pooled_size || bw__pool_zeroes(p))
        return;
    w->flags |= BW__FILLING;
    w->m.g.block = got;
    w->cap = filled;
}

/* Widen a window in place for n more bytes; false when the block itself
 * has no room for them (or there is no window). A window being faulted
 * in gets its new pages in one call and ends at its block. */
static bool bw__contig_widen(bw_writer *w, size_t n)
{
    size_t was = w->cap;
    if ((w->flags & BW__EXTERNAL) || !bw__contig_windowed(w) || w->cap == w->m.g.block ||
        w->m.g.block - w->len < n)
        return false;
    w->cap = bw__contig_window(w->pool, w->m.g.block, w->len, n, w->cap);
    if (w->flags & BW__FILLING) {
        /* The pages the new part's bytes lie in: from the one the old
         * window ended in (was >= jump_floor: it lies in the block) to the
         * one its last byte lies in (a page of the block's, mapped). */
        (void)bw__populate(w->data + was - 4095, w->cap - was + 2 * 4095);
        if (w->cap == w->m.g.block) w->flags &= (unsigned char)~BW__FILLING;
    }
    bw__set_lim(w);
    return true;
}


/* A reservation back to a block of its window (bw__pool_cut), before the
 * block moves, is regrown or leaves the writer any way but its return
 * (bw__pool_return_written cuts it there). */
static void bw__contig_fit(bw_writer *w)
{
    if (w->flags & BW__FILLING) {
        /* The whole block is the writer's: the rest faults in as written. */
        w->cap = w->m.g.block;
        w->flags &= (unsigned char)~BW__FILLING;
        bw__set_lim(w);
        return;
    }
    if (!(w->flags & BW__RESERVED)) return;
    if (w->cap < w->m.g.block) bw__pool_cut(w->pool, w->data, w->m.g.block, w->cap);
    w->m.g.block = w->cap;
    w->flags &= (unsigned char)~BW__RESERVED;
}

/* The address space a move into fresh memory above the threshold asks for
 * (bw__pool_rent_reserve) with a block of cap: 16 x cap, so a first job
 * that reaches its first large block (2 MiB after 128 KiB, growth.c's
 * bw__fresh_stop) grows to 32 MiB by widening its window, with no copy
 * and no remap (past it, a regrow moves the pages). */
#define BW__RESERVE_FACTOR ((size_t)16)

/* A block for the size the pool's rule gave (an idle block of the learned
 * jump first, bw__pool_rent_fill, which says in *filled how far a fresh
 * one is faulted in), or a reservation when it must be fresh memory above
 * the threshold: *reserved says which it got (a reservation that could not
 * be mapped falls back to a plain block). */
static void *bw__contig_rent(bw_pool *p, const bw__size *s, size_t *got, bool *reserved,
                             size_t *filled)
{
    size_t cap = s->size;
    size_t reserve = cap <= BW__MAX_BLOCK / BW__RESERVE_FACTOR ? cap * BW__RESERVE_FACTOR : cap;
    void *b;
    *reserved = false;
    if (!bw__pool_reserves(p) || cap <= bw__pool_threshold(p) || s->warm > cap)
        return bw__pool_rent_fill(p, s, got, filled);
    b = bw__pool_rent_reserve(p, cap, reserve, got);
    *reserved = b != NULL && *got > cap;
    return b;
}

/* The size a contiguous writer moves to for n more bytes (the pool's
 * rule: first block, growth, learned jump). */
static int bw__contig_size(const bw_writer *w, bw_pool *p, size_t n, bw__size *out)
{
    bw__size_req r = {.kind = BW__SIZE_CONTIG,
                      .external = (w->flags & BW__EXTERNAL) != 0,
                      .n = n,
                      .held = w->len - bw__start(w),
                      .cap = w->cap};
    return bw__pool_size(p, &r, out);
}

/* Move a contiguous writer's held bytes into a new block with room for n
 * more, leaving the old storage as it is: *old and *old_cap get the block
 * to give back once nothing reads from it (NULL for none, or for the
 * caller's first buffer, which is not the pool's). */
static int bw__contig_move(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw_pool *p = bw__pool_of(w);
    size_t got, filled = 0, start = bw__start(w), held = w->len - start;
    bw__size cap;
    bool reserved;
    unsigned char *nb;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__contig_size(w, p, n, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    bw__contig_fit(w); /* the old block goes back whole, as its window */
    nb = (unsigned char *)bw__contig_rent(p, &cap, &got, &reserved, &filled);
    if (nb == NULL) return bw__fail(w, BW_ENOMEM);
    if (held != 0) memcpy(nb, w->data + start, held);
    if (w->data != NULL && !(w->flags & BW__EXTERNAL)) {
        *old = w->data;
        *old_cap = bw__contig_block_cap(w);
    }
    /* The window of a move: for held + n after the old capacity; in a
     * reservation, for the size the rule gave. */
    if (reserved) {
        w->flags |= BW__RESERVED;
        bw__contig_take(w, p, got, 0, cap.size, 0);
    } else {
        bw__contig_take(w, p, got, held, n, w->cap);
        if (filled != 0) bw__contig_fill_window(w, p, got, filled);
    }
    w->flags &= (unsigned char)~BW__EXTERNAL;
    w->data = nb;
    w->pos = w->base;
    w->len = held;
    bw__set_lim(w);
    return BW_OK;
}

/* Contiguous: move to a block of bw__contig_size. The old block goes back
 * only after src was copied (src may point into it). Above the threshold
 * the old block is the allocator's own: the pool resizes it in place,
 * remaps it (glibc's mremap) or moves it into a kept warm block instead of
 * copying into fresh memory; not when src lies in the old block (realloc
 * may free it), nor for the caller's buffer, nor on a zeroing pool (realloc
 * would hand the old bytes to the allocator unzeroed). */
static BW__COLD int bw__room_contig(bw_writer *w, size_t n, const void *src)
{
    void *old = NULL;
    size_t old_cap = 0, old_win = w->cap;
    int rc;

    if (w->data != NULL) {
        bw__move_down(w, &src);
        if (w->cap - w->len >= n || bw__contig_widen(w, n)) goto copy;
        bw__contig_fit(w); /* regrown or moved: a block of its window */
        if (!(w->flags & BW__EXTERNAL) && w->cap > bw__pool_threshold(w->pool) &&
            bw__pool_can_regrow(w->pool) && !bw__in_block(w, src, src != NULL ? n : 0)) {
            size_t cap;
            bw__size want;
            unsigned char *nb;
            rc = bw__contig_size(w, w->pool, n, &want);
            if (rc != BW_OK) return bw__fail(w, rc);
            nb = (unsigned char *)bw__pool_regrow(w->pool, w->data, w->cap, w->len, &want, &cap);
            if (nb == NULL) return bw__fail(w, BW_ENOMEM);
            w->data = nb;
            w->cap = cap;
            bw__set_lim(w);
            goto copy;
        }
    }
    rc = bw__contig_move(w, n, &old, &old_cap);
    if (rc != BW_OK) return rc;
copy:
    if (src != NULL) {
        memmove(w->data + w->len, src, n);
        w->len += n;
    }
    if (old != NULL) (void)bw__pool_return_written(w->pool, old, old_cap, old_win);
    return BW_OK;
}

/* Room kept (bw__room_keep): a zeroing pool's window widens in place,
 * which moves no held byte; else a move. */
static int bw__contig_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    if (w->data != NULL && bw__contig_widen(w, n)) return BW_OK;
    return bw__contig_move(w, n, old, old_cap);
}

/* A contiguous writer's first block (it has no storage, so holds nothing):
 * no bytes to move or copy, no old block to give back, just the rent, and
 * src written at the start. The general way: a first block the size rule
 * decides (learning, a bigger first write), a size limit, a shared pool
 * not yet created, or the thread cache's class empty. */
BW__INTERNAL BW__COLD int bw__contig_first_slow(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p;
    size_t got = 0;
    bw__size cap = {0, 0, false, 0};
    unsigned char *b;
    int rc;
    /* bw_reserve comes here first, before its own checks. */
    if (n == 0 && src == NULL) return BW_OK;
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    p = bw__pool_of(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    if (n <= bw__pool_first_block(p)) {
        cap.size = bw__pool_first_block(p);
    } else {
        rc = bw__contig_size(w, p, n, &cap);
        if (rc != BW_OK) return bw__fail(w, rc);
    }
    b = (unsigned char *)bw__pool_rent_size(p, &cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = b;
    bw__contig_take(w, p, got, 0, n, 0);
    w->lim = w->cap;
    w->pos = w->base;
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w);
    if (src != NULL) {
        memcpy(b, src, n);
        w->len = n;
    }
    return BW_OK;
}

/* bw_release's rest (writer_internal.h, bw__contig_release_rest). */
BW__INTERNAL BW__COLD void bw__contig_release_block(bw_pool *p, unsigned char *b, size_t block,
                                                    size_t cap, size_t len)
{
    if (p != NULL) bw__pool_job_end(p, b, block, cap, len);
}

/* Hand out (bw_detach): the caller's first buffer cannot go to the pool,
 * so a pooled copy, the pool's block for the held bytes (none when nothing
 * is held); else the block itself. */
static int bw__contig_hand_out(bw_writer *w, void **block, size_t *cap)
{
    bw__size_req r = {.kind = BW__SIZE_BLOCK};
    bw__size want;
    size_t l;
    bw_pool *p;
    BW__ASSUME(w != NULL); /* bw_detach checked; bw_len's own check hides it from gcc */
    l = bw_len(w);
    if (!(w->flags & BW__EXTERNAL)) {
        bw__contig_fit(w); /* the caller gets a block of its window */
        return bw__block_hand_out(w, block, cap);
    }
    if (l == 0) return 1;
    p = bw__pool_of(w);
    r.n = l;
    if (p == NULL || bw__pool_size(p, &r, &want) != BW_OK ||
        (*block = bw_pool_rent(p, want.size, cap)) == NULL) {
        bw__fail(w, BW_ENOMEM);
        return 0;
    }
    memcpy(*block, w->data + bw__start(w), l);
    return 1;
}

/* printf's pass two: as bw__printf_grow, and also apart when the output
 * would fill the block growth moves to exactly. */
static int bw__printf_contig(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    bw_pool *p = bw__pool_of(w);
    bw__size cap;
    int fills = 0;
    if (p != NULL && bw__contig_size(w, p, need, &cap) == BW_OK)
        fills = cap.size - (w->len - bw__start(w)) == need;
    return bw__printf_grow(w, need, fmt, ap, fills);
}

/* bw_init's block for an initial capacity, apart: bw_init without one (a
 * small message) is then the stores alone, no stack frame. */
static BW__COLD int bw__init_block(bw_writer *w, size_t initial_capacity)
{
    bw_pool *p = bw__pool_of(w);
    bw__size_req r = {.kind = BW__SIZE_START, .n = initial_capacity};
    bw__size cap;
    size_t got;
    void *b;
    int rc;

    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    /* With BW_POOL_LEARN_SIZE the larger of it and the learned size. */
    rc = bw__pool_size(p, &r, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    b = bw_pool_rent(p, cap.size, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = (unsigned char *)b;
    bw__contig_take(w, p, got, 0, initial_capacity, 0);
    w->lim = w->cap;
    return BW_OK;
}

const bw__mode_ops bw__contig_ops = {
    .room = bw__room_contig,
    .room_keep = bw__contig_keep,
    .send = bw__keeps_bytes,
    .drop_storage = bw__block_drop_storage,
    .contiguous = bw__block_contiguous,
    .walk = bw__block_piece,
    .pieces = bw__block_pieces,
    .drop_front = bw__block_drop_front,
    .cut = bw__block_cut,
    .overlaps = bw__in_block,
    .patch = bw__block_patch,
    .block_size = bw__contig_block_cap,
    .printf_rest = bw__printf_contig,
    .link = bw__link_copy,
    .take = bw__no_take,
    .room_at_once = bw__at_once,
    .hand_out = bw__contig_hand_out,
    .traits = BW__GROWS,
    .name = "contiguous",
};

int bw_init(bw_writer *w, bw_pool *pool, size_t initial_capacity)
{
    if (bw__init_mode(w, pool, BW__CONTIG) != BW_OK) return BW_EINVAL;
    if (initial_capacity == 0) return BW_OK;
    return bw__init_block(w, initial_capacity);
}

/* Each field stored once (not bw__init_mode's zeros, then the buffer's):
 * a writer over a stack array is a few stores. */
int bw_init_buffer(bw_writer *w, bw_pool *pool, void *buf, size_t size)
{
    if (w == NULL) return BW_EINVAL;
    if (buf == NULL || size == 0) {
        (void)bw__init_mode(w, pool, BW__CONTIG);
        return bw__fail(w, BW_EINVAL);
    }
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->len = 0;
    w->cap = w->lim = size;
    w->pos = w->base = 0;
    w->pool = pool;
    w->mode = BW__CONTIG;
    w->flags = BW__EXTERNAL;
    w->err = BW_OK;
    return BW_OK;
}

int bw_set_first_buffer(bw_writer *w, void *buf, size_t size)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (buf == NULL || size == 0 || !(bw__traits(w) & BW__GROWS) || w->data != NULL)
        return bw__fail(w, BW_EINVAL);
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = size;
    w->pos = w->base;
    w->len = 0;
    w->flags |= BW__EXTERNAL;
    bw__set_lim(w);
    return BW_OK;
}

