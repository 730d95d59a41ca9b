/* SPDX-License-Identifier: MIT */
/* mode_fixed.c - the fixed room (bw_init_fixed): the caller's buffer and
 * nothing else; never allocates, BW_EFULL when full. It owns its room,
 * its printf (exact fits on the stack or in place) and its table,
 * bw__fixed_ops. */
#include "writer_internal.h"

/* A fixed writer's printf formats output up to this long on the stack when
 * it does not fit the free space with vsnprintf's NUL (exact fits). */
#define BW__PRINTF_FIXED_STACK 1024

/* Fixed: the held bytes may move down over consumed room; nothing else. */
static BW__COLD int bw__room_fixed(bw_writer *w, size_t n, const void *src)
{
    if (w->cap - (w->len - bw__start(w)) < n) return bw__fail(w, BW_EFULL);
    return bw__block_put(w, src, n);
}

/* The output did not fit in pass one. A fixed writer has only its own
 * buffer and never allocates: output below BW__PRINTF_FIXED_STACK is
 * formatted on the stack and written like any source (moving the held bytes
 * down over consumed room when needed); longer output is formatted in the
 * buffer after the held bytes are moved down, and its arguments must not
 * point into the held bytes (bufwriter.h says so). vsnprintf's NUL needs a
 * byte past the output: when the output fills the buffer exactly, it is
 * formatted one byte early, over the last held byte (kept aside), then
 * moved up into place, so an exact fit succeeds. Only output that fills a
 * buffer holding nothing has no byte before it: that one needs a spare. */
static int bw__printf_fixed(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    char buf[BW__PRINTF_FIXED_STACK];
    size_t room = w->cap - (w->len - bw__start(w));
    unsigned char *at, kept = 0;
    int r, early;
    if (need < sizeof buf) {
        if (need > room) return bw__fail(w, BW_EFULL);
        r = vsnprintf(buf, sizeof buf, fmt, ap);
        return r >= 0 && (size_t)r == need ? bw__put(w, buf, need) : bw__fail(w, BW_EINVAL);
    }
    early = need == room;
    if (need > room || (early && room == w->cap)) return bw__fail(w, BW_EFULL);
    bw__move_down(w, NULL);
    at = w->data + w->len - early;
    if (early) kept = *at;
    r = vsnprintf((char *)at, need + 1, fmt, ap);
    if (early) {
        memmove(at + 1, at, need);
        *at = kept;
    }
    if (r < 0 || (size_t)r != need) return bw__fail(w, BW_EINVAL);
    w->len += need;
    return BW_OK;
}

/* The caller's buffer stays; no block is the pool's. */
static void bw__fixed_keep_buffer(bw_writer *w) { (void)w; }
static size_t bw__fixed_no_block(const bw_writer *w) { return (void)w, 0; }
/* Nothing to hand out: bw_detach refuses a writer without a pool
 * (BW__NO_POOL) before it asks; this says so again. */
static int bw__fixed_no_hand_out(bw_writer *w, void **block, size_t *cap)
{
    (void)block, (void)cap;
    return (void)bw__fail(w, BW_EINVAL), 0;
}

const bw__mode_ops bw__fixed_ops = {
    .room = bw__room_fixed,
    .room_keep = bw__no_room_keep,
    .send = bw__keeps_bytes,
    .drop_storage = bw__fixed_keep_buffer,
    .contiguous = bw__block_contiguous,
    .walk = bw__block_piece,
    .pieces = bw__block_pieces,
    .drop_front = bw__block_drop_front,
    .cut = bw__block_cut,
    .overlaps = bw__in_block,
    .patch = bw__block_patch,
    .block_size = bw__fixed_no_block,
    .printf_rest = bw__printf_fixed,
    .link = bw__link_copy,
    .take = bw__no_take,
    .room_at_once = bw__at_once,
    .hand_out = bw__fixed_no_hand_out,
    .traits = BW__NO_POOL | BW__BOUNDED,
    .name = "fixed",
};

int bw_init_fixed(bw_writer *w, void *buf, size_t size)
{
    if (bw__init_mode(w, NULL, BW__FIXED) != BW_OK) return BW_EINVAL;
    if (buf == NULL && size != 0) return bw__fail(w, BW_EINVAL);
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = w->lim = size;
    return BW_OK;
}

