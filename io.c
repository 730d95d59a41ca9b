/* SPDX-License-Identifier: MIT */
/* io.c - getting bytes out of any writer: to a file descriptor (through
 * the one send loop, bw__send_iov in mode_stream.c, whose sends never
 * raise SIGPIPE), and a FILE* adapter for fprintf code (the FILE itself
 * comes from the platform layer). It calls the public API and the
 * dispatcher's cold paths only: no mode's file calls back into it. */
#include "writer_internal.h"

#include <errno.h>
#include <stdlib.h>

/* At most this many pieces per send (bw__fd_send sends fewer where the
 * system's limit, IOV_MAX, is lower). */
#define BW__IOV_BATCH 64

int bw_write_fd(bw_writer *w, int fd, size_t *written)
{
    struct iovec iov[BW__IOV_BATCH];
    size_t done = 0;
    int rc = BW_OK;

    if (written != NULL) *written = 0;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    w->flags &= (unsigned char)~BW__FD_ERRNO;
    while (rc == BW_OK && bw_len(w) != 0) {
        size_t n = bw_iovec(w, iov, BW__IOV_BATCH), sent;
        if (n > BW__IOV_BATCH) n = BW__IOV_BATCH;
        rc = bw__send_iov(fd, NULL, NULL, iov, n, &sent);
        if (rc == BW_OK && sent == 0) { /* only empty pieces: no progress, never loop */
            errno = EIO;
            rc = BW_EIO;
        }
        /* What went out is no longer held; a short write just loops. */
        bw__drop_front(w, sent);
        done += sent;
    }
    if (rc != BW_OK) {
        w->syserr = errno; /* not recorded: calling again continues, */
        w->flags |= BW__FD_ERRNO; /* but kept, for bw_errno */
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
    const bw__file_ops *ops; /* first: the platform's FILE calls it */
    bw_writer *w;
    bw__kept_block *kept;
    size_t n, cap;
} bw__file;
/* The platform reads the cookie as a pointer to its first member. */
typedef char bw__file_ops_first[offsetof(bw__file, ops) == 0 ? 1 : -1];

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

/* The FILE's calls: a write hands the bytes to the writer (0 with errno on
 * failure); close gives the kept blocks back. */
static int bw__file_put(void *cookie, const char *buf, size_t n)
{
    int rc = bw__file_write((bw__file *)cookie, buf, n);
    if (rc == BW_OK) return 1;
    errno = bw__errno_of(rc);
    return 0;
}

static void bw__file_closed(void *cookie) { bw__file_close((bw__file *)cookie); }

static const bw__file_ops bw__file_calls = {bw__file_put, bw__file_closed};

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
    f->ops = &bw__file_calls;
    f->w = w;
    return f;
}

FILE *bw_fopen(bw_writer *w)
{
    bw__file *f = bw__file_new(w);
    FILE *fp;
    if (f == NULL) return NULL;
    fp = bw__file_make(f);
    if (fp == NULL) bw__file_close(f);
    return fp;
}

#endif /* BW_HAVE_FILE_ADAPTER */
