/* SPDX-License-Identifier: MIT */
/* fmt_int.c - integer text that is not inline: decimal (bw_put_dec_u64,
 * bw_put_dec_i64) and hex (bw_put_hex), for every mode, on top of the
 * dispatcher's cold paths; and the two-digit table the float text
 * (fmt_float.c) shares. */
#include "writer_internal.h"

/* Two decimal digits of every value below 100, for the one decimal routine
 * (bw__dec_digits, writer_internal.h): this file's and the float text's. */
const char bw__digits2[201] = {
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899"};

int bw_put_dec_u64(bw_writer *w, uint64_t v)
{
    unsigned char b[20], *p = bw__dec_digits(b + sizeof b, v);
    return bw_write(w, p, (size_t)(b + sizeof b - p));
}

int bw_put_dec_i64(bw_writer *w, int64_t v)
{
    unsigned char b[21], *p;
    uint64_t u = (uint64_t)v;
    if (v < 0) u = 0 - u; /* INT64_MIN too */
    p = bw__dec_digits(b + sizeof b, u);
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
    int rc = BW_OK;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    /* 2n bytes no writer can hold: the mode's room says which error
     * (BW_EOVERFLOW, or BW_EFULL for a fixed buffer). */
    if (n > BW__MAX_BLOCK / 2) return bw__room(w, SIZE_MAX, NULL);
    if (BW__UNLIKELY(bw__over(w, 2 * n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len < 2 * n) {
        /* The cold path may move, link or send the bytes src points into:
         * they are made stable first. */
        if (bw__overlaps(w, src, n)) {
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
