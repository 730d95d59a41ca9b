/* SPDX-License-Identifier: MIT */
/* float_oracle.h - what bw_put_dec_f64 and bw_put_dec_f32 must write, found
 * with libc alone: printf's correctly rounded digits and strtod / strtof.
 * Used by test_float_text.c and by the long check (float_full.c).
 *
 * The digits: the fewest p for which a p-digit decimal reads back as v,
 * and of those the nearest v. printf("%.{p-1}e") gives the nearest p-digit
 * decimal; when it does not read back, the nearest one on v's other side
 * may (the values that read back as v are not centred on it at a power of
 * two, whose gap below is half the gap above), and no other p-digit
 * decimal can when neither does. Any decimal of fewer digits is also one
 * of p digits, so "some p-digit decimal reads back" only grows with p.
 * The layout: %.17g's, written out here by hand. */
#ifndef BW_TEST_FLOAT_ORACLE_H
#define BW_TEST_FLOAT_ORACLE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the text reads back as exactly v (its bits: -0 is not 0). */
static int fo_reads_back(const char *s, double v, int is_float)
{
    if (is_float) {
        float got = strtof(s, NULL), want = (float)v;
        return memcmp(&got, &want, sizeof got) == 0;
    }
    double got = strtod(s, NULL);
    return memcmp(&got, &v, sizeof got) == 0;
}

/* A decimal: digits d[0..n) (no sign), first digit at 10^x. */
typedef struct fo_dec {
    char d[24];
    int n, x;
} fo_dec;

/* Parse "[-]d[.ddd]e[+-]x" into dec. */
static void fo_parse_e(const char *s, fo_dec *dec)
{
    dec->n = 0;
    if (*s == '-') s++;
    for (; *s != 'e'; s++)
        if (*s >= '0' && *s <= '9') dec->d[dec->n++] = *s;
    dec->x = atoi(s + 1);
}

static void fo_to_e(const fo_dec *dec, int neg, char *out, size_t size)
{
    snprintf(out, size, "%s%c%s%.*se%d", neg ? "-" : "", dec->d[0], dec->n > 1 ? "." : "",
             dec->n - 1, dec->d + 1, dec->x);
}

/* The nearest p-digit decimal to v that reads back, into dec; 0 when no
 * p-digit decimal does. v is finite and not zero. */
static int fo_p_digits(double v, int p, int is_float, fo_dec *dec)
{
    char e[64];
    int i, up;
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    fo_parse_e(e, dec);
    if (fo_reads_back(e, v, is_float)) return 1;
    /* The neighbour on v's other side: one unit of the last digit away. */
    up = fabs(strtod(e, NULL)) < fabs(v);
    for (i = p - 1; i >= 0; i--) { /* +-1 on the digit string, with carry */
        if (up && dec->d[i] != '9') {
            dec->d[i]++;
            break;
        }
        if (!up && dec->d[i] != '0') {
            dec->d[i]--;
            break;
        }
        dec->d[i] = up ? '0' : '9';
    }
    if (up && i < 0) { /* 99.9 -> 100: one more power of ten */
        dec->d[0] = '1';
        dec->x++;
    }
    if (!up && dec->d[0] == '0') { /* 100 -> 099: 99.9 one power lower */
        memmove(dec->d, dec->d + 1, (size_t)(p - 1));
        dec->d[p - 1] = '9';
        dec->x--;
    }
    fo_to_e(dec, v < 0, e, sizeof e);
    return fo_reads_back(e, v, is_float);
}

/* %.17g's layout of the decimal: exponent form when x < -4 or x >= 17. */
static void fo_layout(const fo_dec *dec0, int neg, char *out)
{
    fo_dec dec = *dec0;
    char *o = out;
    int i;
    while (dec.n > 1 && dec.d[dec.n - 1] == '0') dec.n--;
    if (neg) *o++ = '-';
    if (dec.x < -4 || dec.x >= 17) {
        *o++ = dec.d[0];
        if (dec.n > 1) {
            *o++ = '.';
            memcpy(o, dec.d + 1, (size_t)(dec.n - 1));
            o += dec.n - 1;
        }
        sprintf(o, "e%c%02d", dec.x < 0 ? '-' : '+', abs(dec.x));
        return;
    }
    if (dec.x < 0) {
        *o++ = '0';
        *o++ = '.';
        for (i = 0; i < -dec.x - 1; i++) *o++ = '0';
        memcpy(o, dec.d, (size_t)dec.n);
        o[dec.n] = '\0';
        return;
    }
    for (i = 0; i < dec.n || i <= dec.x; i++) {
        if (i == dec.x + 1) *o++ = '.';
        *o++ = i < dec.n ? dec.d[i] : '0';
    }
    *o = '\0';
}

/* The text v must give (at most 31 bytes). `hint` is a digit count to try
 * first (the count in the text under test; 0 for none): when hint - 1
 * digits cannot read back and hint digits can, the answer has hint digits,
 * with two printf calls instead of up to 17. */
static void fo_expected(double v, int is_float, int hint, char *out)
{
    int p, maxp = is_float ? 9 : 17;
    fo_dec dec;
    if (isnan(v)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        strcpy(out, signbit(v) ? "-0" : "0");
        return;
    }
    p = 1;
    if (hint >= 2 && hint <= maxp && !fo_p_digits(v, hint - 1, is_float, &dec)) p = hint;
    for (; p <= maxp; p++)
        if (fo_p_digits(v, p, is_float, &dec)) break;
    if (p > maxp) {
        strcpy(out, "(no decimal reads back)");
        return;
    }
    fo_layout(&dec, v < 0, out);
}

/* The significant digits in a text the writer gave (its hint): from the
 * first non-zero digit to the last, before any exponent. */
static int fo_count_digits(const char *s)
{
    int n = 0, last = 0;
    for (; *s && *s != 'e'; s++) {
        if (*s < '0' || *s > '9' || (n == 0 && *s == '0')) continue;
        n++;
        if (*s != '0') last = n;
    }
    return last;
}

#endif
