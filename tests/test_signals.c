/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE 1 /* pthread_kill, sigtimedwait, fileno under -std=c11 */
/* test_signals.c - output to a file descriptor never lets a SIGPIPE of the
 * library's own through, and never leaves one behind, in the cases that are
 * easy to get wrong:
 *
 *   - a blocking pipe write that was part done when the reader went away
 *     (the kernel returns the partial count and raises SIGPIPE anyway), for
 *     bw_write_fd of a contiguous and of a segmented writer and for the
 *     flush of a bw_init_fd writer;
 *   - a bw_init_fd writer whose descriptor was a regular file at init and is
 *     a pipe by the time it sends (dup2, as a program that starts a pager on
 *     its stdout does);
 *   - a SIGPIPE of the caller's already pending and blocked, directed at the
 *     process or at the thread: afterwards exactly the caller's one is
 *     pending, not one more.
 *
 * Each case runs in a forked child with SIGPIPE's default disposition, so a
 * signal that got through kills the child and the parent sees it. */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* In the child: report a failed check on stderr and exit with code 1 (no
 * Criterion calls there: the child is not the process Criterion watches). */
#define CHILD_CHECK(cond, ...)                                                 \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "[child] %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

/* Run fn(arg) in a forked child with SIGPIPE at its default disposition and
 * unblocked; it must exit with status 0, not die of a signal. */
static void in_child(const char *what, void (*fn)(int), int arg)
{
    pid_t pid;
    int status = 0;
    fflush(NULL);
    pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        sigset_t set;
        signal(SIGPIPE, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        fn(arg);
        _exit(0);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(!WIFSIGNALED(status), "%s: the child was killed by signal %d%s", what,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0,
              WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE ? " (SIGPIPE)" : "");
    cr_expect(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
              "%s: the child exited with status %d", what,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* SIGPIPE pending for this thread, by either set (sigpending's union). */
static int sigpipe_pending(void)
{
    sigset_t p;
    CHILD_CHECK(sigpending(&p) == 0, "sigpending: %s", strerror(errno));
    return sigismember(&p, SIGPIPE) == 1;
}

static int sigpipe_blocked(void)
{
    sigset_t m;
    CHILD_CHECK(pthread_sigmask(SIG_SETMASK, NULL, &m) == 0, "pthread_sigmask");
    return sigismember(&m, SIGPIPE) == 1;
}

/* ------------------------------------------------------------------------ */
/* A reader that goes away in the middle of a blocking write                */
/* ------------------------------------------------------------------------ */

#define BIG ((size_t)4 << 20)     /* far more than a pipe holds             */
#define READ_FIRST ((size_t)100000) /* what the reader takes before it goes */

typedef struct reader {
    int fd;
    size_t got;
    int bad; /* a byte other than the pattern's */
} reader;

static void *read_some_then_close(void *arg)
{
    reader *r = (reader *)arg;
    unsigned char buf[8192];
    while (r->got < READ_FIRST) {
        size_t want = READ_FIRST - r->got < sizeof buf ? READ_FIRST - r->got : sizeof buf;
        ssize_t k = read(r->fd, buf, want);
        size_t i;
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (i = 0; i < (size_t)k; i++)
            if (buf[i] != pat(r->got + i, 6)) r->bad = 1;
        r->got += (size_t)k;
    }
    close(r->fd); /* while the writer is blocked with most of its bytes */
    return NULL;
}

enum { W_CONTIG, W_CHAIN, W_STREAM };
static const char *const wname[] = {"contiguous bw_write_fd", "segmented bw_write_fd",
                                    "bw_init_fd flush"};

static void partial_write_child(int kind)
{
    unsigned char *src = (unsigned char *)malloc(BIG);
    int fds[2], rc, e;
    size_t i, written = 0;
    pthread_t t;
    reader r;
    bw_writer w;

    CHILD_CHECK(src != NULL, "malloc");
    for (i = 0; i < BIG; i++) src[i] = pat(i, 6);
    CHILD_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
    if (kind == W_CONTIG) rc = bw_init(&w, NULL, BIG);
    else if (kind == W_CHAIN) rc = bw_init_chain(&w, NULL);
    else rc = bw_init_fd(&w, NULL, 2 * BIG, fds[1]); /* all of it held until the flush */
    CHILD_CHECK(rc == BW_OK, "init %d", rc);
    if (kind == W_CHAIN) {
        for (i = 0; i < BIG; i += 65536) CHILD_CHECK(bw_write(&w, src + i, 65536) == BW_OK, "write");
        /* Several blocks, all in one writev, so the reader leaves during it. */
        CHILD_CHECK(bw_iovec(&w, NULL, 0) >= 2 && bw_iovec(&w, NULL, 0) <= 64, "%zu pieces",
                    bw_iovec(&w, NULL, 0));
    } else {
        CHILD_CHECK(bw_write(&w, src, BIG) == BW_OK, "write");
    }
    CHILD_CHECK(bw_len(&w) == BIG, "held %zu", bw_len(&w));

    memset(&r, 0, sizeof r);
    r.fd = fds[0];
    CHILD_CHECK(pthread_create(&t, NULL, read_some_then_close, &r) == 0, "pthread_create");
    errno = 0;
    if (kind == W_STREAM) {
        rc = bw_flush(&w);
        e = errno;
        written = (size_t)bw_tell(&w) - bw_len(&w);
    } else {
        rc = bw_write_fd(&w, fds[1], &written);
        e = errno;
    }
    CHILD_CHECK(pthread_join(t, NULL) == 0, "pthread_join");

    /* Alive: the SIGPIPE of the partial write was taken, not delivered. */
    CHILD_CHECK(rc == BW_EIO, "rc %d", rc);
    CHILD_CHECK(e == EPIPE, "errno %d (%s)", e, strerror(e));
    CHILD_CHECK(r.got == READ_FIRST && !r.bad, "the reader got %zu bytes%s", r.got,
                r.bad ? ", some of them wrong" : "");
    CHILD_CHECK(written >= READ_FIRST && written < BIG, "%zu bytes written", written);
    CHILD_CHECK(bw_len(&w) == BIG - written, "held %zu after %zu written", bw_len(&w), written);
    CHILD_CHECK(!sigpipe_blocked(), "SIGPIPE left blocked");
    CHILD_CHECK(!sigpipe_pending(), "a SIGPIPE left pending");
    if (kind == W_STREAM) CHILD_CHECK(bw_error(&w) == BW_EIO, "not recorded");
    bw_release(&w);
    close(fds[1]);
    free(src);
}

Test(signals, reader_leaving_during_a_partial_pipe_write_kills_nobody, .timeout = 120)
{
    int kind;
    for (kind = W_CONTIG; kind <= W_STREAM; kind++)
        in_child(wname[kind], partial_write_child, kind);
}

/* ------------------------------------------------------------------------ */
/* A bw_init_fd descriptor that becomes a pipe after init                   */
/* ------------------------------------------------------------------------ */

static void dup2_pipe_child(int unused)
{
    FILE *f = tmpfile();
    int fd, p[2], rc, e;
    bw_writer w;
    (void)unused;

    CHILD_CHECK(f != NULL, "tmpfile: %s", strerror(errno));
    fd = fileno(f);
    CHILD_CHECK(bw_init_fd(&w, NULL, 0, fd) == BW_OK, "init"); /* a regular file now */
    CHILD_CHECK(bw_puts(&w, "to the file\n") == BW_OK && bw_flush(&w) == BW_OK, "file flush");
    CHILD_CHECK(lseek(fd, 0, SEEK_CUR) == 12, "the file got %ld bytes", (long)lseek(fd, 0, SEEK_CUR));

    /* Now a pipe whose reader is gone (a pager that quit) */
    CHILD_CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
    close(p[0]);
    CHILD_CHECK(dup2(p[1], fd) == fd, "dup2: %s", strerror(errno));
    close(p[1]);

    CHILD_CHECK(bw_puts(&w, "to the pager\n") == BW_OK, "puts");
    errno = 0;
    rc = bw_flush(&w);
    e = errno;
    CHILD_CHECK(rc == BW_EIO, "flush %d", rc);
    CHILD_CHECK(e == EPIPE, "errno %d (%s)", e, strerror(e));
    CHILD_CHECK(bw_len(&w) == 13, "held %zu", bw_len(&w));
    CHILD_CHECK(!sigpipe_blocked(), "SIGPIPE left blocked");
    CHILD_CHECK(!sigpipe_pending(), "a SIGPIPE left pending");
    bw_release(&w);
    fclose(f);
}

Test(signals, fd_writer_whose_file_becomes_a_pipe_gets_epipe_not_a_signal, .timeout = 60)
{
    in_child("bw_init_fd on a file, then dup2 a pipe without reader onto it",
             dup2_pipe_child, 0);
}

/* ------------------------------------------------------------------------ */
/* A SIGPIPE of the caller's pending before the write                       */
/* ------------------------------------------------------------------------ */

/* case: bit 0 = directed at the thread (else the process), bit 1 = through a
 * bw_init_fd writer's flush (else bw_write_fd of a segmented writer). */
static void callers_pending_child(int c)
{
    const char *whose = (c & 1) ? "thread-directed" : "process-directed";
    struct timespec zero = {0, 0};
    sigset_t set;
    int fds[2], rc, e, n = 0;
    bw_writer w;

    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    CHILD_CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL) == 0, "block");
    if (c & 1) CHILD_CHECK(pthread_kill(pthread_self(), SIGPIPE) == 0, "pthread_kill");
    else CHILD_CHECK(kill(getpid(), SIGPIPE) == 0, "kill");
    CHILD_CHECK(sigpipe_pending(), "%s: the caller's SIGPIPE is not pending", whose);

    CHILD_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
    close(fds[0]);
    if (c & 2) {
        CHILD_CHECK(bw_init_fd(&w, NULL, 0, fds[1]) == BW_OK, "init");
        CHILD_CHECK(bw_puts(&w, "abc") == BW_OK, "puts");
        errno = 0;
        rc = bw_flush(&w);
    } else {
        CHILD_CHECK(bw_init_chain(&w, NULL) == BW_OK, "init");
        CHILD_CHECK(bw_puts(&w, "abc") == BW_OK, "puts");
        errno = 0;
        rc = bw_write_fd(&w, fds[1], NULL);
    }
    e = errno;
    CHILD_CHECK(rc == BW_EIO, "%s: rc %d", whose, rc);
    CHILD_CHECK(e == EPIPE, "%s: errno %d (%s)", whose, e, strerror(e));
    CHILD_CHECK(sigpipe_blocked(), "%s: the caller's mask changed", whose);

    /* Take every SIGPIPE pending: the caller's one, and nothing else. */
    while (sigtimedwait(&set, NULL, &zero) == SIGPIPE) n++;
    CHILD_CHECK(n == 1, "%s, %s: %d SIGPIPEs pending, the caller had 1", whose,
                (c & 2) ? "bw_init_fd flush" : "bw_write_fd", n);
    bw_release(&w);
    close(fds[1]);
}

Test(signals, callers_pending_sigpipe_stays_the_only_one, .timeout = 60)
{
    static const char *const what[] = {
        "process-directed SIGPIPE pending, bw_write_fd",
        "thread-directed SIGPIPE pending, bw_write_fd",
        "process-directed SIGPIPE pending, bw_init_fd flush",
        "thread-directed SIGPIPE pending, bw_init_fd flush",
    };
    int c;
    for (c = 0; c < 4; c++) in_child(what[c], callers_pending_child, c);
}
