/* SPDX-License-Identifier: MIT */
/* test_file.c - the FILE* adapter, bw_fopen, in every mode. */
#define _GNU_SOURCE 1 /* usleep, NSIG, sigtimedwait */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <time.h>
#include <unistd.h>

/* FILE* adapter                                                            */
/* ------------------------------------------------------------------------ */

#ifdef BW_HAVE_FILE_ADAPTER
#define FMT "%d %i %u %x %X %o %c %s %5.2f %e %g %% %ld %lld %zu %p %-6s| %+d %05d %.3s"
#define ARGS -42, 7, 3000000000u, 0xbeefu, 0xbeefu, 8u, 'z', "str", 3.14159, 1e-7, 2.5, \
             -123456789L, 9000000000LL, (size_t)77, (void *)0x1234, "ab", 5, 42, "abcdef"

/* What the writer has received: sink + held for streaming, else held. */
static void mw_expect_all(mw *m, const void *exp, size_t n, const char *where)
{
    if (m->mode == M_SINK) {
        cr_assert_eq(m->s.out.len + bw_len(&m->w), n, "%s %s", mode_name[m->mode], where);
        cr_assert(m->s.out.len == 0 || memcmp(m->s.out.d, exp, m->s.out.len) == 0, "%s %s",
                  mode_name[m->mode], where);
        held_is(&m->w, (const unsigned char *)exp + m->s.out.len, bw_len(&m->w), where);
    } else {
        held_is(&m->w, (const unsigned char *)exp, n, where);
    }
}
#endif

/* fputs s to f, then fflush: it must fail (EOF). Returns the errno. */
static int fputs_then_fflush_fails(FILE *f, const char *s)
{
    int rc, e;
    fputs(s, f);
    errno = 0;
    rc = fflush(f);
    e = errno;
    cr_expect_eq(rc, EOF);
    return e;
}

Test(file, fopen_fprintf_lands_in_every_mode, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    char want[1024];
    int mode, n;
    n = snprintf(want, sizeof want, FMT, ARGS);
    cr_assert_gt(n, 0);
    memcpy(want + n, "more", 4);
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        FILE *f;
        long calls;
        mw_init(&m, mode, NULL, 65536);
        f = bw_fopen(&m.w);
        cr_assert_not_null(f, "%s", mode_name[mode]);
        cr_assert_eq(fprintf(f, FMT, ARGS), n, "%s", mode_name[mode]);
        cr_assert_eq(fflush(f), 0, "%s", mode_name[mode]);
        mw_expect_all(&m, want, (size_t)n, "after fflush");
        { /* a second FILE over the same writer: no seeking */
            FILE *g = bw_fopen(&m.w);
            int e;
            long pos;
            cr_assert_not_null(g);
            errno = 0;
            cr_expect_eq(fseek(g, 0, SEEK_SET), -1, "%s", mode_name[mode]);
            e = errno;
            cr_expect_eq(e, ESPIPE, "%s: fseek errno %d", mode_name[mode], e);
            errno = 0;
            pos = ftell(g);
            e = errno;
            cr_expect_eq(pos, -1L, "%s: ftell %ld", mode_name[mode], pos);
            cr_expect_eq(e, ESPIPE, "%s: ftell errno %d", mode_name[mode], e);
            cr_expect_eq(fclose(g), 0);
        }
        cr_assert_geq(fputs("more", f), 0);
        calls = m.s.calls;
        cr_assert_eq(fclose(f), 0, "%s", mode_name[mode]);
        mw_expect_all(&m, want, (size_t)n + 4, "after fclose");
        cr_expect_eq(m.s.calls, calls, "%s: fclose does not flush the writer to its sink",
                     mode_name[mode]);
        cr_expect_eq(bw_error(&m.w), BW_OK);
        /* not released: still usable */
        cr_assert_eq(bw_put_u8(&m.w, '!'), BW_OK);
        cr_expect_eq(bw_tell(&m.w), (uint64_t)n + 5, "%s: fclose does not release",
                     mode_name[mode]);
        mw_done(&m);
    }
#endif
}

/* Through a small streaming buffer: the FILE's bytes pass through the sink. */
Test(file, fopen_over_small_streaming_buffer, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    mw m;
    FILE *f;
    bytes exp = {NULL, 0, 0};
    char line[64];
    int i, k;
    mw_init(&m, M_SINK, NULL, 256);
    f = bw_fopen(&m.w);
    cr_assert_not_null(f);
    for (i = 0; i < 2000; i++) {
        k = snprintf(line, sizeof line, "line %d: %x %s\n", i, (unsigned)i * 2654435761u,
                     i % 3 ? "abc" : "");
        by_add(&exp, line, (size_t)k);
        cr_assert_eq(fprintf(f, "line %d: %x %s\n", i, (unsigned)i * 2654435761u,
                             i % 3 ? "abc" : ""), k);
    }
    cr_assert_eq(fclose(f), 0);
    mw_expect_all(&m, exp.d, exp.len, "small streaming buffer");
    cr_assert_eq(bw_flush(&m.w), BW_OK);
    cr_expect_eq(m.s.out.len, exp.len);
    cr_expect(memcmp(m.s.out.d, exp.d, exp.len) == 0);
    mw_done(&m);
    by_free(&exp);
#endif
}

Test(file, fopen_fixed_writer_that_fills_fails_with_enospc, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    bw_writer w;
    unsigned char buf[16];
    char big[101];
    FILE *f;
    int e;
    memset(big, 'a', 100);
    big[100] = '\0';
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    f = bw_fopen(&w);
    cr_assert_not_null(f);
    e = fputs_then_fflush_fails(f, big);
    cr_expect_eq(e, ENOSPC, "errno %d", e);
    cr_expect(ferror(f), "the FILE has its error flag");
    cr_expect_eq(bw_error(&w), BW_EFULL);
    cr_expect_leq(bw_len(&w), sizeof buf);
    held_is(&w, (const unsigned char *)big, bw_len(&w), "fixed, full");
    fclose(f);
    cr_expect_eq(bw_error(&w), BW_EFULL, "fclose does not release");
    bw_release(&w);
#endif
}

Test(file, fopen_writer_failure_sets_errno, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    char big[1000];
    int e;
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    { /* allocator failure: ENOMEM */
        test_alloc ta;
        bw_pool *p = fresh_pool(&ta, 0, 0);
        bw_writer w;
        FILE *f;
        atomic_store(&ta.fail_sticky, 1);
        atomic_store(&ta.fail_at, atomic_load(&ta.calls) + 1);
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        f = bw_fopen(&w);
        cr_assert_not_null(f);
        e = fputs_then_fflush_fails(f, big);
        cr_expect_eq(e, ENOMEM, "errno %d", e);
        cr_expect_eq(bw_error(&w), BW_ENOMEM);
        fclose(f);
        bw_release(&w);
        ta_finish(&ta, p);
    }
    { /* sink failure: EIO */
        mw m;
        FILE *f;
        mw_init(&m, M_SINK, NULL, 256);
        m.s.fail_at = 1;
        m.s.fail_sticky = 1;
        m.s.fail_errno = EIO;
        f = bw_fopen(&m.w);
        cr_assert_not_null(f);
        e = fputs_then_fflush_fails(f, big);
        cr_expect_eq(e, EIO, "errno %d", e);
        cr_expect_eq(bw_error(&m.w), BW_EIO);
        fclose(f);
        mw_done(&m);
    }
#endif
}

Test(file, fopen_null_is_einval, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    errno = 0;
    cr_expect_null(bw_fopen(NULL));
    cr_expect_eq(errno, EINVAL);
#endif
}

/* ------------------------------------------------------------------------ */

/* What broke (0.2): fputs, fwrite and fprintf through bw_fopen(w) with
 * arguments inside w's held bytes, in a contiguous or segmented writer: the
 * FILE hands its bytes over in pieces, in the middle of the call, and the
 * writer's growth moved the argument away under it. */
#ifdef BW_HAVE_FILE_ADAPTER
/* fputs(bw_cstr(w)) and fwrite(bw_data(w)) into bw_fopen(w): the FILE
 * flushes into w (which grows) and goes on reading the argument. */
Test(file, fopen_writes_of_the_writers_own_bytes_contiguous_and_segmented)
{
    static const int modes[] = {M_CONTIG, M_BUFFER, M_CHAIN};
    static const unsigned flagsets[] = {0, BW_POOL_ZERO_ON_RETURN, BW_POOL_NO_LARGE_RETENTION};
    static const size_t sizes[] = {3000, 20000, 300000};
    size_t mi, fi, si;
    for (mi = 0; mi < 3; mi++)
        for (fi = 0; fi < 3; fi++)
            for (si = 0; si < 3; si++) {
                harness e;
                size_t n = sizes[si];
                char *s = letters(n, 3), *want = (char *)malloc(4 * n);
                FILE *f;
                const char *c;
                cr_assert_not_null(want);
                h_open_stale(&e, modes[mi], flagsets[fi]);
                cr_assert_eq(bw_write(&e.w, s, n), BW_OK);
                c = bw_cstr(&e.w);
                cr_assert_not_null(c);
                f = bw_fopen(&e.w);
                cr_assert_not_null(f);
                cr_expect_geq(fputs(c, f), 0, "%s: fputs", mode_name[modes[mi]]);
                cr_expect_eq(fflush(f), 0);
                /* two copies are held now: fwrite both again */
                cr_assert_not_null(bw_pullup(&e.w));
                cr_expect_eq(fwrite(bw_pullup(&e.w), 1, 2 * n, f), 2 * n);
                cr_expect_eq(fclose(f), 0);
                memcpy(want, s, n);
                memcpy(want + n, s, n);
                memcpy(want + 2 * n, want, 2 * n);
                expect_output(&e, want, 4 * n, "fputs and fwrite of own bytes");
                cr_expect_eq(bw_error(&e.w), BW_OK);
                free(want);
                free(s);
                h_close(&e);
            }
}
#endif
