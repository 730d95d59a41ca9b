/* SPDX-License-Identifier: MIT */
/* float_driver.c - instructions per value of floating-point text, for
 * valgrind --tool=callgrind (make callgrind-float): N values written by
 * text_loop* (counted alone with --toggle-collect=text_loop*), the values
 * made before it.
 *
 *   float_driver N SET METHOD
 *
 * SET: random (doubles of every exponent: random bit patterns, finite),
 * prices (0.00 to 99999.99), random32 (floats of every exponent).
 * METHOD: put (bw_put_dec_f64 / _f32 into a contiguous writer), enc (the
 * cursor into one span), snprintf ("%.17g", "%.9g" for floats; then
 * bw_write), pcr (cJSON's "%1.15g", sscanf back, "%1.17g" when it differs),
 * json (bw_put_dec_f64_flags / _f32_flags with BW_DEC_JSON_REAL: jansson's
 * and yyjson's layout), room (bw_fmt_dec_f64 / _f32 with BW_DEC_JSON into
 * one span, given the room left each time: an exact-room buffer's way). */
#include "bufwriter.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#  define TEXT_LOOP __attribute__((noinline, noipa))
#else
#  define TEXT_LOOP __attribute__((noinline))
#endif

TEXT_LOOP void text_loop_put(bw_writer *w, const double *v, size_t n, int f32);
TEXT_LOOP void text_loop_enc(bw_writer *w, const double *v, size_t n, int f32);
TEXT_LOOP void text_loop_snprintf(bw_writer *w, const double *v, size_t n, int f32);
TEXT_LOOP void text_loop_pcr(bw_writer *w, const double *v, size_t n, int f32);
TEXT_LOOP void text_loop_json(bw_writer *w, const double *v, size_t n, int f32);
TEXT_LOOP void text_loop_room(bw_writer *w, const double *v, size_t n, int f32);

void text_loop_json(bw_writer *w, const double *v, size_t n, int f32)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (f32) bw_put_dec_f32_flags(w, (float)v[i], BW_DEC_JSON_REAL);
        else bw_put_dec_f64_flags(w, v[i], BW_DEC_JSON_REAL);
    }
}

void text_loop_room(bw_writer *w, const double *v, size_t n, int f32)
{
    size_t room, i, k;
    unsigned char *p = bw_get_span(w, n * BW_DEC_F64_MAX, &room), *end;
    if (p == NULL) return;
    end = p + room;
    for (i = 0; i < n; i++) {
        if (f32) bw_fmt_dec_f32(p, (size_t)(end - p), (float)v[i], BW_DEC_JSON, &k);
        else bw_fmt_dec_f64(p, (size_t)(end - p), v[i], BW_DEC_JSON, &k);
        p += k;
    }
    bw_advance_to(w, p);
}

void text_loop_put(bw_writer *w, const double *v, size_t n, int f32)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (f32) bw_put_dec_f32(w, (float)v[i]);
        else bw_put_dec_f64(w, v[i]);
    }
}

void text_loop_enc(bw_writer *w, const double *v, size_t n, int f32)
{
    unsigned char *p = bw_get_span(w, n * BW_DEC_F64_MAX, NULL);
    size_t i;
    if (p == NULL) return;
    for (i = 0; i < n; i++) p = f32 ? bw_enc_dec_f32(p, (float)v[i]) : bw_enc_dec_f64(p, v[i]);
    bw_advance_to(w, p);
}

void text_loop_snprintf(bw_writer *w, const double *v, size_t n, int f32)
{
    char b[40];
    size_t i;
    for (i = 0; i < n; i++) {
        int k = snprintf(b, sizeof b, f32 ? "%.9g" : "%.17g", v[i]);
        bw_write(w, b, (size_t)k);
    }
}

void text_loop_pcr(bw_writer *w, const double *v, size_t n, int f32)
{
    char b[40];
    size_t i;
    (void)f32;
    for (i = 0; i < n; i++) {
        double back = 0;
        int k = snprintf(b, sizeof b, "%1.15g", v[i]);
        if (sscanf(b, "%lg", &back) != 1 || back != v[i]) k = snprintf(b, sizeof b, "%1.17g", v[i]);
        bw_write(w, b, (size_t)k);
    }
}

int main(int argc, char **argv)
{
    size_t n, i;
    double *v;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int f32;
    bw_writer w = BW_WRITER_INIT;
    if (argc < 4) {
        fprintf(stderr, "usage: float_driver N random|prices|random32 put|enc|snprintf|pcr|json|room\n");
        return 2;
    }
    n = (size_t)strtoul(argv[1], NULL, 10);
    f32 = strcmp(argv[2], "random32") == 0;
    v = malloc(n * sizeof *v);
    if (v == NULL) return 1;
    for (i = 0; i < n; i++) {
        uint64_t r;
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        r = s * 2685821657736338717ull;
        if (strcmp(argv[2], "prices") == 0) {
            v[i] = (double)(r % 10000000) / 100.0;
        } else if (f32) {
            uint32_t b = (uint32_t)(r >> 32);
            float f;
            if ((b >> 23 & 0xff) == 0xff) b ^= 1u << 30;
            memcpy(&f, &b, sizeof f);
            v[i] = f;
        } else {
            if ((r >> 52 & 0x7ff) == 0x7ff) r ^= (uint64_t)1 << 62;
            memcpy(&v[i], &r, sizeof r);
        }
    }
    bw_reserve(&w, n * (BW_DEC_F64_MAX + 1));
    if (strcmp(argv[3], "put") == 0) text_loop_put(&w, v, n, f32);
    else if (strcmp(argv[3], "enc") == 0) text_loop_enc(&w, v, n, f32);
    else if (strcmp(argv[3], "snprintf") == 0) text_loop_snprintf(&w, v, n, f32);
    else if (strcmp(argv[3], "pcr") == 0) text_loop_pcr(&w, v, n, f32);
    else if (strcmp(argv[3], "json") == 0) text_loop_json(&w, v, n, f32);
    else if (strcmp(argv[3], "room") == 0) text_loop_room(&w, v, n, f32);
    else return 2;
    printf("%zu values, %zu bytes, %.2f bytes per value\n", n, bw_len(&w),
           (double)bw_len(&w) / (double)n);
    bw_release(&w);
    free(v);
    return 0;
}
