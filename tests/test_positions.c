/* SPDX-License-Identifier: MIT */
/* test_positions.c - positions, in every mode (bufwriter.h, section 8):
 * tell, patch and truncate; consume; detach.
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

Test(positions, patch_by_position_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        uint64_t at;
        size_t body = m == M_SINK ? 20 : 5000;
        h_open_pattern(&h, m, 7, &r);
        at = bw_tell(&h.w);
        cr_expect_eq(at, 7);
        cr_assert_eq(bw_put_u32le(&h.w, 0), BW_OK);
        ref_add(&r, "\x00\x00\x00\x00", 4);
        put_pattern_ref(&h, &r, 100, body);
        cr_expect_eq(bw_patch_u32le(&h.w, at, (uint32_t)body), BW_OK, "%s", mode_name[m]);
        r.d[7] = (unsigned char)body;
        r.d[8] = (unsigned char)(body >> 8);
        cr_expect_eq(bw_patch_u16be(&h.w, 0, 0xBEEF), BW_OK);
        r.d[0] = 0xBE;
        r.d[1] = 0xEF;
        cr_expect_eq(bw_patch(&h.w, bw_tell(&h.w) - 3, "xyz", 3), BW_OK);
        memcpy(r.d + r.len - 3, "xyz", 3);
        h_close_expecting(&h, &r, "patched");
    }
}

Test(positions, segmented_patch_across_a_block_boundary)
{
    harness h;
    ref r = {0};
    struct iovec iov[2];
    size_t first;
    h_open_chain(&h, 2, &r);
    cr_assert_geq(bw_iovec(&h.w, iov, 2), 2);
    first = iov[0].iov_len;
    cr_expect_eq(bw_patch(&h.w, first - 2, "WXYZ", 4), BW_OK);
    memcpy(r.d + first - 2, "WXYZ", 4);
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

Test(positions, truncate_by_position_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        uint64_t mark;
        size_t more = m == M_SINK ? 20 : 9000;
        h_open_pattern(&h, m, 10, &r);
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
        h_close_ref(&h, &r);
    }
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

Test(positions, clear_leaves_tell_at_the_first_dropped_byte)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open_pattern(&h, m, 10, NULL);
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
            cr_assert_eq(h.s.out.len, 51, "'x' and the 50 were sent to make room");
            cr_expect_eq(bw_tell(&h.w), 84);
            bw_clear(&h.w);
            cr_expect_eq(bw_tell(&h.w), 54, "streaming: the first dropped byte follows the sent ones");
        }
        h_close(&h);
    }
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
