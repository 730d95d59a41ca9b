/* SPDX-License-Identifier: MIT */
/* bufwriter.c - the writer's public calls, written once for every mode:
 * the sticky error, release and clear, reserve and spans, printf's first
 * pass, positions, reading out, detach,
 * append and move; and the dispatcher, the mode table (bw__modes) that
 * maps w->mode to the mode's operations (bw__mode_ops, writer_internal.h).
 * Each mode is a file of its own that owns its storage, its inits, its
 * operations and its table: mode_contig.c, mode_seg.c, mode_stream.c,
 * mode_fixed.c, with what the one-block modes share in mode_block.c. The
 * fast paths are static inline in bufwriter.h and know no mode (but
 * bw_data's, which tells a segmented writer from the rest). */
#include "writer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* printf formats short output here when the free space is smaller. */
#define BW__PRINTF_STACK 256

/* The writer's layout on 64-bit (bufwriter.h): data, len, lim, cap, pos,
 * base, pool, mode, flags and err, the fast path and all a contiguous or
 * fixed writer's init and release touch, in the first 64 bytes, one cache
 * line when the writer is 64-byte aligned; the mode's part after them.
 * 120 bytes in all with syserr and the size limit after the mode's part
 * (the segmented part, 40 bytes with its open piece's start, the largest). */
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
typedef char bw__writer_size[sizeof(bw_writer) <= 120 ? 1 : -1];
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
    case BW_ENONFINITE: return "not a finite number (no JSON text for NaN or infinity)";
    default:           return "unknown bufwriter status";
    }
}

const char *bw_version(void) { return BW_VERSION_STRING; }

/* ------------------------------------------------------------------------ */
/* State helpers                                                            */
/* ------------------------------------------------------------------------ */

/* Their contracts are in writer_internal.h. */
BW__INTERNAL void bw__set_lim(bw_writer *w)
{
    w->lim = w->err != BW_OK ? w->len : w->cap;
    if (BW__UNLIKELY(w->flags & BW__LIMITED) && w->err == BW_OK) bw__clamp_lim(w);
}

BW__INTERNAL int bw__put(bw_writer *w, const void *src, size_t n)
{
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len >= n) {
        if (n != 0) memcpy(w->data + w->len, src, n);
        w->len += n;
        return BW_OK;
    }
    return bw__room(w, n, src);
}

/* Record the first error; later writes miss the fast path. Out of line:
 * inlined, its store to flags made gcc load the flags into a register
 * ahead of the callers' own tests of them (bw_append_ref: one instruction
 * more a record). */
BW__INTERNAL BW__COLD int bw__fail(bw_writer *w, int rc)
{
    if (w->err == BW_OK) {
        w->err = rc;
        w->flags |= BW__FAILED;
        /* Kept with it: errno is overwritten long before the one check at
         * the end of a run (bw_errno). */
        w->syserr = rc == BW_EIO ? errno : 0;
    }
    w->lim = w->len;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The mode table: the one place that maps the mode to its operations       */
/* ------------------------------------------------------------------------ */
/* One table per mode, in its file; this array, indexed by the mode, is the
 * only code that reads it (but the inline fast paths' tests, bw__is_contig
 * in writer_internal.h and bw__contig_without in bufwriter.h, and the
 * inits). A new mode, whose constant is the
 * last, adds its file with its table and its entry here; the size check
 * below fails until the entry is there, and a table with a missing
 * operation fails -Wmissing-field-initializers (-Wextra). */
static const bw__mode_ops *const bw__modes[] = {
    [BW__CONTIG] = &bw__contig_ops,
    [BW__SEG] = &bw__seg_ops,
    [BW__STREAM] = &bw__stream_ops,
    [BW__FIXED] = &bw__fixed_ops,
};
typedef char bw__every_mode_has_a_table[sizeof bw__modes / sizeof bw__modes[0] == BW__NMODES
                                            ? 1 : -1];

static const bw__mode_ops *bw__ops(const bw_writer *w) { return bw__modes[w->mode]; }

BW__INTERNAL unsigned bw__traits(const bw_writer *w) { return bw__ops(w)->traits; }

BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src)
{
    /* A small message's first write (bw__contig_first_in) is one compare
     * away: the mode's own test, before the table. */
    if (bw__first_write(w, n))
        return BW__UNLIKELY(w->flags & BW__LIMITED) ? bw__contig_first_slow(w, n, src)
                                                    : bw__contig_first_in(w, n, src);
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



/* bw_release of the modes that do not grow by moving (segmented, streaming,
 * fixed): none of them teaches the pool, so bw__job_done is not needed. */
static BW__COLD void bw__release_rest(bw_writer *w)
{
    bw__drop_storage(w);
    bw__reset(w);
}


/* A contiguous writer's release is the one inline fast path: no table, no
 * call for a small message. One 16-bit test finds it contiguous with none
 * of the flags a reset clears, so with no error recorded either: then its
 * block goes back by the thread cache's inline push (bw__return_first,
 * whose compare of cap also says whether there is a block) and data
 * through base are all there is to empty. A contiguous writer with a flag
 * set (a caller's buffer, a window, an error, bw_cstr's NUL) takes
 * bw__contig_release_rest (writer_internal.h); other modes give their
 * storage back through the table (bw__release_rest). */
void bw_release(bw_writer *w)
{
    if (w == NULL) return;
    if (BW__LIKELY(bw__contig_without(w, BW__RESET_FLAGS))) {
        if (bw__return_first(w->pool, w->data, w->cap)) memset(w, 0, offsetof(bw_writer, pool));
        else bw__contig_release_rest(w, w->data);
        return;
    }
    if (!bw__is_contig(w)) {
        bw__release_rest(w);
        return;
    }
    bw__contig_release_rest(w, w->flags & BW__EXTERNAL ? NULL : w->data);
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
    w->flags &= (unsigned char)~(BW__FD_ERRNO | BW__FAILED);
    bw__set_lim(w);
}

void bw_clear_error(bw_writer *w)
{
    if (w == NULL) return;
    w->err = BW_OK;
    w->flags &= (unsigned char)~(BW__FD_ERRNO | BW__FAILED);
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
    return bw__ops(w)->send(w);
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
    /* A small message's first put: no storage, contiguous, no size limit
     * and no error (mode and flags in one 16-bit test); n's range is
     * checked on its slow way. */
    if (w->data == NULL && bw__contig_without(w, BW__LIMITED | BW__FAILED))
        return bw__contig_first_in(w, n, NULL);
    if (w->err != BW_OK) return w->err;
    if (w->data == NULL && bw__is_contig(w)) return bw__contig_first_slow(w, n, NULL);
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
 * A writer with no pool never allocates, and its room moves the held bytes
 * down in place, a source among them with them: they move down now, and
 * the source where it went is the copy. NULL with the error recorded. */
BW__INTERNAL const void *bw__stable_copy(bw_writer *w, const void *src, size_t n, void *buf,
                                         size_t nbuf, void **tmp, size_t *tmp_cap)
{
    void *to = buf;
    *tmp = NULL;
    if (bw__traits(w) & BW__NO_POOL) {
        const void *at = src != NULL ? src : w->data + bw__start(w);
        bw__move_down(w, &at);
        return at;
    }
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
    return bw__ops(w)->printf_rest(w, need, fmt, ap);
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
    return bw__ops(w)->patch(w, pos, src, n);
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
    bw__cursor c = {0, 0, NULL};
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
    bw__cursor c = {0, 0, NULL};
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
    bw__cursor c = {0, 0, NULL};
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
    bw__cursor c = {0, 0, NULL};
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
    if (dst == src) {
        /* A second copy of itself: made stable first (writing may move,
         * link or send what is being read). */
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
        if (!bw__ops(w)->hand_out(w, &b, &c)) return NULL;
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

/* bw_detach_malloc's inline copy (bufwriter.h) takes a block of at most
 * the pool's first field's capacity, which holds at most that many bytes:
 * a text bw__pool_copies would copy too, so the two agree. The inline
 * copy's release, and every case it does not take, are these two. */
_Static_assert(offsetof(struct bw_pool, detach_copy_cap) == 0,
               "bw__pool_copy_cap reads a pool's first field");
_Static_assert(offsetof(bw_writer, flags) == offsetof(bw_writer, mode) + 1,
               "bw__contig_without loads mode and flags at once");
_Static_assert(BW__DETACH_COPY_MAX + 1 == BW__HAND_OFF_COPY_MAX,
               "bw_detach_malloc's inline copy and bw__pool_copies agree on the length");
_Static_assert((BW__RESET_FLAGS & ~BW__ALL_BUT_LIMITED) == 0,
               "bw_detach_malloc's inline test finds none of the flags a release clears");
/* Any other block (1 KiB to 64 KiB texts): bw__contig_release_rest for
 * what the inline test found, a block of cap bytes (no reservation), no
 * flag to clear and pos at base, so the length is len. Out of line, so the
 * usual case below keeps no register for bw__contig_release_block's
 * arguments (inline, that cost it a move of w). */
static BW__COLD void bw__detach_malloc_release_rest(bw_writer *w)
{
    bw_pool *p = w->pool;
    unsigned char *b = w->data;
    size_t cap = w->cap, len = w->len;
    memset(w, 0, offsetof(bw_writer, pool));
    bw__contig_release_block(p, b, cap, cap, len);
}

/* The inline test found a pooled block and none of the flags a release
 * clears, so no error either: as bw_release's first test, the block goes
 * back and data through base are all there is to empty. */
void bw__detach_malloc_release(bw_writer *w)
{
    BW__ASSUME(w->data != NULL); /* and not a caller's buffer: the inline test */
    if (bw__return_first(w->pool, w->data, w->cap)) memset(w, 0, offsetof(bw_writer, pool));
    else bw__detach_malloc_release_rest(w);
}

void *bw__detach_malloc_slow(bw_writer *w, size_t *len)
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
        if (l < cap && !bw__pool_copies(w->pool, cap, l + 1) &&
            bw__pool_hand_off(w->pool, w->data, cap, l + 1)) {
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
    /* the size limit's flag tested before its sum: 17 instructions to
     * the link were 15 (objdump), for a call made once a record */
    if (BW__UNLIKELY(data == NULL) && n != 0) return bw__fail(w, BW_EINVAL);
    if (BW__UNLIKELY(w->flags & BW__LIMITED) && bw__over(w, n)) return bw__fail(w, BW_ELIMIT);
    return bw__ops(w)->link(w, data, n, done, ctx);
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
    rc = bw__ops(dst)->take(dst, src);
    if (rc != 0) return rc > 0 ? BW_OK : rc;
    rc = bw_append_writer(dst, src);
    if (rc == BW_OK) bw__drop_front(src, len);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Padding                                                                  */
/* ------------------------------------------------------------------------ */

/* Zeros up to the next multiple of align (Arrow's 8-byte buffers, a page
 * for what is mapped). Up to 64 bytes is one write. A longer pad makes its
 * room first, so that no write after it can fail (a fixed writer short of
 * room takes none of it, a streaming one sends before, never in the middle);
 * a segmented writer is not asked to, since bw_reserve would skip the rest
 * of its block: there a failed link (BW_ENOMEM, nothing sent) is undone. */
int bw_pad(bw_writer *w, size_t align)
{
    static const unsigned char zeros[64];
    uint64_t start;
    size_t pad, n;
    int rc = BW_OK;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (align == 0 || (align & (align - 1)) != 0 || align > BW_PAD_MAX)
        return bw__fail(w, BW_EINVAL);
    start = bw_tell(w);
    pad = (size_t)((0 - start) & (uint64_t)(align - 1));
    if (pad <= sizeof zeros) return bw_write(w, zeros, pad);
    if (BW__UNLIKELY(bw__over(w, pad))) return bw__fail(w, BW_ELIMIT);
    if (!(bw__traits(w) & BW__LINKS)) rc = bw_reserve(w, pad);
    for (; rc == BW_OK && pad > 0; pad -= n) {
        n = pad < sizeof zeros ? pad : sizeof zeros;
        rc = bw_write(w, zeros, n);
    }
    if (rc != BW_OK && start >= w->base) (void)bw_truncate(w, start);
    return rc;
}
