/* SPDX-License-Identifier: MIT */
/* test_output.c - where the bytes go, in every mode: streaming to a sink or a
 * file descriptor, bw_write_fd, the FILE* adapter; failure injection (the
 * allocator and the sink, at every call) with no byte lost or repeated; and a
 * random model test of every mode against a plain byte array. It replaces
 * 0.1's test_chain.c (the retired bw_chain API).
 *
 * The contracts are bufwriter.h's sections 6 (streaming), 9 (reading out)
 * and 10 (file descriptors, SIGPIPE, FILE*), and its ERRORS paragraph. */
#define _GNU_SOURCE 1 /* usleep, NSIG, sigtimedwait */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Small tools                                                              */
/* ------------------------------------------------------------------------ */

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffffu;
}

/* A growable byte array: the reference and the sink's output. */
typedef struct bytes {
    unsigned char *d;
    size_t len, cap;
} bytes;

static void by_add(bytes *b, const void *src, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->len + n + 1) c *= 2;
        b->d = (unsigned char *)realloc(b->d, c);
        cr_assert_not_null(b->d);
        b->cap = c;
    }
    if (n) memcpy(b->d + b->len, src, n);
    b->len += n;
}

static void by_free(bytes *b)
{
    free(b->d);
    memset(b, 0, sizeof *b);
}

static void st_le(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void st_be(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static size_t uvar_enc(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static size_t hex_enc(char *out, const unsigned char *src, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = digits[src[i] >> 4];
        out[2 * i + 1] = digits[src[i] & 15];
    }
    return 2 * n;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    cr_assert_geq(fl, 0);
    cr_assert_eq(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

/* A descriptor number that is not open (for EBADF and "no system call"). */
static int closed_fd(void)
{
    int fd = 700;
    while (fcntl(fd, F_GETFD) != -1) fd++;
    return fd;
}

/* Read everything available from a non-blocking fd into b. */
static void drain(int fd, bytes *b)
{
    unsigned char tmp[65536];
    for (;;) {
        ssize_t k = read(fd, tmp, sizeof tmp);
        if (k <= 0) break;
        by_add(b, tmp, (size_t)k);
    }
}

/* The held bytes are exactly exp[0..n), seen through bw_copy_out, bw_iovec
 * and (when not NULL) bw_data. */
static void held_is(const bw_writer *w, const unsigned char *exp, size_t n, const char *where)
{
    unsigned char *out = (unsigned char *)malloc(n + 1);
    struct iovec one[1];
    struct iovec *iov;
    size_t cnt, i, off = 0;
    const unsigned char *d;
    cr_assert_eq(bw_len(w), n, "%s: bw_len %zu, expected %zu", where, bw_len(w), n);
    cr_assert_eq(bw_copy_out(w, 0, out, n), BW_OK, "%s", where);
    cr_assert(n == 0 || memcmp(out, exp, n) == 0, "%s: copy_out differs", where);
    cnt = bw_iovec(w, one, 0);
    if (n == 0) cr_assert_eq(cnt, 0, "%s: iovec of nothing", where);
    else cr_assert_geq(cnt, 1, "%s", where);
    iov = (struct iovec *)malloc((cnt + 1) * sizeof *iov);
    cr_assert_eq(bw_iovec(w, iov, cnt + 1), cnt, "%s", where);
    for (i = 0; i < cnt; i++) {
        cr_assert_gt(iov[i].iov_len, 0, "%s: empty iovec entry %zu", where, i);
        cr_assert_leq(off + iov[i].iov_len, n, "%s", where);
        cr_assert(memcmp(iov[i].iov_base, exp + off, iov[i].iov_len) == 0,
                  "%s: iovec entry %zu differs", where, i);
        off += iov[i].iov_len;
    }
    cr_assert_eq(off, n, "%s: iovec covers %zu of %zu", where, off, n);
    d = bw_data(w);
    if (d != NULL && n > 0)
        cr_assert(memcmp(d, exp, n) == 0, "%s: bw_data differs", where);
    free(iov);
    free(out);
}

/* ------------------------------------------------------------------------ */
/* A scripted sink                                                          */
/* ------------------------------------------------------------------------ */

typedef struct sink {
    bytes out;        /* every byte accepted, in order */
    long calls;       /* every call, failed ones included */
    long fail_at;     /* this call (from 1) fails with fail_errno; 0 = never */
    int fail_sticky;  /* ... and every later one */
    int fail_errno;
    int take;         /* 0: all n; 1: one byte; 2: a random count 1..n */
    unsigned seed;
    int eintr;        /* every odd call is -1 with EINTR first */
    int broken;       /* 1: returns 0; 2: returns n + 1; 3: returns -2 */
    long bad_args;    /* calls with n == 0 or data NULL */
} sink;

static void sink_reset(sink *s, int take, unsigned seed)
{
    by_free(&s->out);
    memset(s, 0, sizeof *s);
    s->take = take;
    s->seed = seed;
    s->fail_errno = EIO;
}

static ptrdiff_t sink_fn(void *ctx, const void *data, size_t n)
{
    sink *s = (sink *)ctx;
    size_t k = n;
    s->calls++;
    if (n == 0 || data == NULL) {
        s->bad_args++;
        return n == 0 ? 0 : -1;
    }
    if (s->fail_at != 0 && (s->fail_sticky ? s->calls >= s->fail_at : s->calls == s->fail_at)) {
        errno = s->fail_errno;
        return -1;
    }
    if (s->eintr && (s->calls & 1)) {
        errno = EINTR;
        return -1;
    }
    switch (s->broken) {
    case 1: return 0;
    case 2: return (ptrdiff_t)n + 1;
    case 3: errno = EPERM; return -2;
    default: break;
    }
    if (s->take == 1) k = 1;
    else if (s->take == 2) k = 1 + rnd(&s->seed) % n;
    by_add(&s->out, data, k);
    return (ptrdiff_t)k;
}

/* For a streaming writer that never consumed: what the sink got, then what
 * is held, is exactly exp[0..bw_tell). */
static void sent_then_held(const bw_writer *w, const sink *s, const unsigned char *exp,
                           const char *where)
{
    cr_assert_eq((uint64_t)s->out.len + bw_len(w), bw_tell(w),
                 "%s: sent %zu + held %zu != tell %" PRIu64, where, s->out.len, bw_len(w),
                 bw_tell(w));
    cr_assert(s->out.len == 0 || memcmp(s->out.d, exp, s->out.len) == 0,
              "%s: the sink got other bytes", where);
    held_is(w, exp + s->out.len, bw_len(w), where);
}

/* ------------------------------------------------------------------------ */
/* A scripted stream of writes: every op writes exactly s[off, off + len)  */
/* ------------------------------------------------------------------------ */

enum {
    K_WRITE, K_PUTS, K_PRINTF_S, K_PRINTF_N, K_U32LE, K_U64BE, K_UVAR, K_DEC,
    K_HEX, K_SPAN, K_RESERVE, K_NKINDS
};

typedef struct op {
    int kind, width;
    size_t off, len, hint;
    uint64_t v;
} op;

typedef struct work {
    bytes s;
    op *ops;
    size_t nops, cap;
} work;

static void work_make(work *wk, unsigned seed, size_t target, const size_t *sizes, size_t nsizes)
{
    memset(wk, 0, sizeof *wk);
    while (wk->s.len < target) {
        op o;
        unsigned char tmp[64];
        size_t n, i;
        memset(&o, 0, sizeof o);
        o.kind = (int)(rnd(&seed) % K_NKINDS);
        o.off = wk->s.len;
        switch (o.kind) {
        case K_WRITE: case K_PUTS: case K_PRINTF_S: case K_SPAN:
            n = sizes[rnd(&seed) % nsizes];
            for (i = 0; i < n; i++) {
                unsigned char c = (unsigned char)(1 + rnd(&seed) % 255); /* no NUL */
                by_add(&wk->s, &c, 1);
            }
            o.hint = n + rnd(&seed) % 50;
            break;
        case K_PRINTF_N:
            o.v = ((uint64_t)rnd(&seed) << 24) | rnd(&seed);
            o.width = (int)(rnd(&seed) % 40);
            n = (size_t)snprintf((char *)tmp, sizeof tmp, "<%0*" PRIu64 ">", o.width, o.v);
            by_add(&wk->s, tmp, n);
            break;
        case K_U32LE:
            o.v = rnd(&seed) * 257u;
            st_le(tmp, o.v, 4);
            by_add(&wk->s, tmp, 4);
            break;
        case K_U64BE:
            o.v = ((uint64_t)rnd(&seed) << 40) ^ ((uint64_t)rnd(&seed) << 20) ^ rnd(&seed);
            st_be(tmp, o.v, 8);
            by_add(&wk->s, tmp, 8);
            break;
        case K_UVAR:
            o.v = (((uint64_t)rnd(&seed) << 40) ^ ((uint64_t)rnd(&seed) << 20) ^ rnd(&seed)) >>
                  (rnd(&seed) % 64);
            by_add(&wk->s, tmp, uvar_enc(tmp, o.v));
            break;
        case K_DEC:
            o.v = (((uint64_t)rnd(&seed) << 40) ^ rnd(&seed)) >> (rnd(&seed) % 64);
            n = (size_t)snprintf((char *)tmp, sizeof tmp, "%" PRIu64, o.v);
            by_add(&wk->s, tmp, n);
            break;
        case K_HEX: {
            unsigned char src[8];
            o.v = ((uint64_t)rnd(&seed) << 40) ^ ((uint64_t)rnd(&seed) << 20) ^ rnd(&seed);
            st_le(src, o.v, 8);
            n = 1 + rnd(&seed) % 8;
            by_add(&wk->s, tmp, hex_enc((char *)tmp, src, n));
            break;
        }
        default: /* K_RESERVE: no bytes */
            o.hint = sizes[rnd(&seed) % nsizes] * (1 + rnd(&seed) % 3);
            break;
        }
        o.len = wk->s.len - o.off;
        if (wk->nops == wk->cap) {
            wk->cap = wk->cap ? wk->cap * 2 : 64;
            wk->ops = (op *)realloc(wk->ops, wk->cap * sizeof *wk->ops);
            cr_assert_not_null(wk->ops);
        }
        wk->ops[wk->nops++] = o;
    }
}

static void work_free(work *wk)
{
    by_free(&wk->s);
    free(wk->ops);
    memset(wk, 0, sizeof *wk);
}

/* Perform one op on w: BW_OK and exactly its bytes, or an error. */
static int do_op(bw_writer *w, const work *wk, const op *o)
{
    const unsigned char *src = wk->s.d + o->off;
    unsigned char b[8];
    int rc;
    switch (o->kind) {
    case K_WRITE: return bw_write(w, src, o->len);
    case K_PUTS: {
        char *t = (char *)malloc(o->len + 1);
        memcpy(t, src, o->len);
        t[o->len] = '\0';
        rc = bw_puts(w, t);
        free(t);
        return rc;
    }
    case K_PRINTF_S: return bw_printf(w, "%.*s", (int)o->len, (const char *)src);
    case K_PRINTF_N: return bw_printf(w, "<%0*" PRIu64 ">", o->width, o->v);
    case K_U32LE: return bw_put_u32le(w, (uint32_t)o->v);
    case K_U64BE: return bw_put_u64be(w, o->v);
    case K_UVAR: return bw_put_uvarint(w, o->v);
    case K_DEC: return bw_put_dec_u64(w, o->v);
    case K_HEX:
        st_le(b, o->v, 8);
        return bw_put_hex(w, b, o->len / 2);
    case K_SPAN: {
        size_t avail = 12345;
        unsigned char *p = (unsigned char *)bw_get_span(w, o->hint, &avail);
        if (p == NULL) {
            cr_assert_eq(avail, 0, "a failed get_span gives avail 0");
            cr_assert_neq(bw_error(w), BW_OK, "a failed get_span records its error");
            return bw_error(w);
        }
        cr_assert_geq(avail, o->hint);
        cr_assert_eq(avail, bw_free_capacity(w));
        memcpy(p, src, o->len);
        return bw_advance(w, o->len);
    }
    default:
        rc = bw_reserve(w, o->hint);
        if (rc == BW_OK) cr_assert_geq(bw_free_capacity(w), o->hint);
        return rc;
    }
}

static const size_t small_sizes[] = {1, 2, 7, 31, 100, 255, 256, 257, 700, 3000};
#define NSMALL (sizeof small_sizes / sizeof small_sizes[0])

/* ------------------------------------------------------------------------ */
/* Streaming to a sink                                                      */
/* ------------------------------------------------------------------------ */

/* The whole script through a streaming writer on sink s; everything must
 * arrive, exactly once, in order. */
static void stream_all(sink *s, size_t bufsz, unsigned seed, size_t target)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    work wk;
    size_t i;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, 0);
    work_make(&wk, seed, target, small_sizes, NSMALL);
    cr_assert_eq(bw_init_sink(&w, p, bufsz, sink_fn, s), BW_OK);
    for (i = 0; i < wk.nops; i++) {
        cr_assert_eq(do_op(&w, &wk, &wk.ops[i]), BW_OK, "op %zu kind %d", i, wk.ops[i].kind);
        cr_assert_eq(bw_tell(&w), wk.ops[i].off + wk.ops[i].len);
    }
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_assert_eq(bw_len(&w), 0);
    cr_assert_eq(bw_error(&w), BW_OK);
    cr_assert_eq(s->out.len, wk.s.len);
    cr_assert(memcmp(s->out.d, wk.s.d, wk.s.len) == 0, "the sink got other bytes");
    cr_assert_eq(s->bad_args, 0, "the sink was called with n == 0 or NULL data");
    bw_release(&w);
    work_free(&wk);
    ta_finish(&ta, p);
}

Test(output, sink_taking_one_byte_at_a_time_gets_the_exact_stream, .timeout = 60)
{
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    sink_reset(&s, 1, 1);
    stream_all(&s, 256, 11, 20000);
    by_free(&s.out);
}

Test(output, sink_taking_random_short_counts_gets_the_exact_stream, .timeout = 60)
{
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    unsigned seed;
    for (seed = 1; seed <= 3; seed++) {
        sink_reset(&s, 2, seed);
        stream_all(&s, seed == 3 ? 4096 : 256, seed * 7, 40000);
    }
    by_free(&s.out);
}

Test(output, sink_eintr_is_retried, .timeout = 60)
{
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    sink_reset(&s, 2, 5);
    s.eintr = 1;
    stream_all(&s, 256, 3, 20000);
    cr_expect_geq(s.calls, 2 * 20, "every other call was EINTR");
    by_free(&s.out);
}

/* A call that fits never sends; the buffer is rented at the first write
 * and a reserve beyond it is allowed; release and clear never send and keep
 * the mode; zero-length calls never call the sink. */
Test(output, sink_is_called_only_when_room_lacks, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    unsigned char buf[1000];
    size_t i, avail;
    for (i = 0; i < sizeof buf; i++) buf[i] = pat(i, 1);
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, 0);
    sink_reset(&s, 0, 1);
    cr_assert_eq(bw_init_sink(&w, p, 256, sink_fn, &s), BW_OK);
    cr_expect_eq(atomic_load(&ta.allocs), 0, "the buffer is rented at the first write");
    /* zero-length calls: no allocation, no sink call, nothing recorded */
    cr_expect_eq(bw_write(&w, NULL, 0), BW_OK);
    cr_expect_eq(bw_puts(&w, ""), BW_OK);
    cr_expect_eq(bw_reserve(&w, 0), BW_OK);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_advance(&w, 0), BW_OK);
    cr_expect_eq(bw_consume(&w, 0), BW_OK);
    cr_expect_eq(bw_truncate(&w, 0), BW_OK);
    cr_expect_eq(bw_patch(&w, 0, "x", 0), BW_OK);
    cr_expect_eq(atomic_load(&ta.allocs), 0, "zero-length calls allocate nothing");
    cr_expect_eq(s.calls, 0);
    cr_expect_eq(bw_error(&w), BW_OK);
    /* fits: no send */
    cr_assert_eq(bw_write(&w, buf, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 256, "buffer_size 256 is kept");
    cr_assert_eq(bw_write(&w, buf + 100, 156), BW_OK);
    cr_expect_eq(s.calls, 0, "a call that fits (exactly) never sends");
    cr_expect_eq(bw_free_capacity(&w), 0);
    cr_assert_eq(bw_put_u8(&w, buf[256]), BW_OK);
    cr_expect_eq(s.calls, 1, "one call sends the full buffer");
    cr_expect_eq(s.out.len, 256);
    cr_expect_eq(bw_len(&w), 1);
    cr_expect_eq(bw_tell(&w), 257);
    /* a reserve larger than the buffer sends what is held, then has room */
    cr_assert_eq(bw_reserve(&w, 900), BW_OK);
    cr_expect_eq(s.out.len, 257, "reserve beyond the buffer sends the held bytes");
    cr_expect_geq(bw_free_capacity(&w), 900);
    i = (size_t)s.calls;
    cr_assert_eq(bw_write(&w, buf + 257, 743), BW_OK);
    cr_expect_eq((size_t)s.calls, i, "the reserved room is used without sending");
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_assert_eq(s.out.len, 1000);
    cr_expect(memcmp(s.out.d, buf, 1000) == 0);
    i = (size_t)s.calls;
    cr_expect_eq(bw_flush(&w), BW_OK, "nothing held");
    cr_expect_eq((size_t)s.calls, i, "a flush with nothing held does not call the sink");
    /* a span larger than the buffer, too */
    cr_assert_eq(bw_puts(&w, "ab"), BW_OK);
    cr_assert_not_null(bw_get_span(&w, 5000, &avail));
    cr_expect_geq(avail, 5000);
    cr_expect_eq(s.out.len, 1002, "a span beyond the buffer sends the held bytes");
    cr_assert_eq(bw_advance(&w, 0), BW_OK);
    /* clear never sends; tell stays at the first dropped byte */
    cr_assert_eq(bw_puts(&w, "dropped"), BW_OK);
    i = (size_t)s.calls;
    bw_clear(&w);
    cr_expect_eq((size_t)s.calls, i, "bw_clear never sends");
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_tell(&w), 1002, "tell is the first dropped byte");
    /* release never sends and keeps the mode and sink */
    cr_assert_eq(bw_puts(&w, "dropped too"), BW_OK);
    bw_release(&w);
    cr_expect_eq((size_t)s.calls, i, "bw_release never sends");
    cr_expect_eq(bw_tell(&w), 0, "release restarts positions");
    cr_assert_eq(bw_puts(&w, "again"), BW_OK);
    cr_expect_eq(bw_capacity(&w), 256, "release keeps buffer_size");
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(s.out.len, 1007, "release keeps the sink");
    cr_expect(memcmp(s.out.d + 1002, "again", 5) == 0);
    bw_release(&w);
    by_free(&s.out);
    ta_finish(&ta, p);
}

Test(output, sink_buffer_sizes, .timeout = 60)
{
    bw_writer w;
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    volatile size_t huge = (size_t)PTRDIFF_MAX + 1;
    sink_reset(&s, 0, 1);
    cr_assert_eq(bw_init_sink(&w, NULL, 0, sink_fn, &s), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 65536, "buffer_size 0 is 64 KiB");
    bw_release(&w);
    cr_assert_eq(bw_init_sink(&w, NULL, 300, sink_fn, &s), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 512, "300 rounds up by the growth rule");
    bw_release(&w);
    cr_expect_eq(bw_init_sink(&w, NULL, huge, sink_fn, &s), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "a failed init is recorded");
    bw_release(&w);
    cr_expect_eq(s.calls, 0);
    by_free(&s.out);
}

/* NULL writer, NULL sink, fd < 0: BW_EINVAL. */
Test(output, bad_arguments_to_streaming_inits, .timeout = 60)
{
    bw_writer w;
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t written = 5;
    sink_reset(&s, 0, 1);
    cr_expect_eq(bw_init_sink(NULL, NULL, 0, sink_fn, &s), BW_EINVAL);
    cr_expect_eq(bw_init_fd(NULL, NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_flush(NULL), BW_EINVAL);
    cr_expect_eq(bw_write_fd(NULL, 1, &written), BW_EINVAL);
    cr_expect_eq(bw_init_sink(&w, NULL, 0, NULL, NULL), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL, "a NULL sink is recorded");
    cr_expect_eq(bw_put_u8(&w, 1), BW_EINVAL, "and refuses writes");
    cr_expect_eq(bw_len(&w), 0);
    bw_release(&w);
    cr_expect_eq(bw_init_fd(&w, NULL, 0, -1), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL, "fd < 0 is recorded");
    cr_expect_eq(bw_puts(&w, "x"), BW_EINVAL);
    bw_release(&w);
    by_free(&s.out);
}

/* The sink fails (-1, EIO) at its Nth call, once, for every N: the failing
 * call records BW_EIO with errno EIO, no byte is lost (sent + held is the
 * accepted prefix), writes are refused, then clear_error + flush resends from
 * the first byte not accepted and the sink ends with the whole stream. */
static long sticky_with_held, sticky_without_held; /* both cases must occur */

static long sink_fail_run(const work *wk, int take, size_t bufsz, long n, int sticky)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t i, held_at_fail;
    int failures = 0, rc, e;
    long calls;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, 0);
    sink_reset(&s, take, 99);
    s.fail_at = n;
    s.fail_sticky = sticky;
    cr_assert_eq(bw_init_sink(&w, p, bufsz, sink_fn, &s), BW_OK);
    for (i = 0; i <= wk->nops; i++) {
        const op *o = i < wk->nops ? &wk->ops[i] : NULL;
        uint64_t before = bw_tell(&w), acc;
        errno = 0;
        rc = o ? do_op(&w, wk, o) : bw_flush(&w); /* the last step is the flush */
        e = errno;
        if (rc == BW_OK) {
            cr_assert_eq(bw_tell(&w), o ? o->off + o->len : wk->s.len, "N=%ld op %zu", n, i);
            continue;
        }
        failures++;
        cr_assert_eq(failures, 1, "N=%ld: one failure only", n);
        cr_assert_eq(rc, BW_EIO, "N=%ld op %zu: rc %d", n, i, rc);
        cr_assert_eq(bw_error(&w), BW_EIO, "N=%ld: BW_EIO is recorded", n);
        cr_assert_eq(e, EIO, "N=%ld: errno as the sink left it, got %d", n, e);
        cr_assert_eq(s.calls, n, "N=%ld: the failed call is not retried (%ld calls)", n, s.calls);
        acc = bw_tell(&w) - before;
        if (o != NULL) {
            cr_assert_leq(acc, o->len, "N=%ld: accepted more than the call", n);
            if (o->len <= bufsz)
                cr_assert(acc == 0 || acc == o->len,
                          "N=%ld op %zu kind %d: a call of at most the buffer size is "
                          "all-or-nothing, accepted %" PRIu64 " of %zu", n, i, o->kind, acc,
                          o->len);
        } else {
            cr_assert_eq(acc, 0);
        }
        sent_then_held(&w, &s, wk->s.d, "after the failure");
        /* refused while recorded, no sink call, nothing changed */
        calls = s.calls;
        cr_assert_eq(bw_write(&w, "x", 1), BW_EIO);
        cr_assert_eq(bw_puts(&w, "yy"), BW_EIO);
        cr_assert_eq(bw_printf(&w, "%d", 7), BW_EIO);
        cr_assert_eq(bw_flush(&w), BW_EIO);
        cr_assert_eq(bw_write_fd(&w, closed_fd(), NULL), BW_EIO);
        cr_assert_eq(s.calls, calls, "N=%ld: a recorded error sends nothing", n);
        cr_assert_eq(bw_tell(&w), before + acc);
        bw_clear_error(&w);
        cr_assert_eq(bw_error(&w), BW_OK);
        held_at_fail = bw_len(&w);
        rc = bw_flush(&w);
        if (sticky) {
            /* the sink fails for good: one more call, no loop (none when
             * nothing is held: a zero-length call) */
            if (held_at_fail == 0) {
                sticky_without_held++;
                cr_assert_eq(rc, BW_OK, "N=%ld: nothing held", n);
                cr_assert_eq(s.calls, calls, "N=%ld: nothing held, no sink call", n);
            } else {
                sticky_with_held++;
                cr_assert_eq(rc, BW_EIO, "N=%ld: %zu held", n, held_at_fail);
                cr_assert_eq(s.calls, calls + 1, "N=%ld: a failing sink is called once per flush",
                             n);
            }
            sent_then_held(&w, &s, wk->s.d, "sticky failure");
            break;
        }
        cr_assert_eq(rc, BW_OK, "N=%ld: clear_error then flush resends", n);
        cr_assert_eq(bw_len(&w), 0);
        sent_then_held(&w, &s, wk->s.d, "after the retry");
        if (o != NULL && before + acc < o->off + o->len) /* the rest of the op */
            cr_assert_eq(bw_write(&w, wk->s.d + before + acc,
                                  (size_t)(o->off + o->len - before - acc)), BW_OK);
    }
    if (!sticky) {
        cr_assert_eq(bw_len(&w), 0);
        cr_assert_eq(s.out.len, wk->s.len, "N=%ld: sink got %zu of %zu bytes", n, s.out.len,
                     wk->s.len);
        cr_assert(memcmp(s.out.d, wk->s.d, wk->s.len) == 0, "N=%ld: bytes lost or repeated", n);
    }
    cr_assert_eq(s.bad_args, 0);
    if (n > 0 && !sticky) cr_assert(failures == 1 || s.calls < n, "N=%ld: the failure is reported", n);
    calls = s.calls;
    bw_release(&w);
    by_free(&s.out);
    ta_finish(&ta, p);
    return calls;
}

static void sink_fail_every_n(int take, size_t bufsz, int sticky, unsigned seed)
{
    work wk;
    long total, n;
    work_make(&wk, seed, 12000, small_sizes, NSMALL);
    total = sink_fail_run(&wk, take, bufsz, 0, 0);
    cr_assert_gt(total, 10);
    sticky_with_held = sticky_without_held = 0;
    for (n = 1; n <= total + 1; n++) sink_fail_run(&wk, take, bufsz, n, sticky);
    if (sticky) {
        cr_expect_gt(sticky_with_held, 0, "a failure with bytes held was tested");
        cr_expect_gt(sticky_without_held, 0, "a failure with nothing held was tested");
    }
    work_free(&wk);
}

Test(output, sink_failing_at_every_call_loses_and_repeats_nothing, .timeout = 120)
{
    sink_fail_every_n(0, 256, 0, 21);
    sink_fail_every_n(2, 256, 0, 22);
}

Test(output, sink_failing_for_good_at_every_call_keeps_the_rest_held, .timeout = 120)
{
    sink_fail_every_n(0, 256, 1, 23);
    sink_fail_every_n(2, 512, 1, 24);
}

/* A sink returning 0, more than n or below -1: BW_EIO, errno EIO, no loop. */
Test(output, broken_sinks_are_eio_without_looping, .timeout = 60)
{
    int kind;
    unsigned char buf[600];
    size_t i;
    for (i = 0; i < sizeof buf; i++) buf[i] = pat(i, 4);
    for (kind = 1; kind <= 3; kind++) {
        bw_writer w;
        sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        int rc, e;
        sink_reset(&s, 0, 1);
        s.broken = kind;
        cr_assert_eq(bw_init_sink(&w, NULL, 256, sink_fn, &s), BW_OK);
        cr_assert_eq(bw_write(&w, buf, 200), BW_OK);
        errno = 0;
        rc = bw_flush(&w);
        e = errno;
        cr_expect_eq(rc, BW_EIO, "broken sink %d: flush %d", kind, rc);
        cr_expect_eq(e, EIO, "broken sink %d: errno %d", kind, e);
        cr_expect_eq(bw_error(&w), BW_EIO, "broken sink %d", kind);
        cr_expect_eq(s.calls, 1, "broken sink %d: called %ld times", kind, s.calls);
        cr_expect_leq(bw_len(&w), 200);
        if (kind != 2) { /* it took nothing: everything is still held */
            cr_expect_eq(bw_len(&w), 200, "broken sink %d", kind);
            held_is(&w, buf, bw_len(&w), "broken sink");
        }
        /* a write bigger than the buffer, too */
        bw_clear_error(&w);
        bw_clear(&w);
        s.calls = 0;
        errno = 0;
        rc = bw_write(&w, buf, sizeof buf);
        e = errno;
        cr_expect_eq(rc, BW_EIO, "broken sink %d: big write %d", kind, rc);
        cr_expect_eq(e, EIO, "broken sink %d: big write errno %d", kind, e);
        cr_expect_eq(s.calls, 1, "broken sink %d: big write called it %ld times", kind, s.calls);
        cr_expect_leq(bw_tell(&w), 200 + sizeof buf);
        bw_release(&w);
        by_free(&s.out);
    }
}

/* A source inside the writer's own held bytes, also when the call
 * sends and reuses the streaming buffer. */
Test(output, streaming_source_may_alias_the_buffer, .timeout = 60)
{
    bw_writer w;
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    bytes exp = {NULL, 0, 0};
    unsigned char buf[200];
    char hex[200];
    size_t i;
    for (i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(1 + pat(i, 9) % 255);
    sink_reset(&s, 2, 3);
    cr_assert_eq(bw_init_sink(&w, NULL, 256, sink_fn, &s), BW_OK);
    /* write */
    cr_assert_eq(bw_write(&w, buf, 200), BW_OK);
    by_add(&exp, buf, 200);
    cr_assert_not_null(bw_data(&w));
    cr_assert_eq(bw_write(&w, bw_data(&w), 200), BW_OK);
    by_add(&exp, buf, 200);
    /* printf argument */
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_assert_eq(bw_write(&w, buf, 150), BW_OK);
    by_add(&exp, buf, 150);
    cr_assert_eq(bw_printf(&w, "[%.*s]", 150, (const char *)bw_data(&w)), BW_OK);
    by_add(&exp, "[", 1);
    by_add(&exp, buf, 150);
    by_add(&exp, "]", 1);
    /* put_hex */
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_assert_eq(bw_write(&w, buf, 100), BW_OK);
    by_add(&exp, buf, 100);
    cr_assert_eq(bw_put_hex(&w, bw_data(&w), 100), BW_OK);
    by_add(&exp, hex, hex_enc(hex, buf, 100));
    /* puts */
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_assert_eq(bw_write(&w, buf, 199), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 0), BW_OK);
    by_add(&exp, buf, 199);
    by_add(&exp, "", 1);
    cr_assert_eq(bw_puts(&w, (const char *)bw_data(&w)), BW_OK);
    by_add(&exp, buf, 199);
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_assert_eq(s.out.len, exp.len);
    cr_expect(memcmp(s.out.d, exp.d, exp.len) == 0, "aliased sources were overwritten");
    bw_release(&w);
    by_free(&s.out);
    by_free(&exp);
}

/* ------------------------------------------------------------------------ */
/* Streaming to a file descriptor, EPIPE, SIGPIPE                           */
/* ------------------------------------------------------------------------ */

/* A reader thread: reads until EOF in uneven pieces, sometimes pausing, and
 * compares with exp. */
typedef struct reader {
    int fd;
    int slow;
    const unsigned char *exp;
    size_t want, got;
    long bad;
} reader;

static void *reader_main(void *arg)
{
    reader *rd = (reader *)arg;
    unsigned char b[4096];
    long pieces = 0;
    for (;;) {
        size_t ask = rd->slow ? 1 + (rd->got * 7 + 13) % sizeof b : sizeof b;
        ssize_t k = read(rd->fd, b, ask), i;
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (i = 0; i < k; i++) {
            size_t at = rd->got + (size_t)i;
            rd->bad += at >= rd->want || b[i] != rd->exp[at];
        }
        rd->got += (size_t)k;
        if (rd->slow && ++pieces % 128 == 0) usleep(300);
    }
    return NULL;
}

Test(output, fd_stream_to_pipe_with_slow_reader, .timeout = 120)
{
    static const size_t sizes[] = {1, 3, 10, 100, 100, 1000, 1000, 5000, 70000, 300000};
    work wk;
    bw_writer w;
    int fds[2];
    pthread_t t;
    reader rd;
    size_t i;
    work_make(&wk, 77, 4u << 20, sizes, sizeof sizes / sizeof sizes[0]);
    cr_assert_eq(pipe(fds), 0);
    memset(&rd, 0, sizeof rd);
    rd.fd = fds[0];
    rd.slow = 1;
    rd.exp = wk.s.d;
    rd.want = wk.s.len;
    cr_assert_eq(pthread_create(&t, NULL, reader_main, &rd), 0);
    cr_assert_eq(bw_init_fd(&w, NULL, 0, fds[1]), BW_OK);
    for (i = 0; i < wk.nops; i++)
        cr_assert_eq(do_op(&w, &wk, &wk.ops[i]), BW_OK, "op %zu", i);
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_tell(&w), wk.s.len);
    bw_release(&w);
    cr_expect_neq(fcntl(fds[1], F_GETFD), -1, "the library never closes the fd");
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    cr_expect_eq(rd.got, wk.s.len, "got %zu of %zu", rd.got, wk.s.len);
    cr_expect_eq(rd.bad, 0, "%ld bytes differ", rd.bad);
    work_free(&wk);
}

Test(output, fd_stream_to_full_nonblocking_socket_records_eagain, .timeout = 60)
{
    work wk;
    bw_writer w;
    int sv[2], rc = BW_OK, e = 0, sndbuf = 16384;
    bytes got = {NULL, 0, 0};
    size_t i, rounds = 0;
    uint64_t before = 0;
    work_make(&wk, 5, 1u << 20, small_sizes, NSMALL);
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    set_nonblock(sv[0]);
    set_nonblock(sv[1]);
    cr_assert_eq(bw_init_fd(&w, NULL, 4096, sv[0]), BW_OK);
    for (i = 0; i < wk.nops; i++) {
        before = bw_tell(&w);
        errno = 0;
        rc = do_op(&w, &wk, &wk.ops[i]);
        e = errno;
        if (rc != BW_OK) break;
    }
    cr_assert_eq(rc, BW_EIO, "1 MiB into a full socket must fail (rc %d)", rc);
    cr_assert_eq(e, EAGAIN, "errno %d", e);
    cr_assert_eq(bw_error(&w), BW_EIO, "EAGAIN is recorded in streaming mode");
    cr_assert_leq(bw_tell(&w) - before, wk.ops[i].len);
    /* sent + held is exactly the accepted prefix */
    drain(sv[1], &got);
    cr_assert_eq((uint64_t)got.len + bw_len(&w), bw_tell(&w));
    cr_assert(memcmp(got.d, wk.s.d, got.len) == 0, "the peer got other bytes");
    held_is(&w, wk.s.d + got.len, bw_len(&w), "held after EAGAIN");
    cr_assert_eq(bw_puts(&w, "x"), BW_EIO, "refused while recorded");
    /* retry: clear_error + flush until all went out */
    for (;;) {
        bw_clear_error(&w);
        errno = 0;
        rc = bw_flush(&w);
        e = errno;
        drain(sv[1], &got);
        if (rc == BW_OK) break;
        cr_assert_eq(rc, BW_EIO);
        cr_assert_eq(e, EAGAIN);
        cr_assert_lt(++rounds, 100000);
    }
    drain(sv[1], &got);
    cr_assert_eq((uint64_t)got.len, bw_tell(&w), "every accepted byte arrives once");
    cr_assert(memcmp(got.d, wk.s.d, got.len) == 0, "the peer got other bytes");
    bw_release(&w);
    close(sv[0]);
    close(sv[1]);
    by_free(&got);
    work_free(&wk);
}

/* Signal state: the mask and SIGPIPE's disposition are unchanged, and
 * SIGPIPE is pending only if it was before. */
typedef struct sigstate {
    sigset_t mask;
    struct sigaction act;
} sigstate;

static void sig_save(sigstate *s)
{
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &s->mask), 0);
    cr_assert_eq(sigaction(SIGPIPE, NULL, &s->act), 0);
}

static void sig_expect_same(const sigstate *s, int pending, const char *where)
{
    sigstate now;
    sigset_t pend;
    int sig;
    sig_save(&now);
    for (sig = 1; sig < NSIG; sig++)
        cr_expect_eq(sigismember(&now.mask, sig), sigismember(&s->mask, sig),
                     "%s: the signal mask changed for signal %d", where, sig);
    cr_expect(now.act.sa_handler == s->act.sa_handler, "%s: SIGPIPE's disposition changed",
              where);
    cr_expect_eq(now.act.sa_flags, s->act.sa_flags, "%s", where);
    cr_assert_eq(sigpending(&pend), 0);
    cr_expect_eq(sigismember(&pend, SIGPIPE), pending, "%s: SIGPIPE pending is %d, expected %d",
                 where, sigismember(&pend, SIGPIPE), pending);
}

/* Streaming to an fd whose reader is gone: BW_EIO, errno EPIPE, alive. */
static void stream_to_dead_reader(int fd, const char *where)
{
    bw_writer w;
    unsigned char big[1000];
    int rc, e;
    memset(big, 'b', sizeof big);
    cr_assert_eq(bw_init_fd(&w, NULL, 256, fd), BW_OK);
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    errno = 0;
    rc = bw_flush(&w);
    e = errno;
    cr_expect_eq(rc, BW_EIO, "%s: flush %d", where, rc);
    cr_expect_eq(e, EPIPE, "%s: errno %d", where, e);
    cr_expect_eq(bw_error(&w), BW_EIO, "%s: recorded", where);
    held_is(&w, (const unsigned char *)"hello", 5, where);
    bw_clear_error(&w);
    errno = 0;
    rc = bw_write(&w, big, sizeof big); /* larger than the buffer */
    e = errno;
    cr_expect_eq(rc, BW_EIO, "%s: big write %d", where, rc);
    cr_expect_eq(e, EPIPE, "%s: big write errno %d", where, e);
    cr_expect_eq(bw_tell(&w), 5, "%s: nothing of the big write went out", where);
    bw_release(&w);
    cr_expect_neq(fcntl(fd, F_GETFD), -1, "%s: the library never closes the fd", where);
}

Test(output, fd_stream_to_pipe_without_reader_is_epipe_no_signal, .timeout = 60)
{
    sigstate before;
    int fds[2];
    signal(SIGPIPE, SIG_DFL); /* a SIGPIPE that got through would kill us */
    sig_save(&before);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    stream_to_dead_reader(fds[1], "pipe");
    sig_expect_same(&before, 0, "pipe");
    close(fds[1]);
}

Test(output, fd_stream_to_pipe_without_reader_with_sigpipe_blocked_leaves_none_pending, .timeout = 60)
{
    sigstate before;
    sigset_t set;
    int fds[2];
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    sig_save(&before);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    stream_to_dead_reader(fds[1], "pipe, SIGPIPE blocked");
    sig_expect_same(&before, 0, "pipe, SIGPIPE blocked");
    close(fds[1]);
}

Test(output, fd_stream_to_pipe_without_reader_keeps_a_callers_pending_sigpipe, .timeout = 60)
{
    sigstate before;
    sigset_t set;
    struct timespec zero = {0, 0};
    int fds[2];
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    raise(SIGPIPE); /* the caller's own, pending */
    sig_save(&before);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    stream_to_dead_reader(fds[1], "pipe, SIGPIPE already pending");
    sig_expect_same(&before, 1, "pipe, SIGPIPE already pending");
    close(fds[1]);
    (void)sigtimedwait(&set, NULL, &zero); /* take ours back */
}

Test(output, fd_stream_to_socket_without_peer_is_epipe_no_signal, .timeout = 60)
{
    sigstate before;
    int sv[2];
    signal(SIGPIPE, SIG_DFL);
    sig_save(&before);
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    stream_to_dead_reader(sv[0], "socket");
    sig_expect_same(&before, 0, "socket");
    close(sv[0]);
}

Test(output, fd_stream_to_closed_fd_is_ebadf, .timeout = 60)
{
    bw_writer w, c;
    int fd = closed_fd(), rc, e;
    size_t written = 77;
    cr_assert_eq(bw_init_fd(&w, NULL, 256, fd), BW_OK);
    cr_assert_eq(bw_puts(&w, "abc"), BW_OK);
    errno = 0;
    rc = bw_flush(&w);
    e = errno;
    cr_expect_eq(rc, BW_EIO);
    cr_expect_eq(e, EBADF, "errno %d", e);
    cr_expect_eq(bw_error(&w), BW_EIO);
    held_is(&w, (const unsigned char *)"abc", 3, "EBADF");
    bw_release(&w);
    /* and bw_write_fd: the same failure, not recorded */
    cr_assert_eq(bw_init(&c, NULL, 0), BW_OK);
    cr_assert_eq(bw_puts(&c, "abc"), BW_OK);
    errno = 0;
    rc = bw_write_fd(&c, fd, &written);
    e = errno;
    cr_expect_eq(rc, BW_EIO);
    cr_expect_eq(e, EBADF, "errno %d", e);
    cr_expect_eq(written, 0);
    cr_expect_eq(bw_error(&c), BW_OK, "bw_write_fd never records");
    held_is(&c, (const unsigned char *)"abc", 3, "EBADF write_fd");
    bw_release(&c);
}

/* ------------------------------------------------------------------------ */
/* Every mode                                                               */
/* ------------------------------------------------------------------------ */


typedef struct mw {
    bw_writer w;
    int mode;
    sink s;
    unsigned char *buf; /* fixed: the buffer; M_BUFFER: the first buffer */
    size_t room;
} mw;

/* room: the streaming buffer size or the fixed buffer size. */
static void mw_init(mw *m, int mode, bw_pool *p, size_t room)
{
    memset(m, 0, sizeof *m);
    m->mode = mode;
    m->room = room;
    sink_reset(&m->s, 2, 1234);
    switch (mode) {
    case M_CONTIG: cr_assert_eq(bw_init(&m->w, p, 0), BW_OK); break;
    case M_BUFFER:
        m->buf = (unsigned char *)malloc(256);
        cr_assert_eq(bw_init_buffer(&m->w, p, m->buf, 256), BW_OK);
        break;
    case M_CHAIN: cr_assert_eq(bw_init_chain(&m->w, p), BW_OK); break;
    case M_SINK: cr_assert_eq(bw_init_sink(&m->w, p, room, sink_fn, &m->s), BW_OK); break;
    default:
        m->buf = (unsigned char *)malloc(room);
        cr_assert_eq(bw_init_fixed(&m->w, m->buf, room), BW_OK);
        break;
    }
}

static void mw_done(mw *m)
{
    bw_release(&m->w);
    free(m->buf);
    by_free(&m->s.out);
}

static void fill_pattern(bw_writer *w, unsigned char *exp, size_t n, unsigned seed)
{
    size_t i, k;
    for (i = 0; i < n; i++) exp[i] = pat(i, seed);
    for (i = 0; i < n; i += k) {
        k = 1 + (i * 31) % 3000;
        if (k > n - i) k = n - i;
        cr_assert_eq(bw_write(w, exp + i, k), BW_OK);
    }
}

/* bw_write_fd sends everything (writev, short writes resumed) and consumes it;
 * on a streaming writer the sink is not called. */
Test(output, write_fd_every_mode_sends_all_and_consumes, .timeout = 60)
{
    const size_t n = 700000;
    unsigned char *exp = (unsigned char *)malloc(n + 16);
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        test_alloc ta;
        bw_pool *p;
        mw m;
        int fds[2];
        pthread_t t;
        reader rd;
        size_t written = 0;
        ta_init(&ta, 1);
        p = ta_pool(&ta, 65536, 0);
        mw_init(&m, mode, p, 1u << 20);
        fill_pattern(&m.w, exp, n, (unsigned)mode);
        memcpy(exp + n, "<tail>", 6);
        cr_assert_eq(bw_len(&m.w), n);
        cr_assert_eq(pipe(fds), 0);
        memset(&rd, 0, sizeof rd);
        rd.fd = fds[0];
        rd.slow = mode & 1;
        rd.exp = exp;
        rd.want = n + 6;
        cr_assert_eq(pthread_create(&t, NULL, reader_main, &rd), 0);
        cr_assert_eq(bw_write_fd(&m.w, fds[1], &written), BW_OK, "%s", mode_name[mode]);
        cr_expect_eq(written, n, "%s", mode_name[mode]);
        cr_expect_eq(bw_len(&m.w), 0, "%s: what went out is consumed", mode_name[mode]);
        cr_expect_eq(bw_tell(&m.w), n, "%s", mode_name[mode]);
        cr_expect_eq(bw_error(&m.w), BW_OK);
        /* still usable; written may be NULL */
        cr_assert_eq(bw_puts(&m.w, "<tail>"), BW_OK);
        cr_assert_eq(bw_write_fd(&m.w, fds[1], NULL), BW_OK, "%s", mode_name[mode]);
        cr_expect_eq(bw_len(&m.w), 0);
        cr_expect_eq(bw_tell(&m.w), n + 6);
        cr_expect_eq(m.s.calls, 0, "%s: bw_write_fd never calls the sink", mode_name[mode]);
        close(fds[1]);
        pthread_join(t, NULL);
        close(fds[0]);
        cr_expect_eq(rd.got, n + 6, "%s: the reader got %zu", mode_name[mode], rd.got);
        cr_expect_eq(rd.bad, 0, "%s: %ld bytes differ", mode_name[mode], rd.bad);
        mw_done(&m);
        ta_finish(&ta, p);
    }
    free(exp);
}

/* More pieces than one writev takes (IOV_MAX is 1024 on Linux). */
Test(output, write_fd_segmented_with_more_blocks_than_iov_max, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    unsigned char exp[1100];
    struct iovec one[1];
    int fds[2];
    pthread_t t;
    reader rd;
    size_t i, written = 0;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 4096, 0);
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    for (i = 0; i < sizeof exp; i++) {
        exp[i] = pat(i, 8);
        cr_assert_eq(bw_put_u8(&w, exp[i]), BW_OK);
        if (i + 1 < sizeof exp) /* the next byte goes to a new block */
            cr_assert_eq(bw_reserve(&w, bw_free_capacity(&w) + 1), BW_OK);
    }
    cr_assert_eq(bw_len(&w), sizeof exp);
    cr_assert_eq(bw_iovec(&w, one, 0), sizeof exp, "one entry per block");
    held_is(&w, exp, sizeof exp, "1100 blocks");
    cr_assert_eq(pipe(fds), 0);
    memset(&rd, 0, sizeof rd);
    rd.fd = fds[0];
    rd.exp = exp;
    rd.want = sizeof exp;
    cr_assert_eq(pthread_create(&t, NULL, reader_main, &rd), 0);
    cr_assert_eq(bw_write_fd(&w, fds[1], &written), BW_OK);
    cr_expect_eq(written, sizeof exp);
    cr_expect_eq(bw_len(&w), 0);
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    cr_expect_eq(rd.got, sizeof exp);
    cr_expect_eq(rd.bad, 0);
    bw_release(&w);
    ta_finish(&ta, p);
}

/* The 0.1 defect: an 800 KB message to a full non-blocking socket was resent
 * from byte 0 on every call. bw_write_fd returns BW_EIO/EAGAIN without
 * recording, counts what went out, keeps the rest, and continues. */
Test(output, write_fd_nonblocking_every_mode_continues_where_it_stopped, .timeout = 60)
{
    const size_t n = 800000;
    unsigned char *exp = (unsigned char *)malloc(n + 16);
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        int sv[2], sndbuf = 32768, again = 0;
        bytes got = {NULL, 0, 0};
        size_t rounds = 0, total = n;
        mw_init(&m, mode, NULL, 1u << 20);
        fill_pattern(&m.w, exp, n, 40u + (unsigned)mode);
        memcpy(exp + n, "<tail>", 6);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        set_nonblock(sv[0]);
        set_nonblock(sv[1]);
        for (;;) {
            size_t held = bw_len(&m.w), written = 12345;
            int rc, e;
            errno = 0;
            rc = bw_write_fd(&m.w, sv[0], &written);
            e = errno;
            cr_assert_eq(bw_error(&m.w), BW_OK, "%s: bw_write_fd never records", mode_name[mode]);
            cr_assert_eq(written + bw_len(&m.w), held, "%s: written %zu, held %zu of %zu",
                         mode_name[mode], written, bw_len(&m.w), held);
            cr_assert_eq(bw_tell(&m.w), total, "%s", mode_name[mode]);
            if (rc == BW_OK) {
                cr_assert_eq(bw_len(&m.w), 0);
                break;
            }
            cr_assert_eq(rc, BW_EIO, "%s: rc %d", mode_name[mode], rc);
            cr_assert_eq(e, EAGAIN, "%s: errno %d", mode_name[mode], e);
            if (!again) {
                cr_assert_gt(written, 0, "%s: some went out first", mode_name[mode]);
                /* the writer is fine: it takes more bytes */
                cr_assert_eq(bw_puts(&m.w, "<tail>"), BW_OK, "%s", mode_name[mode]);
                total += 6;
                again = 1;
            }
            drain(sv[1], &got);
            cr_assert_lt(++rounds, 100000);
        }
        drain(sv[1], &got);
        cr_expect(again, "%s: the socket never filled", mode_name[mode]);
        cr_expect_eq(got.len, n + 6, "%s: the peer got %zu bytes of %zu", mode_name[mode],
                     got.len, n + 6);
        cr_expect(got.len == n + 6 && memcmp(got.d, exp, n + 6) == 0,
                  "%s: the peer got other bytes", mode_name[mode]);
        cr_expect_eq(m.s.calls, 0, "%s: the sink is not called", mode_name[mode]);
        close(sv[0]);
        close(sv[1]);
        by_free(&got);
        mw_done(&m);
    }
    free(exp);
}

Test(output, write_fd_with_recorded_error_sends_nothing, .timeout = 60)
{
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        int sv[2];
        size_t written = 99;
        bytes got = {NULL, 0, 0};
        mw_init(&m, mode, NULL, 4096);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        set_nonblock(sv[1]);
        cr_assert_eq(bw_puts(&m.w, "payload"), BW_OK);
        cr_assert_eq(bw_consume(&m.w, 8), BW_EINVAL); /* records BW_EINVAL */
        cr_assert_eq(bw_error(&m.w), BW_EINVAL);
        cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_EINVAL, "%s", mode_name[mode]);
        cr_expect_eq(written, 0, "%s", mode_name[mode]);
        cr_expect_eq(bw_write_fd(&m.w, sv[0], NULL), BW_EINVAL, "%s", mode_name[mode]);
        drain(sv[1], &got);
        cr_expect_eq(got.len, 0, "%s: nothing sent", mode_name[mode]);
        held_is(&m.w, (const unsigned char *)"payload", 7, mode_name[mode]);
        cr_expect_eq(bw_error(&m.w), BW_EINVAL);
        /* cleared: it goes out */
        bw_clear_error(&m.w);
        cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_OK, "%s", mode_name[mode]);
        cr_expect_eq(written, 7);
        drain(sv[1], &got);
        cr_expect(got.len == 7 && memcmp(got.d, "payload", 7) == 0, "%s", mode_name[mode]);
        close(sv[0]);
        close(sv[1]);
        by_free(&got);
        mw_done(&m);
    }
}

/* A kernel write that returns 0 (no byte taken, no error) happens on some
 * devices and FUSE files and cannot be provoked on a pipe or a socket, so
 * this program supplies its own writev and sendmsg, which take precedence
 * over libc's: for the fd in zero_fd they return 0, for every other fd they
 * make the real system call. 0.1 looped forever on such a return. */
static int zero_fd = -1;
static long zero_calls;

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (fd == zero_fd && zero_fd >= 0) {
        zero_calls++;
        return 0;
    }
    return (ssize_t)syscall(SYS_writev, fd, iov, cnt);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    if (fd == zero_fd && zero_fd >= 0) {
        zero_calls++;
        return 0;
    }
    return (ssize_t)syscall(SYS_sendmsg, fd, m, flags);
}

/* A write(2) of 0 is BW_EIO (errno EIO) after one call, never a loop,
 * and loses nothing: for bw_write_fd in every mode over a pipe and a socket,
 * and for a streaming fd writer's flush. */
Test(output, write_fd_kernel_returning_zero_is_eio_not_a_loop, .timeout = 30)
{
    int mode, kind;
    for (kind = 0; kind < 2; kind++) {
        for (mode = 0; mode < M_COUNT; mode++) {
            mw m;
            int sv[2];
            size_t written = 99;
            bytes got = {NULL, 0, 0};
            const char *what = kind ? "socket" : "pipe";
            if (kind) cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
            else {
                cr_assert_eq(pipe(sv), 0);
                int t = sv[0]; /* sv[0] is the end written to, as for the socket */
                sv[0] = sv[1];
                sv[1] = t;
            }
            set_nonblock(sv[1]);
            mw_init(&m, mode, NULL, 4096);
            cr_assert_eq(bw_puts(&m.w, "payload"), BW_OK);
            zero_fd = sv[0];
            zero_calls = 0;
            errno = 0;
            cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_EIO, "%s %s", what, mode_name[mode]);
            cr_expect_eq(errno, EIO, "%s %s", what, mode_name[mode]);
            cr_expect_eq(zero_calls, 1, "%s %s: one call, no loop", what, mode_name[mode]);
            cr_expect_eq(written, 0);
            cr_expect_eq(bw_error(&m.w), BW_OK, "%s %s: bw_write_fd records nothing", what,
                         mode_name[mode]);
            held_is(&m.w, (const unsigned char *)"payload", 7, mode_name[mode]);
            zero_fd = -1; /* the fd works again: everything goes out once */
            cr_expect_eq(bw_write_fd(&m.w, sv[0], &written), BW_OK, "%s %s", what, mode_name[mode]);
            cr_expect_eq(written, 7);
            drain(sv[1], &got);
            cr_expect(got.len == 7 && memcmp(got.d, "payload", 7) == 0, "%s %s", what,
                      mode_name[mode]);
            mw_done(&m);

            { /* a streaming writer over the fd: its flush fails the same way */
                bw_writer w;
                got.len = 0;
                cr_assert_eq(bw_init_fd(&w, NULL, 64, sv[0]), BW_OK);
                cr_assert_eq(bw_puts(&w, "held"), BW_OK);
                zero_fd = sv[0];
                zero_calls = 0;
                cr_expect_eq(bw_flush(&w), BW_EIO, "%s: streaming flush", what);
                cr_expect_eq(zero_calls, 1, "%s: streaming flush, one call", what);
                cr_expect_eq(bw_error(&w), BW_EIO, "%s: a sink failure is recorded", what);
                cr_expect_eq(bw_len(&w), 4, "%s: the bytes stay held", what);
                zero_fd = -1;
                bw_clear_error(&w);
                cr_expect_eq(bw_flush(&w), BW_OK, "%s", what);
                drain(sv[1], &got);
                cr_expect(got.len == 4 && memcmp(got.d, "held", 4) == 0, "%s", what);
                bw_release(&w);
            }
            close(sv[0]);
            close(sv[1]);
            by_free(&got);
        }
    }
}

/* Nothing held is BW_OK without a system call (a closed fd shows). */
Test(output, write_fd_with_nothing_held_makes_no_system_call, .timeout = 60)
{
    int mode, fd = closed_fd();
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        size_t written = 5;
        mw_init(&m, mode, NULL, 4096);
        cr_expect_eq(bw_write_fd(&m.w, fd, &written), BW_OK, "%s: never written",
                     mode_name[mode]);
        cr_expect_eq(written, 0);
        cr_assert_eq(bw_puts(&m.w, "abc"), BW_OK);
        cr_assert_eq(bw_consume(&m.w, 3), BW_OK);
        written = 5;
        cr_expect_eq(bw_write_fd(&m.w, fd, &written), BW_OK, "%s: all consumed",
                     mode_name[mode]);
        cr_expect_eq(written, 0);
        cr_expect_eq(bw_write_fd(&m.w, fd, NULL), BW_OK);
        cr_expect_eq(bw_error(&m.w), BW_OK);
        cr_expect_eq(m.s.calls, 0);
        mw_done(&m);
    }
}

Test(output, write_fd_epipe_on_pipe_and_socket_without_dying, .timeout = 60)
{
    int mode, kind;
    sigstate before;
    signal(SIGPIPE, SIG_DFL);
    sig_save(&before);
    for (mode = 0; mode < M_COUNT; mode++) {
        for (kind = 0; kind < 2; kind++) {
            mw m;
            int fds[2], rc, e;
            size_t written = 5;
            const char *what = kind ? "socket" : "pipe";
            mw_init(&m, mode, NULL, 4096);
            if (kind) cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
            else cr_assert_eq(pipe(fds), 0);
            close(kind ? fds[1] : fds[0]);
            cr_assert_eq(bw_puts(&m.w, "abc"), BW_OK);
            errno = 0;
            rc = bw_write_fd(&m.w, kind ? fds[0] : fds[1], &written);
            e = errno;
            cr_expect_eq(rc, BW_EIO, "%s %s: rc %d", mode_name[mode], what, rc);
            cr_expect_eq(e, EPIPE, "%s %s: errno %d", mode_name[mode], what, e);
            cr_expect_eq(written, 0, "%s %s", mode_name[mode], what);
            cr_expect_eq(bw_error(&m.w), BW_OK, "%s %s: not recorded", mode_name[mode], what);
            held_is(&m.w, (const unsigned char *)"abc", 3, what);
            close(kind ? fds[0] : fds[1]);
            mw_done(&m);
        }
    }
    sig_expect_same(&before, 0, "bw_write_fd EPIPE");
}

/* ------------------------------------------------------------------------ */
/* FILE* adapter                                                            */
/* ------------------------------------------------------------------------ */

#ifdef BW_HAVE_FILE_ADAPTER
#define FMT "%d %i %u %x %X %o %c %s %5.2f %e %g %% %ld %lld %zu %p %-6s| %+d %05d %.3s"
#define ARGS -42, 7, 3000000000u, 0xbeefu, 0xbeefu, 8u, 'z', "str", 3.14159, 1e-7, 2.5, \
             -123456789L, 9000000000LL, (size_t)77, (void *)0x1234, "ab", 5, 42, "abcdef"

/* What the writer has received: sink + held for streaming, else held. */
static void mw_expect_all(mw *m, const void *exp, size_t n, const char *where)
{
    if (m->mode == M_SINK) {
        cr_assert_eq(m->s.out.len + bw_len(&m->w), n, "%s %s", mode_name[m->mode], where);
        cr_assert(m->s.out.len == 0 || memcmp(m->s.out.d, exp, m->s.out.len) == 0, "%s %s",
                  mode_name[m->mode], where);
        held_is(&m->w, (const unsigned char *)exp + m->s.out.len, bw_len(&m->w), where);
    } else {
        held_is(&m->w, (const unsigned char *)exp, n, where);
    }
}
#endif

Test(output, fopen_fprintf_lands_in_every_mode, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    char want[1024];
    int mode, n;
    n = snprintf(want, sizeof want, FMT, ARGS);
    cr_assert_gt(n, 0);
    memcpy(want + n, "more", 4);
    for (mode = 0; mode < M_COUNT; mode++) {
        mw m;
        FILE *f;
        long calls;
        mw_init(&m, mode, NULL, 65536);
        f = bw_fopen(&m.w);
        cr_assert_not_null(f, "%s", mode_name[mode]);
        cr_assert_eq(fprintf(f, FMT, ARGS), n, "%s", mode_name[mode]);
        cr_assert_eq(fflush(f), 0, "%s", mode_name[mode]);
        mw_expect_all(&m, want, (size_t)n, "after fflush");
        { /* a second FILE over the same writer: no seeking */
            FILE *g = bw_fopen(&m.w);
            int e;
            long pos;
            cr_assert_not_null(g);
            errno = 0;
            cr_expect_eq(fseek(g, 0, SEEK_SET), -1, "%s", mode_name[mode]);
            e = errno;
            cr_expect_eq(e, ESPIPE, "%s: fseek errno %d", mode_name[mode], e);
            errno = 0;
            pos = ftell(g);
            e = errno;
            cr_expect_eq(pos, -1L, "%s: ftell %ld", mode_name[mode], pos);
            cr_expect_eq(e, ESPIPE, "%s: ftell errno %d", mode_name[mode], e);
            cr_expect_eq(fclose(g), 0);
        }
        cr_assert_geq(fputs("more", f), 0);
        calls = m.s.calls;
        cr_assert_eq(fclose(f), 0, "%s", mode_name[mode]);
        mw_expect_all(&m, want, (size_t)n + 4, "after fclose");
        cr_expect_eq(m.s.calls, calls, "%s: fclose does not flush the writer to its sink",
                     mode_name[mode]);
        cr_expect_eq(bw_error(&m.w), BW_OK);
        /* not released: still usable */
        cr_assert_eq(bw_put_u8(&m.w, '!'), BW_OK);
        cr_expect_eq(bw_tell(&m.w), (uint64_t)n + 5, "%s: fclose does not release",
                     mode_name[mode]);
        mw_done(&m);
    }
#endif
}

/* Through a small streaming buffer: the FILE's bytes pass through the sink. */
Test(output, fopen_over_small_streaming_buffer, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    mw m;
    FILE *f;
    bytes exp = {NULL, 0, 0};
    char line[64];
    int i, k;
    mw_init(&m, M_SINK, NULL, 256);
    f = bw_fopen(&m.w);
    cr_assert_not_null(f);
    for (i = 0; i < 2000; i++) {
        k = snprintf(line, sizeof line, "line %d: %x %s\n", i, (unsigned)i * 2654435761u,
                     i % 3 ? "abc" : "");
        by_add(&exp, line, (size_t)k);
        cr_assert_eq(fprintf(f, "line %d: %x %s\n", i, (unsigned)i * 2654435761u,
                             i % 3 ? "abc" : ""), k);
    }
    cr_assert_eq(fclose(f), 0);
    mw_expect_all(&m, exp.d, exp.len, "small streaming buffer");
    cr_assert_eq(bw_flush(&m.w), BW_OK);
    cr_expect_eq(m.s.out.len, exp.len);
    cr_expect(memcmp(m.s.out.d, exp.d, exp.len) == 0);
    mw_done(&m);
    by_free(&exp);
#endif
}

Test(output, fopen_fixed_writer_that_fills_fails_with_enospc, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    bw_writer w;
    unsigned char buf[16];
    char big[101];
    FILE *f;
    int rc, e;
    memset(big, 'a', 100);
    big[100] = '\0';
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    f = bw_fopen(&w);
    cr_assert_not_null(f);
    fputs(big, f);
    errno = 0;
    rc = fflush(f);
    e = errno;
    cr_expect_eq(rc, EOF);
    cr_expect_eq(e, ENOSPC, "errno %d", e);
    cr_expect(ferror(f), "the FILE has its error flag");
    cr_expect_eq(bw_error(&w), BW_EFULL);
    cr_expect_leq(bw_len(&w), sizeof buf);
    held_is(&w, (const unsigned char *)big, bw_len(&w), "fixed, full");
    fclose(f);
    cr_expect_eq(bw_error(&w), BW_EFULL, "fclose does not release");
    bw_release(&w);
#endif
}

Test(output, fopen_writer_failure_sets_errno, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    char big[1000];
    int rc, e;
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    { /* allocator failure: ENOMEM */
        test_alloc ta;
        bw_pool *p;
        bw_writer w;
        FILE *f;
        ta_init(&ta, 1);
        p = ta_pool(&ta, 0, 0);
        atomic_store(&ta.fail_sticky, 1);
        atomic_store(&ta.fail_at, atomic_load(&ta.calls) + 1);
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        f = bw_fopen(&w);
        cr_assert_not_null(f);
        fputs(big, f);
        errno = 0;
        rc = fflush(f);
        e = errno;
        cr_expect_eq(rc, EOF);
        cr_expect_eq(e, ENOMEM, "errno %d", e);
        cr_expect_eq(bw_error(&w), BW_ENOMEM);
        fclose(f);
        bw_release(&w);
        ta_finish(&ta, p);
    }
    { /* sink failure: EIO */
        mw m;
        FILE *f;
        mw_init(&m, M_SINK, NULL, 256);
        m.s.fail_at = 1;
        m.s.fail_sticky = 1;
        m.s.fail_errno = EIO;
        f = bw_fopen(&m.w);
        cr_assert_not_null(f);
        fputs(big, f);
        errno = 0;
        rc = fflush(f);
        e = errno;
        cr_expect_eq(rc, EOF);
        cr_expect_eq(e, EIO, "errno %d", e);
        cr_expect_eq(bw_error(&m.w), BW_EIO);
        fclose(f);
        mw_done(&m);
    }
#endif
}

Test(output, fopen_null_is_einval, .timeout = 60)
{
#ifdef BW_HAVE_FILE_ADAPTER
    errno = 0;
    cr_expect_null(bw_fopen(NULL));
    cr_expect_eq(errno, EINVAL);
#endif
}

/* ------------------------------------------------------------------------ */
/* Allocator failure at every call (streaming, segmented)                   */
/* ------------------------------------------------------------------------ */

/* Run the script; the Nth backing call fails (once, or from then on). A
 * failed call records BW_ENOMEM and (segmented) writes nothing, (streaming)
 * accepts a prefix, all-or-nothing up to the buffer size; the rest is then
 * written and nothing is lost or repeated. Returns the backing calls made. */
static long alloc_failures_seen;

static long alloc_fail_run(const work *wk, int chain, long n, int sticky)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    sink s = {{NULL, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const size_t bufsz = 1024;
    long start, calls;
    size_t i;
    int failures = 0, rc;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 16384, 0);
    start = atomic_load(&ta.calls);
    if (n > 0) {
        atomic_store(&ta.fail_sticky, sticky);
        atomic_store(&ta.fail_at, start + n);
    }
    sink_reset(&s, 2, 31);
    if (chain) cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    else cr_assert_eq(bw_init_sink(&w, p, bufsz, sink_fn, &s), BW_OK);
    for (i = 0; i < wk->nops; i++) {
        const op *o = &wk->ops[i];
        uint64_t before = bw_tell(&w), acc;
        rc = do_op(&w, wk, o);
        if (rc == BW_OK) {
            cr_assert_eq(bw_tell(&w), o->off + o->len, "N=%ld op %zu", n, i);
            continue;
        }
        failures++;
        cr_assert_eq(rc, BW_ENOMEM, "N=%ld op %zu kind %d: rc %d", n, i, o->kind, rc);
        cr_assert_eq(bw_error(&w), BW_ENOMEM);
        acc = bw_tell(&w) - before;
        if (chain)
            cr_assert_eq(acc, 0, "N=%ld op %zu kind %d: a failed call writes nothing", n, i,
                         o->kind);
        else if (o->len <= bufsz)
            cr_assert(acc == 0 || acc == o->len, "N=%ld op %zu: all-or-nothing", n, i);
        cr_assert_leq(acc, o->len);
        if (chain) held_is(&w, wk->s.d, (size_t)bw_tell(&w), "segmented, after ENOMEM");
        else sent_then_held(&w, &s, wk->s.d, "streaming, after ENOMEM");
        cr_assert_eq(bw_put_u8(&w, 1), BW_ENOMEM, "refused while recorded");
        cr_assert_eq(bw_tell(&w), before + acc);
        bw_clear_error(&w);
        if (sticky) break;
        if (before + acc < o->off + o->len)
            cr_assert_eq(bw_write(&w, wk->s.d + before + acc,
                                  (size_t)(o->off + o->len - before - acc)), BW_OK,
                         "N=%ld op %zu: the retry", n, i);
    }
    if (!sticky || failures == 0) {
        cr_assert_eq(bw_tell(&w), wk->s.len);
        cr_assert_eq(bw_flush(&w), BW_OK);
        if (chain) held_is(&w, wk->s.d, wk->s.len, "segmented, all");
        else {
            cr_assert_eq(s.out.len, wk->s.len, "N=%ld", n);
            cr_assert(memcmp(s.out.d, wk->s.d, wk->s.len) == 0, "N=%ld: lost or repeated", n);
        }
    } else { /* sticky: what was accepted is intact, and a flush needs no memory */
        cr_assert_eq(bw_flush(&w), BW_OK);
        if (chain) held_is(&w, wk->s.d, (size_t)bw_tell(&w), "segmented, sticky");
        else {
            cr_assert_eq(bw_len(&w), 0);
            sent_then_held(&w, &s, wk->s.d, "streaming, sticky");
        }
    }
    if (n > 0 && !sticky) cr_assert_leq(failures, 1, "N=%ld", n);
    alloc_failures_seen += failures;
    calls = atomic_load(&ta.calls) - start;
    bw_release(&w);
    by_free(&s.out);
    ta_finish(&ta, p);
    return calls;
}

static void alloc_fail_every_n(int chain, size_t target, unsigned seed)
{
    work wk;
    long total, n;
    work_make(&wk, seed, target, small_sizes, NSMALL);
    total = alloc_fail_run(&wk, chain, 0, 0);
    cr_assert_geq(total, 2, "the script makes backing calls");
    alloc_failures_seen = 0;
    for (n = 1; n <= total + 1; n++) {
        alloc_fail_run(&wk, chain, n, 0);
        alloc_fail_run(&wk, chain, n, 1);
    }
    cr_expect_geq(alloc_failures_seen, total, "the failures reach the caller (%ld of %ld)",
                  alloc_failures_seen, 2 * total);
    work_free(&wk);
}

Test(output, allocator_failing_at_every_call_streaming, .timeout = 120)
{
    alloc_fail_every_n(0, 60000, 41);
}

Test(output, allocator_failing_at_every_call_segmented, .timeout = 120)
{
    alloc_fail_every_n(1, 150000, 42);
}

/* From 0.1's chain test: a stream of similar segmented jobs is served from
 * the pool's retained blocks, with no backing allocation at steady state. */
Test(output, segmented_jobs_reuse_pooled_blocks_at_steady_state, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats a, b;
    bw_writer w;
    unsigned char buf[8192];
    int i, job;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 64u << 10, 0);
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    memset(buf, 1, sizeof buf);
    for (i = 0; i < 64; i++) cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK); /* 512 KiB */
    bw_release(&w);
    bw_pool_get_stats(p, &a);
    for (job = 0; job < 5; job++) {
        for (i = 0; i < 64; i++) cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
        cr_assert_eq(bw_len(&w), 64 * sizeof buf);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &b);
    cr_expect_eq(b.backing_allocs, a.backing_allocs, "no backing allocation at steady state "
                 "(%" PRIu64 " more)", b.backing_allocs - a.backing_allocs);
    ta_finish(&ta, p);
}

/* Held bytes in one block (bw_data not NULL), even with an empty
 * block after them, are already contiguous: bw_pullup returns bw_data with no
 * allocation and no copy. */
Test(output, segmented_pullup_of_bytes_in_one_block_does_not_copy, .timeout = 60)
{
    int how;
    for (how = 0; how < 2; how++) {
        test_alloc ta;
        bw_pool *p;
        bw_writer w;
        const unsigned char *d, *pu;
        size_t avail;
        long allocs;
        ta_init(&ta, 1);
        p = ta_pool(&ta, 4096, 0);
        cr_assert_eq(bw_init_chain(&w, p), BW_OK);
        cr_assert_eq(bw_puts(&w, "0123456789"), BW_OK);
        if (how == 0) { /* reserve starts a new, empty block */
            cr_assert_eq(bw_reserve(&w, bw_free_capacity(&w) + 1), BW_OK);
        } else {        /* so does a span larger than the tail's room */
            cr_assert_not_null(bw_get_span(&w, bw_free_capacity(&w) + 1, &avail));
            cr_assert_eq(bw_advance(&w, 0), BW_OK);
        }
        held_is(&w, (const unsigned char *)"0123456789", 10, "one block + an empty one");
        d = bw_data(&w);
        cr_assert_not_null(d, "all held bytes lie in one block");
        allocs = atomic_load(&ta.allocs);
        pu = bw_pullup(&w);
        cr_assert_not_null(pu);
        cr_expect(memcmp(pu, "0123456789", 10) == 0);
        cr_expect(pu == d, "%s: bw_pullup copied bytes that were already contiguous "
                  "(bw_data %p, pullup %p)", how ? "span" : "reserve", (const void *)d,
                  (const void *)pu);
        cr_expect_eq(atomic_load(&ta.allocs), allocs, "%s: bw_pullup allocated",
                     how ? "span" : "reserve");
        bw_release(&w);
        ta_finish(&ta, p);
    }
}

/* ------------------------------------------------------------------------ */
/* The model: every mode against a plain byte array                         */
/* ------------------------------------------------------------------------ */

typedef struct model {
    mw m;
    bytes R;          /* the byte at every position [0, bw_tell) */
    uint64_t base;    /* position of the first held byte */
    size_t sink_seen; /* sink bytes already matched */
    unsigned seed;
    int op;
    const char *what; /* the last op, for messages */
    int pullup_moved, pullup_first; /* pullups that copied contiguous bytes */
} model;

/* Take in what the sink got since the last look, then compare everything. */
static void model_check(model *md)
{
    bw_writer *w = &md->m.w;
    char where[96];
    snprintf(where, sizeof where, "%s op %d (%s)", mode_name[md->m.mode], md->op, md->what);
    if (md->m.mode == M_SINK) {
        size_t k = md->m.s.out.len - md->sink_seen;
        cr_assert_leq(md->base + k, md->R.len, "%s: sent more than held", where);
        cr_assert(k == 0 || memcmp(md->m.s.out.d + md->sink_seen, md->R.d + md->base, k) == 0,
                  "%s: the sink got other bytes", where);
        md->sink_seen += k;
        md->base += k;
    }
    cr_assert_eq(bw_error(w), BW_OK, "%s: error %d", where, bw_error(w));
    cr_assert_eq(bw_tell(w), md->R.len, "%s: tell", where);
    held_is(w, md->R.d + md->base, (size_t)(md->R.len - md->base), where);
    if (md->m.mode != M_CHAIN && bw_len(w) > 0) cr_assert_not_null(bw_data(w), "%s", where);
}

/* An append of exp[0..n) needing `need` bytes of room: compare with the
 * reference; a fixed writer without the room must refuse it (BW_EFULL,
 * recorded, nothing written); a streaming writer with the room must not send. */
static void model_append(model *md, int rc, const void *exp, size_t n, size_t need,
                         size_t held0, size_t free0, long calls0)
{
    bw_writer *w = &md->m.w;
    if (md->m.mode == M_FIXED && held0 + need > md->m.room) {
        cr_assert_eq(rc, BW_EFULL, "%s op %d: %zu + %zu > %zu", mode_name[md->m.mode], md->op,
                     held0, need, md->m.room);
        cr_assert_eq(bw_error(w), BW_EFULL);
        bw_clear_error(w);
        return;
    }
    cr_assert_eq(rc, BW_OK, "%s op %d: rc %d", mode_name[md->m.mode], md->op, rc);
    if (md->m.mode == M_SINK && need <= free0)
        cr_assert_eq(md->m.s.calls, calls0, "%s op %d: a call that fits (%zu <= %zu) sent",
                     mode_name[md->m.mode], md->op, need, free0);
    by_add(&md->R, exp, n);
}

static void rnd_bytes(unsigned *seed, unsigned char *p, size_t n, int nonzero)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = (unsigned char)(nonzero ? 1 + rnd(seed) % 255 : rnd(seed));
}

/* A pointer to k held bytes starting at held offset `at`, all in one piece
 * (NULL if there is no such piece). */
static const unsigned char *held_piece(const bw_writer *w, size_t at, size_t *k)
{
    struct iovec iov[1];
    if (bw_iovec(w, iov, 1) == 0) return NULL;
    if (at >= iov[0].iov_len) return NULL;
    if (*k > iov[0].iov_len - at) *k = iov[0].iov_len - at;
    return (const unsigned char *)iov[0].iov_base + at;
}

static void model_run(int mode, bw_pool *p, unsigned seed, int nops)
{
    model md;
    static unsigned char buf[24000];
    static unsigned char tmp[24000];
    memset(&md, 0, sizeof md);
    md.seed = seed;
    mw_init(&md.m, mode, p, mode == M_FIXED ? 16384 : 1024);
    md.m.s.seed = seed * 3;
    for (md.op = 0; md.op < nops; md.op++) {
        bw_writer *w = &md.m.w;
        size_t held0 = bw_len(w), free0 = bw_free_capacity(w), n, k;
        long calls0 = md.m.s.calls;
        uint64_t tell = bw_tell(w), pos;
        unsigned r = rnd(&md.seed) % 100;
        int rc;
        md.what = "none";
        if (held0 > 16000) { /* keep it bounded */
            md.what = "bound";
            cr_assert_eq(bw_consume(w, held0 - 1000), BW_OK);
            md.base += held0 - 1000;
            model_check(&md);
            continue;
        }
        if (r < 20) { /* write, of every size */
            md.what = "write";
            unsigned q = rnd(&md.seed) % 20;
            n = q < 14 ? rnd(&md.seed) % 64 : q < 19 ? rnd(&md.seed) % 3000
                                                     : rnd(&md.seed) % 20000;
            rnd_bytes(&md.seed, buf, n, 0);
            rc = bw_write(w, buf, n);
            model_append(&md, rc, buf, n, n, held0, free0, calls0);
        } else if (r < 25) { /* puts */
            md.what = "puts";
            n = rnd(&md.seed) % 300;
            rnd_bytes(&md.seed, buf, n, 1);
            buf[n] = '\0';
            rc = bw_puts(w, (const char *)buf);
            model_append(&md, rc, buf, n, n, held0, free0, calls0);
        } else if (r < 32) { /* printf, short and long */
            md.what = "printf";
            int width = (int)(rnd(&md.seed) % (rnd(&md.seed) % 4 ? 40 : 5000));
            n = (size_t)snprintf((char *)tmp, sizeof tmp, "<%*d|%s|%.2f>", width, md.op, "str",
                                 md.op / 7.0);
            rc = bw_printf(w, "<%*d|%s|%.2f>", width, md.op, "str", md.op / 7.0);
            model_append(&md, rc, tmp, n, n, held0, free0, calls0);
        } else if (r < 42) { /* typed puts */
            md.what = "typed put";
            unsigned t = rnd(&md.seed) % 12;
            uint64_t v = ((uint64_t)rnd(&md.seed) << 40) ^ ((uint64_t)rnd(&md.seed) << 16) ^
                         rnd(&md.seed);
            v >>= rnd(&md.seed) % 64;
            switch (t) {
            case 0: rc = bw_put_u8(w, (uint8_t)v); buf[0] = (unsigned char)v; n = 1; break;
            case 1: rc = bw_put_u16le(w, (uint16_t)v); st_le(buf, v, 2); n = 2; break;
            case 2: rc = bw_put_u32be(w, (uint32_t)v); st_be(buf, v, 4); n = 4; break;
            case 3: rc = bw_put_u64le(w, v); st_le(buf, v, 8); n = 8; break;
            case 4: rc = bw_put_i16be(w, (int16_t)(uint16_t)v); st_be(buf, v, 2); n = 2; break;
            case 5: rc = bw_put_i64be(w, (int64_t)v); st_be(buf, v, 8); n = 8; break;
            case 6: {
                double d = (double)v / 3.0;
                uint64_t u;
                memcpy(&u, &d, 8);
                rc = bw_put_f64le(w, d);
                st_le(buf, u, 8);
                n = 8;
                break;
            }
            case 7: {
                float f = (float)v / 3.0f;
                uint32_t u;
                memcpy(&u, &f, 4);
                rc = bw_put_f32be(w, f);
                st_be(buf, u, 4);
                n = 4;
                break;
            }
            case 8: rc = bw_put_uvarint(w, v); n = uvar_enc(buf, v); break;
            case 9: {
                int64_t sv = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
                rc = bw_put_svarint(w, sv);
                n = uvar_enc(buf, ((uint64_t)sv << 1) ^ (0 - ((uint64_t)sv >> 63)));
                break;
            }
            case 10: {
                int64_t sv = (v & 1) ? -(int64_t)(v >> 1) - 1 : (int64_t)(v >> 1);
                rc = bw_put_dec_i64(w, sv);
                n = (size_t)snprintf((char *)buf, 32, "%" PRId64, sv);
                break;
            }
            default: {
                unsigned char src[8];
                k = rnd(&md.seed) % 9;
                st_le(src, v, 8);
                rc = bw_put_hex(w, src, k);
                n = hex_enc((char *)buf, src, k);
                break;
            }
            }
            model_append(&md, rc, buf, n, n, held0, free0, calls0);
        } else if (r < 50) { /* span + advance */
            md.what = "span";
            size_t hint = rnd(&md.seed) % (rnd(&md.seed) % 4 ? 100 : 9000), avail = 7;
            size_t need = hint ? hint : 1;
            unsigned char *sp = (unsigned char *)bw_get_span(w, hint, &avail);
            if (mode == M_FIXED && held0 + need > md.m.room) {
                cr_assert_null(sp, "fixed op %d: span beyond the room", md.op);
                cr_assert_eq(avail, 0);
                cr_assert_eq(bw_error(w), BW_EFULL);
                bw_clear_error(w);
            } else {
                cr_assert_not_null(sp, "%s op %d", mode_name[mode], md.op);
                cr_assert_geq(avail, need);
                cr_assert_eq(avail, bw_free_capacity(w));
                if (mode != M_CHAIN)
                    cr_assert(sp == bw_data(w) + bw_len(w), "%s op %d: span is data + len",
                              mode_name[mode], md.op);
                if (mode == M_SINK && need <= free0)
                    cr_assert_eq(md.m.s.calls, calls0, "stream op %d: a span that fits sent",
                                 md.op);
                k = rnd(&md.seed) % (need + 1);
                rnd_bytes(&md.seed, buf, k, 0);
                memcpy(sp, buf, k);
                cr_assert_eq(bw_advance(w, k), BW_OK);
                by_add(&md.R, buf, k);
            }
        } else if (r < 58) { /* consume */
            md.what = "consume";
            if (rnd(&md.seed) % 10 == 0) {
                cr_assert_eq(bw_consume(w, held0 + 1), BW_EINVAL, "consume beyond len");
                cr_assert_eq(bw_error(w), BW_EINVAL, "recorded");
                bw_clear_error(w);
            } else {
                n = held0 ? rnd(&md.seed) % (held0 + 1) : 0;
                if (rnd(&md.seed) % 2) n /= 8;
                cr_assert_eq(bw_consume(w, n), BW_OK);
                md.base += n;
            }
        } else if (r < 66) { /* patch by position */
            md.what = "patch";
            size_t pn = 1 + rnd(&md.seed) % 8;
            unsigned char src[8];
            const unsigned char *sp = src;
            int ok;
            if (rnd(&md.seed) % 3 == 0) pos = tell ? rnd(&md.seed) % (tell + 1) : 0;
            else pos = md.base + (held0 ? rnd(&md.seed) % (held0 + 1) : 0);
            ok = pos >= md.base && pos + pn <= tell;
            rnd_bytes(&md.seed, src, pn, 0);
            if (rnd(&md.seed) % 3 == 0 && held0 > 0) { /* from its own held bytes */
                size_t at = rnd(&md.seed) % held0, kk = pn;
                const unsigned char *hp = held_piece(w, at, &kk);
                if (hp != NULL && kk == pn) {
                    memcpy(src, hp, pn);
                    sp = hp;
                }
            }
            if (rnd(&md.seed) % 4 == 0 && pn >= 4) {
                uint32_t v = (uint32_t)rnd(&md.seed);
                pn = 4;
                ok = pos >= md.base && pos + 4 <= tell;
                st_be(src, v, 4);
                rc = bw_patch_u32be(w, pos, v);
            } else {
                rc = bw_patch(w, pos, sp, pn);
            }
            if (ok) {
                cr_assert_eq(rc, BW_OK, "%s op %d: patch at %" PRIu64 " base %" PRIu64,
                             mode_name[mode], md.op, pos, md.base);
                memcpy(md.R.d + pos, src, pn);
            } else {
                cr_assert_eq(rc, BW_EINVAL, "%s op %d: patch at %" PRIu64 " base %" PRIu64
                             " tell %" PRIu64, mode_name[mode], md.op, pos, md.base, tell);
                cr_assert_eq(bw_error(w), BW_EINVAL, "recorded");
                bw_clear_error(w);
            }
        } else if (r < 70) { /* truncate */
            md.what = "truncate";
            if (rnd(&md.seed) % 3 == 0) pos = rnd(&md.seed) % (tell + 2);
            else pos = tell - (held0 ? rnd(&md.seed) % (held0 + 1) / 4 : 0);
            rc = bw_truncate(w, pos);
            if (pos >= md.base && pos <= tell) {
                cr_assert_eq(rc, BW_OK, "%s op %d", mode_name[mode], md.op);
                md.R.len = (size_t)pos;
            } else {
                cr_assert_eq(rc, BW_EINVAL, "%s op %d: truncate at %" PRIu64 " base %" PRIu64,
                             mode_name[mode], md.op, pos, md.base);
                cr_assert_eq(bw_error(w), BW_EINVAL);
                bw_clear_error(w);
            }
        } else if (r < 74) { /* copy_out, in and out of range: never recorded */
            md.what = "copy_out";
            size_t off = held0 ? rnd(&md.seed) % (held0 + 1) : 0;
            n = rnd(&md.seed) % (held0 - off + 1);
            if (n > sizeof buf) n = sizeof buf;
            cr_assert_eq(bw_copy_out(w, off, buf, n), BW_OK);
            cr_assert(n == 0 || memcmp(buf, md.R.d + md.base + off, n) == 0, "copy_out");
            cr_assert_eq(bw_copy_out(w, held0, buf, 0), BW_OK);
            off = held0 - (held0 < 100 ? held0 : 100);
            cr_assert_eq(bw_copy_out(w, off, buf, held0 - off + 1), BW_EINVAL);
            cr_assert_eq(bw_copy_out(w, held0 + 1, buf, 0), BW_EINVAL);
            cr_assert_eq(bw_error(w), BW_OK, "read-outs never record");
        } else if (r < 77) { /* iovec with a small max */
            md.what = "iovec";
            struct iovec iov[3];
            size_t all = bw_iovec(w, iov, 0), got, off = 0, i, mx = 1 + rnd(&md.seed) % 3;
            got = bw_iovec(w, iov, mx);
            cr_assert_eq(got, all, "the count does not depend on max");
            for (i = 0; i < (got < mx ? got : mx); i++) {
                cr_assert_gt(iov[i].iov_len, 0);
                cr_assert(memcmp(iov[i].iov_base, md.R.d + md.base + off, iov[i].iov_len) == 0);
                off += iov[i].iov_len;
            }
        } else if (r < 80) { /* pullup */
            md.what = "pullup";
            const unsigned char *d0 = bw_data(w), *pu = bw_pullup(w);
            if (held0 > 0) {
                cr_assert_not_null(pu, "%s op %d", mode_name[mode], md.op);
                cr_assert(memcmp(pu, md.R.d + md.base, held0) == 0);
                cr_assert(pu == bw_data(w), "%s op %d: pullup returns bw_data", mode_name[mode],
                          md.op);
                if (d0 != NULL && pu != d0 && md.pullup_moved++ == 0)
                    md.pullup_first = md.op; /* reported once, at the end */
            }
        } else if (r < 86) { /* write from its own held bytes */
            md.what = "self write";
            size_t at = held0 ? rnd(&md.seed) % held0 : 0, kk = 1 + rnd(&md.seed) % 3000;
            const unsigned char *hp = held0 ? held_piece(w, at, &kk) : NULL;
            if (hp != NULL) {
                memcpy(tmp, hp, kk);
                if (rnd(&md.seed) % 2) {
                    rc = bw_write(w, hp, kk);
                    model_append(&md, rc, tmp, kk, kk, held0, free0, calls0);
                } else {
                    int len = snprintf((char *)buf, sizeof buf, "(%.*s)", (int)kk,
                                       (const char *)tmp);
                    rc = bw_printf(w, "(%.*s)", (int)kk, (const char *)hp);
                    model_append(&md, rc, buf, (size_t)len, (size_t)len, held0, free0, calls0);
                }
            }
        } else if (r < 92) { /* reserve */
            md.what = "reserve";
            n = rnd(&md.seed) % (rnd(&md.seed) % 4 ? 200 : 20000);
            rc = bw_reserve(w, n);
            if (mode == M_FIXED && held0 + n > md.m.room) {
                cr_assert_eq(rc, BW_EFULL);
                cr_assert_eq(bw_error(w), BW_EFULL);
                bw_clear_error(w);
            } else {
                cr_assert_eq(rc, BW_OK);
                cr_assert_geq(bw_free_capacity(w), n);
                if (mode == M_SINK && n <= free0) cr_assert_eq(md.m.s.calls, calls0);
            }
        } else if (r < 96) { /* flush: streaming sends everything */
            md.what = "flush";
            cr_assert_eq(bw_flush(w), BW_OK);
            if (mode == M_SINK) cr_assert_eq(bw_len(w), 0);
            else cr_assert_eq(bw_len(w), held0);
        } else if (r < 98) { /* clear: nothing held, nothing sent */
            md.what = "clear";
            bw_clear(w); /* tell goes back to the first dropped byte: base */
            md.R.len = (size_t)md.base;
            cr_assert_eq(md.m.s.calls, calls0);
        } else if (r < 99) { /* release: positions restart, nothing sent */
            md.what = "release";
            bw_release(w);
            cr_assert_eq(md.m.s.calls, calls0);
            md.R.len = 0;
            md.base = 0;
        }
        model_check(&md);
    }
    if (mode == M_SINK) {
        cr_assert_eq(bw_flush(&md.m.w), BW_OK);
        model_check(&md);
        cr_assert_eq(bw_len(&md.m.w), 0);
    }
    /* Already contiguous (bw_data not NULL) -> bw_data, no allocation. */
    cr_expect_eq(md.pullup_moved, 0, "%s seed %u: bw_pullup copied held bytes that bw_data "
                 "showed in one block, %d times (first at op %d)", mode_name[mode], seed,
                 md.pullup_moved, md.pullup_first);
    mw_done(&md.m);
    by_free(&md.R);
}

Test(output, model_every_mode_against_a_byte_array, .timeout = 120)
{
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        test_alloc ta;
        bw_pool *p;
        unsigned seed;
        ta_init(&ta, 1);
        p = ta_pool(&ta, 16384, 0);
        for (seed = 1; seed <= 2; seed++) model_run(mode, p, seed * 1000 + (unsigned)mode, 700);
        ta_finish(&ta, p);
    }
}

Test(output, model_every_mode_on_the_default_pool, .timeout = 120)
{
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) model_run(mode, NULL, 77 + (unsigned)mode, 500);
}
