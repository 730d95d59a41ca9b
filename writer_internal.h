/* SPDX-License-Identifier: MIT */
/* writer_internal.h - what bufwriter.c and io.c share about a writer's
 * modes and storage. Nothing here is part of the public API. */
#ifndef BW_WRITER_INTERNAL_H
#define BW_WRITER_INTERNAL_H

#include "bufwriter.h"
#include "pool/pool_writer.h"

/* Modes (bw_writer.mode): BW__CONTIG, BW__CHAIN, BW__STREAM, BW__FIXED, in
 * bufwriter.h (section 11), where bw_data's inline fast path needs them. */

/* The modes as an enum, for the dispatcher's switches (bufwriter.c): they
 * name every mode and have no default, so that -Wswitch names each switch
 * a new mode must add its case to. */
typedef enum bw__mode {
    BW__M_CONTIG = BW__CONTIG,
    BW__M_CHAIN = BW__CHAIN,
    BW__M_STREAM = BW__STREAM,
    BW__M_FIXED = BW__FIXED
} bw__mode;
static inline bw__mode bw__mode_of(const bw_writer *w) { return (bw__mode)w->mode; }

/* bw_writer.flags */
#define BW__EXTERNAL  0x1u /* contiguous: data is the caller's first buffer  */
#define BW__FD        0x2u /* streaming to w->m.s.fd rather than to a sink   */
#define BW__CSTR      0x10u /* bw_cstr stored a NUL at data + len, which a
                               string among printf's arguments may end at */
#define BW__FD_ERRNO  0x20u /* syserr is a failed bw_write_fd's errno, with
                               no error recorded (bw_errno)              */
/* 0x40 is BW__LIMITED, in bufwriter.h: inline code reads it. */

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

/* True when n more bytes would take bw_tell past the size limit
 * (bw_set_limit): every call that adds bytes asks before it makes room or
 * writes anything. */
static inline int bw__over(const bw_writer *w, size_t n)
{
    uint64_t tell = w->pos + w->len;
    return (w->flags & BW__LIMITED) && n != 0 && (w->limit < tell || n > w->limit - tell);
}

/* A walk's place among the held pieces (bw__piece). */
typedef struct bw__cursor {
    const bw__seg *seg;
    int started;
} bw__cursor;

/* The per-mode hooks: the one fixed set of what differs between modes.
 * Each mode implements them in its own section of bufwriter.c; the
 * dispatcher section there maps w->mode to them, and is the only code
 * outside a section that reads the mode. A failure is recorded.
 * - make room: room for n contiguous bytes at data + len; with src also
 *   append src[0, n) (src may point into the held bytes). The caller
 *   checked the writer and its error.
 * - room kept: the same, leaving the held bytes' storage as it is until
 *   the caller gives *old back (contiguous, segmented; see bw__room_keep).
 * - room at once: whether one make room can take n bytes without sending
 *   part of them (streaming: no more than its buffer).
 * - send: send every held byte where the mode has somewhere to send them
 *   (streaming); the others keep theirs. BW_OK or the recorded error.
 * - reset: give back every block (and reference) held; data and cap are 0
 *   after, but a fixed writer keeps the caller's buffer.
 * - make contiguous: the held bytes in one block with extra free bytes
 *   after them; their start, or NULL. Works while an error is recorded.
 * - walk: the next held piece (empty pieces included): 1, or 0 at the end.
 * - drop from the front: n <= bw_len held bytes; never records.
 * - cut: the held bytes end at pos (base <= pos <= tell); never records.
 * - overlaps: whether [p, p + n) lies in any of the writer's storage.
 * - own: before a patch of [pos, pos + n), make those bytes the writer's
 *   to write (a segmented writer copies references there).
 * - block size: the real size of the one pooled block holding every held
 *   byte (what bw_detach hands out), or 0 (none, several, not the pool's).
 * - printf rest: printf's pass two, need bytes of output, known not to fit
 *   the free space with vsnprintf's NUL; the arguments may point into the
 *   held bytes (bw_vprintf).
 * - link: append data[0, n) by reference, done(ctx, data, n) once it is
 *   no longer needed; modes that cannot link copy and call done at once.
 * - take: move every held byte of src after dst's without copying, when
 *   the two modes allow it: 1, or 0 to have them copied (bw_move). */
BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src);
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n);
BW__INTERNAL int bw__send(bw_writer *w);
BW__INTERNAL void bw__drop_storage(bw_writer *w);
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra);
BW__INTERNAL int bw__piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                           size_t *n);
BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n);
BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos);
BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n);
BW__INTERNAL int bw__own(bw_writer *w, uint64_t pos, size_t n);
BW__INTERNAL size_t bw__block_size(const bw_writer *w);
BW__INTERNAL int bw__printf_rest(bw_writer *w, size_t need, const char *fmt, va_list ap);
BW__INTERNAL int bw__link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx);
BW__INTERNAL int bw__take(bw_writer *dst, bw_writer *src);

/* What the calls common to every mode ask of it, beyond the hooks: the
 * mode's traits (bw__traits, in the dispatcher). */
#define BW__GROWS   0x1u  /* one block that growth moves to a new one (its old
                             block goes back); the job's length teaches the
                             pool; the block and the first line are all the
                             writer holds (bw_release's inline way)           */
#define BW__LINKS   0x2u  /* pieces are linked, not copied: a failed append is
                             undone by cutting back to where it began         */
#define BW__SENDS   0x4u  /* held bytes go to a sink: nothing to move out     */
#define BW__NO_POOL 0x8u  /* the caller's buffer alone: never allocates, has
                             no pool, hands nothing out                       */
#define BW__BOUNDED 0x10u /* the buffer never grows: a full one has no room for
                             bw_cstr's NUL                                    */
BW__INTERNAL unsigned bw__traits(const bw_writer *w);

/* I/O (io.c). One send of iov to fd that never raises SIGPIPE, whatever fd
 * is at that moment (bw_write_fd and a bw_init_fd writer both send through
 * it): bytes sent, or -1 with errno. */
struct iovec;
BW__INTERNAL ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt);

/* Cold paths io.c shares (bufwriter.c). Record the first error; send every
 * held byte (streaming; a failure is recorded, the rest stays held); send
 * p[0, n) from memory other than the buffer with nothing held. */
BW__INTERNAL int bw__fail(bw_writer *w, int rc);
BW__INTERNAL int bw__send_held(bw_writer *w);
BW__INTERNAL int bw__send_past(bw_writer *w, const void *p, size_t n);
/* printf output of need bytes, longer than the buffer, sent straight to a
 * streaming writer's sink after the held bytes (io.c, with the FILE
 * adapter). */
BW__INTERNAL int bw__vprintf_sent(bw_writer *w, size_t need, const char *fmt, va_list ap);

#endif /* BW_WRITER_INTERNAL_H */
