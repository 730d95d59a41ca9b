/* SPDX-License-Identifier: MIT */
/* io.c - getting bytes out of any writer: to a file descriptor (writev or
 * sendmsg, short writes and EINTR handled, never a SIGPIPE), and a FILE*
 * adapter (fopencookie on glibc, funopen on the BSDs) for fprintf code. */
/* The library's own build asks for POSIX's signal masks and glibc's
 * fopencookie here, before the first libc header, so both come from libc's
 * headers. In the single header it is too late to ask (the includer's
 * headers came first): see the fallbacks below. */
#if !defined(_GNU_SOURCE) && !defined(BUFWRITER_IMPLEMENTATION)
#  define _GNU_SOURCE 1
#endif

#include "writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* The single header's implementation in a strict -std=c11 file whose
 * <stdio.h> came before any feature-test macro: glibc then hides the POSIX
 * signal-mask calls. Their prototypes are POSIX's; the values of SIG_BLOCK
 * and SIG_SETMASK differ by architecture (MIPS, Alpha and SPARC are not
 * x86's 0 and 2), so they come from glibc's own per-architecture
 * <bits/sigaction.h>, which <signal.h> includes only in POSIX mode. */
#if defined(__GLIBC__) && !defined(__USE_POSIX199506)
#  include <bits/types/__sigset_t.h>
#  include <bits/sigaction.h>
typedef __sigset_t sigset_t;
extern int sigemptyset(sigset_t *set);
extern int sigaddset(sigset_t *set, int signo);
extern int sigismember(const sigset_t *set, int signo);
extern int sigpending(sigset_t *set);
extern int sigwait(const sigset_t *set, int *sig);
extern int pthread_sigmask(int how, const sigset_t *set, sigset_t *old);
#endif

/* bw__vprintf_sent's FILE buffer, on the stack: the size of the pieces
 * printf output longer than a streaming buffer goes to the sink in. */
#define BW__SENT_FILE_BUF 4096

/* At most this many pieces per writev (and never more than IOV_MAX). */
#define BW__IOV_BATCH 64
#if defined(IOV_MAX) && IOV_MAX < BW__IOV_BATCH
#  undef BW__IOV_BATCH
#  define BW__IOV_BATCH IOV_MAX
#endif

/* O_CLOEXEC is hidden from a strict -std=c11 build; glibc's own name is not. */
#if defined(O_CLOEXEC)
#  define BW__O_CLOEXEC O_CLOEXEC
#elif defined(__O_CLOEXEC)
#  define BW__O_CLOEXEC __O_CLOEXEC
#else
#  define BW__O_CLOEXEC 0
#endif

/* Whether a SIGPIPE is pending in this thread's own set: 1 or 0, or -1 when
 * that cannot be told. Linux keeps a pending set per thread (where the
 * SIGPIPE of a write goes) and one for the process (kill), and sigpending
 * shows only their union; /proc/thread-self/status shows the thread's own
 * as SigPnd, a hex mask with the highest signal first. Read into the stack
 * with open and read: no allocation, for a path that is rare anyway (a
 * SIGPIPE pending around a write that may have raised one). */
static int bw__sigpipe_in_thread_set(void)
{
#ifdef __linux__
    static const char key[] = "\nSigPnd:";
    char buf[1024];
    size_t k = 1; /* key chars matched: the file's start counts as a '\n' */
    int fd, digits = 0, found = 0, done = 0;
    uint64_t mask = 0;

    fd = open("/proc/thread-self/status", O_RDONLY | BW__O_CLOEXEC);
    if (fd < 0) return -1;
    while (!done) {
        ssize_t i, n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (i = 0; i < n && !done; i++) {
            char c = buf[i];
            if (!found) {
                if (c == key[k]) {
                    found = key[++k] == '\0';
                } else {
                    k = c == '\n' ? 1 : 0;
                }
            } else {
                unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                                    : 16u;
                if (d < 16) {
                    mask = (mask << 4) | d; /* the low 64 bits: signals 1 to 64 */
                    digits++;
                } else if (digits > 0 || (c != ' ' && c != '\t')) {
                    done = 1;
                }
            }
        }
    }
    (void)close(fd);
    if (!done || digits == 0) return -1;
    return (int)((mask >> (SIGPIPE - 1)) & 1u);
#else
    return -1;
#endif
}

/* SIGPIPE pending for this thread, told apart: 0 none at all, 1 one in the
 * thread's own set, and when one is pending elsewhere only: 0 if the
 * thread's own set is known to be empty, -1 if that cannot be told. */
static int bw__sigpipe_mine(void)
{
    sigset_t pending;
    if (sigpending(&pending) != 0) return -1;
    if (sigismember(&pending, SIGPIPE) != 1) return 0;
    return bw__sigpipe_in_thread_set();
}

/* writev with SIGPIPE blocked for this thread; a SIGPIPE that this write
 * raised is taken off the pending set before the old mask comes back, so
 * the process neither dies nor sees it later (as libcurl and OpenSSL do),
 * and any SIGPIPE of the caller's is left as it was: the library adds none.
 *
 * A write raises SIGPIPE when it fails with EPIPE, and also when it wrote
 * part of its bytes before the reader went (Linux returns the partial count
 * and raises it anyway). That SIGPIPE goes to the writing thread's own
 * pending set, where standard signals coalesce, and sigwait takes from that
 * set before the process's. So one is taken exactly when the thread's set
 * held none before the write and holds one now: then it is ours, and
 * sigwait takes it and not one of the caller's. A caller's one in the
 * thread's set already absorbed ours; one in the process's set is not
 * touched. Where the thread's set cannot be read (no /proc), a SIGPIPE
 * pending before the write counts as the caller's and nothing is taken. */
static ptrdiff_t bw__writev_guarded(int fd, const struct iovec *iov, int cnt)
{
    sigset_t pipe_set, old;
    int before, saved, i;
    size_t total = 0;
    ssize_t r;

    for (i = 0; i < cnt; i++) total += iov[i].iov_len;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0) return writev(fd, iov, cnt);
    before = bw__sigpipe_mine();
    r = writev(fd, iov, cnt);
    saved = errno;
    if ((r < 0 ? saved == EPIPE : (size_t)r < total) && before == 0 &&
        bw__sigpipe_mine() != 0) {
        int sig;
        (void)sigwait(&pipe_set, &sig);
    }
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return r;
}

/* The kind of fd is looked up at every send, never kept: dup2 can make a
 * file a pipe between two sends (a program that starts a pager on its
 * stdout). Only pipes, FIFOs and sockets raise SIGPIPE, and lseek fails with
 * ESPIPE on exactly those (POSIX; some systems add terminals, which then
 * just get the guard) at half the cost of an fstat: a file or a device
 * costs one lseek besides the writev. After ESPIPE, sendmsg with
 * MSG_NOSIGNAL: a socket takes it, anything else refuses with ENOTSOCK and
 * gets the guarded writev. */
ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt)
{
    int saved = errno;
    if (lseek(fd, 0, SEEK_CUR) != -1 || errno != ESPIPE) {
        errno = saved;
        return writev(fd, iov, cnt);
    }
#ifdef MSG_NOSIGNAL
    {
        struct msghdr m;
        ssize_t r;
        memset(&m, 0, sizeof m);
        m.msg_iov = (struct iovec *)(uintptr_t)iov;
        m.msg_iovlen = (size_t)cnt;
        r = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (r >= 0 || errno != ENOTSOCK) return r;
    }
#endif
    errno = saved;
    return bw__writev_guarded(fd, iov, cnt);
}

int bw_write_fd(bw_writer *w, int fd, size_t *written)
{
    struct iovec iov[BW__IOV_BATCH];
    size_t done = 0;
    int rc = BW_OK;

    if (written != NULL) *written = 0;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    w->flags &= (unsigned char)~BW__FD_ERRNO;
    if (bw_len(w) == 0) return BW_OK;
    for (;;) {
        size_t n = bw_iovec(w, iov, BW__IOV_BATCH);
        ptrdiff_t k;
        if (n == 0) break;
        if (n > BW__IOV_BATCH) n = BW__IOV_BATCH;
        k = bw__fd_send(fd, iov, (int)n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = EIO; /* no progress and no reason: never loop */
            rc = BW_EIO;           /* not recorded: calling again continues */
            w->syserr = errno;     /* but kept, for bw_errno */
            w->flags |= BW__FD_ERRNO;
            break;
        }
        /* What went out is no longer held; a short write just loops. */
        bw__drop_front(w, (size_t)k);
        done += (size_t)k;
    }
    if (written != NULL) *written = done;
    return rc;
}

#ifdef BW_HAVE_FILE_ADAPTER
/* A writer failure as the errno a FILE write reports. */
static int bw__errno_of(int rc)
{
    switch (rc) {
    case BW_ENOMEM:    return ENOMEM;
    case BW_EFULL:     return ENOSPC;
    case BW_EOVERFLOW: return EFBIG;
    case BW_ELIMIT:    return EFBIG;
    case BW_EINVAL:    return EINVAL;
    default:           return EIO;
    }
}

/* A FILE's state: its writer, and the blocks a contiguous writer outgrew
 * while the FILE wrote into it. glibc hands a write to the cookie when the
 * FILE's buffer fills, in the middle of an fprintf or fwrite whose
 * argument may be the writer's own held bytes, and then goes on reading
 * that argument: so the old block is kept until fclose (the blocks a writer
 * outgrows add up to less than the one it has). Segmented writers never
 * move their bytes; streaming and fixed writers send or move them in
 * place (bufwriter.h says so). */
typedef struct bw__kept_block {
    bw_pool *pool;
    void *block;
    size_t size;
} bw__kept_block;

typedef struct bw__file {
    bw_writer *w;
    bw__kept_block *kept;
    size_t n, cap;
} bw__file;

static int bw__file_write(bw__file *f, const char *buf, size_t n)
{
    bw_writer *w = f->w;
    if (w->err == BW_OK && bw__over(w, n)) return bw__fail(w, BW_ELIMIT); /* before a move */
    if ((bw__traits(w) & BW__GROWS) && w->err == BW_OK && w->cap - w->len < n) {
        void *old;
        size_t old_cap;
        int rc;
        if (f->n == f->cap) { /* room to note the old block, before it moves */
            size_t nc = f->cap ? 2 * f->cap : 8;
            bw__kept_block *k = (bw__kept_block *)realloc(f->kept, nc * sizeof *k);
            if (k == NULL) return bw__fail(w, BW_ENOMEM);
            f->kept = k;
            f->cap = nc;
        }
        rc = bw__room_keep(w, n, &old, &old_cap);
        if (rc != BW_OK) return rc;
        if (old != NULL) {
            f->kept[f->n].pool = w->pool;
            f->kept[f->n].block = old;
            f->kept[f->n].size = old_cap;
            f->n++;
        }
    }
    return bw_write(w, buf, n);
}

static void bw__file_close(bw__file *f)
{
    size_t i;
    for (i = 0; i < f->n; i++)
        (void)bw_pool_return(f->kept[i].pool, f->kept[i].block, f->kept[i].size);
    free(f->kept);
    free(f);
}

/* bw__vprintf_sent's FILE: the writer, and the errno its sink failed with
 * (the FILE's own calls overwrite errno after it). */
typedef struct bw__sent {
    bw_writer *w;
    int err_no;
} bw__sent;

static int bw__sent_piece(bw__sent *st, const char *buf, size_t n)
{
    if (st->w->err == BW_OK && bw__send_past(st->w, buf, n) == BW_OK) return 1;
    if (st->err_no == 0) st->err_no = errno;
    errno = EIO;
    return 0;
}

static bw__file *bw__file_new(bw_writer *w)
{
    bw__file *f;
    if (w == NULL) {
        errno = EINVAL;
        return NULL;
    }
    f = (bw__file *)calloc(1, sizeof *f);
    if (f == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    f->w = w;
    return f;
}

/* The FILE's calls, the same on every libc: a write hands the bytes to the
 * writer (0 with errno on failure); a writer is not seekable, so fseek and
 * ftell fail with ESPIPE; close gives the kept blocks back. bw__file_open
 * (per libc, below) makes the FILE, or returns NULL. */
static int bw__file_put(void *cookie, const char *buf, size_t n)
{
    int rc = bw__file_write((bw__file *)cookie, buf, n);
    if (rc == BW_OK) return 1;
    errno = bw__errno_of(rc);
    return 0;
}

static int bw__no_seek(void)
{
    errno = ESPIPE;
    return -1;
}

static int bw__file_closed(void *cookie)
{
    bw__file_close((bw__file *)cookie);
    return 0;
}

#if defined(__GLIBC__)
/* fopencookie and its function table are declared by <stdio.h> only when
 * _GNU_SOURCE was defined before the first libc header (glibc's __USE_GNU
 * says whether it was): always in the library's own build. In the single
 * header after a strict <stdio.h> they are declared here: the table is four
 * function pointers in every glibc since 2.2, the same to the ABI. The seek
 * position is glibc's __off64_t in both (long on 64-bit ABIs, long long on
 * 32-bit ones), which <stdio.h> always declares. */
#  ifdef __USE_GNU
typedef cookie_io_functions_t bw__cookie_io;
#  else
typedef struct bw__cookie_io {
    ssize_t (*read)(void *, char *, size_t);
    ssize_t (*write)(void *, const char *, size_t);
    int (*seek)(void *, __off64_t *, int);
    int (*close)(void *);
} bw__cookie_io;
extern FILE *fopencookie(void *cookie, const char *mode, bw__cookie_io io);
#  endif

static ssize_t bw__cookie_write(void *cookie, const char *buf, size_t n)
{
    /* glibc takes a return below the count as an error (the stream's error
     * flag is set; fprintf then returns a negative value). */
    return bw__file_put(cookie, buf, n) ? (ssize_t)n : 0;
}

static int bw__cookie_seek(void *cookie, __off64_t *off, int whence)
{
    (void)cookie;
    (void)off;
    (void)whence;
    return bw__no_seek();
}

static FILE *bw__file_open(bw__file *f)
{
    bw__cookie_io io;
    memset(&io, 0, sizeof io);
    io.write = bw__cookie_write;
    io.seek = bw__cookie_seek;
    io.close = bw__file_closed;
    return fopencookie(f, "w", io);
}

/* The FILE behind bw__vprintf_sent: what the FILE hands over goes to the
 * sink at once, never into the buffer. */
static ssize_t bw__sent_write(void *cookie, const char *buf, size_t n)
{
    return bw__sent_piece((bw__sent *)cookie, buf, n) ? (ssize_t)n : 0;
}

static FILE *bw__sent_open(bw__sent *st)
{
    bw__cookie_io io;
    memset(&io, 0, sizeof io);
    io.write = bw__sent_write;
    return fopencookie(st, "w", io);
}
#else /* the BSDs and macOS: funopen */
static int bw__funopen_write(void *cookie, const char *buf, int n)
{
    return bw__file_put(cookie, buf, (size_t)n) ? n : -1;
}

static fpos_t bw__funopen_seek(void *cookie, fpos_t off, int whence)
{
    (void)cookie;
    (void)off;
    (void)whence;
    return bw__no_seek();
}

static FILE *bw__file_open(bw__file *f)
{
    return funopen(f, NULL, bw__funopen_write, bw__funopen_seek, bw__file_closed);
}

static int bw__sent_write(void *cookie, const char *buf, int n)
{
    return bw__sent_piece((bw__sent *)cookie, buf, (size_t)n) ? n : -1;
}

static FILE *bw__sent_open(bw__sent *st)
{
    return funopen(st, NULL, bw__sent_write, NULL, NULL);
}
#endif

FILE *bw_fopen(bw_writer *w)
{
    bw__file *f = bw__file_new(w);
    FILE *fp;
    if (f == NULL) return NULL;
    fp = bw__file_open(f);
    if (fp == NULL) bw__file_close(f);
    return fp;
}

/* printf output longer than a streaming writer's buffer: the held bytes
 * are sent, then the output goes to the sink in the pieces the FILE hands
 * over (its buffer is on the stack), so memory stays bounded whatever the
 * output's length, and the buffer, where arguments may point, is neither
 * written nor reused. On a failure the bytes sent are a prefix (bw_tell
 * says how many). */
BW__INTERNAL int bw__vprintf_sent(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    char buf[BW__SENT_FILE_BUF];
    bw__sent st;
    FILE *f;
    int r, rc = bw_len(w) != 0 ? bw__send_held(w) : BW_OK;
    if (rc != BW_OK) return rc;
    st.w = w;
    st.err_no = 0;
    f = bw__sent_open(&st);
    if (f == NULL) return bw__fail(w, BW_ENOMEM);
    (void)setvbuf(f, buf, _IOFBF, sizeof buf);
    r = vfprintf(f, fmt, ap);
    if (fclose(f) != 0 && w->err == BW_OK) (void)bw__fail(w, BW_EIO);
    if (w->err != BW_OK) {
        if (st.err_no != 0) errno = st.err_no; /* the sink's, as for any write */
        return w->err;
    }
    return r >= 0 && (size_t)r == need ? BW_OK : bw__fail(w, BW_EINVAL);
}
#endif /* BW_HAVE_FILE_ADAPTER */
