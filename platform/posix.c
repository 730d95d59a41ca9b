/* SPDX-License-Identifier: MIT */
/* posix.c - the platform layer (platform.h) on POSIX systems: Linux with
 * glibc or musl, the BSDs, macOS. Only the Linux paths are tested on every
 * change (see README, "Platforms"); the BSD and macOS branches (funopen,
 * issetugid) are written to their manuals. */
#include "prelude.h"

#include "platform.h"

#if !defined(_WIN32)

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/auxv.h> /* getauxval(AT_SECURE) */
#  include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#  include <malloc.h> /* malloc_trim */
#endif

void bw__yield(void) { (void)sched_yield(); }

/* ---- the thread-exit hook: a pthread key's destructor ---- */

static pthread_key_t bw__exit_key;

bool bw__thread_exit_init(void (*fn)(void *))
{
    return pthread_key_create(&bw__exit_key, fn) == 0;
}

bool bw__thread_exit_set(void *value) { return pthread_setspecific(bw__exit_key, value) == 0; }

void bw__thread_exit_remove(void) { (void)pthread_key_delete(bw__exit_key); }

void bw__atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)pthread_atfork(prepare, parent, child);
}

/* A coarse clock is enough: decay periods are seconds, and the coarse one
 * costs a few nanoseconds (no timer read) where there is one. */
uint64_t bw__now_ms(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
#endif
        if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- memory ---- */

/* Large blocks (2 MiB and up) come straight from the kernel on Linux:
 * mmap'd at a 2 MiB boundary with MADV_HUGEPAGE, so where transparent huge
 * pages are on ("madvise" or "always") a fresh 10 MiB block costs 5 page
 * faults instead of 2,560: measured here, the first 10 MiB written into it
 * take about 1 ms against 40-110 ms with 4 KiB pages (0.25 ms when warm).
 * It also keeps them out of glibc's heap, whose sliding mmap threshold and
 * trimming made a 1 MiB job 6x slower when interleaved with malloc-heavy
 * code. Growth moves the pages (mremap), never the bytes. */
#if defined(__linux__)
#  define BW__HUGE_ALIGN ((size_t)2 << 20)
#  define BW__PAGE_ROUND(n) (((n) + 4095) & ~(size_t)4095)

/* Zeroed private pages. MAP_ANONYMOUS is not in POSIX 2008: glibc hides it
 * (and MADV_HUGEPAGE, mremap) from a program that asked for a POSIX level
 * alone before its first header, where the single header's prelude comes
 * too late to ask for more (BW_NO_FILE_ADAPTER needs only POSIX). Then a
 * private mapping of /dev/zero, the way before MAP_ANONYMOUS: Linux makes
 * it the same anonymous memory. */
static unsigned char *bw__map_zeros(size_t len)
{
#  ifdef MAP_ANONYMOUS
    return (unsigned char *)mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                 -1, 0);
#  else
#    ifdef O_CLOEXEC
    int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
#    else
    int fd = open("/dev/zero", O_RDWR);
#    endif
    void *m;
    if (fd < 0) return (unsigned char *)MAP_FAILED;
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    (void)close(fd);
    return (unsigned char *)m;
#  endif
}

void *bw__map(size_t size)
{
    size_t len = BW__PAGE_ROUND(size), head, tail;
    unsigned char *raw, *a;
    if (len < size || len > SIZE_MAX - BW__HUGE_ALIGN) return NULL;
    raw = bw__map_zeros(len + BW__HUGE_ALIGN);
    if (raw == (unsigned char *)MAP_FAILED) return NULL;
    a = (unsigned char *)(((uintptr_t)raw + BW__HUGE_ALIGN - 1) & ~(uintptr_t)(BW__HUGE_ALIGN - 1));
    head = (size_t)(a - raw);
    tail = BW__HUGE_ALIGN - head;
    if (head != 0) (void)munmap(raw, head);
    if (tail != 0) (void)munmap(a + len, tail);
#  ifdef MADV_HUGEPAGE
    (void)madvise(a, len, MADV_HUGEPAGE); /* a hint: fine if THP is off */
#  endif
    return a;
}

void bw__unmap(void *block, size_t size) { (void)munmap(block, BW__PAGE_ROUND(size)); }

/* At a 2 MiB boundary of a 2 MiB aligned block, so the huge pages below
 * keep stay whole. */
void bw__unmap_tail(void *block, size_t size, size_t keep)
{
    (void)munmap((unsigned char *)block + keep, BW__PAGE_ROUND(size) - keep);
}

void *bw__remap(void *block, size_t old_size, size_t new_size)
{
    void *nb = bw__map(new_size);
    if (nb == NULL) return NULL;
#  ifdef MREMAP_FIXED
    /* Move the pages onto the fresh aligned mapping: no copy, and the huge
     * pages stay huge. */
    if (mremap(block, BW__PAGE_ROUND(old_size), BW__PAGE_ROUND(new_size),
               MREMAP_MAYMOVE | MREMAP_FIXED, nb) == MAP_FAILED) {
        bw__unmap(nb, new_size);
        return NULL;
    }
#  else
    memcpy(nb, block, old_size < new_size ? old_size : new_size);
    bw__unmap(block, old_size);
#  endif
    return nb;
}
#endif

/* On the 2-core VM of bench/BENCHMARKS.md a fresh 128 KiB mapping written
 * a page at a time cost 265 us (a fault a page); populated in one call,
 * then written, 113 us. MADV_POPULATE_WRITE is 23 in Linux's uapi
 * headers; older C library headers lack the name, and an older kernel
 * answers EINVAL, which is ignored. madvise and the MADV_ names are hidden,
 * as MADV_HUGEPAGE above, from a program that asked for a POSIX level
 * alone (MADV_NORMAL tells): then pages fault in one at a time. */
#if defined(__linux__) && defined(MADV_NORMAL)
#  ifndef MADV_POPULATE_WRITE
#    define MADV_POPULATE_WRITE 23
#  endif
#  define BW__POPULATES 1
#endif

void bw__populate(void *block, size_t n)
{
#ifdef BW__POPULATES
    uintptr_t a = ((uintptr_t)block + 4095) & ~(uintptr_t)4095;
    uintptr_t e = ((uintptr_t)block + n) & ~(uintptr_t)4095;
    if (e > a) (void)madvise((void *)a, (size_t)(e - a), MADV_POPULATE_WRITE);
#else
    (void)block, (void)n;
#endif
}

/* glibc keeps freed memory of its main heap below the top chunk, so the
 * process's RSS stayed 4 MiB up after a trim of the pooled 256 KiB-1 MiB
 * classes: malloc_trim gives the free pages back. */
void bw__malloc_trim(void)
{
#if defined(__GLIBC__)
    (void)malloc_trim(0);
#endif
}

void *bw__malloc_pages(size_t size)
{
    const size_t page = 4096;
    return size % page == 0 ? aligned_alloc(page, size) : malloc(size);
}

bool bw__env_trusted(void)
{
#if defined(__linux__)
    return getauxval(AT_SECURE) == 0;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || \
      defined(__OpenBSD__) || defined(__DragonFly__)
    return !issetugid();
#else
    return true;
#endif
}

/* ---- file descriptors ---- */

/* O_CLOEXEC where the headers have it. */
#if defined(O_CLOEXEC)
#  define BW__O_CLOEXEC O_CLOEXEC
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
 * gets the guarded writev. At most IOV_MAX pieces go in one call: the
 * rest is a short write, which the callers loop on. */
ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt)
{
    int saved = errno;
#ifdef IOV_MAX
    if (cnt > IOV_MAX) cnt = IOV_MAX;
#endif
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

/* ---- the FILE adapter ---- */

#ifdef BW_HAVE_FILE_ADAPTER
static int bw__os_file_put(void *cookie, const char *buf, size_t n)
{
    return (*(const bw__file_ops *const *)cookie)->write(cookie, buf, n);
}

static int bw__os_file_end(void *cookie)
{
    const bw__file_ops *ops = *(const bw__file_ops *const *)cookie;
    if (ops->close != NULL) ops->close(cookie);
    return 0;
}

/* The stream cannot seek: a writer only appends. */
static int bw__no_seek(void)
{
    errno = ESPIPE;
    return -1;
}

#  if defined(__linux__) && !defined(__ANDROID__)
/* glibc and musl: fopencookie. The seek position is off64_t in glibc's
 * table and off_t in musl's (64 bits in both); the prelude's _GNU_SOURCE
 * declares it either way. */
static ssize_t bw__cookie_write(void *cookie, const char *buf, size_t n)
{
    /* A failure as each C library reads one (the stream's error flag set,
     * fflush and fprintf failing): glibc takes a return below the count
     * and wants no negative value; musl takes only a negative one (0 is
     * "nothing written", and the FILE would carry on). */
    if (bw__os_file_put(cookie, buf, n)) return (ssize_t)n;
#    if defined(__GLIBC__)
    return 0;
#    else
    return -1;
#    endif
}

#    if defined(__GLIBC__)
typedef off64_t bw__cookie_off;
#    else
typedef off_t bw__cookie_off;
#    endif

static int bw__cookie_seek(void *cookie, bw__cookie_off *off, int whence)
{
    return (void)cookie, (void)off, (void)whence, bw__no_seek();
}

FILE *bw__file_make(void *cookie)
{
    cookie_io_functions_t io;
    memset(&io, 0, sizeof io);
    io.write = bw__cookie_write;
    io.seek = bw__cookie_seek;
    io.close = bw__os_file_end;
    return fopencookie(cookie, "w", io);
}
#  else /* the BSDs, macOS, Android: funopen */
static int bw__funopen_write(void *cookie, const char *buf, int n)
{
    return bw__os_file_put(cookie, buf, (size_t)n) ? n : -1;
}

static fpos_t bw__funopen_seek(void *cookie, fpos_t off, int whence)
{
    return (void)cookie, (void)off, (void)whence, bw__no_seek();
}

FILE *bw__file_make(void *cookie)
{
    return funopen(cookie, NULL, bw__funopen_write, bw__funopen_seek, bw__os_file_end);
}
#  endif
#endif /* BW_HAVE_FILE_ADAPTER */

#else
/* ISO C wants something in every translation unit. */
typedef int bw__posix_unused;
#endif /* !_WIN32 */
