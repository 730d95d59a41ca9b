/* SPDX-License-Identifier: MIT */
/* test_float_text.c - bw_put_dec_f64 / bw_put_dec_f32 and their cursor
 * forms: exact bytes of the edge cases (zeros, subnormals, the extremes,
 * 0.1 + 0.2, integers at 2^53, every notation switch), every power of ten
 * and of two against the printf + strtod oracle (float_oracle.h), random
 * doubles of every exponent and random floats against it, the maximum
 * lengths, and the puts in every mode with the usual error model. The
 * JSON and room forms (bw_put_dec_f64_flags, bw_fmt_dec_f64, and f32's):
 * exact bytes per flag, NaN and infinities, the plain text made JSON's
 * by hand and read back exactly for random values, every room from 0 to
 * the text's length, the puts in every mode.
 *
 * The random counts are 1M each (FLOAT_TEXT_COUNT), fewer in the slow
 * flavours (valgrind, sanitizers), and BW_FLOAT_TEXT_COUNT in the
 * environment overrides them. make test-float-full checks every float and
 * 100M doubles. */
#include "harness.h"

#include "float_oracle.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FLOAT_TEXT_COUNT
#  if defined(BW_VALGRIND)
#    define FLOAT_TEXT_COUNT 20000
#  elif defined(BW_TEST_EMULATED) || !defined(__OPTIMIZE__)
     /* qemu: 34 s for the two at 1M; -O0 a few times normal's 5 s. The
      * full million runs in the optimised flavours, every float in
      * make test-float-full. */
#    define FLOAT_TEXT_COUNT 100000
#  elif defined(__SANITIZE_ADDRESS__)
#    define FLOAT_TEXT_COUNT 250000
#  else
#    define FLOAT_TEXT_COUNT 1000000
#  endif
#endif

static long random_count(void)
{
    const char *s = getenv("BW_FLOAT_TEXT_COUNT");
    return s != NULL && *s ? atol(s) : FLOAT_TEXT_COUNT;
}

static uint64_t rng_state;
static uint64_t rng(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static float from_bits32(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* The text of v through the cursor, NUL-terminated; its length checked
 * against the maximum and the byte after it untouched. */
static const char *text64(double v)
{
    static unsigned char b[BW_DEC_F64_MAX + 8];
    unsigned char *end;
    memset(b, 0xEE, sizeof b);
    end = bw_enc_dec_f64(b, v);
    cr_assert(end > b && end - b <= BW_DEC_F64_MAX, "%a: %td bytes", v, end - b);
    cr_assert_eq(*end, 0xEE, "%a: a byte stored past the end", v);
    *end = '\0';
    return (const char *)b;
}

static const char *text32(float v)
{
    static unsigned char b[BW_DEC_F32_MAX + 8];
    unsigned char *end;
    memset(b, 0xEE, sizeof b);
    end = bw_enc_dec_f32(b, v);
    cr_assert(end > b && end - b <= BW_DEC_F32_MAX, "%a: %td bytes", (double)v, end - b);
    cr_assert_eq(*end, 0xEE, "%a: a byte stored past the end", (double)v);
    *end = '\0';
    return (const char *)b;
}

/* v's text is what the oracle says; returns 1 when it is. */
static int check64(double v)
{
    char want[32];
    const char *got = text64(v);
    fo_expected(v, 0, fo_count_digits(got), want);
    if (strcmp(got, want) == 0) return 1;
    cr_expect(0, "%a (%.17g): got \"%s\", want \"%s\"", v, v, got, want);
    return 0;
}

static int check32(float v)
{
    char want[32];
    const char *got = text32(v);
    fo_expected(v, 1, fo_count_digits(got), want);
    if (strcmp(got, want) == 0) return 1;
    cr_expect(0, "%a (%.9g) as a float: got \"%s\", want \"%s\"", (double)v, (double)v, got,
              want);
    return 0;
}

/* ---- Exact bytes ------------------------------------------------------- */

static void expect_text(const char *got, const char *want, double v)
{
    cr_expect(strcmp(got, want) == 0, "%a: got \"%s\", want \"%s\"", v, got, want);
}

/* A value and its exact text; a float's value is held as a double, which
 * holds every float exactly. */
typedef struct text_case {
    double v;
    const char *want;
} text_case;

/* Each case's text in one width; as_float runs it as a float. */
static void expect_cases(const text_case *c, size_t n, int as_float)
{
    size_t i;
    for (i = 0; i < n; i++)
        expect_text(as_float ? text32((float)c[i].v) : text64(c[i].v), c[i].want, c[i].v);
}

/* Values whose shortest text is the same as a double and as a float (each
 * converts to the float its literal with an f names), run in both widths. */
static const text_case cases_both[] = {
    {0.0, "0"},
    {-0.0, "-0"},
    {0.1, "0.1"},
    {0.2, "0.2"},
    {0.3, "0.3"},
    {1.0, "1"},
    {123.45, "123.45"},
    {1e16, "10000000000000000"},           /* double: x = 16, the last plain one */
    {1e17, "1e+17"},                       /* x = 17: exponent form */
    {1e-5, "1e-05"},                       /* x = -5: exponent form */
};

static const text_case cases64[] = {
    /* 0.1 + 0.2 in double arithmetic, written as its bits: a compiler that
     * evaluates in excess precision (x87, FLT_EVAL_METHOD 2: gcc -m32)
     * folds the sum in long double and rounds that to 0.3. */
    {0x1.3333333333334p-2, "0.30000000000000004"},
    {-0.1, "-0.1"},
    {-1.0, "-1"},
    {1.5, "1.5"},
    {123.456, "123.456"},
    {100000.0, "100000"},
    {1e15, "1000000000000000"},
    {1.5e17, "1.5e+17"},
    {123456789012345680.0, "1.2345678901234568e+17"},
    {9007199254740991.0, "9007199254740991"}, /* 2^53 - 1 */
    {9007199254740992.0, "9007199254740992"}, /* 2^53 */
    {9007199254740994.0, "9007199254740994"}, /* 2^53 + 2 */
    {18014398509481984.0, "18014398509481984"}, /* 2^54: 17 digits, x = 16 */
    {36028797018963968.0, "36028797018963970"}, /* 2^55: 16 digits suffice */
    {9223372036854775808.0, "9.223372036854776e+18"}, /* 2^63 */
    {18446744073709551616.0, "1.8446744073709552e+19"}, /* 2^64 */
    {1e21, "1e+21"},
    {1e22, "1e+22"},
    {1e23, "1e+23"},
    {0.001, "0.001"},
    {0.0001, "0.0001"},                    /* x = -4: the last plain one */
    {0.00012345, "0.00012345"},
    {1.5e-05, "1.5e-05"},
    {0.000012345678901234567, "1.2345678901234568e-05"},
    {1e-7, "1e-07"},
    {1e100, "1e+100"},
    {1.5e300, "1.5e+300"},
    {-1e-100, "-1e-100"},
    {5e-324, "5e-324"},                    /* the smallest subnormal */
    {-5e-324, "-5e-324"},
    {1e-323, "1e-323"},
    {2.2250738585072009e-308, "2.225073858507201e-308"}, /* the largest subnormal */
    {2.2250738585072014e-308, "2.2250738585072014e-308"}, /* the smallest normal */
    {1.7976931348623157e308, "1.7976931348623157e+308"}, /* the largest */
    {-1.7976931348623157e308, "-1.7976931348623157e+308"},
    {-2.2250738585072014e-308, "-2.2250738585072014e-308"}, /* 24 bytes */
    {-0.000012345678901234567, "-1.2345678901234568e-05"},
    {-0.00012345678901234567, "-0.00012345678901234567"}, /* 23 bytes */
    {5.684341886080802e-14, "5.684341886080802e-14"}, /* 2^-44 */
    {2.0, "2"},
    {1024.0, "1024"},
    {0.5, "0.5"},
    {0.25, "0.25"},
    {3.141592653589793, "3.141592653589793"},
    {2.718281828459045, "2.718281828459045"},
    {0x1.5555555555555p-2, "0.3333333333333333"}, /* 1 / 3 */
    {0x1.5555555555555p-1, "0.6666666666666666"}, /* 2 / 3 */
    {299792458.0, "299792458"},
    {6.02214076e23, "6.02214076e+23"},
    {1.602176634e-19, "1.602176634e-19"},
};

Test(float_text, doubles_give_the_exact_bytes_of_every_edge_case)
{
    expect_cases(cases_both, sizeof cases_both / sizeof cases_both[0], 0);
    expect_cases(cases64, sizeof cases64 / sizeof cases64[0], 0);
    expect_text(text64(INFINITY), "inf", INFINITY);
    expect_text(text64(-INFINITY), "-inf", -INFINITY);
    expect_text(text64(NAN), "nan", NAN);
    expect_text(text64(-NAN), "nan", -NAN);
    expect_text(text64(from_bits(0x7ff0000000000001ull)), "nan", 0); /* signalling */
    expect_text(text64(from_bits(0xfff8000000000000ull)), "nan", 0); /* negative */
}

/* Float literals (f): their values as doubles are exact. */
static const text_case cases32[] = {
    {0x1.333334p-2f, "0.3"},               /* 0.1f + 0.2f in float: 0.3f */
    {1.1f, "1.1"},
    {16777216.0f, "16777216"},             /* 2^24 */
    {16777218.0f, "16777218"},
    {1e16f, "10000000000000000"},          /* 10000000272564224 */
    {-1e16f, "-10000000000000000"},        /* BW_DEC_F32_MAX bytes */
    {1.2345678e-5f, "1.2345678e-05"},
    {-0.00012345678f, "-0.00012345678"},
    {1e-45f, "1e-45"},                     /* the smallest subnormal */
    {1.1754942e-38f, "1.1754942e-38"},     /* the largest subnormal */
    {1.17549435e-38f, "1.1754944e-38"},    /* the smallest normal */
    {3.40282347e38f, "3.4028235e+38"},     /* the largest */
    {-3.40282347e38f, "-3.4028235e+38"},
    {3.14159265f, "3.1415927"},
    {0x1.555556p-2f, "0.33333334"},        /* 1 / 3 */
    {33554432.0f, "33554432"},             /* 2^25 */
    {8.589973e9f, "8589974000"}, /* 8589973504: both 7-digit neighbours read
                                    * back; 8589974000 is the nearer */
    {7.038531e-26f, "7.038531e-26"},
};

Test(float_text, floats_give_the_exact_bytes_of_every_edge_case)
{
    expect_cases(cases_both, sizeof cases_both / sizeof cases_both[0], 1);
    expect_cases(cases32, sizeof cases32 / sizeof cases32[0], 1);
    expect_text(text32(INFINITY), "inf", (double)INFINITY);
    expect_text(text32(-INFINITY), "-inf", (double)-INFINITY);
    expect_text(text32(NAN), "nan", (double)NAN);
    expect_text(text32(from_bits32(0xffc00000u)), "nan", 0); /* negative */
    expect_text(text32(from_bits32(0x7f800001u)), "nan", 0); /* signalling */
}

/* ---- Against the oracle ------------------------------------------------ */

Test(float_text, every_power_of_ten_and_its_neighbours_matches_the_oracle)
{
    int e, d;
    char s[16];
    for (e = -325; e <= 309; e++) {
        double v;
        snprintf(s, sizeof s, "1e%d", e);
        v = strtod(s, NULL);
        for (d = 0; d < 5; d++) {
            double u = d == 0 ? v : d == 1 ? nextafter(v, 0) : d == 2 ? nextafter(v, INFINITY)
                                                    : d == 3 ? 9.5 * v / 10 : 5 * v;
            check64(u);
            check64(-u);
        }
    }
    for (e = -46; e <= 39; e++) {
        float v;
        snprintf(s, sizeof s, "1e%d", e);
        v = strtof(s, NULL);
        check32(v);
        check32(nextafterf(v, 0));
        check32(nextafterf(v, INFINITY));
        check32(-v);
    }
}

Test(float_text, every_power_of_two_whose_gap_below_is_half_matches_the_oracle)
{
    int e;
    for (e = -1074; e <= 1023; e++) {
        double v = ldexp(1.0, e);
        check64(v);
        check64(nextafter(v, 0));
        check64(nextafter(v, INFINITY));
        check64(-v);
    }
    for (e = -149; e <= 127; e++) {
        float v = ldexpf(1.0f, e);
        check32(v);
        check32(nextafterf(v, 0));
        check32(nextafterf(v, INFINITY));
    }
}

Test(float_text, integers_at_2_53_and_beyond_match_the_oracle)
{
    int e;
    int64_t d, n = random_count() / 10;
    for (e = 50; e <= 70; e++)
        for (d = -4; d <= 4; d++) {
            double base = ldexp(1.0, e);
            check64(base + ldexp((double)d, e - 52)); /* the neighbours, an ulp apart */
        }
    for (d = 1; d <= n; d++) {
        double v = (double)d;
        check64(v);
        check64(v / 100); /* prices: 0.01 .. 1000.00 */
        check32((float)v / 100);
    }
}

Test(float_text, subnormals_match_the_oracle)
{
    uint64_t i;
    for (i = 1; i <= 2000; i++) {
        check64(from_bits(i));
        check64(from_bits(0x000fffffffffffffull - i + 1));
        check32(from_bits32((uint32_t)i));
        check32(from_bits32(0x007fffffu - (uint32_t)i + 1));
    }
}

Test(float_text, random_doubles_of_every_exponent_match_the_oracle)
{
    long i, n = random_count(), bad = 0;
    rng_state = 0x9e3779b97f4a7c15ull;
    for (i = 0; i < n && bad < 10; i++) bad += !check64(from_bits(rng()));
    cr_expect_eq(bad, 0, "%ld of %ld differ", bad, i);
}

Test(float_text, random_floats_match_the_oracle)
{
    long i, n = random_count(), bad = 0;
    rng_state = 0x2545f4914f6cdd1dull;
    for (i = 0; i < n && bad < 10; i++) bad += !check32(from_bits32((uint32_t)(rng() >> 32)));
    cr_expect_eq(bad, 0, "%ld of %ld differ", bad, i);
}

/* Short decimals (up to 7 digits, at every scale) are where a shortest
 * printer differs most from %.17g, and what prices and measurements are. */
Test(float_text, short_decimals_at_every_scale_match_the_oracle)
{
    long i, n = random_count() / 10;
    char s[40];
    rng_state = 42;
    for (i = 0; i < n; i++) {
        uint64_t r = rng();
        int digits = (int)(r % 7) + 1;
        long m = (long)(r >> 8 & 0xffffff) % 10000000 + 1;
        int x = (int)(r >> 40) % 600 - 300;
        double v;
        while (m >= 10 && (m % 10 == 0 || m >= (long)pow(10, digits))) m /= 10;
        snprintf(s, sizeof s, "%lde%d", m, x);
        v = strtod(s, NULL);
        if (!check64(v)) break;
    }
}

/* ---- Lengths ----------------------------------------------------------- */

Test(float_text, the_longest_texts_are_the_documented_maximums)
{
    cr_expect_eq(strlen(text64(-2.2250738585072014e-308)), BW_DEC_F64_MAX);
    cr_expect_eq(strlen(text64(-0.000012345678901234567)), 23);
    cr_expect_eq(strlen(text64(-1.2345678901234567e-100)), BW_DEC_F64_MAX);
    cr_expect_eq(strlen(text32(-1e16f)), BW_DEC_F32_MAX);
    cr_expect_eq(strlen(text32(-1.2345678e16f)), BW_DEC_F32_MAX);
}

/* ---- The puts: every mode, the usual error model ----------------------- */

/* In every mode, after each prefix of pattern bytes: 200 rounds of put (it
 * writes and adds what it expects to r), then the position is r's length;
 * finish (when given) checks more, and the output is exactly r. */
typedef void put_round(harness *h, ref *r, int j);
static void puts_in_every_mode(const size_t *prefixes, size_t np, put_round *put,
                               put_round *finish)
{
    int m;
    size_t k;
    FOR_EACH_MODE(m)
        for (k = 0; k < np; k++) {
            harness h;
            ref r = {0};
            int j;
            h_open_pattern(&h, m, prefixes[k], &r);
            for (j = 0; j < 200; j++) put(&h, &r, j);
            cr_expect_eq(bw_tell(&h.w), r.len, "%s", mode_name[m]);
            if (finish) finish(&h, &r, 0);
            cr_expect_eq(bw_flush(&h.w), BW_OK);
            h_close_expecting(&h, &r, mode_name[m]);
        }
}

static void put_random_f64_f32(harness *h, ref *r, int j)
{
    double v = from_bits(rng());
    float f = from_bits32((uint32_t)rng());
    (void)j;
    cr_assert_eq(bw_put_dec_f64(&h->w, v), BW_OK, "%s", mode_name[h->mode]);
    ref_str(r, text64(v));
    cr_assert_eq(bw_put_u8(&h->w, ','), BW_OK);
    ref_str(r, ",");
    cr_assert_eq(bw_put_dec_f32(&h->w, f), BW_OK, "%s", mode_name[h->mode]);
    ref_str(r, text32(f));
}

Test(float_text, the_puts_give_the_cursor_bytes_in_every_mode_after_any_prefix)
{
    static const size_t prefixes[] = {0, 1, 50, 63, 64, 4090};
    puts_in_every_mode(prefixes, sizeof prefixes / sizeof prefixes[0], put_random_f64_f32, NULL);
}

Test(float_text, a_fixed_writer_takes_an_exact_fit_and_refuses_one_byte_less_whole)
{
    unsigned char buf[BW_DEC_F64_MAX + 1];
    bw_writer w;
    cr_assert_eq(bw_init_fixed(&w, buf, BW_DEC_F64_MAX), BW_OK);
    cr_expect_eq(bw_put_dec_f64(&w, -2.2250738585072014e-308), BW_OK, "24 bytes in 24");
    cr_expect_eq(bw_len(&w), BW_DEC_F64_MAX);
    cr_expect(memcmp(bw_data(&w), "-2.2250738585072014e-308", BW_DEC_F64_MAX) == 0);
    bw_release(&w);

    cr_assert_eq(bw_init_fixed(&w, buf, 5), BW_OK);
    cr_assert_eq(bw_puts(&w, "x"), BW_OK);
    cr_expect_eq(bw_put_dec_f64(&w, 0.125), BW_EFULL, "5 bytes in 4");
    cr_expect_eq(bw_error(&w), BW_EFULL, "recorded");
    cr_expect_eq(bw_len(&w), 1, "nothing of it written");
    bw_clear_error(&w);
    cr_expect_eq(bw_put_dec_f32(&w, 0.25f), BW_OK, "4 bytes in 4");
    cr_expect(memcmp(bw_data(&w), "x0.25", 5) == 0);
    cr_expect_eq(bw_put_dec_f32(&w, 0.0f), BW_EFULL);
    bw_release(&w);
}

Test(float_text, the_puts_refuse_a_null_writer_and_return_a_recorded_error)
{
    int m;
    cr_expect_eq(bw_put_dec_f64(NULL, 1.5), BW_EINVAL);
    cr_expect_eq(bw_put_dec_f32(NULL, 1.5f), BW_EINVAL);
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        h_open_pattern(&h, m, 10, &r);
        record_einval(&h);
        cr_expect_eq(bw_put_dec_f64(&h.w, 1.5), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(bw_put_dec_f32(&h.w, 1.5f), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 10, "%s: nothing written", mode_name[m]);
        bw_clear_error(&h.w);
        h_close_expecting(&h, &r, mode_name[m]);
    }
}

/* The cursor in a span: what a serializer's loop does. */
Test(float_text, the_cursor_writes_into_a_span_committed_with_advance_to)
{
    harness h;
    ref r = {0};
    size_t room;
    unsigned char *p;
    int i;
    h_open(&h, M_CHAIN);
    for (i = 0; i < 100; i++) {
        p = bw_get_span(&h.w, 3 * BW_DEC_F64_MAX + 2, &room);
        cr_assert_not_null(p);
        p = bw_enc_dec_f64(p, i / 8.0);
        *p++ = ' ';
        p = bw_enc_dec_f32(p, (float)i * 1e10f);
        *p++ = '\n';
        cr_assert_eq(bw_advance_to(&h.w, p), BW_OK);
        ref_str(&r, text64(i / 8.0));
        ref_str(&r, " ");
        ref_str(&r, text32((float)i * 1e10f));
        ref_str(&r, "\n");
    }
    h_close_expecting(&h, &r, "cursor");
}

/* ---- The flags (BW_DEC_JSON, _POINT_ZERO, _EXP_SHORT) and the room form -- */

/* What the flags make of the plain text, derived from it by hand (as
 * jansson post-processes printf's): NULL for a NaN or an infinity under
 * BW_DEC_JSON. */
static const char *flagged(const char *plain, unsigned flags)
{
    static char b[64];
    char *e;
    int special = strstr(plain, "nan") != NULL || strstr(plain, "inf") != NULL;
    if (special && (flags & BW_DEC_JSON)) return NULL;
    snprintf(b, sizeof b, "%s", plain);
    e = strchr(b, 'e');
    if (e != NULL && (flags & BW_DEC_EXP_SHORT)) {
        char *d = e + 1, *s;
        if (*d == '+') memmove(d, d + 1, strlen(d + 1) + 1);
        if (*d == '-') d++;
        for (s = d; s[0] == '0' && s[1] != '\0'; s++) {}
        memmove(d, s, strlen(s) + 1);
    }
    if (!special && e == NULL && strchr(b, '.') == NULL && (flags & BW_DEC_POINT_ZERO))
        strcat(b, ".0");
    return b;
}

/* bw_fmt_dec_f64 / _f32 (is32) of v with flags into a room of 64 bytes:
 * its status, the text NUL-terminated in out, nothing past it stored. */
static int fmt_text(double v, int is32, unsigned flags, char *out)
{
    unsigned char b[72];
    size_t n = 99;
    int rc;
    memset(b, 0xEE, sizeof b);
    rc = is32 ? bw_fmt_dec_f32(b, 64, (float)v, flags, &n) : bw_fmt_dec_f64(b, 64, v, flags, &n);
    if (rc != BW_OK) {
        cr_expect_eq(n, 0, "%a: no length with %d", v, rc);
        cr_expect(all_bytes(b, sizeof b, 0xEE), "%a: nothing stored", v);
        out[0] = '\0';
        return rc;
    }
    cr_assert(n > 0 && n <= BW_DEC_F64_MAX, "%a flags %u: %zu bytes", v, flags, n);
    cr_expect(all_bytes(b + n, sizeof b - n, 0xEE), "%a: nothing stored past the text", v);
    memcpy(out, b, n);
    out[n] = '\0';
    return rc;
}

/* v's text with flags is the plain text as the flags make it, and reads
 * back as v; 1 when it is. */
static int check_flags(double v, int is32, unsigned flags)
{
    char got[80];
    const char *plain = is32 ? text32((float)v) : text64(v), *want = flagged(plain, flags);
    int rc = fmt_text(v, is32, flags, got);
    if (want == NULL) {
        cr_expect_eq(rc, BW_ENONFINITE, "%a flags %u", v, flags);
        return rc == BW_ENONFINITE;
    }
    if (rc != BW_OK || strcmp(got, want) != 0 || (!isnan(v) && !fo_reads_back(got, v, is32))) {
        cr_expect(0, "%a flags %u: rc %d, got \"%s\", want \"%s\"", v, flags, rc, got, want);
        return 0;
    }
    return 1;
}

static const struct {
    double v;
    const char *json, *real; /* BW_DEC_JSON; BW_DEC_JSON_REAL */
} json_cases[] = {
    {0.0, "0", "0.0"},
    {-0.0, "-0", "-0.0"},
    {1.0, "1", "1.0"},
    {-3.0, "-3", "-3.0"},
    {100000.0, "100000", "100000.0"},
    {1e16, "10000000000000000", "10000000000000000.0"},
    {9007199254740993.0, "9007199254740992", "9007199254740992.0"},
    {1e17, "1e+17", "1e17"},
    {1.5e300, "1.5e+300", "1.5e300"},
    {1e100, "1e+100", "1e100"},
    {0.1, "0.1", "0.1"},
    {123.456, "123.456", "123.456"},
    {0.0001, "0.0001", "0.0001"},
    {0.00001, "1e-05", "1e-5"},
    {1.25e-7, "1.25e-07", "1.25e-7"},
    {5e-324, "5e-324", "5e-324"},
    {2.2250738585072014e-308, "2.2250738585072014e-308", "2.2250738585072014e-308"},
    {1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931348623157e308"},
    {-1.7976931348623157e308, "-1.7976931348623157e+308", "-1.7976931348623157e308"},
    {0.30000000000000004, "0.30000000000000004", "0.30000000000000004"},
};

Test(float_json, exact_bytes_of_every_edge_case_for_cjson_and_for_a_real)
{
    size_t i;
    char got[80];
    for (i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
        double v = json_cases[i].v;
        cr_expect_eq(fmt_text(v, 0, BW_DEC_JSON, got), BW_OK);
        expect_text(got, json_cases[i].json, v);
        cr_expect_eq(fmt_text(v, 0, BW_DEC_JSON_REAL, got), BW_OK);
        expect_text(got, json_cases[i].real, v);
    }
    cr_expect_eq(fmt_text(1e17, 0, BW_DEC_POINT_ZERO, got), BW_OK);
    expect_text(got, "1e+17", 1e17);
    cr_expect_eq(fmt_text(3.0, 0, BW_DEC_EXP_SHORT, got), BW_OK);
    expect_text(got, "3", 3.0);
    cr_expect_eq(fmt_text(-1e16f, 1, BW_DEC_JSON_REAL, got), BW_OK);
    expect_text(got, "-10000000000000000.0", -1e16f);
    cr_expect_eq(fmt_text(1e-5f, 1, BW_DEC_JSON_REAL, got), BW_OK);
    expect_text(got, "1e-5", 1e-5f);
    cr_expect_eq(fmt_text(FLT_MAX, 1, BW_DEC_JSON_REAL, got), BW_OK);
    expect_text(got, "3.4028235e38", FLT_MAX);
}

/* Without BW_DEC_JSON the specials are text as ever; with it, nothing. */
Test(float_json, nan_and_infinities_are_enonfinite_under_json_and_text_without)
{
    static const double specials[] = {NAN, -NAN, INFINITY, -INFINITY};
    unsigned flags;
    size_t i;
    char got[80];
    for (i = 0; i < 4; i++)
        for (flags = 0; flags <= BW_DEC_JSON_REAL; flags++) {
            int rc = fmt_text(specials[i], 0, flags, got);
            int rc32 = fmt_text(specials[i], 1, flags, got);
            if (flags & BW_DEC_JSON) {
                cr_expect_eq(rc, BW_ENONFINITE, "%a flags %u", specials[i], flags);
                cr_expect_eq(rc32, BW_ENONFINITE);
            } else {
                cr_expect_eq(rc, BW_OK);
                expect_text(got, text32((float)specials[i]), specials[i]);
            }
        }
    cr_expect(strstr(bw_strerror(BW_ENONFINITE), "finite") != NULL);
}

Test(float_json, random_doubles_and_floats_read_back_exactly_with_every_flag)
{
    long i, n = random_count() / 4, bad = 0;
    unsigned flags;
    rng_state = 0x51ed270b27b5ac01ull;
    for (i = 0; i < n && bad < 10; i++) {
        uint64_t r = rng();
        flags = (unsigned)(r & 7);
        bad += !check_flags(from_bits(rng()), 0, flags);
        bad += !check_flags(from_bits32((uint32_t)(r >> 32)), 1, flags);
        /* integral values, where ".0" goes */
        bad += !check_flags((double)(int64_t)(rng() >> (r >> 3 & 63)), 0, flags);
    }
    cr_expect_eq(bad, 0, "%ld of %ld differ", bad, i);
    for (i = -330; i <= 310 && bad < 10; i++) /* every power of ten: both exponent forms */
        for (flags = 0; flags <= BW_DEC_JSON_REAL; flags++) bad += !check_flags(pow(10, (double)i), 0, flags);
    cr_expect_eq(bad, 0);
}

/* Every room from 0 to the text's length: BW_EFULL with the length and
 * nothing stored below it, the text and nothing past it from it on. */
Test(float_json, every_room_below_the_length_is_efull_with_the_length_and_stores_nothing)
{
    long i, n = random_count() / 100;
    rng_state = 7;
    for (i = 0; i < n; i++) {
        uint64_t r = rng();
        unsigned flags = (unsigned)(r & 7);
        int is32 = (int)(r >> 3 & 1);
        double v = is32 ? (double)from_bits32((uint32_t)(rng() >> 32)) : from_bits(rng());
        char want[80];
        size_t need, room, got;
        unsigned char b[BW_DEC_F64_MAX + 8];
        int rc = fmt_text(v, is32, flags, want);
        if (rc != BW_OK) continue; /* NaN, infinities: the test above */
        need = strlen(want);
        cr_assert_eq(is32 ? bw_fmt_dec_f32(NULL, 0, (float)v, flags, &got)
                          : bw_fmt_dec_f64(NULL, 0, v, flags, &got), BW_EFULL);
        cr_assert_eq(got, need, "the length first");
        for (room = 0; room <= need; room++) {
            memset(b, 0xEE, sizeof b);
            got = 99;
            rc = is32 ? bw_fmt_dec_f32(b, room, (float)v, flags, &got)
                      : bw_fmt_dec_f64(b, room, v, flags, &got);
            cr_assert_eq(got, need, "%a: room %zu", v, room);
            if (room < need) {
                cr_assert_eq(rc, BW_EFULL, "%a: room %zu of %zu", v, room, need);
                cr_assert(all_bytes(b, sizeof b, 0xEE), "%a: room %zu: stored", v, room);
            } else {
                cr_assert_eq(rc, BW_OK, "%a: room %zu", v, room);
                cr_assert(memcmp(b, want, need) == 0);
                cr_assert(all_bytes(b + need, sizeof b - need, 0xEE), "past the room");
            }
        }
    }
}

Test(float_json, bad_flags_and_a_null_dst_with_room_are_einval)
{
    unsigned char b[32];
    size_t n = 5;
    cr_expect_eq(bw_fmt_dec_f64(b, sizeof b, 1.0, 8, &n), BW_EINVAL);
    cr_expect_eq(n, 0);
    cr_expect_eq(bw_fmt_dec_f32(b, sizeof b, 1.0f, 1u << 31, NULL), BW_EINVAL);
    cr_expect_eq(bw_fmt_dec_f64(NULL, 1, 1.0, 0, &n), BW_EINVAL);
    cr_expect_eq(bw_fmt_dec_f64(b, sizeof b, 2.5, 0, NULL), BW_OK, "len may be NULL");
    cr_expect(memcmp(b, "2.5", 3) == 0);
    cr_expect_eq(bw_put_dec_f64_flags(NULL, 1.0, 0), BW_EINVAL);
    cr_expect_eq(bw_put_dec_f32_flags(NULL, 1.0f, 0), BW_EINVAL);
}

/* One round of the flag puts: random flags, values and the text the
 * cursor form gives; a NaN or an infinity under BW_DEC_JSON and unknown
 * flags write nothing and record nothing. */
static void put_flagged_f64_f32(harness *h, ref *r, int j)
{
    const char *mode = mode_name[h->mode];
    char t[80];
    unsigned flags = (unsigned)(rng() & 7);
    double v = j % 7 == 0 ? (double)(j - 100) : from_bits(rng());
    float f = from_bits32((uint32_t)rng());
    int rc = fmt_text(v, 0, flags, t);
    cr_assert_eq(bw_put_dec_f64_flags(&h->w, v, flags), rc, "%s", mode);
    ref_str(r, t);
    rc = fmt_text(f, 1, flags, t);
    cr_assert_eq(bw_put_dec_f32_flags(&h->w, f, flags), rc, "%s", mode);
    ref_str(r, t);
    cr_assert_eq(bw_put_dec_f64_flags(&h->w, NAN, BW_DEC_JSON), BW_ENONFINITE);
    cr_assert_eq(bw_put_dec_f32_flags(&h->w, -INFINITY, BW_DEC_JSON_REAL), BW_ENONFINITE);
    cr_assert_eq(bw_put_dec_f64_flags(&h->w, 1.0, 64), BW_EINVAL);
    cr_assert_eq(bw_error(&h->w), BW_OK, "%s: not recorded", mode);
    cr_assert_eq(bw_put_u8(&h->w, ','), BW_OK);
    ref_str(r, ",");
}

/* A recorded error comes first: the flag puts return it, write nothing. */
static void flag_puts_return_the_recorded_error(harness *h, ref *r, int j)
{
    (void)j;
    record_einval(h);
    cr_expect_eq(bw_put_dec_f64_flags(&h->w, NAN, BW_DEC_JSON), BW_EINVAL,
                 "%s: the recorded error first", mode_name[h->mode]);
    cr_expect_eq(bw_put_dec_f32_flags(&h->w, 1.0f, 0), BW_EINVAL);
    cr_expect_eq(bw_tell(&h->w), r->len, "%s: nothing written", mode_name[h->mode]);
    bw_clear_error(&h->w);
}

/* The puts with flags: the room form's bytes in every mode after any
 * prefix; a NaN or an infinity under BW_DEC_JSON writes nothing and
 * records nothing; unknown flags likewise; a recorded error comes first. */
Test(float_json, the_flag_puts_give_the_room_forms_bytes_in_every_mode)
{
    static const size_t prefixes[] = {0, 1, 63, 4090};
    puts_in_every_mode(prefixes, sizeof prefixes / sizeof prefixes[0], put_flagged_f64_f32,
                       flag_puts_return_the_recorded_error);
}

/* A fixed writer: the flags' text fits exactly or is refused whole. */
Test(float_json, a_fixed_writer_takes_an_exact_fit_of_a_real)
{
    unsigned char buf[8];
    bw_writer w;
    cr_assert_eq(bw_init_fixed(&w, buf, 5), BW_OK);
    cr_assert_eq(bw_puts(&w, "x"), BW_OK);
    cr_expect_eq(bw_put_dec_f64_flags(&w, 12.0, BW_DEC_JSON_REAL), BW_OK, "4 bytes in 4");
    cr_expect(memcmp(bw_data(&w), "x12.0", 5) == 0);
    cr_expect_eq(bw_put_dec_f64_flags(&w, NAN, BW_DEC_JSON), BW_ENONFINITE, "before room");
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(bw_put_dec_f64_flags(&w, 0.0, 0), BW_EFULL);
    bw_release(&w);
}
