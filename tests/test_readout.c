/* SPDX-License-Identifier: MIT */
/* test_readout.c - reading out, in every mode (bufwriter.h, section 9): the
 * const read-outs, pullup and cstr, append_writer, the hand-off to free()
 * (bw_detach_malloc), and the edges of release, copy_out, pullup and
 * consume.
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
#  include <sys/resource.h> /* setrlimit: malloc failing in bw_detach_malloc */
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>

/* --- Const read-outs ----------------------------------------------------- */

Test(readout, read_outs_never_record_and_work_with_an_error)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        unsigned char dst[16];
        struct iovec iov[2];
        h_open_holding(&h, m, "0123456789");
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

Test(readout, iovec_returns_the_count_needed_and_never_an_empty_entry)
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
    h_close_ref(&h, &r);
}

/* --- Pullup and cstr ----------------------------------------------------- */

Test(readout, pullup_of_contiguous_bytes_is_data_without_allocation)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        h_open_pattern(&h, m, 40, NULL);
        cr_assert_eq(bw_consume(&h.w, 3), BW_OK);
        calls = h_calls(&h);
        cr_expect(bw_pullup(&h.w) == bw_data(&h.w), "%s", mode_name[m]);
        cr_expect_eq(h_calls(&h), calls, "%s: no allocation", mode_name[m]);
        expect_output(&h, pattern() + 3, 37, "pullup");
        h_close(&h);
    }
}

Test(readout, segmented_pullup_is_one_block_one_copy)
{
    harness h;
    ref r = {0};
    bw_pool_stats before, after;
    const unsigned char *p;
    h_open_chain(&h, 3, &r);
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
    put_pattern_ref(&h, &r, 0, 10);
    h_close_expecting(&h, &r, "writing after pullup");
}

Test(readout, pullup_failure_is_enomem_recorded_nothing_changed)
{
    harness h;
    ref r = {0};
    h_open_chain(&h, 3, &r);
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
    h_close_expecting(&h, &r, "pullup after clear_error");
}

Test(readout, cstr_adds_a_nul_in_every_mode)
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

Test(readout, cstr_of_segmented_bytes_pulls_up)
{
    harness h;
    ref r = {0};
    const char *s;
    size_t i;
    h_open_chain(&h, 3, &r);
    for (i = 0; i < r.len; i++) cr_assert_eq(bw_patch_u8(&h.w, i, 'a' + (unsigned char)(i % 26)), BW_OK);
    s = bw_cstr(&h.w);
    cr_assert_not_null(s);
    cr_expect_eq(strlen(s), r.len);
    cr_expect_eq(s[r.len - 1], 'a' + (char)((r.len - 1) % 26));
    cr_expect_eq(bw_iovec(&h.w, NULL, 0), 1);
    h_close_ref(&h, &r);
}

Test(readout, cstr_in_a_full_fixed_or_streaming_buffer_is_null_and_unrecorded)
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

    h_open_pattern(&h, M_SINK, SINK_BUF, NULL);
    cr_expect_null(bw_cstr(&h.w));
    cr_expect_eq(bw_error(&h.w), BW_OK);
    cr_expect_eq(h.s.calls, 0, "never sends");
    expect_output(&h, pattern(), SINK_BUF, "full streaming buffer");
    h_close(&h);
}

Test(readout, cstr_without_storage_is_a_static_empty_string)
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

/* --- append_writer ------------------------------------------------------- */

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

Test(readout, append_writer_for_every_pair_of_modes)
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

Test(readout, append_writer_to_itself_doubles)
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

Test(readout, src_error_is_ignored_dst_error_refuses)
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

/* --- Release, copy_out, pullup, consume edges ---------------------------- */

Test(readout, release_drops_a_first_buffer_but_keeps_a_fixed_one)
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

Test(readout, copy_out_offset_must_be_within_len_even_for_zero)
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

Test(readout, pullup_and_cstr_are_null_while_an_error_is_recorded)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        long calls;
        h_open_holding(&h, m, "abc");
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

Test(readout, consuming_everything_returns_the_start_to_the_block_start)
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

Test(readout, cstr_of_a_full_fixed_buffer_is_null_until_truncated)
{
    char buf[6];
    bw_writer w;
    cr_assert_eq(bw_init_fixed(&w, buf, 5), BW_OK);
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    cr_expect_null(bw_cstr(&w), "no room for the NUL");
    cr_expect_eq(bw_error(&w), BW_OK, "the writer is not poisoned");
    cr_expect_eq(bw_truncate(&w, 4), BW_OK);
    cr_expect_str_eq(bw_cstr(&w), "hell");
    cr_expect_eq(bw_putc(&w, '!'), BW_OK);
    cr_expect_null(bw_cstr(&w));
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect(memcmp(buf, "hell!", 5) == 0);
    /* a byte to spare, as the example sizes it */
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    cr_expect_str_eq(bw_cstr(&w), "hello");
}

/* bw_init_fixed's example in bufwriter.h, as written there: a 64-byte line
 * takes a text of up to 63 bytes as a C string, and a 64-byte text whole
 * (bw_cstr NULL, nothing recorded); a 65th byte is BW_EFULL and bw_cstr
 * stays NULL while it is recorded. (0.4's example passed sizeof line - 1,
 * which gave NULL for a 63-byte text.) */
Test(readout, the_manuals_fixed_line_holds_63_bytes_as_a_string)
{
    char line[64], text[65];
    bw_writer w;
    memset(text, 'x', sizeof text);
    cr_assert_eq(bw_init_fixed(&w, line, sizeof line), BW_OK);
    cr_assert_eq(bw_puts(&w, "id="), BW_OK);
    cr_assert_eq(bw_write(&w, text, 60), BW_OK);
    cr_assert_not_null(bw_cstr(&w), "a 63-byte text leaves the NUL its byte");
    cr_expect_str_eq(bw_cstr(&w), "id=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    cr_expect_eq(strlen(line), 63);
    cr_assert_eq(bw_putc(&w, 'x'), BW_OK, "a 64-byte text fits the line");
    cr_expect_null(bw_cstr(&w), "but leaves no byte for the NUL");
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(bw_putc(&w, 'x'), BW_EFULL);
    cr_expect_null(bw_cstr(&w), "NULL while BW_EFULL is recorded");
    cr_expect_eq(bw_len(&w), 64);
}

Test(readout, cstr_of_a_full_streaming_buffer_records_nothing_and_sends_nothing)
{
    env *e = env_new();
    bw_writer w;
    unsigned char b[CLIENT_SINK_BUF];
    fill(b, sizeof b, 3);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
    cr_assert_eq(bw_free_capacity(&w), 0);
    cr_expect_null(bw_cstr(&w));
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(e->sink.calls, 0, "bw_cstr never sends");
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.out.len, sizeof b);
    bw_release(&w);
    env_free(e);
}

/* ------------------------------------------------------------------------ */
/* bw_detach_malloc: the held bytes handed to free()                        */
/* ------------------------------------------------------------------------ */

/* Write n pattern bytes in pieces, then detach to free(): the bytes, the
 * NUL, an empty writer that can be used again. */
static void detach_check(env *e, int m, size_t n)
{
    bw_writer w;
    unsigned char *src = (unsigned char *)malloc(n + 1), *got;
    unsigned char *all = (unsigned char *)malloc(n + 1);
    size_t len = 12345, i, sent;
    if (m == M_FIXED && n > FIXED_SIZE) {
        free(src);
        free(all);
        return;
    }
    mk(e, &w, m);
    fill(src, n, (unsigned)n);
    for (i = 0; i < n; i += 100)
        cr_assert_eq(bw_write(&w, src + i, n - i < 100 ? n - i : 100), BW_OK);
    sent = e->sink.out.len;
    got = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(got != NULL, "%s %zu", mode_name[m], n);
    cr_expect_eq(len, n - sent, "%s %zu: the held bytes", mode_name[m], n);
    if (sent != 0) memcpy(all, e->sink.out.d, sent);
    memcpy(all + sent, got, len);
    cr_expect(memcmp(all, src, n) == 0, "%s %zu", mode_name[m], n);
    cr_expect_eq(got[len], 0, "a NUL after them");
    free(got);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_tell(&w), 0, "positions at 0");
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(bw_puts(&w, "again"), BW_OK, "%s: usable after", mode_name[m]);
    got = (unsigned char *)bw_detach_malloc(&w, NULL);
    cr_assert(got != NULL);
    cr_expect_str_eq((char *)got, "again");
    free(got);
    bw_release(&w);
    e->sink.out.len = 0;
    free(src);
    free(all);
}

Test(detach_malloc, every_mode_every_size)
{
    size_t sizes[] = {0, 1, 63, 64, 65, 255, 256, 257, 4000, 4096, 5000, 70000};
    int m;
    size_t i;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) detach_check(e, m, sizes[i]);
        env_free(e); /* the hook pool's blocks are copied, and all came back */
    }
}

Test(detach_malloc, no_copy_from_a_malloc_pool)
{
    bw_pool *p;
    bw_pool_options o;
    bw_writer w;
    const unsigned char *d;
    char *s;
    size_t len;
    unsigned char b[3000];
    uint64_t out0;
    int m, checked_env = env_set("BW_CHECKED");
    fill(b, sizeof b, 4);
    memset(&o, 0, sizeof o);
    /* The default allocator, no thread cache: a block the thread cache
     * keeps is copied up to 64 KiB (detach_fit below). */
    o.flags = BW_POOL_NO_THREAD_CACHE;
    p = mkpool(&o);
    out0 = outstanding(p);
    for (m = 0; m < 3; m++) {
        if (m == 0) cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        if (m == 1) cr_assert_eq(bw_init_chain(&w, p), BW_OK);
        if (m == 2) cr_assert_eq(bw_init_sink(&w, p, 4096, test_sink, NULL), BW_OK);
        cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
        cr_assert_eq(bw_consume(&w, 10), BW_OK); /* the bytes move down in the block */
        d = bw_data(&w);
        s = (char *)bw_detach_malloc(&w, &len);
        cr_assert(s != NULL);
        cr_expect_eq(len, sizeof b - 10);
        cr_expect(memcmp(s, b + 10, len) == 0);
        cr_expect_eq(s[len], 0);
        if (!checked_env) /* BW_CHECKED=1 puts a canary after every block: a copy */
            cr_expect_eq((const unsigned char *)s, d - 10, "mode %d: the block itself", m);
        cr_expect_eq(outstanding(p), out0, "the pool no longer counts it");
        free(s);
        bw_release(&w);
    }
    /* exactly full: no room for the NUL, so a copy */
    cr_assert_eq(bw_init(&w, p, 1024), BW_OK);
    cr_assert_eq(bw_write(&w, b, bw_capacity(&w)), BW_OK);
    d = bw_data(&w);
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_neq((const unsigned char *)s, d);
    cr_expect_eq(len, 1024);
    cr_expect(memcmp(s, b, len) == 0 && s[len] == 0);
    free(s);
    cr_expect_eq(outstanding(p), out0, "the block went back to the pool");
    bw_pool_destroy(p);
}

Test(detach_malloc, copies_where_the_block_is_not_mallocs)
{
    bw_pool *p;
    bw_pool_options o;
    bw_writer w;
    const unsigned char *d;
    char *s;
    unsigned char b[3000];
    fill(b, sizeof b, 5);
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_CHECKED; /* a canary after every block */
    p = mkpool(&o);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
    d = bw_data(&w);
    s = (char *)bw_detach_malloc(&w, NULL);
    cr_assert(s != NULL);
    cr_expect_neq((const unsigned char *)s, d, "checked blocks are copied");
    cr_expect(memcmp(s, b, sizeof b) == 0 && s[sizeof b] == 0);
    free(s);
    bw_pool_destroy(p); /* checked mode reports a block not given back */
}

Test(detach_malloc, segmented_blocks_and_references)
{
    env *e = env_new();
    bw_writer w;
    unsigned char a[5000], r[300], want[5300];
    donec dc = {0, NULL, 0};
    char *s;
    size_t len;
    fill(a, sizeof a, 6);
    fill(r, sizeof r, 7);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_write(&w, a, 2000), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_write(&w, a + 2000, 3000), BW_OK);
    memcpy(want, a, 2000);
    memcpy(want + 2000, r, 300);
    memcpy(want + 2300, a + 2000, 3000);
    cr_expect_eq(dc.calls, 0);
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, sizeof want);
    cr_expect(memcmp(s, want, len) == 0 && s[len] == 0);
    cr_expect_eq(dc.calls, 1, "the reference was copied out: done");
    cr_expect(dc.data == r && dc.n == sizeof r);
    free(s);
    bw_release(&w);
    env_free(e);
}

Test(detach_malloc, null_empty_and_recorded_error)
{
    env *e = env_new();
    bw_writer w;
    size_t len = 99;
    char *s;
    cr_expect_null(bw_detach_malloc(NULL, &len));
    cr_expect_eq(len, 0);
    mk(e, &w, M_CONTIG); /* no storage yet */
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "an empty string, still the caller's to free");
    cr_expect_eq(len, 0);
    cr_expect_eq(s[0], 0);
    free(s);
    cr_assert_eq(bw_puts(&w, "kept"), BW_OK);
    cr_expect_eq(bw_puts(&w, NULL), BW_EINVAL);
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "works while an error is recorded");
    cr_expect_str_eq(s, "kept");
    cr_expect_eq(bw_error(&w), BW_OK, "and clears it");
    free(s);
    bw_release(&w);
    env_free(e);
}

/* malloc itself failing: the address space is capped in this test's own
 * process (not on Windows, which has no RLIMIT_AS, nor where a sanitizer,
 * valgrind or qemu-user owns the address space: qemu's guest heap ignores
 * the guest's RLIMIT_AS). */
#if defined(__SANITIZE_ADDRESS__) || defined(BW_VALGRIND) || defined(BW_TEST_EMULATED) || \
    defined(_WIN32)
#  define NO_RLIMIT_TEST 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define NO_RLIMIT_TEST 1
#  endif
#endif

Test(detach_malloc, malloc_failure_records_enomem_and_changes_nothing)
{
#ifndef NO_RLIMIT_TEST
    bw_writer w;
    struct rlimit old, cap;
    const size_t n = (size_t)64 << 20;
    unsigned char *chunk = (unsigned char *)malloc(1 << 20);
    void *s;
    unsigned long vm_pages = 0;
    FILE *f;
    size_t i;
    int rc;
    cr_assert(chunk != NULL);
    fill(chunk, 1 << 20, 8);
    cr_assert_eq(bw_init_chain(&w, NULL), BW_OK);
    for (i = 0; i < n; i += 1 << 20) cr_assert_eq(bw_write(&w, chunk, 1 << 20), BW_OK);
    f = fopen("/proc/self/statm", "r");
    cr_assert(f != NULL);
    cr_assert_eq(fscanf(f, "%lu", &vm_pages), 1);
    fclose(f);
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    cap = old;
    cap.rlim_cur = (rlim_t)vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)16 << 20);
    cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0);
    s = bw_detach_malloc(&w, NULL);
    rc = bw_error(&w);
    setrlimit(RLIMIT_AS, &old);
    cr_expect_null(s, "64 MiB does not fit 16 MiB of address space");
    free(s);
    cr_expect_eq(rc, BW_ENOMEM);
    cr_expect_eq(bw_len(&w), n, "nothing changed");
    for (i = 0; i < n; i += 1 << 20) {
        unsigned char back[64];
        cr_assert_eq(bw_copy_out(&w, i, back, sizeof back), BW_OK);
        cr_assert(memcmp(back, chunk, sizeof back) == 0);
    }
    bw_release(&w);
    free(chunk);
#endif
}

/* Held bytes in one block (bw_data not NULL), even with an empty
 * block after them, are already contiguous: bw_pullup returns bw_data with no
 * allocation and no copy. */
Test(readout, segmented_pullup_of_bytes_in_one_block_does_not_copy, .timeout = 60)
{
    int how;
    for (how = 0; how < 2; how++) {
        test_alloc ta;
        bw_pool *p = fresh_pool(&ta, 4096, 0);
        bw_writer w;
        const unsigned char *d, *pu;
        size_t avail;
        long allocs;
        cr_assert_eq(bw_init_chain(&w, p), BW_OK);
        cr_assert_eq(bw_puts(&w, "0123456789"), BW_OK);
        if (how == 0) { /* reserve starts a new, empty block */
            cr_assert_eq(bw_reserve(&w, bw_free_capacity(&w) + 1), BW_OK);
        } else {        /* so does a span larger than the tail's room */
            cr_assert_not_null(bw_get_span(&w, bw_free_capacity(&w) + 1, &avail));
            cr_assert_eq(bw_advance(&w, 0), BW_OK);
        }
        held_is(&w, (const unsigned char *)"0123456789", 10, "one block + an empty one");
        d = bw_data(&w);
        cr_assert_not_null(d, "all held bytes lie in one block");
        allocs = atomic_load(&ta.allocs);
        pu = bw_pullup(&w);
        cr_assert_not_null(pu);
        cr_expect(memcmp(pu, "0123456789", 10) == 0);
        cr_expect(pu == d, "%s: bw_pullup copied bytes that were already contiguous "
                  "(bw_data %p, pullup %p)", how ? "span" : "reserve", (const void *)d,
                  (const void *)pu);
        cr_expect_eq(atomic_load(&ta.allocs), allocs, "%s: bw_pullup allocated",
                     how ? "span" : "reserve");
        bw_release(&w);
        ta_finish(&ta, p);
    }
}

/* ------------------------------------------------------------------ */
/* bw_detach_malloc: memory that fits                                   */
/* ------------------------------------------------------------------ */

/* A text of at most 64 KiB in a block of a class the thread cache keeps
 * is copied into malloc'd memory of its size (the block stays in the pool
 * for the next job, which a hand-off would send to the allocator: issue
 * 36); a longer one, or one in a block the thread cache does not keep, is
 * handed over, and a block much larger than the bytes (more than twice
 * them with their NUL, plus 64 bytes) is shrunk with the allocator's
 * realloc. A realloc that fails leaves the caller the whole block; a pool
 * whose allocator is not malloc's is never asked to realloc. The default
 * allocator's hooks, with a realloc hook of the test's own in their place,
 * still hand out malloc's memory: that is how these tests see (and fail)
 * the shrink's realloc. The harness's counting allocator (test_alloc) is
 * the custom allocator that is not malloc. */

#ifdef __GLIBC__
#  include <malloc.h> /* malloc_usable_size */
#endif


/* A realloc hook over libc's realloc that counts its calls, remembers the
 * sizes of the last, can fail, and checks the bytes it gives up. */
typedef struct shrink_hook {
    bw_allocator a;
    int calls, fail;
    size_t old_size, new_size;
    int check_tail; /* look at the bytes past new_size (else never written) */
    int tail_zero;  /* they were all 0 (last call) */
} shrink_hook;

static void *sh_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    shrink_hook *h = (shrink_hook *)ctx;
    h->calls++;
    h->old_size = old_size;
    h->new_size = new_size;
    h->tail_zero = h->check_tail && new_size < old_size &&
                   all_bytes((unsigned char *)block + new_size, old_size - new_size, 0);
    if (h->fail) return NULL;
    return realloc(block, new_size);
}

/* A pool on malloc's alloc and free hooks with h's realloc; NULL (no pool)
 * under BW_CHECKED or BW_BYPASS, whose pools hand blocks over otherwise. */
static bw_pool *hook_pool(shrink_hook *h, unsigned flags)
{
    bw_pool_options o;
    if (!plain_env()) return NULL;
    memset(h, 0, sizeof *h);
    h->a = *bw_allocator_libc();
    h->a.realloc = sh_realloc;
    h->a.ctx = h;
    memset(&o, 0, sizeof o);
    o.allocator = &h->a;
    o.flags = flags;
    return mkpool(&o);
}

/* A contiguous writer on p holding n pattern bytes (seed) in a block of
 * at least initial; returns where they are. */
static const unsigned char *build(bw_writer *w, bw_pool *p, size_t initial, size_t n,
                                  unsigned seed)
{
    unsigned char piece[20];
    size_t i, k;
    cr_assert_eq(bw_init(w, p, initial), BW_OK);
    for (i = 0; i < n; i += k) {
        k = n - i < sizeof piece ? n - i : sizeof piece;
        for (size_t j = 0; j < k; j++) piece[j] = pat(i + j, seed);
        cr_assert_eq(bw_write(w, piece, k), BW_OK);
    }
    return bw_data(w);
}

/* s holds n pattern bytes (seed) and a NUL. */
static void expect_bytes(const unsigned char *s, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] != pat(i, seed)) break;
    cr_expect_eq(i, n, "byte %zu of %zu differs", i, n);
    cr_expect_eq(s[n], 0, "a NUL after them");
}

Test(detach_fit, a_200_byte_text_in_a_512_byte_block_is_copied_to_fit)
{
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len = 0;
    uint64_t out0;
    memset(&o, 0, sizeof o);
    p = mkpool(&o); /* the default allocator */
    out0 = outstanding(p);
    d = build(&w, p, 0, 200, 1);
    cr_assert_geq(bw_capacity(&w), 512, "the first block is 512 bytes");
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 200);
    expect_bytes(s, 200, 1);
    cr_expect_neq(s, d, "a copy: the block stays in the pool");
#ifdef __GLIBC__
    cr_expect_lt(malloc_usable_size(s), 256, "fits: %zu usable", malloc_usable_size(s));
#endif
    cr_expect_eq(outstanding(p), out0, "the block went back");
    free(s);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_error(&w), BW_OK);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* The point of the copy: a job after a detach rents the block the last
 * one left, so detaches in a loop allocate no block in the pool, at every
 * length the rule copies. In 0.4.0, 223..511 bytes in the 512-byte
 * first block (and 1,024 bytes in its 2 KiB block) were handed over, and
 * every next job rented a new block from malloc. */
Test(detach_fit, repeated_hand_offs_rent_nothing_new)
{
    static const size_t lens[] = {200, 223, 252, 400, 511, 1024, 5000, 40000, 64 * KiB};
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats before, after;
    size_t k;
    int i;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    for (k = 0; k < sizeof lens / sizeof lens[0]; k++)
        for (i = 0; i < 12; i++) {
            bw_writer w;
            unsigned char *s;
            size_t len;
            /* warm: a fresh pool learns a job's size on its third */
            if (i == 4) bw_pool_get_stats(p, &before);
            (void)build(&w, p, 0, lens[k], (unsigned)i);
            s = (unsigned char *)bw_detach_malloc(&w, &len);
            cr_assert(s != NULL);
            expect_bytes(s, lens[k], (unsigned)i);
            free(s);
            bw_release(&w);
            if (i < 11) continue;
            bw_pool_get_stats(p, &after);
            cr_expect_eq(after.backing_allocs, before.backing_allocs,
                         "%zu bytes: %llu blocks allocated", lens[k],
                         (unsigned long long)(after.backing_allocs - before.backing_allocs));
        }
    bw_pool_destroy(p);
}

/* n bytes (pattern seed) built on p from an empty writer, detached: a
 * copy (`copied`, of the bytes' size) or the block itself, seen both by
 * the address and by the pool's count of blocks given to the allocator
 * (a hand-off is one, a copy returns the block to the pool). */
static void expect_detached(bw_pool *p, size_t n, unsigned seed, int copied)
{
    bw_writer w;
    const unsigned char *d = build(&w, p, 0, n, seed);
    unsigned char *s;
    size_t len;
    bw_pool_stats before, after;
    bw_pool_get_stats(p, &before);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    bw_pool_get_stats(p, &after);
    cr_assert(s != NULL);
    cr_expect_eq(len, n);
    expect_bytes(s, n, seed);
    if (copied) {
        cr_expect_neq(s, d, "%zu bytes: copied", n);
        cr_expect_eq(after.backing_frees, before.backing_frees, "%zu bytes: the block kept", n);
#ifdef __GLIBC__
        cr_expect_lt(malloc_usable_size(s), n + 64, "%zu bytes: fits", n);
#endif
    } else {
        cr_expect_eq(s, d, "%zu bytes: the block itself", n);
        cr_expect_eq(after.backing_frees, before.backing_frees + 1, "%zu bytes: it left", n);
    }
    free(s);
    bw_release(&w);
}

/* The rule by length, on the defaults (the thread cache keeps classes to
 * 1 MiB): every text of 16 B .. 64 KiB is copied, the 223..511-byte band
 * in the 512-byte first block included; from 64 KiB + 1 the block goes. */
Test(detach_fit, texts_to_64_kib_are_copied_longer_ones_handed_over)
{
    static const size_t copied[] = {1, 16, 64, 200, 222, 223, 252, 300, 400, 480, 511, 512,
                                    1024, 2047, 4096, 16 * KiB, 16 * KiB + 1, 40000, 64 * KiB};
    static const size_t handed[] = {64 * KiB + 1, 100000, 300000};
    bw_pool_options o;
    bw_pool *p;
    size_t k;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    for (k = 0; k < sizeof copied / sizeof copied[0]; k++) expect_detached(p, copied[k], 2, 1);
    for (k = 0; k < sizeof handed / sizeof handed[0]; k++) expect_detached(p, handed[k], 3, 0);
    bw_pool_destroy(p);
}

/* The copy bw_detach_malloc makes inline (bufwriter.h), on the cases it
 * could get wrong: bytes consumed from the front (they start past data),
 * a recorded error (copied, then cleared), a size limit (kept), and no
 * len. Each copy fits, the block goes back to the pool (the next job
 * rents it: no block allocated) and the writer is empty and usable. */
Test(detach_fit, the_inline_copy_consumed_error_limit_and_no_len)
{
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats before, after;
    bw_writer w;
    unsigned char *s;
    size_t len = 0;
    int i;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    for (i = 0; i < 4; i++) { /* warm: the pool's first block in the cache */
        (void)build(&w, p, 0, 300, 10);
        free(bw_detach_malloc(&w, NULL));
    }
    bw_pool_get_stats(p, &before);
    (void)build(&w, p, 0, 300, 11);
    cr_assert_eq(bw_consume(&w, 50), BW_OK);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 250, "the bytes after those consumed");
    for (i = 0; i < 250; i++)
        if (s[i] != pat((size_t)i + 50, 11)) break;
    cr_expect_eq(i, 250, "byte %d differs", i);
    cr_expect_eq(s[250], 0);
    cr_expect_eq(bw_tell(&w), 0, "positions at 0");
    free(s);
    (void)build(&w, p, 0, 300, 12);
    cr_expect_eq(bw_puts(&w, NULL), BW_EINVAL);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "works while an error is recorded");
    cr_expect_eq(len, 300);
    expect_bytes(s, 300, 12);
    cr_expect_eq(bw_error(&w), BW_OK, "and clears it");
    cr_expect_eq(bw_free_capacity(&w), 0, "no storage: the block went back");
    free(s);
    (void)build(&w, p, 0, 300, 13);
    cr_assert_eq(bw_set_limit(&w, 400), BW_OK);
    s = (unsigned char *)bw_detach_malloc(&w, NULL);
    cr_assert(s != NULL);
    expect_bytes(s, 300, 13);
    free(s);
    cr_expect_eq(bw_write(&w, "x", 1), BW_OK);
    cr_expect_eq(bw_pad(&w, 512), BW_ELIMIT, "the limit stays");
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect(len == 1 && s[0] == 'x' && s[1] == 0);
    free(s);
    bw_release(&w);
    bw_pool_get_stats(p, &after);
    cr_expect_eq(after.backing_allocs, before.backing_allocs, "no block allocated");
    cr_expect_eq(after.backing_frees, before.backing_frees, "none handed over");
    bw_pool_destroy(p);
}

/* A learning pool learns the length of each text bw_detach_malloc copies
 * out of a block other than the first size (its inline copy's release
 * gives that block back out of line, with the length), as bw_release
 * would have taught it: three 5,000-byte texts make 8 KiB the next
 * writer's first block. */
Test(detach_fit, the_inline_copy_teaches_a_learning_pool_the_length)
{
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats st;
    bw_writer w;
    unsigned char *s;
    size_t len = 0;
    unsigned i;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_LEARN_SIZE;
    p = mkpool(&o);
    for (i = 0; i < 3; i++) {
        (void)build(&w, p, 0, 5000, i);
        s = (unsigned char *)bw_detach_malloc(&w, &len);
        cr_assert(s != NULL);
        cr_expect_eq(len, 5000);
        expect_bytes(s, 5000, i);
        cr_expect_eq(s[5000], 0);
        free(s);
        cr_expect_eq(bw_capacity(&w), 0, "text %u: the block went back", i);
    }
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.learned_size, 8192, "learned %zu", st.learned_size);
    cr_assert_eq(bw_put_u32le(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 8192, "the next job's first block");
    bw_release(&w);
    bw_pool_destroy(p);
}

/* A block of a class the thread cache keeps but larger than 64 KiB holds
 * a text the rule copies (at most 64 KiB) that the inline copy leaves to
 * the call: still a copy, and the block stays in the pool. */
Test(detach_fit, a_short_text_in_a_large_cached_block_is_copied)
{
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len;
    bw_pool_stats before, after;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    d = build(&w, p, 256 * KiB, 1000, 14);
    cr_assert_eq(bw_capacity(&w), 256 * KiB);
    bw_pool_get_stats(p, &before);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    bw_pool_get_stats(p, &after);
    cr_assert(s != NULL);
    cr_expect_eq(len, 1000);
    expect_bytes(s, 1000, 14);
    cr_expect_neq(s, d, "copied");
    cr_expect_eq(after.backing_frees, before.backing_frees, "the block kept");
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* The thread cache keeps the classes up to the pool's threshold when that
 * is below 1 MiB: with a 4 KiB threshold, a text in a 4 KiB block is
 * copied and one in a block above it handed over (the pool counts it
 * freed; a shrink may move it, so not by address), though both are
 * shorter than 64 KiB. The inline copy asks the pool, not the length
 * alone. */
Test(detach_fit, the_rule_follows_the_pools_cached_classes)
{
    static const size_t lens[] = {3000, 5000};
    bw_pool_options o;
    bw_pool_stats before, after;
    bw_pool *p;
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len, k;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    o.max_pooled_size = 4 * KiB;
    p = mkpool(&o);
    for (k = 0; k < 2; k++) {
        d = build(&w, p, 0, lens[k], 15);
        cr_assert_eq(bw_capacity(&w) > 4 * KiB, k == 1, "%zu bytes", lens[k]);
        bw_pool_get_stats(p, &before);
        s = (unsigned char *)bw_detach_malloc(&w, &len);
        bw_pool_get_stats(p, &after);
        cr_assert(s != NULL);
        cr_expect_eq(len, lens[k]);
        expect_bytes(s, lens[k], 15);
        if (k == 0) cr_expect_neq(s, d, "copied");
        cr_expect_eq(after.backing_frees, before.backing_frees + k,
                     "%zu bytes: %s", lens[k], k ? "handed over" : "the block kept");
        free(s);
        bw_release(&w);
    }
    bw_pool_destroy(p);
}

/* More than 64 KiB of bytes (or a block above the thread cache's classes)
 * are not copied: a block much larger than them is shrunk with the
 * allocator's realloc to the bytes and their NUL. */
Test(detach_fit, a_large_block_is_shrunk_by_realloc)
{
    shrink_hook h;
    bw_pool *p = hook_pool(&h, 0);
    bw_writer w;
    unsigned char *s;
    size_t len;
    uint64_t out0;
    if (p == NULL) return;
    out0 = outstanding(p);
    (void)build(&w, p, 1024 * KiB, 200000, 4);
    cr_assert_eq(bw_capacity(&w), 1024 * KiB);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 200000);
    expect_bytes(s, 200000, 4);
    cr_expect_eq(h.calls, 1, "one realloc");
    cr_expect_eq(h.old_size, 1024 * KiB);
    cr_expect_eq(h.new_size, 200001, "to the bytes and their NUL");
#ifdef __GLIBC__
    cr_expect_lt(malloc_usable_size(s), 200 * KiB, "fits: %zu usable", malloc_usable_size(s));
#endif
    cr_expect_eq(outstanding(p), out0, "the block left the pool");
    free(s);
    bw_release(&w);
    /* Not much larger: handed over as it is, no realloc. */
    (void)build(&w, p, 1024 * KiB, 600000, 5);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    expect_bytes(s, 600000, 5);
    cr_expect_eq(h.calls, 1, "no realloc for 600000 bytes in 1 MiB");
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* A failed realloc keeps the original block: the caller gets it whole,
 * with the bytes and the NUL, and free() releases it. */
Test(detach_fit, a_failed_shrink_hands_over_the_whole_block)
{
    shrink_hook h;
    bw_pool *p = hook_pool(&h, 0);
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len;
    uint64_t out0;
    if (p == NULL) return;
    out0 = outstanding(p);
    h.fail = 1;
    d = build(&w, p, 1024 * KiB, 200000, 6);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "no error: the block as it is");
    cr_expect_eq(h.calls, 1);
    cr_expect_eq(s, d, "the original block");
    cr_expect_eq(len, 200000);
    expect_bytes(s, 200000, 6);
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(outstanding(p), out0, "the block left the pool");
    free(s);
    bw_release(&w);
    /* The writer goes on: the next job is shrunk when realloc works. */
    h.fail = 0;
    (void)build(&w, p, 1024 * KiB, 200000, 7);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    expect_bytes(s, 200000, 7);
    cr_expect_eq(h.calls, 2);
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* A pool that zeroes what it gives back (BW_POOL_ZERO_ON_RETURN) zeroes
 * the tail a shrink gives to the allocator: here bytes truncated away. */
Test(detach_fit, a_zeroing_pool_zeroes_the_tail_it_gives_back)
{
    shrink_hook h;
    bw_pool *p = hook_pool(&h, BW_POOL_ZERO_ON_RETURN);
    bw_writer w;
    unsigned char *s;
    size_t len;
    if (p == NULL) return;
    h.check_tail = 1;
    (void)build(&w, p, 0, 400, 8);
    cr_assert_eq(bw_capacity(&w), 512);
    cr_assert_eq(bw_truncate(&w, 100), BW_OK);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 100);
    expect_bytes(s, 100, 8);
    cr_expect_eq(h.calls, 1, "no thread cache in a zeroing pool: a shrink");
    cr_expect_eq(h.new_size, 101);
    cr_expect(h.tail_zero, "the truncated bytes were zeroed first");
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* An allocator that is not malloc: always a copy into malloc'd memory of
 * the bytes' size, and its realloc is never called. */
Test(detach_fit, no_shrink_for_an_allocator_that_is_not_malloc)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len, sizes[] = {200, 1000, 40000};
    size_t initial[] = {0, 64 * KiB, 64 * KiB};
    for (int i = 0; i < 3; i++) {
        long reallocs = atomic_load(&ta.reallocs);
        d = build(&w, p, initial[i], sizes[i], 9 + (unsigned)i);
        s = (unsigned char *)bw_detach_malloc(&w, &len);
        cr_assert(s != NULL);
        cr_expect_eq(len, sizes[i]);
        expect_bytes(s, sizes[i], 9 + (unsigned)i);
        cr_expect_neq(s, d, "%zu bytes: a copy", sizes[i]);
        cr_expect_eq(atomic_load(&ta.reallocs), reallocs, "%zu bytes: no realloc", sizes[i]);
#ifdef __GLIBC__
        cr_expect_lt(malloc_usable_size(s), sizes[i] + 64);
#endif
        free(s);
        bw_release(&w);
    }
    ta_finish(&ta, p); /* every block came back to the pool */
}
