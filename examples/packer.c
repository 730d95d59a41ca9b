/* SPDX-License-Identifier: MIT */
/* packer.c - a MessagePack packer's inner loop (integers and strings) on
 * bufwriter's cursor: the shape of msgpack-c's packer, written for
 * bufwriter.
 *
 * A packer knows an encoding's worst case (9 bytes for any integer, 5 +
 * the length for a string header) before it knows the length. It asks
 * bw_try_span for the worst case: when that much is free now, it encodes
 * straight into the span and commits with bw_advance_to; when not, it
 * writes the exact bytes with bw_put_*, which make room (or, in a fixed
 * buffer, fail only if the value's own bytes do not fit). No span is ever
 * asked for more than is written, so a fixed writer never fails on a value
 * that fits, and a segmented writer never skips the rest of a block.
 *
 * Each message starts in a buffer on the stack (bw_set_first_buffer), so a
 * short message allocates nothing; a long one moves to the pool. One
 * writer serves every message: bw_release between them.
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/packer.c -pthread -o packer
 * or against the installed library:
 *   cc -std=c11 examples/packer.c $(pkg-config --cflags --libs bufwriter) -o packer
 *
 * Run:  ./packer     (prints each message in hex)
 */
#include "bufwriter.h"

#include <stdio.h>
#include <string.h>

/* Encodings (MessagePack): the smallest that holds the value. */
static unsigned char *enc_uint(unsigned char *p, uint64_t v)
{
    if (v < 0x80) return bw_enc_u8(p, (uint8_t)v);                       /* fixint */
    if (v <= UINT8_MAX) return bw_enc_u8(bw_enc_u8(p, 0xcc), (uint8_t)v);
    if (v <= UINT16_MAX) return bw_enc_u16be(bw_enc_u8(p, 0xcd), (uint16_t)v);
    if (v <= UINT32_MAX) return bw_enc_u32be(bw_enc_u8(p, 0xce), (uint32_t)v);
    return bw_enc_u64be(bw_enc_u8(p, 0xcf), v);
}

static unsigned char *enc_int(unsigned char *p, int64_t v)
{
    if (v >= 0) return enc_uint(p, (uint64_t)v);
    if (v >= -32) return bw_enc_u8(p, (uint8_t)(int8_t)v);               /* negative fixint */
    if (v >= INT8_MIN) return bw_enc_u8(bw_enc_u8(p, 0xd0), (uint8_t)(int8_t)v);
    if (v >= INT16_MIN) return bw_enc_i16be(bw_enc_u8(p, 0xd1), (int16_t)v);
    if (v >= INT32_MIN) return bw_enc_i32be(bw_enc_u8(p, 0xd2), (int32_t)v);
    return bw_enc_i64be(bw_enc_u8(p, 0xd3), v);
}

static unsigned char *enc_str_header(unsigned char *p, uint32_t n)
{
    if (n < 32) return bw_enc_u8(p, (uint8_t)(0xa0 | n));                /* fixstr */
    if (n <= UINT8_MAX) return bw_enc_u8(bw_enc_u8(p, 0xd9), (uint8_t)n);
    if (n <= UINT16_MAX) return bw_enc_u16be(bw_enc_u8(p, 0xda), (uint16_t)n);
    return bw_enc_u32be(bw_enc_u8(p, 0xdb), n);
}

/* The worst case free: encode in place. Else the exact bytes, formatted on
 * the stack and written as one call (all or nothing). */
static int pack_int(bw_writer *w, int64_t v)
{
    unsigned char b[9], *p = (unsigned char *)bw_try_span(w, sizeof b);
    if (p != NULL) return bw_advance_to(w, enc_int(p, v));
    return bw_write(w, b, (size_t)(enc_int(b, v) - b));
}

static int pack_str(bw_writer *w, const char *s)
{
    size_t n = strlen(s);
    unsigned char b[5], *p;
    int rc;
    if (n > UINT32_MAX) return BW_EOVERFLOW;
    p = (unsigned char *)bw_try_span(w, sizeof b + n);
    if (p != NULL) return bw_advance_to(w, bw_enc_bytes(enc_str_header(p, (uint32_t)n), s, n));
    {
        uint64_t at = bw_tell(w); /* two writes: undone together on failure */
        rc = bw_write(w, b, (size_t)(enc_str_header(b, (uint32_t)n) - b));
        if (rc == BW_OK) rc = bw_write(w, s, n);
        if (rc != BW_OK) (void)bw_truncate(w, at);
    }
    return rc;
}

static int pack_array_header(bw_writer *w, uint32_t n)
{
    unsigned char b[5], *e = b;
    if (n < 16) e = bw_enc_u8(e, (uint8_t)(0x90 | n));                    /* fixarray */
    else if (n <= UINT16_MAX) e = bw_enc_u16be(bw_enc_u8(e, 0xdc), (uint16_t)n);
    else e = bw_enc_u32be(bw_enc_u8(e, 0xdd), n);
    return bw_write(w, b, (size_t)(e - b));
}

static void print_hex(const char *what, const unsigned char *p, size_t n)
{
    size_t i;
    printf("%-8s %3zu bytes:", what, n);
    for (i = 0; i < n; i++) printf(" %02x", p[i]);
    printf("\n");
}

int main(void)
{
    static const int64_t ints[] = {0, 127, 128, 65535, -1, -33, -129, 4294967296LL, INT64_MIN};
    unsigned char stack[64];
    unsigned char fixed[12];
    bw_writer w = BW_WRITER_INIT;
    size_t i;
    int rc;

    /* Message 1: small, in the stack buffer. */
    bw_set_first_buffer(&w, stack, sizeof stack);
    pack_array_header(&w, 3);
    pack_str(&w, "id");
    pack_int(&w, 42);
    pack_str(&w, "ok");
    if ((rc = bw_error(&w)) != BW_OK) goto fail;
    print_hex(bw_data(&w) == stack ? "stack" : "pooled", bw_data(&w), bw_len(&w));
    bw_release(&w);

    /* Message 2: every integer width; outgrows the stack buffer. */
    bw_set_first_buffer(&w, stack, sizeof stack);
    pack_array_header(&w, (uint32_t)(sizeof ints / sizeof ints[0]) * 2);
    for (i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        pack_int(&w, ints[i]);
        pack_str(&w, "a string of thirty-two bytes....");
    }
    if ((rc = bw_error(&w)) != BW_OK) goto fail;
    print_hex(bw_data(&w) == stack ? "stack" : "pooled", bw_data(&w), bw_len(&w));
    bw_release(&w);

    /* Message 3: a fixed buffer filled to the last byte. 65535 takes 3
     * bytes, its worst case 9: the exact way fits it. */
    bw_init_fixed(&w, fixed, sizeof fixed);
    pack_str(&w, "fixed!");                            /* 7 bytes */
    pack_int(&w, 65535);                               /* 3 bytes: 10 */
    pack_int(&w, -1);                                  /* 1 byte: 11 */
    pack_int(&w, 7);                                   /* 1 byte: 12, full */
    if ((rc = bw_error(&w)) != BW_OK) goto fail;
    print_hex("fixed", bw_data(&w), bw_len(&w));
    rc = pack_int(&w, 1);                              /* no room: refused */
    printf("one more: %s\n", bw_strerror(rc));
    bw_release(&w);
    return rc == BW_EFULL ? 0 : 1;

fail:
    fprintf(stderr, "packer: %s\n", bw_strerror(rc));
    bw_release(&w);
    return 1;
}
