/* SPDX-License-Identifier: MIT */
/* fuzz_ops.c - differential fuzzing of the writer, in all four modes, and of
 * the pool (libFuzzer).
 *
 * The input picks the pool's options and which backing allocation fails,
 * then is decoded into at most 500 operations over three writers. Each writer
 * is in a mode the input chooses (and re-chooses): contiguous (bw_init, or
 * bw_init_buffer over a caller's buffer), segmented (bw_init_chain),
 * streaming (bw_init_sink, into a sink scripted by the input: full takes,
 * short counts, -1/EINTR, -1 with EPIPE or EAGAIN, broken returns 0, n + 1,
 * -2) or fixed (bw_init_fixed over a buffer followed by guard bytes). Every
 * operation is applied to the library and to a reference model written here
 * (the held bytes, the position of the first one, the recorded status) that
 * encodes bufwriter.h's contracts: which status each call returns in each
 * mode and state. Operations: write (also from the writer's own held bytes), every
 * put, varints, decimal, hex, puts, printf (arguments that alias held bytes,
 * long output, bw_cstr's string, an encoding error), fwrite, fputs and
 * fprintf through bw_fopen (of the held bytes themselves in contiguous and
 * segmented writers), reserve, span + advance, a span written with the
 * cursor encoders (bw_enc_*) and committed with bw_advance_to (also with a
 * NULL end, one before the span or past it), patch and typed
 * patch by position, truncate, consume, clear, clear_error, release, detach,
 * pullup, cstr, copy_out, iovec, append_writer (dst == src too), flush,
 * unrepresentable sizes, NULL sources, putc, detach_malloc, append_ref (the
 * caller's memory, scribbled over as soon as its done is called, so a read
 * after it shows; or the writer's own bytes), move (dst == src, streaming
 * src, a src with an error too), set_limit (0, near bw_tell, below it; the
 * model refuses with BW_ELIMIT every call that would pass it), the decimal
 * text of doubles and floats (bw_put_dec_f64/f32, and bw_enc_dec_f64/f32
 * in the cursor: the put's bytes are the cursor form's, and the text reads
 * back with strtod/strtof as exactly the value, laid out as bufwriter.h
 * says), try_span (granted exactly when the free space covers it, and no
 * effect otherwise), set_first_buffer (a storage-less contiguous writer
 * takes the caller's buffer; every other case is BW_EINVAL),
 * set_block_size (a segmented writer's blocks from then on: 0, 64 B to
 * 1 MiB or past 1 GiB; BW_EINVAL in other modes, nothing recorded, no
 * rent, the bytes as they were) and the float text with BW_DEC_* flags
 * (bw_put_dec_f64_flags/f32_flags, and bw_fmt_dec_f64/f32 at every room:
 * the plain text made JSON's by hand, BW_ENONFINITE and BW_EINVAL recorded
 * never, nothing stored past the room or when it does not fit). After EVERY
 * operation:
 *   - the status returned, bw_error, bw_errno, bw_len, bw_tell;
 *   - the held bytes, through bw_copy_out of everything and through bw_iovec
 *     (concatenated, no empty entry), and bw_data when they lie in one block;
 *     bw_capacity == bw_len + bw_free_capacity;
 *   - streaming: the bytes the sink took plus the held bytes are exactly the
 *     reference stream; a call that fits never calls the sink; a failing sink
 *     records BW_EIO with its errno and is not called again in that call; a
 *     failed call accepts nothing, or (larger than the buffer) a prefix;
 *   - contiguous: every block is a power of two or the caller's buffer, a
 *     move at least doubles and goes no further than the growth rule, and a
 *     call that fits never moves the block; segmented: held bytes never move;
 *     fixed: guard bytes never change, nothing is allocated;
 *   - zero-length calls allocate nothing and call no sink; an allocation
 *     failure surfaces as BW_ENOMEM with nothing changed;
 *   - a move between segmented writers allocates nothing;
 *   - done is called once per linked reference, never for a failed call.
 * At the end every writer is released, the pool destroyed, every done has
 * been called, and the backing allocator balances to zero. The growth and fixed checks read the writer's
 * private block fields (w.data, w.cap): the one white-box part.
 *
 *   make fuzz            run it (FUZZ_TIME seconds, default 600)
 *   make test            (test-fuzz) replays tests/fuzz/corpus and
 *                        tests/fuzz/crashes, then fuzzes FUZZ_SHORT seconds
 *   build/fuzz_ops tests/fuzz/crashes/NAME     replay one reproducer
 *
 * Sizes are clamped (4 KiB per call, 64 KiB held per writer) and the pool's
 * thresholds are small (256 B, 2 KiB, 16 KiB), so that comparing every byte
 * after every operation stays cheap and every path above and below them is
 * crossed. The input may also make the pool BW_POOL_BYPASS (exact-size
 * rents below the threshold): the growth checks then bound instead of
 * match. */
#define _GNU_SOURCE 1 /* bw_fopen is fopencookie-based */
#include "bufwriter.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <wchar.h>

#define MAX_OP 4096            /* bytes per call                          */
#define MAX_LEN (64u << 10)    /* bytes held per writer                   */
#define NW 3                   /* writers                                 */
#define NBLOCKS 8              /* raw pool blocks                         */
#define FIX_MAX 512            /* fixed buffers: 0..FIX_MAX bytes         */
#define GUARD 32               /* ... then at least GUARD guard bytes      */
#define SCRIPT 8               /* sink behaviours, cycled                 */

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "fuzz_ops: check failed at %s:%d: %s\n", __FILE__, \
                    __LINE__, #c);                                            \
            abort();                                                          \
        }                                                                     \
    } while (0)
static size_t MIN(size_t a, size_t b) { return a < b ? a : b; }
static size_t MAX(size_t a, size_t b) { return a > b ? a : b; }

enum { CONTIG, CHAIN, STREAM, FIXED };

#include "fuzz_io.h" /* input, allocator, sink */

/* Every invariant of a segmented writer (mode_seg.c; the build defines
 * BW_SEG_CHECK): aborts naming the one broken. */
void bw__seg_check(const bw_writer *w);

/* ----------------------------------------------------------- model -- */
typedef struct slot {
    bw_writer w;
    int mode, nosink;     /* nosink: streaming without a (known) sink      */
    unsigned char *d;     /* the held bytes                                */
    size_t len, dcap;
    uint64_t base;        /* position of the first held byte              */
    int err;              /* recorded status                              */
    int syserr;           /* the errno recorded with BW_EIO               */
    size_t sbuf;          /* streaming: the buffer size (0: unknown)      */
    unsigned char *fbuf;  /* fixed: the buffer (or NULL) and its size     */
    size_t fsize;
    size_t isize;         /* contiguous: the caller's first buffer's size */
    uint64_t limit;       /* bw_set_limit: 0 = none                       */
    sinkst sk;
    unsigned char ibuf[256];
    unsigned char fmem[FIX_MAX + GUARD];
} slot;

static bw_pool *pool;
static size_t minblk, threshold;
static int bypass; /* BW_POOL_BYPASS: rents are exact-size below the threshold */
static int learned_jump; /* a growth past the jump floor may jump further (the learned jump) */
static int learn_size;   /* BW_POOL_LEARN_SIZE: a first block may be the learned size */
static slot *slots;
static unsigned char scratch[MAX_OP + 16];
static unsigned char expb[MAX_LEN + 2 * MAX_OP]; /* the bytes a call must append */
static unsigned char tmp[MAX_LEN + 16];
static struct iovec *iv;
static size_t ivcap;

static void m_append(slot *x, const void *src, size_t n)
{
    if (n == 0) return;
    if (x->len + n > x->dcap) {
        x->dcap = MAX(x->dcap * 2, MAX(x->len + n, 256));
        x->d = (unsigned char *)realloc(x->d, x->dcap);
        CHECK(x->d != NULL);
    }
    memcpy(x->d + x->len, src, n);
    x->len += n;
}
static void m_drop(slot *x, size_t n)
{
    if (n) memmove(x->d, x->d + n, x->len - n);
    x->len -= n;
    x->base += n;
}
static void m_reset(slot *x) { x->len = 0; x->base = 0; x->err = BW_OK; }

/* References (bw_append_ref): memory that must stay as it is until the
 * done of its last link; then it is scribbled over, so a later read of it
 * shows in the bytes compared. Caller memory may be linked more than once
 * (the writer's own held bytes that lie in a reference are such memory):
 * each link has its record, and done must come once per link. */
#define NREF 16
#define NLINK 64
static struct refst {
    unsigned char mem[MAX_OP];
    int links; /* links whose done has not come */
} refs[NREF];
static struct linkst {
    struct refst *r;           /* the memory linked, NULL: the writer's own */
    const unsigned char *data; /* what done must get */
    size_t n;
    int live;
} links[NLINK];
static void ref_done(void *ctx, const void *data, size_t n)
{
    struct linkst *l = (struct linkst *)ctx;
    CHECK(l->live && data == l->data && n == l->n);
    l->live = 0;
    if (l->r != NULL && --l->r->links == 0) memset(l->r->mem, 0xA5, sizeof l->r->mem);
}
/* The reference whose memory holds [p, p + n), or NULL. */
static struct refst *ref_of(const unsigned char *p, size_t n)
{
    int i;
    for (i = 0; i < NREF; i++)
        if (refs[i].links != 0 && p >= refs[i].mem && p + n <= refs[i].mem + MAX_OP)
            return &refs[i];
    return NULL;
}

/* memcmp that allows NULL with n == 0 */
static int same(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }
static int is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }
static size_t pow2_up(size_t n) { size_t c = 1; while (c < n) c *= 2; return c; }
/* What a rent of n gives: the class, or (bypass) n itself up to the
 * threshold; as an upper bound class_of holds in both. */
static size_t class_of(size_t n) { return pow2_up(MAX(n, minblk)); }
static size_t rent_of(size_t n) { return bypass && n <= threshold ? MAX(n, 1) : class_of(n); }
static void fill(unsigned char *b, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) b[i] = (unsigned char)(i * 31u + seed);
}
static unsigned char guard_byte(size_t i) { return (unsigned char)(0xC3 ^ i); }

/* ------------------------------------------------------ encodings -- */
#define TYPES(X)                                                                   \
    X(u8, uint8_t, 1, 0) X(u16le, uint16_t, 2, 0) X(u32le, uint32_t, 4, 0)         \
    X(u64le, uint64_t, 8, 0) X(u16be, uint16_t, 2, 1) X(u32be, uint32_t, 4, 1)     \
    X(u64be, uint64_t, 8, 1) X(i16le, int16_t, 2, 0) X(i32le, int32_t, 4, 0)       \
    X(i64le, int64_t, 8, 0) X(i16be, int16_t, 2, 1) X(i32be, int32_t, 4, 1)        \
    X(i64be, int64_t, 8, 1) X(f32le, float, 4, 0) X(f64le, double, 8, 0)           \
    X(f32be, float, 4, 1) X(f64be, double, 8, 1)
#define T_ENUM(name, type, size, be) T_##name,
enum { TYPES(T_ENUM) NTYPES };
#define T_INFO(name, type, size, be) {size, be},
static const struct { unsigned char size, be; } tinfo[] = {TYPES(T_INFO)};

/* The value of a size-byte type whose representation is bits' low bytes. */
static void from_bits(void *dst, size_t size, uint64_t bits)
{
    uint8_t a = (uint8_t)bits;
    uint16_t b = (uint16_t)bits;
    uint32_t c = (uint32_t)bits;
    memcpy(dst, size == 1 ? (void *)&a : size == 2 ? (void *)&b : size == 4 ? (void *)&c : (void *)&bits,
           size);
}
#define T_PUT(name, type, size, be) \
    case T_##name: { type v; from_bits(&v, size, bits); return bw_put_##name(w, v); }
static int put_typed(bw_writer *w, unsigned t, uint64_t bits)
{
    switch (t) { TYPES(T_PUT) }
    return BW_EINVAL;
}
#define T_PATCH(name, type, size, be) \
    case T_##name: { type v; from_bits(&v, size, bits); return bw_patch_##name(w, pos, v); }
static int patch_typed(bw_writer *w, unsigned t, uint64_t pos, uint64_t bits)
{
    switch (t) { TYPES(T_PATCH) }
    return BW_EINVAL;
}
#define T_ENC(name, type, size, be) \
    case T_##name: { type v; from_bits(&v, size, bits); return bw_enc_##name(p, v); }
static unsigned char *cursor_typed(unsigned char *p, unsigned t, uint64_t bits)
{
    switch (t) { TYPES(T_ENC) }
    return NULL;
}
static size_t enc_typed(unsigned char *b, unsigned t, uint64_t bits)
{
    size_t i, n = tinfo[t].size;
    for (i = 0; i < n; i++) b[i] = (unsigned char)(bits >> (8 * (tinfo[t].be ? n - 1 - i : i)));
    return n;
}
static size_t leb(unsigned char *b, uint64_t u)
{
    size_t k = 0;
    while (u >= 0x80) { b[k++] = (unsigned char)(u | 0x80); u >>= 7; }
    b[k++] = (unsigned char)u;
    return k;
}
static void hex(unsigned char *out, const unsigned char *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = (unsigned char)"0123456789abcdef"[src[i] >> 4];
        out[2 * i + 1] = (unsigned char)"0123456789abcdef"[src[i] & 15];
    }
}
static int vpf(bw_writer *w, const char *fmt, ...) BW__PRINTF(2, 3);
static int vpf(bw_writer *w, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_vprintf(w, fmt, ap);
    va_end(ap);
    return rc;
}

/* ----------------------------------------------- floating-point text -- */
/* A double from the input: its bits, or an edge (zeros, infinities, NaNs,
 * the extremes, subnormals, where the layout changes form). */
static double pick_double(in *s)
{
    static const double edge[] = {0.0, -0.0, 1.0, 0.1, 123.456, 1e16, 1e17, 9007199254740993.0,
                                  0.0001, 0.00001, 1e-5, 5e-324, -5e-324, DBL_MIN, -DBL_MAX,
                                  DBL_MAX, 2.2250738585072009e-308, 1e23, 0.3, 100000.0};
    unsigned how = u8(s) % 8;
    uint64_t bits = u64(s);
    double d;
    if (how == 0) return edge[bits % (sizeof edge / sizeof edge[0])];
    if (how == 1) return bits & 1 ? -INFINITY : INFINITY;
    if (how == 2) {
        bits |= (uint64_t)0x7FF << 52; /* a NaN of any sign and payload (or an infinity) */
        if ((bits & (((uint64_t)1 << 52) - 1)) == 0) bits |= 1;
    }
    if (how == 3) return (double)(int64_t)bits / (double)(1 + (bits >> 40 & 0xFFFF));
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* The decimal exponent of the first digit of the plain text t ("0.00123":
 * -3, "123.4": 2), t without its sign; 0 for zero. */
static int plain_exponent(const char *t)
{
    const char *dot = strchr(t, '.'), *p;
    size_t intlen = dot != NULL ? (size_t)(dot - t) : strlen(t);
    if (!(intlen == 1 && t[0] == '0')) return (int)intlen - 1;
    if (dot == NULL) return 0;
    for (p = dot + 1; *p == '0'; p++) {}
    return *p == 0 ? 0 : -(int)(p - dot);
}

/* The text bw_enc_dec_f64 (f32: bw_enc_dec_f32 of (float)v) stores at out,
 * checked against bufwriter.h: what strtod (strtof) reads back is exactly
 * the value (and so is what snprintf's "%.17g" gives, read back), "inf",
 * "-inf" and "nan", a "-" exactly for a negative sign, digits laid out as
 * "%.17g" lays them out (plain for a first digit's exponent in -4..16,
 * else d[.ddd]e+XX with at least two exponent digits), no trailing zeros
 * or point, no more than BW_DEC_F64_MAX (BW_DEC_F32_MAX) bytes. Which
 * digits are the shortest is tested against an oracle elsewhere
 * (tests/test_float_text.c). Returns the length. */
static size_t dec_float(unsigned char *out, double v, int is32)
{
    char t[40], ref[40], *end;
    const char *m, *e;
    float f = (float)v;
    size_t n = (size_t)((is32 ? bw_enc_dec_f32(out, f) : bw_enc_dec_f64(out, v)) - out);
    int neg, x;
    CHECK(n >= 1 && n <= (is32 ? BW_DEC_F32_MAX : BW_DEC_F64_MAX));
    memcpy(t, out, n);
    t[n] = 0;
    CHECK(strspn(t, "0123456789.e+-infa") == n);
    if (is32 ? isnan(f) : isnan(v)) {
        CHECK(strcmp(t, "nan") == 0);
        return n;
    }
    neg = is32 ? signbit(f) != 0 : signbit(v) != 0;
    CHECK((t[0] == '-') == neg);
    m = t + neg;
    if (is32 ? isinf(f) : isinf(v)) {
        CHECK(strcmp(m, "inf") == 0);
        return n;
    }
    if (is32) {
        float g = strtof(t, &end);
        CHECK(*end == 0 && memcmp(&g, &f, sizeof f) == 0);
    } else {
        double g = strtod(t, &end), r;
        CHECK(*end == 0 && memcmp(&g, &v, sizeof v) == 0);
        snprintf(ref, sizeof ref, "%.17g", v);
        r = strtod(ref, NULL);
        CHECK(memcmp(&r, &g, sizeof g) == 0);
    }
    CHECK(m[0] >= '0' && m[0] <= '9');
    e = strchr(m, 'e');
    if (e != NULL) { /* d[.ddd]e+XX: one digit before the point, not 0 */
        CHECK(m[0] != '0' && (m[1] == 'e' || m[1] == '.'));
        CHECK((e[1] == '+' || e[1] == '-') && strlen(e + 2) >= 2 && strspn(e + 2, "0123456789") ==
              strlen(e + 2));
        x = atoi(e + 1);
        CHECK(x < -4 || x > 16);
        CHECK(e[-1] != '0' && e[-1] != '.');
    } else {
        CHECK(strchr(m, '+') == NULL && strchr(m, '-') == NULL);
        if (strcmp(m, "0") != 0) {
            x = plain_exponent(m);
            CHECK(x >= -4 && x <= 16);
            CHECK(!(m[0] == '0' && m[1] != '.')); /* no leading zero but "0.": */
        }
        if (strchr(m, '.') != NULL) CHECK(t[n - 1] != '0' && t[n - 1] != '.');
    }
    return n;
}

/* The text with BW_DEC_* flags, from dec_float's (checked above) the way
 * jansson post-processes printf's: "+" and the exponent's leading zeros
 * dropped (BW_DEC_EXP_SHORT), ".0" after a text with neither point nor
 * exponent (BW_DEC_POINT_ZERO). Returns its length, or 0 for a NaN or an
 * infinity under BW_DEC_JSON (no text); the text reads back as the value. */
static size_t dec_float_flags(unsigned char *out, double v, int is32, unsigned flags)
{
    char t[48], *e;
    size_t n = dec_float((unsigned char *)t, v, is32);
    int special = is32 ? !isfinite((float)v) : !isfinite(v);
    t[n] = 0;
    if (special && (flags & BW_DEC_JSON)) return 0;
    e = strchr(t, 'e');
    if (e != NULL && (flags & BW_DEC_EXP_SHORT)) {
        char *d = e + 1;
        if (*d == '+') memmove(d, d + 1, strlen(d));
        if (*d == '-') d++;
        while (d[0] == '0' && d[1] != 0) memmove(d, d + 1, strlen(d));
    }
    if (!special && e == NULL && strchr(t, '.') == NULL && (flags & BW_DEC_POINT_ZERO))
        strcat(t, ".0");
    n = strlen(t);
    CHECK(n <= BW_DEC_F64_MAX);
    if (!special) {
        char *end;
        if (is32) {
            float g = strtof(t, &end), f = (float)v;
            CHECK(*end == 0 && memcmp(&g, &f, sizeof f) == 0);
        } else {
            double g = strtod(t, &end);
            CHECK(*end == 0 && memcmp(&g, &v, sizeof v) == 0);
        }
    }
    memcpy(out, t, n);
    return n;
}

/* bw_fmt_dec_f64 / _f32 into `room` bytes of a guarded buffer: the status
 * and *len the text's length (ref, n; n 0: no text) say, the text stored
 * exactly when it fits, and nothing else stored (not even within the room). */
static void check_fmt_dec(double v, int is32, unsigned flags, size_t room, const unsigned char *ref,
                          size_t n)
{
    unsigned char b[BW_DEC_F64_MAX + 16];
    size_t got = 12345, i;
    int rc, bad = flags & ~(unsigned)BW_DEC_JSON_REAL;
    memset(b, 0xA5, sizeof b);
    rc = is32 ? bw_fmt_dec_f32(b, room, (float)v, flags, &got)
              : bw_fmt_dec_f64(b, room, v, flags, &got);
    if (bad) CHECK(rc == BW_EINVAL && got == 0);
    else if (n == 0) CHECK(rc == BW_ENONFINITE && got == 0);
    else CHECK(got == n && rc == (n <= room ? BW_OK : BW_EFULL));
    if (rc == BW_OK) CHECK(memcmp(b, ref, n) == 0);
    for (i = rc == BW_OK ? n : 0; i < sizeof b; i++) CHECK(b[i] == 0xA5);
}

/* --------------------------------------------------------- checking -- */
/* What held what before the operation, and what the operation may do. */
enum { GROW, KEEP, RESET }; /* may make room (grow, link, send) / may not / starts over */
static struct {
    int err0;
    uint64_t tell0;
    size_t free0, held0, req, cap0;
    const unsigned char *blk0, *p0; /* contiguous block; segmented: first held byte */
    uint64_t pos0, rents0;
    long calls0;
    int kind, zero, moves, big_ok;
    int made_room; /* a span succeeded: what failed after it was the advance */
    int consumed;  /* a consume emptied the writer */
    int fresh;     /* release or init */
} oc;

static size_t pieces(slot *x)
{
    size_t n = bw_iovec(&x->w, NULL, 0);
    if (n > ivcap) {
        ivcap = 2 * n;
        iv = (struct iovec *)realloc(iv, ivcap * sizeof *iv);
        CHECK(iv != NULL);
    }
    CHECK(bw_iovec(&x->w, iv, n) == n);
    return n;
}

/* A pointer into the writer's own held bytes (from bw_data, or from one
 * bw_iovec entry) and how many held bytes follow it in that block. */
static const unsigned char *alias(in *s, slot *x, size_t *avail)
{
    const unsigned char *d = bw_data(&x->w);
    size_t i, at;
    if (x->len == 0) return NULL;
    if (d != NULL && (u8(s) & 1)) {
        at = u16(s) % x->len;
        *avail = x->len - at;
        return d + at;
    }
    i = u8(s) % pieces(x);
    at = u16(s) % iv[i].iov_len;
    *avail = iv[i].iov_len - at;
    return (const unsigned char *)iv[i].iov_base + at;
}

static void pre(slot *x)
{
    bw_pool_stats st;
    int i;
    memset(&oc, 0, sizeof oc);
    failed_now = big_now = 0;
    for (i = 0; i < NW; i++) {
        sinkst *k = &slots[i].sk;
        k->calls = k->fails = k->after_fail = 0;
        k->eintr = 0;
        CHECK(k->n == 0);
    }
    oc.err0 = x->err;
    oc.tell0 = x->base + x->len;
    oc.held0 = x->len;
    oc.free0 = bw_free_capacity(&x->w);
    oc.blk0 = x->w.data;
    oc.cap0 = x->w.cap;
    oc.pos0 = x->base;
    if (x->mode == CHAIN && x->len) {
        pieces(x);
        oc.p0 = (const unsigned char *)iv[0].iov_base;
    }
    bw_pool_get_stats(pool, &st);
    oc.rents0 = st.rents;
    oc.calls0 = calls;
    oc.kind = GROW;
    errno = 0;
}

/* A status against the rules' `want`. Besides it a call may fail with
 * BW_ENOMEM when an allocation failed inside it, BW_EIO when its sink
 * failed, BW_EINVAL on a streaming writer without a sink. While an error is
 * recorded, the call returns it. Records failures; true on success. */
static int expect(slot *x, int rc, int want)
{
    if (x->err != BW_OK) {
        CHECK(rc == x->err);
        return 0;
    }
    if (rc != want) {
        CHECK(rc != BW_OK);
        CHECK((rc == BW_ENOMEM && (failed_now || (big_now && oc.big_ok))) ||
              (rc == BW_EIO && x->sk.fails) || (rc == BW_EINVAL && x->nosink));
    }
    if (rc != BW_OK) x->err = rc;
    return rc == BW_OK;
}

/* A call that works while an error is recorded (patch, truncate): then it
 * does what it would do without one, and the first error stays. */
static int expect_always(slot *x, int rc, int want)
{
    if (x->err == BW_OK) return expect(x, rc, want);
    if (want != BW_OK || rc != BW_OK)
        CHECK(rc == want || (rc == BW_ENOMEM && failed_now));
    return rc == BW_OK;
}

/* A call that appends the n bytes expb[0..n). Failed, it accepted nothing;
 * only a streaming call larger than the buffer may have accepted a prefix. */
static void wrote(slot *x, int rc, size_t n, int want)
{
    uint64_t got = bw_tell(&x->w) - oc.tell0;
    int refused = x->err != BW_OK;
    if (expect(x, rc, want)) {
        CHECK(got == n);
        m_append(x, expb, n);
        return;
    }
    if (got) CHECK(!refused && rc != want && x->mode == STREAM && got < n && n > x->sbuf);
    m_append(x, expb, (size_t)got);
}
/* A call that appends nothing (failing ones included). */
static void none(slot *x, int rc, int want)
{
    expect(x, rc, want);
    CHECK(bw_tell(&x->w) == oc.tell0);
}
/* The bytes the size limit leaves (SIZE_MAX: no limit). */
static size_t lim_room(const slot *x)
{
    uint64_t tell = x->base + x->len;
    if (x->limit == 0) return SIZE_MAX;
    return x->limit > tell ? (size_t)(x->limit - tell) : 0;
}
/* What a call asking for n more bytes must return when nothing fails: the
 * size limit is asked first, in every mode. */
static int room(slot *x, size_t n)
{
    if (n != 0 && n > lim_room(x)) return BW_ELIMIT;
    return x->mode == FIXED && n > x->fsize - x->len ? BW_EFULL : BW_OK;
}
/* A size no writer can take (reserve, span, write): past any limit first. */
static int too_big_limited(slot *x)
{
    return x->limit != 0 ? BW_ELIMIT : x->mode == FIXED ? BW_EFULL : BW_EOVERFLOW;
}
/* An advance of n past the free space: BW_EINVAL past the block, BW_ELIMIT
 * when only the limit ends the space (white-box: the block's free bytes). */
static int past_free(slot *x, size_t n)
{
    return n > x->w.cap - x->w.len ? BW_EINVAL : BW_ELIMIT;
}
/* A reserve or span of an unrepresentable size fails at once, before any
 * send; PTRDIFF_MAX itself is representable: segmented and streaming
 * writers may try to rent it (BW_ENOMEM), and streaming ones send what they
 * hold first (bufwriter.h, the streaming writer). */
static void big_size(slot *x, size_t n)
{
    int maybe = n == (size_t)PTRDIFF_MAX && x->mode != CONTIG && x->mode != FIXED;
    oc.big_ok = maybe;
    oc.kind = maybe && x->mode == STREAM ? GROW : KEEP;
    oc.req = n;
}
/* A span of avail bytes at sp was handed out for oc.req: no error was
 * recorded, the call had room to make, avail is the free space and covers
 * the request, and a contiguous block's span starts right after the held
 * bytes. */
static void span_granted(slot *x, const unsigned char *sp, size_t avail)
{
    const bw_writer *w = &x->w;
    CHECK(oc.err0 == BW_OK);
    expect(x, BW_OK, room(x, oc.req));
    oc.made_room = 1;
    CHECK(avail == bw_free_capacity(w) && avail >= oc.req);
    if (x->mode != CHAIN) CHECK(sp == bw_data(w) + bw_len(w));
}
static int too_big(slot *x) { return x->mode == FIXED ? BW_EFULL : BW_EOVERFLOW; }

static void compare(slot *x)
{
    bw_writer *w = &x->w;
    const unsigned char *p = bw_data(w);
    size_t n, i, at = 0;

    CHECK(bw_error(w) == x->err);
    CHECK(bw_errno(w) == (x->err == BW_EIO ? x->syserr : 0));
    CHECK(bw_len(w) == x->len);
    CHECK(bw_tell(w) == x->base + x->len);
    CHECK(bw_capacity(w) == bw_len(w) + bw_free_capacity(w));
    CHECK(bw_writer_pool(w) == (x->mode == FIXED ? NULL : pool));
    CHECK(bw_copy_out(w, 0, tmp, x->len) == BW_OK);
    CHECK(same(tmp, x->d, x->len));
    CHECK(bw_copy_out(w, x->len, tmp, 0) == BW_OK);
    CHECK(bw_copy_out(w, x->len + 1, tmp, 0) == BW_EINVAL);
    CHECK(bw_copy_out(w, 0, tmp, x->len + 1) == BW_EINVAL);
    n = pieces(x);
    for (i = 0; i < n; i++) {
        CHECK(iv[i].iov_len > 0 && iv[i].iov_len <= x->len - at);
        CHECK(same(iv[i].iov_base, x->d + at, iv[i].iov_len));
        at += iv[i].iov_len;
    }
    CHECK(at == x->len);
    if (n > 1) CHECK(x->mode == CHAIN && p == NULL);
    if (n == 1) CHECK(p == iv[0].iov_base);
    if (x->mode != CHAIN && bw_capacity(w) > 0) CHECK(p != NULL);
    CHECK(bw_error(w) == x->err); /* read-outs never record */
    CHECK(bw_strerror(x->err) != NULL && bw_strerror(x->err)[0] != 0);
}

static void check_guards(void)
{
    int i;
    size_t j;
    for (i = 0; i < NW; i++) {
        slot *x = &slots[i];
        if (x->mode != FIXED || x->fbuf == NULL) continue;
        for (j = x->fsize; j < sizeof x->fmem; j++) CHECK(x->fmem[j] == guard_byte(j));
    }
}

static void post(slot *x)
{
    bw_writer *w = &x->w;
    sinkst *k = &x->sk;
    int e = errno, i;
    bw_pool_stats st;

    TRACE("    -> req %zu kind %d sink calls %ld | model len %zu base %" PRIu64 " err %d | lib len %zu tell %" PRIu64
          " err %d free %zu\n", oc.req, oc.kind, k->calls, x->len, x->base, x->err, bw_len(w), bw_tell(w), bw_error(w),
          bw_free_capacity(w));

    for (i = 0; i < NW; i++)
        if (&slots[i] != x) CHECK(slots[i].sk.calls == 0);
    if (x->mode == STREAM) { /* what left the buffer went to the sink, in order */
        uint64_t lb = bw_tell(w) - bw_len(w);
        size_t sent;
        CHECK(lb >= x->base && lb - x->base <= x->len);
        sent = (size_t)(lb - x->base);
        CHECK(k->n == sent && same(k->rcv, x->d, sent));
        m_drop(x, sent);
        k->n = 0;
    }
    CHECK(k->n == 0);
    if (k->calls) CHECK(oc.err0 == BW_OK && oc.kind == GROW && oc.req > oc.free0);
    if (k->fails) CHECK(x->err == BW_EIO && k->after_fail == 0 && e == k->err_no);
    if (oc.err0 == BW_OK && x->err == BW_EIO) x->syserr = k->err_no;
    bw_pool_get_stats(pool, &st);
    if (oc.zero || x->mode == FIXED) CHECK(st.rents == oc.rents0 && calls == oc.calls0);

    /* Blocks (white-box: w.data, w.cap are the block and its size). */
    if (x->mode == CONTIG && oc.kind != RESET) {
        int moved = w->data != oc.blk0 || w->cap != oc.cap0;
        int failed = oc.err0 == BW_OK && x->err != BW_OK && !oc.made_room;
        if (oc.kind == KEEP || oc.err0 != BW_OK || failed || oc.req <= oc.free0) CHECK(!moved);
        else if (moved && oc.cap0 != 0 && oc.req <= 4 * MAX_LEN) {
            CHECK(w->cap >= 2 * oc.cap0);
            /* out of the caller's buffer, the learned size if larger */
            size_t first = learn_size && x->isize && oc.blk0 == x->ibuf ? st.learned_size : 0;
            /* the growth rule's size, or towards the learned jump within
             * the bound: at most 16 x the bytes needed from the allocator;
             * or the learned jump's size itself, a block the pool held
             * idle (no allocator call) */
            size_t bound = learned_jump ? 16 * (oc.held0 + oc.req) : 0;
            size_t idle = learned_jump && calls == oc.calls0 ? st.learned_large_size : 0;
            CHECK(w->cap <= MAX(MAX(class_of(MAX(2 * oc.cap0, oc.held0 + oc.req)), first),
                                MAX(bound, idle)));
        }
    }
    if (x->mode == CONTIG) {
        if (x->isize && w->data == x->ibuf) CHECK(w->cap == x->isize);
        else if (w->cap && !bypass) CHECK(is_pow2(w->cap) && w->cap >= minblk);
    }
    if (x->mode == STREAM && w->cap) CHECK(w->cap >= x->sbuf);
    if (x->mode == FIXED) {
        CHECK(bw_capacity(w) <= x->fsize);
        if (x->len == 0 && (oc.consumed || oc.fresh) && x->err == BW_OK)
            CHECK(bw_free_capacity(w) == MIN(x->fsize, lim_room(x)));
    }
    /* When everything held was consumed the start is back at the block's
     * beginning (bw_consume). */
    if (oc.consumed && x->mode != CHAIN && x->len == 0 && x->err == BW_OK)
        CHECK(bw_free_capacity(w) == MIN(w->cap, lim_room(x)));
    CHECK(bw_free_capacity(w) <= lim_room(x)); /* no span past the limit */
    if (x->err != BW_OK) CHECK(bw_free_capacity(w) == 0); /* every write fails */

    compare(x);
    /* Segmented blocks never move: the first byte held before, if still
     * held, is where it was (iv is x's, from compare). */
    if (x->mode == CHAIN && oc.p0 && oc.kind != RESET && !oc.moves && oc.pos0 >= x->base &&
        oc.pos0 < x->base + x->len) {
        size_t off = (size_t)(oc.pos0 - x->base), j = 0;
        while (off >= iv[j].iov_len) off -= iv[j++].iov_len;
        CHECK((const unsigned char *)iv[j].iov_base + off == oc.p0);
    }
    check_guards();
}

/* A size for a call: often at an edge (the free capacity, or a fixed
 * writer's room over consumed bytes, minus 1, exactly, plus 1), else
 * 0..max. At most left. */
static size_t pick_size(in *s, slot *x, size_t max, size_t left)
{
    unsigned how = u8(s);
    size_t n;
    if (how < 80) {
        n = x->mode == FIXED && (how & 4) ? x->fsize - x->len : bw_free_capacity(&x->w);
        n = n + (how & 3) - 1;   /* -1, 0, +1, +2 (wraps to SIZE_MAX for 0 - 1) */
        if (n > max) n = u16(s) % (max + 1);
    } else {
        n = u16(s) % (max + 1);
    }
    return MIN(n, left);
}

/* A position near the held range: inside, before it (consumed or sent),
 * past bw_tell, or where pos + n wraps. */
static uint64_t pick_pos(in *s, slot *x)
{
    uint64_t tell = x->base + x->len;
    size_t d = u16(s);
    switch (u8(s) % 8) {
    case 0: case 1: case 2: return x->base + d % (x->len + 1);
    case 3: return tell - d % 16;
    case 4: return x->base - 1 - d % 8;
    case 5: return tell + 1 + d % 8;
    case 6: return UINT64_MAX - d % 8;
    default: return u64(s);
    }
}

/* ------------------------------------------------------------- init -- */
static void reinit(in *s, slot *x)
{
    bw_writer *w = &x->w;
    unsigned how = u8(s) % 12, bad = u8(s) % 8 == 0;
    size_t n;
    int rc, i;

    pre(x);
    TRACE("w%d init how %u bad %u\n", (int)(x - slots), how, bad);
    oc.kind = RESET;
    oc.zero = oc.fresh = 1;
    bw_release(w);
    m_reset(x);
    x->limit = 0; /* every init's */
    x->nosink = 0;
    x->sbuf = x->fsize = x->isize = 0;
    x->fbuf = NULL;
    if (how < 3) { /* contiguous, maybe with an initial capacity */
        x->mode = CONTIG;
        bw_pool_stats st;
        n = bad ? huge(s) : (u8(s) & 1) ? u16(s) : 0;
        oc.zero = n == 0;
        bw_pool_get_stats(pool, &st);
        rc = bw_init(w, pool, n);
        expect(x, rc, bad ? BW_EOVERFLOW : BW_OK);
        if (rc == BW_OK && n && !learn_size) CHECK(w->cap == rent_of(n));
        if (rc == BW_OK && n && learn_size) /* the larger of n and the learned size */
            CHECK(w->cap >= rent_of(n) && w->cap <= MAX(class_of(n), st.learned_size));
    } else if (how < 5) { /* contiguous in a caller's buffer */
        x->mode = CONTIG;
        n = 1 + u8(s) % sizeof x->ibuf;
        if (bad && (u8(s) & 1)) rc = bw_init_buffer(w, pool, NULL, n);
        else rc = bw_init_buffer(w, pool, x->ibuf, bad ? 0 : n);
        if (expect(x, rc, bad ? BW_EINVAL : BW_OK)) x->isize = n;
    } else if (how < 7) {
        x->mode = CHAIN;
        expect(x, bw_init_chain(w, pool), BW_OK);
    } else if (how < 10) { /* streaming into the scripted sink, or none */
        unsigned sz = u8(s) % 8;
        x->mode = STREAM;
        n = sz == 0 ? 0 : sz == 1 ? huge(s) : 1 + u16(s) % 4096;
        for (i = 0; i < SCRIPT; i++) x->sk.script[i] = (unsigned char)u8(s);
        x->sk.at = 0;
        if (bad) { /* no sink; with a huge size either error may come first */
            rc = bw_init_sink(w, pool, n, NULL, NULL);
            CHECK(rc == BW_EINVAL || (sz == 1 && rc == BW_EOVERFLOW));
            x->err = rc;
            x->nosink = 1;
        } else {
            rc = bw_init_sink(w, pool, n, sink, &x->sk);
            if (expect(x, rc, sz == 1 ? BW_EOVERFLOW : BW_OK))
                x->sbuf = n ? (bypass && n <= threshold ? n : class_of(n)) : 64u << 10;
            else x->nosink = 1; /* a failed init: whether it kept the sink is not said */
        }
    } else { /* fixed, with guard bytes after it */
        x->mode = FIXED;
        for (n = 0; n < sizeof x->fmem; n++) x->fmem[n] = guard_byte(n);
        n = u16(s) % (FIX_MAX + 1);
        if (bad) {
            rc = bw_init_fixed(w, NULL, n);
            if (n) expect(x, rc, BW_EINVAL);
            else expect(x, rc, BW_OK);
        } else {
            rc = bw_init_fixed(w, x->fmem, n);
            if (expect(x, rc, BW_OK)) {
                x->fbuf = x->fmem;
                x->fsize = n;
            }
        }
    }
    post(x);
}

/* ------------------------------------------------------- operations -- */
enum {
    OP_WRITE, OP_ALIAS, OP_PUT, OP_VARINT, OP_DEC, OP_HEX, OP_PUTS, OP_PRINTF, OP_RESERVE,
    OP_SPAN, OP_PATCH, OP_TRUNCATE, OP_CONSUME, OP_CLEAR, OP_CLEAR_ERROR, OP_RELEASE, OP_DETACH,
    OP_PULLUP, OP_CSTR, OP_READ, OP_APPEND, OP_FLUSH, OP_ODD_WRITE, OP_REINIT, OP_SCRIPT,
    OP_FILE, OP_CURSOR, OP_PUTC, OP_DETACH_MALLOC, OP_APPEND_REF, OP_MOVE, OP_LIMIT,
    OP_DEC_FLOAT, OP_TRY_SPAN, OP_FIRST_BUFFER, OP_PAD, OP_BLOCK_SIZE, NOPS
};

static const char *const op_names[] = {
    "write", "write-alias", "put", "varint", "dec", "hex", "puts", "printf", "reserve",
    "span+advance", "patch", "truncate", "consume", "clear", "clear_error", "release", "detach",
    "pullup", "cstr", "read", "append_writer", "flush", "odd-write", "reinit", "script",
    "fopen-write", "cursor", "putc", "detach_malloc", "append_ref", "move", "set_limit",
    "dec_float", "try_span", "set_first_buffer", "pad", "set_block_size"};
static const char *const mode_names[] = {"contig", "chain", "stream", "fixed"};

/* bw_cstr when the rules say it succeeds (NULL held bytes are fine: the
 * caller's printf stops at the first NUL); on the ways it may fail instead
 * (an allocation, a streaming or fixed buffer without a byte to spare) the
 * outcome is checked and false returned. */
static int cstr_first(slot *x, const char **c)
{
    bw_writer *w = &x->w;
    int ok = x->err == BW_OK && (x->mode == CONTIG || x->mode == CHAIN ||
                                 (x->mode == STREAM && x->len < w->cap) ||
                                 (x->mode == FIXED && x->len < x->fsize));
    oc.kind = GROW;
    oc.req = 1;
    oc.moves = 1;
    if (!ok) {
        post(x);
        return 0;
    }
    *c = bw_cstr(w);
    if (*c == NULL) {
        CHECK(failed_now && (x->mode == CONTIG || x->mode == CHAIN));
        none(x, bw_error(w), BW_OK);
        post(x);
        return 0;
    }
    CHECK(same(*c, x->d, x->len) && (*c)[x->len] == 0);
    compare(x);
    return 1;
}

#ifdef BW_HAVE_FILE_ADAPTER
/* fwrite, fputs or fprintf through bw_fopen, of the writer's own held bytes
 * in a contiguous or segmented writer (the FILE writes into the writer in
 * pieces while it reads them), of scratch bytes otherwise (bufwriter.h: a
 * streaming or fixed writer sends or moves them in place). The FILE hands
 * its bytes over in pieces, so a failure may leave any prefix. */
static void op_file(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, avail = 0, got;
    unsigned how = u8(s) % 3;
    const unsigned char *src = scratch;
    FILE *f;
    int ok = 1;
    if (x->mode == CONTIG || x->mode == CHAIN) {
        const char *c;
        if (how == 1) { /* fputs(bw_cstr(w)) */
            if (x->len == 0 || memchr(x->d, 0, x->len) != NULL || x->len > left) return;
            if (!cstr_first(x, &c)) return;
            pre(x);
            src = (const unsigned char *)c;
            n = x->len;
        } else if ((src = alias(s, x, &avail)) != NULL) {
            n = MIN(u16(s) % (avail + 1), MIN(left, 4 * MAX_OP));
        } else {
            src = scratch;
        }
    }
    if (src == scratch) {
        n = MIN(u16(s) % (MAX_OP + 1), left);
        fill(scratch, n, u8(s));
        scratch[n] = 0;
        if (how == 1) n = strlen((const char *)scratch);
    }
    if (how == 2) { /* "%.*s" stops at a NUL */
        const unsigned char *z = (const unsigned char *)memchr(src, 0, n);
        if (z != NULL) n = (size_t)(z - src);
    }
    memcpy(expb, src, n);
    oc.req = n;
    oc.moves = 1;
    errno = 0;
    f = bw_fopen(w);
    CHECK(f != NULL);
    if (how == 1) ok = fputs((const char *)src, f) >= 0;
    else if (how == 2) ok = fprintf(f, "%.*s", (int)n, (const char *)src) == (int)n;
    else ok = fwrite(src, 1, n, f) == n;
    TRACE("    fopen: how %u, %zu bytes%s\n", how, n, src == scratch ? "" : " (own)");
    ok = fclose(f) == 0 && ok;
    got = (size_t)(bw_tell(w) - oc.tell0);
    CHECK(got <= n);
    if (ok) CHECK(got == n);
    else CHECK(bw_error(w) != BW_OK);
    {
        /* In pieces: a piece may meet a fixed buffer's end before the
         * limit that the whole call would pass. */
        int want = ok ? BW_OK : room(x, n);
        if (!ok && x->err == BW_OK && want == BW_ELIMIT && bw_error(w) == BW_EFULL &&
            x->mode == FIXED)
            want = BW_EFULL;
        expect(x, bw_error(w), want);
    }
    m_append(x, expb, got); /* what was accepted is checked against the writer */
    if (x->sk.fails) { /* the FILE reports a failed sink as EIO (bufwriter.h) */
        CHECK(errno == EIO);
        errno = x->sk.err_no;
    }
    post(x);
}
#endif

/* dec_float's other half: the flags' put, and the room form at a room,
 * against dec_float's text made JSON's by hand (dec_float_flags). Unknown
 * flag bits 1 time in 4; neither they nor BW_ENONFINITE are recorded. */
static void dec_flags(in *s, slot *x, int is32)
{
    bw_writer *w = &x->w;
    unsigned flags = u8(s), k = flags >> 4 & 3;
    double d = pick_double(s);
    size_t fr = u8(s) % (BW_DEC_F64_MAX + 2), n;
    int rc, bad;
    flags = k == 0 ? flags : flags & BW_DEC_JSON_REAL;
    bad = (flags & ~(unsigned)BW_DEC_JSON_REAL) != 0;
    n = dec_float_flags(expb, d, is32, flags & BW_DEC_JSON_REAL);
    check_fmt_dec(d, is32, flags, fr, expb, n);
    if (n > MAX_LEN - x->len) return;
    oc.req = n;
    rc = is32 ? bw_put_dec_f32_flags(w, (float)d, flags) : bw_put_dec_f64_flags(w, d, flags);
    if (x->err != BW_OK) {
        none(x, rc, x->err);
    } else if (bad || n == 0) { /* the writer as it was */
        CHECK(rc == (bad ? BW_EINVAL : BW_ENONFINITE));
        CHECK(bw_error(w) == BW_OK && bw_tell(w) == oc.tell0);
    } else {
        wrote(x, rc, n, room(x, n));
    }
}

static void op_writer(in *s, slot *x, unsigned op)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, k, avail = 0;
    const unsigned char *ap;
    uint64_t v, pos;
    int rc;

    TRACE("w%d (%s) %s: len %zu base %" PRIu64 " err %d free %zu\n", (int)(x - slots),
          mode_names[x->mode], op_names[op], x->len, x->base, x->err, bw_free_capacity(w));

    if (op == OP_REINIT) {
        reinit(s, x);
        return;
    }
#ifdef BW_HAVE_FILE_ADAPTER
    if (op == OP_FILE) {
        pre(x);
        op_file(s, x);
        return;
    }
#endif
    pre(x);
    if ((op == OP_PUT || op == OP_VARINT || op == OP_DEC) && left < 32) op = NOPS; /* size clamp */
    switch (op) {
    case OP_WRITE:
        n = pick_size(s, x, MAX_OP, left);
        fill(scratch, n, u8(s));
        memcpy(expb, scratch, n);
        oc.req = n;
        oc.zero = n == 0;
        wrote(x, bw_write(w, scratch, n), n, room(x, n));
        break;
    case OP_ALIAS: /* from the writer's own held bytes, maybe growing past them */
        if ((ap = alias(s, x, &avail)) == NULL) break;
        n = MIN(MIN(u16(s) % (avail + 1), left), 4 * MAX_OP);
        memcpy(expb, ap, n);
        oc.req = n;
        oc.zero = n == 0;
        wrote(x, bw_write(w, ap, n), n, room(x, n));
        break;
    case OP_PUT: {
        unsigned t = u8(s) % NTYPES;
        v = u64(s);
        n = enc_typed(expb, t, v);
        oc.req = n;
        wrote(x, put_typed(w, t, v), n, room(x, n));
        break;
    }
    case OP_VARINT: {
        int sgn = (int)(u8(s) & 1);
        v = u64(s);
        v >>= u8(s) % 64;
        n = leb(expb, sgn ? (v << 1) ^ (0 - (v >> 63)) : v);
        oc.req = 10; /* a put may ask for room for the longest */
        rc = sgn ? bw_put_svarint(w, (int64_t)v) : bw_put_uvarint(w, v);
        wrote(x, rc, n, room(x, n));
        break;
    }
    case OP_DEC: {
        static const uint64_t edge[] = {0, 9, 10, UINT64_MAX, (uint64_t)INT64_MAX,
                                        (uint64_t)INT64_MAX + 1, 99999, 100000};
        int sgn = (int)(u8(s) & 1);
        if (u8(s) & 1) {
            v = edge[u8(s) % 8];
        } else {
            v = u64(s);
            v >>= u8(s) % 64;
        }
        n = (size_t)(sgn ? snprintf((char *)expb, 32, "%" PRId64, (int64_t)v)
                         : snprintf((char *)expb, 32, "%" PRIu64, v));
        oc.req = 20;
        rc = sgn ? bw_put_dec_i64(w, (int64_t)v) : bw_put_dec_u64(w, v);
        wrote(x, rc, n, room(x, n));
        break;
    }
    case OP_HEX: {
        unsigned how = u8(s) % 8;
        const unsigned char *src = scratch;
        if (how == 0) { /* 2n is not representable: nothing is read */
            static const size_t h[] = {SIZE_MAX, SIZE_MAX / 2 + 1, (size_t)PTRDIFF_MAX / 2 + 1};
            oc.kind = KEEP;
            none(x, bw_put_hex(w, scratch, h[u8(s) % 3]), too_big(x));
            break;
        }
        if (how == 1) {
            oc.kind = KEEP;
            none(x, bw_put_hex(w, NULL, 1 + u8(s) % 4), BW_EINVAL);
            break;
        }
        if (how < 5 && (ap = alias(s, x, &avail)) != NULL) {
            src = ap;
            n = MIN(u16(s) % (avail + 1), MIN(MAX_OP / 2, left / 2));
        } else {
            n = MIN(u16(s) % (MAX_OP / 2 + 1), left / 2);
            fill(scratch, n, u8(s));
        }
        hex(expb, src, n);
        oc.req = 2 * n;
        oc.zero = n == 0;
        wrote(x, bw_put_hex(w, src, n), 2 * n, room(x, 2 * n));
        break;
    }
    case OP_PUTS: {
        static const char *const strs[] = {"", "a", "hello, world", "%s%d\\n"};
        unsigned how = u8(s) % 8;
        const char *str = strs[u8(s) % 4];
        if (how == 0) {
            oc.kind = KEEP;
            none(x, bw_puts(w, NULL), BW_EINVAL);
            break;
        }
        if (how < 4 && (ap = alias(s, x, &avail)) != NULL && memchr(ap, 0, avail) != NULL)
            str = (const char *)ap; /* a NUL-terminated run of held bytes */
        n = strlen(str);
        if (n > left) break;
        memcpy(expb, str, n);
        oc.req = n;
        oc.zero = n == 0;
        wrote(x, bw_puts(w, str), n, room(x, n));
        break;
    }
    case OP_PRINTF: {
        char *e = (char *)expb;
        unsigned f = u8(s) % 8;
        int len = 0, i = (int)u64(s);
        if (left < 9000) break; /* every format below writes less */
        switch (f) {
        case 0: {
            int width = (int)(u8(s) % 100);
            len = snprintf(e, 256, "[%*d|%x|%s]", width, i, (unsigned)i, "str");
            rc = bw_printf(w, "[%*d|%x|%s]", width, i, (unsigned)i, "str");
            break;
        }
        case 1: case 2: { /* an argument in the held bytes, long output */
            int pad = (int)(u16(s) % 4001), prec = 3, first = f == 1;
            const char *arg = "abc";
            if ((ap = alias(s, x, &avail)) != NULL) {
                prec = (int)MIN(u16(s) % (avail + 1), 512);
                arg = (const char *)ap;
            }
            memcpy(scratch, arg, (size_t)prec);
            if (first) {
                len = snprintf(e, 8192, "%.*s%*s", prec, (const char *)scratch, pad, "");
                rc = bw_printf(w, "%.*s%*s", prec, arg, pad, "");
            } else {
                len = snprintf(e, 8192, "%*s%.*s", pad, "", prec, (const char *)scratch);
                rc = bw_printf(w, "%*s%.*s", pad, "", prec, arg);
            }
            break;
        }
        case 3:
            rc = bw_printf(w, "%s", "");
            break;
        case 4: { /* an encoding error */
            wchar_t ws[2] = {(wchar_t)0xD800, 0};
            len = snprintf(e, 16, "%ls", ws);
            rc = bw_printf(w, "%ls", ws);
            break;
        }
        case 5:
            len = snprintf(e, 256, "%d-%s-%u", i, "v", (unsigned)i >> 3);
            rc = vpf(w, "%d-%s-%u", i, "v", (unsigned)i >> 3);
            break;
        case 6: /* NUL bytes in the output */
            len = snprintf(e, 256, "%c%s%c%c", 0, "nul", 0, (char)i);
            rc = bw_printf(w, "%c%s%c%c", 0, "nul", 0, (char)i);
            break;
        default: { /* bw_cstr's string as the arguments: its NUL is where the
                      output starts */
            int pad = (int)(u16(s) % 3001);
            const char *c;
            if (!cstr_first(x, &c)) return;
            pre(x); /* the printf alone from here */
            memcpy(scratch, c, MIN(x->len, 512));
            scratch[MIN(x->len, 512)] = 0;
            len = snprintf(e, 8192, "%.512s|%*s|%.3s", (const char *)scratch, pad, "",
                           (const char *)scratch);
            rc = bw_printf(w, "%.512s|%*s|%.3s", c, pad, "", c);
            break;
        }
        }
        if (len < 0) {
            oc.kind = KEEP;
            none(x, rc, BW_EINVAL);
            break;
        }
        n = (size_t)len;
        oc.req = n;
        oc.zero = n == 0;
        wrote(x, rc, n, room(x, n));
        break;
    }
    case OP_RESERVE:
        if ((u8(s) & 7) == 0) {
            n = huge(s);
            big_size(x, n);
            none(x, bw_reserve(w, n), too_big_limited(x));
            break;
        }
        n = pick_size(s, x, MAX_LEN, MAX_LEN);
        oc.req = n;
        oc.zero = n == 0;
        rc = bw_reserve(w, n);
        none(x, rc, room(x, n));
        if (rc == BW_OK) CHECK(bw_free_capacity(w) >= n);
        break;
    case OP_SPAN: {
        unsigned char *sp;
        size_t hint;
        if ((u8(s) & 7) == 0) {
            hint = huge(s);
            big_size(x, hint);
            avail = 12345;
            sp = (unsigned char *)bw_get_span(w, hint, &avail);
            CHECK(sp == NULL && avail == 0);
            none(x, bw_error(w), too_big_limited(x));
            break;
        }
        hint = pick_size(s, x, MAX_OP, left);
        oc.req = MAX(hint, 1);
        avail = 12345;
        sp = (unsigned char *)bw_get_span(w, hint, &avail);
        k = u16(s);
        if (sp == NULL) {
            CHECK(avail == 0 && bw_error(w) != BW_OK);
            none(x, bw_error(w), room(x, oc.req));
            CHECK(bw_advance(w, k % 4) == x->err);
            break;
        }
        span_granted(x, sp, avail);
        if ((u8(s) & 3) == 0) k = avail + 1 + k % 4; /* past the free space */
        else k = MIN(k % (avail + 1), left);
        if (k <= avail) {
            fill(sp, k, u8(s));
            memcpy(expb, sp, k);
        }
        rc = k <= avail ? BW_OK : past_free(x, k); /* before the advance */
        wrote(x, bw_advance(w, k), k <= avail ? k : 0, rc);
        break;
    }
    case OP_CURSOR: { /* a span, the bw_enc_* encoders into it, bw_advance_to */
        unsigned char *sp, *p, *q, enc[64];
        const void *end;
        size_t hint = u8(s) % 80, cnt = u8(s) % 16, i, room_left, en;
        unsigned how = u8(s) % 8;
        oc.req = MAX(hint, 1);
        avail = 12345;
        sp = (unsigned char *)bw_get_span(w, hint, &avail);
        if (sp == NULL) {
            CHECK(avail == 0 && bw_error(w) != BW_OK);
            none(x, bw_error(w), room(x, oc.req));
            CHECK(bw_advance_to(w, NULL) == x->err);
            break;
        }
        span_granted(x, sp, avail);
        room_left = MIN(avail, left);
        p = sp;
        for (i = 0; i < cnt; i++) {
            unsigned kind = u8(s) % (NTYPES + 5);
            v = u64(s);
            if (kind >= NTYPES + 3) { /* decimal text: room for the longest first */
                int is32 = kind == NTYPES + 4;
                double d;
                if (room_left < (is32 ? BW_DEC_F32_MAX : BW_DEC_F64_MAX)) break;
                memcpy(&d, &v, sizeof d);
                if (u8(s) & 1) d = pick_double(s);
                en = dec_float(enc, d, is32);
                q = is32 ? bw_enc_dec_f32(p, (float)d) : bw_enc_dec_f64(p, d);
            } else if (kind < NTYPES) {
                en = enc_typed(enc, kind, v);
                if (en > room_left) break;
                q = cursor_typed(p, kind, v);
            } else if (kind == NTYPES) {
                v >>= u8(s) % 64;
                en = leb(enc, v);
                if (en > room_left) break;
                q = bw_enc_uvarint(p, v);
            } else if (kind == NTYPES + 1) {
                v >>= u8(s) % 64;
                en = leb(enc, (v << 1) ^ (0 - (v >> 63)));
                if (en > room_left) break;
                q = bw_enc_svarint(p, (int64_t)v);
            } else {
                en = MIN((size_t)(v % 65), room_left);
                fill(enc, en, (unsigned)(v >> 8));
                q = bw_enc_bytes(p, en != 0 ? enc : NULL, en);
            }
            CHECK(q == p + en && memcmp(p, enc, en) == 0);
            p = q;
            room_left -= en;
        }
        k = (size_t)(p - sp);
        memcpy(expb, sp, k);
        /* The end: NULL, before the span's start, past its room, the start
         * itself, or where the encoders stopped (addresses computed as
         * integers: they may lie outside the block). */
        switch (how) {
        case 0: end = NULL; break;
        case 1: end = (const void *)((uintptr_t)sp - 1 - u8(s) % 8); break;
        case 2: end = (const void *)((uintptr_t)sp + avail + 1 + u8(s) % 8); break;
        case 3: end = sp; k = 0; break;
        default: end = p; break;
        }
        TRACE("    cursor: %zu encoded, end %u, avail %zu\n", (size_t)(p - sp), how, avail);
        rc = how <= 1 ? BW_EINVAL : how == 2 ? past_free(x, (size_t)((uintptr_t)end - (uintptr_t)sp))
                                             : BW_OK;
        wrote(x, bw_advance_to(w, end), how <= 2 ? 0 : k, rc);
        break;
    }
    case OP_PATCH: {
        int typed = (int)(u8(s) & 1);
        const void *src = scratch;
        int valid;
        oc.kind = KEEP;
        oc.moves = x->mode == CHAIN; /* a reference patched becomes a block */
        pos = pick_pos(s, x);
        if (typed) {
            unsigned t = u8(s) % NTYPES;
            v = u64(s);
            n = enc_typed(expb, t, v);
            rc = patch_typed(w, t, pos, v);
        } else {
            n = u8(s) % 17;
            if ((u8(s) & 1) && (ap = alias(s, x, &avail)) != NULL) {
                src = ap; /* may overlap the bytes it replaces */
                n = MIN(n, avail);
            } else {
                fill(scratch, n, u8(s));
            }
            memcpy(expb, src, n);
            oc.zero = n == 0;
            rc = bw_patch(w, pos, src, n);
        }
        valid = pos >= x->base && pos <= oc.tell0 && n <= oc.tell0 - pos;
        TRACE("    patch at %" PRIu64 ", %zu bytes%s\n", pos, n,
              typed ? " (typed)" : src == scratch ? "" : " (own)");
        if (expect_always(x, rc, n == 0 || valid ? BW_OK : BW_EINVAL) && n)
            memcpy(x->d + (pos - x->base), expb, n);
        CHECK(bw_tell(w) == oc.tell0);
        break;
    }
    case OP_TRUNCATE:
        oc.kind = KEEP;
        pos = pick_pos(s, x);
        oc.zero = pos == oc.tell0;
        if (expect_always(x, bw_truncate(w, pos), pos >= x->base && pos <= oc.tell0 ? BW_OK : BW_EINVAL))
            x->len = (size_t)(pos - x->base);
        break;
    case OP_CONSUME: /* works while an error is recorded */
        oc.kind = KEEP;
        n = (u8(s) & 3) == 0 ? x->len + 1 + u8(s) % 4 : u16(s) % (x->len + 1);
        oc.zero = n == 0;
        rc = bw_consume(w, n);
        if (n <= x->len) {
            CHECK(rc == BW_OK);
            m_drop(x, n);
            oc.consumed = n > 0;
        } else {
            CHECK(rc == BW_EINVAL || (x->err != BW_OK && rc == x->err));
            if (x->err == BW_OK) x->err = BW_EINVAL;
        }
        break;
    case OP_CLEAR:
        oc.kind = KEEP;
        bw_clear(w); /* bw_tell goes back to the first dropped byte */
        x->len = 0;
        x->err = BW_OK;
        break;
    case OP_CLEAR_ERROR: /* and often retry the output: clear_error + flush */
        oc.kind = KEEP;
        bw_clear_error(w);
        x->err = oc.err0 = BW_OK;
        if (u8(s) & 1) break;
        /* fall through */
    case OP_FLUSH:
        oc.kind = x->mode == STREAM ? GROW : KEEP;
        oc.req = SIZE_MAX;
        oc.zero = x->len == 0;
        rc = bw_flush(w);
        if (x->mode != STREAM) CHECK(rc == x->err);
        else if (expect(x, rc, BW_OK)) CHECK(bw_len(w) == 0);
        break;
    case OP_RELEASE:
        oc.kind = RESET;
        oc.fresh = 1;
        bw_release(w);
        m_reset(x);
        if (x->mode == CONTIG) CHECK(w->data != x->ibuf || x->isize == 0);
        break;
    case OP_DETACH: {
        size_t len = 7, cap = 7;
        void *b;
        oc.kind = RESET;
        b = bw_detach(w, &len, &cap);
        if (x->mode == FIXED) {
            CHECK(b == NULL);
            if (x->err == BW_OK) x->err = BW_EINVAL;
        } else if (b == NULL && bw_error(w) != BW_OK) { /* a needed copy failed: nothing changed */
            CHECK(failed_now);
            if (x->err == BW_OK) x->err = BW_ENOMEM;
        } else if (b == NULL) { /* no storage */
            CHECK(x->len == 0 && len == 0 && cap == 0);
            m_reset(x);
        } else {
            CHECK(len == x->len && cap >= len && same(b, x->d, len));
            CHECK(b != x->ibuf && b != x->fmem);
            if (x->mode == CONTIG && !bypass) CHECK(is_pow2(cap));
            if (x->mode == CHAIN) CHECK(cap % 16 == 0); /* its link stays aligned */
            CHECK(bw_pool_return(bw_writer_pool(w), b, cap) == BW_OK);
            m_reset(x);
        }
        break;
    }
    case OP_PULLUP: {
        const unsigned char *p;
        oc.kind = x->mode == CHAIN ? GROW : KEEP;
        oc.zero = x->mode != CHAIN; /* already contiguous: no allocation */
        oc.moves = 1;
        p = bw_pullup(w);
        if (oc.err0 != BW_OK) {
            CHECK(p == NULL);
        } else if (p != NULL) {
            CHECK(same(p, x->d, x->len) && p == bw_data(w));
        } else if (bw_error(w) == BW_OK) {
            CHECK(x->len == 0);
        } else {
            none(x, bw_error(w), BW_OK);
        }
        break;
    }
    case OP_CSTR: {
        const char *c;
        int ok; /* the rules' outcome; -1: either ("" or BW_EFULL) */
        oc.kind = x->mode == CONTIG || x->mode == CHAIN ? GROW : KEEP;
        oc.req = 1;
        oc.moves = 1;
        /* no storage: a static ""; streaming and fixed never allocate here */
        oc.zero = (x->mode == CONTIG && oc.blk0 == NULL) || x->mode == STREAM || x->mode == FIXED;
        if (x->mode == FIXED) ok = x->len < x->fsize ? 1 : x->fsize == 0 ? -1 : 0;
        else if (x->mode == STREAM) ok = x->len < w->cap || (w->cap == 0 && x->len == 0);
        else ok = 1;
        c = bw_cstr(w);
        if (oc.err0 != BW_OK) {
            CHECK(c == NULL);
        } else if (c != NULL) {
            CHECK(ok != 0 && same(c, x->d, x->len) && c[x->len] == 0);
            if (x->len) CHECK((const unsigned char *)c == bw_data(w));
        } else if (ok == 1) { /* an allocation failed */
            CHECK(x->mode == CONTIG || x->mode == CHAIN);
            none(x, bw_error(w), BW_OK);
        } else { /* no byte for the NUL: nothing recorded */
            CHECK(bw_error(w) == BW_OK);
        }
        break;
    }
    case OP_READ: { /* copy_out of a range, in or out; iovec into a short array */
        size_t off = u16(s) % (x->len + 3), m, total, i, at = 0;
        oc.kind = KEEP;
        n = u16(s) % (x->len + 3);
        rc = bw_copy_out(w, off, tmp, n);
        if (off <= x->len && n <= x->len - off) {
            CHECK(rc == BW_OK && same(tmp, x->d + off, n));
        } else {
            CHECK(rc == BW_EINVAL);
        }
        total = pieces(x);
        m = u8(s) % (total + 1);
        if (total) memset(iv, 0, total * sizeof *iv);
        CHECK(bw_iovec(w, iv, m) == total);
        for (i = 0; i < total; i++) {
            if (i >= m) {
                CHECK(iv[i].iov_base == NULL && iv[i].iov_len == 0);
                continue;
            }
            CHECK(iv[i].iov_len > 0 && same(iv[i].iov_base, x->d + at, iv[i].iov_len));
            at += iv[i].iov_len;
        }
        break;
    }
    case OP_APPEND: { /* src's held bytes, any modes, src == dst too */
        slot *y = &slots[u8(s) % NW];
        n = y->len;
        if (n > left) break;
        memcpy(expb, y->d, n);
        oc.req = n;
        oc.zero = n == 0;
        wrote(x, bw_append_writer(w, &y->w), n, room(x, n));
        if (y != x) compare(y);
        break;
    }
    case OP_ODD_WRITE:
        oc.kind = KEEP;
        if (u8(s) & 1) { /* NULL: fine for 0 bytes, BW_EINVAL for more */
            n = u8(s) & 1;
            oc.zero = n == 0;
            none(x, bw_write(w, NULL, n), n ? BW_EINVAL : BW_OK);
        } else { /* a size no writer can take: refused before anything is read */
            n = huge(s);
            if (x->mode == STREAM && n <= (size_t)PTRDIFF_MAX) n = SIZE_MAX;
            oc.big_ok = n == (size_t)PTRDIFF_MAX && x->mode == CHAIN && !x->limit;
            none(x, bw_write(w, scratch, n), too_big_limited(x));
        }
        break;
    case OP_PUTC: {
        int c = (int)u16(s) - 600;
        if (left == 0) break;
        expb[0] = (unsigned char)c;
        oc.req = 1;
        wrote(x, bw_putc(w, c), 1, room(x, 1));
        break;
    }
    case OP_DETACH_MALLOC: {
        size_t len = 7;
        unsigned char *b;
        oc.kind = RESET;
        oc.fresh = 1;
        b = (unsigned char *)bw_detach_malloc(w, &len);
        CHECK(b != NULL); /* malloc, not the hook: it does not fail here */
        CHECK(len == x->len && same(b, x->d, len) && b[len] == 0);
        CHECK(b != x->ibuf && b != x->fmem && b != x->w.data);
        free(b);
        m_reset(x);
        break;
    }
    case OP_APPEND_REF: {
        struct refst *r = NULL;
        struct linkst *l;
        const unsigned char *src;
        int i, own = u8(s) & 1, caller;
        for (i = 0; i < NLINK && links[i].live; i++) {}
        if (i == NLINK) break;
        l = &links[i];
        if (own && (ap = alias(s, x, &avail)) != NULL) {
            /* the writer's own bytes: copied when they lie in its blocks,
             * linked again when they lie in a reference */
            src = ap;
            n = MIN(MIN(u16(s) % (avail + 1), left), 4 * MAX_OP);
            r = ref_of(src, n);
        } else {
            for (i = 0; i < NREF && refs[i].links != 0; i++) {}
            if (i == NREF) break;
            r = &refs[i];
            k = u16(s) % MAX_OP;
            n = MIN(u16(s) % (MAX_OP - k + 1), left);
            fill(r->mem, MAX_OP, u8(s));
            src = r->mem + k;
        }
        caller = r != NULL;
        if (r != NULL) r->links++; /* done may come at once */
        l->r = r;
        l->data = src;
        l->n = n;
        l->live = 1;
        memcpy(expb, src, n);
        oc.req = n;
        oc.zero = n == 0;
        rc = bw_append_ref(w, src, n, ref_done, l);
        /* linked only in a segmented writer, caller memory, not empty, and
         * not on failure (done then never comes) */
        if (rc != BW_OK) {
            CHECK(l->live);
            l->live = 0;
            if (r != NULL) r->links--;
        } else {
            CHECK(l->live == (x->mode == CHAIN && n != 0 && caller));
        }
        wrote(x, rc, n, room(x, n));
        break;
    }
    case OP_MOVE: { /* src's held bytes, then src empty */
        slot *y = &slots[u8(s) % NW];
        uint64_t ytell = y->base + y->len;
        long calls1 = calls;
        n = y->len;
        if (y == x || y->mode == STREAM) {
            none(x, bw_move(w, &y->w), BW_EINVAL);
            if (y != x) compare(y);
            break;
        }
        if (n > left) break;
        if (x->err == BW_OK && y->err != BW_OK) { /* returned, not recorded in dst */
            CHECK(bw_move(w, &y->w) == y->err);
            CHECK(bw_tell(w) == oc.tell0);
            compare(y);
            break;
        }
        memcpy(expb, y->d, n);
        oc.req = n;
        oc.zero = n == 0;
        rc = bw_move(w, &y->w);
        if (rc == BW_OK && x->err == BW_OK) {
            /* relinked: nothing copied, nothing rented but dst's piece records */
            if (x->mode == CHAIN && y->mode == CHAIN) CHECK(calls <= calls1 + 1);
            m_drop(y, n);
        }
        CHECK(y->base + y->len == ytell); /* src's positions go on */
        wrote(x, rc, n, room(x, n));
        compare(y);
        break;
    }
    case OP_LIMIT: { /* none, near bw_tell (below it too), or anywhere */
        uint64_t tell = x->base + x->len, lim;
        unsigned how = u8(s) % 4;
        oc.kind = KEEP;
        oc.zero = 1;
        if (how == 0) lim = 0;
        else if (how == 1) lim = tell + u8(s) % 64;
        else if (how == 2) lim = tell > 16 ? tell - u8(s) % 16 : 1;
        else lim = 2 * (uint64_t)u16(s);
        CHECK(bw_set_limit(w, lim) == BW_OK);
        x->limit = lim;
        CHECK(bw_error(w) == x->err && bw_tell(w) == tell);
        break;
    }
    case OP_BLOCK_SIZE: { /* 0, 1 B to 1 MiB (larger blocks would only slow
                            the fuzzer down), or past 1 GiB */
        unsigned how = u8(s) % 4;
        size_t bs = how == 0 ? 0 : how == 1 ? (size_t)u16(s) : how == 2 ? (size_t)1 << (u8(s) % 21)
                                                                        : ((size_t)1 << 30) + 1;
        int ok = x->mode == CHAIN && bs <= ((size_t)1 << 30);
        oc.kind = KEEP;
        oc.zero = 1;
        CHECK(bw_set_block_size(w, bs) == (ok ? BW_OK : BW_EINVAL));
        CHECK(bw_error(w) == x->err);
        break;
    }
    case OP_DEC_FLOAT: { /* the same bytes as the cursor form, checked there */
        unsigned sel = u8(s);
        int is32 = (int)(sel & 1);
        double d;
        if (sel & 2) { /* with BW_DEC_* flags (a bit of this byte: the ops keep their numbers) */
            dec_flags(s, x, is32);
            break;
        }
        d = pick_double(s);
        n = dec_float(expb, d, is32);
        if (n > left) break;
        oc.req = n; /* stored in place when the longest fits, else bw_write */
        rc = is32 ? bw_put_dec_f32(w, (float)d) : bw_put_dec_f64(w, d);
        wrote(x, rc, n, room(x, n));
        break;
    }
    case OP_TRY_SPAN: { /* n free bytes now, or NULL and nothing at all */
        unsigned char *sp;
        size_t want;
        unsigned seed;
        oc.kind = KEEP;
        oc.zero = 1; /* never allocates, sends or moves */
        n = pick_size(s, x, MAX_OP, SIZE_MAX);
        want = MAX(n, 1);
        k = u16(s);
        seed = u8(s);
        sp = (unsigned char *)bw_try_span(w, n);
        TRACE("    try_span %zu: %s (free %zu)\n", n, sp ? "granted" : "NULL", oc.free0);
        CHECK(bw_error(w) == x->err && bw_tell(w) == oc.tell0 && bw_free_capacity(w) == oc.free0);
        if (x->err != BW_OK || want > oc.free0) {
            CHECK(sp == NULL);
            break;
        }
        CHECK(sp != NULL);
        if (x->mode != CHAIN) CHECK(sp == bw_data(w) + bw_len(w));
        k = MIN(k % (n + 1), left);
        fill(sp, k, seed);
        memcpy(expb, sp, k);
        wrote(x, bw_advance_to(w, sp + k), k, BW_OK);
        break;
    }
    case OP_FIRST_BUFFER: { /* a storage-less contiguous writer takes ibuf */
        unsigned how = u8(s) % 8;
        void *buf = how == 0 ? NULL : x->ibuf;
        int want;
        oc.kind = RESET; /* its block may change to the buffer */
        oc.zero = 1;
        n = how == 1 ? 0 : 1 + u8(s) % sizeof x->ibuf;
        want = buf == NULL || n == 0 || x->mode != CONTIG || w->data != NULL ? BW_EINVAL : BW_OK;
        rc = bw_set_first_buffer(w, buf, n);
        if (expect(x, rc, want)) {
            x->isize = n;
            CHECK(w->data == x->ibuf && bw_len(w) == 0);
            CHECK(bw_free_capacity(w) == MIN(n, lim_room(x)));
        }
        CHECK(bw_tell(w) == oc.tell0);
        break;
    }
    case OP_PAD: { /* zeros to a power of two up to BW_PAD_MAX, or a bad one */
        unsigned sh = u8(s) % 16;
        size_t align = sh <= 12 ? (size_t)1 << sh : sh == 13 ? 0 : sh == 14 ? 24 : BW_PAD_MAX * 2;
        if (sh > 12) {
            oc.kind = KEEP;
            oc.zero = 1;
            none(x, bw_pad(w, align), BW_EINVAL);
            break;
        }
        n = (size_t)((0 - oc.tell0) & (uint64_t)(align - 1));
        if (n > left) break;
        memset(expb, 0, n);
        oc.req = n;
        oc.zero = n == 0;
        wrote(x, bw_pad(w, align), n, room(x, n));
        break;
    }
    case OP_SCRIPT: {
        int i;
        oc.kind = KEEP;
        for (i = 0; i < SCRIPT; i++) x->sk.script[i] = (unsigned char)u8(s);
        x->sk.at = 0;
        break;
    }
    default:
        break;
    }
    post(x);
}

/* ------------------------------------------------------------ main -- */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t thresholds[] = {256, 2048, 16384};
    bw_allocator hook = {fa_alloc, fa_realloc, fa_free, NULL};
    struct { void *b; size_t cap; unsigned seed; } blocks[NBLOCKS];
    bw_pool_options o;
    bw_pool_stats st;
    in s = {data, size};
    unsigned cfg, cfg2, i;
    int steps = 0;

    if (tracing < 0) {
        tracing = getenv("FUZZ_TRACE") != NULL;
        CHECK(strcmp(bw_version(), BW_VERSION_STRING) == 0);
    }
    calls = live_blocks = 0;
    failed_now = big_now = 0;
    memset(&o, 0, sizeof o);
    cfg = u8(&s);
    cfg2 = u8(&s);
    o.max_pooled_size = thresholds[cfg % 3];
    o.flags = (cfg & 0x08 ? BW_POOL_NO_THREAD_CACHE : 0) | (cfg & 0x10 ? BW_POOL_ZERO_ON_RETURN : 0) |
              (cfg & 0x20 ? BW_POOL_LEARN_SIZE : 0) |
              (cfg & 0x80 ? BW_POOL_CHECKED | (cfg2 & 4 ? BW_POOL_FILL : 0) : 0);
    if (cfg & 0x40) o.max_large_bytes = 256u << 10;
    o.min_block_size = cfg2 & 2 ? 64 : 0;
    minblk = cfg2 & 2 ? 64 : 16;
    threshold = o.max_pooled_size;
    o.flags |= (cfg2 & 0x08 ? BW_POOL_NO_LEARNED_GROWTH : 0) |
               (cfg2 & 0x20 ? BW_POOL_NO_LARGE_RETENTION : 0);
    learned_jump = !(cfg2 & 0x08);
    learn_size = (cfg & 0x20) != 0;
    o.min_first_block = cfg2 & 0x10 ? 1 : 0; /* the class of the first write, or 512 B */
    if (cfg2 & 0x40) o.decay_ms = BW_DECAY_NEVER;
    bypass = (cfg2 & 0x80) != 0;
    if (bypass) o.flags |= BW_POOL_BYPASS;
    if (cfg2 & 1) hook.realloc = NULL;
    o.allocator = &hook;
    fail_at = (long)u8(&s); /* 0: never */
    CHECK(bw_pool_create(&pool, &o) == BW_OK);
    { /* the pool keeps what it was given, the defaults filled in */
        bw_pool_options r;
        bw_pool_get_options(pool, &r);
        CHECK(r.max_pooled_size == threshold && r.min_block_size == minblk &&
              r.flags == o.flags && r.max_learned_size != 0 && r.allocator != NULL &&
              r.allocator->alloc == hook.alloc && r.allocator->realloc == hook.realloc);
        CHECK(o.max_large_bytes == 0 || r.max_large_bytes == o.max_large_bytes);
    }

    slots = (slot *)calloc(NW, sizeof *slots); /* all-zero writers are valid */
    CHECK(slots != NULL);
    for (i = 0; i < NW; i++) {
        slots[i].d = (unsigned char *)malloc(slots[i].dcap = 256); /* never NULL */
        CHECK(slots[i].d != NULL);
        reinit(&s, &slots[i]);
    }
    memset(blocks, 0, sizeof blocks);

    while (s.n > 0 && steps++ < 500) {
        unsigned what = u8(&s);
        if (what < 216) {
            op_writer(&s, &slots[what % NW], u8(&s) % NOPS);
            /* The state behind the bytes, inline paths' changes included. */
            if (slots[what % NW].w.mode == BW__SEG) bw__seg_check(&slots[what % NW].w);
        } else if (what < 240) { /* raw rent / return with a byte pattern */
            unsigned k = what % NBLOCKS;
            if (blocks[k].b == NULL) {
                size_t want = u16(&s);
                want = MIN(want << (u8(&s) % 8), MAX_LEN);
                failed_now = 0;
                blocks[k].b = bw_pool_rent(pool, want, &blocks[k].cap);
                if (blocks[k].b == NULL) {
                    CHECK(failed_now);
                    continue;
                }
                CHECK(blocks[k].cap >= want && blocks[k].cap == bw_pool_class_size(pool, want));
                blocks[k].seed = u8(&s);
                fill((unsigned char *)blocks[k].b, MIN(blocks[k].cap, 4096), blocks[k].seed);
            } else {
                size_t n = MIN(blocks[k].cap, 4096), j;
                for (j = 0; j < n; j++)
                    CHECK(((unsigned char *)blocks[k].b)[j] == (unsigned char)(j * 31u + blocks[k].seed));
                CHECK(bw_pool_return(pool, blocks[k].b, blocks[k].cap) == BW_OK);
                blocks[k].b = NULL;
            }
        } else if (what < 248) {
            bw_pool_trim(pool);
        } else {
            bw_pool_get_stats(pool, &st);
            CHECK(st.returns <= st.rents && st.hits <= st.rents);
        }
    }

    for (i = 0; i < NBLOCKS; i++)
        if (blocks[i].b) CHECK(bw_pool_return(pool, blocks[i].b, blocks[i].cap) == BW_OK);
    for (i = 0; i < NW; i++) {
        bw_release(&slots[i].w);
        free(slots[i].d);
        free(slots[i].sk.rcv);
    }
    for (i = 0; i < NREF; i++) CHECK(refs[i].links == 0); /* every done was called */
    for (i = 0; i < NLINK; i++) CHECK(!links[i].live);
    check_guards();
    free(slots);
    free(iv);
    iv = NULL;
    ivcap = 0;
    bw_pool_get_stats(pool, &st);
    CHECK(st.outstanding_bytes == 0 && st.rents == st.returns);
    bw_pool_destroy(pool);
    CHECK(live_blocks == 0);
    return 0;
}
