/* SPDX-License-Identifier: MIT */
/* test_fd.c - streaming to a file descriptor (a slow reader, a full
 * non-blocking socket, a reader that is gone: EPIPE without SIGPIPE, a closed
 * fd) and bw_write_fd in every mode (bufwriter.h, section 10). */
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

/* Streaming to a file descriptor, EPIPE, SIGPIPE                           */
/* ------------------------------------------------------------------------ */

/* A reader thread: reads until EOF in uneven pieces, sometimes pausing, and
 * compares with exp. */
typedef struct reader {
    int fd;
    int slow;
    const unsigned char *exp;
    size_t want, got;
    long bad;
} reader;

static void *reader_main(void *arg)
{
    reader *rd = (reader *)arg;
    unsigned char b[4096];
    long pieces = 0;
    for (;;) {
        size_t ask = rd->slow ? 1 + (rd->got * 7 + 13) % sizeof b : sizeof b;
        ssize_t k = read(rd->fd, b, ask), i;
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (i = 0; i < k; i++) {
            size_t at = rd->got + (size_t)i;
            rd->bad += at >= rd->want || b[i] != rd->exp[at];
        }
        rd->got += (size_t)k;
        if (rd->slow && ++pieces % 128 == 0) usleep(300);
    }
    return NULL;
}

Test(fd, fd_stream_to_pipe_with_slow_reader, .timeout = 120)
{
    static const size_t sizes[] = {1, 3, 10, 100, 100, 1000, 1000, 5000, 70000, 300000};
    work wk;
    bw_writer w;
    int fds[2];
    pthread_t t;
    reader rd;
    size_t i;
    work_make(&wk, 77, 4u << 20, sizes, sizeof sizes / sizeof sizes[0]);
    cr_assert_eq(pipe(fds), 0);
    memset(&rd, 0, sizeof rd);
    rd.fd = fds[0];
    rd.slow = 1;
    rd.exp = wk.s.d;
    rd.want = wk.s.len;
    cr_assert_eq(pthread_create(&t, NULL, reader_main, &rd), 0);
    cr_assert_eq(bw_init_fd(&w, NULL, 0, fds[1]), BW_OK);
    for (i = 0; i < wk.nops; i++)
        cr_assert_eq(do_op(&w, &wk, &wk.ops[i]), BW_OK, "op %zu", i);
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_tell(&w), wk.s.len);
    bw_release(&w);
    cr_expect_neq(fcntl(fds[1], F_GETFD), -1, "the library never closes the fd");
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    cr_expect_eq(rd.got, wk.s.len, "got %zu of %zu", rd.got, wk.s.len);
    cr_expect_eq(rd.bad, 0, "%ld bytes differ", rd.bad);
    work_free(&wk);
}

Test(fd, fd_stream_to_full_nonblocking_socket_records_eagain, .timeout = 60)
{
    work wk;
    bw_writer w;
    int sv[2], rc = BW_OK, e = 0, sndbuf = 16384;
    bytes got = {NULL, 0, 0};
    size_t i, rounds = 0;
    uint64_t before = 0;
    work_make(&wk, 5, 1u << 20, small_sizes, NSMALL);
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    set_nonblock(sv[0]);
    set_nonblock(sv[1]);
    cr_assert_eq(bw_init_fd(&w, NULL, 4096, sv[0]), BW_OK);
    for (i = 0; i < wk.nops; i++) {
        before = bw_tell(&w);
        errno = 0;
        rc = do_op(&w, &wk, &wk.ops[i]);
        e = errno;
        if (rc != BW_OK) break;
    }
    cr_assert_eq(rc, BW_EIO, "1 MiB into a full socket must fail (rc %d)", rc);
    cr_assert_eq(e, EAGAIN, "errno %d", e);
    cr_assert_eq(bw_error(&w), BW_EIO, "EAGAIN is recorded in streaming mode");
    cr_assert_leq(bw_tell(&w) - before, wk.ops[i].len);
    /* sent + held is exactly the accepted prefix */
    drain(sv[1], &got);
    cr_assert_eq((uint64_t)got.len + bw_len(&w), bw_tell(&w));
    cr_assert(memcmp(got.d, wk.s.d, got.len) == 0, "the peer got other bytes");
    held_is(&w, wk.s.d + got.len, bw_len(&w), "held after EAGAIN");
    cr_assert_eq(bw_puts(&w, "x"), BW_EIO, "refused while recorded");
    /* retry: clear_error + flush until all went out */
    for (;;) {
        bw_clear_error(&w);
        errno = 0;
        rc = bw_flush(&w);
        e = errno;
        drain(sv[1], &got);
        if (rc == BW_OK) break;
        cr_assert_eq(rc, BW_EIO);
        cr_assert_eq(e, EAGAIN);
        cr_assert_lt(++rounds, 100000);
    }
    drain(sv[1], &got);
    cr_assert_eq((uint64_t)got.len, bw_tell(&w), "every accepted byte arrives once");
    cr_assert(memcmp(got.d, wk.s.d, got.len) == 0, "the peer got other bytes");
    bw_release(&w);
    close_pair(sv);
    by_free(&got);
    work_free(&wk);
}

/* Signal state: the mask and SIGPIPE's disposition are unchanged, and
 * SIGPIPE is pending only if it was before. */
typedef struct sigstate {
    sigset_t mask;
    struct sigaction act;
} sigstate;

static void sig_save(sigstate *s)
{
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &s->mask), 0);
    cr_assert_eq(sigaction(SIGPIPE, NULL, &s->act), 0);
}

static void sig_expect_same(const sigstate *s, int pending, const char *where)
{
    sigstate now;
    sigset_t pend;
    int sig;
    sig_save(&now);
    for (sig = 1; sig < NSIG; sig++)
        cr_expect_eq(sigismember(&now.mask, sig), sigismember(&s->mask, sig),
                     "%s: the signal mask changed for signal %d", where, sig);
    cr_expect(now.act.sa_handler == s->act.sa_handler, "%s: SIGPIPE's disposition changed",
              where);
    cr_expect_eq(now.act.sa_flags, s->act.sa_flags, "%s", where);
    cr_assert_eq(sigpending(&pend), 0);
    cr_expect_eq(sigismember(&pend, SIGPIPE), pending, "%s: SIGPIPE pending is %d, expected %d",
                 where, sigismember(&pend, SIGPIPE), pending);
}

/* Streaming to an fd whose reader is gone: BW_EIO, errno EPIPE, alive. */
static void stream_to_dead_reader(int fd, const char *where)
{
    bw_writer w;
    unsigned char big[1000];
    int rc, e;
    memset(big, 'b', sizeof big);
    cr_assert_eq(bw_init_fd(&w, NULL, 256, fd), BW_OK);
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    expect_flush_eio(&w, EPIPE, where);
    held_is(&w, (const unsigned char *)"hello", 5, where);
    bw_clear_error(&w);
    errno = 0;
    rc = bw_write(&w, big, sizeof big); /* larger than the buffer */
    e = errno;
    cr_expect_eq(rc, BW_EIO, "%s: big write %d", where, rc);
    cr_expect_eq(e, EPIPE, "%s: big write errno %d", where, e);
    cr_expect_eq(bw_tell(&w), 5, "%s: nothing of the big write went out", where);
    bw_release(&w);
    cr_expect_neq(fcntl(fd, F_GETFD), -1, "%s: the library never closes the fd", where);
}

/* Stream into a pipe whose reader is gone; the signal state (pending
 * SIGPIPE: `pending`) is the same after as before. */
static void pipe_without_reader(const char *where, int pending)
{
    sigstate before;
    int fds[2];
    sig_save(&before);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    stream_to_dead_reader(fds[1], where);
    sig_expect_same(&before, pending, where);
    close(fds[1]);
}

Test(fd, fd_stream_to_pipe_without_reader_is_epipe_no_signal, .timeout = 60)
{
    signal(SIGPIPE, SIG_DFL); /* a SIGPIPE that got through would kill us */
    pipe_without_reader("pipe", 0);
}

Test(fd, fd_stream_to_pipe_without_reader_with_sigpipe_blocked_leaves_none_pending, .timeout = 60)
{
    sigset_t set;
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    pipe_without_reader("pipe, SIGPIPE blocked", 0);
}

Test(fd, fd_stream_to_pipe_without_reader_keeps_a_callers_pending_sigpipe, .timeout = 60)
{
    sigset_t set;
    struct timespec zero = {0, 0};
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    raise(SIGPIPE); /* the caller's own, pending */
    pipe_without_reader("pipe, SIGPIPE already pending", 1);
    (void)sigtimedwait(&set, NULL, &zero); /* take ours back */
}

Test(fd, fd_stream_to_socket_without_peer_is_epipe_no_signal, .timeout = 60)
{
    sigstate before;
    int sv[2];
    signal(SIGPIPE, SIG_DFL);
    sig_save(&before);
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    stream_to_dead_reader(sv[0], "socket");
    sig_expect_same(&before, 0, "socket");
    close(sv[0]);
}

Test(fd, fd_stream_to_closed_fd_is_ebadf, .timeout = 60)
{
    bw_writer w, c;
    int fd = closed_fd(), rc, e;
    size_t written = 77;
    cr_assert_eq(bw_init_fd(&w, NULL, 256, fd), BW_OK);
    cr_assert_eq(bw_puts(&w, "abc"), BW_OK);
    expect_flush_eio(&w, EBADF, "EBADF");
    held_is(&w, (const unsigned char *)"abc", 3, "EBADF");
    bw_release(&w);
    /* and bw_write_fd: the same failure, not recorded */
    cr_assert_eq(bw_init(&c, NULL, 0), BW_OK);
    cr_assert_eq(bw_puts(&c, "abc"), BW_OK);
    errno = 0;
    rc = bw_write_fd(&c, fd, &written);
    e = errno;
    cr_expect_eq(rc, BW_EIO);
    cr_expect_eq(e, EBADF, "errno %d", e);
    cr_expect_eq(written, 0);
    cr_expect_eq(bw_error(&c), BW_OK, "bw_write_fd never records");
    held_is(&c, (const unsigned char *)"abc", 3, "EBADF write_fd");
    bw_release(&c);
}

/* What big_message's writer is expected to send: its n bytes, "<tail>". */
#define BIG_MAX 800000
static unsigned char big_exp[BIG_MAX + 6];

/* A writer of mode on p (1 MiB of room) holding n (<= BIG_MAX) pattern
 * bytes (seed); big_exp gets them, then "<tail>", which the test writes
 * once n went out. */
static void big_message(mw *m, int mode, bw_pool *p, size_t n, unsigned seed)
{
    cr_assert_leq(n, BIG_MAX);
    mw_init(m, mode, p, 1u << 20);
    fill_pattern(&m->w, big_exp, n, seed);
    memcpy(big_exp + n, "<tail>", 6);
}

/* ------------------------------------------------------------------------ */
/* bw_write_fd sends everything (writev, short writes resumed) and consumes it;
 * on a streaming writer the sink is not called. */
Test(fd, write_fd_every_mode_sends_all_and_consumes, .timeout = 60)
{
    const size_t n = 700000;
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        test_alloc ta;
        bw_pool *p = fresh_pool(&ta, 65536, 0);
        mw m;
        int fds[2];
        pthread_t t;
        reader rd;
        size_t written = 0;
        big_message(&m, mode, p, n, (unsigned)mode);
        cr_assert_eq(bw_len(&m.w), n);
        cr_assert_eq(pipe(fds), 0);
        memset(&rd, 0, sizeof rd);
        rd.fd = fds[0];
        rd.slow = mode & 1;
        rd.exp = big_exp;
        rd.want = n + 6;
        cr_assert_eq(pthread_create(&t, NULL, reader_main, &rd), 0);
        cr_assert_eq(bw_write_fd(&m.w, fds[1], &written), BW_OK, "%s", mode_name[mode]);
        cr_expect_eq(written, n, "%s", mode_name[mode]);
        cr_expect_eq(bw_len(&m.w), 0, "%s: what went out is consumed", mode_name[mode]);
        cr_expect_eq(bw_tell(&m.w), n, "%s", mode_name[mode]);
        cr_expect_eq(bw_error(&m.w), BW_OK);
        /* still usable; written may be NULL */
        cr_assert_eq(bw_puts(&m.w, "<tail>"), BW_OK);
        cr_assert_eq(bw_write_fd(&m.w, fds[1], NULL), BW_OK, "%s", mode_name[mode]);
        cr_expect_eq(bw_len(&m.w), 0);
        cr_expect_eq(bw_tell(&m.w), n + 6);
        cr_expect_eq(m.s.calls, 0, "%s: bw_write_fd never calls the sink", mode_name[mode]);
        close(fds[1]);
        pthread_join(t, NULL);
        close(fds[0]);
        cr_expect_eq(rd.got, n + 6, "%s: the reader got %zu", mode_name[mode], rd.got);
        cr_expect_eq(rd.bad, 0, "%s: %ld bytes differ", mode_name[mode], rd.bad);
        mw_done(&m);
        ta_finish(&ta, p);
    }
}

/* More pieces than one writev takes (IOV_MAX is 1024 on Linux). */
Test(fd, write_fd_segmented_with_more_blocks_than_iov_max, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    unsigned char exp[1100];
    struct iovec one[1];
    int fds[2];
    pthread_t t;
    reader rd;
    size_t i, written = 0;
    p = fresh_pool(&ta, 4096, 0);
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    for (i = 0; i < sizeof exp; i++) {
        exp[i] = pat(i, 8);
        cr_assert_eq(bw_put_u8(&w, exp[i]), BW_OK);
        if (i + 1 < sizeof exp) /* the next byte goes to a new block */
            cr_assert_eq(bw_reserve(&w, bw_free_capacity(&w) + 1), BW_OK);
    }
    cr_assert_eq(bw_len(&w), sizeof exp);
    cr_assert_eq(bw_iovec(&w, one, 0), sizeof exp, "one entry per block");
    held_is(&w, exp, sizeof exp, "1100 blocks");
    cr_assert_eq(pipe(fds), 0);
    memset(&rd, 0, sizeof rd);
    rd.fd = fds[0];
    rd.exp = exp;
    rd.want = sizeof exp;
    cr_assert_eq(pthread_create(&t, NULL, reader_main, &rd), 0);
    cr_assert_eq(bw_write_fd(&w, fds[1], &written), BW_OK);
    cr_expect_eq(written, sizeof exp);
    cr_expect_eq(bw_len(&w), 0);
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    cr_expect_eq(rd.got, sizeof exp);
    cr_expect_eq(rd.bad, 0);
    bw_release(&w);
    ta_finish(&ta, p);
}

/* The 0.1 defect: an 800 KB message to a full non-blocking socket was resent
 * from byte 0 on every call. bw_write_fd returns BW_EIO/EAGAIN without
 * recording, counts what went out, keeps the rest, and continues. */
Test(fd, write_fd_nonblocking_every_mode_continues_where_it_stopped, .timeout = 60)
{
    const size_t n = 800000;
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        int sv[2], sndbuf = 32768, again = 0;
        bytes got = {NULL, 0, 0};
        size_t rounds = 0, total = n;
        big_message(&m, mode, NULL, n, 40u + (unsigned)mode);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        set_nonblock(sv[0]);
        set_nonblock(sv[1]);
        for (;;) {
            size_t held = bw_len(&m.w), written = 12345;
            int rc, e;
            errno = 0;
            rc = bw_write_fd(&m.w, sv[0], &written);
            e = errno;
            cr_assert_eq(bw_error(&m.w), BW_OK, "%s: bw_write_fd never records", mode_name[mode]);
            cr_assert_eq(written + bw_len(&m.w), held, "%s: written %zu, held %zu of %zu",
                         mode_name[mode], written, bw_len(&m.w), held);
            cr_assert_eq(bw_tell(&m.w), total, "%s", mode_name[mode]);
            if (rc == BW_OK) {
                cr_assert_eq(bw_len(&m.w), 0);
                break;
            }
            cr_assert_eq(rc, BW_EIO, "%s: rc %d", mode_name[mode], rc);
            cr_assert_eq(e, EAGAIN, "%s: errno %d", mode_name[mode], e);
            if (!again) {
                cr_assert_gt(written, 0, "%s: some went out first", mode_name[mode]);
                /* the writer is fine: it takes more bytes */
                cr_assert_eq(bw_puts(&m.w, "<tail>"), BW_OK, "%s", mode_name[mode]);
                total += 6;
                again = 1;
            }
            drain(sv[1], &got);
            cr_assert_lt(++rounds, 100000);
        }
        drain(sv[1], &got);
        cr_expect(again, "%s: the socket never filled", mode_name[mode]);
        cr_expect_eq(got.len, n + 6, "%s: the peer got %zu bytes of %zu", mode_name[mode],
                     got.len, n + 6);
        cr_expect(got.len == n + 6 && memcmp(got.d, big_exp, n + 6) == 0,
                  "%s: the peer got other bytes", mode_name[mode]);
        cr_expect_eq(m.s.calls, 0, "%s: the sink is not called", mode_name[mode]);
        close_pair(sv);
        by_free(&got);
        mw_done(&m);
    }
}

/* The stream byte at position t, for write_fd_segmented_backlog. */
static unsigned char backlog_byte(uint64_t t) { return (unsigned char)(t * 7 + t / 251); }

/* A segmented writer sent to a slow peer with bw_write_fd: 1,000 bytes a
 * round, the socket takes what fits, the peer reads about as much, so the
 * writer holds a backlog of a few KiB and sends from it in part. 0.4 made every new block twice
 * the last whatever the writer held (a backlog of 7,464 bytes ended in a
 * 16 MiB block); the pool memory it holds now stays within 16 x the most
 * it held, and the peer gets every byte in order. */
Test(fd, write_fd_segmented_backlog_holds_blocks_within_16_x_its_bytes, .timeout = 60)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p = mkpool(&o);
    bw_writer w;
    int sv[2], sndbuf = 4096;
    unsigned char buf[2000];
    size_t most = 0, top = 0, k, i;
    uint64_t sent = 0, got = 0, out;
    long bad = 0;
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    set_nonblock(sv[0]);
    set_nonblock(sv[1]);
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    for (k = 0; k < 20000 || bw_len(&w) != 0; k++) {
        ssize_t r;
        int rc;
        if (k < 20000) {
            for (i = 0; i < 1000; i++) buf[i] = backlog_byte(sent + i);
            cr_assert_eq(bw_write(&w, buf, 1000), BW_OK);
            sent += 1000;
        }
        if (bw_len(&w) > most) most = bw_len(&w);
        out = outstanding(p);
        if (out > top) top = (size_t)out;
        rc = bw_write_fd(&w, sv[0], NULL);
        cr_assert(rc == BW_OK || (rc == BW_EIO && bw_errno(&w) == EAGAIN), "rc %d", rc);
        /* The peer reads a little less than a round's worth until the
         * writer holds a backlog of a few KiB, then a little more. */
        r = read(sv[1], buf, bw_len(&w) > 6000 || k >= 20000 ? 1100 : 900);
        for (i = 0; r > 0 && i < (size_t)r; i++) bad += buf[i] != backlog_byte(got + i);
        if (r > 0) got += (uint64_t)r;
        cr_assert_lt(k, 100000);
    }
    for (;;) {
        ssize_t r = read(sv[1], buf, sizeof buf);
        if (r <= 0) break;
        for (i = 0; i < (size_t)r; i++) bad += buf[i] != backlog_byte(got + i);
        got += (uint64_t)r;
    }
    cr_expect_eq(got, sent, "the peer got %llu bytes of %llu", (unsigned long long)got,
                 (unsigned long long)sent);
    cr_expect_eq(bad, 0, "%ld bytes differ", bad);
    cr_expect_leq(top, 16 * most, "%zu bytes of pool memory for at most %zu held", top, most);
    close_pair(sv);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(fd, write_fd_with_recorded_error_sends_nothing, .timeout = 60)
{
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        int sv[2];
        size_t written = 99;
        bytes got = {NULL, 0, 0};
        mw_init(&m, mode, NULL, 4096);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        set_nonblock(sv[1]);
        cr_assert_eq(bw_puts(&m.w, "payload"), BW_OK);
        cr_assert_eq(bw_consume(&m.w, 8), BW_EINVAL); /* records BW_EINVAL */
        cr_assert_eq(bw_error(&m.w), BW_EINVAL);
        cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_EINVAL, "%s", mode_name[mode]);
        cr_expect_eq(written, 0, "%s", mode_name[mode]);
        cr_expect_eq(bw_write_fd(&m.w, sv[0], NULL), BW_EINVAL, "%s", mode_name[mode]);
        drain(sv[1], &got);
        cr_expect_eq(got.len, 0, "%s: nothing sent", mode_name[mode]);
        held_is(&m.w, (const unsigned char *)"payload", 7, mode_name[mode]);
        cr_expect_eq(bw_error(&m.w), BW_EINVAL);
        /* cleared: it goes out */
        bw_clear_error(&m.w);
        cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_OK, "%s", mode_name[mode]);
        cr_expect_eq(written, 7);
        drain(sv[1], &got);
        cr_expect(got.len == 7 && memcmp(got.d, "payload", 7) == 0, "%s", mode_name[mode]);
        close_pair(sv);
        by_free(&got);
        mw_done(&m);
    }
}

/* A kernel write that returns 0 (no byte taken, no error) happens on some
 * devices and FUSE files and cannot be provoked on a pipe or a socket, so
 * this program supplies its own writev and sendmsg, which take precedence
 * over libc's: for the fd in zero_fd they return 0, for every other fd they
 * make the real system call. 0.1 looped forever on such a return. */
static int zero_fd = -1;
static long zero_calls;

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (fd == zero_fd && zero_fd >= 0) {
        zero_calls++;
        return 0;
    }
    return (ssize_t)syscall(SYS_writev, fd, iov, cnt);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    if (fd == zero_fd && zero_fd >= 0) {
        zero_calls++;
        return 0;
    }
    return (ssize_t)syscall(SYS_sendmsg, fd, m, flags);
}

/* A write(2) of 0 is BW_EIO (errno EIO) after one call, never a loop,
 * and loses nothing: for bw_write_fd in every mode over a pipe and a socket,
 * and for a streaming fd writer's flush. */
Test(fd, write_fd_kernel_returning_zero_is_eio_not_a_loop, .timeout = 30)
{
    int mode, kind;
    for (kind = 0; kind < 2; kind++) {
        for (mode = 0; mode < M_COUNT; mode++) {
            mw m;
            int sv[2];
            size_t written = 99;
            bytes got = {NULL, 0, 0};
            const char *what = kind ? "socket" : "pipe";
            if (kind) cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
            else {
                cr_assert_eq(pipe(sv), 0);
                int t = sv[0]; /* sv[0] is the end written to, as for the socket */
                sv[0] = sv[1];
                sv[1] = t;
            }
            set_nonblock(sv[1]);
            mw_init(&m, mode, NULL, 4096);
            cr_assert_eq(bw_puts(&m.w, "payload"), BW_OK);
            zero_fd = sv[0];
            zero_calls = 0;
            errno = 0;
            cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_EIO, "%s %s", what, mode_name[mode]);
            cr_expect_eq(errno, EIO, "%s %s", what, mode_name[mode]);
            cr_expect_eq(zero_calls, 1, "%s %s: one call, no loop", what, mode_name[mode]);
            cr_expect_eq(written, 0);
            cr_expect_eq(bw_error(&m.w), BW_OK, "%s %s: bw_write_fd records nothing", what,
                         mode_name[mode]);
            held_is(&m.w, (const unsigned char *)"payload", 7, mode_name[mode]);
            zero_fd = -1; /* the fd works again: everything goes out once */
            cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_OK, "%s %s", what, mode_name[mode]);
            cr_expect_eq(written, 7);
            drain(sv[1], &got);
            cr_expect(got.len == 7 && memcmp(got.d, "payload", 7) == 0, "%s %s", what,
                      mode_name[mode]);
            mw_done(&m);

            { /* a streaming writer over the fd: its flush fails the same way */
                bw_writer w;
                got.len = 0;
                cr_assert_eq(bw_init_fd(&w, NULL, 64, sv[0]), BW_OK);
                cr_assert_eq(bw_puts(&w, "held"), BW_OK);
                zero_fd = sv[0];
                zero_calls = 0;
                cr_expect_eq(bw_flush(&w), BW_EIO, "%s: streaming flush", what);
                cr_expect_eq(zero_calls, 1, "%s: streaming flush, one call", what);
                cr_expect_eq(bw_error(&w), BW_EIO, "%s: a sink failure is recorded", what);
                cr_expect_eq(bw_len(&w), 4, "%s: the bytes stay held", what);
                zero_fd = -1;
                bw_clear_error(&w);
                cr_expect_eq(bw_flush(&w), BW_OK, "%s", what);
                drain(sv[1], &got);
                cr_expect(got.len == 4 && memcmp(got.d, "held", 4) == 0, "%s", what);
                bw_release(&w);
            }
            close_pair(sv);
            by_free(&got);
        }
    }
}

/* Nothing held is BW_OK without a system call (a closed fd shows). */
Test(fd, write_fd_with_nothing_held_makes_no_system_call, .timeout = 60)
{
    int mode, fd = closed_fd();
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        size_t written = 5;
        mw_init(&m, mode, NULL, 4096);
        cr_expect_eq(bw_write_fd(&m.w, fd, &written), BW_OK, "%s: never written",
                     mode_name[mode]);
        cr_expect_eq(written, 0);
        cr_assert_eq(bw_puts(&m.w, "abc"), BW_OK);
        cr_assert_eq(bw_consume(&m.w, 3), BW_OK);
        written = 5;
        cr_expect_eq(bw_write_fd(&m.w, fd, &written), BW_OK, "%s: all consumed",
                     mode_name[mode]);
        cr_expect_eq(written, 0);
        cr_expect_eq(bw_write_fd(&m.w, fd, NULL), BW_OK);
        cr_expect_eq(bw_error(&m.w), BW_OK);
        cr_expect_eq(m.s.calls, 0);
        mw_done(&m);
    }
}

Test(fd, write_fd_epipe_on_pipe_and_socket_without_dying, .timeout = 60)
{
    int mode, kind;
    sigstate before;
    signal(SIGPIPE, SIG_DFL);
    sig_save(&before);
    for (mode = 0; mode < M_COUNT; mode++) {
        for (kind = 0; kind < 2; kind++) {
            mw m;
            int fds[2], rc, e;
            size_t written = 5;
            const char *what = kind ? "socket" : "pipe";
            mw_init(&m, mode, NULL, 4096);
            if (kind) cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
            else cr_assert_eq(pipe(fds), 0);
            close(kind ? fds[1] : fds[0]);
            cr_assert_eq(bw_puts(&m.w, "abc"), BW_OK);
            errno = 0;
            rc = bw_write_fd(&m.w, kind ? fds[0] : fds[1], &written);
            e = errno;
            cr_expect_eq(rc, BW_EIO, "%s %s: rc %d", mode_name[mode], what, rc);
            cr_expect_eq(e, EPIPE, "%s %s: errno %d", mode_name[mode], what, e);
            cr_expect_eq(written, 0, "%s %s", mode_name[mode], what);
            cr_expect_eq(bw_error(&m.w), BW_OK, "%s %s: not recorded", mode_name[mode], what);
            held_is(&m.w, (const unsigned char *)"abc", 3, what);
            close(kind ? fds[0] : fds[1]);
            mw_done(&m);
        }
    }
    sig_expect_same(&before, 0, "bw_write_fd EPIPE");
}

/* ------------------------------------------------------------------------ */
