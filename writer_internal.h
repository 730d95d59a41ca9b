/* SPDX-License-Identifier: MIT */
/* writer_internal.h - what the writer's files (bufwriter.c, the mode_*.c
 * files, io.c) share about a writer's modes and storage. Nothing here is
 * part of the public API. */
#ifndef BW_WRITER_INTERNAL_H
#define BW_WRITER_INTERNAL_H

#include "bufwriter.h"
#include "platform/platform.h"
#include "pool/pool_writer.h"

/* Modes (bw_writer.mode): BW__CONTIG, BW__SEG, BW__STREAM, BW__FIXED and
 * their count BW__NMODES, in bufwriter.h (section 11), where bw_data's
 * inline fast path needs them. */

/* bw_writer.flags */
#define BW__FD        0x2u /* streaming to w->m.s.fd rather than to a sink   */
#define BW__DONES     0x8u /* segmented: a piece held may have a done to call
                              (a reset walks the records only then)       */
#define BW__FILLING   0x8u /* contiguous (the bit is BW__DONES in a segmented
                              writer, whose reset walks the records before
                              bw__reset clears it): cap is a window of a
                              fresh block of m.g.block bytes whose pages
                              past it were never touched (mode_contig.c) */
#define BW__CSTR      0x10u /* bw_cstr stored a NUL at data + len, which a
                               string among printf's arguments may end at */
#define BW__FD_ERRNO  0x20u /* syserr is a failed bw_write_fd's errno, with
                               no error recorded (bw_errno)              */
#define BW__FAILED    0x80u /* an error is recorded (err != BW_OK): set with it
                               by bw__fail, cleared with it, so a small
                               message's first put tests the mode, the size
                               limit and the error with one 16-bit load
                               (bw_reserve)                                */
/* 0x1 is BW__EXTERNAL, 0x4 BW__RESERVED and 0x40 BW__LIMITED, in
 * bufwriter.h: inline code reads them. */

/* A segmented writer's held bytes are a sequence of pieces, each a
 * (pointer, length) over a block the writer owns or over caller memory
 * linked by reference (bw_append_ref); the blocks it owns are kept apart.
 * The closed pieces sit in chunks of records (mode_seg.c, bw__pchunk), a
 * list from m.c.head to m.c.tail, oldest first; the open piece, where
 * writes go, is the current block's data[open, len), not among them. Its
 * start is where the last closed piece ends (or base), so positions need
 * no other field: data[k] is at position pos + k for every k from the open
 * piece's start on. A
 * reference or a move closes the open piece and pushes pieces; the next
 * write goes on in the same block's free space as a new open piece. */
typedef struct bw__blk bw__blk;
struct bw__piece {
    const unsigned char *p; /* the first held byte                          */
    size_t n;               /* held bytes (never 0)                          */
    uint64_t end;           /* the position just past the piece              */
    uintptr_t own;          /* the owned block it lies in (a bw__blk *); 0: a
                               reference; odd: a reference with a done, whose
                               bw__aside is at own - 1 (seg_internal.h)      */
};
typedef struct bw__piece bw__piece;

/* An owned block's trailer, in its last BW__SEG_HDR bytes (a trailer, so a
 * detached block starts with the bytes). The current block (data) is not
 * in the writer's tree; every block in the tree holds at least one closed
 * piece, and goes back the moment it holds none. The tree is a treap by
 * address (mode_seg.c, bw__blk_link), so that bw_append_ref's check for
 * the writer's own memory is O(log blocks) however many moves brought
 * them. */
struct bw__blk {
    unsigned char *data;        /* the block                                */
    bw__blk *left, *right;      /* the writer's tree (m.c.blocks): lower and
                                   higher addresses                         */
    size_t pieces;              /* closed pieces that lie in it             */
};
#define BW__SEG_HDR ((size_t)32)
#if defined(BW_DEBUG) || defined(BW_SEG_CHECK)
/* Every invariant of a segmented writer's pieces, owned blocks, counts and
 * positions (mode_seg.c); aborts naming the one broken. Run after every
 * segmented operation in BW_DEBUG builds, and with BW_SEG_CHECK alone (the
 * fuzzer's build: the pool unchecked). */
#  define BW__SEG_CHECKS 1
BW__INTERNAL void bw__seg_check(const bw_writer *w);
#endif
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
 * chunk and index, then the open piece. */
typedef struct bw__cursor {
    size_t i;
    int started;
    const void *chunk; /* segmented: the chunk of records i is in */
} bw__cursor;

/* A mode's operations: the one fixed set of what differs between modes.
 * Each mode fills one table (bw__mode_ops) in its file (mode_contig.c and
 * the rest), by name, every entry given (a mode that has nothing to do for
 * one names a shared do-nothing function); the mode table in bufwriter.c maps
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
 * - hand out: the held bytes, as one block of the pool's starting with
 *   them, for bw_detach: *block and its capacity *cap (left NULL and 0
 *   when there is nothing to hand out); 0 on a failure (recorded, or the
 *   first error kept). Works while an error is recorded; the caller
 *   empties the writer after.
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
    int (*hand_out)(bw_writer *w, void **block, size_t *cap);
    unsigned traits;
    const char *name; /* the mode's name in the manual ("contiguous") */
} bw__mode_ops;

/* The operations through the mode table (bufwriter.c), with what every
 * mode shares around them: bw__room checks the size and takes a small
 * message's first block itself, bw__room_keep checks the size,
 * bw__drop_front moves base and starts over when all is gone, and
 * bw__block_size answers 0 for no block or a caller's buffer. */
BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src);
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n);
BW__INTERNAL void bw__drop_storage(bw_writer *w);
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra);
BW__INTERNAL int bw__walk(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                          size_t *n);
BW__INTERNAL size_t bw__pieces(const bw_writer *w);
BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n);
BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos);
BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n);
BW__INTERNAL size_t bw__block_size(const bw_writer *w);

/* The traits: what the calls common to every mode ask of it, beyond the
 * operations (bw__traits: the table's). */
#define BW__GROWS   0x1u  /* one block that growth moves to a new one (its old
                             block goes back); the job's length teaches the
                             pool; the block and the first line are all the
                             writer holds (bw_release's inline way)           */
#define BW__LINKS   0x2u  /* pieces are linked, not copied: a failed append is
                             undone by cutting back to where it began; the
                             segmented mode's only, so what is for it alone
                             (bw_set_block_size, bw__seg_check) asks this     */
#define BW__SENDS   0x4u  /* held bytes go to a sink: nothing to move out     */
#define BW__NO_POOL 0x8u  /* the caller's buffer alone: never allocates, has
                             no pool, hands nothing out                       */
#define BW__BOUNDED 0x10u /* the buffer never grows: a full one has no room for
                             bw_cstr's NUL                                    */
BW__INTERNAL unsigned bw__traits(const bw_writer *w);

/* Record the first error (bufwriter.c). */
BW__INTERNAL int bw__fail(bw_writer *w, int rc);
/* The one send loop, over the sink contract (mode_stream.c): iov[0, cnt)
 * to sink, or to fd with sink NULL; bw_write_fd and a streaming writer
 * send through it. */
BW__INTERNAL int bw__send_iov(int fd, bw_sink_fn sink, void *ctx, struct iovec *iov, size_t cnt,
                              size_t *sent);

/* The room functions stay out of line (the fast paths' callers stay
 * small), but not `cold`: gcc compiles a cold function for size and turns
 * its memcpy into rep movsb, a byte loop on CPUs without ERMS, and these
 * copy every held byte when a writer grows (make check-copies). */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__COLD __attribute__((noinline))
#else
#  define BW__COLD
#endif

/* The mode tables, one in each mode's file (mode_contig.c and the rest),
 * gathered by bufwriter.c's bw__modes. */
extern const bw__mode_ops bw__contig_ops;
extern const bw__mode_ops bw__seg_ops;
extern const bw__mode_ops bw__stream_ops;
extern const bw__mode_ops bw__fixed_ops;

/* What the one-block modes (contiguous, streaming, fixed) share in their
 * tables, and what modes without an ability name there (mode_block.c). */
BW__INTERNAL void bw__move_down(bw_writer *w, const void **src);
BW__INTERNAL int bw__block_put(bw_writer *w, const void *src, size_t n);
BW__INTERNAL int bw__block_piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                                 size_t *n);
BW__INTERNAL void bw__block_drop_storage(bw_writer *w);
BW__INTERNAL void bw__block_cut(bw_writer *w, uint64_t pos);
BW__INTERNAL unsigned char *bw__block_contiguous(bw_writer *w, size_t extra);
BW__INTERNAL size_t bw__block_pieces(const bw_writer *w);
BW__INTERNAL void bw__block_drop_front(bw_writer *w, size_t n);
BW__INTERNAL int bw__block_patch(bw_writer *w, uint64_t pos, const void *src, size_t n);
BW__INTERNAL size_t bw__block_cap(const bw_writer *w);
BW__INTERNAL int bw__keeps_bytes(bw_writer *w);
BW__INTERNAL int bw__no_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
BW__INTERNAL int bw__no_take(bw_writer *dst, bw_writer *src);
BW__INTERNAL int bw__at_once(const bw_writer *w, size_t n);
BW__INTERNAL int bw__block_hand_out(bw_writer *w, void **block, size_t *cap);
BW__INTERNAL int bw__link_copy(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                               void *ctx);
BW__INTERNAL int bw__printf_apart(bw_writer *w, size_t need, const char *fmt, va_list ap);
BW__INTERNAL int bw__printf_grow(bw_writer *w, size_t need, const char *fmt, va_list ap,
                                 int apart);

/* A contiguous writer's first block the general way (mode_contig.c); its
 * inline way is bw__contig_first_in below. */
BW__INTERNAL int bw__contig_first_slow(bw_writer *w, size_t n, const void *src);
/* A contiguous writer's release the general way (mode_contig.c): the job's
 * length teaches the pool, and the block (block bytes, nothing written at
 * or past cap) goes back; bw_release takes a small message's block back
 * inline. */
BW__INTERNAL void bw__contig_release_block(bw_pool *p, unsigned char *b, size_t block,
                                           size_t cap, size_t len);

/* ---- state helpers every file of the writer uses (bufwriter.c) ---- */

/* The fast-path limit: the block's end (or the size limit's), or len while
 * an error is recorded, so that every inline put misses and reaches the
 * cold path's check. Every change of pos, len or cap ends here. */
BW__INTERNAL void bw__set_lim(bw_writer *w);
/* Append src[0, n) to a writer whose checks were made (not NULL, no error
 * recorded, src not NULL unless n is 0): the write the entry points and the
 * modes share, so that none calls another entry point for it. */
BW__INTERNAL int bw__put(bw_writer *w, const void *src, size_t n);
/* The one stable copy of a source (bufwriter.c, which says how): n bytes
 * that stay valid while the writer moves, links or sends. */
BW__INTERNAL const void *bw__stable_copy(bw_writer *w, const void *src, size_t n, void *buf,
                                         size_t nbuf, void **tmp, size_t *tmp_cap);

/* A size limit's clamp of lim: no further than the offset in data where
 * the limit falls (len when the limit is below bw_tell), so a write that
 * would pass it misses the inline fast path and meets bw__over. */
static inline void bw__clamp_lim(bw_writer *w)
{
    uint64_t tell = w->pos + w->len;
    if (w->limit <= tell) w->lim = w->len;
    else if (w->limit - w->pos < w->lim) w->lim = (size_t)(w->limit - w->pos);
}


static inline bw_pool *bw__pool_of(bw_writer *w)
{
    if (w->pool == NULL) { /* the shared pool: a load once it exists */
        bw_pool *p = atomic_load_explicit(&bw__shared_pool, memory_order_acquire);
        w->pool = p != NULL ? p : bw_pool_shared();
    }
    return w->pool;
}

/* What every init starts with (each mode's file has its inits). The first
 * line's fields set by themselves, not by a memset of the struct, which
 * gcc turns into rep stos, whose start-up costs more than the rest of a
 * small message's bw_init; data through base are one memset of 48 bytes
 * (on 64-bit), three vector stores with gcc. The mode's part (w->m) is set
 * by the segmented and streaming inits alone: contiguous and fixed writers
 * never read it. A new field of bw_writer must be set here too (the
 * valgrind run reports one that is not). */
static inline int bw__init_mode(bw_writer *w, bw_pool *pool, unsigned char mode)
{
    if (w == NULL) return BW_EINVAL;
    memset(w, 0, offsetof(bw_writer, pool)); /* data through base */
    w->pool = pool;
    /* mode, flags (no limit, no bw_write_fd errno, no error) and err
     * (BW_OK, 0) with the padding between them: one 8-byte store, and no
     * more for a contiguous writer (BW__CONTIG is 0; storing it again
     * made gcc split the zeros into three stores). */
    memset((unsigned char *)w + offsetof(bw_writer, mode), 0,
           offsetof(bw_writer, err) + sizeof w->err - offsetof(bw_writer, mode));
    if (mode != BW__CONTIG) w->mode = mode;
    return BW_OK;
}

/* The flags a release (or any reset) clears; with none of them set, no
 * error is recorded either (BW__FAILED), so a release has only data
 * through base to empty (bw_release's first test). */
#define BW__RESET_FLAGS                                                                        \
    (BW__EXTERNAL | BW__RESERVED | BW__FILLING | BW__CSTR | BW__FD_ERRNO | BW__FAILED)

/* Empty, no error, positions at 0; keeps the mode and its parameters. */
/* The storage is given back (bw__drop_storage) or handed out first. */
static inline void bw__reset(bw_writer *w)
{
    w->len = 0;
    w->pos = w->base = 0;
    w->err = BW_OK;
    w->flags &= (unsigned char)~BW__RESET_FLAGS;
    w->lim = w->cap; /* no error now */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w); /* the limit stays */
}

/* True when [p, p + n) overlaps the writer's current block (for the modes
 * with one block, all of its storage; bw__overlaps for any mode). */
static inline int bw__in_block(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, b = a + n;
    if (w->data == NULL || n == 0) return 0;
    return b > (uintptr_t)w->data && a < (uintptr_t)w->data + w->cap;
}


/* ---- the contiguous mode's inline first block (mode_contig.c) ---- */

/* The one place outside the mode table that reads the mode (but the inits
 * and the inline bw_data and bw__contig_without, bufwriter.h): a small
 * message's first write (bw__first_write; bw_reserve tests the mode with
 * bw__contig_without, and the flags in the same 16-bit load) and its
 * release (bw_release, likewise) are a compare away from their block, with
 * no load of the table and no call. */
static inline bool bw__is_contig(const bw_writer *w) { return w->mode == BW__CONTIG; }

/* Whether a contiguous writer's cap is a window of a block of m.g.block
 * bytes: on a zeroing pool, in a reservation, or while a fresh block is
 * faulted in (BW__FILLING). */
static inline bool bw__contig_windowed(const bw_writer *w)
{
    return bw__pool_zeroes(w->pool) || (w->flags & (BW__RESERVED | BW__FILLING));
}

/* The block's capacity (bw_detach's, and what goes back to the pool): a
 * window is narrower. */
static inline size_t bw__contig_block_cap(const bw_writer *w)
{
    return bw__contig_windowed(w) ? w->m.g.block : w->cap;
}

/* The first write of every small message comes here (bw_reserve, or
 * bw__room after bw__first_write), from a caller that found no size limit
 * set and no error recorded: the usual first block (the pool's
 * first_block: min_first_block, no learning in play) needs no size rule,
 * and its rent is the thread cache's inline pop (bw__rent_first, which
 * takes the shared pool's from its cache without loading the pool). With
 * no error, lim is the capacity. No stack frame and no call but the copy.
 * Every other case is bw__contig_first_slow's, which also makes
 * bw_reserve's checks. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int bw__contig_first_in(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p = w->pool;
    unsigned char *b = (unsigned char *)bw__rent_first(&p, n, &w->lim);
    if (BW__LIKELY(b != NULL)) {
        /* pos is base already: a contiguous writer without storage holds
         * nothing (init, release, detach and bw_take leave it so). */
        w->pool = p;
        w->data = b;
        w->cap = w->lim;
        if (src != NULL) {
            w->len = n; /* before the copy: a store through b may alias w */
            memcpy(b, src, n);
        }
        return BW_OK;
    }
    return bw__contig_first_slow(w, n, src);
}

/* Whether a write of n bytes is a contiguous writer's first (no storage):
 * the one test of the mode outside the table but the inits and bw_data,
 * made before the table so a small message's first write is a compare
 * away from its block. */
static inline bool bw__first_write(const bw_writer *w, size_t n)
{
    return w->data == NULL && bw__is_contig(w) && n <= BW__MAX_BLOCK;
}

/* What a contiguous writer's release leaves, as bw__reset with no block:
 * data through base zero (one memset of the fields before pool: a few
 * vector stores), no error, the limit kept (a lim of 0 is already within
 * it). */
static inline void bw__contig_emptied(bw_writer *w)
{
    memset(w, 0, offsetof(bw_writer, pool));
    w->err = BW_OK;
    w->flags &= (unsigned char)~BW__RESET_FLAGS;
}

/* A contiguous writer's release the general way (bw_release's inline
 * test takes a small message's block back itself, with no call and no
 * stack frame): its one block and the first line are all it has. Any
 * block, and a length that teaches the pool, go to bw__contig_release_block
 * (mode_contig.c); b is the block to give back (NULL for none or a
 * caller's buffer). */
static inline void bw__contig_release_rest(bw_writer *w, unsigned char *b)
{
    bw_pool *p = w->pool;
    size_t cap = w->cap, block = b != NULL ? bw__contig_block_cap(w) : 0;
    /* The length only where a pool may learn it: a caller's buffer with
     * no pool (bw_init_buffer over a stack array) reads none of it. */
    size_t len = p != NULL ? bw_len(w) : 0;
    bw__contig_emptied(w);
    if (b != NULL || (p != NULL && bw__pool_learns(p, len)))
        bw__contig_release_block(p, b, block, cap, len);
}

/* ---- decimal text (bw_put_dec_*, fmt_int.c; the float text, fmt_float.c) ---- */

/* Two decimal digits of every value below 100 (fmt_int.c). */
extern const char bw__digits2[201];

/* Eight digits of r < 10^8, ending at `end`: two independent halves of
 * 32-bit arithmetic, cheaper than 64-bit division by 100 on every target. */
static inline void bw__dec_digits8(unsigned char *end, uint32_t r)
{
    uint32_t hi = r / 10000, lo = r % 10000;
    memcpy(end - 2, bw__digits2 + (lo % 100) * 2, 2);
    memcpy(end - 4, bw__digits2 + (lo / 100) * 2, 2);
    memcpy(end - 6, bw__digits2 + (hi % 100) * 2, 2);
    memcpy(end - 8, bw__digits2 + (hi / 100) * 2, 2);
}

/* The decimal digits of f, written backwards ending at `end`; returns the
 * first. The integer text (bw_put_dec_*) and the float text share it. */
static inline unsigned char *bw__dec_digits(unsigned char *end, uint64_t f)
{
    uint32_t v;
    if (f >= 100000000) {
        bw__dec_digits8(end, (uint32_t)(f % 100000000));
        f /= 100000000;
        end -= 8;
        if (f >= 100000000) {
            bw__dec_digits8(end, (uint32_t)(f % 100000000));
            f /= 100000000;
            end -= 8;
        }
    }
    v = (uint32_t)f;
    while (v >= 10000) {
        uint32_t r = v % 10000;
        v /= 10000;
        memcpy(end - 2, bw__digits2 + (r % 100) * 2, 2);
        memcpy(end - 4, bw__digits2 + (r / 100) * 2, 2);
        end -= 4;
    }
    if (v >= 100) {
        memcpy(end -= 2, bw__digits2 + (v % 100) * 2, 2);
        v /= 100;
    }
    if (v >= 10) {
        memcpy(end - 2, bw__digits2 + v * 2, 2);
        return end - 2;
    }
    end[-1] = (unsigned char)('0' + v);
    return end - 1;
}


#endif /* BW_WRITER_INTERNAL_H */
