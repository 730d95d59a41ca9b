/* SPDX-License-Identifier: MIT */
/* mode_stream.c - the streaming room (bw_init_sink, bw_init_fd): one
 * buffer whose bytes go to a sink or a file descriptor when it fills or on
 * bw_flush; an enlarged buffer shrinks back once sent. It owns the send
 * loop over the sink contract, its room, its printf and its table,
 * bw__stream_ops. */
#include "writer_internal.h"

#include <errno.h>

/* A streaming writer's buffer. */
#define BW__STREAM_DEFAULT ((size_t)64 << 10)

/* Streaming: hand p[0, n) to the sink or fd until all is taken or it fails
 * (the sink contract: 1..n taken, -1 with EINTR retried, -1 failed, anything
 * else broken). *sent gets what was taken. */
static int bw__send_bytes(bw_writer *w, const unsigned char *p, size_t n, size_t *sent)
{
    size_t done = 0;
    int rc = BW_OK;
    while (done < n) {
        ptrdiff_t r;
        if (w->flags & BW__FD) {
            struct iovec one;
            one.iov_base = (void *)(uintptr_t)(p + done);
            one.iov_len = n - done;
            r = bw__fd_send(w->m.s.fd, &one, 1);
        } else if (w->m.s.sink != NULL) {
            r = w->m.s.sink(w->m.s.ctx, p + done, n - done);
        } else {
            rc = BW_EINVAL; /* a streaming writer whose init failed */
            break;
        }
        if (r > 0 && (size_t)r <= n - done) {
            done += (size_t)r;
        } else if (r == -1 && errno == EINTR) {
            continue;
        } else {
            if (r != -1) errno = EIO; /* a broken sink: never loop on it */
            rc = BW_EIO;
            break;
        }
    }
    *sent = done;
    return rc;
}

/* Send every held byte; on failure the rest stays held and BW_EIO is
 * recorded. Afterwards the buffer is empty and restarts at its beginning. */
BW__INTERNAL int bw__send_held(bw_writer *w)
{
    size_t start = bw__start(w), sent;
    int rc = bw__send_bytes(w, w->data + start, w->len - start, &sent);
    w->base += sent;
    if (rc != BW_OK) return bw__fail(w, rc);
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* A buffer enlarged for a long reserve or span goes back once its bytes
 * are sent (nothing held then), unless src points into it: the next write
 * rents the configured size, so memory stays what was configured. */
static void bw__stream_shrink(bw_writer *w, const void *src, size_t n)
{
    if (w->cap <= w->m.s.size || w->len != bw__start(w) || bw__in_block(w, src, n)) return;
    (void)bw_pool_return(w->pool, w->data, w->cap);
    w->data = NULL;
    w->cap = 0;
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
}

/* The buffer, rented at the first write, or replaced by a bigger block when
 * a reserve or span needs more than it has (nothing held then). */
static int bw__stream_buffer(bw_writer *w, size_t n)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap = w->m.s.size, got;
    unsigned char *b;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    if (n > cap) {
        rc = bw__pool_grow(p, 0, n, 0, &cap);
        if (rc != BW_OK) return bw__fail(w, rc);
    }
    b = (unsigned char *)bw_pool_rent(p, cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    if (w->data != NULL) (void)bw_pool_return(p, w->data, w->cap);
    w->data = b;
    w->cap = got;
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* Send p[0, n) straight from memory that is not the buffer (nothing is
 * held then), the positions following what was taken; a failure is
 * recorded. */
BW__INTERNAL int bw__send_past(bw_writer *w, const void *p, size_t n)
{
    size_t sent;
    int rc = bw__send_bytes(w, (const unsigned char *)p, n, &sent);
    w->pos += sent;
    w->base += sent;
    if (rc != BW_OK) return bw__fail(w, rc);
    bw__set_lim(w);
    return BW_OK;
}

static BW__COLD int bw__room_stream(bw_writer *w, size_t n, const void *src)
{
    int rc;
    if (w->data == NULL && n <= w->m.s.size) {
        rc = bw__stream_buffer(w, n);
        if (rc != BW_OK) return rc;
    }
    if (w->data != NULL && w->cap - (w->len - bw__start(w)) < n) {
        /* It does not fit even over consumed room: send what is held. A
         * source among the held bytes stays intact until copied below. */
        rc = bw__send_held(w);
        if (rc != BW_OK) return rc;
        if (n <= w->m.s.size) {
            bw__stream_shrink(w, src, src != NULL ? n : 0);
            if (w->data == NULL && (rc = bw__stream_buffer(w, n)) != BW_OK) return rc;
        }
    }
    if (src != NULL && (w->data == NULL || n > w->cap)) {
        /* Larger than the buffer: straight from the caller's memory (it
         * cannot be among the held bytes, which fit the buffer). */
        return bw__send_past(w, src, n);
    }
    if (w->data == NULL || n > w->cap) {
        rc = bw__stream_buffer(w, n);
        if (rc != BW_OK) return rc;
    }
    return bw__block_put(w, src, n);
}

/* Streaming: output up to the buffer size is formatted apart into a block
 * of that size at most and written all or nothing; longer output goes
 * straight to the sink through a FILE (bw__vprintf_sent, io.c) after the
 * held bytes, so memory stays bounded and the buffer (where arguments may
 * point) is not touched. Without the FILE adapter it too is formatted
 * apart. */
static int bw__printf_stream(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
#ifdef BW_HAVE_FILE_ADAPTER
    if (need > w->m.s.size) return bw__vprintf_sent(w, need, fmt, ap);
#endif
    return bw__printf_apart(w, need, fmt, ap);
}

/* Send: every held byte goes to the sink; an enlarged buffer goes back. */
static int bw__stream_send(bw_writer *w)
{
    if (bw_len(w) != 0 && bw__send_held(w) != BW_OK) return w->err;
    if (w->data != NULL) bw__stream_shrink(w, NULL, 0);
    return BW_OK;
}

/* Make contiguous: the held bytes move down; never sends or grows here
 * (BW_EFULL when extra does not fit the buffer). */
static unsigned char *bw__stream_contiguous(bw_writer *w, size_t extra)
{
    if (w->cap - w->len < extra) {
        if (w->cap - bw_len(w) < extra) {
            bw__fail(w, BW_EFULL);
            return NULL;
        }
        bw__move_down(w, NULL);
    }
    return w->data + bw__start(w);
}

/* The streaming modes' common part: the buffer size by the growth rule. */
static int bw__init_stream(bw_writer *w, bw_pool *pool, size_t buffer_size)
{
    bw_pool *p;
    int rc;
    if (bw__init_mode(w, pool, BW__STREAM) != BW_OK) return BW_EINVAL;
    w->m.s.sink = NULL;
    w->m.s.ctx = NULL;
    w->m.s.size = 0;
    w->m.s.fd = -1;
    if (buffer_size == 0) buffer_size = BW__STREAM_DEFAULT;
    if (buffer_size > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    p = bw__pool_of(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__pool_grow(p, 0, buffer_size, 0, &w->m.s.size);
    return rc != BW_OK ? bw__fail(w, rc) : BW_OK;
}

/* One room takes at most the buffer without sending part of it. */
static int bw__stream_at_once(const bw_writer *w, size_t n) { return n <= w->m.s.size; }

const bw__mode_ops bw__stream_ops = {
    .room = bw__room_stream,
    .room_keep = bw__no_room_keep,
    .send = bw__stream_send,
    .drop_storage = bw__block_drop_storage,
    .contiguous = bw__stream_contiguous,
    .walk = bw__block_piece,
    .pieces = bw__block_pieces,
    .drop_front = bw__block_drop_front,
    .cut = bw__block_cut,
    .overlaps = bw__in_block,
    .patch = bw__block_patch,
    .block_size = bw__block_cap,
    .printf_rest = bw__printf_stream,
    .link = bw__link_copy,
    .take = bw__no_take,
    .room_at_once = bw__stream_at_once,
    .hand_out = bw__block_hand_out,
    .traits = BW__SENDS | BW__BOUNDED,
    .name = "streaming",
};

int bw_init_sink(bw_writer *w, bw_pool *pool, size_t buffer_size, bw_sink_fn sink, void *ctx)
{
    int rc = bw__init_stream(w, pool, buffer_size);
    if (w == NULL) return rc;
    w->m.s.sink = sink;
    w->m.s.ctx = ctx;
    if (rc == BW_OK && sink == NULL) rc = bw__fail(w, BW_EINVAL);
    return rc;
}

int bw_init_fd(bw_writer *w, bw_pool *pool, size_t buffer_size, int fd)
{
    int rc = bw__init_stream(w, pool, buffer_size);
    if (w == NULL) return rc;
    w->flags = BW__FD;
    w->m.s.fd = fd;
    if (rc == BW_OK && fd < 0) rc = bw__fail(w, BW_EINVAL);
    return rc;
}

