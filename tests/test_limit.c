/* SPDX-License-Identifier: MIT */
/* test_limit.c - bw_set_limit and BW_ELIMIT: no call takes bw_tell past a
 * writer's size limit, in every mode, and a refused call writes nothing. */
#include "harness.h"

#include <errno.h>
#include <stdio.h>

TestSuite(limit);

static void done(void *ctx, const void *data, size_t n)
{
    (void)data;
    (void)n;
    ++*(int *)ctx;
}

Test(limit, strerror_names_it)
{
    cr_expect_str_eq(bw_strerror(BW_ELIMIT), "size limit reached (bw_set_limit)");
    cr_expect_eq(bw_set_limit(NULL, 1), BW_EINVAL);
}

/* One byte at a time through the inline put: exactly `limit` bytes are
 * taken whatever block moves, links, sends and consumes happen on the way
 * (the fast path's lim is clamped after each), then BW_ELIMIT. */
Test(limit, inline_puts_stop_exactly_at_the_limit_in_every_mode)
{
    static const uint64_t limits[] = {1, 63, 64, 65, 511, 512, 513, 5000};
    size_t li;
    int m;
    FOR_EACH_MODE(m) {
        for (li = 0; li < sizeof limits / sizeof limits[0]; li++) {
            harness h;
            ref r = {0};
            uint64_t i;
            int rc = BW_OK;
            h_open(&h, m);
            cr_assert_eq(bw_set_limit(&h.w, limits[li]), BW_OK);
            for (i = 0; i < limits[li] + 3 && rc == BW_OK; i++) {
                unsigned char c = pat((size_t)i, 7);
                rc = bw_put_u8(&h.w, c);
                if (rc == BW_OK) ref_add(&r, &c, 1);
            }
            cr_expect_eq(rc, BW_ELIMIT, "%s, limit %" PRIu64, mode_name[m], limits[li]);
            cr_expect_eq(bw_error(&h.w), BW_ELIMIT);
            cr_expect_eq(bw_tell(&h.w), limits[li], "%s", mode_name[m]);
            h_close_expecting(&h, &r, mode_name[m]);
        }
    }
}

/* Every call that adds bytes, with one byte too few under the limit:
 * BW_ELIMIT, recorded, nothing written; and each succeeds at an exact fit. */
Test(limit, every_call_that_adds_bytes_is_refused_past_the_limit)
{
    int m;
    FOR_EACH_MODE(m) {
        int calls;
        for (calls = 0; calls < 12; calls++) {
            harness h;
            bw_writer other = BW_WRITER_INIT;
            static const unsigned char four[4] = {1, 2, 3, 4};
            unsigned char hx[2] = {0xab, 0xcd};
            size_t avail = 99;
            int ndone = 0, rc, fit;
            for (fit = 0; fit < 2; fit++) {
                uint64_t tell;
                h_open_holding(&h, m, "head");
                tell = bw_tell(&h.w);
                /* 4 bytes asked: the limit leaves 3, or (fit) 4 */
                cr_assert_eq(bw_set_limit(&h.w, tell + 3 + (uint64_t)fit), BW_OK);
                cr_assert_eq(bw_init_chain(&other, h.p), BW_OK);
                cr_assert_eq(bw_write(&other, four, 4), BW_OK);
                switch (calls) {
                case 0: rc = bw_write(&h.w, four, 4); break;
                case 1: rc = bw_put_u32le(&h.w, 7); break;
                case 2: rc = bw_puts(&h.w, "abcd"); break;
                case 3: rc = bw_printf(&h.w, "%d", 1234); break;
                case 4: rc = bw_put_hex(&h.w, hx, 2); break;
                case 5: rc = bw_put_dec_u64(&h.w, 1234); break;
                case 6: rc = bw_reserve(&h.w, 4); break;
                case 7: rc = bw_get_span(&h.w, 4, &avail) ? BW_OK : bw_error(&h.w); break;
                case 8: rc = bw_append_ref(&h.w, four, 4, done, &ndone); break;
                case 9: rc = bw_append_writer(&h.w, &other); break;
                case 10: rc = bw_move(&h.w, &other); break;
                default: rc = bw_put_uvarint(&h.w, 1u << 21); break; /* 4 bytes */
                }
                if (fit) {
                    cr_expect_eq(rc, BW_OK, "%s, call %d at an exact fit", mode_name[m], calls);
                } else {
                    cr_expect_eq(rc, BW_ELIMIT, "%s, call %d", mode_name[m], calls);
                    cr_expect_eq(bw_error(&h.w), BW_ELIMIT);
                    cr_expect_eq(bw_tell(&h.w), tell, "%s, call %d", mode_name[m], calls);
                    cr_expect_eq(bw_len(&other), 4, "a refused move leaves src");
                    cr_expect_eq(ndone, 0, "a refused reference is not done");
                    if (calls == 7) cr_expect_eq(avail, 0);
                }
                bw_release(&other);
                {
                    ref r = {0};
                    ref_str(&r, "head");
                    if (fit && calls < 6) {
                        static const char *const want[] = {"\1\2\3\4", "\7\0\0\0", "abcd",
                                                           "1234", "abcd", "1234"};
                        ref_add(&r, want[calls], 4);
                    }
                    if (fit && (calls == 8 || calls == 9 || calls == 10)) ref_add(&r, four, 4);
                    if (fit && calls == 11) ref_add(&r, "\x80\x80\x80\x01", 4);
                    if (fit && calls == 6) cr_expect_geq(bw_free_capacity(&h.w), 4);
                    if (fit && calls == 7) cr_expect_eq(avail, 4);
                    h_close_expecting(&h, &r, mode_name[m]);
                }
            }
        }
    }
}

/* A span's room, bw_free_capacity and bw_capacity end at the limit; an
 * advance past it is BW_ELIMIT, up to it BW_OK. */
Test(limit, spans_end_at_the_limit)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t avail = 0;
        unsigned char *p;
        h_open_holding(&h, m, "ab");
        cr_assert_eq(bw_set_limit(&h.w, 10), BW_OK);
        p = (unsigned char *)bw_get_span(&h.w, 1, &avail);
        cr_assert_not_null(p, "%s", mode_name[m]);
        cr_expect_eq(avail, 8, "%s", mode_name[m]);
        cr_expect_eq(bw_free_capacity(&h.w), 8, "%s", mode_name[m]);
        cr_expect_eq(bw_capacity(&h.w), 10, "%s", mode_name[m]);
        memset(p, 'x', 8);
        cr_expect_eq(bw_advance_to(&h.w, p + 9), BW_ELIMIT, "%s", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 2);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_advance(&h.w, 9), BW_ELIMIT, "%s", mode_name[m]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_advance_to(&h.w, p + 8), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 10);
        cr_expect_eq(bw_free_capacity(&h.w), 0);
        cr_expect_null(bw_get_span(&h.w, 1, &avail));
        cr_expect_eq(bw_error(&h.w), BW_ELIMIT);
        h_close(&h);
    }
}

/* A limit below bw_tell keeps what is held and refuses every further byte,
 * recording nothing at the call; truncating under it, or a higher limit,
 * makes room again; 0 takes the limit away. */
Test(limit, a_limit_below_tell_refuses_until_truncated)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open_holding(&h, m, "0123456789");
        cr_assert_eq(bw_set_limit(&h.w, 5), BW_OK);
        cr_expect_eq(bw_error(&h.w), BW_OK);
        cr_expect_eq(bw_len(&h.w), 10);
        cr_expect_eq(bw_free_capacity(&h.w), 0);
        cr_expect_eq(bw_reserve(&h.w, 0), BW_OK, "nothing asked, nothing refused");
        cr_expect_eq(bw_write(&h.w, "", 0), BW_OK);
        cr_expect_eq(bw_putc(&h.w, 'x'), BW_ELIMIT, "%s", mode_name[m]);
        cr_expect_eq(bw_truncate(&h.w, 4), BW_OK);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_putc(&h.w, 'y'), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_putc(&h.w, 'z'), BW_ELIMIT, "%s", mode_name[m]);
        bw_clear_error(&h.w);
        cr_assert_eq(bw_set_limit(&h.w, 0), BW_OK);
        cr_expect_eq(bw_puts(&h.w, "no limit"), BW_OK, "%s", mode_name[m]);
        h_close_expecting_str(&h, "0123yno limit", mode_name[m]);
    }
}

/* The limit is a setting like the mode: bw_clear and bw_release keep it;
 * release puts positions back at 0, so the next job has all of it. */
Test(limit, survives_clear_and_release)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open(&h, m);
        cr_assert_eq(bw_set_limit(&h.w, 6), BW_OK);
        cr_expect_eq(bw_puts(&h.w, "abcdef"), BW_OK);
        cr_expect_eq(bw_putc(&h.w, 'g'), BW_ELIMIT, "%s", mode_name[m]);
        bw_release(&h.w);
        cr_expect_eq(bw_tell(&h.w), 0);
        cr_expect_eq(bw_puts(&h.w, "abcdefg"), BW_ELIMIT, "%s after release", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 0);
        bw_clear(&h.w);
        cr_expect_eq(bw_puts(&h.w, "abcdef"), BW_OK, "%s after clear", mode_name[m]);
        cr_expect_eq(bw_putc(&h.w, 'g'), BW_ELIMIT, "%s after clear", mode_name[m]);
        h_close_expecting_str(&h, "abcdef", mode_name[m]);
    }
}

/* Sent bytes count: a streaming writer's limit bounds all it ever sends. */
Test(limit, a_streaming_limit_counts_sent_bytes)
{
    harness h;
    size_t i;
    int rc = BW_OK;
    h_open(&h, M_SINK); /* a 64-byte buffer */
    cr_assert_eq(bw_set_limit(&h.w, 1000), BW_OK);
    for (i = 0; i < 200 && rc == BW_OK; i++) rc = bw_write(&h.w, pattern() + 10 * i, 10);
    cr_expect_eq(rc, BW_ELIMIT);
    cr_expect_eq(i, 101);
    cr_expect_eq(bw_tell(&h.w), 1000);
    bw_clear_error(&h.w);
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_eq(h.s.out.len, 1000);
    cr_expect(memcmp(h.s.out.d, pattern(), 1000) == 0);
    /* larger than the buffer: refused before any of it is sent */
    cr_assert_eq(bw_set_limit(&h.w, 1100), BW_OK);
    cr_expect_eq(bw_write(&h.w, pattern(), 101), BW_ELIMIT);
    cr_expect_eq(h.s.out.len, 1000);
    cr_expect_eq(bw_tell(&h.w), 1000);
    h_close(&h);
}

/* Held bytes that move down over consumed room change where the limit
 * falls in the block: the inline path must still stop exactly at it. */
Test(limit, bytes_moved_down_over_consumed_room_keep_the_limit)
{
    static const int modes[] = {M_CONTIG, M_BUFFER, M_FIXED};
    size_t k;
    for (k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        int m = modes[k];
        harness h;
        ref r = {0};
        int rc = BW_OK;
        size_t i;
        h_open_ex(&h, m, m == M_BUFFER ? IBUF_SIZE : 128, 0, 0);
        cr_assert_eq(bw_set_limit(&h.w, 160), BW_OK); /* the fixed 128 holds 110 then */
        cr_assert_eq(bw_write(&h.w, pattern(), 60), BW_OK);
        cr_assert_eq(bw_consume(&h.w, 50), BW_OK);
        ref_add(&r, pattern() + 50, 10);
        for (i = 60; i < 300 && rc == BW_OK; i++) {
            rc = bw_put_u8(&h.w, pattern()[i]);
            if (rc == BW_OK) ref_add(&r, pattern() + i, 1);
        }
        cr_expect_eq(rc, BW_ELIMIT, "%s", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), 160, "%s", mode_name[m]);
        h_close_expecting(&h, &r, mode_name[m]);
    }
}

#ifdef BW_HAVE_FILE_ADAPTER
/* Through bw_fopen the FILE hands its bytes over in pieces: the piece that
 * would pass the limit fails (EFBIG for the FILE) before the writer grows
 * for it, so a contiguous writer keeps its block. */
Test(limit, a_file_write_past_the_limit_fails_before_the_writer_grows)
{
    harness h;
    FILE *f;
    const unsigned char *before;
    h_open(&h, M_CONTIG);
    cr_assert_eq(bw_puts(&h.w, "x"), BW_OK);
    before = bw_data(&h.w);
    cr_assert_eq(bw_set_limit(&h.w, 100), BW_OK);
    f = bw_fopen(&h.w);
    cr_assert_not_null(f);
    errno = 0;
    if (fwrite(pattern(), 1, 20000, f) == 20000) { /* buffered: fails at fclose */
        cr_expect_neq(fclose(f), 0);
        cr_expect_eq(errno, EFBIG);
    } else {
        cr_expect_eq(errno, EFBIG);
        fclose(f);
    }
    cr_expect_eq(bw_error(&h.w), BW_ELIMIT);
    cr_expect_leq(bw_tell(&h.w), 100);
    cr_expect_eq(bw_data(&h.w), before, "no move for a piece that is refused");
    h_close(&h);
}
#endif
