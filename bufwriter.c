/* SPDX-License-Identifier: MIT */
/* bufwriter.c - the writer's out-of-line paths, for every mode: the cold
 * path that makes room (grow, link, flush or BW_EFULL), the sticky error,
 * positions, spans, printf, the encoders that are not inline, reading out.
 * What differs by mode is the hooks and traits of writer_internal.h: one
 * section per mode holds its inits and implements its hooks, and the
 * dispatcher after those sections, where the mode picks its section, is
 * the only other code that reads the mode. The fast paths are static
 * inline in bufwriter.h and know no mode (but bw_data's, which tells a
 * segmented writer from the rest). */
#include "writer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

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
/* A segmented writer's first block, and a streaming writer's buffer. */
#define BW__CHAIN_FIRST ((size_t)4096)
#define BW__STREAM_DEFAULT ((size_t)64 << 10)
/* printf formats short output here when the free space is smaller. */
#define BW__PRINTF_STACK 256
/* A fixed writer's printf formats output up to this long on the stack when
 * it does not fit the free space with vsnprintf's NUL (exact fits). */
#define BW__PRINTF_FIXED_STACK 1024

typedef char bw__seg_fits[sizeof(bw__seg) <= BW__SEG_HDR ? 1 : -1];
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

static bw__seg *bw__tail_seg(const bw_writer *w) { return (bw__seg *)(void *)(w->data + w->cap); }
static size_t bw__seg_cap(const bw__seg *s) { return (size_t)((const unsigned char *)s - s->data); }

/* A by-reference piece (bw_append_ref): a small record rented from the pool,
 * linked like a block. Its link's data is NULL, which tells it from a block
 * in every walk; its held range [start, end) lies in the caller's bytes. It
 * is never the last block: writes go to a block after it. */
typedef struct bw__ref {
    bw__seg seg; /* first, so a bw__seg * of a reference is the record    */
    const unsigned char *bytes;
    size_t n;        /* as given: done(ctx, bytes, n)                      */
    bw_done_fn done;
    void *ctx;
    size_t cap;      /* the record's capacity, to give it back             */
} bw__ref;

/* Where a non-last piece's offsets count from. */
static const unsigned char *bw__seg_bytes(const bw__seg *s)
{
    return s->data != NULL ? s->data : ((const bw__ref *)(const void *)s)->bytes;
}

/* Give a segmented block back (its real capacity includes the link); a
 * reference's record goes back and its done is called, once. */
static void bw__seg_return(bw_writer *w, bw__seg *s)
{
    if (s->data == NULL) {
        bw__ref r = *(bw__ref *)(void *)s;
        (void)bw_pool_return(w->pool, s, r.cap);
        if (r.done != NULL) r.done(r.ctx, r.bytes, r.n);
        return;
    }
    (void)bw_pool_return(w->pool, s->data, bw__seg_cap(s) + BW__SEG_HDR);
}

/* Give back every segmented block but the last. */
static void bw__seg_drop_all_but_tail(bw_writer *w)
{
    bw__seg *s = (bw__seg *)w->m.head, *tail = bw__tail_seg(w);
    while (s != NULL && s != tail) {
        bw__seg *next = s->next;
        bw__seg_return(w, s);
        s = next;
    }
    w->m.head = NULL;
}

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
/* Each section holds its mode's hooks (writer_internal.h) and what only
 * they use; the dispatcher below maps the mode to them. A room hook makes
 * room for n contiguous bytes at data + len; with src it also appends
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

/* The end of a one-block room hook that moves in place (fixed, streaming),
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
    if (c->started) return 0;
    c->started = 1;
    *p = w->data + bw__start(w);
    *n = w->len - bw__start(w);
    return 1;
}

/* Reset: give the one block back (not the caller's first buffer). */
static void bw__block_drop_storage(bw_writer *w)
{
    if (w->data != NULL && !(w->flags & BW__EXTERNAL))
        (void)bw_pool_return(w->pool, w->data, w->cap);
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

/* ---- contiguous ---- */

/* The size a contiguous writer moves to for n more bytes (the pool's
 * rule: first block, growth, learned jump). */
static int bw__contig_size(const bw_writer *w, bw_pool *p, size_t n, size_t *out)
{
    return bw__pool_contig_size(p, w->len - bw__start(w), w->cap,
                                (w->flags & BW__EXTERNAL) != 0, n, out);
}

/* Move a contiguous writer's held bytes into a new block with room for n
 * more, leaving the old storage as it is: *old and *old_cap get the block
 * to give back once nothing reads from it (NULL for none, or for the
 * caller's first buffer, which is not the pool's). */
static int bw__contig_move(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap, got, start = bw__start(w), held = w->len - start;
    unsigned char *nb;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__contig_size(w, p, n, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    nb = (unsigned char *)bw_pool_rent(p, cap, &got);
    if (nb == NULL) return bw__fail(w, BW_ENOMEM);
    if (held != 0) memcpy(nb, w->data + start, held);
    if (w->data != NULL && !(w->flags & BW__EXTERNAL)) {
        *old = w->data;
        *old_cap = w->cap;
    }
    w->flags &= (unsigned char)~BW__EXTERNAL;
    w->data = nb;
    w->cap = got;
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
    size_t old_cap = 0;
    int rc;

    if (w->data != NULL) {
        bw__move_down(w, &src);
        if (w->cap - w->len >= n) goto copy;
        if (!(w->flags & BW__EXTERNAL) && w->cap > bw__pool_threshold(w->pool) &&
            bw__pool_can_regrow(w->pool) && !bw__in_block(w, src, src != NULL ? n : 0)) {
            size_t cap;
            unsigned char *nb;
            rc = bw__contig_size(w, w->pool, n, &cap);
            if (rc != BW_OK) return bw__fail(w, rc);
            nb = (unsigned char *)bw__pool_regrow(w->pool, w->data, w->cap, w->len, cap);
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
    if (old != NULL) (void)bw_pool_return(w->pool, old, old_cap);
    return BW_OK;
}

/* A contiguous writer's first block (it has no storage, so holds nothing):
 * no bytes to move or copy, no old block to give back, just the rent, and
 * src written at the start. The first write of every small message comes
 * here, so it skips bw__room_contig's general case. No error is recorded
 * (the caller checked), so lim is the capacity. The usual first block (the
 * pool's first_block: min_first_block, no learning in play) needs no size
 * rule, and its rent is the thread cache's inline pop: 88 instructions
 * from bw_reserve to here and back with the block (callgrind), where the
 * general way (bw__contig_size, bw_pool_shared, bw_pool_rent) took 159. */
static BW__COLD int bw__contig_first(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap, got = 0;
    unsigned char *b = NULL;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    if (n <= bw__pool_first_block(p)) {
        cap = bw__pool_first_block(p);
        b = (unsigned char *)bw__rent_first(p, &got);
    } else {
        rc = bw__contig_size(w, p, n, &cap);
        if (rc != BW_OK) return bw__fail(w, rc);
    }
    if (b == NULL) b = (unsigned char *)bw_pool_rent(p, cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = b;
    w->cap = w->lim = got;
    w->pos = w->base;
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w);
    if (src != NULL) {
        memcpy(b, src, n);
        w->len = n;
    }
    return BW_OK;
}

/* printf's pass two: as bw__printf_grow, and also apart when the output
 * would fill the block growth moves to exactly. */
static int bw__printf_contig(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap;
    int fills = 0;
    if (p != NULL && bw__contig_size(w, p, need, &cap) == BW_OK) {
        if (cap <= bw__pool_threshold(p)) cap = bw_pool_class_size(p, cap);
        fills = cap - (w->len - bw__start(w)) == need;
    }
    return bw__printf_grow(w, need, fmt, ap, fills);
}

/* bw_init's block for an initial capacity, apart: bw_init without one (a
 * small message) is then the stores alone, no stack frame. */
static BW__COLD int bw__init_block(bw_writer *w, size_t initial_capacity)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap, got;
    void *b;
    int rc;

    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    /* With BW_POOL_LEARN_SIZE the larger of it and the learned size. */
    rc = bw__pool_start_size(p, initial_capacity, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    b = bw_pool_rent(p, cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = (unsigned char *)b;
    w->cap = w->lim = got;
    return BW_OK;
}

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

/* A segmented block's size for `want` bytes, link included: the growth
 * rule's, rounded up to BW__SEG_ALIGN. A pool's classes already are; an
 * exact-size rent (BW_POOL_BYPASS, or above the threshold) may not be, and
 * the link at the block's end must be aligned. */
static int bw__seg_size(const bw_pool *p, size_t want, size_t *out)
{
    size_t n;
    int rc = bw__pool_grow(p, 0, want, 0, &n);
    if (rc != BW_OK) return rc;
    if (n > BW__MAX_BLOCK - (BW__SEG_ALIGN - 1)) return BW_EOVERFLOW;
    *out = (n + (BW__SEG_ALIGN - 1)) & ~(size_t)(BW__SEG_ALIGN - 1);
    return BW_OK;
}

/* The size of a segmented writer's next block past the threshold, `want`
 * (2 x the previous one) at most: what the pool's large retention can
 * still keep of the chain (bw__pool_seg_large), given its blocks above the
 * threshold. */
static size_t bw__seg_large(const bw_writer *w, const bw_pool *p, size_t want)
{
    size_t held = 0, count = 0;
    const bw__seg *s = (const bw__seg *)w->m.head;
    if (s == NULL && w->data != NULL) s = bw__tail_seg(w);
    for (; s != NULL; s = s->next) {
        size_t sz = bw__seg_cap(s) + BW__SEG_HDR;
        if (sz > bw__pool_threshold(p)) {
            held += sz;
            count++;
        }
    }
    return bw__pool_seg_large(p, held, count, want);
}

/* Segmented: rent a block after the current one with at least `need` usable
 * bytes: max(class of the need, 2 x the previous block, 4 KiB), past the
 * threshold as bw__seg_large allows. One request, however large: an
 * impossible size is one failed backing call. */
static bw__seg *bw__seg_rent_after(bw_writer *w, size_t need, size_t prev)
{
    bw_pool *p = bw__pool_of(w);
    size_t want, got;
    unsigned char *b;
    bw__seg *s;
    int rc;

    if (p == NULL) {
        bw__fail(w, BW_ENOMEM);
        return NULL;
    }
    if (need > BW__MAX_BLOCK - BW__SEG_HDR) {
        bw__fail(w, BW_EOVERFLOW);
        return NULL;
    }
    want = prev > BW__MAX_BLOCK / 2 ? BW__MAX_BLOCK : 2 * prev;
    if (want < BW__CHAIN_FIRST) want = BW__CHAIN_FIRST;
    if (want < bw__pool_min_first(p)) want = bw__pool_min_first(p);
    if (want > bw__pool_threshold(p)) want = bw__seg_large(w, p, want);
    if (want < need + BW__SEG_HDR) want = need + BW__SEG_HDR;
    rc = bw__seg_size(p, want, &want);
    if (rc != BW_OK) {
        bw__fail(w, rc);
        return NULL;
    }
    b = (unsigned char *)bw_pool_rent(p, want, &got);
    if (b == NULL) {
        bw__fail(w, BW_ENOMEM);
        return NULL;
    }
    s = (bw__seg *)(void *)(b + got - BW__SEG_HDR);
    s->data = b;
    s->next = NULL;
    s->start = s->end = 0;
    return s;
}

static bw__seg *bw__seg_rent(bw_writer *w, size_t need)
{
    return bw__seg_rent_after(w, need, w->data != NULL ? w->cap + BW__SEG_HDR : 0);
}

/* Make s the last block. The old last block stays where it is (its rest
 * is skipped); an old block that is the only one and holds nothing is
 * unlinked and returned, for the caller to give back (bw__seg_return). */
static bw__seg *bw__seg_link(bw_writer *w, bw__seg *s)
{
    bw__seg *gone = NULL;
    if (w->data != NULL) {
        bw__seg *old = bw__tail_seg(w);
        if (w->m.head == NULL && w->len == bw__start(w)) {
            gone = old;
        } else {
            /* The range: [start, len) as the only block, else [0, len); the
             * link's start may be stale from an earlier life of the block. */
            old->end = w->len;
            old->start = w->m.head == NULL ? bw__start(w) : 0;
            if (w->m.head == NULL) w->m.head = old;
            old->next = s;
        }
    }
    w->pos += w->len;
    w->data = s->data;
    w->cap = bw__seg_cap(s);
    w->len = 0;
    bw__set_lim(w);
    return gone;
}

static BW__COLD int bw__room_chain(bw_writer *w, size_t n, const void *src)
{
    size_t first = 0;
    bw__seg *s, *gone;
    /* A write fills the rest of the last block first; room (src NULL) must
     * be contiguous and skips it. */
    if (src != NULL && w->data != NULL) first = w->cap - w->len;
    s = bw__seg_rent(w, n - first);
    if (s == NULL) return w->err;
    if (first != 0) {
        memcpy(w->data + w->len, src, first);
        w->len += first;
    }
    gone = bw__seg_link(w, s); /* it held nothing, so src is not in it */
    if (gone != NULL) bw__seg_return(w, gone);
    if (src != NULL) {
        memcpy(w->data, (const unsigned char *)src + first, n - first);
        w->len = n - first;
    }
    return BW_OK;
}

/* Walk: block by block; a writer with one block is walked as one. */
static int bw__chain_piece(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    const bw__seg *s;
    if (w->m.head == NULL) return bw__block_piece(w, c, p, n);
    s = c->started ? c->seg->next : (const bw__seg *)w->m.head;
    c->started = 1;
    if (s == NULL) return 0;
    c->seg = s;
    if (s == bw__tail_seg(w)) {
        *p = s->data;
        *n = w->len;
    } else {
        *p = bw__seg_bytes(s) + s->start;
        *n = s->end - s->start;
    }
    return 1;
}

/* Drop from the front: the blocks (and references) wholly dropped go back;
 * the first kept one starts later. base has moved already. */
static void bw__chain_drop_front(bw_writer *w, size_t n)
{
    bw__seg *s = (bw__seg *)w->m.head, *tail;
    if (s == NULL) return; /* one block, or none (no tail to find) */
    tail = bw__tail_seg(w);
    while (s != tail) {
        size_t held = s->end - s->start;
        if (n < held) {
            s->start += n;
            return;
        }
        n -= held;
        w->m.head = s->next;
        bw__seg_return(w, s);
        s = (bw__seg *)w->m.head;
    }
    w->m.head = NULL; /* the last block is the only one now */
}

/* Room that keeps the held bytes where they are: a new block linked after
 * the last (bw__room_keep). */
static int bw__chain_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw__seg *s = bw__seg_rent(w, n), *gone;
    if (s == NULL) return w->err;
    gone = bw__seg_link(w, s);
    if (gone != NULL) { /* held nothing, but bw_cstr's "" may be in it */
        *old = gone->data;
        *old_cap = bw__seg_cap(gone) + BW__SEG_HDR;
    }
    return BW_OK;
}

/* Reset: every block and reference goes back. */
static void bw__chain_drop_storage(bw_writer *w)
{
    if (w->data != NULL) {
        bw__seg_drop_all_but_tail(w);
        bw__seg_return(w, bw__tail_seg(w));
    }
    w->data = NULL;
    w->cap = 0;
    w->m.head = NULL;
}

/* Make contiguous: the blocks are copied into one new block, with extra
 * free bytes after them (one block with the room already: as it is). */
static unsigned char *bw__chain_contiguous(bw_writer *w, size_t extra)
{
    size_t held = bw_len(w);
    bw_pool *p = bw__pool_of(w);
    bw__cursor c = {NULL, 0};
    const unsigned char *src;
    size_t want, got, k, off = 0;
    unsigned char *b;
    bw__seg *s;
    int rc;
    if (w->m.head == NULL && w->cap - w->len >= extra) return w->data + bw__start(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM), NULL;
    rc = bw__seg_size(p, held + extra + BW__SEG_HDR, &want);
    if (rc != BW_OK) return bw__fail(w, rc), NULL;
    b = (unsigned char *)bw_pool_rent(p, want, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM), NULL;
    while (bw__piece(w, &c, &src, &k)) {
        if (k != 0) memcpy(b + off, src, k);
        off += k;
    }
    bw__seg_drop_all_but_tail(w);
    bw__seg_return(w, bw__tail_seg(w));
    s = (bw__seg *)(void *)(b + got - BW__SEG_HDR);
    s->data = b;
    s->next = NULL;
    s->start = s->end = 0;
    w->data = b;
    w->cap = got - BW__SEG_HDR;
    w->pos = w->base;
    w->len = held;
    bw__set_lim(w);
    return b;
}

/* Overlaps: any of the blocks, and any reference's bytes. */
static int bw__chain_overlaps(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, b = a + n;
    const bw__seg *s;
    if (w->data == NULL || n == 0) return 0;
    if (bw__in_block(w, p, n)) return 1;
    for (s = (const bw__seg *)w->m.head; s != NULL; s = s->next) {
        const bw__ref *r = (const bw__ref *)(const void *)s;
        uintptr_t lo = s->data != NULL ? (uintptr_t)s->data : (uintptr_t)r->bytes;
        uintptr_t hi = s->data != NULL ? (uintptr_t)s : lo + r->n;
        if (b > lo && a < hi) return 1;
    }
    return 0;
}

/* Block size: the one block's, its link included; 0 with more than one. */
static size_t bw__chain_block_size(const bw_writer *w)
{
    return w->m.head == NULL ? w->cap + BW__SEG_HDR : 0;
}

/* Own (before a patch): a patch never writes the caller's memory, so each
 * reference among the n held bytes at pos first becomes a block of its own (a copy; its done is
 * called then). On failure the error is recorded; the held bytes are the
 * same either way. */
static int bw__chain_own(bw_writer *w, uint64_t pos, size_t n)
{
    bw__seg *prev = NULL, *s, *tail = bw__tail_seg(w);
    uint64_t at = w->base;
    if (w->m.head == NULL || pos >= w->pos) return BW_OK; /* the last block's */
    for (s = (bw__seg *)w->m.head; s != NULL && s != tail && at < pos + n; prev = s, s = s->next) {
        size_t held = s->end - s->start, want, got;
        unsigned char *b;
        bw__seg *ns;
        int rc;
        if (s->data == NULL && pos < at + held) {
            rc = bw__seg_size(w->pool, held + BW__SEG_HDR, &want);
            if (rc != BW_OK) return bw__fail(w, rc);
            b = (unsigned char *)bw_pool_rent(w->pool, want, &got);
            if (b == NULL) return bw__fail(w, BW_ENOMEM);
            memcpy(b, bw__seg_bytes(s) + s->start, held);
            ns = (bw__seg *)(void *)(b + got - BW__SEG_HDR);
            ns->data = b;
            ns->start = 0;
            ns->end = held;
            ns->next = s->next;
            if (prev != NULL) prev->next = ns;
            else w->m.head = ns;
            bw__seg_return(w, s);
            s = ns;
        }
        at += held;
    }
    return BW_OK;
}

/* Cut: within the last block as any block; in an earlier one, that block
 * becomes the last one (a reference stays linked, before the emptied last
 * block), and every piece after it goes back. */
static void bw__chain_cut(bw_writer *w, uint64_t pos)
{
    bw__seg *s, *keep = NULL;
    uint64_t at;
    if (pos >= w->pos) {
        bw__block_cut(w, pos);
        return;
    }
    at = w->base;
    for (s = (bw__seg *)w->m.head; s != NULL; s = s->next) {
        size_t held = s->end - s->start;
        if (pos <= at + held) {
            keep = s;
            break;
        }
        at += held;
    }
    BW__ASSUME(keep != NULL); /* base <= pos < w->pos: a piece before the last holds it */
    s = keep->next;
    if (keep->data == NULL) {
        /* A reference takes no writes: its kept part stays linked, and the
         * last block, emptied, follows it (nothing to rent). */
        bw__seg *tail = bw__tail_seg(w);
        size_t cut = (size_t)(pos - at);
        while (s != tail) {
            bw__seg *next = s->next;
            bw__seg_return(w, s);
            s = next;
        }
        keep->next = tail;
        keep->end = keep->start + cut;
        w->pos = pos;
        w->len = 0;
        if (cut == 0) bw__seg_drop_all_but_tail(w); /* the first piece: all dropped */
        bw__set_lim(w);
        return;
    }
    while (s != NULL) {
        bw__seg *next = s->next;
        bw__seg_return(w, s);
        s = next;
    }
    keep->next = NULL;
    if (keep == w->m.head) w->m.head = NULL;
    w->data = keep->data;
    w->cap = bw__seg_cap(keep);
    w->pos = at - keep->start;
    w->len = keep->start + (size_t)(pos - at);
    bw__set_lim(w);
}

/* Link: a reference, unless it is empty or lies in the writer's own blocks
 * (which a link would outlive: consume gives blocks back); those are
 * copied. */
static int bw__chain_link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    bw_pool *p;
    bw__ref *r;
    bw__seg *fresh = NULL, *tail;
    size_t rcap, held;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (n == 0 || bw__chain_overlaps(w, data, n)) return bw__link_copy(w, data, n, done, ctx);
    p = bw__pool_of(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    r = (bw__ref *)bw_pool_rent(p, sizeof *r, &rcap);
    if (r == NULL) return bw__fail(w, BW_ENOMEM);
    held = w->data == NULL ? 0 : w->m.head == NULL ? w->len - bw__start(w) : w->len;
    if (w->data == NULL || held != 0) {
        /* Writes after the reference need a block after it: a first-size
         * one, not the doubling of the last (references interleave with
         * small writes). */
        fresh = bw__seg_rent_after(w, 0, 0);
        if (fresh == NULL) {
            (void)bw_pool_return(p, r, rcap);
            return w->err;
        }
    }
    r->seg.data = NULL;
    r->seg.start = 0;
    r->seg.end = n;
    r->bytes = (const unsigned char *)data;
    r->n = n;
    r->done = done;
    r->ctx = ctx;
    r->cap = rcap;
    if (w->data == NULL) { /* no storage yet */
        w->m.head = &r->seg;
    } else {
        tail = bw__tail_seg(w);
        if (held != 0) { /* the last block is closed where it ends */
            tail->end = w->len;
            tail->start = w->m.head == NULL ? bw__start(w) : 0;
            if (w->m.head == NULL) w->m.head = tail;
            tail->next = &r->seg;
        } else if (w->m.head == NULL) { /* empty, the only block: after it */
            w->m.head = &r->seg;
            fresh = tail;
        } else { /* empty last block: the reference goes before it */
            bw__seg *prev = (bw__seg *)w->m.head;
            while (prev->next != tail) prev = prev->next;
            prev->next = &r->seg;
            fresh = tail;
        }
    }
    r->seg.next = fresh;
    w->pos += w->len + n;
    w->data = fresh->data;
    w->cap = bw__seg_cap(fresh);
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* Between two segmented writers of one pool: src's blocks and references
 * follow dst's held bytes, src's last block becomes dst's; nothing is
 * copied (but a partly consumed single block's bytes, moved down to its
 * start as the last block's range needs), nothing rented. */
static void bw__relink(bw_writer *dst, bw_writer *src)
{
    bw__seg *first, *last = NULL;
    uint64_t at = bw_tell(dst);
    if (src->m.head == NULL) bw__move_down(src, NULL);
    first = src->m.head != NULL ? (bw__seg *)src->m.head : bw__tail_seg(src);
    if (dst->data != NULL) {
        bw__seg *t = bw__tail_seg(dst);
        if (bw_len(dst) == 0) { /* nothing held: dst's storage goes */
            bw__seg_drop_all_but_tail(dst);
            bw__seg_return(dst, t);
        } else if (dst->m.head != NULL && dst->len == 0) { /* empty last block */
            for (last = (bw__seg *)dst->m.head; last->next != t; last = last->next) {}
            bw__seg_return(dst, t);
        } else {
            t->end = dst->len;
            t->start = dst->m.head == NULL ? bw__start(dst) : 0;
            if (dst->m.head == NULL) dst->m.head = t;
            last = t;
        }
    }
    if (last != NULL) last->next = first;
    else dst->m.head = src->m.head;
    dst->pool = bw__pool_of(src);
    dst->data = src->data;
    dst->cap = src->cap;
    dst->len = src->len;
    dst->pos = at + (src->pos - src->base);
    dst->flags &= (unsigned char)~BW__CSTR;
    bw__set_lim(dst);
    src->pos = src->base = bw_tell(src);
    src->data = NULL;
    src->cap = src->len = 0;
    src->m.head = NULL;
    src->flags &= (unsigned char)~BW__CSTR;
    bw__set_lim(src);
}

/* Take (bw_move): src's pieces relinked when it is segmented too, with a
 * block, and of the same pool; 0 when they must be copied. */
static int bw__chain_take(bw_writer *dst, bw_writer *src)
{
    if (src->mode != BW__CHAIN || src->data == NULL || bw_writer_pool(dst) != bw_writer_pool(src))
        return 0;
    bw__relink(dst, src);
    return 1;
}

int bw_init_chain(bw_writer *w, bw_pool *pool)
{
    if (bw__init_mode(w, pool, BW__CHAIN) != BW_OK) return BW_EINVAL;
    w->m.head = NULL;
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
/* The dispatcher: the one place that maps the mode to its hooks            */
/* ------------------------------------------------------------------------ */
/* The hooks and their contracts are listed in writer_internal.h, with the
 * traits. Each switch names every mode and has no default, so that -Wswitch
 * (in -Wall) names each one a new mode must add its case to; the statement
 * after a switch is never reached. A new mode adds its section above, its
 * traits, and its cases here; no code outside the sections and this one
 * reads the mode. */

/* Compares, not a switch: gcc turns a switch into a table load, where this
 * folds to one compare for a single trait (bw_release's). */
BW__INTERNAL unsigned bw__traits(const bw_writer *w)
{
    if (w->mode == BW__CONTIG) return BW__GROWS;
    if (w->mode == BW__CHAIN) return BW__LINKS;
    if (w->mode == BW__STREAM) return BW__SENDS | BW__BOUNDED;
    return BW__NO_POOL | BW__BOUNDED; /* fixed */
}

BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src)
{
    /* Tests before the switch, in the order of what is most common: a
     * small message's first write (bw__contig_first) is one compare away. */
    if (w->mode == BW__FIXED) return bw__room_fixed(w, n, src);
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (w->data == NULL && w->mode == BW__CONTIG) return bw__contig_first(w, n, src);
    switch (bw__mode_of(w)) {
    case BW__M_CONTIG: return bw__room_contig(w, n, src);
    case BW__M_CHAIN:  return bw__room_chain(w, n, src);
    case BW__M_STREAM: return bw__room_stream(w, n, src);
    case BW__M_FIXED:  break; /* above */
    }
    return bw__room_fixed(w, n, src);
}

/* Room for n contiguous bytes at data + len that leaves every byte the held
 * bytes are in where it is and as it is, so that a source among them (a
 * printf argument, the rest of a FILE's write) stays readable until the
 * caller gives *old back (bw_pool_return with *old_cap; NULL for nothing).
 * Contiguous: a new block; segmented: a new block linked after the last.
 * Not for streaming and fixed writers, which have nowhere else to go. */
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    *old = NULL;
    *old_cap = 0;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    switch (bw__mode_of(w)) {
    case BW__M_CONTIG: return bw__contig_move(w, n, old, old_cap);
    case BW__M_CHAIN:  return bw__chain_room_keep(w, n, old, old_cap);
    case BW__M_STREAM:
    case BW__M_FIXED:  break;
    }
    return bw__fail(w, BW_EINVAL);
}

BW__INTERNAL int bw__send(bw_writer *w)
{
    switch (bw__mode_of(w)) {
    case BW__M_STREAM: return bw__stream_send(w);
    case BW__M_CONTIG:
    case BW__M_CHAIN:
    case BW__M_FIXED:  break; /* they keep their bytes */
    }
    return BW_OK;
}

BW__INTERNAL void bw__drop_storage(bw_writer *w)
{
    switch (bw__mode_of(w)) {
    case BW__M_CONTIG:
    case BW__M_STREAM: bw__block_drop_storage(w); break;
    case BW__M_CHAIN:  bw__chain_drop_storage(w); break;
    case BW__M_FIXED:  break; /* the caller's buffer stays */
    }
}

BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra)
{
    switch (bw__mode_of(w)) {
    case BW__M_CONTIG:
    case BW__M_FIXED:  return bw__block_contiguous(w, extra);
    case BW__M_CHAIN:  return bw__chain_contiguous(w, extra);
    case BW__M_STREAM: return bw__stream_contiguous(w, extra);
    }
    return NULL;
}

BW__INTERNAL int bw__piece(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    if (w->data == NULL) return 0;
    switch (bw__mode_of(w)) {
    case BW__M_CHAIN:  return bw__chain_piece(w, c, p, n);
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break;
    }
    return bw__block_piece(w, c, p, n);
}

BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n)
{
    w->base += n;
    switch (bw__mode_of(w)) {
    case BW__M_CHAIN:  bw__chain_drop_front(w, n); break;
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break; /* one block: base alone says where bytes start */
    }
    if (w->base == bw_tell(w)) { /* all gone: start over at the beginning */
        w->pos = w->base;
        w->len = 0;
        bw__set_lim(w);
    }
}

BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n)
{
    switch (bw__mode_of(w)) {
    case BW__M_CHAIN:  return bw__chain_overlaps(w, p, n);
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break;
    }
    return bw__in_block(w, p, n);
}

BW__INTERNAL int bw__printf_rest(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    switch (bw__mode_of(w)) {
    case BW__M_CONTIG: return bw__printf_contig(w, need, fmt, ap);
    case BW__M_CHAIN:  return bw__printf_grow(w, need, fmt, ap, 0);
    case BW__M_STREAM: return bw__printf_stream(w, need, fmt, ap);
    case BW__M_FIXED:  return bw__printf_fixed(w, need, fmt, ap);
    }
    return bw__fail(w, BW_EINVAL);
}

BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n)
{
    switch (bw__mode_of(w)) {
    case BW__M_STREAM: return n <= w->m.s.size;
    case BW__M_CONTIG:
    case BW__M_CHAIN:
    case BW__M_FIXED:  break;
    }
    return 1;
}

BW__INTERNAL size_t bw__block_size(const bw_writer *w)
{
    if (w->data == NULL || (w->flags & BW__EXTERNAL)) return 0;
    switch (bw__mode_of(w)) {
    case BW__M_CONTIG:
    case BW__M_STREAM: return w->cap;
    case BW__M_CHAIN:  return bw__chain_block_size(w);
    case BW__M_FIXED:  break; /* the caller's */
    }
    return 0;
}

BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos)
{
    switch (bw__mode_of(w)) {
    case BW__M_CHAIN:  bw__chain_cut(w, pos); return;
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break;
    }
    bw__block_cut(w, pos);
}

BW__INTERNAL int bw__own(bw_writer *w, uint64_t pos, size_t n)
{
    switch (bw__mode_of(w)) {
    case BW__M_CHAIN:  return bw__chain_own(w, pos, n);
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break; /* one block, the writer's own */
    }
    return BW_OK;
}

BW__INTERNAL int bw__link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    switch (bw__mode_of(w)) {
    case BW__M_CHAIN:  return bw__chain_link(w, data, n, done, ctx);
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break;
    }
    return bw__link_copy(w, data, n, done, ctx);
}

BW__INTERNAL int bw__take(bw_writer *dst, bw_writer *src)
{
    switch (bw__mode_of(dst)) {
    case BW__M_CHAIN:  return bw__chain_take(dst, src);
    case BW__M_CONTIG:
    case BW__M_STREAM:
    case BW__M_FIXED:  break;
    }
    return 0;
}

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

/* A writer that grows by moving (contiguous: every small message) has its
 * own way through: its one block and the first line are all it has, the
 * job's length teaches the pool only past bw__pool_learns (one compare), the
 * block goes back by the thread cache's inline push, and the fields it
 * uses are emptied, with no call. Other modes take bw__release_rest. */
void bw_release(bw_writer *w)
{
    bw_pool *p;
    unsigned char *b;
    size_t cap, len;
    if (w == NULL) return;
    p = w->pool;
    if (!(bw__traits(w) & BW__GROWS)) {
        bw__release_rest(w);
        return;
    }
    /* Emptied first: stores through the block may alias w. */
    b = w->flags & BW__EXTERNAL ? NULL : w->data;
    cap = w->cap;
    len = bw_len(w);
    w->data = NULL;
    w->cap = 0;
    bw__reset(w);
    if (BW__UNLIKELY(p != NULL && bw__pool_learns(p, len))) bw__learn_record(p, len);
    /* A block implies its pool (the rent set it). */
    if (b != NULL && !bw__return_fast(p, b, cap)) (void)bw_pool_return(p, b, cap);
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

/* Find the held byte at position pos (base <= pos < tell): its block and its
 * offset there. For a one-block writer the block is data. */
static unsigned char *bw__at(const bw_writer *w, uint64_t pos, size_t *room)
{
    bw__cursor c = {NULL, 0};
    const unsigned char *p;
    size_t n;
    uint64_t at = w->base;
    while (bw__piece(w, &c, &p, &n)) {
        if (pos < at + n) {
            *room = n - (size_t)(pos - at);
            return (unsigned char *)(uintptr_t)(p + (pos - at));
        }
        at += n;
    }
    *room = 0;
    return NULL;
}

int bw_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    unsigned char buf[64];
    const unsigned char *in = (const unsigned char *)src;
    void *tmp = NULL;
    size_t tmp_cap = 0;
    uint64_t tell;
    int rc;

    /* Allowed while an error is recorded (as truncate): the held bytes are
     * intact after any failure, so a frame can be fixed or rolled back
     * before the error is dealt with. */
    if (w == NULL) return BW_EINVAL;
    if (n == 0) return BW_OK;
    tell = bw_tell(w);
    if (src == NULL || pos < w->base || pos > tell || n > tell - pos) return bw__fail(w, BW_EINVAL);
    /* A failure below returns its own code, not w->err: with an error
     * already recorded that would hide it (the first error stays). */
    if ((bw__traits(w) & BW__LINKS) && bw__overlaps(w, src, n)) {
        /* A source among linked pieces is copied first: a patch spanning
         * pieces could overwrite it before it is read, and own gives a
         * reference back (its bytes may be gone) before the patch reads.
         * One block needs no copy: memmove handles the overlap. */
        in = (const unsigned char *)bw__stable_copy(w, src, n, buf, sizeof buf, &tmp, &tmp_cap);
        if (in == NULL) return BW_ENOMEM;
    }
    rc = bw__own(w, pos, n);
    if (rc != BW_OK) {
        if (tmp != NULL) (void)bw_pool_return(w->pool, tmp, tmp_cap);
        return rc;
    }
    while (n > 0) {
        size_t room, k;
        unsigned char *d = bw__at(w, pos, &room);
        k = n < room ? n : room;
        memmove(d, in, k);
        in += k;
        pos += k;
        n -= k;
    }
    if (tmp != NULL) (void)bw_pool_return(w->pool, tmp, tmp_cap);
    return BW_OK;
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
    bw__cursor c = {NULL, 0};
    const unsigned char *p, *one = NULL;
    size_t n;
    if (w == NULL || w->data == NULL) return NULL;
    while (bw__piece(w, &c, &p, &n)) {
        if (n == 0) continue;
        if (one != NULL) return NULL;
        one = p;
    }
    return one != NULL ? one : w->data + w->len;
}

size_t bw_iovec(const bw_writer *w, struct iovec *iov, size_t max)
{
    bw__cursor c = {NULL, 0};
    const unsigned char *p;
    size_t n, k = 0;
    if (w == NULL) return 0;
    while (bw__piece(w, &c, &p, &n)) {
        if (n == 0) continue;
        if (k < max && iov != NULL) {
            iov[k].iov_base = (void *)(uintptr_t)p;
            iov[k].iov_len = n;
        }
        k++;
    }
    return k;
}

int bw_copy_out(const bw_writer *w, size_t offset, void *dst, size_t n)
{
    bw__cursor c = {NULL, 0};
    const unsigned char *p;
    unsigned char *out = (unsigned char *)dst;
    size_t k, len;
    if (w == NULL) return BW_EINVAL;
    len = bw_len(w);
    if (offset > len || n > len - offset) return BW_EINVAL;
    if (n == 0) return BW_OK;
    if (dst == NULL) return BW_EINVAL;
    while (n > 0 && bw__piece(w, &c, &p, &k)) {
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
    d = bw_data(w); /* already in one block: no copy */
    if (d != NULL || w->data == NULL) return d;
    return bw__contiguous(w, 0);
}

const char *bw_cstr(bw_writer *w)
{
    unsigned char *p;
    if (w == NULL || w->err != BW_OK) return NULL;
    if (w->data == NULL) return "";
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
    bw__cursor c = {NULL, 0};
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
    while (bw__piece(src, &c, &p, &n)) {
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
    if (w->data != NULL) {
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
    w->data = NULL;
    w->cap = 0;
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
        /* One block of the pool's: handed over as it is when it is
         * malloc's memory with room for the NUL (a segmented block's link
         * after the bytes is room too). */
        if (l < cap && bw__pool_hand_off(w->pool, w->data, cap)) {
            bw__move_down(w, NULL);
            b = w->data;
            b[l] = 0;
            w->data = NULL;
            w->cap = 0;
            goto done;
        }
    }
    b = (unsigned char *)malloc(l + 1);
    if (b == NULL) {
        bw__fail(w, BW_ENOMEM);
        return NULL;
    }
    (void)bw_copy_out(w, 0, b, l);
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
    if (bw__take(dst, src)) return BW_OK;
    rc = bw_append_writer(dst, src);
    if (rc == BW_OK) bw__drop_front(src, len);
    return rc;
}
