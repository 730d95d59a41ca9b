/* SPDX-License-Identifier: MIT */
/* bufwriter.c - the writer's out-of-line paths, for every mode: the cold
 * path that makes room (grow, link, flush or BW_EFULL), the sticky error,
 * positions, spans, printf, the encoders that are not inline, reading out.
 * What differs by mode is one table of operations and traits
 * (bw__mode_ops, writer_internal.h): one section per mode holds its inits,
 * its operations and its table, and the mode table after those sections,
 * indexed by the mode, is the only other code that reads it. The fast
 * paths are static inline in bufwriter.h and know no mode (but bw_data's,
 * which tells a segmented writer from the rest). */
#include "writer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* The room functions stay out of line (the fast paths' callers stay
 * small), but not `cold`: gcc compiles a cold function for size and turns
 * its memcpy into rep movsb, a byte loop on CPUs without ERMS, and these
 * copy every held byte when a writer grows (make check-copies). */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__COLD __attribute__((noinline))
#else
#  define BW__COLD
#endif

/* The largest block the writer asks for: sizes past PTRDIFF_MAX break
 * pointer differences, so they count as unrepresentable. */
/* A streaming writer's buffer. */
#define BW__STREAM_DEFAULT ((size_t)64 << 10)
/* printf formats short output here when the free space is smaller. */
#define BW__PRINTF_STACK 256
/* A fixed writer's printf formats output up to this long on the stack when
 * it does not fit the free space with vsnprintf's NUL (exact fits). */
#define BW__PRINTF_FIXED_STACK 1024

typedef char bw__seg_fits[sizeof(bw__blk) <= BW__SEG_HDR ? 1 : -1];
typedef char bw__seg_hdr_aligned[BW__SEG_HDR % BW__SEG_ALIGN == 0 ? 1 : -1];

/* The writer's layout on 64-bit (bufwriter.h): data, len, lim, cap, pos,
 * base, pool, mode, flags and err, the fast path and all a contiguous or
 * fixed writer's init and release touch, in the first 64 bytes, one cache
 * line when the writer is 64-byte aligned; the mode's part after them.
 * 112 bytes in all with syserr and the size limit after the mode's part. */
#if UINTPTR_MAX > 0xffffffffu
#  define BW__IN_LINE(f, n) (offsetof(bw_writer, f) + (n) <= 64)
typedef char bw__writer_first_line[BW__IN_LINE(data, 8) && BW__IN_LINE(len, 8) &&
                                           BW__IN_LINE(lim, 8) && BW__IN_LINE(cap, 8) &&
                                           BW__IN_LINE(pos, 8) && BW__IN_LINE(base, 8) &&
                                           BW__IN_LINE(pool, 8) && BW__IN_LINE(mode, 1) &&
                                           BW__IN_LINE(flags, 1) && BW__IN_LINE(err, 4)
                                       ? 1
                                       : -1];
typedef char bw__writer_mode_after[offsetof(bw_writer, m) >= 64 ? 1 : -1];
typedef char bw__writer_size[sizeof(bw_writer) <= 112 ? 1 : -1];
#  undef BW__IN_LINE
#endif

const char *bw_strerror(int status)
{
    switch (status) {
    case BW_OK:        return "success";
    case BW_ENOMEM:    return "out of memory (the backing allocator failed)";
    case BW_EOVERFLOW: return "size overflow (a size that cannot be represented)";
    case BW_EINVAL:    return "invalid argument";
    case BW_EIO:       return "I/O error (bw_errno says why)";
    case BW_EFULL:     return "no room left in the fixed buffer";
    case BW_ELIMIT:    return "size limit reached (bw_set_limit)";
    default:           return "unknown bufwriter status";
    }
}

const char *bw_version(void) { return BW_VERSION_STRING; }

/* ------------------------------------------------------------------------ */
/* State helpers                                                            */
/* ------------------------------------------------------------------------ */

/* A size limit's clamp of lim: no further than the offset in data where
 * the limit falls (len when the limit is below bw_tell), so a write that
 * would pass it misses the inline fast path and meets bw__over. */
static void bw__clamp_lim(bw_writer *w)
{
    uint64_t tell = w->pos + w->len;
    if (w->limit <= tell) w->lim = w->len;
    else if (w->limit - w->pos < w->lim) w->lim = (size_t)(w->limit - w->pos);
}

/* The fast-path limit: the block's end (or the size limit's), or len while
 * an error is recorded, so that every inline put misses and reaches the
 * cold path's check. Every change of pos, len or cap ends here. */
static void bw__set_lim(bw_writer *w)
{
    w->lim = w->err != BW_OK ? w->len : w->cap;
    if (BW__UNLIKELY(w->flags & BW__LIMITED) && w->err == BW_OK) bw__clamp_lim(w);
}

/* Record the first error; later writes miss the fast path. */
BW__INTERNAL int bw__fail(bw_writer *w, int rc)
{
    if (w->err == BW_OK) {
        w->err = rc;
        /* Kept with it: errno is overwritten long before the one check at
         * the end of a run (bw_errno). */
        w->syserr = rc == BW_EIO ? errno : 0;
    }
    w->lim = w->len;
    return rc;
}

static bw_pool *bw__pool_of(bw_writer *w)
{
    if (w->pool == NULL) { /* the shared pool: a load once it exists */
        bw_pool *p = atomic_load_explicit(&bw__shared_pool, memory_order_acquire);
        w->pool = p != NULL ? p : bw_pool_shared();
    }
    return w->pool;
}

/* What every init starts with (each mode's section has its inits). Every
 * field of the first line set one by one, not memset: gcc turns a memset
 * of the struct into rep stos, whose start-up costs more than the rest of
 * a small message's bw_init. The mode's part (w->m) is set by the
 * segmented and streaming inits alone: contiguous and fixed writers never
 * read it. A new field of bw_writer must be set here too (the valgrind run
 * reports one that is not). */
static int bw__init_mode(bw_writer *w, bw_pool *pool, unsigned char mode)
{
    if (w == NULL) return BW_EINVAL;
    w->data = NULL;
    w->len = w->lim = w->cap = 0;
    w->pos = w->base = 0;
    w->pool = pool;
    w->mode = mode;
    w->flags = 0; /* no limit (BW__LIMITED), no bw_write_fd errno */
    w->err = BW_OK;
    return BW_OK;
}

static const void *bw__stable_copy(bw_writer *w, const void *src, size_t n, void *buf,
                                   size_t nbuf, void **tmp, size_t *tmp_cap);

/* True when [p, p + n) overlaps the writer's current block (for the modes
 * with one block, all of its storage; bw__overlaps for any mode). */
static int bw__in_block(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, b = a + n;
    if (w->data == NULL || n == 0) return 0;
    return b > (uintptr_t)w->data && a < (uintptr_t)w->data + w->cap;
}

/* Append src[0, n) to a writer whose checks were made (not NULL, no error
 * recorded, src not NULL unless n is 0): the write the entry points and the
 * sections share, so that none calls another entry point for it. */
static int bw__put(bw_writer *w, const void *src, size_t n)
{
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len >= n) {
        if (n != 0) memcpy(w->data + w->len, src, n);
        w->len += n;
        return BW_OK;
    }
    return bw__room(w, n, src);
}

/* bw_append_ref's bytes copied, where nothing is linked: done is called
 * once they are. */
static int bw__link_copy(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    int rc = bw__put(w, data, n);
    if (rc == BW_OK && done != NULL) done(ctx, data, n);
    return rc;
}

/* printf's pass two, the length known (bw_vprintf), for the modes that
 * grow: output formatted into a block of its own, then written from there
 * (all or nothing), so the writer may move, link or send as it likes. */
static int bw__printf_apart(bw_writer *w, size_t need, const char *fmt, va_list ap)
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
static int bw__printf_grow(bw_writer *w, size_t need, const char *fmt, va_list ap, int apart)
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

/* ------------------------------------------------------------------------ */
/* The modes, one section each                                              */
/* ------------------------------------------------------------------------ */
/* Each section holds its mode's operations (writer_internal.h), what only
 * they use, and its table; the mode table below maps the mode to it. A
 * room operation makes room for n contiguous bytes at data + len; with src it also appends
 * src[0, n) and commits them. src may point into held bytes. On failure
 * the error is recorded and nothing held changes. */

/* ---- one block: contiguous, streaming and fixed share these ---- */

/* Move the held bytes of a one-block writer to the block's start (the cold
 * path of a writer that consumed); *src follows if it pointed into them. */
static void bw__move_down(bw_writer *w, const void **src)
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
static int bw__block_put(bw_writer *w, const void *src, size_t n)
{
    bw__move_down(w, &src);
    if (src != NULL) {
        memmove(w->data + w->len, src, n);
        w->len += n;
    }
    return BW_OK;
}

/* Walk: the held bytes are one piece. */
static int bw__block_piece(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    if (c->started || w->data == NULL) return 0;
    c->started = 1;
    *p = w->data + bw__start(w);
    *n = w->len - bw__start(w);
    return 1;
}

/* Reset: give the one block back (not the caller's first buffer). */
static void bw__block_drop_storage(bw_writer *w)
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
static void bw__block_cut(bw_writer *w, uint64_t pos)
{
    w->len = (size_t)(pos - w->pos);
    bw__set_lim(w);
}

/* Make contiguous for the modes that grow or move in place (contiguous,
 * fixed): their room. */
static unsigned char *bw__block_contiguous(bw_writer *w, size_t extra)
{
    if (w->cap - w->len < extra && bw__room(w, extra, NULL) != BW_OK) return NULL;
    return w->data + bw__start(w);
}

/* What the one-block modes share in their tables: one piece, nothing to
 * drop from a list, a patch in place, the block's capacity. */
static size_t bw__block_pieces(const bw_writer *w)
{
    return w->data != NULL && w->len != bw__start(w);
}
static void bw__block_drop_front(bw_writer *w, size_t n) { (void)w, (void)n; }
static int bw__block_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    memmove(w->data + (size_t)(pos - w->pos), src, n);
    return BW_OK;
}
static size_t bw__block_cap(const bw_writer *w) { return w->cap; }

/* And what modes without the matching ability name in their tables. */
static int bw__keeps_bytes(bw_writer *w) { return (void)w, BW_OK; }
static int bw__no_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    (void)n, (void)old, (void)old_cap;
    return bw__fail(w, BW_EINVAL);
}
static int bw__no_take(bw_writer *dst, bw_writer *src) { return (void)dst, (void)src, 0; }
static int bw__at_once(const bw_writer *w, size_t n) { return (void)w, (void)n, 1; }

/* ---- contiguous ---- */

/* On a zeroing pool (BW_POOL_ZERO_ON_RETURN) a contiguous writer's cap is a
 * window of its block (m.g.block bytes): every byte the caller may write
 * lies below cap (the inline puts and spans stop at lim <= cap, and
 * bw_free_capacity, bw_reserve and bw_advance count to cap), and the
 * window never narrows while the writer holds the block, so the block goes
 * back with cap as the end of what was written (bw__pool_return_written),
 * and a 20 KiB job in a 64 MiB block zeroes at most 40 KiB, not 64 MiB.
 * The window starts at the growth rule's size for what was asked for (at
 * least BW__ZERO_STEP) and at least doubles when the cold path widens it,
 * so it costs a cold path per doubling, as growth does, and is at most
 * twice the furthest byte asked for. */
#define BW__ZERO_STEP ((size_t)4096)

static size_t bw__contig_window(const bw_pool *p, size_t block, size_t want)
{
    /* By the growth rule (0: past what it can represent, the block), so
     * capacities stay the sizes the rule gives. */
    want = bw__grow_size(p, want < BW__ZERO_STEP ? BW__ZERO_STEP : want);
    return want != 0 && want < block ? want : block;
}

/* A newly rented block of got bytes for a writer that asked for want: its
 * window on a zeroing pool, the whole block otherwise. */
static void bw__contig_take(bw_writer *w, bw_pool *p, size_t got, size_t want)
{
    w->m.g.block = got;
    w->cap = bw__pool_zeroes(p) ? bw__contig_window(p, got, want) : got;
}

/* Widen a zeroing pool's window in place for n more bytes; false when the
 * block itself has no room for them (or there is no window). */
static bool bw__contig_widen(bw_writer *w, size_t n)
{
    size_t want;
    if ((w->flags & BW__EXTERNAL) || !bw__pool_zeroes(w->pool) || w->cap == w->m.g.block ||
        w->m.g.block - w->len < n)
        return false;
    want = w->len + n; /* at most the block: no overflow */
    if (want < 2 * w->cap) want = 2 * w->cap;
    w->cap = bw__contig_window(w->pool, w->m.g.block, want);
    bw__set_lim(w);
    return true;
}

/* The block's capacity (bw_detach's, and what goes back to the pool). */
static size_t bw__contig_block_cap(const bw_writer *w)
{
    return bw__pool_zeroes(w->pool) ? w->m.g.block : w->cap;
}

/* The size a contiguous writer moves to for n more bytes (the pool's
 * rule: first block, growth, learned jump). */
static int bw__contig_size(const bw_writer *w, bw_pool *p, size_t n, bw__size *out)
{
    bw__size_req r = {BW__SIZE_CONTIG, false, 0, 0, 0, 0, 0, 1};
    r.external = (w->flags & BW__EXTERNAL) != 0;
    r.n = n;
    r.held = w->len - bw__start(w);
    r.cap = w->cap;
    return bw__pool_size(p, &r, out);
}

/* Move a contiguous writer's held bytes into a new block with room for n
 * more, leaving the old storage as it is: *old and *old_cap get the block
 * to give back once nothing reads from it (NULL for none, or for the
 * caller's first buffer, which is not the pool's). */
static int bw__contig_move(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw_pool *p = bw__pool_of(w);
    size_t got, start = bw__start(w), held = w->len - start;
    bw__size cap;
    unsigned char *nb;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__contig_size(w, p, n, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    nb = (unsigned char *)bw__pool_rent_size(p, &cap, &got);
    if (nb == NULL) return bw__fail(w, BW_ENOMEM);
    if (held != 0) memcpy(nb, w->data + start, held);
    if (w->data != NULL && !(w->flags & BW__EXTERNAL)) {
        *old = w->data;
        *old_cap = bw__contig_block_cap(w);
    }
    /* The window as the growth rule would grow: held + n, at least twice
     * the old capacity (no overflow: bw__contig_size checked both). */
    bw__contig_take(w, p, got, held + n > 2 * w->cap ? held + n : 2 * w->cap);
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
static BW__COLD int bw__contig_first_slow(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p;
    size_t got = 0;
    bw__size cap = {0, 0, false};
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
    bw__contig_take(w, p, got, n);
    w->lim = w->cap;
    w->pos = w->base;
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w);
    if (src != NULL) {
        memcpy(b, src, n);
        w->len = n;
    }
    return BW_OK;
}

/* The first write of every small message comes here (bw_reserve, or
 * bw__room after bw__first_write): the usual first block (the pool's
 * first_block: min_first_block, no learning in play) needs no size rule,
 * and its rent is the thread cache's inline pop. No error is recorded (the
 * caller checked), so lim is the capacity. No stack frame and no call but
 * the copy: the first put's way from bw_reserve to here and back with the
 * block is about 45 instructions (callgrind), where the same calls with a
 * frame took 97, and the general way (bw__contig_size, bw_pool_shared,
 * bw_pool_rent) 159. Every other case is bw__contig_first_slow's, which
 * also makes bw_reserve's checks. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int bw__contig_first_in(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p = w->pool;
    unsigned char *b;
    size_t got;
    if (p == NULL) p = atomic_load_explicit(&bw__shared_pool, memory_order_acquire);
    if (BW__LIKELY(p != NULL && !(w->flags & BW__LIMITED)) &&
        (b = (unsigned char *)bw__rent_first(p, n, &got)) != NULL) {
        /* pos is base already: a contiguous writer without storage holds
         * nothing (init, release, detach and bw_take leave it so). */
        w->pool = p;
        w->lim = got;
        w->data = b;
        w->cap = got;
        if (src != NULL) {
            w->len = n; /* before the copy: a store through b may alias w */
            memcpy(b, src, n);
        }
        return BW_OK;
    }
    return bw__contig_first_slow(w, n, src);
}

static int bw__contig_first(bw_writer *w, size_t n, const void *src)
{
    return bw__contig_first_in(w, n, src);
}

/* Whether a write of n bytes is a contiguous writer's first (no storage):
 * the one test of the mode outside the table but the inits and bw_data,
 * made before the table so a small message's first write is a compare
 * away from its block. */
static inline bool bw__first_write(const bw_writer *w, size_t n)
{
    return w->data == NULL && w->mode == BW__CONTIG && n <= BW__MAX_BLOCK;
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
    bw__size_req r = {BW__SIZE_START, false, 0, 0, 0, 0, 0, 1};
    bw__size cap;
    size_t got;
    void *b;
    int rc;

    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    /* With BW_POOL_LEARN_SIZE the larger of it and the learned size. */
    r.n = initial_capacity;
    rc = bw__pool_size(p, &r, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    b = bw_pool_rent(p, cap.size, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = (unsigned char *)b;
    bw__contig_take(w, p, got, initial_capacity);
    w->lim = w->cap;
    return BW_OK;
}

static const bw__mode_ops bw__contig_ops = {
    bw__room_contig, bw__contig_keep, bw__keeps_bytes, bw__block_drop_storage,
    bw__block_contiguous, bw__block_piece, bw__block_pieces, bw__block_drop_front,
    bw__block_cut, bw__in_block, bw__block_patch, bw__contig_block_cap, bw__printf_contig,
    bw__link_copy, bw__no_take, bw__at_once, BW__GROWS};

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

/* ---- fixed ---- */

/* Fixed: the held bytes may move down over consumed room; nothing else. */
static BW__COLD int bw__room_fixed(bw_writer *w, size_t n, const void *src)
{
    if (w->cap - (w->len - bw__start(w)) < n) return bw__fail(w, BW_EFULL);
    return bw__block_put(w, src, n);
}

/* The output did not fit in pass one. A fixed writer has only its own
 * buffer and never allocates: output below BW__PRINTF_FIXED_STACK is
 * formatted on the stack and written like any source (moving the held bytes
 * down over consumed room when needed); longer output is formatted in the
 * buffer after the held bytes are moved down, and its arguments must not
 * point into the held bytes (bufwriter.h says so). vsnprintf's NUL needs a
 * byte past the output: when the output fills the buffer exactly, it is
 * formatted one byte early, over the last held byte (kept aside), then
 * moved up into place, so an exact fit succeeds. Only output that fills a
 * buffer holding nothing has no byte before it: that one needs a spare. */
static int bw__printf_fixed(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    char buf[BW__PRINTF_FIXED_STACK];
    size_t room = w->cap - (w->len - bw__start(w));
    unsigned char *at, kept = 0;
    int r, early;
    if (need < sizeof buf) {
        if (need > room) return bw__fail(w, BW_EFULL);
        r = vsnprintf(buf, sizeof buf, fmt, ap);
        return r >= 0 && (size_t)r == need ? bw__put(w, buf, need) : bw__fail(w, BW_EINVAL);
    }
    early = need == room;
    if (need > room || (early && room == w->cap)) return bw__fail(w, BW_EFULL);
    bw__move_down(w, NULL);
    at = w->data + w->len - early;
    if (early) kept = *at;
    r = vsnprintf((char *)at, need + 1, fmt, ap);
    if (early) {
        memmove(at + 1, at, need);
        *at = kept;
    }
    if (r < 0 || (size_t)r != need) return bw__fail(w, BW_EINVAL);
    w->len += need;
    return BW_OK;
}

/* The caller's buffer stays; no block is the pool's. */
static void bw__fixed_keep_buffer(bw_writer *w) { (void)w; }
static size_t bw__fixed_no_block(const bw_writer *w) { return (void)w, 0; }

static const bw__mode_ops bw__fixed_ops = {
    bw__room_fixed, bw__no_room_keep, bw__keeps_bytes, bw__fixed_keep_buffer,
    bw__block_contiguous, bw__block_piece, bw__block_pieces, bw__block_drop_front,
    bw__block_cut, bw__in_block, bw__block_patch, bw__fixed_no_block, bw__printf_fixed,
    bw__link_copy, bw__no_take, bw__at_once, BW__NO_POOL | BW__BOUNDED};

int bw_init_fixed(bw_writer *w, void *buf, size_t size)
{
    if (bw__init_mode(w, NULL, BW__FIXED) != BW_OK) return BW_EINVAL;
    if (buf == NULL && size != 0) return bw__fail(w, BW_EINVAL);
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = w->lim = size;
    return BW_OK;
}

/* ---- segmented ---- */

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
    /* Only a chain about to pass the threshold walks its blocks. */
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
static BW__COLD int bw__room_chain(bw_writer *w, size_t n, const void *src)
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
static int bw__chain_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
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
static int bw__chain_walk(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
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

static size_t bw__chain_pieces(const bw_writer *w)
{
    return w->m.c.count - w->m.c.first + (w->data != NULL && bw__open(w) != w->len);
}

/* Drop from the front (base has moved): whole pieces leave, the first kept
 * one starts later; what is left of n is the open piece's, whose start
 * follows base. */
static void bw__chain_drop_front(bw_writer *w, size_t n)
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
static size_t bw__chain_find(const bw_writer *w, uint64_t pos)
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
static void bw__chain_cut(bw_writer *w, uint64_t pos)
{
    size_t i, k;
    uint64_t open_at = w->pos + bw__open(w);
    if (pos >= open_at || w->m.c.first == w->m.c.count) {
        w->len = (size_t)(pos - w->pos);
        bw__set_lim(w);
        return;
    }
    i = bw__chain_find(w, pos);
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
static void bw__chain_drop_storage(bw_writer *w)
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
static unsigned char *bw__chain_contiguous(bw_writer *w, size_t extra)
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
    while (bw__chain_walk(w, &c, &src, &k)) {
        if (k != 0) memcpy(b->data + off, src, k);
        off += k;
    }
    bw__chain_drop_front(w, held);
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
static int bw__chain_overlaps(const bw_writer *w, const void *p, size_t n)
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
static size_t bw__chain_block_size(const bw_writer *w)
{
    return w->m.c.first == w->m.c.count ? w->cap + BW__SEG_HDR : 0;
}

/* Piece i's part of [pos, end) (i == count: the open piece): where it
 * starts in memory, and its length in *k (0: none). */
static unsigned char *bw__chain_span(const bw_writer *w, size_t i, uint64_t pos, uint64_t end,
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
static int bw__chain_own(bw_writer *w, size_t i, uint64_t end, size_t bytes)
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
static int bw__chain_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    unsigned char buf[64], *last = NULL, *d;
    const unsigned char *in = (const unsigned char *)src;
    uintptr_t a = (uintptr_t)src, e = a + n;
    void *tmp = NULL;
    size_t i0 = bw__chain_find(w, pos), i, k, refs = 0, last_off = 0, last_k = 0;
    uint64_t end = pos + n;
    int in_ref = 0, hits = 0, rc = BW_OK;
    size_t tmp_cap = 0;
    for (i = i0; i <= w->m.c.count; i++) {
        d = bw__chain_span(w, i, pos, end, &k);
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
    if (refs != 0) rc = bw__chain_own(w, i0, end, refs);
    for (i = i0; rc == BW_OK && i <= w->m.c.count; i++) {
        d = bw__chain_span(w, i, pos, end, &k);
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
static int bw__chain_link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    bw__piece *pc;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (n == 0 || bw__chain_overlaps(w, data, n)) return bw__link_copy(w, data, n, done, ctx);
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
static int bw__chain_take(bw_writer *dst, bw_writer *src)
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

static int bw__printf_chain(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    return bw__printf_grow(w, need, fmt, ap, 0);
}

static const bw__mode_ops bw__chain_ops = {
    bw__room_chain, bw__chain_room_keep, bw__keeps_bytes, bw__chain_drop_storage,
    bw__chain_contiguous, bw__chain_walk, bw__chain_pieces, bw__chain_drop_front,
    bw__chain_cut, bw__chain_overlaps, bw__chain_patch, bw__chain_block_size,
    bw__printf_chain, bw__chain_link, bw__chain_take, bw__at_once, BW__LINKS};

int bw_init_chain(bw_writer *w, bw_pool *pool)
{
    if (bw__init_mode(w, pool, BW__CHAIN) != BW_OK) return BW_EINVAL;
    w->m.c.pc = NULL;
    w->m.c.pc_cap = 0;
    w->m.c.first = w->m.c.count = 0;
    w->m.c.blocks = NULL;
    return BW_OK;
}

/* ---- streaming ---- */

/* Streaming: hand p[0, n) to the sink or fd until all is taken or it fails
 * (the sink contract: 1..n taken, -1 with EINTR retried, -1 failed, anything
 * else broken). *sent gets what was taken. */
static int bw__send_bytes(bw_writer *w, const unsigned char *p, size_t n, size_t *sent)
{
    size_t done = 0;
    int rc = BW_OK;
    while (done < n) {
        ptrdiff_t r;
        if (w->flags & BW__FD) {
            struct iovec one;
            one.iov_base = (void *)(uintptr_t)(p + done);
            one.iov_len = n - done;
            r = bw__fd_send(w->m.s.fd, &one, 1);
        } else if (w->m.s.sink != NULL) {
            r = w->m.s.sink(w->m.s.ctx, p + done, n - done);
        } else {
            rc = BW_EINVAL; /* a streaming writer whose init failed */
            break;
        }
        if (r > 0 && (size_t)r <= n - done) {
            done += (size_t)r;
        } else if (r == -1 && errno == EINTR) {
            continue;
        } else {
            if (r != -1) errno = EIO; /* a broken sink: never loop on it */
            rc = BW_EIO;
            break;
        }
    }
    *sent = done;
    return rc;
}

/* Send every held byte; on failure the rest stays held and BW_EIO is
 * recorded. Afterwards the buffer is empty and restarts at its beginning. */
BW__INTERNAL int bw__send_held(bw_writer *w)
{
    size_t start = bw__start(w), sent;
    int rc = bw__send_bytes(w, w->data + start, w->len - start, &sent);
    w->base += sent;
    if (rc != BW_OK) return bw__fail(w, rc);
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* A buffer enlarged for a long reserve or span goes back once its bytes
 * are sent (nothing held then), unless src points into it: the next write
 * rents the configured size, so memory stays what was configured. */
static void bw__stream_shrink(bw_writer *w, const void *src, size_t n)
{
    if (w->cap <= w->m.s.size || w->len != bw__start(w) || bw__in_block(w, src, n)) return;
    (void)bw_pool_return(w->pool, w->data, w->cap);
    w->data = NULL;
    w->cap = 0;
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
}

/* The buffer, rented at the first write, or replaced by a bigger block when
 * a reserve or span needs more than it has (nothing held then). */
static int bw__stream_buffer(bw_writer *w, size_t n)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap = w->m.s.size, got;
    unsigned char *b;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    if (n > cap) {
        rc = bw__pool_grow(p, 0, n, 0, &cap);
        if (rc != BW_OK) return bw__fail(w, rc);
    }
    b = (unsigned char *)bw_pool_rent(p, cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    if (w->data != NULL) (void)bw_pool_return(p, w->data, w->cap);
    w->data = b;
    w->cap = got;
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* Send p[0, n) straight from memory that is not the buffer (nothing is
 * held then), the positions following what was taken; a failure is
 * recorded. */
BW__INTERNAL int bw__send_past(bw_writer *w, const void *p, size_t n)
{
    size_t sent;
    int rc = bw__send_bytes(w, (const unsigned char *)p, n, &sent);
    w->pos += sent;
    w->base += sent;
    if (rc != BW_OK) return bw__fail(w, rc);
    bw__set_lim(w);
    return BW_OK;
}

static BW__COLD int bw__room_stream(bw_writer *w, size_t n, const void *src)
{
    int rc;
    if (w->data == NULL && n <= w->m.s.size) {
        rc = bw__stream_buffer(w, n);
        if (rc != BW_OK) return rc;
    }
    if (w->data != NULL && w->cap - (w->len - bw__start(w)) < n) {
        /* It does not fit even over consumed room: send what is held. A
         * source among the held bytes stays intact until copied below. */
        rc = bw__send_held(w);
        if (rc != BW_OK) return rc;
        if (n <= w->m.s.size) {
            bw__stream_shrink(w, src, src != NULL ? n : 0);
            if (w->data == NULL && (rc = bw__stream_buffer(w, n)) != BW_OK) return rc;
        }
    }
    if (src != NULL && (w->data == NULL || n > w->cap)) {
        /* Larger than the buffer: straight from the caller's memory (it
         * cannot be among the held bytes, which fit the buffer). */
        return bw__send_past(w, src, n);
    }
    if (w->data == NULL || n > w->cap) {
        rc = bw__stream_buffer(w, n);
        if (rc != BW_OK) return rc;
    }
    return bw__block_put(w, src, n);
}

/* Streaming: output up to the buffer size is formatted apart into a block
 * of that size at most and written all or nothing; longer output goes
 * straight to the sink through a FILE (bw__vprintf_sent, io.c) after the
 * held bytes, so memory stays bounded and the buffer (where arguments may
 * point) is not touched. Without the FILE adapter it too is formatted
 * apart. */
static int bw__printf_stream(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
#ifdef BW_HAVE_FILE_ADAPTER
    if (need > w->m.s.size) return bw__vprintf_sent(w, need, fmt, ap);
#endif
    return bw__printf_apart(w, need, fmt, ap);
}

/* Send: every held byte goes to the sink; an enlarged buffer goes back. */
static int bw__stream_send(bw_writer *w)
{
    if (bw_len(w) != 0 && bw__send_held(w) != BW_OK) return w->err;
    if (w->data != NULL) bw__stream_shrink(w, NULL, 0);
    return BW_OK;
}

/* Make contiguous: the held bytes move down; never sends or grows here
 * (BW_EFULL when extra does not fit the buffer). */
static unsigned char *bw__stream_contiguous(bw_writer *w, size_t extra)
{
    if (w->cap - w->len < extra) {
        if (w->cap - bw_len(w) < extra) {
            bw__fail(w, BW_EFULL);
            return NULL;
        }
        bw__move_down(w, NULL);
    }
    return w->data + bw__start(w);
}

/* The streaming modes' common part: the buffer size by the growth rule. */
static int bw__init_stream(bw_writer *w, bw_pool *pool, size_t buffer_size)
{
    bw_pool *p;
    int rc;
    if (bw__init_mode(w, pool, BW__STREAM) != BW_OK) return BW_EINVAL;
    w->m.s.sink = NULL;
    w->m.s.ctx = NULL;
    w->m.s.size = 0;
    w->m.s.fd = -1;
    if (buffer_size == 0) buffer_size = BW__STREAM_DEFAULT;
    if (buffer_size > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    p = bw__pool_of(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__pool_grow(p, 0, buffer_size, 0, &w->m.s.size);
    return rc != BW_OK ? bw__fail(w, rc) : BW_OK;
}

/* One room takes at most the buffer without sending part of it. */
static int bw__stream_at_once(const bw_writer *w, size_t n) { return n <= w->m.s.size; }

static const bw__mode_ops bw__stream_ops = {
    bw__room_stream, bw__no_room_keep, bw__stream_send, bw__block_drop_storage,
    bw__stream_contiguous, bw__block_piece, bw__block_pieces, bw__block_drop_front,
    bw__block_cut, bw__in_block, bw__block_patch, bw__block_cap, bw__printf_stream,
    bw__link_copy, bw__no_take, bw__stream_at_once, BW__SENDS | BW__BOUNDED};

int bw_init_sink(bw_writer *w, bw_pool *pool, size_t buffer_size, bw_sink_fn sink, void *ctx)
{
    int rc = bw__init_stream(w, pool, buffer_size);
    if (w == NULL) return rc;
    w->m.s.sink = sink;
    w->m.s.ctx = ctx;
    if (rc == BW_OK && sink == NULL) rc = bw__fail(w, BW_EINVAL);
    return rc;
}

int bw_init_fd(bw_writer *w, bw_pool *pool, size_t buffer_size, int fd)
{
    int rc = bw__init_stream(w, pool, buffer_size);
    if (w == NULL) return rc;
    w->flags = BW__FD;
    w->m.s.fd = fd;
    if (rc == BW_OK && fd < 0) rc = bw__fail(w, BW_EINVAL);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The mode table: the one place that maps the mode to its operations       */
/* ------------------------------------------------------------------------ */
/* One table per mode, in its section; this array, indexed by the mode, is
 * the only code that reads it (but bw_data's inline fast path and the
 * inits). A new mode adds its section with its table and its entry here;
 * the size check below fails until the entry is there, and a table with a
 * missing operation fails -Wmissing-field-initializers (-Wextra). */
static const bw__mode_ops *const bw__modes[] = {&bw__contig_ops, &bw__chain_ops,
                                                &bw__stream_ops, &bw__fixed_ops};
typedef char bw__every_mode_has_a_table[sizeof bw__modes / sizeof bw__modes[0] == BW__NMODES
                                            ? 1 : -1];

static const bw__mode_ops *bw__ops(const bw_writer *w) { return bw__modes[w->mode]; }

BW__INTERNAL unsigned bw__traits(const bw_writer *w) { return bw__ops(w)->traits; }

BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src)
{
    /* A small message's first write (bw__contig_first) is one compare
     * away: the mode's own test, before the table. */
    if (bw__first_write(w, n)) return bw__contig_first(w, n, src);
    if (n > BW__MAX_BLOCK && !(bw__ops(w)->traits & BW__NO_POOL))
        return bw__fail(w, BW_EOVERFLOW);
    return bw__ops(w)->room(w, n, src);
}

/* Room for n contiguous bytes at data + len that leaves every byte the held
 * bytes are in where it is and as it is, so that a source among them (a
 * printf argument, the rest of a FILE's write) stays readable until the
 * caller gives *old back (bw_pool_return with *old_cap; NULL for nothing).
 * Contiguous: a new block; segmented: a new block linked after the last.
 * Streaming and fixed writers have nowhere else to go: BW_EINVAL. */
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    *old = NULL;
    *old_cap = 0;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    return bw__ops(w)->room_keep(w, n, old, old_cap);
}

BW__INTERNAL int bw__send(bw_writer *w) { return bw__ops(w)->send(w); }
BW__INTERNAL void bw__drop_storage(bw_writer *w) { bw__ops(w)->drop_storage(w); }
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra)
{
    return bw__ops(w)->contiguous(w, extra);
}
BW__INTERNAL int bw__walk(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    return bw__ops(w)->walk(w, c, p, n);
}
BW__INTERNAL size_t bw__pieces(const bw_writer *w) { return bw__ops(w)->pieces(w); }

BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n)
{
    w->base += n;
    bw__ops(w)->drop_front(w, n);
    if (w->base == bw_tell(w)) { /* all gone: start over at the beginning */
        w->pos = w->base;
        w->len = 0;
        bw__set_lim(w);
    }
}

BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n)
{
    return bw__ops(w)->overlaps(w, p, n);
}
BW__INTERNAL int bw__printf_rest(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    return bw__ops(w)->printf_rest(w, need, fmt, ap);
}
BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n)
{
    return bw__ops(w)->room_at_once(w, n);
}
BW__INTERNAL size_t bw__block_size(const bw_writer *w)
{
    if (w->data == NULL || (w->flags & BW__EXTERNAL)) return 0;
    return bw__ops(w)->block_size(w);
}
BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos) { bw__ops(w)->cut(w, pos); }
BW__INTERNAL int bw__patch_at(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    return bw__ops(w)->patch(w, pos, src, n);
}
BW__INTERNAL int bw__link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    return bw__ops(w)->link(w, data, n, done, ctx);
}
BW__INTERNAL int bw__take(bw_writer *dst, bw_writer *src) { return bw__ops(dst)->take(dst, src); }

int bw__write_slow(bw_writer *w, const void *src, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    return bw__put(w, src, n);
}

/* ------------------------------------------------------------------------ */
/* Release, clear, flush                                                    */
/* ------------------------------------------------------------------------ */

/* The end of a job: a growing writer's length teaches a learning pool.
 * Only what the pool learns from (bw__learn_record's checks, folded into
 * bw__pool_learns: one compare), so that a small message's release
 * makes no call for nothing. */
static inline void bw__job_done(bw_writer *w)
{
    bw_pool *p = w->pool;
    if ((bw__traits(w) & BW__GROWS) && p != NULL && bw__pool_learns(p, bw_len(w)))
        bw__learn_record(p, bw_len(w));
}


/* Empty, no error, positions at 0; keeps the mode and its parameters. */
/* The storage is given back (bw__drop_storage) or handed out first. */
static void bw__reset(bw_writer *w)
{
    w->len = 0;
    w->pos = w->base = 0;
    w->err = BW_OK;
    w->flags &= (unsigned char)~(BW__EXTERNAL | BW__CSTR | BW__FD_ERRNO);
    w->lim = w->cap; /* no error now */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w); /* the limit stays */
}

/* bw_release of the modes that do not grow by moving (segmented, streaming,
 * fixed): none of them teaches the pool, so bw__job_done is not needed. */
static BW__COLD void bw__release_rest(bw_writer *w)
{
    bw__drop_storage(w);
    bw__reset(w);
}

/* bw_release's rest for a writer that grows by moving: the job's length
 * teaches the pool, and the block (of block bytes, nothing written at or
 * past cap) goes back the general way. */
static BW__COLD void bw__release_block(bw_pool *p, unsigned char *b, size_t block, size_t cap,
                                       size_t len)
{
    if (p != NULL && bw__pool_learns(p, len)) bw__learn_record(p, len);
    if (b != NULL && !bw__return_fast(p, b, block))
        (void)bw__pool_return_written(p, b, block, cap);
}

/* A writer that grows by moving (contiguous: every small message) has its
 * own way through: its one block and the first line are all it has, the
 * fields it uses are emptied, and a small message's block (the pool's
 * first size, too small to teach the pool anything) goes back by the
 * thread cache's inline push, with no call and no stack frame. Any other
 * block, and a length that teaches the pool, take bw__release_block; other
 * modes bw__release_rest. */
void bw_release(bw_writer *w)
{
    bw_pool *p;
    unsigned char *b;
    size_t cap, len, block = 0;
    if (w == NULL) return;
    p = w->pool;
    /* The mode's own test (the contiguous mode alone grows by moving),
     * before the table, as bw__first_write's. */
    if (w->mode != BW__CONTIG) {
        bw__release_rest(w);
        return;
    }
    b = w->flags & BW__EXTERNAL ? NULL : w->data;
    cap = w->cap;
    /* A block implies its pool (the rent set it). Given back before the
     * fields are emptied, so the length is read only when it can teach. */
    if (b != NULL && bw__return_first(p, b, cap)) {
        b = NULL;
        len = 0;
    } else {
        len = bw_len(w);
        if (b != NULL) block = bw__contig_block_cap(w);
    }
    w->data = NULL;
    w->cap = 0;
    bw__reset(w);
    if (b != NULL || (p != NULL && bw__pool_learns(p, len)))
        bw__release_block(p, b, block, cap, len);
}

void bw_clear(bw_writer *w)
{
    uint64_t at;
    if (w == NULL) return;
    bw__job_done(w);
    at = w->base;
    bw__drop_front(w, bw_len(w)); /* every piece but the last block goes */
    w->pos = w->base = at; /* bw_tell: the first dropped byte */
    w->len = 0;
    w->err = BW_OK;
    w->flags &= (unsigned char)~BW__FD_ERRNO;
    bw__set_lim(w);
}

void bw_clear_error(bw_writer *w)
{
    if (w == NULL) return;
    w->err = BW_OK;
    w->flags &= (unsigned char)~BW__FD_ERRNO;
    bw__set_lim(w);
}

/* syserr is written with every recorded error (bw__fail) and by a failed
 * bw_write_fd (which records nothing, and sets BW__FD_ERRNO): it means
 * something only with one of them, so init, clear and release need not
 * touch it (it is outside the first cache line); they clear the flag. */
int bw_errno(const bw_writer *w)
{
    return w != NULL && (w->err != BW_OK || (w->flags & BW__FD_ERRNO)) ? w->syserr : 0;
}

int bw_flush(bw_writer *w)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    return bw__send(w);
}

int bw_set_limit(bw_writer *w, uint64_t max_bytes)
{
    if (w == NULL) return BW_EINVAL;
    w->limit = max_bytes;
    if (max_bytes != 0) w->flags |= BW__LIMITED;
    else w->flags &= (unsigned char)~BW__LIMITED;
    bw__set_lim(w);
    return BW_OK;
}

bw_pool *bw_writer_pool(const bw_writer *w)
{
    if (w == NULL || (bw__traits(w) & BW__NO_POOL)) return NULL;
    return w->pool ? w->pool : bw_pool_shared();
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

int bw_reserve(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    /* A small message's first put (the size limit and n's range are
     * checked on its slow way). */
    if (w->data == NULL && w->mode == BW__CONTIG) return bw__contig_first_in(w, n, NULL);
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len >= n) return BW_OK;
    return bw__room(w, n, NULL);
}

/* bw_get_span's cold path (its fast path is inline). */
void *bw__get_span_slow(bw_writer *w, size_t size_hint, size_t *avail)
{
    if (avail != NULL) *avail = 0;
    if (bw_reserve(w, size_hint ? size_hint : 1) != BW_OK) return NULL;
    if (avail != NULL) *avail = bw_free_capacity(w);
    return w->data + w->len;
}

int bw_advance(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n > w->cap - w->len) return bw__fail(w, BW_EINVAL); /* past the block: not a span's */
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    w->len += n;
    return BW_OK;
}

int bw_puts(bw_writer *w, const char *s)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (s == NULL) return bw__fail(w, BW_EINVAL);
    return bw__put(w, s, strlen(s));
}

/* The one stable copy of a source: n bytes that stay valid while the
 * writer moves, links or sends, copied from src, or with src NULL from the
 * writer's own held bytes (n is then bw_len). In buf (nbuf bytes) when they
 * fit, else in a block from the pool (*tmp, *tmp_cap: give it back after).
 * NULL with the error recorded. */
static const void *bw__stable_copy(bw_writer *w, const void *src, size_t n, void *buf,
                                   size_t nbuf, void **tmp, size_t *tmp_cap)
{
    void *to = buf;
    *tmp = NULL;
    if (n > nbuf) {
        bw_pool *p = bw__pool_of(w);
        if (p == NULL || (*tmp = bw_pool_rent(p, n, tmp_cap)) == NULL) {
            bw__fail(w, BW_ENOMEM);
            return NULL;
        }
        to = *tmp;
    }
    if (src != NULL) return memcpy(to, src, n);
    (void)bw_copy_out(w, 0, to, n);
    return to;
}

int bw_vprintf(bw_writer *w, const char *fmt, va_list ap)
{
    char stack[BW__PRINTF_STACK], *dst;
    size_t avail, size, shift = 0, need;
    va_list cp;
    int r;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (fmt == NULL) return bw__fail(w, BW_EINVAL);
    /* Pass one: into the free space when there is a useful amount of it,
     * else into a stack buffer, so short output is formatted once, also on
     * a writer with no storage yet. After bw_cstr the free space starts
     * with the NUL of a string an argument may be: then one byte further. */
    avail = w->data != NULL ? w->cap - w->len : 0;
    if (w->flags & BW__CSTR) {
        shift = avail != 0;
        w->flags &= (unsigned char)~BW__CSTR;
    }
    if (avail - shift >= sizeof stack) {
        dst = (char *)w->data + w->len + shift;
        size = avail - shift;
    } else {
        dst = stack;
        size = sizeof stack;
    }
    va_copy(cp, ap);
    errno = 0;
    r = vsnprintf(dst, size, fmt, cp);
    va_end(cp);
    if (r < 0) return bw__fail(w, errno == EOVERFLOW ? BW_EOVERFLOW : BW_EINVAL);
    need = (size_t)r;
    if (BW__UNLIKELY(bw__over(w, need))) return bw__fail(w, BW_ELIMIT);
    if (need < size) {
        if (dst == stack) return bw__put(w, stack, need);
        if (shift) memmove(w->data + w->len, dst, need);
        w->len += need;
        return BW_OK;
    }
    /* Pass two, the length known: formatted again where it will stay, while
     * everything the arguments may point into stays as it is. */
    return bw__printf_rest(w, need, fmt, ap);
}

int bw_printf(bw_writer *w, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_vprintf(w, fmt, ap);
    va_end(ap);
    return rc;
}

static const char bw__digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v, written backwards ending at `end`; returns the first. */
static char *bw__dec(char *end, uint64_t v)
{
    while (v >= 100) {
        size_t i = (size_t)(v % 100) * 2;
        v /= 100;
        *--end = bw__digits2[i + 1];
        *--end = bw__digits2[i];
    }
    if (v >= 10) {
        size_t i = (size_t)v * 2;
        *--end = bw__digits2[i + 1];
        *--end = bw__digits2[i];
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

int bw_put_dec_u64(bw_writer *w, uint64_t v)
{
    char b[20], *p = bw__dec(b + sizeof b, v);
    return bw_write(w, p, (size_t)(b + sizeof b - p));
}

int bw_put_dec_i64(bw_writer *w, int64_t v)
{
    char b[21], *p;
    uint64_t u = (uint64_t)v;
    if (v < 0) u = 0 - u; /* INT64_MIN too */
    p = bw__dec(b + sizeof b, u);
    if (v < 0) *--p = '-';
    return bw_write(w, p, (size_t)(b + sizeof b - p));
}

static void bw__hex(unsigned char *out, const unsigned char *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = (unsigned char)digits[in[i] >> 4];
        out[2 * i + 1] = (unsigned char)digits[in[i] & 15];
    }
}

int bw_put_hex(bw_writer *w, const void *src, size_t n)
{
    unsigned char buf[256];
    const unsigned char *in = (const unsigned char *)src;
    void *tmp = NULL;
    size_t tmp_cap = 0;
    int rc = BW_OK, no_pool;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    no_pool = (bw__traits(w) & BW__NO_POOL) != 0;
    if (n > BW__MAX_BLOCK / 2) return bw__fail(w, no_pool ? BW_EFULL : BW_EOVERFLOW);
    if (BW__UNLIKELY(bw__over(w, 2 * n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len < 2 * n) {
        /* The cold path may move, link or send the bytes src points into:
         * they are copied first, but a writer with no pool never allocates
         * and moves its held bytes down in place instead, src with them. */
        if (bw__overlaps(w, src, n) && no_pool) {
            const void *at = in;
            bw__move_down(w, &at);
            in = (const unsigned char *)at;
        } else if (bw__overlaps(w, src, n)) {
            in = (const unsigned char *)bw__stable_copy(w, src, n, buf, sizeof buf, &tmp, &tmp_cap);
            if (in == NULL) return w->err;
        }
        if (!bw__room_at_once(w, 2 * n)) {
            /* Larger than a streaming buffer: in pieces (a prefix on
             * failure). */
            unsigned char out[512];
            size_t i;
            for (i = 0; i < n && rc == BW_OK; i += sizeof out / 2) {
                size_t k = n - i < sizeof out / 2 ? n - i : sizeof out / 2;
                bw__hex(out, in + i, k);
                rc = bw__put(w, out, 2 * k);
            }
            goto done;
        }
        rc = bw__room(w, 2 * n, NULL);
        if (rc != BW_OK) goto done;
    }
    bw__hex(w->data + w->len, in, n);
    w->len += 2 * n;
done:
    if (tmp != NULL) (void)bw_pool_return(w->pool, tmp, tmp_cap);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Positions                                                                */
/* ------------------------------------------------------------------------ */

int bw_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    uint64_t tell;
    /* Allowed while an error is recorded (as truncate): the held bytes are
     * intact after any failure, so a frame can be fixed or rolled back
     * before the error is dealt with. A failure returns its own code, not
     * w->err: with an error already recorded that would hide it (the
     * first error stays). */
    if (w == NULL) return BW_EINVAL;
    if (n == 0) return BW_OK;
    tell = bw_tell(w);
    if (src == NULL || pos < w->base || pos > tell || n > tell - pos) return bw__fail(w, BW_EINVAL);
    return bw__patch_at(w, pos, src, n);
}

int bw_truncate(bw_writer *w, uint64_t pos)
{
    if (w == NULL) return BW_EINVAL;
    if (pos < w->base || pos > bw_tell(w)) return bw__fail(w, BW_EINVAL);
    bw__cut(w, pos);
    return BW_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading out                                                              */
/* ------------------------------------------------------------------------ */

/* bw_data's cold path (its fast path, a writer that is not segmented, is
 * inline). */
const unsigned char *bw__data_slow(const bw_writer *w)
{
    bw__cursor c = {0, 0};
    const unsigned char *p;
    size_t n, count;
    if (w == NULL) return NULL;
    count = bw__pieces(w);
    if (count > 1) return NULL;
    if (count == 0) return w->data != NULL ? w->data + w->len : NULL;
    while (bw__walk(w, &c, &p, &n) && n == 0) {}
    return p;
}

/* The count without a walk; a walk only for the entries asked for. */
size_t bw_iovec(const bw_writer *w, struct iovec *iov, size_t max)
{
    bw__cursor c = {0, 0};
    const unsigned char *p;
    size_t n, k = 0;
    if (w == NULL) return 0;
    if (iov == NULL) max = 0;
    while (k < max && bw__walk(w, &c, &p, &n)) {
        if (n == 0) continue;
        iov[k].iov_base = (void *)(uintptr_t)p;
        iov[k].iov_len = n;
        k++;
    }
    return bw__pieces(w);
}

int bw_copy_out(const bw_writer *w, size_t offset, void *dst, size_t n)
{
    bw__cursor c = {0, 0};
    const unsigned char *p;
    unsigned char *out = (unsigned char *)dst;
    size_t k, len;
    if (w == NULL) return BW_EINVAL;
    len = bw_len(w);
    if (offset > len || n > len - offset) return BW_EINVAL;
    if (n == 0) return BW_OK;
    if (dst == NULL) return BW_EINVAL;
    while (n > 0 && bw__walk(w, &c, &p, &k)) {
        if (offset >= k) {
            offset -= k;
            continue;
        }
        p += offset;
        k -= offset;
        offset = 0;
        if (k > n) k = n;
        memcpy(out, p, k);
        out += k;
        n -= k;
    }
    return BW_OK;
}


int bw_consume(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (n > bw_len(w)) return bw__fail(w, BW_EINVAL);
    if (n != 0) bw__drop_front(w, n);
    return BW_OK;
}

const unsigned char *bw_pullup(bw_writer *w)
{
    const unsigned char *d;
    if (w == NULL || w->err != BW_OK) return NULL;
    d = bw_data(w); /* already in one piece: no copy */
    if (d != NULL || bw_len(w) == 0) return d;
    return bw__contiguous(w, 0);
}

const char *bw_cstr(bw_writer *w)
{
    unsigned char *p;
    if (w == NULL || w->err != BW_OK) return NULL;
    if (w->data == NULL && bw_len(w) == 0) return "";
    /* A full buffer that cannot grow: a question with no answer, not a
     * failed write, so nothing is recorded and writing can go on. */
    if ((bw__traits(w) & BW__BOUNDED) && bw_len(w) == w->cap) return NULL;
    p = bw__contiguous(w, 1);
    if (p == NULL) return NULL;
    w->data[w->len] = 0;
    w->flags |= BW__CSTR; /* printf must not write over it first */
    return (const char *)p;
}

/* ------------------------------------------------------------------------ */
/* Appending, hand-off and zero-copy                                        */
/* ------------------------------------------------------------------------ */

int bw_append_writer(bw_writer *dst, const bw_writer *src)
{
    bw__cursor c = {0, 0};
    const unsigned char *p;
    size_t n, len;
    uint64_t mark;
    int rc;

    if (dst == NULL) return BW_EINVAL;
    if (dst->err != BW_OK) return dst->err;
    if (src == NULL) return bw__fail(dst, BW_EINVAL);
    len = bw_len(src);
    if (len == 0) return BW_OK;
    if (BW__UNLIKELY(bw__over(dst, len))) return bw__fail(dst, BW_ELIMIT);
    if (dst == src && (bw__traits(dst) & BW__NO_POOL)) {
        /* Nothing is allocated: one block, and a write from its own held
         * bytes moves the source with them, so no copy. */
        return bw__put(dst, dst->data + bw__start(dst), len);
    }
    if (dst == src) {
        /* A second copy of itself: copy out first (writing may move, link
         * or send what is being read). */
        unsigned char buf[256];
        void *tmp;
        size_t tmp_cap = 0;
        const void *copy = bw__stable_copy(dst, NULL, len, buf, sizeof buf, &tmp, &tmp_cap);
        if (copy == NULL) return dst->err;
        rc = bw__put(dst, copy, len);
        if (tmp != NULL) (void)bw_pool_return(dst->pool, tmp, tmp_cap);
        return rc;
    }
    /* All or nothing: room first where it is made at once (a streaming
     * writer only for what fits its buffer); a segmented writer links its
     * pieces instead, and undoes to the mark. */
    if (!(bw__traits(dst) & BW__LINKS) && bw__room_at_once(dst, len)) {
        rc = dst->cap - dst->len >= len ? BW_OK : bw__room(dst, len, NULL);
        if (rc != BW_OK) return rc;
    }
    mark = bw_tell(dst);
    while (bw__walk(src, &c, &p, &n)) {
        if (n == 0) continue;
        rc = bw__put(dst, p, n);
        if (rc != BW_OK) {
            if ((bw__traits(dst) & BW__LINKS) && mark >= dst->base) bw__cut(dst, mark);
            return rc;
        }
    }
    return BW_OK;
}

void *bw_detach(bw_writer *w, size_t *len, size_t *capacity)
{
    void *b = NULL;
    size_t l = 0, c = 0;
    if (len != NULL) *len = 0;
    if (capacity != NULL) *capacity = 0;
    if (w == NULL) return NULL;
    if (bw__traits(w) & BW__NO_POOL) {
        bw__fail(w, BW_EINVAL);
        return NULL;
    }
    if (w->data != NULL || bw_len(w) != 0) {
        l = bw_len(w);
        if (w->flags & BW__EXTERNAL) {
            /* The caller's buffer cannot go to the pool: hand out a pooled
             * copy, sized by the growth rule (none when nothing is held). */
            bw_pool *p = bw__pool_of(w);
            size_t want;
            if (l != 0) {
                if (p == NULL || bw__pool_grow(p, 0, l, 0, &want) != BW_OK ||
                    (b = bw_pool_rent(p, want, &c)) == NULL) {
                    bw__fail(w, BW_ENOMEM);
                    return NULL;
                }
                memcpy(b, w->data + bw__start(w), l);
            }
        } else {
            /* Works while an error is recorded: bw__contiguous does not
             * check it (a failure then keeps the first error). */
            if (bw__contiguous(w, 0) == NULL) return NULL;
            bw__move_down(w, NULL);
            b = w->data;
            c = bw__block_size(w);
        }
    }
    bw__job_done(w);
    w->data = NULL; /* handed out: what else the mode holds goes back */
    w->cap = 0;
    bw__drop_storage(w);
    bw__reset(w);
    if (len != NULL) *len = l;
    if (capacity != NULL) *capacity = c;
    return b;
}

void *bw_detach_malloc(bw_writer *w, size_t *len)
{
    unsigned char *b;
    size_t l, cap;
    if (len != NULL) *len = 0;
    if (w == NULL) return NULL;
    l = bw_len(w);
    cap = bw__block_size(w);
    if (cap != 0) {
        /* One block of the pool's: handed over when it is malloc's memory
         * with room for the NUL (a segmented block's link after the bytes
         * is room too), shrunk to fit when it is much larger than them;
         * the pool says when a copy is cheaper (pool_writer.h). */
        if (l < cap && bw__pool_hand_off(w->pool, w->data, cap, l + 1)) {
            bw__move_down(w, NULL);
            b = w->data;
            b[l] = 0;
            /* Nothing past w->cap written: a contiguous writer's window,
             * else the block's end. */
            b = (unsigned char *)bw__pool_hand_off_fit(
                w->pool, b, cap, l + 1, bw__traits(w) & BW__GROWS ? w->cap : cap);
            w->data = NULL; /* handed out, as in bw_detach */
            w->cap = 0;
            bw__drop_storage(w);
            goto done;
        }
    }
    b = (unsigned char *)malloc(l + 1);
    if (b == NULL) {
        bw__fail(w, BW_ENOMEM);
        return NULL;
    }
    /* One block holds them at data[start, len) (as bw__move_down has it):
     * no walk. */
    if (cap != 0 && l != 0) memcpy(b, w->data + bw__start(w), l);
    else (void)bw_copy_out(w, 0, b, l);
    b[l] = 0;
    bw__drop_storage(w);
done:
    bw__job_done(w);
    bw__reset(w);
    if (len != NULL) *len = l;
    return b;
}

int bw_append_ref(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (data == NULL && n != 0) return bw__fail(w, BW_EINVAL);
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    return bw__link(w, data, n, done, ctx);
}

int bw_move(bw_writer *dst, bw_writer *src)
{
    size_t len;
    int rc;
    if (dst == NULL) return BW_EINVAL;
    if (dst->err != BW_OK) return dst->err;
    if (src == NULL || src == dst || (bw__traits(src) & BW__SENDS)) return bw__fail(dst, BW_EINVAL);
    if (src->err != BW_OK) return src->err; /* src's to deal with: not recorded */
    len = bw_len(src);
    if (len == 0) return BW_OK;
    if (BW__UNLIKELY(bw__over(dst, len))) return bw__fail(dst, BW_ELIMIT);
    rc = bw__take(dst, src);
    if (rc != 0) return rc > 0 ? BW_OK : rc;
    rc = bw_append_writer(dst, src);
    if (rc == BW_OK) bw__drop_front(src, len);
    return rc;
}
