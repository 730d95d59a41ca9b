/* SPDX-License-Identifier: MIT */
/* test_cursor.c - the pointer encoders (bw_enc_*) byte for byte, and a span
 * committed with bw_advance_to: its result in every mode and its errors. */
#include "harness.h"

#include <stdio.h>

/* Run one encoder into a guarded buffer: it must store exactly the wanted
 * bytes, touch nothing after them and return p plus their length. */
#define EXPECT_ENC(call, ...)                                                  \
    do {                                                                       \
        const unsigned char want_[] = {__VA_ARGS__};                           \
        unsigned char buf_[32], *p_ = buf_ + 1, *end_;                         \
        size_t i_;                                                             \
        memset(buf_, 0xAB, sizeof buf_);                                       \
        end_ = call;                                                           \
        cr_assert_eq(end_, p_ + sizeof want_, "%s returned p + %td, want p + %zu", \
                     #call, end_ - p_, sizeof want_);                          \
        cr_assert(memcmp(p_, want_, sizeof want_) == 0, "%s: bytes differ", #call); \
        cr_assert_eq(buf_[0], 0xAB, "%s wrote before p", #call);              \
        for (i_ = 1 + sizeof want_; i_ < sizeof buf_; i_++)                    \
            cr_assert_eq(buf_[i_], 0xAB, "%s wrote past its bytes", #call);    \
    } while (0)

Test(cursor, fixed_width_integers_little_and_big_endian)
{
    EXPECT_ENC(bw_enc_u8(p_, 0xfe), 0xfe);
    EXPECT_ENC(bw_enc_u16le(p_, 0x1234), 0x34, 0x12);
    EXPECT_ENC(bw_enc_u16be(p_, 0x1234), 0x12, 0x34);
    EXPECT_ENC(bw_enc_u32le(p_, 0x01020304u), 4, 3, 2, 1);
    EXPECT_ENC(bw_enc_u32be(p_, 0x01020304u), 1, 2, 3, 4);
    EXPECT_ENC(bw_enc_u64le(p_, 0x0102030405060708ull), 8, 7, 6, 5, 4, 3, 2, 1);
    EXPECT_ENC(bw_enc_u64be(p_, 0x0102030405060708ull), 1, 2, 3, 4, 5, 6, 7, 8);
    EXPECT_ENC(bw_enc_u16le(p_, UINT16_MAX), 0xff, 0xff);
    EXPECT_ENC(bw_enc_u64be(p_, UINT64_MAX), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    EXPECT_ENC(bw_enc_i16le(p_, -2), 0xfe, 0xff);
    EXPECT_ENC(bw_enc_i16be(p_, INT16_MIN), 0x80, 0x00);
    EXPECT_ENC(bw_enc_i32le(p_, -0x01020304), 0xfc, 0xfc, 0xfd, 0xfe);
    EXPECT_ENC(bw_enc_i32be(p_, -0x01020304), 0xfe, 0xfd, 0xfc, 0xfc);
    EXPECT_ENC(bw_enc_i32le(p_, INT32_MAX), 0xff, 0xff, 0xff, 0x7f);
    EXPECT_ENC(bw_enc_i64le(p_, INT64_MIN), 0, 0, 0, 0, 0, 0, 0, 0x80);
    EXPECT_ENC(bw_enc_i64be(p_, -2), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe);
    EXPECT_ENC(bw_enc_i64be(p_, INT64_MAX), 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

Test(cursor, floats_are_their_ieee754_bits)
{
    EXPECT_ENC(bw_enc_f32le(p_, 1.0f), 0x00, 0x00, 0x80, 0x3f);
    EXPECT_ENC(bw_enc_f32be(p_, -2.5f), 0xc0, 0x20, 0x00, 0x00);
    EXPECT_ENC(bw_enc_f64le(p_, 1.0), 0, 0, 0, 0, 0, 0, 0xf0, 0x3f);
    EXPECT_ENC(bw_enc_f64be(p_, 0.1), 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a);
    EXPECT_ENC(bw_enc_f64le(p_, -0.0), 0, 0, 0, 0, 0, 0, 0, 0x80);
    EXPECT_ENC(bw_enc_f32be(p_, 3.4028234663852886e38f), 0x7f, 0x7f, 0xff, 0xff);
}

Test(cursor, varints_at_every_length_boundary)
{
    EXPECT_ENC(bw_enc_uvarint(p_, 0), 0x00);
    EXPECT_ENC(bw_enc_uvarint(p_, 1), 0x01);
    EXPECT_ENC(bw_enc_uvarint(p_, 127), 0x7f);
    EXPECT_ENC(bw_enc_uvarint(p_, 128), 0x80, 0x01);
    EXPECT_ENC(bw_enc_uvarint(p_, 300), 0xac, 0x02);
    EXPECT_ENC(bw_enc_uvarint(p_, 16383), 0xff, 0x7f);
    EXPECT_ENC(bw_enc_uvarint(p_, 16384), 0x80, 0x80, 0x01);
    EXPECT_ENC(bw_enc_uvarint(p_, (uint64_t)1 << 63),
               0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01);
    EXPECT_ENC(bw_enc_uvarint(p_, UINT64_MAX),
               0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    /* zig-zag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... */
    EXPECT_ENC(bw_enc_svarint(p_, 0), 0x00);
    EXPECT_ENC(bw_enc_svarint(p_, -1), 0x01);
    EXPECT_ENC(bw_enc_svarint(p_, 1), 0x02);
    EXPECT_ENC(bw_enc_svarint(p_, -64), 0x7f);
    EXPECT_ENC(bw_enc_svarint(p_, 64), 0x80, 0x01);
    EXPECT_ENC(bw_enc_svarint(p_, INT64_MAX),
               0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    EXPECT_ENC(bw_enc_svarint(p_, INT64_MIN),
               0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
}

Test(cursor, bytes_copies_n_and_zero_is_nothing)
{
    static const char src[] = "hello";
    EXPECT_ENC(bw_enc_bytes(p_, src, 5), 'h', 'e', 'l', 'l', 'o');
    EXPECT_ENC(bw_enc_bytes(p_, src, 1), 'h');
    {
        unsigned char buf[4] = {9, 9, 9, 9};
        cr_assert_eq(bw_enc_bytes(buf, NULL, 0), buf, "n == 0 returns p, NULL src allowed");
        cr_assert_eq(buf[0], 9);
    }
}

/* Each encoder stores what the matching put writes (the puts are built on
 * them), for a spread of values. */
Test(cursor, encoders_agree_with_the_puts)
{
    bw_writer w = BW_WRITER_INIT;
    unsigned char buf[256], *p;
    uint64_t i;
    for (i = 0; i < 64; i++) {
        uint64_t v = (i * 0x9E3779B97F4A7C15ull) >> (i % 64);
        double d = (double)(int64_t)v / 3.0;
        p = buf;
        bw_clear(&w);
        p = bw_enc_u8(p, (uint8_t)v);             bw_put_u8(&w, (uint8_t)v);
        p = bw_enc_u16le(p, (uint16_t)v);         bw_put_u16le(&w, (uint16_t)v);
        p = bw_enc_u32le(p, (uint32_t)v);         bw_put_u32le(&w, (uint32_t)v);
        p = bw_enc_u64le(p, v);                   bw_put_u64le(&w, v);
        p = bw_enc_u16be(p, (uint16_t)v);         bw_put_u16be(&w, (uint16_t)v);
        p = bw_enc_u32be(p, (uint32_t)v);         bw_put_u32be(&w, (uint32_t)v);
        p = bw_enc_u64be(p, v);                   bw_put_u64be(&w, v);
        p = bw_enc_i16le(p, (int16_t)v);          bw_put_i16le(&w, (int16_t)v);
        p = bw_enc_i32le(p, (int32_t)v);          bw_put_i32le(&w, (int32_t)v);
        p = bw_enc_i64le(p, (int64_t)v);          bw_put_i64le(&w, (int64_t)v);
        p = bw_enc_i16be(p, (int16_t)v);          bw_put_i16be(&w, (int16_t)v);
        p = bw_enc_i32be(p, (int32_t)v);          bw_put_i32be(&w, (int32_t)v);
        p = bw_enc_i64be(p, (int64_t)v);          bw_put_i64be(&w, (int64_t)v);
        p = bw_enc_f32le(p, (float)d);            bw_put_f32le(&w, (float)d);
        p = bw_enc_f64le(p, d);                   bw_put_f64le(&w, d);
        p = bw_enc_f32be(p, (float)d);            bw_put_f32be(&w, (float)d);
        p = bw_enc_f64be(p, d);                   bw_put_f64be(&w, d);
        p = bw_enc_uvarint(p, v);                 bw_put_uvarint(&w, v);
        p = bw_enc_svarint(p, (int64_t)v);        bw_put_svarint(&w, (int64_t)v);
        p = bw_enc_svarint(p, -(int64_t)(v >> 1)); bw_put_svarint(&w, -(int64_t)(v >> 1));
        cr_assert_eq(bw_error(&w), BW_OK);
        cr_assert_eq((size_t)(p - buf), bw_len(&w), "value %llu: lengths", (unsigned long long)v);
        cr_assert(memcmp(buf, bw_data(&w), bw_len(&w)) == 0, "value %llu: bytes",
                  (unsigned long long)v);
    }
    bw_release(&w);
}

/* ---------------------------------------------------------------------- */
/* A span committed with bw_advance_to, in every mode                     */
/* ---------------------------------------------------------------------- */

/* The harness's writer of mode m: a 256-byte streaming buffer, a 128 KiB
 * fixed buffer. */
#define FIXED_CAP ((size_t)1 << 17)

static void cw_open(harness *c, int mode)
{
    h_open_ex(c, mode, mode == M_SINK ? 256 : mode == M_FIXED ? FIXED_CAP : default_param(mode), 0,
              0);
}

/* The writer's whole output (h_output): what was sent, then what is held. */
typedef struct out {
    unsigned char *d;
    size_t n;
} out;

/* The record a serializer would write: u32 + uvarint + u64 + f64 + bytes. */
#define REC_MAX (4 + 10 + 8 + 8 + 7)
static unsigned char *enc_record(unsigned char *p, uint32_t i)
{
    static const char tag[] = "record!";
    p = bw_enc_u32le(p, i * 2654435761u);
    p = bw_enc_uvarint(p, (uint64_t)i << (i % 57));
    p = bw_enc_u64be(p, ~(uint64_t)i);
    p = bw_enc_f64le(p, (double)i * 0.25);
    return bw_enc_bytes(p, tag, i % 8);
}

static void put_record(bw_writer *w, uint32_t i)
{
    static const char tag[] = "record!";
    bw_put_u32le(w, i * 2654435761u);
    bw_put_uvarint(w, (uint64_t)i << (i % 57));
    bw_put_u64be(w, ~(uint64_t)i);
    bw_put_f64le(w, (double)i * 0.25);
    bw_write(w, tag, i % 8);
}

Test(cursor, records_through_a_span_equal_the_puts_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness c;
        bw_writer ref = BW_WRITER_INIT;
        out got;
        uint32_t i;
        cw_open(&c, m);
        for (i = 0; i < 3000; i++) {
            size_t avail, before = bw_len(&c.w);
            uint64_t tell = bw_tell(&c.w);
            unsigned char *p = (unsigned char *)bw_get_span(&c.w, REC_MAX, &avail);
            unsigned char *end;
            cr_assert_not_null(p, "%s: span %u: %s", mode_name[m], i, bw_strerror(bw_error(&c.w)));
            cr_assert_geq(avail, REC_MAX, "%s: the span has the room asked for", mode_name[m]);
            end = enc_record(p, i);
            cr_assert_eq(bw_advance_to(&c.w, end), BW_OK, "%s: record %u", mode_name[m], i);
            cr_assert_eq(bw_tell(&c.w), tell + (uint64_t)(end - p),
                         "%s: exactly end - start committed", mode_name[m]);
            if (m != M_SINK)
                cr_assert_eq(bw_len(&c.w), before + (size_t)(end - p), "%s", mode_name[m]);
            put_record(&ref, i);
        }
        cr_assert_eq(bw_error(&c.w), BW_OK);
        cr_assert_eq(bw_flush(&c.w), BW_OK);
        got.d = h_output(&c, &got.n);
        cr_assert_eq(got.n, bw_len(&ref), "%s: %zu bytes, the puts wrote %zu", mode_name[m], got.n,
                     bw_len(&ref));
        cr_assert(memcmp(got.d, bw_data(&ref), got.n) == 0, "%s: same bytes as the puts",
                  mode_name[m]);
        if (m == M_SINK) cr_assert_gt(c.s.out.len, 0, "the streaming writer sent as it went");
        if (m == M_CHAIN) cr_assert_null(bw_data(&c.w), "the segmented writer linked blocks");
        free(got.d);
        bw_release(&ref);
        h_close(&c);
    }
}

/* The span starts at the next byte: after bw_advance or a write it has
 * moved, and bw_advance_to counts from there. */
Test(cursor, advance_to_counts_from_the_current_start_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness c;
        unsigned char *p, *q;
        out got;
        cw_open(&c, m);
        p = (unsigned char *)bw_get_span(&c.w, 16, NULL);
        cr_assert_not_null(p);
        p = bw_enc_u16be(p, 0x0102);
        cr_assert_eq(bw_advance(&c.w, 2), BW_OK);
        q = (unsigned char *)bw_get_span(&c.w, 16, NULL);
        cr_assert_eq(q, p, "%s: the span's start moved by the advance", mode_name[m]);
        q = bw_enc_u8(q, 3);
        cr_assert_eq(bw_advance_to(&c.w, q), BW_OK);
        cr_assert_eq(bw_advance_to(&c.w, q), BW_OK, "%s: end == start commits nothing",
                     mode_name[m]);
        cr_assert_eq(bw_tell(&c.w), 3, "%s", mode_name[m]);
        cr_assert_eq(bw_put_u8(&c.w, 4), BW_OK);
        q = (unsigned char *)bw_get_span(&c.w, 0, NULL);
        cr_assert_not_null(q, "%s: a hint of 0 still gives a byte", mode_name[m]);
        q = bw_enc_u8(q, 5);
        cr_assert_eq(bw_advance_to(&c.w, q), BW_OK);
        cr_assert_eq(bw_flush(&c.w), BW_OK);
        got.d = h_output(&c, &got.n);
        cr_assert_eq(got.n, 5, "%s", mode_name[m]);
        cr_assert(memcmp(got.d, "\1\2\3\4\5", 5) == 0, "%s: bytes", mode_name[m]);
        free(got.d);
        h_close(&c);
    }
}

/* Every refusal is bw_advance's: BW_EINVAL recorded with nothing committed
 * (NULL end, an end before the span's start, an end past its room), the
 * recorded error while there is one, BW_EINVAL unrecorded for NULL w. */
Test(cursor, advance_to_errors_in_every_mode)
{
    int m;
    cr_assert_eq(bw_advance_to(NULL, NULL), BW_EINVAL);
    {
        unsigned char b[4];
        cr_assert_eq(bw_advance_to(NULL, b), BW_EINVAL);
    }
    FOR_EACH_MODE(m) {
        harness c;
        size_t avail;
        unsigned char *p;
        uint64_t tell;
        cw_open(&c, m);
        cr_assert_eq(bw_put_u32le(&c.w, 7), BW_OK);
        tell = bw_tell(&c.w);

        /* Before the span's start (into the held bytes). */
        p = (unsigned char *)bw_get_span(&c.w, 8, &avail);
        cr_assert_not_null(p);
        cr_assert_eq(bw_advance_to(&c.w, p - 1), BW_EINVAL, "%s: before the start", mode_name[m]);
        cr_assert_eq(bw_error(&c.w), BW_EINVAL, "%s: recorded", mode_name[m]);
        cr_assert_eq(bw_tell(&c.w), tell, "%s: nothing committed", mode_name[m]);
        bw_clear_error(&c.w);

        /* Past the span: one byte more than the free space. The last byte
         * of it is fine. */
        p = (unsigned char *)bw_get_span(&c.w, 8, &avail);
        cr_assert_eq(avail, bw_free_capacity(&c.w));
        cr_assert_eq(bw_advance_to(&c.w, p + avail + 1), BW_EINVAL, "%s: past the span",
                     mode_name[m]);
        cr_assert_eq(bw_error(&c.w), BW_EINVAL);
        cr_assert_eq(bw_tell(&c.w), tell, "%s: nothing committed", mode_name[m]);
        bw_clear_error(&c.w);

        /* NULL end. */
        cr_assert_eq(bw_advance_to(&c.w, NULL), BW_EINVAL, "%s: NULL end", mode_name[m]);
        cr_assert_eq(bw_error(&c.w), BW_EINVAL);
        cr_assert_eq(bw_tell(&c.w), tell);

        /* With an error recorded: that error, nothing committed, even for an
         * end that would be valid, or the start itself. */
        p = (unsigned char *)bw_get_span(&c.w, 8, &avail);
        cr_assert_null(p, "%s: no span while an error is recorded", mode_name[m]);
        bw_clear_error(&c.w);
        p = (unsigned char *)bw_get_span(&c.w, 8, &avail);
        cr_assert_not_null(p);
        cr_assert_eq(bw_advance_to(&c.w, p + avail + 1), BW_EINVAL);
        cr_assert_eq(bw_advance_to(&c.w, p + 4), BW_EINVAL, "%s: the recorded error", mode_name[m]);
        cr_assert_eq(bw_advance_to(&c.w, p), BW_EINVAL, "%s: even committing nothing",
                     mode_name[m]);
        cr_assert_eq(bw_tell(&c.w), tell, "%s: nothing committed", mode_name[m]);
        bw_clear_error(&c.w);

        /* And the whole span is fine. */
        p = (unsigned char *)bw_get_span(&c.w, 8, &avail);
        memset(p, 0x5a, avail);
        cr_assert_eq(bw_advance_to(&c.w, p + avail), BW_OK, "%s: the whole span", mode_name[m]);
        cr_assert_eq(bw_tell(&c.w), tell + avail);
        h_close(&c);
    }
}

/* A writer with no storage yet: its only valid end is NULL + 0, which is
 * refused as NULL; a span first gives it storage. */
Test(cursor, advance_to_on_a_writer_with_no_storage)
{
    bw_writer w = BW_WRITER_INIT;
    unsigned char b[8];
    cr_assert_eq(bw_advance_to(&w, NULL), BW_EINVAL);
    cr_assert_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    cr_assert_eq(bw_advance_to(&w, b), BW_EINVAL, "memory that is not a span");
    cr_assert_eq(bw_len(&w), 0);
    bw_release(&w);
}

/* A fixed writer's span of more than its room fails, as bw_reserve does. */
Test(cursor, fixed_span_beyond_the_buffer_is_efull)
{
    unsigned char buf[8];
    bw_writer w;
    size_t avail = 99;
    unsigned char *p;
    bw_init_fixed(&w, buf, sizeof buf);
    cr_assert_null(bw_get_span(&w, 9, &avail));
    cr_assert_eq(avail, 0);
    cr_assert_eq(bw_error(&w), BW_EFULL);
    bw_clear_error(&w);
    p = (unsigned char *)bw_get_span(&w, 8, &avail);
    cr_assert_eq(p, buf);
    cr_assert_eq(avail, 8);
    p = bw_enc_u64le(p, 0x0807060504030201ull);
    cr_assert_eq(bw_advance_to(&w, p), BW_OK);
    cr_assert(memcmp(buf, "\1\2\3\4\5\6\7\10", 8) == 0);
    cr_assert_eq(bw_free_capacity(&w), 0);
    bw_release(&w);
}

/* bw_try_span: a span only when the bytes are free now, and no effect of
 * any kind otherwise: no room made, nothing sent, skipped, rented or
 * recorded, in every mode. */
Test(cursor, try_span_gives_free_room_or_null_with_no_effect)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t free0;
        long calls0, sends0;
        uint64_t tell0;
        unsigned char *p;
        h_open_ex(&h, m, 16, 0, 0);
        cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK, "%s", mode_name[m]);
        free0 = bw_free_capacity(&h.w);
        calls0 = h_calls(&h);
        sends0 = h.s.calls;
        tell0 = bw_tell(&h.w);
        cr_expect_null(bw_try_span(&h.w, free0 + 1), "%s", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_OK, "nothing recorded");
        cr_expect_eq(bw_free_capacity(&h.w), free0, "%s: no room made", mode_name[m]);
        cr_expect_eq(h_calls(&h), calls0, "%s: nothing rented", mode_name[m]);
        cr_expect_eq(h.s.calls, sends0, "%s: nothing sent", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), tell0);
        p = (unsigned char *)bw_try_span(&h.w, free0);
        cr_assert_not_null(p, "%s: %zu free", mode_name[m], free0);
        if (m != M_CHAIN) cr_expect_eq(p, bw_data(&h.w) + bw_len(&h.w));
        cr_expect_eq(bw_try_span(&h.w, 0), (void *)p, "0 asks for 1");
        *p++ = 'x';
        cr_expect_eq(bw_advance_to(&h.w, p), BW_OK);
        /* a segmented writer's short block is not skipped: the next exact
         * write fills it first */
        cr_expect_null(bw_try_span(&h.w, free0));
        cr_expect_eq(bw_write(&h.w, pattern(), free0 - 1), BW_OK);
        {
            ref r = {0};
            ref_str(&r, "0123456789x");
            ref_add(&r, pattern(), free0 - 1);
            if (m == M_CHAIN) cr_expect_eq(bw_iovec(&h.w, NULL, 0), 1, "one block, nothing skipped");
            h_close_expecting(&h, &r, mode_name[m]);
        }
    }
}

Test(cursor, try_span_is_null_with_an_error_a_limit_or_no_writer)
{
    unsigned char buf[64];
    bw_writer w;
    cr_expect_null(bw_try_span(NULL, 1));
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_expect_not_null(bw_try_span(&w, 64));
    cr_assert_eq(bw_set_limit(&w, 8), BW_OK);
    cr_expect_null(bw_try_span(&w, 9), "past the limit");
    cr_expect_not_null(bw_try_span(&w, 8));
    cr_assert_eq(bw_advance(&w, 65), BW_EINVAL, "past the block: a bad argument");
    bw_clear_error(&w);
    cr_assert_eq(bw_advance(&w, 9), BW_ELIMIT, "in the block, past the limit");
    cr_expect_null(bw_try_span(&w, 1), "an error is recorded");
    bw_release(&w);
}

/* bw_set_first_buffer: a contiguous writer without storage takes the
 * caller's buffer for its next writes, keeps its pool and limit, and rents
 * only when a write overflows it; each message of a reused writer can
 * start in it again. */
Test(cursor, first_buffer_is_used_at_the_first_write_of_each_message)
{
    harness h;
    unsigned char stack[32];
    int i;
    h_open(&h, M_CONTIG);
    cr_assert_eq(bw_set_limit(&h.w, 1000), BW_OK);
    for (i = 0; i < 3; i++) {
        cr_assert_eq(bw_set_first_buffer(&h.w, stack, sizeof stack), BW_OK);
        cr_expect_eq(bw_puts(&h.w, "small message"), BW_OK);
        cr_expect_eq(bw_data(&h.w), stack);
        cr_expect_eq(h_calls(&h), 0, "nothing rented");
        bw_release(&h.w);
    }
    cr_assert_eq(bw_set_first_buffer(&h.w, stack, sizeof stack), BW_OK);
    cr_expect_eq(bw_puts(&h.w, "a message longer than the stack buffer"), BW_OK);
    cr_expect_neq(bw_data(&h.w), stack, "outgrown: a pooled block");
    cr_expect(memcmp(bw_data(&h.w), "a message longer than the stack buffer", 38) == 0);
    cr_expect_eq(bw_set_first_buffer(&h.w, stack, sizeof stack), BW_EINVAL, "has storage");
    bw_clear_error(&h.w);
    cr_expect_eq(bw_write(&h.w, pattern(), 1000), BW_ELIMIT, "the limit stayed");
    h_close(&h);
}

Test(cursor, first_buffer_refuses_other_modes_and_bad_arguments)
{
    unsigned char b[8];
    int m;
    cr_expect_eq(bw_set_first_buffer(NULL, b, sizeof b), BW_EINVAL);
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        if (m == M_CONTIG) {
            cr_expect_eq(bw_set_first_buffer(&h.w, NULL, 8), BW_EINVAL);
            bw_clear_error(&h.w);
            cr_expect_eq(bw_set_first_buffer(&h.w, b, 0), BW_EINVAL);
            bw_clear_error(&h.w);
            cr_expect_eq(bw_set_first_buffer(&h.w, b, sizeof b), BW_OK);
        } else {
            /* a first buffer (M_BUFFER) is storage; the others do not grow */
            cr_expect_eq(bw_set_first_buffer(&h.w, b, sizeof b), BW_EINVAL, "%s",
                         mode_name[m]);
            cr_expect_eq(bw_error(&h.w), BW_EINVAL);
        }
        h_close(&h);
    }
}
