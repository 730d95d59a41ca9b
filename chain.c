/* chain.c - bw_chain, the segmented writer: blocks rented from a pool,
 * linked through a header inside each block, read out as iovecs, flattened,
 * copied out or consumed from the front. */
#include "bufwriter.h"
#include "pool/pool_internal.h"

#include <stdlib.h>
#include <sys/uio.h>

/* The link header at the start of every block (32 bytes keeps the data
 * aligned to alignof(max_align_t) on the usual ABIs). */
struct bw__cblock {
    struct bw__cblock *next;
    size_t cap;   /* data bytes (block capacity minus the header)            */
    size_t start; /* first byte not yet consumed                             */
    size_t used;  /* bytes written; for the tail, c->wp says it              */
};
#define BW__CB_HDR ((size_t)32)
#define BW__CHAIN_FIRST ((size_t)4096)
#define BW__CHAIN_MAX_LEN ((size_t)PTRDIFF_MAX)

typedef char bw__cb_hdr_fits[sizeof(struct bw__cblock) <= BW__CB_HDR ? 1 : -1];

static unsigned char *bw__cb_data(struct bw__cblock *b) { return (unsigned char *)b + BW__CB_HDR; }

/* Bytes written into b (the tail's live count is the write position). */
static size_t bw__cb_used(const bw_chain *c, struct bw__cblock *b)
{
    return b == c->tail ? (size_t)(c->wp - bw__cb_data(b)) : b->used;
}

static int bw__chain_fail(bw_chain *c, int rc)
{
    if (c->err == BW_OK) c->err = rc;
    c->wavail = 0;
    return rc;
}

static bw_pool *bw__chain_pool(bw_chain *c)
{
    if (c->pool == NULL) c->pool = bw_pool_shared();
    return c->pool;
}

size_t bw_chain_len(const bw_chain *c)
{
    if (c == NULL || c->tail == NULL) return 0;
    return c->done + (size_t)(c->wp - bw__cb_data(c->tail)) - c->tail->start;
}

int bw_chain_init(bw_chain *c, bw_pool *pool)
{
    if (c == NULL) return BW_EINVAL;
    memset(c, 0, sizeof *c);
    c->pool = pool;
    return BW_OK;
}

/* The next block's size: double the last one's (prev_cap data bytes; 0
 * for the first block, 4 KiB), up to the pool's threshold, then stay
 * there; always at least `need` data bytes. */
static size_t bw__chain_next_size(const bw_pool *p, size_t prev_cap, size_t need)
{
    size_t size = prev_cap ? (prev_cap + BW__CB_HDR) * 2 : BW__CHAIN_FIRST;
    if (size > p->threshold) size = p->threshold;
    if (size < 2 * BW__CB_HDR) size = 2 * BW__CB_HDR;
    if (need > size - BW__CB_HDR) size = need + BW__CB_HDR;
    return size;
}

/* Rent a block after one of prev_cap data bytes, with at least `need`;
 * NULL when the pool fails. */
static struct bw__cblock *bw__chain_rent(bw_pool *p, size_t prev_cap, size_t need)
{
    size_t cap;
    struct bw__cblock *b =
        (struct bw__cblock *)bw_pool_rent(p, bw__chain_next_size(p, prev_cap, need), &cap);
    if (b == NULL) return NULL;
    b->next = NULL;
    b->cap = cap - BW__CB_HDR;
    b->start = 0;
    b->used = 0;
    return b;
}

/* Append b as the new tail (the old tail's count is frozen). */
static void bw__chain_link(bw_chain *c, struct bw__cblock *b)
{
    if (c->tail != NULL) {
        c->tail->used = (size_t)(c->wp - bw__cb_data(c->tail));
        c->done += c->tail->used - c->tail->start;
        c->tail->next = b;
    } else {
        c->head = b;
    }
    c->tail = b;
    c->nblocks++;
    c->wp = bw__cb_data(b);
    c->wavail = b->cap;
}

int bw__chain_write_slow(bw_chain *c, const void *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    struct bw__cblock *first = NULL, *last = NULL, *b;
    bw_pool *p;
    size_t room, have;

    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__chain_fail(c, BW_EINVAL);
    if (n > BW__CHAIN_MAX_LEN - bw_chain_len(c)) return bw__chain_fail(c, BW_EOVERFLOW);
    if ((p = bw__chain_pool(c)) == NULL) return bw__chain_fail(c, BW_ENOMEM);

    /* Rent every block the write needs first, so that a failure leaves the
     * chain exactly as it was. */
    room = c->wavail;
    have = room;
    while (have < n) {
        b = bw__chain_rent(p, last ? last->cap : c->tail ? c->tail->cap : 0, 0);
        if (b == NULL) {
            while (first != NULL) {
                struct bw__cblock *next = first->next;
                (void)bw_pool_return(p, first, first->cap + BW__CB_HDR);
                first = next;
            }
            return bw__chain_fail(c, BW_ENOMEM);
        }
        if (last) last->next = b;
        else first = b;
        last = b;
        have += b->cap;
    }
    /* Then copy: the rest of the tail, then each new block. */
    if (room > 0) {
        memcpy(c->wp, s, room);
        c->wp += room;
        c->wavail = 0;
        s += room;
        n -= room;
    }
    while (first != NULL) {
        size_t k;
        b = first;
        first = first->next;
        b->next = NULL;
        bw__chain_link(c, b);
        k = n < b->cap ? n : b->cap;
        memcpy(c->wp, s, k);
        c->wp += k;
        c->wavail -= k;
        s += k;
        n -= k;
    }
    return BW_OK;
}

int bw_chain_puts(bw_chain *c, const char *s)
{
    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (s == NULL) return bw__chain_fail(c, BW_EINVAL);
    return bw_chain_write(c, s, strlen(s));
}

int bw_chain_vprintf(bw_chain *c, const char *fmt, va_list ap)
{
    va_list cp;
    bw_pool *p;
    size_t cap;
    char *tmp;
    int r, rc;

    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (fmt == NULL) return bw__chain_fail(c, BW_EINVAL);
    va_copy(cp, ap);
    r = vsnprintf(c->wavail ? (char *)c->wp : NULL, c->wavail, fmt, cp);
    va_end(cp);
    if (r < 0) return bw__chain_fail(c, BW_EINVAL);
    if ((size_t)r < c->wavail) { /* straight into the last block */
        c->wp += r;
        c->wavail -= (size_t)r;
        return BW_OK;
    }
    /* Does not fit: format into a pooled scratch block, then append it
     * across blocks. */
    if ((p = bw__chain_pool(c)) == NULL) return bw__chain_fail(c, BW_ENOMEM);
    tmp = (char *)bw_pool_rent(p, (size_t)r + 1, &cap);
    if (tmp == NULL) return bw__chain_fail(c, BW_ENOMEM);
    if (vsnprintf(tmp, cap, fmt, ap) != r) rc = bw__chain_fail(c, BW_EINVAL);
    else rc = bw_chain_write(c, tmp, (size_t)r);
    (void)bw_pool_return(p, tmp, cap);
    return rc;
}

int bw_chain_printf(bw_chain *c, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_chain_vprintf(c, fmt, ap);
    va_end(ap);
    return rc;
}

void *bw_chain_get_span(bw_chain *c, size_t size_hint, size_t *avail)
{
    size_t need = size_hint ? size_hint : 1;
    struct bw__cblock *b;
    bw_pool *p;
    if (avail != NULL) *avail = 0;
    if (c == NULL || c->err != BW_OK) return NULL;
    if (c->wavail < need) {
        if (need > BW__CHAIN_MAX_LEN - BW__CB_HDR - bw_chain_len(c)) {
            bw__chain_fail(c, BW_EOVERFLOW);
            return NULL;
        }
        if ((p = bw__chain_pool(c)) == NULL ||
            (b = bw__chain_rent(p, c->tail ? c->tail->cap : 0, need)) == NULL) {
            bw__chain_fail(c, BW_ENOMEM);
            return NULL;
        }
        bw__chain_link(c, b);
    }
    if (avail != NULL) *avail = c->wavail;
    return c->wp;
}

int bw_chain_advance(bw_chain *c, size_t n)
{
    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (n > c->wavail) return bw__chain_fail(c, BW_EINVAL);
    c->wp += n;
    c->wavail -= n;
    return BW_OK;
}

/* Walk [offset, offset + n) piece by piece: copy out of (to_chain = 0) or
 * into (to_chain = 1) the chain. The range is already checked. */
static void bw__chain_walk(const bw_chain *c, size_t offset, unsigned char *buf, size_t n,
                           int to_chain)
{
    struct bw__cblock *b;
    for (b = c->head; b != NULL && n > 0; b = b->next) {
        size_t len = bw__cb_used(c, b) - b->start, k;
        if (offset >= len) {
            offset -= len;
            continue;
        }
        k = len - offset < n ? len - offset : n;
        if (to_chain) memcpy(bw__cb_data(b) + b->start + offset, buf, k);
        else memcpy(buf, bw__cb_data(b) + b->start + offset, k);
        buf += k;
        n -= k;
        offset = 0;
    }
}

int bw_chain_patch(bw_chain *c, size_t offset, const void *src, size_t n)
{
    size_t len;
    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (n == 0) return BW_OK;
    len = bw_chain_len(c);
    if (src == NULL || offset > len || n > len - offset) return bw__chain_fail(c, BW_EINVAL);
    bw__chain_walk(c, offset, (unsigned char *)(uintptr_t)src, n, 1);
    return BW_OK;
}

int bw_chain_copy_out(const bw_chain *c, size_t offset, void *dst, size_t n)
{
    size_t len;
    if (c == NULL) return BW_EINVAL;
    if (n == 0) return BW_OK;
    len = bw_chain_len(c);
    if (dst == NULL || offset > len || n > len - offset) return BW_EINVAL;
    bw__chain_walk(c, offset, (unsigned char *)dst, n, 0);
    return BW_OK;
}

size_t bw_chain_iovec(const bw_chain *c, struct iovec *iov, size_t max)
{
    struct bw__cblock *b;
    size_t k = 0;
    if (c == NULL) return 0;
    for (b = c->head; b != NULL; b = b->next) {
        size_t len = bw__cb_used(c, b) - b->start;
        if (len == 0) continue;
        if (k < max && iov != NULL) {
            iov[k].iov_base = bw__cb_data(b) + b->start;
            iov[k].iov_len = len;
        }
        k++;
    }
    return k;
}

int bw_chain_flatten(const bw_chain *c, bw_writer *w)
{
    struct bw__cblock *b;
    int rc;
    if (c == NULL || w == NULL) return BW_EINVAL;
    /* One reservation first: then the copies cannot fail half way. */
    if ((rc = bw_reserve(w, bw_chain_len(c))) != BW_OK) return rc;
    for (b = c->head; b != NULL; b = b->next) {
        size_t len = bw__cb_used(c, b) - b->start;
        if (len && (rc = bw_write(w, bw__cb_data(b) + b->start, len)) != BW_OK) return rc;
    }
    return BW_OK;
}

/* Drop the first n bytes (n <= length, checked by the caller), giving
 * emptied blocks back; a fully consumed tail is rewound for reuse. */
static void bw__chain_drop(bw_chain *c, size_t n)
{
    for (;;) {
        struct bw__cblock *b = c->head;
        size_t len;
        if (b == NULL) return;
        len = bw__cb_used(c, b) - b->start;
        if (b == c->tail) {
            b->start += n;
            if (b->start == bw__cb_used(c, b)) {
                b->start = 0;
                c->wp = bw__cb_data(b);
                c->wavail = c->err == BW_OK ? b->cap : 0;
            }
            return;
        }
        if (n < len) {
            b->start += n;
            c->done -= n;
            return;
        }
        n -= len; /* the whole block is gone (an empty one too) */
        c->done -= len;
        c->head = b->next;
        c->nblocks--;
        (void)bw_pool_return(c->pool, b, b->cap + BW__CB_HDR);
    }
}

int bw_chain_consume(bw_chain *c, size_t n)
{
    if (c == NULL) return BW_EINVAL;
    if (n > bw_chain_len(c)) return bw__chain_fail(c, BW_EINVAL);
    bw__chain_drop(c, n);
    return BW_OK;
}

void bw_chain_release(bw_chain *c)
{
    struct bw__cblock *b;
    if (c == NULL) return;
    for (b = c->head; b != NULL;) {
        struct bw__cblock *next = b->next;
        (void)bw_pool_return(c->pool, b, b->cap + BW__CB_HDR);
        b = next;
    }
    bw_chain_init(c, c->pool);
}

void bw_chain_clear(bw_chain *c)
{
    struct bw__cblock *b, *keep;
    if (c == NULL) return;
    keep = c->head;
    if (keep == NULL) {
        c->err = BW_OK;
        return;
    }
    for (b = keep->next; b != NULL;) {
        struct bw__cblock *next = b->next;
        (void)bw_pool_return(c->pool, b, b->cap + BW__CB_HDR);
        b = next;
    }
    keep->next = NULL;
    keep->start = keep->used = 0;
    c->head = c->tail = keep;
    c->nblocks = 1;
    c->done = 0;
    c->wp = bw__cb_data(keep);
    c->wavail = keep->cap;
    c->err = BW_OK;
}

/* For the I/O helpers (io.c): drop what went out, never recording. */
BW__INTERNAL void bw__chain_consume_sent(bw_chain *c, size_t n) { bw__chain_drop(c, n); }
