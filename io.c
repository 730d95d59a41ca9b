/* io.c - getting bytes out: a writer or a chain to a file descriptor
 * (write / writev, short writes and EINTR handled), and a FILE* adapter
 * (fopencookie on glibc, funopen on the BSDs) for existing fprintf code. */
#include "bufwriter.h"
#include "pool/pool_internal.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

/* At most this many pieces per writev (and never more than IOV_MAX). */
#define BW__IOV_BATCH 64
#if defined(IOV_MAX) && IOV_MAX < BW__IOV_BATCH
#  undef BW__IOV_BATCH
#  define BW__IOV_BATCH IOV_MAX
#endif

int bw_write_fd(const bw_writer *w, int fd, size_t *written)
{
    size_t done = 0, len;
    int rc = BW_OK;
    if (written != NULL) *written = 0;
    if (w == NULL) return BW_EINVAL;
    len = w->len;
    while (done < len) {
        ssize_t k = write(fd, w->data + done, len - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = BW_EIO;
            break;
        }
        done += (size_t)k;
    }
    if (written != NULL) *written = done;
    return rc;
}

int bw_chain_write_fd(bw_chain *c, int fd, size_t *written)
{
    struct iovec iov[BW__IOV_BATCH];
    size_t done = 0;
    int rc = BW_OK;
    if (written != NULL) *written = 0;
    if (c == NULL) return BW_EINVAL;
    for (;;) {
        size_t n = bw_chain_iovec(c, iov, BW__IOV_BATCH);
        ssize_t k;
        if (n == 0) break;
        if (n > BW__IOV_BATCH) n = BW__IOV_BATCH;
        k = writev(fd, iov, (int)n);
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = BW_EIO;
            break;
        }
        /* What went out leaves the queue; a short write just loops. */
        bw__chain_consume_sent(c, (size_t)k);
        done += (size_t)k;
    }
    if (written != NULL) *written = done;
    return rc;
}

#ifdef BW_HAVE_FILE_ADAPTER
#if defined(__GLIBC__)
/* fopencookie and its function table. Declared here when the including
 * file did not ask for _GNU_SOURCE (the single header, included after
 * <stdio.h>): the table is four function pointers in every glibc since
 * 2.2, so the two declarations are the same to the ABI. */
#  ifdef _GNU_SOURCE
typedef cookie_io_functions_t bw__cookie_io;
#  else
typedef struct bw__cookie_io {
    ssize_t (*read)(void *, char *, size_t);
    ssize_t (*write)(void *, const char *, size_t);
    int (*seek)(void *, long long *, int);
    int (*close)(void *);
} bw__cookie_io;
extern FILE *fopencookie(void *cookie, const char *mode, bw__cookie_io io);
#  endif

/* glibc treats a return below the count as an error (the stream's error
 * flag is set; fprintf then returns a negative value). */
static ssize_t bw__cookie_writer(void *cookie, const char *buf, size_t n)
{
    return bw_write((bw_writer *)cookie, buf, n) == BW_OK ? (ssize_t)n : 0;
}
static ssize_t bw__cookie_chain(void *cookie, const char *buf, size_t n)
{
    return bw_chain_write((bw_chain *)cookie, buf, n) == BW_OK ? (ssize_t)n : 0;
}

static FILE *bw__fopen(void *cookie, ssize_t (*fn)(void *, const char *, size_t))
{
    bw__cookie_io io;
    if (cookie == NULL) {
        errno = EINVAL;
        return NULL;
    }
    memset(&io, 0, sizeof io);
    io.write = fn;
    return fopencookie(cookie, "w", io);
}
#else /* the BSDs and macOS: funopen */
static int bw__funopen_writer(void *cookie, const char *buf, int n)
{
    return bw_write((bw_writer *)cookie, buf, (size_t)n) == BW_OK ? n : -1;
}
static int bw__funopen_chain(void *cookie, const char *buf, int n)
{
    return bw_chain_write((bw_chain *)cookie, buf, (size_t)n) == BW_OK ? n : -1;
}
#endif

FILE *bw_fopen_writer(bw_writer *w)
{
#if defined(__GLIBC__)
    return bw__fopen(w, bw__cookie_writer);
#else
    if (w == NULL) { errno = EINVAL; return NULL; }
    return funopen(w, NULL, bw__funopen_writer, NULL, NULL);
#endif
}

FILE *bw_fopen_chain(bw_chain *c)
{
#if defined(__GLIBC__)
    return bw__fopen(c, bw__cookie_chain);
#else
    if (c == NULL) { errno = EINVAL; return NULL; }
    return funopen(c, NULL, bw__funopen_chain, NULL, NULL);
#endif
}
#endif /* BW_HAVE_FILE_ADAPTER */
