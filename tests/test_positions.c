/* SPDX-License-Identifier: MIT */
/* test_positions.c - positions, in every mode (bufwriter.h, section 8):
 * tell, patch and truncate; consume; detach. Every test of bw_patch is
 * here: every width, after growth, out of range, over references, and
 * with truncate rolling a frame back while an error is recorded.
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

/* --- Positions, patch, truncate ------------------------------------------ */

static void patch_by_position_each(harness *h, ref *r)
{
    uint64_t at;
    size_t body = h->mode == M_SINK ? 20 : 5000;
    at = bw_tell(&h->w);
    cr_expect_eq(at, 7);
    cr_assert_eq(bw_put_u32le(&h->w, 0), BW_OK);
    ref_add(r, "\x00\x00\x00\x00", 4);
    put_pattern_ref(h, r, 100, body);
    cr_expect_eq(bw_patch_u32le(&h->w, at, (uint32_t)body), BW_OK, "%s", mode_name[h->mode]);
    r->d[7] = (unsigned char)body;
    r->d[8] = (unsigned char)(body >> 8);
    cr_expect_eq(bw_patch_u16be(&h->w, 0, 0xBEEF), BW_OK);
    r->d[0] = 0xBE;
    r->d[1] = 0xEF;
    cr_expect_eq(bw_patch(&h->w, bw_tell(&h->w) - 3, "xyz", 3), BW_OK);
    memcpy(r->d + r->len - 3, "xyz", 3);
    h_close_expecting(h, r, "patched");
}

Test(positions, patch_by_position_in_every_mode)
{
    each_mode_pattern(7, patch_by_position_each);
}

Test(positions, segmented_patch_across_a_block_boundary)
{
    harness h;
    ref r = {0};
    struct iovec iov[2];
    h_open_two_blocks(&h, &r, iov);
    cr_expect_eq(bw_patch(&h.w, iov[0].iov_len - 2, "WXYZ", 4), BW_OK);
    memcpy(r.d + iov[0].iov_len - 2, "WXYZ", 4);
    h_close_expecting(&h, &r, "patch across blocks");
}

Test(positions, patch_out_of_range_is_einval_recorded_nothing_changed)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open_holding(&h, m, "0123456789");
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

Test(positions, patch_source_may_overlap_the_target)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open_holding(&h, m, "abcdefgh");
        cr_assert_not_null(bw_data(&h.w));
        cr_expect_eq(bw_patch(&h.w, 2, bw_data(&h.w), 6), BW_OK, "%s", mode_name[m]);
        expect_output(&h, "ababcdef", 8, "overlapping patch forward");
        cr_expect_eq(bw_patch(&h.w, 0, bw_data(&h.w) + 1, 7), BW_OK, "%s", mode_name[m]);
        expect_output(&h, "babcdeff", 8, "overlapping patch backward");
        h_close(&h);
    }
}

Test(positions, streaming_patch_and_truncate_of_sent_bytes_are_einval)
{
    harness h;
    h_open_pattern(&h, M_SINK, 50, NULL);
    put_pattern(&h, 50, 30);
    cr_assert_eq(h.s.out.len, 50, "the first 50 were sent to make room");
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
    cr_expect_eq(h.s.out.len, 60);
    cr_expect_eq(h.s.out.d[50], 'Z');
    cr_expect(memcmp(h.s.out.d + 51, pattern() + 51, 9) == 0);
    h_close(&h);
}

static void truncate_by_position_each(harness *h, ref *r)
{
    uint64_t mark;
    size_t more = h->mode == M_SINK ? 20 : 9000;
    mark = bw_tell(&h->w);
    put_pattern(h, 10, more);
    cr_expect_eq(bw_truncate(&h->w, mark), BW_OK, "%s", mode_name[h->mode]);
    cr_expect_eq(bw_tell(&h->w), 10);
    cr_expect_eq(bw_len(&h->w), 10);
    expect_output(h, r->d, r->len, "truncated");
    cr_expect_eq(bw_truncate(&h->w, 10), BW_OK, "%s: at tell", mode_name[h->mode]);
    cr_expect_eq(bw_truncate(&h->w, 11), BW_EINVAL, "%s: beyond tell", mode_name[h->mode]);
    cr_expect_eq(bw_error(&h->w), BW_EINVAL, "recorded");
    expect_output(h, r->d, r->len, "nothing changed");
    bw_clear_error(&h->w);
    cr_expect_eq(bw_consume(&h->w, 4), BW_OK);
    cr_expect_eq(bw_truncate(&h->w, 3), BW_EINVAL, "%s: below base", mode_name[h->mode]);
    bw_clear_error(&h->w);
    cr_expect_eq(bw_truncate(&h->w, 4), BW_OK, "%s: at base", mode_name[h->mode]);
    cr_expect_eq(bw_len(&h->w), 0);
    cr_expect_eq(bw_tell(&h->w), 4);
    cr_expect_eq(bw_puts(&h->w, "end"), BW_OK);
    expect_output(h, "end", 3, "writing after a truncate");
    h_close_ref(h, r);
}

Test(positions, truncate_by_position_in_every_mode)
{
    each_mode_pattern(10, truncate_by_position_each);
}

Test(positions, placeholder_position_survives_consume)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        uint64_t at;
        h_open_holding(&h, m, "xxxx");
        at = bw_tell(&h.w);
        cr_assert_eq(bw_put_u32le(&h.w, 0), BW_OK);
        cr_assert_eq(bw_write(&h.w, "body", 4), BW_OK);
        cr_assert_eq(bw_consume(&h.w, 4), BW_OK);
        cr_expect_eq(bw_patch_u32le(&h.w, at, 4), BW_OK, "%s", mode_name[m]);
        expect_output(&h, "\x04\x00\x00\x00" "body", 8, "length patched by position");
        h_close(&h);
    }
}

static void clear_leaves_tell_each(harness *h, ref *r)
{
    (void)r;
    bw_clear(&h->w);
    cr_expect_eq(bw_tell(&h->w), 0, "%s", mode_name[h->mode]);
    put_pattern(h, 0, 10);
    cr_assert_eq(bw_consume(&h->w, 3), BW_OK);
    bw_clear(&h->w);
    cr_expect_eq(bw_tell(&h->w), 3, "%s: the first dropped byte", mode_name[h->mode]);
    cr_expect_eq(bw_len(&h->w), 0);
    cr_expect_eq(bw_put_u8(&h->w, 'x'), BW_OK);
    cr_expect_eq(bw_tell(&h->w), 4);
    if (h->mode == M_SINK) {
        put_pattern(h, 0, 50);
        put_pattern(h, 0, 30);
        cr_assert_eq(h->s.out.len, 51, "'x' and the 50 were sent to make room");
        cr_expect_eq(bw_tell(&h->w), 84);
        bw_clear(&h->w);
        cr_expect_eq(bw_tell(&h->w), 54, "streaming: the first dropped byte follows the sent ones");
    }
    h_close(h);
}

Test(positions, clear_leaves_tell_at_the_first_dropped_byte)
{
    each_mode_pattern(10, clear_leaves_tell_each);
}

Test(positions, init_release_detach_restart_positions)
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

Test(positions, consume_moves_the_start_without_copying)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        const unsigned char *d;
        long calls;
        h_open_holding(&h, m, "abcdef");
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

Test(positions, segmented_consume_returns_emptied_blocks_at_once)
{
    harness h;
    ref r = {0};
    struct iovec iov[3];
    bw_pool_stats before, after;
    h_open_chain(&h, 3, &r);
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
    h_close_ref(&h, &r);
}

Test(positions, fixed_moves_held_bytes_down_before_efull)
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

Test(positions, contiguous_consume_then_cold_path_keeps_bytes)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        size_t f;
        h_open_pattern(&h, m, 12, NULL);
        cr_assert_eq(bw_consume(&h.w, 10), BW_OK);
        ref_add(&r, pattern() + 10, 2);
        f = bw_free_capacity(&h.w);
        put_pattern_ref(&h, &r, 12, f + 5);
        h_close_expecting(&h, &r, "consume then a cold path");
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

Test(positions, detach_in_every_mode_gives_a_returnable_block)
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
            put_pattern_ref(&h, &r, 50, 30);
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
        h_close_ref(&h, &r);
    }
    bw_set_report_hook(NULL, NULL);
}

Test(positions, detach_of_a_writer_without_storage_is_null)
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

/* ------------------------------------------------------------------------ */
/* Truncate and patch while an error is recorded: rolling a frame back      */
/* ------------------------------------------------------------------------ */

Test(positions, truncate_and_patch_a_fixed_frame_that_did_not_fit)
{
    unsigned char buf[16];
    bw_writer w;
    uint64_t mark;
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_puts(&w, "ok;"), BW_OK);
    mark = bw_tell(&w);
    cr_assert_eq(bw_put_u32le(&w, 0), BW_OK);
    cr_expect_eq(bw_puts(&w, "far too long a body"), BW_EFULL);
    cr_expect_eq(bw_patch_u32le(&w, mark, 0xdeadbeef), BW_OK, "patch works with the error");
    cr_expect_eq(bw_truncate(&w, mark), BW_OK, "truncate works with the error");
    cr_expect_eq(bw_error(&w), BW_EFULL, "and leaves it recorded");
    cr_expect_eq(bw_len(&w), 3);
    /* the fast path must stay closed: lim follows len */
    cr_expect_eq(bw_put_u8(&w, 'x'), BW_EFULL);
    cr_expect_eq(bw_write(&w, "y", 1), BW_EFULL);
    cr_expect_eq(bw_len(&w), 3);
    cr_expect_eq(bw_truncate(&w, 100), BW_EINVAL, "a bad position is still refused");
    cr_expect_eq(bw_error(&w), BW_EFULL, "the first error stays");
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "next"), BW_OK);
    cr_expect(memcmp(buf, "ok;next", 7) == 0);
}

Test(positions, truncate_and_patch_in_every_mode_after_a_failed_call)
{
    int m;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        bw_writer w;
        unsigned char got[4096];
        uint64_t mark;
        size_t n;
        mk(e, &w, m);
        cr_assert_eq(bw_puts(&w, "head"), BW_OK);
        mark = bw_tell(&w);
        cr_assert_eq(bw_puts(&w, "frame"), BW_OK);
        /* a failure every mode records: a bad advance */
        cr_expect_eq(bw_advance(&w, SIZE_MAX), BW_EINVAL);
        cr_expect_eq(bw_patch(&w, mark, "FR", 2), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_truncate(&w, mark + 2), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_put_u8(&w, 'z'), BW_EINVAL, "%s: still refused", mode_name[m]);
        n = produced(e, &w, got);
        cr_expect_eq(n, 6, "%s", mode_name[m]);
        cr_expect(memcmp(got, "headFR", 6) == 0, "%s", mode_name[m]);
        bw_release(&w);
        env_free(e);
    }
}

Test(positions, truncate_and_patch_a_streaming_writer_whose_sink_failed)
{
    env *e = env_new();
    bw_writer w;
    unsigned char b[CLIENT_SINK_BUF];
    uint64_t mark;
    fill(b, sizeof b, 9);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, 200), BW_OK);
    mark = bw_tell(&w);
    cr_assert_eq(bw_write(&w, b, 40), BW_OK);
    sink_fail(&e->sink, SF_ERRNO, EAGAIN);
    cr_expect_eq(bw_write(&w, b, 100), BW_EIO, "no room: sends, which fails");
    cr_expect_eq(bw_len(&w), 240, "the unsent bytes stay held");
    cr_expect_eq(bw_truncate(&w, mark), BW_OK, "a mark among the held bytes");
    cr_expect_eq(bw_patch(&w, 0, "AB", 2), BW_OK);
    cr_expect_eq(bw_error(&w), BW_EIO);
    cr_expect_eq(bw_errno(&w), EAGAIN);
    sink_heal(&e->sink);
    bw_clear_error(&w);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.out.len, 200);
    cr_expect(memcmp(e->sink.out.d, "AB", 2) == 0 && memcmp(e->sink.out.d + 2, b + 2, 198) == 0);
    cr_expect_eq(bw_truncate(&w, 10), BW_EINVAL, "sent bytes are gone");
    bw_release(&w);
    env_free(e);
}

/* ------------------------------------------------------------------------ */
/* bw_patch: every width, after growth, out of range, over references       */
/* ------------------------------------------------------------------------ */

Test(positions, patch_every_width)
{
    bw_writer w = BW_WRITER_INIT;
    static const unsigned char want[] = {
        0xaa, 0x02, 0x01, 0x01, 0x02, 0x04, 0x03, 0x02, 0x01, 0x01, 0x02, 0x03, 0x04,
        8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 'e', 'n', 'd'};
    size_t i;
    for (i = 0; i < sizeof want - 3; i++) bw_put_u8(&w, 0);
    bw_puts(&w, "end");
    cr_expect_eq(bw_patch_u8(&w, 0, 0xaa), BW_OK);
    cr_expect_eq(bw_patch_u16le(&w, 1, 0x0102), BW_OK);
    cr_expect_eq(bw_patch_u16be(&w, 3, 0x0102), BW_OK);
    cr_expect_eq(bw_patch_u32le(&w, 5, 0x01020304), BW_OK);
    cr_expect_eq(bw_patch_u32be(&w, 9, 0x01020304), BW_OK);
    cr_expect_eq(bw_patch_u64le(&w, 13, 0x0102030405060708ull), BW_OK);
    cr_expect_eq(bw_patch_u64be(&w, 21, 0x0102030405060708ull), BW_OK);
    cr_assert_eq(bw_len(&w), sizeof want);
    cr_expect(memcmp(bw_data(&w), want, sizeof want) == 0);
    bw_release(&w);
}

Test(positions, patch_length_prefix_after_growth)
{
    bw_writer w = BW_WRITER_INIT;
    size_t at, i;
    bw_puts(&w, "HDR");
    at = bw_len(&w);
    bw_put_u32le(&w, 0); /* placeholder */
    for (i = 0; i < 100000; i++) bw_put_u8(&w, (uint8_t)i);
    cr_assert_eq(bw_patch_u32le(&w, at, (uint32_t)(bw_len(&w) - at - 4)), BW_OK);
    cr_expect_eq(bw_data(&w)[at], 100000 & 0xff);
    cr_expect_eq(bw_data(&w)[at + 1], (100000 >> 8) & 0xff);
    cr_expect_eq(bw_data(&w)[at + 2], 100000 >> 16);
    cr_expect_eq(bw_data(&w)[at + 3], 0);
    cr_expect(memcmp(bw_data(&w), "HDR", 3) == 0);
    bw_release(&w);
}

Test(positions, patch_at_an_offset_out_of_range_changes_nothing)
{
    size_t bad_offsets[] = {5, 6, 7, 100, SIZE_MAX, SIZE_MAX - 2};
    size_t i;
    for (i = 0; i < sizeof bad_offsets / sizeof bad_offsets[0]; i++) {
        bw_writer w = BW_WRITER_INIT;
        bw_puts(&w, "abcdefgh");
        /* 4 bytes at offset 5 would run past the length (8). */
        cr_expect_eq(bw_patch_u32le(&w, bad_offsets[i], 0xffffffffu), BW_EINVAL,
                     "offset %zu", bad_offsets[i]);
        cr_expect_eq(bw_error(&w), BW_EINVAL);
        cr_expect_eq(bw_len(&w), 8);
        cr_expect(memcmp(bw_data(&w), "abcdefgh", 8) == 0);
        /* in range, it works while the error is recorded, which stays */
        cr_expect_eq(bw_patch_u8(&w, 0, 'z'), BW_OK);
        cr_expect_eq(bw_data(&w)[0], 'z');
        cr_expect_eq(bw_error(&w), BW_EINVAL);
        bw_release(&w);
    }
    {
        bw_writer w = BW_WRITER_INIT;
        bw_puts(&w, "abcd");
        cr_expect_eq(bw_patch(&w, 4, "x", 0), BW_OK, "n = 0 at the end is fine");
        cr_expect_eq(bw_patch(&w, 0, "wxyz", 4), BW_OK, "exactly up to the length");
        cr_expect_eq(bw_patch(&w, 1, NULL, 1), BW_EINVAL);
        cr_expect_eq(bw_patch(NULL, 0, "x", 1), BW_EINVAL);
        cr_expect(memcmp(bw_data(&w), "wxyz", 4) == 0);
        bw_release(&w);
    }
}

Test(positions, patch_copies_a_reference_and_never_writes_the_callers_memory)
{
    env *e = env_new();
    bw_writer w;
    unsigned char r[200], keep[200], got[210];
    donec dc = {0, NULL, 0};
    fill(r, sizeof r, 14);
    memcpy(keep, r, sizeof r);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_puts(&w, "12345"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, "67890"), BW_OK);
    cr_expect_eq(bw_patch(&w, 3, "abcdef", 6), BW_OK, "across the block and the reference");
    cr_expect(memcmp(r, keep, sizeof r) == 0, "the caller's bytes are untouched");
    cr_expect_eq(dc.calls, 1, "the reference is now a copy");
    cr_assert_eq(bw_copy_out(&w, 0, got, 210), BW_OK);
    cr_expect(memcmp(got, "123abcdef", 9) == 0);
    cr_expect(memcmp(got + 9, r + 4, 196) == 0 && memcmp(got + 205, "67890", 5) == 0);
    /* a patch whose source is the referenced memory itself */
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_expect_eq(bw_patch(&w, 0, r, 5), BW_OK);
    cr_expect_eq(dc.calls, 1, "not the patched range");
    cr_expect_eq(bw_patch(&w, 300, r + 10, 20), BW_OK, "into the second, from itself");
    cr_expect_eq(dc.calls, 2);
    cr_assert_eq(bw_copy_out(&w, 290, got, 30), BW_OK);
    cr_expect(memcmp(got, r + 80, 10) == 0 && memcmp(got + 10, r + 10, 20) == 0);
    bw_release(&w);
    cr_expect_eq(dc.calls, 2);
    env_free(e);
}

/* done may reuse the memory at once: scribble over it. */
static void done_scribble(void *ctx, const void *data, size_t n)
{
    on_done(ctx, data, n);
    memset((void *)(uintptr_t)data, '#', n);
}

/* A writer holding one reference and nothing else has contiguous bytes
 * (bw_data is the reference), yet a patch from them must still copy the
 * source first: making the reference a block calls done, and the source
 * is gone after it. And a patch works while an error is recorded, with its
 * own outcome: when copying the reference fails it returns BW_ENOMEM (the
 * recorded code hid the failure), the first error stays, nothing changes. */
Test(positions, patch_into_a_lone_reference)
{
    env *e = env_new();
    bw_writer w;
    unsigned char r[300], keep[300], got[305];
    donec dc = {0, NULL, 0};
    size_t n;
    for (n = 4; n <= 200; n += 196) { /* in the stack buffer, and over it */
        fill(r, sizeof r, 17);
        memcpy(keep, r, sizeof r);
        dc.calls = 0;
        mk(e, &w, M_CHAIN);
        cr_assert_eq(bw_append_ref(&w, r, sizeof r, done_scribble, &dc), BW_OK);
        cr_assert(bw_data(&w) == r, "the reference is all there is");
        cr_expect_eq(bw_patch(&w, 90, r + 7, n), BW_OK);
        cr_expect_eq(dc.calls, 1, "the reference became a block");
        cr_assert_eq(bw_copy_out(&w, 0, got, sizeof r), BW_OK);
        cr_expect(memcmp(got, keep, 90) == 0 && memcmp(got + 90 + n, keep + 90 + n, 210 - n) == 0);
        cr_expect(memcmp(got + 90, keep + 7, n) == 0, "%zu patched bytes: the reference's", n);
        bw_release(&w);
    }
    env_free(e);

    e = env_new(); /* nothing cached: copying the reference must allocate */
    fill(r, sizeof r, 16);
    dc.calls = 0;
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, "tail!"), BW_OK);
    cr_assert_eq(bw_reserve(&w, SIZE_MAX), BW_EOVERFLOW);
    ta_fail_from_next(&e->ta);
    cr_expect_eq(bw_patch(&w, 10, "XY", 2), BW_ENOMEM, "the copy of the reference failed");
    cr_expect_eq(bw_patch(&w, 10, r + 50, 100), BW_ENOMEM, "the copy of the source failed");
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "the first error stays");
    cr_expect_eq(dc.calls, 0, "still a reference");
    cr_assert_eq(bw_copy_out(&w, 0, got, sizeof got), BW_OK);
    cr_expect(memcmp(got, r, sizeof r) == 0 && memcmp(got + sizeof r, "tail!", 5) == 0);
    ta_fail_never(&e->ta);
    cr_expect_eq(bw_patch(&w, 10, "XY", 2), BW_OK, "works once memory is back");
    cr_expect_eq(dc.calls, 1);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW);
    bw_release(&w);
    env_free(e);
}
