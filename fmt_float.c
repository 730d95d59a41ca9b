/* SPDX-License-Identifier: MIT */
/* fmt_float.c - floating-point text: the shortest decimal that reads back
 * (strtod, strtof) as exactly the value, in printf("%.17g")'s notation.
 *
 * The digits come from the Schubfach method (R. Giulietti, "The Schubfach
 * way to render doubles", 2020; Java's Double.toString since JDK 19),
 * chosen over Ryu, Grisu and Dragonbox for its size and speed: one table of
 * 617 128-bit powers of ten, three 64x128-bit products, no loop and no
 * fallback (Grisu needs one), and in published measurements a little behind
 * Dragonbox and ahead of Ryu (fmtlib's dtoa-benchmark on an M1: Dragonbox
 * 21 ns, Schubfach 25, Ryu 37) with much less to get right.
 *
 * The idea: v = c 2^q rounds back from every decimal in its rounding
 * interval R = [v - gap below / 2, v + gap above / 2] (closed when c is even,
 * as strtod breaks ties to even). With k = floor(log10 of R's width), R is
 * at least 10^k wide and less than 10^(k+1), so it holds at most one multiple of
 * 10^(k+1) and at least one of 10^k. The answer is that multiple of
 * 10^(k+1) when there is one (no shorter decimal can be in R: it would be
 * one too), else the multiple of 10^k in R nearest v, which is floor or ceil
 * of v / 10^k. All of these tests are comparisons of 4 v / 10^k and of R's
 * scaled ends with even integers, and the paper shows that rounding the
 * products with a 126-bit approximation of 10^-k to odd (the floor, with the
 * lowest bit set when bits were dropped) keeps each comparison exact.
 *
 * No allocation, no locale, no libc call but memcpy. */
#include "writer_internal.h" /* bufwriter.h, and the decimal digits bw_put_dec_* use */
#include "fmt_float_table.h"

#include <string.h>

/* The text's steps, inlined into each encoder: the plain ones
 * (bw_enc_dec_f64, _f32) then test no flag at run time, as before the
 * flags came (rows T of bench/BENCHMARKS.md), and the flags' forms share
 * one encoder per type. */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__FF_INLINE static inline __attribute__((always_inline))
#else
#  define BW__FF_INLINE static inline
#endif

/* ---- 64 x 64 -> 128-bit products ------------------------------------- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 bw__ff_u128;

/* The high 64 bits of a * b; *lo gets the low 64. */
static uint64_t bw__ff_mul(uint64_t a, uint64_t b, uint64_t *lo)
{
    bw__ff_u128 p = (bw__ff_u128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}
#else
static uint64_t bw__ff_mul(uint64_t a, uint64_t b, uint64_t *lo)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

/* ---- The logarithms, in integer arithmetic (constants checked by the
 * table's generator over every input they get here) -------------------- */

static int bw__ff_log10_pow2(int q)
{
    return ((q * BW__FF_L10 + (BW__FF_B10 << BW__FF_S10)) >> BW__FF_S10) - BW__FF_B10;
}

static int bw__ff_log10_34_pow2(int q)
{
    return ((q * BW__FF_L10 + BW__FF_L10_34 + (BW__FF_B10 << BW__FF_S10)) >> BW__FF_S10) -
           BW__FF_B10;
}

static int bw__ff_log2_pow10(int k)
{
    return ((k * BW__FF_L2 + (BW__FF_B2 << BW__FF_S2)) >> BW__FF_S2) - BW__FF_B2;
}

/* ---- The shortest digits ---------------------------------------------- */

/* floor(g cp / 2^127), rounded to odd: the lowest bit set when bits 64..126
 * of the product are not all zero (g = hi 2^64 + lo < 2^126, cp < 2^61).
 * Bits 0..63 are left out: they hold no more than g's own rounding error
 * (the paper's proof of the double case is for exactly this). */
static uint64_t bw__ff_rop64(uint64_t hi, uint64_t lo, uint64_t cp)
{
    uint64_t l0, h0, l1 = bw__ff_mul(lo, cp, &l0), h1 = bw__ff_mul(hi, cp, &h0);
    uint64_t mid = h0 + l1, top = h1 + (mid < h0);
    (void)l0;
    return (top << 1 | mid >> 63) | ((mid & ~((uint64_t)1 << 63)) != 0);
}

/* The float case: g is the table's top 63 bits plus one (g < 2^63,
 * cp < 2^62): floor(g cp / 2^95), odd when bits 64..94 are not all zero. */
static uint64_t bw__ff_rop32(uint64_t g, uint64_t cp)
{
    uint64_t lo, x1 = bw__ff_mul(g, cp, &lo);
    (void)lo;
    return (x1 >> 31) | ((x1 & 0xffffffffu) != 0);
}

/* The choice among the candidates, once the scaled bounds are known:
 * vb = 4 v / 10^k, vbl and vbr R's ends scaled alike (all rounded to odd),
 * out = 1 when R is open. Returns the digits, of 10^k. */
static uint64_t bw__ff_pick(uint64_t vb, uint64_t vbl, uint64_t vbr, uint64_t out)
{
    uint64_t s = vb >> 2, sp10 = s / 10 * 10, tp10 = sp10 + 10, t = s + 1;
    int upin = vbl + out <= sp10 << 2, wpin = (tp10 << 2) + out <= vbr;
    int uin, win;
    /* One multiple of 10^(k+1) in R: the shortest (both cannot be: R is
     * narrower than 10^(k+1)). */
    if (upin != wpin) return upin ? sp10 : tp10;
    uin = vbl + out <= s << 2;
    win = (t << 2) + out <= vbr;
    if (uin != win) return uin ? s : t;
    /* Both in R (R is at least 10^k wide, so never neither): the nearer,
     * and on a tie the even one. vb is compared with 4 s + 2. */
    if (vb < (s << 2) + 2) return s;
    if (vb > (s << 2) + 2) return t;
    return (s & 1) ? t : s;
}

/* v = c 2^q (c > 0) as f 10^*e with f shortest. A normal c of 2^52 (2^23
 * for a float) is a power of two, whose gap below is half the gap above,
 * but for the smallest normal (its gap below is the subnormals'). */
static uint64_t bw__ff_shortest64(uint64_t c, int q, int *e)
{
    int irregular = c == (uint64_t)1 << 52 && q > -1074;
    int k = irregular ? bw__ff_log10_34_pow2(q) : bw__ff_log10_pow2(q);
    int h = q + bw__ff_log2_pow10(-k) + 2;
    const uint64_t *g = bw__ff_g + 2 * (k - BW__FF_K_MIN);
    uint64_t cb = c << 2, cbl = irregular ? cb - 1 : cb - 2, cbr = cb + 2;
    uint64_t vb = bw__ff_rop64(g[0], g[1], cb << h);
    uint64_t vbl = bw__ff_rop64(g[0], g[1], cbl << h);
    uint64_t vbr = bw__ff_rop64(g[0], g[1], cbr << h);
    *e = k;
    return bw__ff_pick(vb, vbl, vbr, c & 1);
}

BW__FF_INLINE uint64_t bw__ff_shortest32(uint64_t c, int q, int *e)
{
    int irregular = c == (uint64_t)1 << 23 && q > -149;
    int k = irregular ? bw__ff_log10_34_pow2(q) : bw__ff_log10_pow2(q);
    int h = q + bw__ff_log2_pow10(-k) + 33;
    const uint64_t *g2 = bw__ff_g + 2 * (k - BW__FF_K_MIN);
    uint64_t g = (g2[0] << 1 | g2[1] >> 63) + 1;
    uint64_t cb = c << 2, cbl = irregular ? cb - 1 : cb - 2, cbr = cb + 2;
    uint64_t vb = bw__ff_rop32(g, cb << h);
    uint64_t vbl = bw__ff_rop32(g, cbl << h);
    uint64_t vbr = bw__ff_rop32(g, cbr << h);
    *e = k;
    return bw__ff_pick(vb, vbl, vbr, c & 1);
}

/* ---- The text --------------------------------------------------------- */

/* How many decimal digits f (0 < f < 10^19) has. */
static int bw__ff_ndigits(uint64_t f)
{
    static const uint64_t pow10[20] = {
        UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
        UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
        UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
        UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
        UINT64_C(1000000000000000), UINT64_C(10000000000000000),
        UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
        UINT64_C(10000000000000000000)};
    int bits, t;
#if defined(__GNUC__) || defined(__clang__)
    bits = 64 - __builtin_clzll(f);
#else
    for (bits = 0; bits < 64 && f >> bits != 0; bits++) {}
#endif
    /* floor(bits log10 2) is the digit count of 2^(bits - 1), less one;
     * f, in [2^(bits-1), 2^bits), may have one digit more. */
    t = bits * 1233 >> 12;
    return t + 1 - (f < pow10[t]);
}

/* The flags a caller may pass (bufwriter.h). */
#define BW__DEC_FLAGS (BW_DEC_JSON | BW_DEC_POINT_ZERO | BW_DEC_EXP_SHORT)

/* The exponent of the exponent form, x != 0 or x == 0 never reached (the
 * form is for x < -4 or x >= 17): "e+17", "e-05", "e+300"; with
 * BW_DEC_EXP_SHORT no "+" and no leading zero, "e17", "e-5". */
BW__FF_INLINE unsigned char *bw__ff_exp(unsigned char *p, int x, unsigned flags)
{
    unsigned ax = (unsigned)(x < 0 ? -x : x);
    *p++ = 'e';
    if (x < 0) *p++ = '-';
    else if (!(flags & BW_DEC_EXP_SHORT)) *p++ = '+';
    if (ax >= 100) {
        *p++ = (unsigned char)('0' + ax / 100);
        ax %= 100;
    } else if (ax < 10 && (flags & BW_DEC_EXP_SHORT)) {
        *p = (unsigned char)('0' + ax);
        return p + 1;
    }
    memcpy(p, bw__digits2 + ax * 2, 2);
    return p + 2;
}

/* f 10^e (f > 0) as printf("%.17g") lays out its digits: exponent form
 * when the decimal exponent x (of the first digit) is below -4 or at least
 * 17, else plain digits with zeros, no trailing zeros either way; flags as
 * bufwriter.h's BW_DEC_* say. The digits go straight to their place. */
BW__FF_INLINE unsigned char *bw__ff_text(unsigned char *p, uint64_t f, int e, unsigned flags)
{
    int n, x, i;
    /* Trailing zeros off: the shortest digits have at most 17. */
    while (f % 10000 == 0) {
        f /= 10000;
        e += 4;
    }
    while (f % 10 == 0) {
        f /= 10;
        e++;
    }
    n = bw__ff_ndigits(f);
    x = e + n - 1;
    if (x < -4 || x >= 17) {
        if (n > 1) { /* d.ddd: the digits one place right, the first moved back */
            bw__dec_digits(p + 1 + n, f);
            p[0] = p[1];
            p[1] = '.';
            p += n + 1;
        } else {
            *p++ = (unsigned char)('0' + f);
        }
        return bw__ff_exp(p, x, flags);
    }
    if (x < 0) { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (i = x + 1; i < 0; i++) *p++ = '0';
        bw__dec_digits(p + n, f);
        return p + n;
    }
    if (x + 1 >= n) { /* ddd000, and ".0" after it for BW_DEC_POINT_ZERO */
        bw__dec_digits(p + n, f);
        for (i = n; i <= x; i++) p[i] = '0';
        p += x + 1;
        if (flags & BW_DEC_POINT_ZERO) {
            memcpy(p, ".0", 2);
            p += 2;
        }
        return p;
    }
    bw__dec_digits(p + 1 + n, f); /* ddd.ddd: the integer digits moved back */
    for (i = 0; i <= x; i++) p[i] = p[i + 1];
    p[x + 1] = '.';
    return p + n + 1;
}

/* nan, inf, -inf; NULL, nothing stored, under BW_DEC_JSON. */
BW__FF_INLINE unsigned char *bw__ff_special(unsigned char *p, int neg, int nan, unsigned flags)
{
    if (flags & BW_DEC_JSON) return NULL;
    if (nan) {
        memcpy(p, "nan", 3);
        return p + 3;
    }
    if (neg) *p++ = '-';
    memcpy(p, "inf", 3);
    return p + 3;
}

/* Zero: "0", "0.0" for BW_DEC_POINT_ZERO (after the sign). */
BW__FF_INLINE unsigned char *bw__ff_zero(unsigned char *p, unsigned flags)
{
    *p = '0';
    if (!(flags & BW_DEC_POINT_ZERO)) return p + 1;
    memcpy(p + 1, ".0", 2);
    return p + 3;
}

/* The text of v with flags at p (room for BW_DEC_F64_MAX); NULL, nothing
 * stored, for NaN or an infinity under BW_DEC_JSON. */
BW__FF_INLINE unsigned char *bw__ff_enc64(unsigned char *p, double v, unsigned flags)
{
    uint64_t bits, t, c;
    int be, q, e;
    memcpy(&bits, &v, sizeof bits);
    t = bits & (((uint64_t)1 << 52) - 1);
    be = (int)(bits >> 52 & 0x7ff);
    if (be == 0x7ff) return bw__ff_special(p, (int)(bits >> 63), t != 0, flags);
    if (bits >> 63) *p++ = '-';
    if (be == 0) {
        if (t == 0) return bw__ff_zero(p, flags);
        c = t;
        q = -1074;
    } else {
        c = t | (uint64_t)1 << 52;
        q = be - 1075;
        /* An integer below 2^53: its own digits are the shortest (every
         * other decimal as short is another integer, at least 1 away, and
         * R is at most 1 wide). */
        if (q <= 0 && q > -53 && (c & (((uint64_t)1 << -q) - 1)) == 0)
            return bw__ff_text(p, c >> -q, 0, flags);
    }
    c = bw__ff_shortest64(c, q, &e);
    return bw__ff_text(p, c, e, flags);
}

BW__FF_INLINE unsigned char *bw__ff_enc32(unsigned char *p, float v, unsigned flags)
{
    uint32_t bits, t;
    uint64_t c;
    int be, q, e;
    memcpy(&bits, &v, sizeof bits);
    t = bits & ((1u << 23) - 1);
    be = (int)(bits >> 23 & 0xff);
    if (be == 0xff) return bw__ff_special(p, (int)(bits >> 31), t != 0, flags);
    if (bits >> 31) *p++ = '-';
    if (be == 0) {
        if (t == 0) return bw__ff_zero(p, flags);
        c = t;
        q = -149;
    } else {
        c = t | 1u << 23;
        q = be - 150;
        if (q <= 0 && q > -24 && (c & (((uint64_t)1 << -q) - 1)) == 0)
            return bw__ff_text(p, c >> -q, 0, flags);
    }
    c = bw__ff_shortest32(c, q, &e);
    return bw__ff_text(p, c, e, flags);
}

unsigned char *bw_enc_dec_f64(unsigned char *p, double v) { return bw__ff_enc64(p, v, 0); }
unsigned char *bw_enc_dec_f32(unsigned char *p, float v) { return bw__ff_enc32(p, v, 0); }

/* The flags' encoders: one copy each, flags tested at run time. */
static unsigned char *bw__ff_enc64_flags(unsigned char *p, double v, unsigned flags)
{
    return bw__ff_enc64(p, v, flags);
}

static unsigned char *bw__ff_enc32_flags(unsigned char *p, float v, unsigned flags)
{
    return bw__ff_enc32(p, v, flags);
}

/* The puts: with room for the longest text, straight into the writer (the
 * inline puts' test: lim is len while an error is recorded, and 0 with no
 * storage); otherwise on the stack and through bw_write, which grows,
 * links, sends or refuses as every put does. */
int bw_put_dec_f64(bw_writer *w, double v)
{
    unsigned char b[BW_DEC_F64_MAX];
    if (w != NULL && w->lim - w->len >= BW_DEC_F64_MAX) {
        w->len = (size_t)(bw_enc_dec_f64(w->data + w->len, v) - w->data);
        return BW_OK;
    }
    return bw_write(w, b, (size_t)(bw_enc_dec_f64(b, v) - b));
}

int bw_put_dec_f32(bw_writer *w, float v)
{
    unsigned char b[BW_DEC_F32_MAX];
    if (w != NULL && w->lim - w->len >= BW_DEC_F32_MAX) {
        w->len = (size_t)(bw_enc_dec_f32(w->data + w->len, v) - w->data);
        return BW_OK;
    }
    return bw_write(w, b, (size_t)(bw_enc_dec_f32(b, v) - b));
}

/* The flags' puts: as above, with the text stored first and committed only
 * when there is one (no text: a NaN or an infinity under BW_DEC_JSON). The
 * checks a put makes come first, so a recorded error wins over the value;
 * neither BW_ENONFINITE nor unknown flags are recorded (the writer is not
 * at fault, and a JSON writer goes on, say with "null"). */
static int bw__put_dec_flags(bw_writer *w, double d, float f, int is32, unsigned flags)
{
    unsigned char b[BW_DEC_F64_MAX], *q;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (flags & ~(unsigned)BW__DEC_FLAGS) return BW_EINVAL;
    if (w->lim - w->len >= BW_DEC_F64_MAX) {
        q = is32 ? bw__ff_enc32_flags(w->data + w->len, f, flags)
                 : bw__ff_enc64_flags(w->data + w->len, d, flags);
        if (q == NULL) return BW_ENONFINITE;
        w->len = (size_t)(q - w->data);
        return BW_OK;
    }
    q = is32 ? bw__ff_enc32_flags(b, f, flags) : bw__ff_enc64_flags(b, d, flags);
    if (q == NULL) return BW_ENONFINITE;
    return bw_write(w, b, (size_t)(q - b));
}

int bw_put_dec_f64_flags(bw_writer *w, double v, unsigned flags)
{
    return bw__put_dec_flags(w, v, 0, 0, flags);
}

int bw_put_dec_f32_flags(bw_writer *w, float v, unsigned flags)
{
    return bw__put_dec_flags(w, 0, v, 1, flags);
}

/* Into the room given: straight there when it holds the longest text,
 * else on the stack and copied when it fits, so nothing is stored past
 * room and a text that does not fit stores nothing. */
static int bw__fmt_dec(void *dst, size_t room, double d, float f, int is32, unsigned flags,
                       size_t *len)
{
    unsigned char b[BW_DEC_F64_MAX], *p = room >= BW_DEC_F64_MAX ? (unsigned char *)dst : b, *q;
    size_t n;
    if (len != NULL) *len = 0;
    if ((flags & ~(unsigned)BW__DEC_FLAGS) || (dst == NULL && room != 0)) return BW_EINVAL;
    q = is32 ? bw__ff_enc32_flags(p, f, flags) : bw__ff_enc64_flags(p, d, flags);
    if (q == NULL) return BW_ENONFINITE;
    n = (size_t)(q - p);
    if (len != NULL) *len = n;
    if (p == b) {
        if (n > room) return BW_EFULL;
        memcpy(dst, b, n);
    }
    return BW_OK;
}

int bw_fmt_dec_f64(void *dst, size_t room, double v, unsigned flags, size_t *len)
{
    return bw__fmt_dec(dst, room, v, 0, 0, flags, len);
}

int bw_fmt_dec_f32(void *dst, size_t room, float v, unsigned flags, size_t *len)
{
    return bw__fmt_dec(dst, room, 0, v, 1, flags, len);
}
