/* SPDX-License-Identifier: MIT */
/* writer_internal.h - what bufwriter.c and io.c share about a writer's
 * modes and storage. Nothing here is part of the public API. */
#ifndef BW_WRITER_INTERNAL_H
#define BW_WRITER_INTERNAL_H

#include "bufwriter.h"
#include "platform/platform.h"
#include "pool/pool_writer.h"

/* Modes (bw_writer.mode): BW__CONTIG, BW__CHAIN, BW__STREAM, BW__FIXED and
 * their count BW__NMODES, in bufwriter.h (section 11), where bw_data's
 * inline fast path needs them. */

/* bw_writer.flags */
#define BW__EXTERNAL  0x1u /* contiguous: data is the caller's first buffer  */
#define BW__FD        0x2u /* streaming to w->m.s.fd rather than to a sink   */
#define BW__CSTR      0x10u /* bw_cstr stored a NUL at data + len, which a
                               string among printf's arguments may end at */
#define BW__FD_ERRNO  0x20u /* syserr is a failed bw_write_fd's errno, with
                               no error recorded (bw_errno)              */
/* 0x40 is BW__LIMITED, in bufwriter.h: inline code reads it. */

/* A segmented writer's held bytes are a sequence of pieces, each a
 * (pointer, length) over a block the writer owns or over caller memory
 * linked by reference (bw_append_ref); the blocks it owns are kept apart.
 * The closed pieces sit in an array (m.c.pc[first, count)), oldest first;
 * the open piece, where writes go, is the current block's
 * data[open, len), not in the array. Its start is where the last closed
 * piece ends (or base), so positions need no other field: data[k] is at
 * position pos + k for every k from the open piece's start on. A
 * reference or a move closes the open piece and pushes pieces; the next
 * write goes on in the same block's free space as a new open piece. */
typedef struct bw__blk bw__blk;
struct bw__piece {
    const unsigned char *p; /* the first held byte                          */
    size_t n;               /* held bytes (never 0)                          */
    uint64_t end;           /* the position just past the piece              */
    bw__blk *blk;           /* the owned block it lies in; NULL: a reference */
    bw_done_fn done;        /* a reference's: done(ctx, orig, orig_n), once  */
    void *ctx;
    const void *orig;       /* the reference as given (consume and truncate
                               move p and n)                                 */
    size_t orig_n;
};
typedef struct bw__piece bw__piece;

/* An owned block's trailer, in its last BW__SEG_HDR bytes (a trailer, so a
 * detached block starts with the bytes). The current block (data) is not
 * in the writer's tree; every block in the tree holds at least one closed
 * piece, and goes back the moment it holds none. The tree is a treap by
 * address (bufwriter.c, bw__blk_link), so that bw_append_ref's check for
 * the writer's own memory is O(log blocks) however many moves brought
 * them. */
struct bw__blk {
    unsigned char *data;        /* the block                                */
    bw__blk *left, *right;      /* the writer's tree (m.c.blocks): lower and
                                   higher addresses                         */
    size_t pieces;              /* closed pieces that lie in it             */
};
#define BW__SEG_HDR ((size_t)32)
/* Segmented block sizes are multiples of this, so that the trailer
 * (pointers and sizes) at a block's end is aligned. */
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

/* A walk's place among the held pieces (bw__walk): the closed pieces'
 * index, then the open piece. */
typedef struct bw__cursor {
    size_t i;
    int started;
} bw__cursor;

/* A mode's operations: the one fixed set of what differs between modes.
 * Each mode fills one table (bw__mode_ops) in its section of bufwriter.c,
 * in this order, every entry given (a mode that has nothing to do for one
 * names a shared do-nothing function); the mode table there maps
 * w->mode to it, and the bw__ functions below call through it. A failure
 * is recorded.
 * - room: room for n contiguous bytes at data + len; with src also append
 *   src[0, n) (src may point into the held bytes). The caller checked the
 *   writer and its error.
 * - room kept: the same, leaving the held bytes' storage as it is until
 *   the caller gives *old back (contiguous, segmented; see bw__room_keep).
 * - send: send every held byte where the mode has somewhere to send them
 *   (streaming); the others keep theirs. BW_OK or the recorded error.
 * - reset: give back every block (and reference) held; data and cap are 0
 *   after, but a fixed writer keeps the caller's buffer.
 * - make contiguous: the held bytes in one block with extra free bytes
 *   after them; their start, or NULL. Works while an error is recorded.
 * - walk: the next held piece (empty pieces included): 1, or 0 at the end.
 * - pieces: how many non-empty pieces the held bytes are (bw_iovec's
 *   count), without a walk.
 * - drop from the front: n <= bw_len held bytes, base moved already; never
 *   records.
 * - cut: the held bytes end at pos (base <= pos <= tell); never records.
 * - overlaps: whether [p, p + n) lies in the writer's own storage.
 * - patch: write src[0, n) over the held bytes at [pos, pos + n) (checked
 *   by the caller; src may point into the held bytes). A segmented writer
 *   first copies the references there into a block of its own (the only
 *   case that needs memory); BW_ENOMEM (recorded) leaves everything as it
 *   was.
 * - block size: the real size of the one pooled block holding every held
 *   byte (what bw_detach hands out), or 0 (none, several, not the pool's).
 * - printf rest: printf's pass two, need bytes of output, known not to fit
 *   the free space with vsnprintf's NUL; the arguments may point into the
 *   held bytes (bw_vprintf).
 * - link: append data[0, n) by reference, done(ctx, data, n) once it is
 *   no longer needed; modes that cannot link copy and call done at once.
 * - take: move every held byte of src after dst's without copying, when
 *   the two modes allow it: 1, 0 to have them copied (bw_move), or a
 *   failure (recorded in dst).
 * - room at once: whether one room can take n bytes without sending part
 *   of them (streaming: no more than its buffer).
 * - traits: what the calls common to every mode need to know (BW__GROWS
 *   and the others below). */
typedef struct bw__mode_ops {
    int (*room)(bw_writer *w, size_t n, const void *src);
    int (*room_keep)(bw_writer *w, size_t n, void **old, size_t *old_cap);
    int (*send)(bw_writer *w);
    void (*drop_storage)(bw_writer *w);
    unsigned char *(*contiguous)(bw_writer *w, size_t extra);
    int (*walk)(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n);
    size_t (*pieces)(const bw_writer *w);
    void (*drop_front)(bw_writer *w, size_t n);
    void (*cut)(bw_writer *w, uint64_t pos);
    int (*overlaps)(const bw_writer *w, const void *p, size_t n);
    int (*patch)(bw_writer *w, uint64_t pos, const void *src, size_t n);
    size_t (*block_size)(const bw_writer *w);
    int (*printf_rest)(bw_writer *w, size_t need, const char *fmt, va_list ap);
    int (*link)(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx);
    int (*take)(bw_writer *dst, bw_writer *src);
    int (*room_at_once)(const bw_writer *w, size_t n);
    unsigned traits;
} bw__mode_ops;

/* The operations through the mode table (bufwriter.c), with what every
 * mode shares around them: bw__room checks the size and takes a small
 * message's first block itself, bw__room_keep checks the size,
 * bw__drop_front moves base and starts over when all is gone, and
 * bw__block_size answers 0 for no block or a caller's buffer. */
BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src);
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n);
BW__INTERNAL int bw__send(bw_writer *w);
BW__INTERNAL void bw__drop_storage(bw_writer *w);
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra);
BW__INTERNAL int bw__walk(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                          size_t *n);
BW__INTERNAL size_t bw__pieces(const bw_writer *w);
BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n);
BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos);
BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n);
BW__INTERNAL int bw__patch_at(bw_writer *w, uint64_t pos, const void *src, size_t n);
BW__INTERNAL size_t bw__block_size(const bw_writer *w);
BW__INTERNAL int bw__printf_rest(bw_writer *w, size_t need, const char *fmt, va_list ap);
BW__INTERNAL int bw__link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx);
BW__INTERNAL int bw__take(bw_writer *dst, bw_writer *src);

/* The traits: what the calls common to every mode ask of it, beyond the
 * operations (bw__traits: the table's). */
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

/* Sending to a file descriptor: bw__fd_send (platform/platform.h), through
 * which bw_write_fd and a bw_init_fd writer both send. */

/* Cold paths io.c shares (bufwriter.c). Record the first error; send every
 * held byte (streaming; a failure is recorded, the rest stays held); send
 * p[0, n) from memory other than the buffer with nothing held. */
BW__INTERNAL int bw__fail(bw_writer *w, int rc);
BW__INTERNAL int bw__send_held(bw_writer *w);
BW__INTERNAL int bw__send_past(bw_writer *w, const void *p, size_t n);
/* printf output of need bytes, longer than the buffer, sent straight to a
 * streaming writer's sink after the held bytes (io.c, with the FILE
 * adapter). */
#ifdef BW_HAVE_FILE_ADAPTER
BW__INTERNAL int bw__vprintf_sent(bw_writer *w, size_t need, const char *fmt, va_list ap);
#endif

#endif /* BW_WRITER_INTERNAL_H */
