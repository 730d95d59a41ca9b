/* SPDX-License-Identifier: MIT */
/* test_streaming.c - streaming writers (bufwriter.h, section 6): when the
 * sink is called, short counts, EINTR and errors; file descriptors, EPIPE
 * and SIGPIPE, bw_write_fd in every mode (section 10); bw_fopen; the errno
 * kept with BW_EIO (bw_errno); the buffer's size after a long item.
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

/* --- Streaming ----------------------------------------------------------- */

Test(streaming, streaming_sends_only_when_room_is_needed_and_on_flush)
{
    harness h;
    size_t i, avail;
    h_open(&h, M_SINK);
    for (i = 0; i < SINK_BUF; i++) cr_assert_eq(bw_put_u8(&h.w, pat(i, 7)), BW_OK);
    cr_expect_eq(h.s.calls, 0, "64 bytes fit a 64-byte buffer: nothing sent");
    cr_expect_eq(bw_len(&h.w), SINK_BUF);
    cr_expect_eq(bw_put_u8(&h.w, pat(SINK_BUF, 7)), BW_OK);
    cr_expect_geq(h.s.calls, 1, "the 65th byte needs room: the buffer is sent");
    cr_expect(h.s.out.len >= 1 && memcmp(h.s.out.d, pattern(), h.s.out.len) == 0,
              "a prefix was sent");
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
    cr_expect_eq(h.s.out.len, SINK_BUF + 2);
    cr_expect_eq(h.s.out.d[SINK_BUF + 1], '7');
    h_close(&h);
}

Test(streaming, short_counts_and_eintr_are_continued)
{
    harness h;
    ref r = {0};
    int i;
    h_open(&h, M_SINK);
    h.s.take = 3;
    h.s.eintr = EINTR_ONCE;
    for (i = 0; i < 20; i++) {
        put_pattern_ref(&h, &r, (size_t)i * 17, 17);
    }
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_eq(bw_error(&h.w), BW_OK);
    cr_expect_eq(bw_len(&h.w), 0);
    cr_expect_eq(h.s.out.len, r.len);
    cr_expect(memcmp(h.s.out.d, r.d, r.len) == 0, "every byte once, in order");
    cr_expect_geq(h.s.calls, (long)(r.len / 3));
    cr_expect_eq(h.s.bad_args, 0, "the sink is never called with n = 0");
    cr_expect_eq(h.s.wrong_thread, 0, "called on the calling thread");
    h_close_ref(&h, &r);
}

Test(streaming, sink_error_records_eio_and_keeps_its_errno)
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

Test(streaming, broken_sink_is_eio_with_errno_eio_and_no_loop)
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

Test(streaming, clear_error_then_flush_retries_from_first_byte_not_taken)
{
    harness h;
    h_open(&h, M_SINK);
    h.s.budget = 5;
    cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
    cr_expect_eq(bw_flush(&h.w), BW_EIO);
    cr_expect_eq(h.s.out.len, 5);
    cr_expect_eq(bw_len(&h.w), 5, "what the sink did not take stays held");
    cr_expect_eq(bw_tell(&h.w), 10);
    bw_clear_error(&h.w);
    cr_expect_eq(bw_error(&h.w), BW_OK);
    h.s.budget = SIZE_MAX;
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    cr_expect_eq(h.s.out.len, 10);
    cr_expect(memcmp(h.s.out.d, "0123456789", 10) == 0);
    cr_expect_eq(bw_len(&h.w), 0);
    h_close(&h);
}

/* On a streaming writer whose sink takes `budget` bytes and then fails,
 * `held` pattern bytes are written, then a write of the next n fails with
 * BW_EIO. Returns bw_tell after it. */
static uint64_t write_to_failing_sink(harness *h, size_t budget, size_t held, size_t n)
{
    h_open(h, M_SINK);
    h->s.budget = budget;
    if (held > 0) put_pattern(h, 0, held);
    cr_expect_eq(bw_write(&h->w, pattern() + held, n), BW_EIO);
    return bw_tell(&h->w);
}

Test(streaming, failed_large_call_accepts_a_prefix_told_by_tell)
{
    harness h;
    uint64_t t = write_to_failing_sink(&h, 100, 0, 1000);
    cr_expect_leq(t, 1000);
    cr_expect_geq(t, 100, "at least what the sink took was accepted");
    cr_expect_eq(h.s.out.len, 100);
    cr_expect_eq(h.s.out.len + bw_len(&h.w), t, "every accepted byte is sent or held");
    expect_output(&h, pattern(), (size_t)t, "accepted prefix");
    h_close(&h);
}

Test(streaming, call_within_buffer_size_is_all_or_nothing)
{
    harness h;
    uint64_t t = write_to_failing_sink(&h, 0, 40, 40);
    cr_expect(t == 40 || t == 80, "all or nothing: tell %llu", (unsigned long long)t);
    expect_output(&h, pattern(), (size_t)t, "all or nothing");
    h_close(&h);
}

Test(streaming, buffer_size_default_rounding_and_overflow)
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

Test(streaming, reserve_or_span_beyond_buffer_sends_then_takes_a_big_block)
{
    harness h;
    ref r = {0};
    unsigned char *s;
    size_t avail = 0;
    long calls;
    h_open_pattern(&h, M_SINK, 10, &r);
    cr_expect_eq(bw_reserve(&h.w, 200), BW_OK);
    cr_expect_eq(h.s.out.len, 10, "what was held is sent");
    cr_expect_eq(bw_len(&h.w), 0);
    cr_expect_geq(bw_free_capacity(&h.w), 200);
    calls = h.s.calls;
    put_pattern_ref(&h, &r, 10, 200);
    cr_expect_eq(h.s.calls, calls, "the reserved room takes 200 bytes without a send");
    s = (unsigned char *)bw_get_span(&h.w, 300, &avail);
    cr_assert_not_null(s);
    cr_expect_geq(avail, 300);
    cr_expect_eq(bw_len(&h.w), 0, "held bytes sent before the big span");
    memcpy(s, pattern() + 210, 300);
    cr_expect_eq(bw_advance(&h.w, 300), BW_OK);
    ref_add(&r, pattern() + 210, 300);
    cr_expect_eq(bw_flush(&h.w), BW_OK);
    h_close_expecting(&h, &r, "reserve and span beyond the buffer");
}

/* A reserve beyond the buffer takes a block of the growth rule's size for
 * it (a class up to the threshold, the next power of two above), and the
 * next write that fits the configured size is back in a buffer of it. */
Test(streaming, a_long_items_block_is_the_growth_rules_size)
{
    static const size_t sizes[][2] = {{200, 256}, {300, 512}, {5000, 8192},
                                      {100000, 131072}, {(1u << 20) + 1, 2u << 20}};
    size_t k;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        harness h;
        ref r = {0};
        h_open_pattern(&h, M_SINK, 10, &r);
        cr_assert_eq(bw_capacity(&h.w), SINK_BUF);
        cr_assert_eq(bw_reserve(&h.w, sizes[k][0]), BW_OK);
        cr_expect_eq(bw_capacity(&h.w), sizes[k][1], "reserve %zu", sizes[k][0]);
        put_pattern_ref(&h, &r, 10, 20);
        cr_assert_eq(bw_flush(&h.w), BW_OK);
        put_pattern_ref(&h, &r, 30, 20);
        cr_expect_eq(bw_capacity(&h.w), SINK_BUF, "reserve %zu: the buffer again", sizes[k][0]);
        h_close_expecting(&h, &r, "a long item's block");
    }
}

static void release_and_clear_each(harness *h, ref *r)
{
    (void)r;
    bw_clear(&h->w);
    cr_expect_eq(bw_len(&h->w), 0);
    put_pattern(h, 0, 10);
    bw_release(&h->w);
    cr_expect_eq(h->s.calls, 0, "%s: clear and release send nothing", mode_name[h->mode]);
    cr_expect_eq(bw_len(&h->w), 0);
    cr_expect_eq(bw_tell(&h->w), 0);
    /* Still the same mode, with the same parameters. */
    cr_assert_eq(bw_put_u8(&h->w, 'a'), BW_OK);
    switch (h->mode) {
    case M_SINK:
        cr_expect_eq(bw_capacity(&h->w), SINK_BUF, "buffer size kept");
        put_pattern(h, 0, 100);
        cr_expect_geq(h->s.calls, 1, "still streaming to the same sink");
        break;
    case M_FIXED:
        cr_expect(bw_data(&h->w) == h->fbuf, "still the fixed buffer");
        cr_expect_eq(bw_reserve(&h->w, FIXED_SIZE), BW_EFULL, "still fixed");
        break;
    case M_CHAIN:
        put_pattern(h, 0, 5000);
        cr_expect_null(bw_data(&h->w), "still segmented: two blocks");
        break;
    default:
        put_pattern(h, 0, 5000);
        cr_expect_not_null(bw_data(&h->w), "still contiguous");
        break;
    }
    h_close(h);
}

Test(streaming, release_and_clear_never_send_and_keep_the_mode)
{
    each_mode_pattern(10, release_and_clear_each);
}

Test(streaming, flush_returns_the_recorded_error_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open_holding(&h, m, "abc");
        record_einval(&h);
        cr_expect_eq(bw_flush(&h.w), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(h.s.calls, 0, "nothing sent");
        expect_output(&h, "abc", 3, "flush with an error");
        bw_clear_error(&h.w);
        cr_expect_eq(bw_flush(&h.w), BW_OK, "%s", mode_name[m]);
        if (m == M_SINK) cr_expect_eq(h.s.out.len, 3);
        expect_output(&h, "abc", 3, "flush");
        h_close(&h);
    }
}

/* --- File descriptors, EPIPE, SIGPIPE ------------------------------------ */

Test(streaming, init_fd_negative_is_einval_recorded)
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

/* A streaming writer w to a pipe's write end, with a 64-byte buffer, on
 * the pool of a contiguous harness h. */
typedef struct pipe_writer {
    harness h;
    bw_writer w;
    int fds[2];
} pipe_writer;

static void pipe_writer_open(pipe_writer *f)
{
    cr_assert_eq(pipe(f->fds), 0);
    h_open(&f->h, M_CONTIG);
    cr_assert_eq(bw_init_fd(&f->w, f->h.p, 64, f->fds[1]), BW_OK);
}

/* Release the writer, close the pipe, close the harness. */
static void pipe_writer_close(pipe_writer *f)
{
    bw_release(&f->w);
    close_pair(f->fds);
    h_close(&f->h);
}

Test(streaming, fd_writer_sends_and_never_closes_the_fd)
{
    pipe_writer f;
    unsigned char got[300];
    pipe_writer_open(&f);
    cr_expect_eq(bw_write(&f.w, pattern(), 300), BW_OK);
    cr_expect_eq(bw_flush(&f.w), BW_OK);
    cr_expect_eq(bw_len(&f.w), 0);
    read_exact(f.fds[0], got, 300);
    cr_expect(memcmp(got, pattern(), 300) == 0);
    bw_release(&f.w);
    cr_expect_neq(fcntl(f.fds[1], F_GETFD), -1, "the fd is still open");
    pipe_writer_close(&f);
}

Test(streaming, eagain_in_a_flush_records_eio)
{
    pipe_writer f;
    unsigned char junk[4096];
    pipe_writer_open(&f);
    fcntl(f.fds[1], F_SETFL, fcntl(f.fds[1], F_GETFL) | O_NONBLOCK);
    memset(junk, 'j', sizeof junk);
    while (write(f.fds[1], junk, sizeof junk) > 0) continue;
    while (write(f.fds[1], junk, 1) > 0) continue;
    cr_expect_eq(bw_write(&f.w, "0123456789", 10), BW_OK);
    expect_flush_eio(&f.w, EAGAIN, "EAGAIN: recorded, like any failure");
    cr_expect_eq(bw_len(&f.w), 10, "kept");
    pipe_writer_close(&f);
}

Test(streaming, write_fd_on_a_streaming_writer_bypasses_the_sink)
{
    harness h;
    unsigned char got[10];
    size_t n = 0;
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    h_open_holding(&h, M_SINK, "0123456789");
    cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), BW_OK);
    cr_expect_eq(n, 10);
    cr_expect_eq(h.s.calls, 0, "the sink is not called");
    cr_expect_eq(bw_len(&h.w), 0, "what went out is consumed");
    cr_expect_eq(bw_tell(&h.w), 10);
    read_exact(fds[0], got, 10);
    cr_expect(memcmp(got, "0123456789", 10) == 0);
    close_pair(fds);
    h_close(&h);
}

Test(streaming, write_fd_sends_held_bytes_in_every_mode)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        unsigned char *got;
        size_t n = 0, held, sent;
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        h_open_pattern(&h, m, 6000, NULL);
        put_pattern(&h, 6000, 30);
        ref_add(&r, pattern(), 6030);
        held = bw_len(&h.w);
        sent = h.s.out.len;
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
        close_pair(fds);
        h_close(&h);
    }
}

Test(streaming, write_fd_refuses_a_writer_with_a_recorded_error)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        size_t n = 99;
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        h_open_holding(&h, m, "abc");
        record_einval(&h);
        cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), BW_EINVAL, "%s", mode_name[m]);
        cr_expect(pipe_is_empty(fds[0]), "%s: nothing sent", mode_name[m]);
        expect_output(&h, "abc", 3, "write_fd refused");
        close_pair(fds);
        h_close(&h);
    }
}

Test(streaming, epipe_is_eio_not_recorded_sigpipe_untouched)
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
    h_open_holding(&h, M_CONTIG, "0123456789");
    errno = 0;
    cr_expect_eq(bw_write_fd(&h.w, fds[1], NULL), BW_EIO, "written may be NULL");
    cr_expect_eq(errno, EPIPE);
    cr_expect_eq(bw_error(&h.w), BW_OK, "a write_fd failure is not recorded");
    cr_expect_eq(bw_len(&h.w), 10, "the rest stays held");
    /* A streaming writer on the same fd records it. */
    cr_assert_eq(bw_init_fd(&w, h.p, 64, fds[1]), BW_OK);
    cr_expect_eq(bw_write(&w, "abc", 3), BW_OK);
    expect_flush_eio(&w, EPIPE, "EPIPE on a streaming writer");
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

/* --- bw_fopen ------------------------------------------------------------ */

#ifdef BW_HAVE_FILE_ADAPTER
Test(streaming, fopen_bytes_arrive_on_flush_and_fclose_keeps_the_writer)
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

/* On the open harness h: a FILE over the writer takes text, and its
 * fflush fails with EOF and errno err; the writer then has `recorded`
 * recorded (BW_OK: not checked). fail_alloc: every backing call fails
 * from the fputs on. Closes h. */
static void expect_fflush_fails(harness *h, int fail_alloc, const char *text, int err,
                                int recorded)
{
    FILE *f = bw_fopen(&h->w);
    cr_assert_not_null(f);
    if (fail_alloc) h_fail_from_next(h);
    fputs(text, f);
    errno = 0;
    cr_expect_eq(fflush(f), EOF);
    cr_expect_eq(errno, err, "errno %d, want %d", errno, err);
    if (recorded != BW_OK) cr_expect_eq(bw_error(&h->w), recorded);
    fclose(f);
    if (fail_alloc) h_fail_never(h);
    h_close(h);
}

Test(streaming, fopen_writer_failures_set_errno)
{
    harness h;
    h_open_ex(&h, M_FIXED, 4, 0, 0);
    expect_fflush_fails(&h, 0, "hello world", ENOSPC, BW_EFULL);
    h_open(&h, M_CONTIG);
    expect_fflush_fails(&h, 1, "hello world", ENOMEM, BW_OK);
    h_open_ex(&h, M_SINK, 16, 0, 0);
    h.s.budget = 0;
    expect_fflush_fails(&h, 0, "a line longer than sixteen bytes", EIO, BW_EIO);
}

Test(streaming, fopen_seek_and_tell_fail_with_espipe)
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

/* ------------------------------------------------------------------------ */
/* bw_errno: the errno kept with BW_EIO                                     */
/* ------------------------------------------------------------------------ */

Test(saved_errno, kept_from_the_sink_until_cleared)
{
    env *e = env_new();
    bw_writer w;
    unsigned char b[1000];
    fill(b, sizeof b, 1);
    mk(e, &w, M_SINK);
    cr_expect_eq(bw_errno(&w), 0);
    sink_fail(&e->sink, SF_ERRNO, ENOSPC);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    errno = ENOENT; /* an unrelated call later */
    cr_expect_eq(bw_flush(&w), BW_EIO);
    cr_expect_eq(bw_errno(&w), ENOSPC, "the sink's errno, not %d", bw_errno(&w));
    cr_expect_eq(bw_put_u8(&w, 1), BW_EIO);
    cr_expect_eq(bw_errno(&w), ENOSPC, "a refused call keeps it");
    bw_clear_error(&w);
    cr_expect_eq(bw_errno(&w), 0, "cleared with the error");
    sink_heal(&e->sink);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_errno(&w), 0);

    sink_fail(&e->sink, SF_ZERO, 0);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    cr_expect_eq(bw_errno(&w), EIO, "a broken sink records EIO");
    bw_clear(&w);
    cr_expect_eq(bw_errno(&w), 0, "bw_clear forgets it");
    sink_heal(&e->sink);
    sink_fail(&e->sink, SF_ERRNO, EPIPE);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    cr_expect_eq(bw_errno(&w), EPIPE);
    bw_release(&w);
    cr_expect_eq(bw_errno(&w), 0, "bw_release forgets it");
    env_free(e);
}

Test(saved_errno, kept_from_the_kernel_for_an_fd)
{
    int fds[2];
    bw_writer w;
    unsigned char b[4096];
    struct sigaction ign, old;
    memset(b, 'x', sizeof b);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]); /* the reader has gone */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    cr_assert_eq(bw_init_fd(&w, NULL, 1024, fds[1]), BW_OK);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    errno = 0;
    cr_expect_eq(bw_errno(&w), EPIPE);
    bw_release(&w);
    close(fds[1]);
    sigaction(SIGPIPE, &old, NULL);
}

Test(saved_errno, long_printf_to_a_failing_sink_keeps_the_sinks_errno)
{
    env *e = env_new();
    bw_writer w;
    mk(e, &w, M_SINK);
    sink_fail(&e->sink, SF_ERRNO, EDQUOT);
    cr_expect_eq(bw_printf(&w, "%05000d", 7), BW_EIO, "longer than the buffer: to the sink");
    cr_expect_eq(bw_errno(&w), EDQUOT);
    bw_release(&w);
    env_free(e);
}

/* bw_write_fd records nothing, but keeps its errno with the writer like a
 * recorded BW_EIO, so a message printed later still says why. */
Test(saved_errno, kept_from_write_fd_until_the_next_call)
{
    bw_writer w = BW_WRITER_INIT;
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(close(fds[0]), 0); /* no reader: EPIPE */
    cr_assert_eq(bw_puts(&w, "gone"), BW_OK);
    cr_expect_eq(bw_write_fd(&w, fds[1], NULL), BW_EIO);
    errno = ENOENT; /* what a later call leaves in errno */
    cr_expect_eq(bw_error(&w), BW_OK, "not recorded");
    cr_expect_eq(bw_errno(&w), EPIPE, "kept: %s", strerror(bw_errno(&w)));
    cr_expect_eq(bw_len(&w), 4, "still held");
    cr_assert_eq(close(fds[1]), 0);
    cr_assert_eq(pipe(fds), 0);
    cr_expect_eq(bw_write_fd(&w, fds[1], NULL), BW_OK);
    cr_expect_eq(bw_errno(&w), 0, "the next call replaces it");
    close_pair(fds);
    bw_release(&w);
}

Test(saved_errno, strerror_of_eio_points_at_bw_errno)
{
    cr_expect_str_eq(bw_strerror(BW_EIO), "I/O error (bw_errno says why)");
}

Test(saved_errno, zero_for_other_errors_and_null)
{
    unsigned char buf[4];
    bw_writer w;
    cr_expect_eq(bw_errno(NULL), 0);
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    errno = EIO;
    cr_expect_eq(bw_write(&w, "12345", 5), BW_EFULL);
    cr_expect_eq(bw_errno(&w), 0, "only BW_EIO has an errno");
    cr_expect_eq(bw_puts(&w, NULL), BW_EFULL);
    cr_expect_eq(bw_errno(&w), 0);
}

/* ------------------------------------------------------------------------ */
/* The buffer's size after a long item                                      */
/* ------------------------------------------------------------------------ */

Test(streaming, buffer_goes_back_to_its_size_after_a_long_item)
{
    env *e = env_new();
    bw_writer w;
    unsigned char *span;
    unsigned char b[100];
    size_t avail;
    bw_pool_stats st;
    fill(b, sizeof b, 51);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, 10), BW_OK);
    cr_expect_eq(bw_capacity(&w), CLIENT_SINK_BUF);
    span = (unsigned char *)bw_get_span(&w, 100000, NULL);
    cr_assert(span != NULL);
    memset(span, 'L', 100000);
    cr_assert_eq(bw_advance(&w, 100000), BW_OK);
    cr_expect_geq(bw_capacity(&w), 100000, "a long item takes a larger block");
    cr_assert_eq(bw_write(&w, b, 10), BW_OK); /* fits: nothing sent yet */
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.out.len, 100020);
    bw_pool_get_stats(e->pool, &st);
    cr_expect_eq(st.outstanding_bytes, 0, "the larger block went back when its bytes were sent");
    cr_assert_eq(bw_write(&w, b, 10), BW_OK);
    cr_expect_eq(bw_capacity(&w), CLIENT_SINK_BUF, "the configured size again");
    /* the same when the send comes from a write that does not fit */
    span = (unsigned char *)bw_get_span(&w, 5000, &avail);
    cr_assert(span != NULL);
    cr_assert_eq(bw_advance(&w, avail), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), CLIENT_SINK_BUF);
    cr_expect_eq(e->sink.out.len, 100020 + 10 + avail);
    cr_expect_eq(bw_len(&w), 100);
    /* a write from the enlarged buffer's own bytes keeps it until copied */
    span = (unsigned char *)bw_get_span(&w, 5000, &avail);
    cr_assert(span != NULL);
    memset(span, 'Q', avail);
    cr_assert_eq(bw_advance(&w, avail), BW_OK);
    cr_expect_eq(bw_write(&w, span + avail - 100, 100), BW_OK);
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect(e->sink.out.d[e->sink.out.len - 1] == 'Q' &&
              e->sink.out.d[e->sink.out.len - 100] == 'Q');
    bw_release(&w);
    env_free(e);
}
