/* SPDX-License-Identifier: MIT */
/* test_float_text.c - bw_put_dec_f64 / bw_put_dec_f32 and their cursor
 * forms: exact bytes of the edge cases (zeros, subnormals, the extremes,
 * 0.1 + 0.2, integers at 2^53, every notation switch), every power of ten
 * and of two against the printf + strtod oracle (float_oracle.h), random
 * doubles of every exponent and random floats against it, the maximum
 * lengths, and the puts in every mode with the usual error model.
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

typedef struct case64 {
    double v;
    const char *want;
} case64;

static const case64 cases64[] = {
    {0.0, "0"},
    {-0.0, "-0"},
    {0.1, "0.1"},
    {0.2, "0.2"},
    {0.3, "0.3"},
    /* 0.1 + 0.2 in double arithmetic, written as its bits: a compiler that
     * evaluates in excess precision (x87, FLT_EVAL_METHOD 2: gcc -m32)
     * folds the sum in long double and rounds that to 0.3. */
    {0x1.3333333333334p-2, "0.30000000000000004"},
    {-0.1, "-0.1"},
    {1.0, "1"},
    {-1.0, "-1"},
    {1.5, "1.5"},
    {123.456, "123.456"},
    {123.45, "123.45"},
    {100000.0, "100000"},
    {1e15, "1000000000000000"},
    {1e16, "10000000000000000"},           /* x = 16: the last plain one */
    {1e17, "1e+17"},                       /* x = 17: exponent form */
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
    {0.00001, "1e-05"},                    /* x = -5: exponent form */
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
    size_t i;
    for (i = 0; i < sizeof cases64 / sizeof cases64[0]; i++)
        expect_text(text64(cases64[i].v), cases64[i].want, cases64[i].v);
    expect_text(text64(INFINITY), "inf", INFINITY);
    expect_text(text64(-INFINITY), "-inf", -INFINITY);
    expect_text(text64(NAN), "nan", NAN);
    expect_text(text64(-NAN), "nan", -NAN);
    expect_text(text64(from_bits(0x7ff0000000000001ull)), "nan", 0); /* signalling */
    expect_text(text64(from_bits(0xfff8000000000000ull)), "nan", 0); /* negative */
}

typedef struct case32 {
    float v;
    const char *want;
} case32;

static const case32 cases32[] = {
    {0.0f, "0"},
    {-0.0f, "-0"},
    {0.1f, "0.1"},
    {0.2f, "0.2"},
    {0.3f, "0.3"},
    {0x1.333334p-2f, "0.3"},               /* 0.1f + 0.2f in float: 0.3f */
    {1.1f, "1.1"},
    {1.0f, "1"},
    {123.45f, "123.45"},
    {16777216.0f, "16777216"},             /* 2^24 */
    {16777218.0f, "16777218"},
    {1e16f, "10000000000000000"},          /* 10000000272564224 */
    {-1e16f, "-10000000000000000"},        /* BW_DEC_F32_MAX bytes */
    {1e17f, "1e+17"},
    {1e-5f, "1e-05"},
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
    size_t i;
    for (i = 0; i < sizeof cases32 / sizeof cases32[0]; i++)
        expect_text(text32(cases32[i].v), cases32[i].want, (double)cases32[i].v);
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

Test(float_text, the_puts_give_the_cursor_bytes_in_every_mode_after_any_prefix)
{
    static const size_t prefixes[] = {0, 1, 50, 63, 64, 4090};
    int m;
    size_t k;
    FOR_EACH_MODE(m)
        for (k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++) {
            harness h;
            ref r = {0};
            int j;
            h_open_pattern(&h, m, prefixes[k], &r);
            for (j = 0; j < 200; j++) {
                double v = from_bits(rng());
                float f = from_bits32((uint32_t)rng());
                cr_assert_eq(bw_put_dec_f64(&h.w, v), BW_OK, "%s", mode_name[m]);
                ref_str(&r, text64(v));
                cr_assert_eq(bw_put_u8(&h.w, ','), BW_OK);
                ref_str(&r, ",");
                cr_assert_eq(bw_put_dec_f32(&h.w, f), BW_OK, "%s", mode_name[m]);
                ref_str(&r, text32(f));
            }
            cr_expect_eq(bw_tell(&h.w), r.len, "%s", mode_name[m]);
            cr_expect_eq(bw_flush(&h.w), BW_OK);
            h_close_expecting(&h, &r, mode_name[m]);
        }
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
