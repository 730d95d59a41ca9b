/* SPDX-License-Identifier: MIT */
/* writer_internal.h - what bufwriter.c and io.c share about a writer's
 * modes and storage. Nothing here is part of the public API. */
#ifndef BW_WRITER_INTERNAL_H
#define BW_WRITER_INTERNAL_H

#include "bufwriter.h"
#include "pool/pool_writer.h"

/* Modes (bw_writer.mode): BW__CONTIG, BW__CHAIN, BW__STREAM, BW__FIXED, in
 * bufwriter.h (section 11), where bw_data's inline fast path needs them. */

/* bw_writer.flags */
#define BW__EXTERNAL  0x1u /* contiguous: data is the caller's first buffer  */
#define BW__FD        0x2u /* streaming to w->m.s.fd rather than to a sink   */
#define BW__CSTR      0x10u /* bw_cstr stored a NUL at data + len, which a
                               string among printf's arguments may end at */

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
/* Segmented block sizes are multiples of this, so that the link (pointers
 * and sizes) at a block's end is aligned. */
#define BW__SEG_ALIGN ((size_t)16)

/* The position-to-offset arithmetic: the first held byte is at
 * data + (base - pos) when all held bytes are in the current block. */
static inline size_t bw__start(const bw_writer *w) { return (size_t)(w->base - w->pos); }

/* A walk's place among the held pieces (bw__piece). */
typedef struct bw__cursor {
    const bw__seg *seg;
    int started;
} bw__cursor;

/* The per-mode hooks: the one fixed set of what differs between modes.
 * Each mode implements them in its own section of bufwriter.c; the
 * dispatcher section there maps w->mode to them. A failure is recorded.
 * - make room: room for n contiguous bytes at data + len; with src also
 *   append src[0, n) (src may point into the held bytes). The caller
 *   checked the writer and its error.
 * - send: send every held byte where the mode has somewhere to send them
 *   (streaming); the others keep theirs. BW_OK or the recorded error.
 * - reset: give back every block (and reference) held; data and cap are 0
 *   after, but a fixed writer keeps the caller's buffer.
 * - make contiguous: the held bytes in one block with extra free bytes
 *   after them; their start, or NULL. Works while an error is recorded.
 * - walk: the next held piece (empty pieces included): 1, or 0 at the end.
 * - drop from the front: n <= bw_len held bytes; never records. */
BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src);
BW__INTERNAL int bw__send(bw_writer *w);
BW__INTERNAL void bw__drop_storage(bw_writer *w);
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra);
BW__INTERNAL int bw__piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                           size_t *n);
BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n);

/* I/O (io.c). One send of iov to fd that never raises SIGPIPE, whatever fd
 * is at that moment (bw_write_fd and a bw_init_fd writer both send through
 * it): bytes sent, or -1 with errno. */
struct iovec;
BW__INTERNAL ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt);

/* Cold paths io.c shares (bufwriter.c). Record the first error; send every
 * held byte (streaming; a failure is recorded, the rest stays held); send
 * p[0, n) from memory other than the buffer with nothing held; room that
 * leaves the held bytes' storage untouched until *old is given back
 * (contiguous, segmented). */
BW__INTERNAL int bw__fail(bw_writer *w, int rc);
BW__INTERNAL int bw__send_held(bw_writer *w);
BW__INTERNAL int bw__send_past(bw_writer *w, const void *p, size_t n);
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
/* printf output of need bytes, longer than the buffer, sent straight to a
 * streaming writer's sink after the held bytes (io.c, with the FILE
 * adapter). */
BW__INTERNAL int bw__vprintf_sent(bw_writer *w, size_t need, const char *fmt, va_list ap);

#endif /* BW_WRITER_INTERNAL_H */
