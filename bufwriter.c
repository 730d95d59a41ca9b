/* bufwriter.c - the writer's out-of-line paths: growth, the sticky error,
 * spans, printf, detach. The fast paths are static inline in bufwriter.h. */
#include "bufwriter.h"
#include "pool/pool_internal.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
#  define BW__COLD __attribute__((cold, noinline))
#else
#  define BW__COLD
#endif

/* The largest block the writer asks for: sizes past PTRDIFF_MAX break
 * pointer differences, so they count as unrepresentable. */
#define BW__MAX_BLOCK ((size_t)PTRDIFF_MAX)

const char *bw_strerror(int status)
{
    switch (status) {
    case BW_OK:        return "success";
    case BW_ENOMEM:    return "out of memory (the backing allocator failed)";
    case BW_EOVERFLOW: return "size overflow (a size that cannot be represented)";
    case BW_EINVAL:    return "invalid argument";
    case BW_EIO:       return "I/O error (see errno)";
    default:           return "unknown bufwriter status";
    }
}

const char *bw_version(void) { return BW_VERSION_STRING; }

/* Record the first error; later writes miss the fast path (lim == len). */
static int bw__fail(bw_writer *w, int rc)
{
    if (w->err == BW_OK) w->err = rc;
    w->lim = w->len;
    return rc;
}

static bw_pool *bw__pool_of(bw_writer *w)
{
    if (w->pool == NULL) w->pool = bw_pool_shared();
    return w->pool;
}

/* The growth rule: room for len + n bytes, at least twice the old capacity,
 * rounded to the pool's class at or below its threshold and to the next
 * power of two above it (so a caller's odd-sized first buffer still leads to
 * power-of-two blocks). BW_EOVERFLOW when that size cannot be represented. */
static int bw__target(const bw_pool *p, size_t len, size_t n, size_t cap, size_t *out)
{
    size_t need;
    if (n > BW__MAX_BLOCK - len) return BW_EOVERFLOW;
    need = len + n;
    if (cap > BW__MAX_BLOCK / 2) return BW_EOVERFLOW;
    if (need < cap * 2) need = cap * 2;
    if (need <= p->threshold) {
        *out = bw_pool_class_size(p, need);
    } else {
        if (need > BW__MAX_BLOCK / 2 + 1) return BW_EOVERFLOW;
        *out = bw__pow2_ceil(need);
    }
    return BW_OK;
}

/* Move to a block with room for n more bytes. With src, also append src[0,n)
 * before the old block goes back to the pool (src may point into it). On
 * failure nothing changes but the recorded error. */
static BW__COLD int bw__move(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p = bw__pool_of(w);
    unsigned char *nb;
    size_t cap, got;
    int rc;

    size_t want = n;

    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    /* A writer's first block: at the size recent writers ended at, if the
     * pool learns it (BW_POOL_LEARN_SIZE), so similar jobs never grow. */
    if (w->cap == 0 && p->learn) {
        size_t learned = bw__learned(p);
        if (learned > want) want = learned;
    }
    rc = bw__target(p, w->len, want, w->cap, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);

    /* Above the threshold the old block is the allocator's own: let the
     * pool resize it in place, remap it (glibc's mremap) or move it into a
     * kept warm block, instead of copying into fresh memory. Not when src
     * lies in the old block (realloc may free it), nor for the caller's
     * buffer. */
    if (w->cap > p->threshold && p->alloc.realloc != NULL && !(w->flags & BW__EXTERNAL) &&
        (src == NULL || (uintptr_t)src + n <= (uintptr_t)w->data ||
         (uintptr_t)src >= (uintptr_t)w->data + w->cap)) {
        BW__TAIL_OPEN(w); /* the allocator sees plain memory */
        nb = (unsigned char *)bw__pool_regrow(p, w->data, w->cap, w->len, cap);
        if (nb == NULL) {
            BW__TAIL_CLOSE(w, w->len);
            return bw__fail(w, BW_ENOMEM);
        }
        got = cap;
        if (src != NULL) memcpy(nb + w->len, src, n);
    } else {
        nb = (unsigned char *)bw_pool_rent(p, cap, &got);
        if (nb == NULL) return bw__fail(w, BW_ENOMEM);
        if (w->len != 0) memcpy(nb, w->data, w->len);
        if (src != NULL) memcpy(nb + w->len, src, n);
        if (w->flags & BW__EXTERNAL) {
            w->flags &= ~BW__EXTERNAL; /* not the pool's */
        } else if (w->data != NULL) {
            BW__TAIL_OPEN(w); /* the pool sees plain memory */
            (void)bw_pool_return(p, w->data, w->cap);
        }
    }
    w->data = nb;
    w->cap = got;
    w->lim = got;
    if (src != NULL) w->len += n;
    w->flags |= BW__OPEN; /* a new block: nothing poisoned yet */
    BW__TAIL_CLOSE(w, w->len);
    return BW_OK;
}

int bw__grow(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (w->cap - w->len >= n) return BW_OK;
    return bw__move(w, n, NULL);
}

int bw__write_slow(bw_writer *w, const void *src, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    if (w->cap - w->len >= n) {
        BW__TAIL_CLOSE(w, w->len + n);
        memcpy(w->data + w->len, src, n);
        w->len += n;
        return BW_OK;
    }
    return bw__move(w, n, src);
}

int bw_init(bw_writer *w, bw_pool *pool, size_t initial_capacity)
{
    bw_pool *p;
    size_t cap, got;
    void *b;
    int rc;

    if (w == NULL) return BW_EINVAL;
    memset(w, 0, sizeof *w);
    w->pool = pool;
    if (initial_capacity == 0) return BW_OK;
    p = bw__pool_of(w);
    if (p == NULL) return BW_ENOMEM;
    rc = bw__target(p, 0, initial_capacity, 0, &cap);
    if (rc != BW_OK) return rc;
    b = bw_pool_rent(p, cap, &got);
    if (b == NULL) return BW_ENOMEM;
    w->data = (unsigned char *)b;
    w->cap = w->lim = got;
    w->flags |= BW__OPEN;
    BW__TAIL_CLOSE(w, 0);
    return BW_OK;
}

int bw_init_buffer(bw_writer *w, bw_pool *pool, void *buf, size_t size)
{
    if (w == NULL) return BW_EINVAL;
    memset(w, 0, sizeof *w);
    w->pool = pool;
    if (buf == NULL || size == 0) return BW_EINVAL;
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = w->lim = size;
    w->flags = BW__EXTERNAL;
    return BW_OK;
}

/* The end of a job: its length teaches a learning pool. */
static void bw__job_done(bw_writer *w)
{
    if (w->len != 0 && w->pool != NULL) bw__learn_record(w->pool, w->len);
}

/* Empty, no error, no block; keeps the pool. */
static void bw__reset(bw_writer *w)
{
    w->data = NULL;
    w->len = w->cap = w->lim = 0;
    w->err = BW_OK;
    w->flags = 0;
}

void bw_release(bw_writer *w)
{
    if (w == NULL) return;
    bw__job_done(w);
    if (w->data != NULL && !(w->flags & BW__EXTERNAL)) {
        BW__TAIL_OPEN(w);
        (void)bw_pool_return(w->pool, w->data, w->cap);
    }
    bw__reset(w);
}

void bw_clear(bw_writer *w)
{
    if (w == NULL) return;
    bw__job_done(w);
    BW__TAIL_CLOSE(w, 0);
    w->len = 0;
    w->lim = w->cap;
    w->err = BW_OK;
}

int bw_patch(bw_writer *w, size_t offset, const void *src, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL || offset > w->len || n > w->len - offset) return bw__fail(w, BW_EINVAL);
    memmove(w->data + offset, src, n);
    return BW_OK;
}

int bw_reserve(bw_writer *w, size_t n) { return bw__grow(w, n); }

void *bw_get_span(bw_writer *w, size_t size_hint, size_t *avail)
{
    if (avail != NULL) *avail = 0;
    if (bw__grow(w, size_hint ? size_hint : 1) != BW_OK) return NULL;
    if (avail != NULL) *avail = w->cap - w->len;
    BW__TAIL_OPEN(w); /* the span is writable until advance */
    return w->data + w->len;
}

int bw_advance(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n > w->cap - w->len) return bw__fail(w, BW_EINVAL);
    BW__TAIL_CLOSE(w, w->len + n);
    w->len += n;
    return BW_OK;
}

int bw_puts(bw_writer *w, const char *s)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (s == NULL) return bw__fail(w, BW_EINVAL);
    return bw_write(w, s, strlen(s));
}

int bw_vprintf(bw_writer *w, const char *fmt, va_list ap)
{
    size_t avail;
    va_list cp;
    int r;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (fmt == NULL) return bw__fail(w, BW_EINVAL);
    /* First try straight into the free space (the NUL lands past len). */
    avail = w->cap - w->len;
    BW__TAIL_OPEN(w); /* the free space is scratch for vsnprintf */
    va_copy(cp, ap);
    r = vsnprintf(avail ? (char *)w->data + w->len : NULL, avail, fmt, cp);
    va_end(cp);
    if (r >= 0 && (size_t)r < avail) {
        BW__TAIL_CLOSE(w, w->len + (size_t)r);
        w->len += (size_t)r;
        return BW_OK;
    }
    BW__TAIL_CLOSE(w, w->len);
    if (r < 0) return bw__fail(w, BW_EINVAL);
    /* Too long: grow once to the exact need (+1 for the NUL), format again. */
    if (bw__grow(w, (size_t)r + 1) != BW_OK) return w->err;
    avail = w->cap - w->len;
    BW__TAIL_OPEN(w);
    r = vsnprintf((char *)w->data + w->len, avail, fmt, ap);
    if (r < 0 || (size_t)r >= avail) {
        BW__TAIL_CLOSE(w, w->len);
        return bw__fail(w, BW_EINVAL);
    }
    BW__TAIL_CLOSE(w, w->len + (size_t)r);
    w->len += (size_t)r;
    return BW_OK;
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

bw_pool *bw_writer_pool(const bw_writer *w)
{
    if (w == NULL) return NULL;
    return w->pool ? w->pool : bw_pool_shared();
}

void *bw_detach(bw_writer *w, size_t *len, size_t *capacity)
{
    void *b = NULL;
    size_t l = 0, c = 0;
    if (len != NULL) *len = 0;
    if (capacity != NULL) *capacity = 0;
    if (w == NULL) return NULL;
    if ((w->flags & BW__EXTERNAL) && w->len != 0) {
        /* The caller's buffer cannot go to the pool: hand out a pooled
         * copy, sized by the growth rule. */
        bw_pool *p = bw__pool_of(w);
        size_t want;
        if (p == NULL || bw__target(p, 0, w->len, 0, &want) != BW_OK ||
            (b = bw_pool_rent(p, want, &c)) == NULL) {
            bw__fail(w, BW_ENOMEM);
            return NULL;
        }
        memcpy(b, w->data, w->len);
        l = w->len;
    } else if (!(w->flags & BW__EXTERNAL)) {
        BW__TAIL_OPEN(w); /* the caller gets plain memory */
        b = w->data;
        l = w->len;
        c = w->cap;
    }
    bw__job_done(w);
    bw__reset(w);
    if (len != NULL) *len = l;
    if (capacity != NULL) *capacity = c;
    return b;
}
