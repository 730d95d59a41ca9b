/* SPDX-License-Identifier: MIT */
/* mode_stream.c - the streaming room (bw_init_sink, bw_init_fd): one
 * buffer whose bytes go to a sink or a file descriptor when it fills or on
 * bw_flush; an enlarged buffer shrinks back once sent. It owns the one
 * send loop over the sink contract (bw_write_fd's too), its room, its
 * printf (longer output through a FILE straight to the sink) and its
 * table, bw__stream_ops. */
#include "writer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

/* A streaming writer's buffer. */
#define BW__STREAM_DEFAULT ((size_t)64 << 10)

/* The one send loop (a streaming writer's sends, bw_write_fd's): hands
 * iov[0, cnt) to the sink (one piece a call) or, with sink NULL, to fd
 * (writev's batch; bw__fd_send never raises SIGPIPE), until all is taken or
 * it fails, by the sink contract: 1..n taken, -1 with EINTR retried, -1
 * failed, anything else (0, more than offered) broken, with errno EIO, so
 * that it never loops. *sent gets what was taken; iov is advanced over it. */
BW__INTERNAL int bw__send_iov(int fd, bw_sink_fn sink, void *ctx, struct iovec *iov, size_t cnt,
                              size_t *sent)
{
    size_t done = 0, left = 0, i;
    for (i = 0; i < cnt; i++) left += iov[i].iov_len;
    while (left != 0) {
        size_t most = left;
        ptrdiff_t r;
        while (iov->iov_len == 0) {
            iov++;
            cnt--;
        }
        if (sink != NULL) {
            most = iov->iov_len;
            r = sink(ctx, iov->iov_base, most);
        } else {
            r = bw__fd_send(fd, iov, cnt < INT_MAX ? (int)cnt : INT_MAX);
        }
        if (r == -1 && errno == EINTR) continue;
        if (r <= 0 || (size_t)r > most) {
            if (r != -1) errno = EIO;
            *sent = done;
            return BW_EIO;
        }
        done += (size_t)r;
        left -= (size_t)r;
        for (i = (size_t)r; i != 0 && i >= iov->iov_len; iov++, cnt--) i -= iov->iov_len;
        if (i != 0) { /* into the middle of a piece: never past the last */
            iov->iov_base = (unsigned char *)iov->iov_base + i;
            iov->iov_len -= i;
        }
    }
    *sent = done;
    return BW_OK;
}

/* Streaming: p[0, n) to the writer's sink or fd; *sent gets what was taken. */
static int bw__send_bytes(bw_writer *w, const unsigned char *p, size_t n, size_t *sent)
{
    struct iovec one;
    one.iov_base = (void *)(uintptr_t)p;
    one.iov_len = n;
    *sent = 0;
    if (w->flags & BW__FD) return bw__send_iov(w->m.s.fd, NULL, NULL, &one, 1, sent);
    if (w->m.s.sink == NULL) return BW_EINVAL; /* a streaming writer whose init failed */
    return bw__send_iov(-1, w->m.s.sink, w->m.s.ctx, &one, 1, sent);
}

/* Send every held byte; on failure the rest stays held and BW_EIO is
 * recorded. Afterwards the buffer is empty and restarts at its beginning. */
static int bw__send_held(bw_writer *w)
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

/* The pool's buffer for n bytes (the growth rule's size). */
static int bw__stream_size(bw_pool *p, size_t n, size_t *out)
{
    bw__size_req r = {.kind = BW__SIZE_BLOCK, .n = n};
    bw__size s;
    int rc = bw__pool_size(p, &r, &s);
    *out = s.size;
    return rc;
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
        rc = bw__stream_size(p, n, &cap);
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
static int bw__send_past(bw_writer *w, const void *p, size_t n)
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

#ifdef BW_HAVE_FILE_ADAPTER
/* bw__vprintf_sent's FILE buffer, on the stack: the size of the pieces
 * printf output longer than a streaming buffer goes to the sink in. */
#define BW__SENT_FILE_BUF 4096

/* bw__vprintf_sent's FILE: the writer, and the errno its sink failed with
 * (the FILE's own calls overwrite errno after it). */
typedef struct bw__sent {
    const bw__file_ops *ops; /* first: the platform's FILE calls it */
    bw_writer *w;
    int err_no;
} bw__sent;

static int bw__sent_piece(void *cookie, const char *buf, size_t n)
{
    bw__sent *st = (bw__sent *)cookie;
    if (st->w->err == BW_OK && bw__send_past(st->w, buf, n) == BW_OK) return 1;
    if (st->err_no == 0) st->err_no = errno;
    errno = EIO;
    return 0;
}

/* What the FILE behind bw__vprintf_sent hands over goes to the sink at
 * once, never into the buffer. */
static const bw__file_ops bw__sent_calls = {bw__sent_piece, NULL};
/* The platform reads the cookie as a pointer to its first member. */
typedef char bw__sent_ops_first[offsetof(bw__sent, ops) == 0 ? 1 : -1];

/* printf output longer than a streaming writer's buffer: the held bytes
 * are sent, then the output goes to the sink in the pieces the FILE hands
 * over (its buffer is on the stack), so memory stays bounded whatever the
 * output's length, and the buffer, where arguments may point, is neither
 * written nor reused. On a failure the bytes sent are a prefix (bw_tell
 * says how many). */
static int bw__vprintf_sent(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    char buf[BW__SENT_FILE_BUF];
    bw__sent st;
    FILE *f;
    int r, rc = bw_len(w) != 0 ? bw__send_held(w) : BW_OK;
    if (rc != BW_OK) return rc;
    st.ops = &bw__sent_calls;
    st.w = w;
    st.err_no = 0;
    f = bw__file_make(&st);
    if (f == NULL) return bw__fail(w, BW_ENOMEM);
    (void)setvbuf(f, buf, _IOFBF, sizeof buf);
    r = vfprintf(f, fmt, ap);
    if (fclose(f) != 0 && w->err == BW_OK) (void)bw__fail(w, BW_EIO);
    if (w->err != BW_OK) {
        if (st.err_no != 0) errno = st.err_no; /* the sink's, as for any write */
        return w->err;
    }
    return r >= 0 && (size_t)r == need ? BW_OK : bw__fail(w, BW_EINVAL);
}
#endif /* BW_HAVE_FILE_ADAPTER */

/* Streaming: output up to the buffer size is formatted apart into a block
 * of that size at most and written all or nothing; longer output goes
 * straight to the sink through a FILE (bw__vprintf_sent, above) after the
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

/* The streaming modes' common part: the buffer size, the pool's for
 * buffer_size. */
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
    rc = bw__stream_size(p, buffer_size, &w->m.s.size);
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

