/* SPDX-License-Identifier: MIT */
/* test_encoding.c - every typed write, byte for byte. */
#include "harness.h"

#include <float.h>
#include <math.h>

#define EXPECT_BYTES(w, ...)                                                   \
    do {                                                                       \
        const unsigned char want_[] = {__VA_ARGS__};                           \
        cr_assert_eq(bw_len(w), sizeof want_, "length %zu, want %zu",          \
                     bw_len(w), sizeof want_);                                 \
        cr_assert(memcmp(bw_data(w), want_, sizeof want_) == 0, "bytes differ"); \
        bw_clear(w);                                                           \
    } while (0)

/* A varint table row: the value (s for bw_put_svarint, u for
 * bw_put_uvarint) and the n bytes b it is written as. */
typedef struct vrow {
    int64_t s;
    uint64_t u;
    size_t n;
    unsigned char b[10];
} vrow;

/* Each row's value, written alone, is exactly its bytes. */
static void expect_varint_rows(const vrow *rows, size_t count, int is_signed)
{
    bw_writer w = BW_WRITER_INIT;
    size_t i;
    for (i = 0; i < count; i++) {
        int rc = is_signed ? bw_put_svarint(&w, rows[i].s) : bw_put_uvarint(&w, rows[i].u);
        cr_assert_eq(rc, BW_OK, "row %zu", i);
        cr_assert_eq(bw_len(&w), rows[i].n, "row %zu: length %zu, want %zu", i, bw_len(&w),
                     rows[i].n);
        cr_assert(memcmp(bw_data(&w), rows[i].b, rows[i].n) == 0, "row %zu: bytes differ", i);
        bw_clear(&w);
    }
    bw_release(&w);
}

Test(encoding, fixed_width_integers)
{
    bw_writer w = BW_WRITER_INIT;
    cr_assert_eq(bw_put_u8(&w, 0xfe), BW_OK);
    EXPECT_BYTES(&w, 0xfe);
    bw_put_u16le(&w, 0x1234);
    EXPECT_BYTES(&w, 0x34, 0x12);
    bw_put_u16be(&w, 0x1234);
    EXPECT_BYTES(&w, 0x12, 0x34);
    bw_put_u32le(&w, 0x01020304u);
    EXPECT_BYTES(&w, 4, 3, 2, 1);
    bw_put_u32be(&w, 0x01020304u);
    EXPECT_BYTES(&w, 1, 2, 3, 4);
    bw_put_u64le(&w, 0x0102030405060708ull);
    EXPECT_BYTES(&w, 8, 7, 6, 5, 4, 3, 2, 1);
    bw_put_u64be(&w, 0x0102030405060708ull);
    EXPECT_BYTES(&w, 1, 2, 3, 4, 5, 6, 7, 8);
    bw_put_u64le(&w, UINT64_MAX);
    EXPECT_BYTES(&w, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    bw_put_i16le(&w, -2);
    EXPECT_BYTES(&w, 0xfe, 0xff);
    bw_put_i16be(&w, INT16_MIN);
    EXPECT_BYTES(&w, 0x80, 0x00);
    bw_put_i32le(&w, -1);
    EXPECT_BYTES(&w, 0xff, 0xff, 0xff, 0xff);
    bw_put_i32be(&w, -0x01020304);
    EXPECT_BYTES(&w, 0xfe, 0xfd, 0xfc, 0xfc);
    bw_put_i64le(&w, INT64_MIN);
    EXPECT_BYTES(&w, 0, 0, 0, 0, 0, 0, 0, 0x80);
    bw_put_i64be(&w, -2);
    EXPECT_BYTES(&w, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe);
    bw_release(&w);
}

Test(encoding, floats_ieee754)
{
    bw_writer w = BW_WRITER_INIT;
    bw_put_f32le(&w, 1.0f);
    EXPECT_BYTES(&w, 0x00, 0x00, 0x80, 0x3f);
    bw_put_f32be(&w, -2.5f);
    EXPECT_BYTES(&w, 0xc0, 0x20, 0x00, 0x00);
    bw_put_f64le(&w, 1.0);
    EXPECT_BYTES(&w, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f);
    bw_put_f64be(&w, 0.1);
    EXPECT_BYTES(&w, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a);
    bw_put_f64be(&w, -0.0);
    EXPECT_BYTES(&w, 0x80, 0, 0, 0, 0, 0, 0, 0);
    bw_put_f32le(&w, INFINITY);
    EXPECT_BYTES(&w, 0x00, 0x00, 0x80, 0x7f);
    bw_put_f64le(&w, DBL_MAX);
    EXPECT_BYTES(&w, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f);
    bw_release(&w);
}

Test(encoding, uvarint_table)
{
    static const vrow rows[] = {
        { 0, 0, 1, { 0x00 } },
        { 0, 1, 1, { 0x01 } },
        { 0, 127, 1, { 0x7f } },
        { 0, 128, 2, { 0x80, 0x01 } },
        { 0, 300, 2, { 0xac, 0x02 } },
        { 0, 16383, 2, { 0xff, 0x7f } },
        { 0, 16384, 3, { 0x80, 0x80, 0x01 } },
        { 0, 0xffffffffu, 5, { 0xff, 0xff, 0xff, 0xff, 0x0f } },
        { 0, (uint64_t)1 << 63, 10, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 } },
        { 0, UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
    };
    expect_varint_rows(rows, sizeof rows / sizeof rows[0], 0);
}

Test(encoding, svarint_zigzag_table)
{
    static const vrow rows[] = {
        { 0, 0, 1, { 0x00 } },
        { -1, 0, 1, { 0x01 } },
        { 1, 0, 1, { 0x02 } },
        { -2, 0, 1, { 0x03 } },
        { 63, 0, 1, { 0x7e } },
        { -64, 0, 1, { 0x7f } },
        { 64, 0, 2, { 0x80, 0x01 } },
        { INT64_MAX, 0, 10, { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
        { INT64_MIN, 0, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
    };
    expect_varint_rows(rows, sizeof rows / sizeof rows[0], 1);
}

Test(encoding, uvarint_roundtrip_all_lengths)
{
    bw_writer w = BW_WRITER_INIT;
    int shift;
    for (shift = 0; shift < 64; shift++) {
        uint64_t v = ((uint64_t)1 << shift) | ((uint64_t)1 << shift >> 1), got = 0;
        size_t i, n;
        bw_clear(&w);
        cr_assert_eq(bw_put_uvarint(&w, v), BW_OK);
        n = bw_len(&w);
        cr_expect_eq(n, (size_t)(shift / 7 + 1), "length for bit %d", shift);
        for (i = 0; i < n; i++) {
            got |= (uint64_t)(bw_data(&w)[i] & 0x7f) << (7 * i);
            cr_expect_eq((bw_data(&w)[i] & 0x80) != 0, i + 1 < n);
        }
        cr_expect_eq(got, v);
    }
    bw_release(&w);
}

Test(encoding, strings_and_writes)
{
    bw_writer w = BW_WRITER_INIT;
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    cr_assert_eq(bw_puts(&w, ""), BW_OK);
    cr_assert_eq(bw_write(&w, ", ", 2), BW_OK);
    cr_assert_eq(bw_write(&w, "world\0!", 7), BW_OK);
    EXPECT_BYTES(&w, 'h', 'e', 'l', 'l', 'o', ',', ' ', 'w', 'o', 'r', 'l', 'd', 0, '!');
    bw_release(&w);
}

Test(encoding, a_mixed_message_crossing_growth)
{
    /* Every put must also be right when it lands on the grow path. */
    bw_writer w = BW_WRITER_INIT;
    int i;
    for (i = 0; i < 1000; i++) {
        bw_put_u8(&w, 0xaa);
        bw_put_u16be(&w, (uint16_t)i);
        bw_put_u32le(&w, (uint32_t)i * 7u);
        bw_put_i64be(&w, -(int64_t)i);
        bw_put_svarint(&w, -(int64_t)i * 1000);
        bw_put_f32le(&w, (float)i);
    }
    cr_assert_eq(bw_error(&w), BW_OK);
    {
        const unsigned char *p = bw_data(&w);
        for (i = 0; i < 1000; i++) {
            uint32_t u32;
            uint64_t zz = 0;
            float f;
            int s = 0;
            cr_assert_eq(*p++, 0xaa);
            cr_assert_eq((p[0] << 8) | p[1], i);
            p += 2;
            u32 = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            cr_assert_eq(u32, (uint32_t)i * 7u);
            p += 4;
            {
                uint64_t u = 0;
                int k;
                for (k = 0; k < 8; k++) u = (u << 8) | p[k];
                cr_assert_eq((int64_t)u, -(int64_t)i);
                p += 8;
            }
            do { zz |= (uint64_t)(*p & 0x7f) << s; s += 7; } while (*p++ & 0x80);
            cr_assert_eq((int64_t)(zz >> 1) ^ -(int64_t)(zz & 1), -(int64_t)i * 1000);
            u32 = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            memcpy(&f, &u32, 4);
            cr_assert_eq(f, (float)i);
            p += 4;
        }
        cr_assert_eq((size_t)(p - bw_data(&w)), bw_len(&w));
    }
    bw_release(&w);
}
