/* SPDX-License-Identifier: MIT */
/* mode_block.c - what more than one mode's room shares: the one-block
 * storage of the contiguous, streaming and fixed modes (their held bytes
 * are data[base - pos, len) of one block: one piece, moved down over
 * consumed bytes, patched in place), the do-nothing operations a mode
 * without an ability names in its table, and printf's pass two apart or
 * in kept room. It owns no mode and reads none. */
#include "writer_internal.h"

/* bw_append_ref's bytes copied, where nothing is linked: done is called
 * once they are. */
BW__INTERNAL int bw__link_copy(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                               void *ctx)
{
    int rc = bw__put(w, data, n);
    if (rc == BW_OK && done != NULL) done(ctx, data, n);
    return rc;
}

/* printf's pass two, the length known (bw_vprintf), for the modes that
 * grow: output formatted into a block of its own, then written from there
 * (all or nothing), so the writer may move, link or send as it likes. */
BW__INTERNAL int bw__printf_apart(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    bw_pool *p;
    void *tmp;
    size_t tmp_cap;
    int r, rc;
    p = bw__pool_of(w);
    if (p == NULL || (tmp = bw_pool_rent(p, need + 1, &tmp_cap)) == NULL)
        return bw__fail(w, BW_ENOMEM);
    r = vsnprintf((char *)tmp, need + 1, fmt, ap);
    rc = r >= 0 && (size_t)r == need ? bw__put(w, tmp, need) : bw__fail(w, BW_EINVAL);
    (void)bw_pool_return(p, tmp, tmp_cap);
    return rc;
}

/* The same in place, in room that leaves the held bytes (which arguments
 * may point into) as they are until formatted (bw__room_keep). Output that
 * fills the free space to the last byte, or with `apart` the room growth
 * makes, is formatted apart instead: in place it would take a byte more
 * for vsnprintf's NUL (a move, a link, the next size up). */
BW__INTERNAL int bw__printf_grow(bw_writer *w, size_t need, const char *fmt, va_list ap,
                                 int apart)
{
    void *old;
    size_t old_cap;
    int r, rc;
    if (apart || (w->data != NULL && need <= w->cap - w->len))
        return bw__printf_apart(w, need, fmt, ap);
    rc = bw__room_keep(w, need + 1, &old, &old_cap);
    if (rc != BW_OK) return rc;
    r = vsnprintf((char *)w->data + w->len, need + 1, fmt, ap);
    if (r >= 0 && (size_t)r == need) w->len += need;
    else rc = bw__fail(w, BW_EINVAL);
    if (old != NULL) (void)bw_pool_return(w->pool, old, old_cap);
    return rc;
}

/* ---- one block: contiguous, streaming and fixed share these ---- */
/* A room operation (bw__mode_ops.room) makes room for n contiguous bytes at
 * data + len; with src it also appends src[0, n) and commits them. src may
 * point into held bytes. On failure the error is recorded and nothing held
 * changes. */

/* Move the held bytes of a one-block writer to the block's start (the cold
 * path of a writer that consumed); *src follows if it pointed into them. */
BW__INTERNAL void bw__move_down(bw_writer *w, const void **src)
{
    size_t start = bw__start(w), held = w->len - start;
    if (start == 0) return;
    if (src != NULL && *src != NULL && (uintptr_t)*src >= (uintptr_t)(w->data + start) &&
        (uintptr_t)*src < (uintptr_t)(w->data + w->len))
        *src = (const unsigned char *)*src - start;
    if (held != 0) memmove(w->data, w->data + start, held);
    w->pos = w->base;
    w->len = held;
    bw__set_lim(w); /* a size limit's lim counts from pos */
}

/* The end of a one-block room operation that moves in place (fixed, streaming),
 * with room for n after the held bytes once moved down: src, which follows
 * them if it points into them, is appended when not NULL. */
BW__INTERNAL int bw__block_put(bw_writer *w, const void *src, size_t n)
{
    bw__move_down(w, &src);
    if (src != NULL) {
        memmove(w->data + w->len, src, n);
        w->len += n;
    }
    return BW_OK;
}

/* Walk: the held bytes are one piece. */
BW__INTERNAL int bw__block_piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                                 size_t *n)
{
    if (c->started || w->data == NULL) return 0;
    c->started = 1;
    *p = w->data + bw__start(w);
    *n = w->len - bw__start(w);
    return 1;
}

/* Reset: give the one block back (not the caller's first buffer). */
BW__INTERNAL void bw__block_drop_storage(bw_writer *w)
{
    /* Nothing past cap was ever handed out (a contiguous writer's window
     * on a zeroing pool: bw__contig_widen). */
    if (w->data != NULL && !(w->flags & BW__EXTERNAL))
        (void)bw__pool_return_written(w->pool, w->data, bw__block_size(w), w->cap);
    w->data = NULL;
    w->cap = 0;
}

/* Cut (bw_truncate) at pos, base <= pos <= tell: the held bytes end there.
 * Works while an error is recorded, which keeps lim at len. */
BW__INTERNAL void bw__block_cut(bw_writer *w, uint64_t pos)
{
    w->len = (size_t)(pos - w->pos);
    bw__set_lim(w);
}

/* Make contiguous for the modes that grow or move in place (contiguous,
 * fixed): their room. */
BW__INTERNAL unsigned char *bw__block_contiguous(bw_writer *w, size_t extra)
{
    if (w->cap - w->len < extra && bw__room(w, extra, NULL) != BW_OK) return NULL;
    return w->data + bw__start(w);
}

/* What the one-block modes share in their tables: one piece, nothing to
 * drop from a list, a patch in place, the block's capacity. */
BW__INTERNAL size_t bw__block_pieces(const bw_writer *w)
{
    return w->data != NULL && w->len != bw__start(w);
}
BW__INTERNAL void bw__block_drop_front(bw_writer *w, size_t n) { (void)w, (void)n; }
BW__INTERNAL int bw__block_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    memmove(w->data + (size_t)(pos - w->pos), src, n);
    return BW_OK;
}
BW__INTERNAL size_t bw__block_cap(const bw_writer *w) { return w->cap; }

/* Hand out (bw_detach): made contiguous in one block of the writer's own
 * (a segmented writer's pieces copied into one), moved to its start. */
BW__INTERNAL int bw__block_hand_out(bw_writer *w, void **block, size_t *cap)
{
    /* Works while an error is recorded: bw__contiguous does not check it
     * (a failure then keeps the first error). */
    if (bw__contiguous(w, 0) == NULL) return 0;
    bw__move_down(w, NULL);
    *block = w->data;
    *cap = bw__block_size(w);
    return 1;
}

/* And what modes without the matching ability name in their tables. */
BW__INTERNAL int bw__keeps_bytes(bw_writer *w) { return (void)w, BW_OK; }
BW__INTERNAL int bw__no_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    (void)n, (void)old, (void)old_cap;
    return bw__fail(w, BW_EINVAL);
}
BW__INTERNAL int bw__no_take(bw_writer *dst, bw_writer *src) { return (void)dst, (void)src, 0; }
BW__INTERNAL int bw__at_once(const bw_writer *w, size_t n) { return (void)w, (void)n, 1; }

