/* SPDX-License-Identifier: MIT */
/* fuzz_ops.c - differential fuzzing of the writer, in all four modes, and of
 * the pool (libFuzzer).
 *
 * The input picks the pool's options and which backing allocation fails,
 * then is decoded into at most 500 operations over three writers. Each writer
 * is in a mode the input chooses (and re-chooses): contiguous (bw_init, or
 * bw_init_buffer over a caller's buffer), segmented (bw_init_chain),
 * streaming (bw_init_sink, into a sink scripted by the input: full takes,
 * short counts, -1/EINTR, -1 with EPIPE or EAGAIN, broken returns 0, n + 1,
 * -2) or fixed (bw_init_fixed over a buffer followed by guard bytes). Every
 * operation is applied to the library and to a reference model written here
 * (the held bytes, the position of the first one, the recorded status) that
 * encodes bufwriter.h's contracts: which status each call returns in each
 * mode and state. Operations: write (also from the writer's own held bytes), every
 * put, varints, decimal, hex, puts, printf (arguments that alias held bytes,
 * long output, bw_cstr's string, an encoding error), fwrite, fputs and
 * fprintf through bw_fopen (of the held bytes themselves in contiguous and
 * segmented writers), reserve, span + advance, a span written with the
 * cursor encoders (bw_enc_*) and committed with bw_advance_to (also with a
 * NULL end, one before the span or past it), patch and typed
 * patch by position, truncate, consume, clear, clear_error, release, detach,
 * pullup, cstr, copy_out, iovec, append_writer (dst == src too), flush,
 * unrepresentable sizes, NULL sources, putc, detach_malloc, append_ref (the
 * caller's memory, scribbled over as soon as its done is called, so a read
 * after it shows; or the writer's own bytes), move (dst == src, streaming
 * src, a src with an error too), set_limit (0, near bw_tell, below it; the
 * model refuses with BW_ELIMIT every call that would pass it), the decimal
 * text of doubles and floats (bw_put_dec_f64/f32, and bw_enc_dec_f64/f32
 * in the cursor: the put's bytes are the cursor form's, and the text reads
 * back with strtod/strtof as exactly the value, laid out as bufwriter.h
 * says), try_span (granted exactly when the free space covers it, and no
 * effect otherwise), set_first_buffer (a storage-less contiguous writer
 * takes the caller's buffer; every other case is BW_EINVAL), set_block_size
 * (a segmented writer's blocks from then on: 0, 64 B to 1 MiB or past
 * 1 GiB; BW_EINVAL in other modes, nothing recorded, no rent, the bytes as
 * they were) and the float text with BW_DEC_* flags (bw_put_dec_f64_flags/f32_flags, and
 * bw_fmt_dec_f64/f32 at every room: the plain text made JSON's by hand,
 * BW_ENONFINITE and BW_EINVAL recorded never, nothing stored past the
 * room or when it does not fit). After EVERY
 * operation:
 *   - the status returned, bw_error, bw_errno, bw_len, bw_tell;
 *   - the held bytes, through bw_copy_out of everything and through bw_iovec
 *     (concatenated, no empty entry), and bw_data when they lie in one block;
 *     bw_capacity == bw_len + bw_free_capacity;
 *   - streaming: the bytes the sink took plus the held bytes are exactly the
 *     reference stream; a call that fits never calls the sink; a failing sink
 *     records BW_EIO with its errno and is not called again in that call; a
 *     failed call accepts nothing, or (larger than the buffer) a prefix;
 *   - contiguous: every block is a power of two or the caller's buffer, a
 *     move at least doubles and goes no further than the growth rule, and a
 *     call that fits never moves the block; segmented: held bytes never move;
 *     fixed: guard bytes never change, nothing is allocated;
 *   - zero-length calls allocate nothing and call no sink; an allocation
 *     failure surfaces as BW_ENOMEM with nothing changed;
 *   - a move between segmented writers allocates nothing;
 *   - done is called once per linked reference, never for a failed call.
 * At the end every writer is released, the pool destroyed, every done has
 * been called, and the backing allocator balances to zero. The growth and fixed checks read the writer's
 * private block fields (w.data, w.cap): the one white-box part.
 *
 *   make fuzz            run it (FUZZ_TIME seconds, default 600)
 *   make test            (test-fuzz) replays tests/fuzz/corpus and
 *                        tests/fuzz/crashes, then fuzzes FUZZ_SHORT seconds
 *   build/fuzz_ops tests/fuzz/crashes/NAME     replay one reproducer
 *
 * Sizes are clamped (4 KiB per call, 64 KiB held per writer) and the pool's
 * thresholds are small (256 B, 2 KiB, 16 KiB), so that comparing every byte
 * after every operation stays cheap and every path above and below them is
 * crossed. The input may also make the pool BW_POOL_BYPASS (exact-size
 * rents below the threshold): the growth checks then bound instead of
 * match.
 *
 * This file holds the input's pool set-up, the pool operations (raw rent
 * and return, trim, stats) and the run; the model, the checks and the
 * writer operations are the headers it includes below. */
#define _GNU_SOURCE 1 /* bw_fopen is fopencookie-based */
#include "bufwriter.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <wchar.h>

#define MAX_OP 4096            /* bytes per call                          */
#define MAX_LEN (64u << 10)    /* bytes held per writer                   */
#define NW 3                   /* writers                                 */
#define NBLOCKS 8              /* raw pool blocks                         */
#define FIX_MAX 512            /* fixed buffers: 0..FIX_MAX bytes         */
#define GUARD 32               /* ... then at least GUARD guard bytes      */
#define SCRIPT 8               /* sink behaviours, cycled                 */

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "fuzz_ops: check failed at %s:%d: %s\n", __FILE__, \
                    __LINE__, #c);                                            \
            abort();                                                          \
        }                                                                     \
    } while (0)
static size_t MIN(size_t a, size_t b) { return a < b ? a : b; }
static size_t MAX(size_t a, size_t b) { return a > b ? a : b; }

enum { CONTIG, CHAIN, STREAM, FIXED };

/* The parts, each included once, in this order: */
#include "fuzz_io.h"         /* input, allocator, sink */
/* Every invariant of a segmented writer (mode_seg.c; the build defines
 * BW_SEG_CHECK): aborts naming the one broken. */
void bw__seg_check(const bw_writer *w);
#include "fuzz_model.h"      /* the model and its encodings */
#include "fuzz_check.h"      /* the checks around every operation */
#include "fuzz_writer_ops.h" /* the writer operations, one function each */

/* ------------------------------------------------------------ main -- */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t thresholds[] = {256, 2048, 16384};
    bw_allocator hook = {fa_alloc, fa_realloc, fa_free, NULL};
    struct { void *b; size_t cap; unsigned seed; } blocks[NBLOCKS];
    bw_pool_options o;
    bw_pool_stats st;
    in s = {data, size};
    unsigned cfg, cfg2, i;
    int steps = 0;

    if (tracing < 0) {
        tracing = getenv("FUZZ_TRACE") != NULL;
        CHECK(strcmp(bw_version(), BW_VERSION_STRING) == 0);
    }
    calls = live_blocks = 0;
    failed_now = big_now = 0;
    memset(&o, 0, sizeof o);
    cfg = u8(&s);
    cfg2 = u8(&s);
    o.max_pooled_size = thresholds[cfg % 3];
    o.flags = (cfg & 0x08 ? BW_POOL_NO_THREAD_CACHE : 0) | (cfg & 0x10 ? BW_POOL_ZERO_ON_RETURN : 0) |
              (cfg & 0x20 ? BW_POOL_LEARN_SIZE : 0) |
              (cfg & 0x80 ? BW_POOL_CHECKED | (cfg2 & 4 ? BW_POOL_FILL : 0) : 0);
    if (cfg & 0x40) o.max_large_bytes = 256u << 10;
    o.min_block_size = cfg2 & 2 ? 64 : 0;
    minblk = cfg2 & 2 ? 64 : 16;
    threshold = o.max_pooled_size;
    o.flags |= (cfg2 & 0x08 ? BW_POOL_NO_LEARNED_GROWTH : 0) |
               (cfg2 & 0x20 ? BW_POOL_NO_LARGE_RETENTION : 0);
    learned_jump = !(cfg2 & 0x08);
    learn_size = (cfg & 0x20) != 0;
    o.min_first_block = cfg2 & 0x10 ? 1 : 0; /* the class of the first write, or 512 B */
    if (cfg2 & 0x40) o.decay_ms = BW_DECAY_NEVER;
    bypass = (cfg2 & 0x80) != 0;
    if (bypass) o.flags |= BW_POOL_BYPASS;
    if (cfg2 & 1) hook.realloc = NULL;
    o.allocator = &hook;
    fail_at = (long)u8(&s); /* 0: never */
    CHECK(bw_pool_create(&pool, &o) == BW_OK);
    { /* the pool keeps what it was given, the defaults filled in */
        bw_pool_options r;
        bw_pool_get_options(pool, &r);
        CHECK(r.max_pooled_size == threshold && r.min_block_size == minblk &&
              r.flags == o.flags && r.max_learned_size != 0 && r.allocator != NULL &&
              r.allocator->alloc == hook.alloc && r.allocator->realloc == hook.realloc);
        CHECK(o.max_large_bytes == 0 || r.max_large_bytes == o.max_large_bytes);
    }

    slots = (slot *)calloc(NW, sizeof *slots); /* all-zero writers are valid */
    CHECK(slots != NULL);
    for (i = 0; i < NW; i++) {
        slots[i].d = (unsigned char *)malloc(slots[i].dcap = 256); /* never NULL */
        CHECK(slots[i].d != NULL);
        reinit(&s, &slots[i]);
    }
    memset(blocks, 0, sizeof blocks);

    while (s.n > 0 && steps++ < 500) {
        unsigned what = u8(&s);
        if (what < 216) {
            op_writer(&s, &slots[what % NW], u8(&s) % NOPS);
            /* The state behind the bytes, inline paths' changes included. */
            if (slots[what % NW].w.mode == BW__SEG) bw__seg_check(&slots[what % NW].w);
        } else if (what < 240) { /* raw rent / return with a byte pattern */
            unsigned k = what % NBLOCKS;
            if (blocks[k].b == NULL) {
                size_t want = u16(&s);
                want = MIN(want << (u8(&s) % 8), MAX_LEN);
                failed_now = 0;
                blocks[k].b = bw_pool_rent(pool, want, &blocks[k].cap);
                if (blocks[k].b == NULL) {
                    CHECK(failed_now);
                    continue;
                }
                CHECK(blocks[k].cap >= want && blocks[k].cap == bw_pool_class_size(pool, want));
                blocks[k].seed = u8(&s);
                fill((unsigned char *)blocks[k].b, MIN(blocks[k].cap, 4096), blocks[k].seed);
            } else {
                size_t n = MIN(blocks[k].cap, 4096), j;
                for (j = 0; j < n; j++)
                    CHECK(((unsigned char *)blocks[k].b)[j] == (unsigned char)(j * 31u + blocks[k].seed));
                CHECK(bw_pool_return(pool, blocks[k].b, blocks[k].cap) == BW_OK);
                blocks[k].b = NULL;
            }
        } else if (what < 248) {
            bw_pool_trim(pool);
        } else {
            bw_pool_get_stats(pool, &st);
            CHECK(st.returns <= st.rents && st.hits <= st.rents);
        }
    }

    for (i = 0; i < NBLOCKS; i++)
        if (blocks[i].b) CHECK(bw_pool_return(pool, blocks[i].b, blocks[i].cap) == BW_OK);
    for (i = 0; i < NW; i++) {
        bw_release(&slots[i].w);
        free(slots[i].d);
        free(slots[i].sk.rcv);
    }
    for (i = 0; i < NREF; i++) CHECK(refs[i].links == 0); /* every done was called */
    for (i = 0; i < NLINK; i++) CHECK(!links[i].live);
    check_guards();
    free(slots);
    free(iv);
    iv = NULL;
    ivcap = 0;
    bw_pool_get_stats(pool, &st);
    CHECK(st.outstanding_bytes == 0 && st.rents == st.returns);
    bw_pool_destroy(pool);
    CHECK(live_blocks == 0);
    return 0;
}
