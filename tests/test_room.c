/* SPDX-License-Identifier: MIT */
/* test_room.c - room and spans, in every mode: capacity is len + free and
 * free capacity needs no cold path; bw_data and spans (bufwriter.h, section
 * 7); span bytes not advanced are not output; segmented block sizes and impossible sizes.
 *
 * Every check runs in each mode the harness opens (harness.h): contiguous
 * (bw_init, and bw_init_buffer over a caller's first buffer), segmented,
 * streaming (a test-owned sink) and fixed (a buffer inside guard bytes). */
#define _GNU_SOURCE 1 /* pipe, fcntl, sigpending, fopencookie-based bw_fopen */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>

/* --- capacity == len + free; free needs no cold path --------------------- */

/* A segmented writer's first piece records (mode_seg.c, bw__pc_more):
 * rented when its bytes first span two pieces, a chunk of them in a 1 KiB
 * class on 32- and 64-bit. */
#define PIECES 1024

Test(room, free_capacity_is_taken_without_cold_path_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t f, i;
        long calls;
        bw_pool_stats before, after;
        const unsigned char *d;
        h_open_pattern(&h, m, 10, NULL);
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

Test(room, consumed_room_is_not_counted_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t cap, fr;
        h_open_pattern(&h, m, 10, NULL);
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

/* --- bw_data and spans --------------------------------------------------- */

Test(room, data_is_null_only_without_storage_or_across_blocks)
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

Test(room, contiguous_with_initial_capacity_has_data_and_no_bytes)
{
    harness h;
    h_open_ex(&h, M_CONTIG, 100, 0, 0);
    cr_expect_eq(bw_capacity(&h.w), 128, "the growth rule's size for 100");
    cr_assert_not_null(bw_data(&h.w));
    cr_expect(bw_get_span(&h.w, 1, NULL) == bw_data(&h.w));
    cr_expect_eq(bw_len(&h.w), 0);
    h_close(&h);
}

Test(room, segmented_data_null_across_blocks_then_back_after_consume)
{
    harness h;
    ref r = {0};
    struct iovec iov[2];
    h_open_two_blocks(&h, &r, iov);
    cr_expect_null(bw_data(&h.w), "two blocks");
    cr_assert_eq(bw_consume(&h.w, iov[0].iov_len), BW_OK);
    cr_expect(bw_data(&h.w) == iov[1].iov_base, "one block left: data is its first byte");
    expect_output(&h, r.d + iov[0].iov_len, r.len - iov[0].iov_len, "after consume");
    h_close_ref(&h, &r);
}

Test(room, span_is_data_plus_len_and_avail_is_free_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        size_t avail = 0;
        unsigned char *s;
        h_open_pattern(&h, m, 10, &r);
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
        h_close_expecting(&h, &r, "span");
    }
}

Test(room, segmented_span_starts_a_new_block_and_skips_the_rest)
{
    harness h;
    size_t f, avail = 0;
    unsigned char *s;
    bw_pool_stats before;
    h_open_holding(&h, M_CHAIN, "0123456789");
    f = bw_free_capacity(&h.w);
    s = (unsigned char *)bw_get_span(&h.w, f, &avail);
    cr_expect(s == bw_data(&h.w) + 10, "a hint that fits stays in the tail block");
    before = h_stats(&h);
    s = (unsigned char *)bw_get_span(&h.w, f + 1, &avail);
    cr_assert_not_null(s);
    cr_expect_eq(h_stats(&h).rents, before.rents + 2, "one new block, and the piece records");
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

/* --- Span bytes not advanced are not output (a 0.1 defect) --------------- */

Test(room, span_bytes_not_advanced_are_not_output_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        unsigned char *s;
        size_t len = 0;
        void *b;
        h_open_holding(&h, m, "ab");
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
        put_pattern_ref(&h, &r, 0, 5000);
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
        h_close_ref(&h, &r);
    }
}

/* --- Segmented block sizes and impossible sizes -------------------------- */

Test(room, segmented_blocks_double_up_to_the_threshold)
{
    harness h;
    bw_pool_stats st;
    size_t out;
    /* Without large retention: with it, blocks past the threshold keep
     * doubling as large blocks (test_jump.c, chain_steady). */
    h_open_ex(&h, M_CHAIN, 0, 16384, BW_POOL_NO_LARGE_RETENTION);
    cr_assert_eq(bw_put_u8(&h.w, 1), BW_OK);
    st = h_stats(&h);
    cr_expect_eq(st.rents, 1);
    cr_expect_eq(st.outstanding_bytes, 4096, "the first block is 4 KiB");
    put_pattern(&h, 0, bw_free_capacity(&h.w));
    cr_expect_eq(h_stats(&h).rents, 1);
    cr_assert_eq(bw_put_u8(&h.w, 2), BW_OK);
    st = h_stats(&h);
    cr_expect_eq(st.rents, 3, "a block and the piece records");
    cr_expect_eq(st.outstanding_bytes, 4096 + 8192 + PIECES,
                 "the second is twice the first; a chunk of piece records");
    put_pattern(&h, 0, bw_free_capacity(&h.w));
    cr_assert_eq(bw_put_u8(&h.w, 3), BW_OK);
    cr_expect_eq(h_stats(&h).outstanding_bytes, 4096 + 8192 + 16384 + PIECES);
    put_pattern(&h, 0, bw_free_capacity(&h.w));
    cr_assert_eq(bw_put_u8(&h.w, 4), BW_OK);
    cr_expect_eq(h_stats(&h).outstanding_bytes, 4096 + 8192 + 16384 + 16384 + PIECES,
                 "at most the threshold");
    /* One request that needs more gets it in one block. */
    out = h_stats(&h).outstanding_bytes;
    cr_expect_eq(bw_reserve(&h.w, 40000), BW_OK);
    cr_expect_geq(bw_free_capacity(&h.w), 40000);
    st = h_stats(&h);
    cr_expect_eq(st.rents, 6, "one block");
    cr_expect_geq(st.outstanding_bytes - out, 40000);
    /* clear keeps one block. */
    bw_clear(&h.w);
    st = h_stats(&h);
    cr_expect_eq(st.returns, 4, "all but one block back");
    cr_expect_gt(bw_capacity(&h.w), 0);
    cr_expect_not_null(bw_data(&h.w));
    cr_expect_eq(bw_put_u8(&h.w, 9), BW_OK);
    cr_expect_eq(h_stats(&h).rents, 6, "writing after clear uses the kept block");
    h_close(&h);
}

Test(room, reserve_makes_free_capacity_at_least_n)
{
    int m;
    static const size_t ns[] = {1, 100, 4000, 5000, 70000};
    FOR_EACH_MODE(m) {
        harness h;
        size_t k;
        if (m == M_FIXED) continue;
        h_open_pattern(&h, m, 10, NULL);
        for (k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            cr_expect_eq(bw_reserve(&h.w, ns[k]), BW_OK, "%s", mode_name[m]);
            cr_expect_geq(bw_free_capacity(&h.w), ns[k], "%s: reserve %zu", mode_name[m],
                          ns[k]);
        }
        expect_output(&h, pattern(), 10, "reserve writes nothing");
        h_close(&h);
    }
}

Test(room, impossible_size_is_one_failed_backing_call_in_every_mode)
{
    int m, op;
    FOR_EACH_MODE(m)
        for (op = 0; op < 3; op++) {
            harness h;
            long calls;
            int rc;
            h_open_holding(&h, m, "abc");
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

Test(room, sizes_beyond_ptrdiff_max_are_eoverflow_without_allocator_call)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        int want = m == M_FIXED ? BW_EFULL : BW_EOVERFLOW;
        h_open_holding(&h, m, "abc");
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
