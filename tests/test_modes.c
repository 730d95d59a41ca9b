/* SPDX-License-Identifier: MIT */
/* test_modes.c - one writer, every destination (0.2).
 *
 * The same checks run in each mode: contiguous (bw_init, and bw_init_buffer
 * over a caller's first buffer), segmented (bw_init_chain), streaming
 * (bw_init_sink, with a sink that appends to a byte array the test owns) and
 * fixed (bw_init_fixed, over a buffer inside guard bytes).
 *
 *   1. Harness: a writer of a given mode on a counting pool, and what it
 *      produced (streaming: what the sink got, then what is still held).
 *   2. Byte tables: every put, write, puts, printf gives the exact bytes.
 *   3. Each contract of bufwriter.h (sections 6-10), by behaviour; the
 *      pool's defaults are in test_defaults.c. Pointer invalidation is not
 *      observable: only "span bytes not advanced are not output" is tested.
 *   4. The 0.1 defects (each test fails on 0.1).
 *   5. Allocation failure injected at every backing call, in every mode. */
#define _GNU_SOURCE 1 /* pipe, fcntl, sigpending, fopencookie-based bw_fopen */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>


/* ======================================================================== */
/* 2. Byte tables                                                           */
/* ======================================================================== */

typedef struct bcase {
    const char *name;
    int (*op)(bw_writer *w);
    const char *want;
    size_t n;
} bcase;

#define OP(id, call) \
    static int id(bw_writer *w) { return call; }
#define WANT(s) s, sizeof(s) - 1

static const unsigned char hex_src[] = {0x00, 0x0f, 0xa5, 0xff};

OP(op_u8, bw_put_u8(w, 0xAB))
OP(op_u16le, bw_put_u16le(w, 0x1234))
OP(op_u16be, bw_put_u16be(w, 0x1234))
OP(op_u32le, bw_put_u32le(w, 0x12345678u))
OP(op_u32be, bw_put_u32be(w, 0x12345678u))
OP(op_u64le, bw_put_u64le(w, 0x0102030405060708ull))
OP(op_u64be, bw_put_u64be(w, 0x0102030405060708ull))
OP(op_i16le, bw_put_i16le(w, -2))
OP(op_i16be, bw_put_i16be(w, -2))
OP(op_i32le, bw_put_i32le(w, -2))
OP(op_i32be, bw_put_i32be(w, -2))
OP(op_i64le, bw_put_i64le(w, INT64_MIN))
OP(op_i64be, bw_put_i64be(w, INT64_MIN))
OP(op_f32le, bw_put_f32le(w, 1.0f))
OP(op_f32be, bw_put_f32be(w, 1.0f))
OP(op_f64le, bw_put_f64le(w, -2.5))
OP(op_f64be, bw_put_f64be(w, -2.5))
OP(op_uv0, bw_put_uvarint(w, 0))
OP(op_uv127, bw_put_uvarint(w, 127))
OP(op_uv128, bw_put_uvarint(w, 128))
OP(op_uv300, bw_put_uvarint(w, 300))
OP(op_uv2_63, bw_put_uvarint(w, (uint64_t)1 << 63))
OP(op_uvmax, bw_put_uvarint(w, UINT64_MAX))
OP(op_sv0, bw_put_svarint(w, 0))
OP(op_svm1, bw_put_svarint(w, -1))
OP(op_sv1, bw_put_svarint(w, 1))
OP(op_svm64, bw_put_svarint(w, -64))
OP(op_sv64, bw_put_svarint(w, 64))
OP(op_svmin, bw_put_svarint(w, INT64_MIN))
OP(op_svmax, bw_put_svarint(w, INT64_MAX))
OP(op_du0, bw_put_dec_u64(w, 0))
OP(op_du42, bw_put_dec_u64(w, 42))
OP(op_dumax, bw_put_dec_u64(w, UINT64_MAX))
OP(op_di0, bw_put_dec_i64(w, 0))
OP(op_dim12, bw_put_dec_i64(w, -12))
OP(op_dimin, bw_put_dec_i64(w, INT64_MIN))
OP(op_dimax, bw_put_dec_i64(w, INT64_MAX))
OP(op_hex, bw_put_hex(w, hex_src, sizeof hex_src))
OP(op_hex_empty, bw_put_hex(w, hex_src, 0))
OP(op_hex_null_empty, bw_put_hex(w, NULL, 0))
OP(op_write, bw_write(w, "abc", 3))
OP(op_write0, bw_write(w, "abc", 0))
OP(op_write_null0, bw_write(w, NULL, 0))
OP(op_puts, bw_puts(w, "hello"))
OP(op_puts_empty, bw_puts(w, ""))
OP(op_printf, bw_printf(w, "%d-%s", 42, "x"))
OP(op_printf_empty, bw_printf(w, "%s", ""))
OP(op_printf_float, bw_printf(w, "%5.1f|%x|%c", 3.14159, 255u, 'z'))

static const bcase cases[] = {
    {"u8", op_u8, WANT("\xab")},
    {"u16le", op_u16le, WANT("\x34\x12")},
    {"u16be", op_u16be, WANT("\x12\x34")},
    {"u32le", op_u32le, WANT("\x78\x56\x34\x12")},
    {"u32be", op_u32be, WANT("\x12\x34\x56\x78")},
    {"u64le", op_u64le, WANT("\x08\x07\x06\x05\x04\x03\x02\x01")},
    {"u64be", op_u64be, WANT("\x01\x02\x03\x04\x05\x06\x07\x08")},
    {"i16le -2", op_i16le, WANT("\xfe\xff")},
    {"i16be -2", op_i16be, WANT("\xff\xfe")},
    {"i32le -2", op_i32le, WANT("\xfe\xff\xff\xff")},
    {"i32be -2", op_i32be, WANT("\xff\xff\xff\xfe")},
    {"i64le min", op_i64le, WANT("\x00\x00\x00\x00\x00\x00\x00\x80")},
    {"i64be min", op_i64be, WANT("\x80\x00\x00\x00\x00\x00\x00\x00")},
    {"f32le 1.0", op_f32le, WANT("\x00\x00\x80\x3f")},
    {"f32be 1.0", op_f32be, WANT("\x3f\x80\x00\x00")},
    {"f64le -2.5", op_f64le, WANT("\x00\x00\x00\x00\x00\x00\x04\xc0")},
    {"f64be -2.5", op_f64be, WANT("\xc0\x04\x00\x00\x00\x00\x00\x00")},
    {"uvarint 0", op_uv0, WANT("\x00")},
    {"uvarint 127", op_uv127, WANT("\x7f")},
    {"uvarint 128", op_uv128, WANT("\x80\x01")},
    {"uvarint 300", op_uv300, WANT("\xac\x02")},
    {"uvarint 2^63", op_uv2_63, WANT("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01")},
    {"uvarint max", op_uvmax, WANT("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
    {"svarint 0", op_sv0, WANT("\x00")},
    {"svarint -1", op_svm1, WANT("\x01")},
    {"svarint 1", op_sv1, WANT("\x02")},
    {"svarint -64", op_svm64, WANT("\x7f")},
    {"svarint 64", op_sv64, WANT("\x80\x01")},
    {"svarint min", op_svmin, WANT("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
    {"svarint max", op_svmax, WANT("\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
    {"dec_u64 0", op_du0, WANT("0")},
    {"dec_u64 42", op_du42, WANT("42")},
    {"dec_u64 max", op_dumax, WANT("18446744073709551615")},
    {"dec_i64 0", op_di0, WANT("0")},
    {"dec_i64 -12", op_dim12, WANT("-12")},
    {"dec_i64 min", op_dimin, WANT("-9223372036854775808")},
    {"dec_i64 max", op_dimax, WANT("9223372036854775807")},
    {"hex", op_hex, WANT("000fa5ff")},
    {"hex empty", op_hex_empty, WANT("")},
    {"hex NULL 0", op_hex_null_empty, WANT("")},
    {"write", op_write, WANT("abc")},
    {"write 0", op_write0, WANT("")},
    {"write NULL 0", op_write_null0, WANT("")},
    {"puts", op_puts, WANT("hello")},
    {"puts empty", op_puts_empty, WANT("")},
    {"printf", op_printf, WANT("42-x")},
    {"printf empty", op_printf_empty, WANT("")},
    {"printf float", op_printf_float, WANT("  3.1|ff|z")},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Prefix lengths around the streaming buffer's and first buffer's end (64)
 * and a segmented writer's first block (4 KiB). */
static const size_t prefixes[] = {0, 1, 7, 58, 63, 64, 4059, 4063, 4064, 4090};
#define NPREFIXES (sizeof prefixes / sizeof prefixes[0])

Test(modes_bytes, every_call_gives_its_exact_bytes_in_every_mode_after_any_prefix)
{
    int m;
    size_t c, k;
    FOR_EACH_MODE(m)
        for (c = 0; c < NCASES; c++)
            for (k = 0; k < NPREFIXES; k++) {
                harness h;
                ref r = {0};
                int rc;
                h_open(&h, m);
                put_pattern(&h, 0, prefixes[k]);
                rc = cases[c].op(&h.w);
                cr_expect_eq(rc, BW_OK, "%s in %s after %zu bytes: %s", cases[c].name,
                             mode_name[m], prefixes[k], bw_strerror(rc));
                cr_expect_eq(bw_tell(&h.w), prefixes[k] + cases[c].n, "%s in %s", cases[c].name,
                             mode_name[m]);
                cr_expect_eq(bw_flush(&h.w), BW_OK);
                if (m == M_SINK) cr_expect_eq(bw_len(&h.w), 0, "flush sends everything");
                ref_add(&r, pattern(), prefixes[k]);
                ref_add(&r, cases[c].want, cases[c].n);
                expect_output(&h, r.d, r.len, cases[c].name);
                ref_free(&r);
                h_close(&h);
            }
}

Test(modes_bytes, the_whole_table_repeated_crosses_blocks_in_every_mode)
{
    int m, rep;
    size_t c;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        const unsigned char *p;
        const char *s;
        h_open_ex(&h, m, m == M_FIXED ? 1u << 17 : default_param(m), 0, 0);
        for (rep = 0; rep < 300; rep++)
            for (c = 0; c < NCASES; c++) {
                cr_assert_eq(cases[c].op(&h.w), BW_OK, "%s in %s, rep %d", cases[c].name,
                             mode_name[m], rep);
                ref_add(&r, cases[c].want, cases[c].n);
            }
        cr_expect_eq(bw_tell(&h.w), r.len);
        expect_output(&h, r.d, r.len, "table x300");
        if (m != M_SINK) {
            p = bw_pullup(&h.w);
            cr_assert_not_null(p, "%s", mode_name[m]);
            cr_expect(memcmp(p, r.d, r.len) == 0, "%s: pullup", mode_name[m]);
            s = bw_cstr(&h.w);
            cr_assert_not_null(s, "%s", mode_name[m]);
            cr_expect(memcmp(s, r.d, r.len) == 0 && s[r.len] == '\0', "%s: cstr", mode_name[m]);
        }
        cr_expect_eq(bw_flush(&h.w), BW_OK);
        expect_output(&h, r.d, r.len, "table x300 after flush");
        ref_free(&r);
        h_close(&h);
    }
}

Test(modes_bytes, printf_long_output_in_every_mode)
{
    char want[400];
    int m, n = snprintf(want, sizeof want, "[%0*d|%s]", 300, 12345, "tail");
    cr_assert_eq(n, 307);
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        cr_expect_eq(bw_printf(&h.w, "[%0*d|%s]", 300, 12345, "tail"), BW_OK, "%s",
                     mode_name[m]);
        ref_add(&r, pattern(), 10);
        ref_add(&r, want, (size_t)n);
        expect_output(&h, r.d, r.len, "printf 307 bytes");
        ref_free(&r);
        h_close(&h);
    }
}

/* ======================================================================== */
/* 3. The detailed rules                                                    */
/* ======================================================================== */

/* --- capacity == len + free; free needs no cold path -------------------- */

Test(modes_rules, free_capacity_is_taken_without_cold_path_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t f, i;
        long calls;
        bw_pool_stats before, after;
        const unsigned char *d;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        cr_expect_eq(bw_capacity(&h.w), bw_len(&h.w) + bw_free_capacity(&h.w));
        f = bw_free_capacity(&h.w);
        cr_expect_gt(f, 0, "%s", mode_name[m]);
        before = h_stats(&h);
        calls = h_calls(&h);
        d = bw_data(&h.w);
        for (i = 0; i < f; i++) cr_assert_eq(bw_put_u8(&h.w, pat(10 + i, 7)), BW_OK);
        after = h_stats(&h);
        cr_expect_eq(after.rents, before.rents, "%s: no rent within free", mode_name[m]);
        cr_expect_eq(h_calls(&h), calls, "%s: no allocation within free", mode_name[m]);
        cr_expect_eq(h.s.calls, 0, "%s: no send within free", mode_name[m]);
        cr_expect(bw_data(&h.w) == d, "%s: no move within free", mode_name[m]);
        cr_expect_eq(bw_free_capacity(&h.w), 0, "%s", mode_name[m]);
        cr_expect_eq(bw_capacity(&h.w), bw_len(&h.w), "%s", mode_name[m]);
        expect_output(&h, pattern(), 10 + f, "filled to free");
        h_close(&h);
    }
}

Test(modes_rules, consumed_room_is_not_counted_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t cap, fr;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        cap = bw_capacity(&h.w);
        fr = bw_free_capacity(&h.w);
        cr_assert_eq(bw_consume(&h.w, 4), BW_OK);
        cr_expect_eq(bw_len(&h.w), 6, "%s", mode_name[m]);
        cr_expect_eq(bw_free_capacity(&h.w), fr, "%s: free unchanged by consume", mode_name[m]);
        cr_expect_eq(bw_capacity(&h.w), cap - 4, "%s: capacity drops by the consumed 4",
                     mode_name[m]);
        cr_expect_eq(bw_capacity(&h.w), bw_len(&h.w) + bw_free_capacity(&h.w));
        expect_output(&h, pattern() + 4, 6, "after consume");
        h_close(&h);
    }
}

/* --- bw_data and spans ------------------------------------------------ */

Test(modes_rules, data_is_null_only_without_storage_or_across_blocks)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        const unsigned char *d;
        h_open(&h, m);
        if (m == M_BUFFER) cr_expect(bw_data(&h.w) == h.ibuf, "first buffer is storage");
        else if (m == M_FIXED) cr_expect(bw_data(&h.w) == h.fbuf, "fixed buffer is storage");
        else cr_expect_null(bw_data(&h.w), "%s: no storage yet", mode_name[m]);
        cr_expect_eq(bw_write(&h.w, "abcdef", 6), BW_OK);
        d = bw_data(&h.w);
        cr_assert_not_null(d, "%s", mode_name[m]);
        cr_expect(memcmp(d, "abcdef", 6) == 0, "%s", mode_name[m]);
        if (m == M_BUFFER) cr_expect(d == h.ibuf);
        if (m == M_FIXED) cr_expect(d == h.fbuf);
        cr_expect_eq(bw_consume(&h.w, 2), BW_OK);
        cr_expect(bw_data(&h.w) == d + 2, "%s: data moves to the first held byte",
                  mode_name[m]);
        cr_expect_eq(bw_consume(&h.w, 4), BW_OK);
        cr_assert_not_null(bw_data(&h.w), "%s: nothing held, storage kept", mode_name[m]);
        cr_expect(bw_get_span(&h.w, 1, NULL) == bw_data(&h.w),
                  "%s: with nothing held, data is where the next byte goes", mode_name[m]);
        h_close(&h);
    }
}

Test(modes_rules, contiguous_with_initial_capacity_has_data_and_no_bytes)
{
    harness h;
    h_open_ex(&h, M_CONTIG, 100, 0, 0);
    cr_expect_eq(bw_capacity(&h.w), 128, "the growth rule's size for 100");
    cr_assert_not_null(bw_data(&h.w));
    cr_expect(bw_get_span(&h.w, 1, NULL) == bw_data(&h.w));
    cr_expect_eq(bw_len(&h.w), 0);
    h_close(&h);
}

Test(modes_rules, segmented_data_null_across_blocks_then_back_after_consume)
{
    harness h;
    ref r = {0};
    struct iovec iov[4];
    size_t cnt;
    h_open(&h, M_CHAIN);
    chain_blocks(&h, 2, &r);
    cr_expect_null(bw_data(&h.w), "two blocks");
    cnt = bw_iovec(&h.w, iov, 4);
    cr_assert_eq(cnt, 2);
    cr_assert_eq(bw_consume(&h.w, iov[0].iov_len), BW_OK);
    cr_expect(bw_data(&h.w) == iov[1].iov_base, "one block left: data is its first byte");
    expect_output(&h, r.d + iov[0].iov_len, r.len - iov[0].iov_len, "after consume");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, span_is_data_plus_len_and_avail_is_free_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        size_t avail = 0;
        unsigned char *s;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        ref_add(&r, pattern(), 10);
        s = (unsigned char *)bw_get_span(&h.w, 5, &avail);
        cr_assert_not_null(s, "%s", mode_name[m]);
        cr_expect(s == bw_data(&h.w) + bw_len(&h.w), "%s", mode_name[m]);
        cr_expect_eq(avail, bw_free_capacity(&h.w), "%s", mode_name[m]);
        cr_expect_geq(avail, 5);
        memcpy(s, "hello", 5);
        cr_expect_eq(bw_advance(&h.w, 5), BW_OK);
        ref_add(&r, "hello", 5);
        /* A hint beyond the free space: grow, send or refuse. */
        s = (unsigned char *)bw_get_span(&h.w, bw_free_capacity(&h.w) + 1, &avail);
        if (m == M_FIXED) {
            cr_expect_null(s);
            cr_expect_eq(avail, 0);
            cr_expect_eq(bw_error(&h.w), BW_EFULL);
        } else {
            cr_assert_not_null(s, "%s", mode_name[m]);
            cr_expect_eq(avail, bw_free_capacity(&h.w), "%s", mode_name[m]);
            if (m != M_CHAIN)
                cr_expect(s == bw_data(&h.w) + bw_len(&h.w), "%s: span after growth",
                          mode_name[m]);
            memcpy(s, "XY", 2);
            cr_expect_eq(bw_advance(&h.w, 2), BW_OK);
            ref_add(&r, "XY", 2);
        }
        expect_output(&h, r.d, r.len, "span");
        ref_free(&r);
        h_close(&h);
    }
}

Test(modes_rules, segmented_span_starts_a_new_block_and_skips_the_rest)
{
    harness h;
    size_t f, avail = 0;
    unsigned char *s;
    bw_pool_stats before;
    h_open(&h, M_CHAIN);
    cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
    f = bw_free_capacity(&h.w);
    s = (unsigned char *)bw_get_span(&h.w, f, &avail);
    cr_expect(s == bw_data(&h.w) + 10, "a hint that fits stays in the tail block");
    before = h_stats(&h);
    s = (unsigned char *)bw_get_span(&h.w, f + 1, &avail);
    cr_assert_not_null(s);
    cr_expect_eq(h_stats(&h).rents, before.rents + 1, "one new block");
    cr_expect(s != bw_data(&h.w) + 10);
    cr_expect_eq(avail, bw_free_capacity(&h.w));
    cr_expect_geq(avail, f + 1);
    cr_expect_eq(bw_len(&h.w), 10, "the old tail's rest is not held");
    cr_expect_eq(bw_tell(&h.w), 10);
    memcpy(s, "XYZ", 3);
    cr_expect_eq(bw_advance(&h.w, 3), BW_OK);
    cr_expect_eq(bw_tell(&h.w), 13);
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 2);
    expect_output(&h, "0123456789XYZ", 13, "span skip");
    /* With the tail full, a hint of 0 still needs one byte: a new block. */
    f = bw_free_capacity(&h.w);
    put_pattern(&h, 0, f);
    cr_expect_eq(bw_free_capacity(&h.w), 0);
    s = (unsigned char *)bw_get_span(&h.w, 0, &avail);
    cr_assert_not_null(s);
    cr_expect_geq(avail, 1);
    cr_expect_eq(bw_len(&h.w), 13 + f);
    h_close(&h);
}

/* --- Span bytes not advanced are not output (a 0.1 defect) -------------- */

Test(modes_rules, span_bytes_not_advanced_are_not_output_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        unsigned char *s;
        size_t len = 0;
        void *b;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "ab", 2), BW_OK);
        s = (unsigned char *)bw_get_span(&h.w, 8, NULL);
        cr_assert_not_null(s);
        memcpy(s, "SCRIBBLE", 8);
        cr_assert_eq(bw_write(&h.w, "cd", 2), BW_OK);
        ref_add(&r, "abcd", 4);
        expect_output(&h, r.d, r.len, "span scribble then write");
        s = (unsigned char *)bw_get_span(&h.w, 8, NULL);
        cr_assert_not_null(s);
        memcpy(s, "SCRIBBLE", 8);
        cr_expect_eq(bw_flush(&h.w), BW_OK);
        expect_output(&h, r.d, r.len, "span scribble then flush");
        /* A growing write after a scribbled span. */
        s = (unsigned char *)bw_get_span(&h.w, 8, NULL);
        cr_assert_not_null(s);
        memcpy(s, "SCRIBBLE", 8);
        put_pattern(&h, 0, 5000);
        ref_add(&r, pattern(), 5000);
        expect_output(&h, r.d, r.len, "span scribble then 5000 bytes");
        s = (unsigned char *)bw_get_span(&h.w, 8, NULL);
        cr_assert_not_null(s);
        memcpy(s, "SCRIBBLE", 8);
        if (m != M_SINK && m != M_FIXED) {
            const char *c = bw_cstr(&h.w);
            cr_assert_not_null(c);
            cr_expect(memcmp(c, r.d, r.len) == 0 && c[r.len] == '\0', "%s: cstr", mode_name[m]);
            size_t cap = 0;
            b = bw_detach(&h.w, &len, &cap);
            cr_expect_eq(len, r.len, "%s: detach length", mode_name[m]);
            cr_assert_not_null(b);
            cr_expect(memcmp(b, r.d, r.len) == 0, "%s: detach", mode_name[m]);
            cr_expect_eq(bw_pool_return(bw_writer_pool(&h.w), b, cap), BW_OK);
        }
        ref_free(&r);
        h_close(&h);
    }
}

/* --- Streaming -------------------------------------------------------- */

Test(modes_rules, streaming_sends_only_when_room_is_needed_and_on_flush)
{
    harness h;
    size_t i, avail;
    h_open(&h, M_SINK);
    for (i = 0; i < SINK_BUF; i++) cr_assert_eq(bw_put_u8(&h.w, pat(i, 7)), BW_OK);
    cr_expect_eq(h.s.calls, 0, "64 bytes fit a 64-byte buffer: nothing sent");
    cr_expect_eq(bw_len(&h.w), SINK_BUF);
    cr_expect_eq(bw_put_u8(&h.w, pat(SINK_BUF, 7)), BW_OK);
    cr_expect_geq(h.s.calls, 1, "the 65th byte needs room: the buffer is sent");
    cr_expect(h.s.len >= 1 && memcmp(h.s.got, pattern(), h.s.len) == 0, "a prefix was sent");
    expect_output(&h, pattern(), SINK_BUF + 1, "65 bytes");
    /* Calls that fit send nothing. */
    h.s.calls = 0;
    cr_expect_eq(bw_reserve(&h.w, bw_free_capacity(&h.w)), BW_OK);
    cr_expect_not_null(bw_get_span(&h.w, 1, &avail));
    cr_expect_eq(bw_printf(&h.w, "%d", 7), BW_OK);
    cr_expect_eq(bw_reserve(&h.w, 0), BW_OK);
    cr_expect_eq(h.s.calls, 0, "reserve, span and printf that fit send nothing");
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_geq(h.s.calls, 1);
    cr_expect_eq(bw_len(&h.w), 0, "flush sends every held byte");
    cr_expect_eq(h.s.len, SINK_BUF + 2);
    cr_expect_eq(h.s.got[SINK_BUF + 1], '7');
    h_close(&h);
}

Test(modes_rules, short_counts_and_eintr_are_continued)
{
    harness h;
    ref r = {0};
    int i;
    h_open(&h, M_SINK);
    h.s.take = 3;
    h.s.eintr_first = 1;
    for (i = 0; i < 20; i++) {
        put_pattern(&h, (size_t)i * 17, 17);
        ref_add(&r, pattern() + i * 17, 17);
    }
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_eq(bw_error(&h.w), BW_OK);
    cr_expect_eq(bw_len(&h.w), 0);
    cr_expect_eq(h.s.len, r.len);
    cr_expect(memcmp(h.s.got, r.d, r.len) == 0, "every byte once, in order");
    cr_expect_geq(h.s.calls, (long)(r.len / 3));
    cr_expect_geq(h.s.min_n, 1, "the sink is never called with n = 0");
    cr_expect_eq(h.s.wrong_thread, 0, "called on the calling thread");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, sink_error_records_eio_and_keeps_its_errno)
{
    harness h;
    h_open(&h, M_SINK);
    h.s.budget = 0;
    h.s.fail_errno = EPIPE;
    put_pattern(&h, 0, 10);
    errno = 0;
    cr_expect_eq(bw_flush(&h.w), BW_EIO);
    cr_expect_eq(errno, EPIPE, "errno as the sink left it");
    cr_expect_eq(bw_error(&h.w), BW_EIO, "recorded");
    cr_expect_eq(h.s.calls, 1);
    expect_output(&h, pattern(), 10, "held bytes kept");
    cr_expect_eq(bw_put_u8(&h.w, 1), BW_EIO, "later writes refused");
    cr_expect_eq(bw_flush(&h.w), BW_EIO);
    cr_expect_eq(h.s.calls, 1, "nothing sent while the error is recorded");
    h_close(&h);
}

Test(modes_rules, broken_sink_is_eio_with_errno_eio_and_no_loop)
{
    static const int kinds[] = {SF_ZERO, SF_TOO_MANY, SF_BELOW};
    static const char *const names[] = {"returns 0", "returns n + 1", "returns -2"};
    size_t k;
    for (k = 0; k < 3; k++) {
        harness h;
        h_open(&h, M_SINK);
        h.s.budget = 0;
        h.s.fail_kind = kinds[k];
        put_pattern(&h, 0, 10);
        errno = 0;
        cr_expect_eq(bw_flush(&h.w), BW_EIO, "sink %s", names[k]);
        cr_expect_eq(errno, EIO, "sink %s: errno EIO", names[k]);
        cr_expect_eq(bw_error(&h.w), BW_EIO, "sink %s", names[k]);
        cr_expect_eq(h.s.calls, 1, "sink %s: called once, no loop", names[k]);
        h_close(&h);
    }
}

Test(modes_rules, clear_error_then_flush_retries_from_first_byte_not_taken)
{
    harness h;
    h_open(&h, M_SINK);
    h.s.budget = 5;
    cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
    cr_expect_eq(bw_flush(&h.w), BW_EIO);
    cr_expect_eq(h.s.len, 5);
    cr_expect_eq(bw_len(&h.w), 5, "what the sink did not take stays held");
    cr_expect_eq(bw_tell(&h.w), 10);
    bw_clear_error(&h.w);
    cr_expect_eq(bw_error(&h.w), BW_OK);
    h.s.budget = SIZE_MAX;
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_eq(h.s.len, 10);
    cr_expect(memcmp(h.s.got, "0123456789", 10) == 0);
    cr_expect_eq(bw_len(&h.w), 0);
    h_close(&h);
}

Test(modes_rules, failed_large_call_accepts_a_prefix_told_by_tell)
{
    harness h;
    uint64_t t;
    h_open(&h, M_SINK);
    h.s.budget = 100;
    cr_expect_eq(bw_write(&h.w, pattern(), 1000), BW_EIO);
    t = bw_tell(&h.w);
    cr_expect_leq(t, 1000);
    cr_expect_geq(t, 100, "at least what the sink took was accepted");
    cr_expect_eq(h.s.len, 100);
    cr_expect_eq(h.s.len + bw_len(&h.w), t, "every accepted byte is sent or held");
    expect_output(&h, pattern(), (size_t)t, "accepted prefix");
    h_close(&h);
}

Test(modes_rules, call_within_buffer_size_is_all_or_nothing)
{
    harness h;
    uint64_t t;
    h_open(&h, M_SINK);
    h.s.budget = 0;
    put_pattern(&h, 0, 40);
    cr_expect_eq(bw_write(&h.w, pattern() + 40, 40), BW_EIO);
    t = bw_tell(&h.w);
    cr_expect(t == 40 || t == 80, "all or nothing: tell %llu", (unsigned long long)t);
    expect_output(&h, pattern(), (size_t)t, "all or nothing");
    h_close(&h);
}

Test(modes_rules, buffer_size_default_rounding_and_overflow)
{
    static const size_t sizes[][2] = {{0, 65536}, {100, 128}, {3, 16}, {64, 64}, {5000, 8192}};
    size_t k;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        harness h;
        h_open_ex(&h, M_SINK, sizes[k][0], 0, 0);
        cr_expect_eq(h_stats(&h).rents, 0, "the buffer is rented at the first write");
        cr_expect_null(bw_data(&h.w));
        cr_expect_eq(bw_put_u8(&h.w, 1), BW_OK);
        cr_expect_eq(h_stats(&h).rents, 1);
        cr_expect_eq(bw_capacity(&h.w), sizes[k][1], "buffer_size %zu", sizes[k][0]);
        h_close(&h);
    }
    {
        harness h;
        bw_writer w = BW_WRITER_INIT;
        h_open(&h, M_CONTIG);
        cr_expect_eq(bw_init_sink(&w, h.p, opaque((size_t)PTRDIFF_MAX + 1), test_sink, &h.s),
                     BW_EOVERFLOW);
        cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "recorded");
        bw_release(&w);
        h_close(&h);
    }
}

Test(modes_rules, reserve_or_span_beyond_buffer_sends_then_takes_a_big_block)
{
    harness h;
    ref r = {0};
    unsigned char *s;
    size_t avail = 0;
    long calls;
    h_open(&h, M_SINK);
    put_pattern(&h, 0, 10);
    ref_add(&r, pattern(), 10);
    cr_expect_eq(bw_reserve(&h.w, 200), BW_OK);
    cr_expect_eq(h.s.len, 10, "what was held is sent");
    cr_expect_eq(bw_len(&h.w), 0);
    cr_expect_geq(bw_free_capacity(&h.w), 200);
    calls = h.s.calls;
    put_pattern(&h, 10, 200);
    ref_add(&r, pattern() + 10, 200);
    cr_expect_eq(h.s.calls, calls, "the reserved room takes 200 bytes without a send");
    s = (unsigned char *)bw_get_span(&h.w, 300, &avail);
    cr_assert_not_null(s);
    cr_expect_geq(avail, 300);
    cr_expect_eq(bw_len(&h.w), 0, "held bytes sent before the big span");
    memcpy(s, pattern() + 210, 300);
    cr_expect_eq(bw_advance(&h.w, 300), BW_OK);
    ref_add(&r, pattern() + 210, 300);
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    expect_output(&h, r.d, r.len, "reserve and span beyond the buffer");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, release_and_clear_never_send_and_keep_the_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        bw_clear(&h.w);
        cr_expect_eq(bw_len(&h.w), 0);
        put_pattern(&h, 0, 10);
        bw_release(&h.w);
        cr_expect_eq(h.s.calls, 0, "%s: clear and release send nothing", mode_name[m]);
        cr_expect_eq(bw_len(&h.w), 0);
        cr_expect_eq(bw_tell(&h.w), 0);
        /* Still the same mode, with the same parameters. */
        cr_assert_eq(bw_put_u8(&h.w, 'a'), BW_OK);
        switch (m) {
        case M_SINK:
            cr_expect_eq(bw_capacity(&h.w), SINK_BUF, "buffer size kept");
            put_pattern(&h, 0, 100);
            cr_expect_geq(h.s.calls, 1, "still streaming to the same sink");
            break;
        case M_FIXED:
            cr_expect(bw_data(&h.w) == h.fbuf, "still the fixed buffer");
            cr_expect_eq(bw_reserve(&h.w, FIXED_SIZE), BW_EFULL, "still fixed");
            break;
        case M_CHAIN:
            put_pattern(&h, 0, 5000);
            cr_expect_null(bw_data(&h.w), "still segmented: two blocks");
            break;
        default:
            put_pattern(&h, 0, 5000);
            cr_expect_not_null(bw_data(&h.w), "still contiguous");
            break;
        }
        h_close(&h);
    }
}

Test(modes_rules, flush_returns_the_recorded_error_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        record_einval(&h);
        cr_expect_eq(bw_flush(&h.w), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(h.s.calls, 0, "nothing sent");
        expect_output(&h, "abc", 3, "flush with an error");
        bw_clear_error(&h.w);
        cr_expect_eq(bw_flush(&h.w), BW_OK, "%s", mode_name[m]);
        if (m == M_SINK) cr_expect_eq(h.s.len, 3);
        expect_output(&h, "abc", 3, "flush");
        h_close(&h);
    }
}

/* --- File descriptors, EPIPE, SIGPIPE ----------------------------------- */

static void read_exact(int fd, unsigned char *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, dst + got, n - got);
        cr_assert_gt(r, 0, "read from the pipe");
        got += (size_t)r;
    }
}

static int pipe_is_empty(int fd)
{
    unsigned char c;
    int fl = fcntl(fd, F_GETFL);
    ssize_t r;
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    r = read(fd, &c, 1);
    fcntl(fd, F_SETFL, fl);
    return r < 0 && errno == EAGAIN;
}

Test(modes_rules, init_fd_negative_is_einval_recorded)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    h_open(&h, M_CONTIG);
    cr_expect_eq(bw_init_fd(&w, h.p, 0, -1), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    cr_expect(bw_writer_pool(&w) == h.p, "a valid streaming writer on its pool");
    bw_release(&w);
    h_close(&h);
}

Test(modes_rules, fd_writer_sends_and_never_closes_the_fd)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    unsigned char got[300];
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    h_open(&h, M_CONTIG);
    cr_assert_eq(bw_init_fd(&w, h.p, 64, fds[1]), BW_OK);
    cr_expect_eq(bw_write(&w, pattern(), 300), BW_OK);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_len(&w), 0);
    read_exact(fds[0], got, 300);
    cr_expect(memcmp(got, pattern(), 300) == 0);
    bw_release(&w);
    cr_expect_neq(fcntl(fds[1], F_GETFD), -1, "the fd is still open");
    close(fds[0]);
    close(fds[1]);
    h_close(&h);
}

Test(modes_rules, eagain_in_a_flush_records_eio)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    unsigned char junk[4096];
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    memset(junk, 'j', sizeof junk);
    while (write(fds[1], junk, sizeof junk) > 0) continue;
    while (write(fds[1], junk, 1) > 0) continue;
    h_open(&h, M_CONTIG);
    cr_assert_eq(bw_init_fd(&w, h.p, 64, fds[1]), BW_OK);
    cr_expect_eq(bw_write(&w, "0123456789", 10), BW_OK);
    errno = 0;
    cr_expect_eq(bw_flush(&w), BW_EIO);
    cr_expect_eq(errno, EAGAIN);
    cr_expect_eq(bw_error(&w), BW_EIO, "recorded, like any failure");
    cr_expect_eq(bw_len(&w), 10, "kept");
    bw_release(&w);
    close(fds[0]);
    close(fds[1]);
    h_close(&h);
}

Test(modes_rules, write_fd_on_a_streaming_writer_bypasses_the_sink)
{
    harness h;
    unsigned char got[10];
    size_t n = 0;
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    h_open(&h, M_SINK);
    cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
    cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), BW_OK);
    cr_expect_eq(n, 10);
    cr_expect_eq(h.s.calls, 0, "the sink is not called");
    cr_expect_eq(bw_len(&h.w), 0, "what went out is consumed");
    cr_expect_eq(bw_tell(&h.w), 10);
    read_exact(fds[0], got, 10);
    cr_expect(memcmp(got, "0123456789", 10) == 0);
    close(fds[0]);
    close(fds[1]);
    h_close(&h);
}

Test(modes_rules, write_fd_sends_held_bytes_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        unsigned char *got;
        size_t n = 0, held, sent;
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        h_open(&h, m);
        put_pattern(&h, 0, 6000);
        put_pattern(&h, 6000, 30);
        ref_add(&r, pattern(), 6030);
        held = bw_len(&h.w);
        sent = h.s.len;
        cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(n, held);
        cr_expect_eq(bw_len(&h.w), 0);
        got = (unsigned char *)malloc(held + 1);
        read_exact(fds[0], got, held);
        cr_expect(sent + held == r.len && memcmp(got, r.d + sent, held) == 0,
                  "%s: the held bytes, in order", mode_name[m]);
        cr_expect(pipe_is_empty(fds[0]));
        free(got);
        ref_free(&r);
        close(fds[0]);
        close(fds[1]);
        h_close(&h);
    }
}

Test(modes_rules, write_fd_refuses_a_writer_with_a_recorded_error)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t n = 99;
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        record_einval(&h);
        cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), BW_EINVAL, "%s", mode_name[m]);
        cr_expect(pipe_is_empty(fds[0]), "%s: nothing sent", mode_name[m]);
        expect_output(&h, "abc", 3, "write_fd refused");
        close(fds[0]);
        close(fds[1]);
        h_close(&h);
    }
}

Test(modes_rules, epipe_is_eio_not_recorded_sigpipe_untouched)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    struct sigaction before, after;
    sigset_t mask_before, mask_after, pending;
    int fds[2];
    signal(SIGPIPE, SIG_DFL);
    cr_assert_eq(sigaction(SIGPIPE, NULL, &before), 0);
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &mask_before), 0);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    h_open(&h, M_CONTIG);
    cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
    errno = 0;
    cr_expect_eq(bw_write_fd(&h.w, fds[1], NULL), BW_EIO, "written may be NULL");
    cr_expect_eq(errno, EPIPE);
    cr_expect_eq(bw_error(&h.w), BW_OK, "a write_fd failure is not recorded");
    cr_expect_eq(bw_len(&h.w), 10, "the rest stays held");
    /* A streaming writer on the same fd records it. */
    cr_assert_eq(bw_init_fd(&w, h.p, 64, fds[1]), BW_OK);
    cr_expect_eq(bw_write(&w, "abc", 3), BW_OK);
    errno = 0;
    cr_expect_eq(bw_flush(&w), BW_EIO);
    cr_expect_eq(errno, EPIPE);
    cr_expect_eq(bw_error(&w), BW_EIO);
    bw_release(&w);
    cr_assert_eq(sigaction(SIGPIPE, NULL, &after), 0);
    cr_expect(after.sa_handler == SIG_DFL, "SIGPIPE disposition unchanged");
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &mask_after), 0);
    cr_expect_eq(sigismember(&mask_after, SIGPIPE), sigismember(&mask_before, SIGPIPE),
                 "signal mask unchanged");
    cr_assert_eq(sigpending(&pending), 0);
    cr_expect(!sigismember(&pending, SIGPIPE), "no SIGPIPE left pending");
    (void)before;
    close(fds[1]);
    h_close(&h);
}

/* --- Positions, patch, truncate ----------------------------------------- */

Test(modes_rules, patch_by_position_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        uint64_t at;
        size_t body = m == M_SINK ? 20 : 5000;
        h_open(&h, m);
        put_pattern(&h, 0, 7);
        ref_add(&r, pattern(), 7);
        at = bw_tell(&h.w);
        cr_expect_eq(at, 7);
        cr_assert_eq(bw_put_u32le(&h.w, 0), BW_OK);
        ref_add(&r, "\x00\x00\x00\x00", 4);
        put_pattern(&h, 100, body);
        ref_add(&r, pattern() + 100, body);
        cr_expect_eq(bw_patch_u32le(&h.w, at, (uint32_t)body), BW_OK, "%s", mode_name[m]);
        r.d[7] = (unsigned char)body;
        r.d[8] = (unsigned char)(body >> 8);
        cr_expect_eq(bw_patch_u16be(&h.w, 0, 0xBEEF), BW_OK);
        r.d[0] = 0xBE;
        r.d[1] = 0xEF;
        cr_expect_eq(bw_patch(&h.w, bw_tell(&h.w) - 3, "xyz", 3), BW_OK);
        memcpy(r.d + r.len - 3, "xyz", 3);
        expect_output(&h, r.d, r.len, "patched");
        ref_free(&r);
        h_close(&h);
    }
}

Test(modes_rules, segmented_patch_across_a_block_boundary)
{
    harness h;
    ref r = {0};
    struct iovec iov[2];
    size_t first;
    h_open(&h, M_CHAIN);
    chain_blocks(&h, 2, &r);
    cr_assert_geq(bw_iovec(&h.w, iov, 2), 2);
    first = iov[0].iov_len;
    cr_expect_eq(bw_patch(&h.w, first - 2, "WXYZ", 4), BW_OK);
    memcpy(r.d + first - 2, "WXYZ", 4);
    expect_output(&h, r.d, r.len, "patch across blocks");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, patch_out_of_range_is_einval_recorded_nothing_changed)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
        cr_expect_eq(bw_patch(&h.w, 8, "abcd", 4), BW_EINVAL, "%s: past tell", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL, "recorded");
        bw_clear_error(&h.w);
        cr_expect_eq(bw_patch(&h.w, UINT64_MAX - 1, "abcd", 4), BW_EINVAL, "%s: wraps",
                     mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_patch(&h.w, 11, "a", 1), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_assert_eq(bw_consume(&h.w, 3), BW_OK);
        cr_expect_eq(bw_patch(&h.w, 2, "a", 1), BW_EINVAL, "%s: consumed position",
                     mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL);
        expect_output(&h, "3456789", 7, "nothing changed");
        bw_clear_error(&h.w);
        cr_expect_eq(bw_patch(&h.w, 3, "A", 1), BW_OK, "%s: base is patchable", mode_name[m]);
        cr_expect_eq(bw_patch(&h.w, 9, "B", 1), BW_OK, "%s: last byte", mode_name[m]);
        cr_expect_eq(bw_patch(&h.w, 10, "C", 0), BW_OK, "%s: n = 0", mode_name[m]);
        cr_expect_eq(bw_patch(&h.w, 3, "C", 0), BW_OK, "%s: n = 0", mode_name[m]);
        expect_output(&h, "A45678B", 7, "patched");
        cr_expect_eq(bw_error(&h.w), BW_OK);
        h_close(&h);
    }
}

Test(modes_rules, patch_source_may_overlap_the_target)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abcdefgh", 8), BW_OK);
        cr_assert_not_null(bw_data(&h.w));
        cr_expect_eq(bw_patch(&h.w, 2, bw_data(&h.w), 6), BW_OK, "%s", mode_name[m]);
        expect_output(&h, "ababcdef", 8, "overlapping patch forward");
        cr_expect_eq(bw_patch(&h.w, 0, bw_data(&h.w) + 1, 7), BW_OK, "%s", mode_name[m]);
        expect_output(&h, "babcdeff", 8, "overlapping patch backward");
        h_close(&h);
    }
}

Test(modes_rules, streaming_patch_and_truncate_of_sent_bytes_are_einval)
{
    harness h;
    h_open(&h, M_SINK);
    put_pattern(&h, 0, 50);
    put_pattern(&h, 50, 30);
    cr_assert_eq(h.s.len, 50, "the first 50 were sent to make room");
    cr_expect_eq(bw_patch(&h.w, 0, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_error(&h.w), BW_EINVAL, "recorded");
    bw_clear_error(&h.w);
    cr_expect_eq(bw_patch(&h.w, 49, "xy", 2), BW_EINVAL, "half sent");
    bw_clear_error(&h.w);
    cr_expect_eq(bw_truncate(&h.w, 10), BW_EINVAL);
    bw_clear_error(&h.w);
    expect_output(&h, pattern(), 80, "nothing changed");
    cr_expect_eq(bw_patch(&h.w, 50, "Z", 1), BW_OK, "a held byte can be patched");
    cr_expect_eq(bw_truncate(&h.w, 60), BW_OK, "and truncated");
    cr_expect_eq(bw_tell(&h.w), 60);
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_eq(h.s.len, 60);
    cr_expect_eq(h.s.got[50], 'Z');
    cr_expect(memcmp(h.s.got + 51, pattern() + 51, 9) == 0);
    h_close(&h);
}

Test(modes_rules, truncate_by_position_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        uint64_t mark;
        size_t more = m == M_SINK ? 20 : 9000;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        ref_add(&r, pattern(), 10);
        mark = bw_tell(&h.w);
        put_pattern(&h, 10, more);
        cr_expect_eq(bw_truncate(&h.w, mark), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 10);
        cr_expect_eq(bw_len(&h.w), 10);
        expect_output(&h, r.d, r.len, "truncated");
        cr_expect_eq(bw_truncate(&h.w, 10), BW_OK, "%s: at tell", mode_name[m]);
        cr_expect_eq(bw_truncate(&h.w, 11), BW_EINVAL, "%s: beyond tell", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL, "recorded");
        expect_output(&h, r.d, r.len, "nothing changed");
        bw_clear_error(&h.w);
        cr_expect_eq(bw_consume(&h.w, 4), BW_OK);
        cr_expect_eq(bw_truncate(&h.w, 3), BW_EINVAL, "%s: below base", mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_truncate(&h.w, 4), BW_OK, "%s: at base", mode_name[m]);
        cr_expect_eq(bw_len(&h.w), 0);
        cr_expect_eq(bw_tell(&h.w), 4);
        cr_expect_eq(bw_puts(&h.w, "end"), BW_OK);
        expect_output(&h, "end", 3, "writing after a truncate");
        ref_free(&r);
        h_close(&h);
    }
}

Test(modes_rules, placeholder_position_survives_consume)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        uint64_t at;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "xxxx", 4), BW_OK);
        at = bw_tell(&h.w);
        cr_assert_eq(bw_put_u32le(&h.w, 0), BW_OK);
        cr_assert_eq(bw_write(&h.w, "body", 4), BW_OK);
        cr_assert_eq(bw_consume(&h.w, 4), BW_OK);
        cr_expect_eq(bw_patch_u32le(&h.w, at, 4), BW_OK, "%s", mode_name[m]);
        expect_output(&h, "\x04\x00\x00\x00" "body", 8, "length patched by position");
        h_close(&h);
    }
}

Test(modes_rules, clear_leaves_tell_at_the_first_dropped_byte)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        bw_clear(&h.w);
        cr_expect_eq(bw_tell(&h.w), 0, "%s", mode_name[m]);
        put_pattern(&h, 0, 10);
        cr_assert_eq(bw_consume(&h.w, 3), BW_OK);
        bw_clear(&h.w);
        cr_expect_eq(bw_tell(&h.w), 3, "%s: the first dropped byte", mode_name[m]);
        cr_expect_eq(bw_len(&h.w), 0);
        cr_expect_eq(bw_put_u8(&h.w, 'x'), BW_OK);
        cr_expect_eq(bw_tell(&h.w), 4);
        if (m == M_SINK) {
            put_pattern(&h, 0, 50);
            put_pattern(&h, 0, 30);
            cr_assert_eq(h.s.len, 51, "'x' and the 50 were sent to make room");
            cr_expect_eq(bw_tell(&h.w), 84);
            bw_clear(&h.w);
            cr_expect_eq(bw_tell(&h.w), 54, "streaming: the first dropped byte follows the sent ones");
        }
        h_close(&h);
    }
}

Test(modes_rules, init_release_detach_restart_positions)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        cr_expect_eq(bw_tell(&h.w), 0);
        put_pattern(&h, 0, 10);
        cr_assert_eq(bw_consume(&h.w, 2), BW_OK);
        bw_release(&h.w);
        cr_expect_eq(bw_tell(&h.w), 0, "%s: release", mode_name[m]);
        put_pattern(&h, 0, 10);
        if (m != M_FIXED) {
            size_t cap = 0;
            void *b = bw_detach(&h.w, NULL, &cap);
            cr_assert_not_null(b, "%s", mode_name[m]);
            cr_expect_eq(bw_tell(&h.w), 0, "%s: detach", mode_name[m]);
            cr_expect_eq(bw_pool_return(bw_writer_pool(&h.w), b, cap), BW_OK);
            put_pattern(&h, 0, 10);
        }
        bw_release(&h.w);
        cr_expect_eq(bw_init_chain(&h.w, h.p), BW_OK);
        cr_expect_eq(bw_tell(&h.w), 0);
        h.mode = M_CHAIN;
        h_close(&h);
    }
}

/* --- Consume ------------------------------------------------------------- */

Test(modes_rules, consume_moves_the_start_without_copying)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        const unsigned char *d;
        long calls;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abcdef", 6), BW_OK);
        d = bw_data(&h.w);
        calls = h_calls(&h);
        cr_expect_eq(bw_consume(&h.w, 2), BW_OK);
        cr_expect(bw_data(&h.w) == d + 2, "%s: moved by 2, not copied", mode_name[m]);
        cr_expect_eq(d[2], 'c');
        cr_expect_eq(bw_len(&h.w), 4);
        cr_expect_eq(bw_tell(&h.w), 6);
        cr_expect_eq(bw_consume(&h.w, 0), BW_OK);
        cr_expect_eq(h_calls(&h), calls);
        expect_output(&h, "cdef", 4, "consumed 2");
        cr_expect_eq(bw_consume(&h.w, 5), BW_EINVAL, "%s: more than held", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL, "recorded");
        expect_output(&h, "cdef", 4, "nothing changed");
        cr_expect_eq(bw_consume(&h.w, 1), BW_OK, "%s: works with an error recorded",
                     mode_name[m]);
        expect_output(&h, "def", 3, "consume with an error recorded");
        cr_expect_eq(bw_error(&h.w), BW_EINVAL, "still recorded");
        h_close(&h);
    }
}

Test(modes_rules, segmented_consume_returns_emptied_blocks_at_once)
{
    harness h;
    ref r = {0};
    struct iovec iov[3];
    bw_pool_stats before, after;
    h_open(&h, M_CHAIN);
    chain_blocks(&h, 3, &r);
    cr_assert_eq(bw_iovec(&h.w, iov, 3), 3);
    before = h_stats(&h);
    cr_assert_eq(bw_consume(&h.w, iov[0].iov_len + 1), BW_OK);
    after = h_stats(&h);
    cr_expect_eq(after.returns, before.returns + 1, "the emptied first block went back");
    cr_expect_lt(after.outstanding_bytes, before.outstanding_bytes);
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 2);
    expect_output(&h, r.d + iov[0].iov_len + 1, r.len - iov[0].iov_len - 1, "consumed");
    before = after;
    cr_assert_eq(bw_consume(&h.w, iov[1].iov_len - 1), BW_OK);
    cr_expect_eq(h_stats(&h).returns, before.returns + 1, "the second one too");
    cr_expect_not_null(bw_data(&h.w), "one block left");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, fixed_moves_held_bytes_down_before_efull)
{
    harness h;
    h_open_ex(&h, M_FIXED, 16, 0, 0);
    put_pattern(&h, 0, 12);
    cr_assert_eq(bw_consume(&h.w, 10), BW_OK);
    cr_expect_eq(bw_free_capacity(&h.w), 4);
    cr_expect_eq(bw_write(&h.w, pattern() + 12, 14), BW_OK, "2 held + 14 fit in 16");
    expect_output(&h, pattern() + 10, 16, "moved down");
    cr_expect(bw_data(&h.w) == h.fbuf);
    cr_expect_eq(bw_put_u8(&h.w, 0), BW_EFULL);
    expect_output(&h, pattern() + 10, 16, "EFULL changed nothing");
    h_close(&h);
}

Test(modes_rules, contiguous_consume_then_cold_path_keeps_bytes)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        size_t f;
        h_open(&h, m);
        put_pattern(&h, 0, 12);
        cr_assert_eq(bw_consume(&h.w, 10), BW_OK);
        ref_add(&r, pattern() + 10, 2);
        f = bw_free_capacity(&h.w);
        put_pattern(&h, 12, f + 5);
        ref_add(&r, pattern() + 12, f + 5);
        expect_output(&h, r.d, r.len, "consume then a cold path");
        ref_free(&r);
        h_close(&h);
    }
}

/* --- Detach -------------------------------------------------------------- */

static int reports;
static void count_report(void *ctx, const char *what, const void *block, size_t capacity)
{
    (void)ctx;
    (void)block;
    (void)capacity;
    fprintf(stderr, "report: %s\n", what);
    reports++;
}

Test(modes_rules, detach_in_every_mode_gives_a_returnable_block)
{
    int m;
    bw_set_report_hook(count_report, NULL);
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        size_t len = 99, cap = 99, want_len;
        unsigned char *b;
        long sent;
        h_open_ex(&h, m, default_param(m), 0, BW_POOL_CHECKED);
        switch (m) {
        case M_CHAIN: chain_blocks(&h, 3, &r); break;
        case M_SINK:
            put_pattern(&h, 0, 50);
            put_pattern(&h, 50, 30);
            ref_add(&r, pattern() + 50, 30);
            break;
        default:
            put_pattern(&h, 0, 40);
            cr_assert_eq(bw_consume(&h.w, 2), BW_OK);
            ref_add(&r, pattern() + 2, 38);
            break;
        }
        want_len = bw_len(&h.w);
        cr_assert_eq(want_len, r.len);
        sent = h.s.calls;
        b = (unsigned char *)bw_detach(&h.w, &len, &cap);
        if (m == M_FIXED) {
            cr_expect_null(b, "fixed: no block to hand out");
            cr_expect_eq(bw_error(&h.w), BW_EINVAL, "fixed: recorded");
            cr_expect_null(bw_writer_pool(&h.w));
            h_close(&h);
            ref_free(&r);
            continue;
        }
        cr_assert_not_null(b, "%s", mode_name[m]);
        cr_expect_eq(len, want_len, "%s", mode_name[m]);
        cr_expect(memcmp(b, r.d, r.len) == 0, "%s: held bytes at the block's start",
                  mode_name[m]);
        cr_expect_geq(cap, len);
        if (m == M_BUFFER) cr_expect(b != h.ibuf, "a caller's buffer is copied to a block");
        if (m == M_SINK) {
            cr_expect_eq(cap, SINK_BUF, "the streaming buffer itself");
            cr_expect_eq(h.s.calls, sent, "detach sends nothing");
        }
        cr_expect_eq(bw_len(&h.w), 0);
        cr_expect_eq(bw_tell(&h.w), 0);
        cr_expect_eq(bw_error(&h.w), BW_OK);
        cr_expect_eq(bw_capacity(&h.w), 0);
        cr_expect(bw_writer_pool(&h.w) == h.p);
        reports = 0;
        cr_expect_eq(bw_pool_return(bw_writer_pool(&h.w), b, cap), BW_OK,
                     "%s: the real capacity is accepted", mode_name[m]);
        cr_expect_eq(reports, 0, "%s: checked pool has nothing to report", mode_name[m]);
        /* Mode kept. */
        if (m == M_CHAIN) {
            cr_assert_eq(bw_put_u8(&h.w, 1), BW_OK);
            put_pattern(&h, 0, 5000);
            cr_expect_null(bw_data(&h.w), "still segmented");
        }
        ref_free(&r);
        h_close(&h);
    }
    bw_set_report_hook(NULL, NULL);
}

Test(modes_rules, detach_of_a_writer_without_storage_is_null)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t len = 99, cap = 99;
        if (m == M_BUFFER || m == M_FIXED) continue;
        h_open(&h, m);
        cr_expect_null(bw_detach(&h.w, &len, &cap), "%s", mode_name[m]);
        cr_expect_eq(len, 0);
        cr_expect_eq(cap, 0);
        cr_expect_eq(bw_error(&h.w), BW_OK);
        h_close(&h);
    }
}

/* --- Const read-outs ------------------------------------------------- */

Test(modes_rules, read_outs_never_record_and_work_with_an_error)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        unsigned char dst[16];
        struct iovec iov[2];
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
        cr_expect_eq(bw_copy_out(&h.w, 5, dst, 6), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(bw_copy_out(&h.w, SIZE_MAX, dst, 2), BW_EINVAL);
        cr_expect_eq(bw_copy_out(&h.w, 2, dst, SIZE_MAX), BW_EINVAL, "wrapping");
        cr_expect_eq(bw_error(&h.w), BW_OK, "%s: never recorded", mode_name[m]);
        cr_expect_eq(bw_copy_out(&h.w, 3, dst, 0), BW_OK);
        cr_expect_eq(bw_copy_out(&h.w, 4, dst, 6), BW_OK);
        cr_expect(memcmp(dst, "456789", 6) == 0);
        record_einval(&h);
        memset(dst, 0, sizeof dst);
        cr_expect_eq(bw_copy_out(&h.w, 0, dst, 10), BW_OK, "%s: works with an error",
                     mode_name[m]);
        cr_expect(memcmp(dst, "0123456789", 10) == 0);
        cr_expect_eq(bw_iovec(&h.w, iov, 2), 1);
        cr_expect_eq(iov[0].iov_len, 10);
        cr_expect_not_null(bw_data(&h.w));
        cr_expect_eq(bw_len(&h.w), 10);
        cr_expect_eq(bw_tell(&h.w), 10);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL);
        h_close(&h);
    }
}

Test(modes_rules, iovec_returns_the_count_needed_and_never_an_empty_entry)
{
    harness h;
    ref r = {0};
    struct iovec iov[4];
    size_t f;
    h_open(&h, M_CHAIN);
    cr_expect_eq(bw_iovec(&h.w, iov, 4), 0, "nothing held");
    chain_blocks(&h, 3, &r);
    memset(iov, 0x5a, sizeof iov);
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 3);
    cr_expect_eq(bw_iovec(&h.w, iov, 2), 3, "the count all held bytes need");
    cr_expect(iov[0].iov_len > 0 && iov[1].iov_len > 0);
    cr_expect_eq(iov[2].iov_len, (size_t)0x5a5a5a5a5a5a5a5aull & SIZE_MAX, "not filled");
    expect_output(&h, r.d, r.len, "three blocks");
    /* A span that skips the tail's rest, then a write that fills the new
     * block exactly: still no empty entries. */
    f = bw_free_capacity(&h.w);
    cr_assert_not_null(bw_get_span(&h.w, f + 1, NULL));
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 3, "the new block holds nothing yet");
    expect_output(&h, r.d, r.len, "after a skip");
    cr_assert_eq(bw_consume(&h.w, r.len), BW_OK);
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 0);
    ref_free(&r);
    h_close(&h);
}

/* --- Pullup and cstr -------------------------------------------------- */

Test(modes_rules, pullup_of_contiguous_bytes_is_data_without_allocation)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        h_open(&h, m);
        put_pattern(&h, 0, 40);
        cr_assert_eq(bw_consume(&h.w, 3), BW_OK);
        calls = h_calls(&h);
        cr_expect(bw_pullup(&h.w) == bw_data(&h.w), "%s", mode_name[m]);
        cr_expect_eq(h_calls(&h), calls, "%s: no allocation", mode_name[m]);
        expect_output(&h, pattern() + 3, 37, "pullup");
        h_close(&h);
    }
}

Test(modes_rules, segmented_pullup_is_one_block_one_copy)
{
    harness h;
    ref r = {0};
    bw_pool_stats before, after;
    const unsigned char *p;
    h_open(&h, M_CHAIN);
    chain_blocks(&h, 3, &r);
    before = h_stats(&h);
    p = bw_pullup(&h.w);
    after = h_stats(&h);
    cr_assert_not_null(p);
    cr_expect(memcmp(p, r.d, r.len) == 0);
    cr_expect(bw_data(&h.w) == p);
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 1);
    cr_expect_eq(after.rents, before.rents + 1, "one block");
    cr_expect_eq(after.returns, before.returns + 3, "the old blocks go back");
    cr_expect_geq(after.outstanding_bytes, r.len);
    cr_expect(bw_pullup(&h.w) == p, "already contiguous now");
    cr_expect_eq(h_stats(&h).rents, after.rents);
    put_pattern(&h, 0, 10);
    ref_add(&r, pattern(), 10);
    expect_output(&h, r.d, r.len, "writing after pullup");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, pullup_failure_is_enomem_recorded_nothing_changed)
{
    harness h;
    ref r = {0};
    h_open(&h, M_CHAIN);
    chain_blocks(&h, 3, &r);
    h_fail_from_next(&h);
    cr_expect_null(bw_pullup(&h.w));
    cr_expect_eq(bw_error(&h.w), BW_ENOMEM);
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 3);
    expect_output(&h, r.d, r.len, "failed pullup");
    h_fail_never(&h);
    cr_expect_null(bw_pullup(&h.w), "NULL while an error is recorded");
    cr_expect_null(bw_cstr(&h.w));
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 3, "nothing changed");
    bw_clear_error(&h.w);
    cr_expect_not_null(bw_pullup(&h.w));
    expect_output(&h, r.d, r.len, "pullup after clear_error");
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, cstr_adds_a_nul_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        const char *s;
        h_open(&h, m);
        cr_assert_eq(bw_puts(&h.w, "hello"), BW_OK);
        s = bw_cstr(&h.w);
        cr_assert_not_null(s, "%s", mode_name[m]);
        cr_expect_str_eq(s, "hello");
        cr_expect_eq(bw_len(&h.w), 5, "the NUL is not counted");
        cr_expect_eq(h.s.calls, 0, "never sends");
        cr_expect_eq(bw_puts(&h.w, " world"), BW_OK);
        s = bw_cstr(&h.w);
        cr_assert_not_null(s);
        cr_expect_str_eq(s, "hello world");
        h_close(&h);
    }
}

Test(modes_rules, cstr_of_segmented_bytes_pulls_up)
{
    harness h;
    ref r = {0};
    const char *s;
    size_t i;
    h_open(&h, M_CHAIN);
    chain_blocks(&h, 3, &r);
    for (i = 0; i < r.len; i++) cr_assert_eq(bw_patch_u8(&h.w, i, 'a' + (unsigned char)(i % 26)), BW_OK);
    s = bw_cstr(&h.w);
    cr_assert_not_null(s);
    cr_expect_eq(strlen(s), r.len);
    cr_expect_eq(s[r.len - 1], 'a' + (char)((r.len - 1) % 26));
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 1);
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, cstr_in_a_full_fixed_or_streaming_buffer_is_null_and_unrecorded)
{
    harness h;
    const char *s;
    h_open_ex(&h, M_FIXED, 5, 0, 0);
    cr_assert_eq(bw_puts(&h.w, "hello"), BW_OK);
    cr_expect_null(bw_cstr(&h.w));
    cr_expect_eq(bw_error(&h.w), BW_OK, "no room for the NUL poisons nothing");
    expect_output(&h, "hello", 5, "full fixed");
    h_close(&h);

    h_open_ex(&h, M_FIXED, 6, 0, 0);
    cr_assert_eq(bw_puts(&h.w, "hello"), BW_OK);
    s = bw_cstr(&h.w);
    cr_assert_not_null(s, "one byte spare: room for the NUL");
    cr_expect_str_eq(s, "hello");
    cr_expect(s == (const char *)h.fbuf);
    h_close(&h);

    h_open(&h, M_SINK);
    put_pattern(&h, 0, SINK_BUF);
    cr_expect_null(bw_cstr(&h.w));
    cr_expect_eq(bw_error(&h.w), BW_OK);
    cr_expect_eq(h.s.calls, 0, "never sends");
    expect_output(&h, pattern(), SINK_BUF, "full streaming buffer");
    h_close(&h);
}

Test(modes_rules, cstr_without_storage_is_a_static_empty_string)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        const char *s;
        if (m == M_BUFFER) continue;
        h_open_ex(&h, m, m == M_FIXED ? 0 : default_param(m), 0, 0);
        if (m == M_FIXED) cr_assert_eq(bw_init_fixed(&h.w, NULL, 0), BW_OK);
        s = bw_cstr(&h.w);
        cr_assert_not_null(s, "%s", mode_name[m]);
        cr_expect_eq(s[0], '\0');
        cr_expect_eq(h_calls(&h), 0, "%s: no allocation", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_OK);
        h_close(&h);
    }
}

/* --- append_writer ----------------------------------------------------- */

/* Give the writer some held bytes: several blocks when segmented, some
 * already sent when streaming. Returns what is held. */
static void give_held_bytes(harness *h, size_t from, ref *held)
{
    size_t n;
    unsigned char *buf;
    memset(held, 0, sizeof *held);
    if (h->mode == M_CHAIN) {
        put_pattern(h, from, 9000);
    } else if (h->mode == M_SINK) {
        put_pattern(h, from, 50);
        put_pattern(h, from + 50, 30);
    } else {
        put_pattern(h, from, 600);
    }
    n = bw_len(&h->w);
    buf = (unsigned char *)malloc(n);
    cr_assert_eq(bw_copy_out(&h->w, 0, buf, n), BW_OK);
    ref_add(held, buf, n);
    free(buf);
}

Test(modes_rules, append_writer_for_every_pair_of_modes)
{
    int a, b;
    for (a = 0; a < M_COUNT; a++)
        for (b = 0; b < M_COUNT; b++) {
            harness src, dst;
            ref held, want;
            uint64_t tell;
            h_open(&src, a);
            h_open(&dst, b);
            give_held_bytes(&src, 1000, &held);
            tell = bw_tell(&src.w);
            cr_assert_eq(bw_write(&dst.w, "P:", 2), BW_OK);
            ref_from(&want, &dst);
            cr_expect_eq(bw_append_writer(&dst.w, &src.w), BW_OK, "%s into %s", mode_name[a],
                         mode_name[b]);
            ref_add(&want, held.d, held.len);
            expect_output(&dst, want.d, want.len, mode_name[a]);
            cr_expect_eq(bw_tell(&src.w), tell, "src unchanged");
            cr_expect_eq(bw_len(&src.w), held.len);
            cr_expect_eq(src.s.calls, a == M_SINK ? 1 : 0);
            ref_free(&held);
            ref_free(&want);
            h_close(&src);
            h_close(&dst);
        }
}

Test(modes_rules, append_writer_to_itself_doubles)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref held, want;
        h_open(&h, m);
        give_held_bytes(&h, 0, &held);
        ref_from(&want, &h);
        cr_expect_eq(bw_append_writer(&h.w, &h.w), BW_OK, "%s", mode_name[m]);
        ref_add(&want, held.d, held.len);
        expect_output(&h, want.d, want.len, "dst == src");
        ref_free(&held);
        ref_free(&want);
        h_close(&h);
    }
}

Test(modes_rules, src_error_is_ignored_dst_error_refuses)
{
    int m;
    FOR_EACH_MODE(m) {
        harness src, dst;
        h_open(&src, m);
        h_open(&dst, m);
        cr_assert_eq(bw_write(&src.w, "src", 3), BW_OK);
        record_einval(&src);
        cr_expect_eq(bw_append_writer(&dst.w, &src.w), BW_OK, "%s: src error ignored",
                     mode_name[m]);
        expect_output(&dst, "src", 3, "appended");
        cr_expect_eq(bw_error(&src.w), BW_EINVAL, "src keeps its error");
        bw_clear_error(&src.w);
        cr_expect_eq(bw_puts(&dst.w, "+"), BW_OK);
        cr_expect_eq(bw_consume(&dst.w, 1), BW_OK);
        cr_assert_eq(bw_reserve(&dst.w, SIZE_MAX), m == M_FIXED ? BW_EFULL : BW_EOVERFLOW);
        cr_expect_eq(bw_append_writer(&dst.w, &src.w), bw_error(&dst.w),
                     "%s: dst error refuses", mode_name[m]);
        expect_output(&dst, "rc+", 3, "nothing appended");
        h_close(&src);
        h_close(&dst);
    }
}

/* --- bw_fopen ----------------------------------------------------------- */

#ifdef BW_HAVE_FILE_ADAPTER
Test(modes_rules, fopen_bytes_arrive_on_flush_and_fclose_keeps_the_writer)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        FILE *f;
        h_open(&h, m);
        f = bw_fopen(&h.w);
        cr_assert_not_null(f, "%s", mode_name[m]);
        cr_expect_gt(fprintf(f, "n=%d;", 42), 0);
        cr_expect_eq(bw_len(&h.w), 0, "%s: not before the FILE flushes", mode_name[m]);
        cr_expect_eq(fflush(f), 0);
        expect_output(&h, "n=42;", 5, "after fflush");
        cr_expect_geq(fputs("tail", f), 0);
        cr_expect_eq(fclose(f), 0, "%s", mode_name[m]);
        expect_output(&h, "n=42;tail", 9, "after fclose");
        cr_expect_eq(h.s.calls, 0, "fclose does not flush the writer to its sink");
        cr_expect_eq(bw_puts(&h.w, "!"), BW_OK, "the writer is not released");
        expect_output(&h, "n=42;tail!", 10, "writing after fclose");
        h_close(&h);
    }
}

Test(modes_rules, fopen_writer_failures_set_errno)
{
    harness h;
    FILE *f;

    h_open_ex(&h, M_FIXED, 4, 0, 0);
    f = bw_fopen(&h.w);
    cr_assert_not_null(f);
    fputs("hello world", f);
    errno = 0;
    cr_expect_eq(fflush(f), EOF);
    cr_expect_eq(errno, ENOSPC, "BW_EFULL");
    cr_expect_eq(bw_error(&h.w), BW_EFULL);
    fclose(f);
    h_close(&h);

    h_open(&h, M_CONTIG);
    f = bw_fopen(&h.w);
    cr_assert_not_null(f);
    h_fail_from_next(&h);
    fputs("hello world", f);
    errno = 0;
    cr_expect_eq(fflush(f), EOF);
    cr_expect_eq(errno, ENOMEM, "BW_ENOMEM");
    fclose(f);
    h_fail_never(&h);
    h_close(&h);

    h_open_ex(&h, M_SINK, 16, 0, 0);
    h.s.budget = 0;
    f = bw_fopen(&h.w);
    cr_assert_not_null(f);
    fputs("a line longer than sixteen bytes", f);
    errno = 0;
    cr_expect_eq(fflush(f), EOF);
    cr_expect_eq(errno, EIO, "BW_EIO");
    cr_expect_eq(bw_error(&h.w), BW_EIO);
    fclose(f);
    h_close(&h);
}

Test(modes_rules, fopen_seek_and_tell_fail_with_espipe)
{
    harness h;
    FILE *f;
    h_open(&h, M_CONTIG);
    f = bw_fopen(&h.w);
    cr_assert_not_null(f);
    fputs("abc", f);
    errno = 0;
    cr_expect_eq(fseek(f, 0, SEEK_SET), -1);
    cr_expect_eq(errno, ESPIPE);
    errno = 0;
    cr_expect_eq(ftell(f), -1L);
    cr_expect_eq(errno, ESPIPE);
    fclose(f);
    errno = 0;
    cr_expect_null(bw_fopen(NULL));
    cr_expect_eq(errno, EINVAL);
    h_close(&h);
}
#endif

/* --- Fixed writers ----------------------------------------------------- */

Test(modes_rules, fixed_exact_fit_succeeds_one_short_is_efull_for_every_call)
{
    static const size_t pre[] = {0, 5};
    size_t c, k;
    for (c = 0; c < NCASES; c++)
        for (k = 0; k < 2; k++) {
            harness h;
            ref r = {0};
            size_t size = pre[k] + cases[c].n;
            h_open_ex(&h, M_FIXED, size, 0, 0);
            put_pattern(&h, 0, pre[k]);
            cr_expect_eq(cases[c].op(&h.w), BW_OK, "%s fits exactly", cases[c].name);
            cr_expect_eq(bw_free_capacity(&h.w), 0);
            ref_add(&r, pattern(), pre[k]);
            ref_add(&r, cases[c].want, cases[c].n);
            expect_output(&h, r.d, r.len, cases[c].name);
            h_close(&h);
            if (cases[c].n == 0) {
                ref_free(&r);
                continue;
            }
            h_open_ex(&h, M_FIXED, size - 1, 0, 0);
            put_pattern(&h, 0, pre[k]);
            cr_expect_eq(cases[c].op(&h.w), BW_EFULL, "%s one byte short", cases[c].name);
            cr_expect_eq(bw_error(&h.w), BW_EFULL, "recorded");
            expect_output(&h, pattern(), pre[k], "nothing of the failed call");
            cr_expect_eq(h_calls(&h), 0, "a fixed writer never allocates");
            h_close(&h);
            ref_free(&r);
        }
}

Test(modes_rules, fixed_long_printf_fits_exactly_or_writes_nothing)
{
    char want[400];
    harness h;
    size_t n = (size_t)snprintf(want, sizeof want, "<%0*d>", 330, 77);
    cr_assert_eq(n, 332);
    h_open_ex(&h, M_FIXED, 3 + n, 0, 0);
    cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
    cr_expect_eq(bw_printf(&h.w, "<%0*d>", 330, 77), BW_OK, "332 bytes into 332 free");
    cr_expect_eq(bw_len(&h.w), 3 + n);
    cr_expect(memcmp(bw_data(&h.w) + 3, want, n) == 0);
    h_close(&h);

    h_open_ex(&h, M_FIXED, 3 + n - 1, 0, 0);
    memset(h.fbuf, 'Q', 3 + n - 1);
    cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
    cr_expect_eq(bw_printf(&h.w, "<%0*d>", 330, 77), BW_EFULL, "one byte short");
    expect_output(&h, "abc", 3, "nothing of the failed printf");
    cr_expect_eq(bw_error(&h.w), BW_EFULL);
    h_close(&h); /* checks the guards: nothing written outside buf */
}

Test(modes_rules, fixed_with_no_room_and_null_buffer)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    h_open_ex(&h, M_FIXED, 0, 0, 0);
    cr_expect_eq(bw_write(&h.w, "x", 0), BW_OK);
    cr_expect_eq(bw_put_u8(&h.w, 1), BW_EFULL);
    h_close(&h);

    cr_expect_eq(bw_init_fixed(&w, NULL, 0), BW_OK, "NULL, 0: a writer with no room");
    cr_expect_eq(bw_free_capacity(&w), 0);
    cr_expect_eq(bw_puts(&w, ""), BW_OK);
    cr_expect_eq(bw_puts(&w, "x"), BW_EFULL);
    cr_expect_eq(bw_error(&w), BW_EFULL);
    bw_release(&w);

    cr_expect_eq(bw_init_fixed(&w, NULL, 5), BW_EINVAL, "NULL with a size");
    cr_expect_eq(bw_error(&w), BW_EINVAL, "recorded");
    cr_expect_null(bw_writer_pool(&w), "a fixed writer");
    bw_clear_error(&w);
    cr_expect_eq(bw_put_u8(&w, 1), BW_EFULL, "with no room");
    bw_release(&w);
}

Test(modes_rules, fixed_unrepresentable_sizes_are_efull_and_nothing_outside_buf)
{
    harness h;
    h_open_ex(&h, M_FIXED, 32, 0, 0);
    cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
    cr_expect_eq(bw_reserve(&h.w, SIZE_MAX), BW_EFULL);
    bw_clear_error(&h.w);
    cr_expect_eq(bw_write(&h.w, pattern(), opaque((size_t)PTRDIFF_MAX + 1)), BW_EFULL);
    bw_clear_error(&h.w);
    cr_expect_null(bw_get_span(&h.w, 30, NULL));
    cr_expect_eq(bw_error(&h.w), BW_EFULL);
    bw_clear_error(&h.w);
    cr_expect_eq(bw_put_hex(&h.w, pattern(), 15), BW_EFULL, "30 hex digits in 29 bytes");
    bw_clear_error(&h.w);
    cr_expect_eq(bw_put_hex(&h.w, pattern(), 13), BW_OK);
    cr_expect_eq(bw_put_dec_u64(&h.w, 1000), BW_EFULL, "4 digits in 3 bytes");
    bw_clear_error(&h.w);
    cr_expect_eq(bw_put_dec_u64(&h.w, 100), BW_OK);
    cr_expect_eq(bw_free_capacity(&h.w), 0);
    cr_expect_eq(h_calls(&h), 0, "never allocates");
    h_close(&h);
}

/* --- Segmented block sizes and impossible sizes ---------------------- */

Test(modes_rules, segmented_blocks_double_up_to_the_threshold)
{
    harness h;
    bw_pool_stats st;
    size_t out;
    /* Without large retention: with it, blocks past the threshold keep
     * doubling as kept large blocks (test_jump.c, chain_steady). */
    h_open_ex(&h, M_CHAIN, 0, 16384, BW_POOL_NO_LARGE_RETENTION);
    cr_assert_eq(bw_put_u8(&h.w, 1), BW_OK);
    st = h_stats(&h);
    cr_expect_eq(st.rents, 1);
    cr_expect_eq(st.outstanding_bytes, 4096, "the first block is 4 KiB");
    put_pattern(&h, 0, bw_free_capacity(&h.w));
    cr_expect_eq(h_stats(&h).rents, 1);
    cr_assert_eq(bw_put_u8(&h.w, 2), BW_OK);
    st = h_stats(&h);
    cr_expect_eq(st.rents, 2);
    cr_expect_eq(st.outstanding_bytes, 4096 + 8192, "the second is twice the first");
    put_pattern(&h, 0, bw_free_capacity(&h.w));
    cr_assert_eq(bw_put_u8(&h.w, 3), BW_OK);
    cr_expect_eq(h_stats(&h).outstanding_bytes, 4096 + 8192 + 16384);
    put_pattern(&h, 0, bw_free_capacity(&h.w));
    cr_assert_eq(bw_put_u8(&h.w, 4), BW_OK);
    cr_expect_eq(h_stats(&h).outstanding_bytes, 4096 + 8192 + 16384 + 16384,
                 "at most the threshold");
    /* One request that needs more gets it in one block. */
    out = h_stats(&h).outstanding_bytes;
    cr_expect_eq(bw_reserve(&h.w, 40000), BW_OK);
    cr_expect_geq(bw_free_capacity(&h.w), 40000);
    st = h_stats(&h);
    cr_expect_eq(st.rents, 5, "one block");
    cr_expect_geq(st.outstanding_bytes - out, 40000);
    /* clear keeps one block. */
    bw_clear(&h.w);
    st = h_stats(&h);
    cr_expect_eq(st.returns, 4, "all but one block back");
    cr_expect_gt(bw_capacity(&h.w), 0);
    cr_expect_not_null(bw_data(&h.w));
    cr_expect_eq(bw_put_u8(&h.w, 9), BW_OK);
    cr_expect_eq(h_stats(&h).rents, 5, "writing after clear uses the kept block");
    h_close(&h);
}

Test(modes_rules, reserve_makes_free_capacity_at_least_n)
{
    int m;
    static const size_t ns[] = {1, 100, 4000, 5000, 70000};
    FOR_EACH_MODE(m) {
        harness h;
        size_t k;
        if (m == M_FIXED) continue;
        h_open(&h, m);
        put_pattern(&h, 0, 10);
        for (k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            cr_expect_eq(bw_reserve(&h.w, ns[k]), BW_OK, "%s", mode_name[m]);
            cr_expect_geq(bw_free_capacity(&h.w), ns[k], "%s: reserve %zu", mode_name[m],
                          ns[k]);
        }
        expect_output(&h, pattern(), 10, "reserve writes nothing");
        h_close(&h);
    }
}

Test(modes_rules, impossible_size_is_one_failed_backing_call_in_every_mode)
{
    int m, op;
    FOR_EACH_MODE(m)
        for (op = 0; op < 3; op++) {
            harness h;
            long calls;
            int rc;
            h_open(&h, m);
            cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
            calls = h_calls(&h);
            if (op == 0 && m == M_SINK) {
                /* A streaming write of any size is possible: it goes to the sink. */
                h_close(&h);
                continue;
            }
            if (op == 0) rc = bw_write(&h.w, pattern(), opaque(HUGE_REQ));
            else if (op == 1) rc = bw_reserve(&h.w, HUGE_REQ);
            else rc = bw_get_span(&h.w, HUGE_REQ, NULL) ? BW_OK : bw_error(&h.w);
            if (m == M_FIXED) {
                cr_expect_eq(rc, BW_EFULL);
                cr_expect_eq(h_calls(&h), calls);
            } else {
                cr_expect_eq(rc, BW_ENOMEM, "%s op %d: %s", mode_name[m], op, bw_strerror(rc));
                cr_expect_eq(h_calls(&h), calls + 1, "%s op %d: exactly one failed backing call",
                             mode_name[m], op);
            }
            cr_expect_eq(bw_error(&h.w), rc);
            expect_output(&h, "abc", 3, "nothing changed");
            h_close(&h);
        }
}

Test(modes_rules, sizes_beyond_ptrdiff_max_are_eoverflow_without_allocator_call)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        int want = m == M_FIXED ? BW_EFULL : BW_EOVERFLOW;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        calls = h_calls(&h);
        cr_expect_eq(bw_write(&h.w, pattern(), opaque((size_t)PTRDIFF_MAX + 1)), want, "%s",
                     mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_reserve(&h.w, opaque((size_t)PTRDIFF_MAX + 1)), want, "%s", mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_reserve(&h.w, SIZE_MAX - 1), want, "%s: wraps", mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_write(&h.w, pattern(), opaque(SIZE_MAX)), want, "%s: wraps", mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_null(bw_get_span(&h.w, SIZE_MAX, NULL));
        cr_expect_eq(bw_error(&h.w), want);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_put_hex(&h.w, pattern(), SIZE_MAX / 2 + 1), want, "%s: 2n wraps",
                     mode_name[m]);
        cr_expect_eq(h_calls(&h), calls, "%s: no allocator call", mode_name[m]);
        expect_output(&h, "abc", 3, "nothing changed");
        h_close(&h);
    }
}

/* --- NULL, missing sink, failed init, the recorded error --------------- */

static int vp(bw_writer *w, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_vprintf(w, fmt, ap);
    va_end(ap);
    return rc;
}

Test(modes_rules, null_writer_every_function)
{
    unsigned char b[8];
    struct iovec iov[1];
    size_t n = 7, cap = 7;
    bw_writer ok = BW_WRITER_INIT;
    cr_expect_eq(bw_init(NULL, NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_init_buffer(NULL, NULL, b, sizeof b), BW_EINVAL);
    cr_expect_eq(bw_init_chain(NULL, NULL), BW_EINVAL);
    cr_expect_eq(bw_init_sink(NULL, NULL, 0, test_sink, NULL), BW_EINVAL);
    cr_expect_eq(bw_init_fd(NULL, NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_init_fixed(NULL, b, sizeof b), BW_EINVAL);
    cr_expect_eq(bw_flush(NULL), BW_EINVAL);
    cr_expect_eq(bw_reserve(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_advance(NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_write(NULL, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_write(NULL, NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_puts(NULL, "x"), BW_EINVAL);
    cr_expect_eq(bw_printf(NULL, "%d", 1), BW_EINVAL);
    cr_expect_eq(vp(NULL, "%d", 1), BW_EINVAL);
    cr_expect_eq(bw_put_u8(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u16le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u32le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u64le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u16be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u32be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u64be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i16le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i32le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i64le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i16be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i32be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i64be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_f32le(NULL, 1.0f), BW_EINVAL);
    cr_expect_eq(bw_put_f64le(NULL, 1.0), BW_EINVAL);
    cr_expect_eq(bw_put_f32be(NULL, 1.0f), BW_EINVAL);
    cr_expect_eq(bw_put_f64be(NULL, 1.0), BW_EINVAL);
    cr_expect_eq(bw_put_uvarint(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_svarint(NULL, -1), BW_EINVAL);
    cr_expect_eq(bw_put_dec_u64(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_dec_i64(NULL, -1), BW_EINVAL);
    cr_expect_eq(bw_put_hex(NULL, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_patch(NULL, 0, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_patch_u8(NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_patch_u32le(NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_patch_i64be(NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_patch_f64le(NULL, 0, 1.0), BW_EINVAL);
    cr_expect_eq(bw_truncate(NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_copy_out(NULL, 0, b, 0), BW_EINVAL);
    cr_expect_eq(bw_consume(NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_append_writer(NULL, &ok), BW_EINVAL);
    cr_expect_eq(bw_append_writer(&ok, NULL), BW_EINVAL);
    cr_expect_eq(bw_write_fd(NULL, 1, &n), BW_EINVAL);
    cr_expect_null(bw_get_span(NULL, 1, &n));
    cr_expect_eq(n, 0, "avail 0");
    cr_expect_null(bw_data(NULL));
    cr_expect_null(bw_pullup(NULL));
    cr_expect_null(bw_cstr(NULL));
    cr_expect_eq(bw_iovec(NULL, iov, 1), 0);
    cr_expect_eq(bw_len(NULL), 0);
    cr_expect_eq(bw_capacity(NULL), 0);
    cr_expect_eq(bw_free_capacity(NULL), 0);
    cr_expect_eq(bw_tell(NULL), 0);
    cr_expect_eq(bw_error(NULL), BW_EINVAL);
    cr_expect_null(bw_writer_pool(NULL));
    n = 7;
    cr_expect_null(bw_detach(NULL, &n, &cap));
    cr_expect_eq(n, 0);
    cr_expect_eq(cap, 0);
    bw_release(NULL);
    bw_clear(NULL);
    bw_clear_error(NULL);
    bw_release(&ok);
}

Test(modes_rules, null_sources_are_einval_recorded)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        cr_expect_eq(bw_put_hex(&h.w, NULL, 2), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_write(&h.w, NULL, 2), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_puts(&h.w, NULL), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_patch(&h.w, 0, NULL, 1), BW_EINVAL);
        bw_clear_error(&h.w);
        expect_output(&h, "abc", 3, "nothing changed");
        h_close(&h);
    }
}

Test(modes_rules, failed_init_leaves_a_valid_writer_of_that_mode)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    unsigned char b[16];
    h_open(&h, M_CONTIG);

    /* bw_init. */
    cr_expect_eq(bw_init(&w, h.p, opaque((size_t)PTRDIFF_MAX + 1)), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "recorded");
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_puts(&w, "no"), BW_EOVERFLOW, "refused while recorded");
    bw_clear_error(&w);
    cr_expect_eq(bw_write(&w, pattern(), 5000), BW_OK);
    cr_expect_not_null(bw_data(&w), "contiguous");
    cr_expect(bw_writer_pool(&w) == h.p);
    bw_release(&w);

    h_fail_from_next(&h);
    cr_expect_eq(bw_init(&w, h.p, 100), BW_ENOMEM);
    cr_expect_eq(bw_error(&w), BW_ENOMEM);
    cr_expect_eq(bw_capacity(&w), 0);
    h_fail_never(&h);
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "ok"), BW_OK);
    bw_release(&w);

    cr_expect_eq(bw_init_buffer(&w, h.p, NULL, 10), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_release(&w);
    cr_expect_eq(bw_init_buffer(&w, h.p, b, 0), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "ok"), BW_OK);
    bw_release(&w);

    cr_expect_eq(bw_init_sink(&w, h.p, opaque((size_t)PTRDIFF_MAX + 1), test_sink, &h.s), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW);
    cr_expect(bw_writer_pool(&w) == h.p);
    bw_release(&w);

    cr_expect_eq(bw_init_fixed(&w, NULL, 5), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    cr_expect_null(bw_writer_pool(&w), "fixed");
    bw_release(&w);

    h_close(&h);
}

Test(modes_rules, recorded_error_refuses_every_writing_call_and_changes_nothing)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h, other;
        size_t avail = 99, n = 99;
        long calls, sends;
        uint64_t tell;
        int e, fds[2];
        cr_assert_eq(pipe(fds), 0);
        h_open(&h, m);
        h_open(&other, M_CONTIG);
        cr_assert_eq(bw_puts(&other.w, "other"), BW_OK);
        cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
        record_einval(&h);
        e = bw_error(&h.w);
        calls = h_calls(&h);
        sends = h.s.calls;
        tell = bw_tell(&h.w);
        cr_expect_eq(bw_write(&h.w, "x", 1), e, "%s", mode_name[m]);
        cr_expect_eq(bw_write(&h.w, "x", 0), e);
        cr_expect_eq(bw_write(&h.w, pattern(), 5000), e);
        cr_expect_eq(bw_put_u8(&h.w, 1), e);
        cr_expect_eq(bw_put_u16be(&h.w, 1), e);
        cr_expect_eq(bw_put_u32le(&h.w, 1), e);
        cr_expect_eq(bw_put_i64be(&h.w, 1), e);
        cr_expect_eq(bw_put_f64le(&h.w, 1.0), e);
        cr_expect_eq(bw_put_uvarint(&h.w, 300), e);
        cr_expect_eq(bw_put_svarint(&h.w, -3), e);
        cr_expect_eq(bw_put_dec_u64(&h.w, 12), e);
        cr_expect_eq(bw_put_dec_i64(&h.w, -12), e);
        cr_expect_eq(bw_put_hex(&h.w, "ab", 2), e);
        cr_expect_eq(bw_puts(&h.w, "abc"), e);
        cr_expect_eq(bw_printf(&h.w, "%d", 5), e);
        cr_expect_eq(vp(&h.w, "%s", "abc"), e);
        cr_expect_eq(bw_reserve(&h.w, 1), e);
        cr_expect_eq(bw_reserve(&h.w, 100000), e);
        cr_expect_null(bw_get_span(&h.w, 1, &avail));
        cr_expect_eq(avail, 0);
        cr_expect_eq(bw_advance(&h.w, 0), e);
        cr_expect_eq(bw_flush(&h.w), e);
        cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), e);
        cr_expect_eq(bw_append_writer(&h.w, &other.w), e);
        cr_expect_eq(bw_append_writer(&h.w, &h.w), e);
        cr_expect_null(bw_pullup(&h.w));
        cr_expect_null(bw_cstr(&h.w));
        cr_expect_eq(bw_error(&h.w), e, "%s: still the first error", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), tell);
        cr_expect_eq(h_calls(&h), calls, "%s: no allocation", mode_name[m]);
        cr_expect_eq(h.s.calls, sends, "nothing sent");
        cr_expect(pipe_is_empty(fds[0]), "nothing written to the fd");
        expect_output(&h, "0123456789", 10, "refused calls");
        /* What still works: patch and truncate (rolling a frame back), the
         * error staying recorded. */
        cr_expect_eq(bw_patch(&h.w, 0, "Z", 1), BW_OK, "%s: patch", mode_name[m]);
        cr_expect_eq(bw_patch_u16le(&h.w, 1, 0x3231), BW_OK);
        cr_expect_eq(bw_truncate(&h.w, tell), BW_OK, "%s: truncate", mode_name[m]);
        cr_expect_eq(bw_patch(&h.w, 0, "0", 1), BW_OK);
        expect_output(&h, "0123456789", 10, "patched back");
        cr_expect_eq(bw_truncate(&h.w, 10), BW_OK);
        cr_expect_eq(bw_error(&h.w), e);
        cr_expect_eq(bw_put_u8(&h.w, 1), e, "%s: still refused after truncate", mode_name[m]);
        cr_expect_eq(bw_consume(&h.w, 1), BW_OK, "%s: consume", mode_name[m]);
        expect_output(&h, "123456789", 9, "consume with an error");
        cr_expect_eq(bw_error(&h.w), e);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "clear_error forgets");
        cr_expect_eq(bw_puts(&h.w, "!"), BW_OK);
        expect_output(&h, "123456789!", 10, "writing again");
        record_einval(&h);
        bw_clear(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "clear forgets");
        cr_expect_eq(bw_len(&h.w), 0);
        cr_expect_eq(bw_puts(&h.w, "a"), BW_OK);
        record_einval(&h);
        bw_release(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "release forgets");
        if (m != M_FIXED) {
            size_t cap = 0;
            void *b;
            cr_expect_eq(bw_puts(&h.w, "a"), BW_OK);
            record_einval(&h);
            b = bw_detach(&h.w, NULL, &cap);
            cr_expect_not_null(b, "%s: detach works with an error", mode_name[m]);
            cr_expect_eq(bw_error(&h.w), BW_OK, "detach forgets");
            if (b) bw_pool_return(bw_writer_pool(&h.w), b, cap);
        }
        close(fds[0]);
        close(fds[1]);
        h_close(&other);
        h_close(&h);
    }
}

Test(modes_rules, clear_error_forgets_any_code)
{
    static const int codes[] = {BW_ENOMEM, BW_EOVERFLOW, BW_EINVAL, BW_EIO, BW_EFULL};
    size_t k;
    for (k = 0; k < 5; k++) {
        harness h;
        int m = codes[k] == BW_EFULL ? M_FIXED : codes[k] == BW_EIO ? M_SINK : M_CONTIG;
        h_open_ex(&h, m, m == M_FIXED ? 4 : default_param(m), 0, 0);
        cr_assert_eq(bw_puts(&h.w, "ab"), BW_OK);
        switch (codes[k]) {
        case BW_ENOMEM: h_fail_from_next(&h); bw_reserve(&h.w, 100000); h_fail_never(&h); break;
        case BW_EOVERFLOW: bw_reserve(&h.w, SIZE_MAX); break;
        case BW_EINVAL: record_einval(&h); break;
        case BW_EIO: h.s.budget = 0; bw_flush(&h.w); h.s.budget = SIZE_MAX; break;
        default: bw_puts(&h.w, "xyz"); break;
        }
        cr_expect_eq(bw_error(&h.w), codes[k]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "%s forgotten", bw_strerror(codes[k]));
        cr_expect_eq(bw_puts(&h.w, "c"), BW_OK);
        expect_output(&h, "abc", 3, "held bytes kept");
        h_close(&h);
    }
}

Test(modes_rules, streaming_without_sink_records_einval_never_calls_null)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    int rc;
    h_open(&h, M_CONTIG);
    cr_expect_eq(bw_init_sink(&w, h.p, 64, NULL, NULL), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    rc = bw_write(&w, pattern(), 100);
    cr_expect_eq(rc, BW_EINVAL, "no sink to send to");
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    bw_clear(&w);
    cr_expect_eq(bw_write(&w, "abc", 3), BW_OK, "what fits the buffer is held");
    cr_expect_eq(bw_flush(&w), BW_EINVAL);
    bw_release(&w);
    h_close(&h);
}

/* --- Sources inside         the writer's own bytes ------------------- */

enum { A_WRITE, A_PUTS, A_HEX, A_PRINTF, A_PRINTF_LONG, A_APPEND, A_PATCH, A_COUNT };
static const char *const alias_name[A_COUNT] = {"write", "puts", "put_hex", "printf",
                                                "printf long", "append_writer", "patch"};

static void alias_case(int mode, int op)
{
    static const char tail[] = "alias-source-0123456789"; /* held with its NUL */
    const size_t tn = sizeof tail;
    harness h;
    ref r;
    const char *src;
    char buf[512];
    int rc = BW_OK, n;
    h_open_ex(&h, mode, default_param(mode), 0, BW_POOL_ZERO_ON_RETURN);
    fill_tight(&h, tail, tn, 3);
    if (mode == M_FIXED) /* only the tail held, at the end: the call must move it down */
        cr_assert_eq(bw_consume(&h.w, bw_len(&h.w) - tn), BW_OK);
    ref_from(&r, &h);
    cr_assert_not_null(bw_data(&h.w));
    src = (const char *)bw_data(&h.w) + bw_len(&h.w) - tn;
    cr_assert(memcmp(src, tail, tn) == 0);
    switch (op) {
    case A_WRITE:
        rc = bw_write(&h.w, src, tn - 1);
        ref_add(&r, tail, tn - 1);
        break;
    case A_PUTS:
        rc = bw_puts(&h.w, src);
        ref_add(&r, tail, tn - 1);
        break;
    case A_HEX:
        rc = bw_put_hex(&h.w, src, 8);
        ref_str(&r, "616c6961732d736f");
        break;
    case A_PRINTF:
        rc = bw_printf(&h.w, "[%s|%.5s]", src, src);
        n = snprintf(buf, sizeof buf, "[%s|%.5s]", tail, tail);
        ref_add(&r, buf, (size_t)n);
        break;
    case A_PRINTF_LONG:
        rc = bw_printf(&h.w, "%s%300s%.5s", src, "", src);
        n = snprintf(buf, sizeof buf, "%s%300s%.5s", tail, "", tail);
        ref_add(&r, buf, (size_t)n);
        break;
    case A_APPEND:
        rc = bw_append_writer(&h.w, &h.w);
        ref_double(&r);
        break;
    default: /* overlapping patch: the tail's bytes 2..12 become its bytes 0..10 */
        rc = bw_patch(&h.w, bw_tell(&h.w) - tn + 2, src, 10);
        memmove(r.d + r.len - tn + 2, r.d + r.len - tn, 10);
        break;
    }
    cr_expect_eq(rc, BW_OK, "%s in %s: %s", alias_name[op], mode_name[mode], bw_strerror(rc));
    expect_output(&h, r.d, r.len, alias_name[op]);
    ref_free(&r);
    h_close(&h);
}

Test(modes_rules, sources_in_the_writers_own_bytes_in_every_mode)
{
    int m, op;
    FOR_EACH_MODE(m)
        for (op = 0; op < A_COUNT; op++) alias_case(m, op);
}

Test(modes_rules, segmented_append_to_itself_across_blocks_links)
{
    harness h;
    ref r = {0};
    h_open_ex(&h, M_CHAIN, 0, 0, BW_POOL_ZERO_ON_RETURN);
    chain_blocks(&h, 3, &r);
    cr_expect_eq(bw_append_writer(&h.w, &h.w), BW_OK);
    ref_double(&r);
    expect_output(&h, r.d, r.len, "doubled");
    ref_free(&r);
    h_close(&h);
}

/* --- Zero-length calls ------------------------------------------------- */

Test(modes_rules, zero_length_calls_allocate_nothing_and_send_nothing)
{
    int m, pass;
    FOR_EACH_MODE(m)
        for (pass = 0; pass < 2; pass++) {
            harness h;
            unsigned char dst[1];
            size_t n = 99;
            long calls;
            uint64_t tell;
            int fds[2];
            cr_assert_eq(pipe(fds), 0);
            h_open(&h, m);
            if (pass == 1) cr_assert_eq(bw_write(&h.w, "held", 4), BW_OK);
            calls = h_calls(&h);
            tell = bw_tell(&h.w);
            cr_expect_eq(bw_write(&h.w, NULL, 0), BW_OK, "%s", mode_name[m]);
            cr_expect_eq(bw_write(&h.w, "x", 0), BW_OK);
            cr_expect_eq(bw_puts(&h.w, ""), BW_OK);
            cr_expect_eq(bw_printf(&h.w, "%s", ""), BW_OK);
            cr_expect_eq(bw_put_hex(&h.w, "x", 0), BW_OK);
            cr_expect_eq(bw_reserve(&h.w, 0), BW_OK);
            cr_expect_eq(bw_advance(&h.w, 0), BW_OK);
            cr_expect_eq(bw_consume(&h.w, 0), BW_OK);
            cr_expect_eq(bw_truncate(&h.w, bw_tell(&h.w)), BW_OK);
            cr_expect_eq(bw_patch(&h.w, bw_tell(&h.w), "x", 0), BW_OK);
            cr_expect_eq(bw_copy_out(&h.w, 0, dst, 0), BW_OK);
            if (pass == 0) {
                cr_expect_eq(bw_flush(&h.w), BW_OK);
                cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), BW_OK);
                cr_expect_eq(n, 0);
            }
            cr_expect_eq(h_calls(&h), calls, "%s pass %d: no allocation", mode_name[m], pass);
            if (pass == 0) cr_expect_eq(h_stats(&h).rents, 0, "%s: nothing rented", mode_name[m]);
            cr_expect_eq(h.s.calls, 0, "%s pass %d: no sink call", mode_name[m], pass);
            cr_expect(pipe_is_empty(fds[0]));
            cr_expect_eq(bw_error(&h.w), BW_OK, "nothing recorded");
            cr_expect_eq(bw_tell(&h.w), tell);
            close(fds[0]);
            close(fds[1]);
            h_close(&h);
        }
}

/* --- printf longer         than INT_MAX ------------------------------- */

/* A field 2^31 wide: glibc's vsnprintf fails at once with EOVERFLOW, as it
 * does (after formatting 2 GB of padding, seconds) for real output longer
 * than INT_MAX; the defect test below does the real one once. The format is
 * not a literal so that -Wformat-overflow leaves it alone. */
Test(modes_rules, printf_longer_than_int_max_is_eoverflow_in_every_mode)
{
    const char *volatile wide = "%s%2147483648s";
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        calls = h_calls(&h);
        cr_expect_eq(bw_printf(&h.w, wide, "x", ""), BW_EOVERFLOW, "%s", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EOVERFLOW, "recorded");
        cr_expect_eq(h_calls(&h), calls, "no allocation");
        cr_expect_eq(h.s.calls, 0, "nothing sent");
        expect_output(&h, "abc", 3, "nothing written");
        h_close(&h);
    }
}

/* --- Release, copy_out, pullup, consume edges------------------------------------------- */

Test(modes_rules, release_drops_a_first_buffer_but_keeps_a_fixed_one)
{
    harness h;
    h_open(&h, M_BUFFER);
    cr_assert_eq(bw_puts(&h.w, "abc"), BW_OK);
    cr_expect(bw_data(&h.w) == h.ibuf);
    cr_expect_eq(h_stats(&h).rents, 0);
    bw_release(&h.w);
    cr_assert_eq(bw_puts(&h.w, "abc"), BW_OK);
    cr_expect(bw_data(&h.w) != h.ibuf, "the first buffer is dropped");
    cr_expect_eq(h_stats(&h).rents, 1, "the writer rents from its pool");
    cr_expect(bw_writer_pool(&h.w) == h.p);
    h_close(&h);

    h_open(&h, M_FIXED);
    cr_assert_eq(bw_puts(&h.w, "abc"), BW_OK);
    bw_release(&h.w);
    cr_expect(bw_data(&h.w) == h.fbuf, "the fixed buffer is kept");
    cr_assert_eq(bw_puts(&h.w, "xyz"), BW_OK);
    cr_expect(memcmp(h.fbuf, "xyz", 3) == 0);
    cr_expect_eq(bw_free_capacity(&h.w), FIXED_SIZE - 3);
    h_close(&h);
}

Test(modes_rules, copy_out_offset_must_be_within_len_even_for_zero)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        unsigned char dst[4];
        h_open(&h, m);
        cr_expect_eq(bw_copy_out(&h.w, 0, dst, 0), BW_OK);
        cr_expect_eq(bw_copy_out(&h.w, 1, dst, 0), BW_EINVAL, "%s", mode_name[m]);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        cr_expect_eq(bw_copy_out(&h.w, 3, dst, 0), BW_OK);
        cr_expect_eq(bw_copy_out(&h.w, 4, dst, 0), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_OK);
        h_close(&h);
    }
}

Test(modes_rules, pullup_and_cstr_are_null_while_an_error_is_recorded)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        h_open(&h, m);
        cr_assert_eq(bw_write(&h.w, "abc", 3), BW_OK);
        record_einval(&h);
        calls = h_calls(&h);
        cr_expect_null(bw_pullup(&h.w), "%s", mode_name[m]);
        cr_expect_null(bw_cstr(&h.w), "%s", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL);
        cr_expect_eq(h_calls(&h), calls);
        expect_output(&h, "abc", 3, "nothing changed");
        h_close(&h);
    }
}

Test(modes_rules, consuming_everything_returns_the_start_to_the_block_start)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t cap;
        const unsigned char *start;
        h_open(&h, m);
        cr_assert_eq(bw_put_u8(&h.w, 'a'), BW_OK);
        start = bw_data(&h.w);
        cap = bw_capacity(&h.w);
        put_pattern(&h, 0, 20);
        cr_assert_eq(bw_consume(&h.w, 21), BW_OK);
        cr_expect(bw_data(&h.w) == start, "%s: back at the block's start", mode_name[m]);
        cr_expect_eq(bw_free_capacity(&h.w), cap, "%s: all the room again", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 21);
        cr_assert_eq(bw_put_u8(&h.w, 'z'), BW_OK);
        cr_expect_eq(start[0], 'z');
        h_close(&h);
    }
}

/* ======================================================================== */
/* 4. The 0.1 defects                                                       */
/* ======================================================================== */

Test(modes_defects, printf_argument_into_the_writer_survives_growth)
{
    static const char s16[] = "0123456789abcdef";
    char want[600];
    int n;
    harness h;
    const char *src;

    h_open_ex(&h, M_CONTIG, 16, 0, BW_POOL_ZERO_ON_RETURN); /* 16 bytes, kept as given */
    cr_assert_eq(bw_write(&h.w, s16, 16), BW_OK);
    cr_assert_eq(bw_free_capacity(&h.w), 0, "full: the printf must grow");
    src = (const char *)bw_data(&h.w);
    cr_expect_eq(bw_printf(&h.w, "<%.16s|%.16s|%.16s>", src, src, src), BW_OK);
    n = snprintf(want, sizeof want, "%s<%s|%s|%s>", s16, s16, s16, s16);
    expect_output(&h, want, (size_t)n, "short printf with growth");
    h_close(&h);

    /* Longer than the stack buffer: the two-pass path. */
    h_open_ex(&h, M_CONTIG, 16, 0, BW_POOL_ZERO_ON_RETURN);
    cr_assert_eq(bw_write(&h.w, s16, 16), BW_OK);
    src = (const char *)bw_data(&h.w);
    cr_expect_eq(bw_printf(&h.w, "%.16s%400s%.16s", src, "", src), BW_OK);
    n = snprintf(want, sizeof want, "%s%s%400s%s", s16, s16, "", s16);
    expect_output(&h, want, (size_t)n, "long printf with growth");
    h_close(&h);
}

/* The first printf on an empty writer sizes its block by the growth rule
 * for the line (the same block a plain write of the line gets), formatting
 * once; with min_first_block = 1 that is exactly the line's class. */
Test(modes_defects, first_printf_on_an_empty_writer_takes_the_growth_rules_block)
{
    bw_writer w = BW_WRITER_INIT, plain = BW_WRITER_INIT;
    bw_pool_options o;
    bw_pool *p = NULL;
    cr_assert_eq(bw_printf(&w, "id=%d name=%s", 12345, "abcdefg"), BW_OK);
    cr_expect_eq(bw_len(&w), 21);
    cr_expect(memcmp(bw_data(&w), "id=12345 name=abcdefg", 21) == 0);
    cr_assert_eq(bw_write(&plain, "id=12345 name=abcdefg", 21), BW_OK);
    cr_expect_eq(bw_capacity(&w), bw_capacity(&plain),
                 "capacity %zu, a plain write of the line gets %zu", bw_capacity(&w),
                 bw_capacity(&plain));
    bw_release(&w);
    bw_release(&plain);

    memset(&o, 0, sizeof o);
    o.min_first_block = 1;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_printf(&w, "id=%d name=%s", 12345, "abcdefg"), BW_OK);
    cr_expect_eq(bw_capacity(&w), 32, "the class of the 21-byte line");
    cr_expect(memcmp(bw_data(&w), "id=12345 name=abcdefg", 21) == 0);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* Real output of INT_MAX + 1 bytes (about 5 s in glibc; skipped in the
 * valgrind build, where it would take minutes). */
Test(modes_defects, printf_longer_than_int_max_is_eoverflow, .timeout = 120)
{
    bw_writer w = BW_WRITER_INIT;
#ifdef BW_VALGRIND
    return;
#endif
    cr_assert_eq(bw_puts(&w, "keep"), BW_OK);
    cr_expect_eq(bw_printf(&w, "%s%*s", "x", opaque_int(INT_MAX), ""), BW_EOVERFLOW);
    cr_expect_eq(bw_len(&w), 4);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW);
    bw_release(&w);
}

Test(modes_defects, segmented_write_of_an_impossible_size_fails_at_once)
{
    harness h;
    long calls;
    h_open(&h, M_CHAIN);
    cr_assert_eq(bw_puts(&h.w, "abc"), BW_OK);
    calls = h_calls(&h);
    cr_expect_eq(bw_write(&h.w, pattern(), opaque(HUGE_REQ)), BW_ENOMEM);
    cr_expect_eq(h_calls(&h), calls + 1, "one failed request, no renting until memory runs out");
    cr_expect_eq(h_stats(&h).rents, 1);
    expect_output(&h, "abc", 3, "nothing changed");
    h_close(&h);
}

Test(modes_defects, span_bytes_not_advanced_are_not_output)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        unsigned char *s;
        size_t f;
        h_open(&h, m);
        cr_assert_eq(bw_puts(&h.w, "ab"), BW_OK);
        f = bw_free_capacity(&h.w);
        s = (unsigned char *)bw_get_span(&h.w, f, NULL);
        cr_assert_not_null(s);
        memset(s, 'S', f);
        if (m != M_FIXED) {
            /* A call that needs more room: grows, links, or sends. */
            cr_assert_eq(bw_reserve(&h.w, f + 100), BW_OK);
            cr_assert_eq(bw_puts(&h.w, "cd"), BW_OK);
        } else {
            cr_assert_eq(bw_puts(&h.w, "cd"), BW_OK);
        }
        cr_expect_eq(bw_flush(&h.w), BW_OK);
        expect_output(&h, "abcd", 4, "scribbled span");
        h_close(&h);
    }
}

/* ======================================================================== */
/* 5. Allocation failure at every backing call                              */
/* ======================================================================== */

#define JOB_STEPS 300

static size_t job_chunk(int i) { return (size_t)(i * 37) % 5000 + 1; }
static size_t job_reserve(int i) { return (size_t)(i * 101) % 9000; }

/* One library call per step (span + advance counts as one: the advance
 * cannot fail once the span was given). Mixed sizes that cross every
 * block, buffer and threshold boundary. */
static int job_step(bw_writer *w, int i)
{
    const unsigned char *src = pattern();
    switch (i % 10) {
    case 0: return bw_write(w, src + i, job_chunk(i));
    case 1: return bw_puts(w, "the quick brown fox ");
    case 2:
        return i % 20 == 2 ? bw_put_dec_i64(w, -(int64_t)i * 1000003)
                           : bw_printf(w, "%d:%s;", i, "abc");
    case 3: return bw_printf(w, "%0*d|", 300 + i % 50, i);
    case 4: return bw_put_u32le(w, (uint32_t)i * 2654435761u);
    case 5: return bw_put_uvarint(w, (uint64_t)i << (i % 57));
    case 6: return bw_put_hex(w, src + 3 * i, (size_t)(i % 40));
    case 7: {
        size_t k = (size_t)(i % 100) + 1;
        unsigned char *p = (unsigned char *)bw_get_span(w, k, NULL);
        if (p == NULL) return bw_error(w);
        memcpy(p, src + 5 * i, k);
        return bw_advance(w, k);
    }
    case 8: return bw_reserve(w, job_reserve(i));
    default: return bw_write(w, src + 7 * i, job_reserve(i - 1));
    }
}

/* The job's output and, per step, the position before and after it and the
 * room it needs. */
typedef struct job_ref {
    unsigned char *out;
    size_t total;
    uint64_t before[JOB_STEPS], after[JOB_STEPS];
    size_t need[JOB_STEPS];
} job_ref;

static void job_reference(job_ref *jr)
{
    bw_writer w = BW_WRITER_INIT;
    int i;
    for (i = 0; i < JOB_STEPS; i++) {
        jr->before[i] = bw_tell(&w);
        cr_assert_eq(job_step(&w, i), BW_OK, "reference step %d", i);
        jr->after[i] = bw_tell(&w);
        jr->need[i] = i % 10 == 8 ? job_reserve(i)
                      : i % 10 == 7 ? (size_t)(i % 100) + 1
                                    : (size_t)(jr->after[i] - jr->before[i]);
    }
    jr->total = bw_len(&w);
    jr->out = (unsigned char *)malloc(jr->total);
    cr_assert_not_null(jr->out);
    memcpy(jr->out, bw_data(&w), jr->total);
    bw_release(&w);
}

/* Run the job in `mode` with backing call N failing (alone, or from N on).
 * Returns 1 when a failure reached the caller, 0 when the job made fewer
 * than N calls. */
static int job_with_failure(const job_ref *jr, int mode, long fail_n, int sticky)
{
    harness h;
    long base;
    int i, failed_at = -1, rc;
    uint64_t stop = 0;
    h_open_ex(&h, mode, mode == M_FIXED ? jr->total : default_param(mode), 4096, 0);
    base = h_calls(&h);
    atomic_store(&h.ta.fail_sticky, sticky);
    atomic_store(&h.ta.fail_at, base + fail_n);
    for (i = 0; i < JOB_STEPS; i++) {
        rc = job_step(&h.w, i);
        if (failed_at < 0) {
            if (rc == BW_OK) {
                cr_expect_eq(bw_tell(&h.w), jr->after[i]);
                continue;
            }
            failed_at = i;
            stop = bw_tell(&h.w);
            cr_expect_eq(rc, BW_ENOMEM, "%s N=%ld step %d: %s", mode_name[mode], fail_n, i,
                         bw_strerror(rc));
            cr_expect_eq(bw_error(&h.w), BW_ENOMEM, "recorded");
            if (mode == M_SINK)
                cr_expect(stop >= jr->before[i] && stop <= jr->after[i],
                          "streaming: a prefix of the failed call at most");
            else
                cr_expect_eq(stop, jr->before[i], "%s N=%ld step %d: nothing of the failed call",
                             mode_name[mode], fail_n, i);
        } else {
            cr_expect_eq(rc, BW_ENOMEM, "%s N=%ld step %d: sticks", mode_name[mode], fail_n, i);
            cr_expect_eq(bw_tell(&h.w), stop, "refused calls change nothing");
        }
    }
    if (failed_at >= 0) {
        expect_output(&h, jr->out, (size_t)stop, "held bytes at the failure");
        if (!sticky && stop == jr->before[failed_at]) {
            /* The allocator works again: clear_error and redo the failed call. */
            bw_clear_error(&h.w);
            for (i = failed_at; i < JOB_STEPS; i++)
                cr_expect_eq(job_step(&h.w, i), BW_OK, "%s N=%ld retry step %d",
                             mode_name[mode], fail_n, i);
            cr_expect_eq(bw_flush(&h.w), BW_OK);
            expect_output(&h, jr->out, jr->total, "job finished after clear_error");
        }
    } else {
        cr_expect_eq(bw_flush(&h.w), BW_OK);
        expect_output(&h, jr->out, jr->total, "job without failure");
        cr_expect_lt(h_calls(&h) - base, fail_n, "%s N=%ld: a failed backing call never "
                     "reached the caller", mode_name[mode], fail_n);
    }
    if (mode == M_FIXED) cr_expect_eq(h_calls(&h), base, "a fixed writer never allocates");
    h_close(&h);
    return failed_at >= 0;
}

typedef struct job_run {
    const job_ref *jr;
    int mode;
} job_run;

static int job_run_failing(void *ctx, long n, int sticky)
{
    const job_run *r = (const job_run *)ctx;
    return job_with_failure(r->jr, r->mode, n, sticky);
}

static void fail_every_call(int sticky)
{
    job_ref jr;
    int m;
    job_reference(&jr);
    FOR_EACH_MODE(m) {
        job_run r = {&jr, m};
        long n = fail_each_call(job_run_failing, &r, sticky, 2000);
        if (m != M_FIXED) cr_expect_gt(n, 3, "%s: the job makes backing calls", mode_name[m]);
        else cr_expect_eq(n, 1);
    }
    free(jr.out);
}

Test(modes_failinj, every_backing_call_failing_alone_in_every_mode, .timeout = 300)
{
    fail_every_call(0);
}

Test(modes_failinj, every_backing_call_failing_from_then_on_in_every_mode, .timeout = 300)
{
    fail_every_call(1);
}

Test(modes_failinj, fixed_writer_one_byte_short_at_every_step_is_efull, .timeout = 300)
{
    job_ref jr;
    int j;
    job_reference(&jr);
    for (j = 0; j < JOB_STEPS; j++) {
        harness h;
        size_t size;
        int i, f = -1, rc;
        if (jr.need[j] == 0) continue;
        size = (size_t)jr.before[j] + jr.need[j] - 1;
        for (i = 0; i < JOB_STEPS && f < 0; i++)
            if (jr.before[i] + jr.need[i] > size) f = i;
        cr_assert_geq(f, 0);
        h_open_ex(&h, M_FIXED, size, 0, 0);
        for (i = 0; i < JOB_STEPS; i++) {
            rc = job_step(&h.w, i);
            cr_expect_eq(rc, i < f ? BW_OK : BW_EFULL, "size %zu step %d (first failure %d): %s",
                         size, i, f, bw_strerror(rc));
            if (rc != (i < f ? BW_OK : BW_EFULL)) break;
        }
        cr_expect_eq(bw_tell(&h.w), jr.before[f]);
        expect_output(&h, jr.out, (size_t)jr.before[f], "fixed, one byte short");
        cr_expect_eq(h_calls(&h), 0);
        h_close(&h);
    }
    free(jr.out);
}
