/* SPDX-License-Identifier: MIT */
/* float_full.c - make test-float-full: bw_enc_dec_f32 for every one of the
 * 2^32 float bit patterns, then bw_enc_dec_f64 for random doubles of every
 * exponent (100M by default), each against the oracle of the suite
 * (float_oracle.h: printf's correctly rounded digits and strtod / strtof).
 * Prints its rate as it goes and every mismatch (the first 20); exits 1 on
 * any.
 *
 *   float_full [DOUBLES [FLOATS [STRIDE [START]]]]
 *
 * DOUBLES random doubles (100000000), after FLOATS float bit patterns
 * (4294967296: all of them), STRIDE apart (1; an odd stride such as 257
 * samples every exponent in fewer) from START (0; hex with 0x). */
#include "bufwriter.h"
#include "float_oracle.h"

#include <stdint.h>
#include <time.h>

static long long bad;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* bits' text (a float's when is32, else a double's) against the oracle. */
static void check(uint64_t bits, int is32)
{
    char got[40], want[40];
    if (is32) {
        uint32_t b = (uint32_t)bits;
        float v;
        memcpy(&v, &b, sizeof v);
        *bw_enc_dec_f32((unsigned char *)got, v) = '\0';
        fo_expected(v, 1, fo_count_digits(got), want);
    } else {
        double v;
        memcpy(&v, &bits, sizeof v);
        *bw_enc_dec_f64((unsigned char *)got, v) = '\0';
        fo_expected(v, 0, fo_count_digits(got), want);
    }
    if (strcmp(got, want) != 0 && bad++ < 20)
        printf("MISMATCH %s %#llx: got \"%s\", want \"%s\"\n", is32 ? "float" : "double",
               (unsigned long long)bits, got, want);
}

/* The rate so far, when i + 1 is a multiple of every (a power of two). */
static void progress(const char *kind, long long i, long long n, long long every, double t0)
{
    if (((i + 1) & (every - 1)) != 0) return;
    printf("%s: %lld of %lld, %.0f/s, %lld mismatches\n", kind, i + 1, n,
           (double)(i + 1) / (now() - t0), bad);
    fflush(stdout);
}

static void checked(const char *kind, long long n, double t0)
{
    if (n > 0) printf("%s: %lld checked in %.0f s, %lld mismatches\n", kind, n, now() - t0, bad);
}

int main(int argc, char **argv)
{
    long long doubles = argc > 1 ? atoll(argv[1]) : 100000000LL;
    long long floats = argc > 2 ? atoll(argv[2]) : 1LL << 32, i;
    uint32_t stride = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 1;
    uint32_t start = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 0;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    double t0 = now();

    for (i = 0; i < floats; i++) {
        check(start + (uint32_t)i * stride, 1);
        progress("floats", i, floats, 1LL << 26, t0);
    }
    checked("floats", floats, t0);
    t0 = now();
    for (i = 0; i < doubles; i++) {
        s ^= s >> 12; /* xorshift64* */
        s ^= s << 25;
        s ^= s >> 27;
        check(s * 2685821657736338717ull, 0);
        progress("doubles", i, doubles, 1LL << 24, t0);
    }
    checked("doubles", doubles, t0);
    printf("test-float-full: %lld floats, %lld doubles, %lld mismatches\n", floats, doubles, bad);
    return bad != 0;
}
