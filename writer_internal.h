/* writer_internal.h - what bufwriter.c and io.c share about a writer's
 * modes and storage. Nothing here is part of the public API. */
#ifndef BW_WRITER_INTERNAL_H
#define BW_WRITER_INTERNAL_H

#include "bufwriter.h"
#include "pool/pool_internal.h"

/* Modes (bw_writer.mode). The all-zero writer is contiguous. */
#define BW__CONTIG 0
#define BW__CHAIN  1
#define BW__STREAM 2
#define BW__FIXED  3

/* bw_writer.flags */
#define BW__EXTERNAL  0x1u /* contiguous: data is the caller's first buffer  */
#define BW__FD        0x2u /* streaming to w->fd rather than to a sink       */

/* A segmented writer's link, in the last BW__SEG_HDR bytes of each block (a
 * trailer, so the block's start holds data and a detached block starts with
 * the bytes). The last block's held range is [start, w->len) when it is the
 * only block, else [0, w->len); earlier blocks hold [start, end). */
typedef struct bw__seg {
    unsigned char *data;  /* the block                                      */
    struct bw__seg *next; /* the next block's link; NULL for the last       */
    size_t start, end;    /* held bytes (not kept current for the last)     */
} bw__seg;
#define BW__SEG_HDR ((size_t)32)

/* The position-to-offset arithmetic: the first held byte is at
 * data + (base - pos) when all held bytes are in the current block. */
static inline size_t bw__start(const bw_writer *w) { return (size_t)(w->base - w->pos); }

/* Walk the held bytes block by block (empty pieces included). */
typedef struct bw__cursor {
    const bw__seg *seg;
    int started;
} bw__cursor;
BW__INTERNAL int bw__piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                           size_t *n);

/* Drop n <= bw_len held bytes from the front; never records. */
BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n);

/* I/O (io.c). One send of iov to fd that never raises SIGPIPE, whatever fd
 * is at that moment (bw_write_fd and a bw_init_fd writer both send through
 * it): bytes sent, or -1 with errno. */
struct iovec;
BW__INTERNAL ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt);

#endif /* BW_WRITER_INTERNAL_H */
