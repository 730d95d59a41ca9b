/* SPDX-License-Identifier: MIT */
/* test_clients.c - what real serializers needed (0.3): the hand-off to
 * free() (bw_detach_malloc), by-reference pieces (bw_append_ref), moves
 * between writers (bw_move), the errno kept with BW_EIO (bw_errno),
 * bw_putc, bw_cstr on a full buffer, truncate and patch while an error is
 * recorded, the learned size with a first capacity, and a streaming
 * buffer's size after a long item.
 *
 * References and moves are in test_refs.c.
 *
 * Each new call is run in every mode, with NULL arguments, sizes that
 * cannot be represented, memory inside the writer's own bytes, and an
 * allocation failure injected at every backing call. */
#define _GNU_SOURCE 1 /* pipe, sigaction, setrlimit under -std=c11 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>

/* ======================================================================== */
/* bw_errno                                                                 */
/* ======================================================================== */

Test(clients_errno, kept_from_the_sink_until_cleared)
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

Test(clients_errno, kept_from_the_kernel_for_an_fd)
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

Test(clients_errno, long_printf_to_a_failing_sink_keeps_the_sinks_errno)
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
Test(clients_errno, kept_from_write_fd_until_the_next_call)
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

Test(clients_errno, strerror_of_eio_points_at_bw_errno)
{
    cr_expect_str_eq(bw_strerror(BW_EIO), "I/O error (bw_errno says why)");
}

Test(clients_errno, zero_for_other_errors_and_null)
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

/* ======================================================================== */
/* bw_putc                                                                  */
/* ======================================================================== */

Test(clients_putc, one_byte_in_every_mode)
{
    int m;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        bw_writer w;
        unsigned char got[2000], want[2000];
        size_t n, i;
        mk(e, &w, m);
        for (i = 0; i < 1500; i++) {
            int c = (int)(i * 7) - 600; /* negative, and past 255 */
            want[i] = (unsigned char)c;
            cr_assert_eq(bw_putc(&w, c), BW_OK, "%s", mode_name[m]);
        }
        n = produced(e, &w, got);
        cr_expect_eq(n, 1500, "%s", mode_name[m]);
        cr_expect(memcmp(got, want, n) == 0, "%s: (unsigned char)c", mode_name[m]);
        bw_release(&w);
        env_free(e);
    }
}

Test(clients_putc, errors)
{
    unsigned char buf[2];
    bw_writer w;
    cr_expect_eq(bw_putc(NULL, 'a'), BW_EINVAL);
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_putc(&w, 'a'), BW_OK);
    cr_expect_eq(bw_putc(&w, 'b'), BW_OK, "exactly full");
    cr_expect_eq(bw_putc(&w, 'c'), BW_EFULL);
    cr_expect_eq(bw_error(&w), BW_EFULL);
    cr_expect_eq(bw_len(&w), 2);
    cr_expect_eq(bw_truncate(&w, 1), BW_OK);
    cr_expect_eq(bw_putc(&w, 'd'), BW_EFULL, "a recorded error refuses it");
    bw_clear_error(&w);
    cr_expect_eq(bw_putc(&w, 'd'), BW_OK);
    cr_expect(memcmp(buf, "ad", 2) == 0);
}

/* ======================================================================== */
/* A fixed writer never allocates; bw_cstr on a full buffer                 */
/* ======================================================================== */

Test(clients_fixed, printf_of_every_length_never_allocates)
{
    static unsigned char buf[8192];
    bw_pool_stats before, after;
    bw_writer w;
    char want[8192];
    size_t lens[] = {0, 1, 255, 256, 257, 1023, 1024, 1025, 4000, 8190, 8191, 8192};
    static char zeros[8193];
    size_t i;
    memset(zeros, '0', sizeof zeros - 1);
    bw_pool_get_stats(bw_pool_shared(), &before);
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t fit;
        for (fit = 0; fit < 2; fit++) {
            size_t size = lens[i] + fit; /* exactly, and a byte to spare */
            int rc;
            if (size > sizeof buf) continue;
            cr_assert_eq(bw_init_fixed(&w, buf, size), BW_OK);
            rc = bw_printf(&w, "%.*s", (int)lens[i], zeros);
            if (lens[i] == 0) {
                cr_expect_eq(rc, BW_OK);
                continue;
            }
            if (lens[i] >= 1024 && fit == 0) {
                /* longer output is formatted in place: a byte more */
                cr_expect_eq(rc, BW_EFULL, "%zu into %zu", lens[i], size);
                cr_expect_eq(bw_len(&w), 0);
                continue;
            }
            cr_expect_eq(rc, BW_OK, "%zu into %zu", lens[i], size);
            memset(want, '0', lens[i]);
            cr_expect_eq(bw_len(&w), lens[i]);
            cr_expect(memcmp(buf, want, lens[i]) == 0);
        }
    }
    cr_assert_eq(bw_init_fixed(&w, buf, 10), BW_OK);
    cr_expect_eq(bw_printf(&w, "%s", "eleven byte"), BW_EFULL, "too long: nothing written");
    cr_expect_eq(bw_len(&w), 0);
    bw_pool_get_stats(bw_pool_shared(), &after);
    cr_expect_eq(after.rents, before.rents, "a fixed writer rented %llu blocks",
                 (unsigned long long)(after.rents - before.rents));
}

Test(clients_fixed, cstr_of_a_full_buffer_is_null_and_records_nothing)
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

Test(clients_fixed, cstr_of_a_full_streaming_buffer_records_nothing)
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

/* ======================================================================== */
/* Truncate and patch while an error is recorded                            */
/* ======================================================================== */

Test(clients_rollback, fixed_frame_that_did_not_fit)
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

Test(clients_rollback, every_mode_after_a_failed_call)
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

Test(clients_rollback, streaming_writer_whose_sink_failed)
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

/* ======================================================================== */
/* bw_detach_malloc                                                         */
/* ======================================================================== */

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

Test(clients_detach_malloc, every_mode_every_size)
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

Test(clients_detach_malloc, no_copy_from_a_malloc_pool)
{
    bw_pool *p;
    bw_pool_options o;
    bw_writer w;
    const unsigned char *d;
    char *s;
    size_t len;
    unsigned char b[3000];
    uint64_t out0;
    int m, checked_env = getenv("BW_CHECKED") != NULL && strcmp(getenv("BW_CHECKED"), "1") == 0;
    fill(b, sizeof b, 4);
    memset(&o, 0, sizeof o);
    p = mkpool(&o); /* the default allocator */
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

Test(clients_detach_malloc, copies_where_the_block_is_not_mallocs)
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

Test(clients_detach_malloc, segmented_blocks_and_references)
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

Test(clients_detach_malloc, null_empty_and_recorded_error)
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
 * process (not where a sanitizer, valgrind or qemu-user owns the address
 * space: qemu's guest heap ignores the guest's RLIMIT_AS). */
#if defined(__SANITIZE_ADDRESS__) || defined(BW_VALGRIND) || defined(BW_TEST_EMULATED)
#  define NO_RLIMIT_TEST 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define NO_RLIMIT_TEST 1
#  endif
#endif

Test(clients_detach_malloc, malloc_failure_records_enomem_and_changes_nothing)
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

/* ======================================================================== */
/* The learned size with a first capacity; a streaming buffer's size        */
/* ======================================================================== */

Test(clients_sizes, learned_size_wins_over_a_smaller_first_capacity)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats st;
    bw_writer w;
    unsigned char buf[64], b[10000];
    int i;
    fill(b, sizeof b, 50);
    p = fresh_pool(&ta, 0, BW_POOL_LEARN_SIZE);
    for (i = 0; i < 4; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &st);
    cr_assert_eq(st.learned_size, 16384);
    cr_assert_eq(bw_init(&w, p, 256), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "the larger of 256 and the learned size");
    bw_release(&w);
    cr_assert_eq(bw_init(&w, p, 40000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 65536, "a larger first capacity wins");
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "out of the caller's buffer: the learned size");
    bw_release(&w);
    ta_finish(&ta, p);
    /* without learning, as given */
    p = fresh_pool(&ta, 0, 0);
    cr_assert_eq(bw_init(&w, p, 256), BW_OK);
    cr_expect_eq(bw_capacity(&w), 256);
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(clients_sizes, streaming_buffer_goes_back_to_its_size_after_a_long_item)
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
