/* SPDX-License-Identifier: MIT */
/* consumer.c - a small user of the public API, self-checking: it builds a
 * few bytes with typed writes, printf and a span, compares them with the
 * bytes expected, and exercises a private pool and detach.
 *
 * Built as C (declarations only; implementation from impl.c or from the
 * installed library) and, through consumer.cpp, as C++. So it is written in
 * the common subset: explicit casts, no designated initializers. */
#include "bufwriter.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define EXPECT(cond) \
    do { if (!(cond)) { fprintf(stderr, "consumer: %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

int main(void)
{
    static const unsigned char want[] = {
        0x2a,                                 /* u8 42 */
        0x34, 0x12,                           /* u16le 0x1234 */
        0x12, 0x34, 0x56, 0x78,               /* u32be */
        0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* i64le -2 */
        0x00, 0x00, 0xc0, 0x3f,               /* f32le 1.5 */
        0xac, 0x02,                           /* uvarint 300 */
        0x03,                                 /* svarint -2 */
        'i', 'd', '=', '7',                   /* printf */
        'h', 'i',                             /* puts */
        'x', 'y', 'z',                        /* span */
    };
    bw_writer w = BW_WRITER_INIT;
    bw_pool *pool = NULL;
    bw_pool_stats st;
    size_t avail = 0, len = 0, cap = 0;
    unsigned char *span;
    void *block;
    int i;

    EXPECT(strcmp(bw_version(), BW_VERSION_STRING) == 0);
    EXPECT(bw_pool_create(&pool, NULL) == BW_OK);
    EXPECT(bw_init(&w, pool, 0) == BW_OK);
    bw_put_u8(&w, 42);
    bw_put_u16le(&w, 0x1234);
    bw_put_u32be(&w, 0x12345678u);
    bw_put_i64le(&w, -2);
    bw_put_f32le(&w, 1.5f);
    bw_put_uvarint(&w, 300);
    bw_put_svarint(&w, -2);
    bw_printf(&w, "id=%d", 7);
    bw_puts(&w, "hi");
    span = (unsigned char *)bw_get_span(&w, 3, &avail);
    EXPECT(span != NULL && avail >= 3);
    if (span != NULL) memcpy(span, "xyz", 3);
    bw_advance(&w, 3);
    EXPECT(bw_error(&w) == BW_OK);
    EXPECT(bw_len(&w) == sizeof want);
    EXPECT(bw_len(&w) == sizeof want && memcmp(bw_data(&w), want, sizeof want) == 0);

    /* grow well past the first block, then detach and return it */
    for (i = 0; i < 10000; i++) bw_put_u32le(&w, (uint32_t)i);
    EXPECT(bw_error(&w) == BW_OK && bw_len(&w) == sizeof want + 40000);
    block = bw_detach(&w, &len, &cap);
    EXPECT(block != NULL && len == sizeof want + 40000 && cap >= len);
    EXPECT(bw_pool_return(bw_writer_pool(&w), block, cap) == BW_OK);
    EXPECT(bw_len(&w) == 0 && bw_capacity(&w) == 0);

    /* errors: sticky, with a message */
    EXPECT(bw_advance(&w, 1) == BW_EINVAL && bw_error(&w) == BW_EINVAL);
    EXPECT(bw_put_u8(&w, 1) == BW_EINVAL);
    EXPECT(strlen(bw_strerror(BW_ENOMEM)) > 0);
    bw_release(&w);
    EXPECT(bw_error(&w) == BW_OK);

    bw_pool_get_stats(pool, &st);
    EXPECT(st.rents >= 1 && st.outstanding_bytes == 0);
    bw_pool_destroy(pool);

    /* the shared pool, through the static initializer */
    {
        bw_writer s = BW_WRITER_INIT;
        bw_printf(&s, "%s-%u", "shared", 1u);
        EXPECT(bw_len(&s) == 8 && memcmp(bw_data(&s), "shared-1", 8) == 0);
        EXPECT(bw_writer_pool(&s) == bw_pool_shared());
        bw_release(&s);
    }

    if (failures == 0) printf("consumer: ok (bufwriter %s)\n", bw_version());
    return failures == 0 ? 0 : 1;
}
