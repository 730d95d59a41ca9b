/* test_chain.c - the segmented writer against a plain byte array, its
 * failure atomicity, and the I/O helpers (pipe with a slow reader, FILE*). */
#define _GNU_SOURCE 1 /* pipe2, usleep */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

/* The reference: a realloc'd byte array. */
typedef struct ref {
    unsigned char *d;
    size_t len;
} ref;

static void ref_add(ref *r, const void *src, size_t n)
{
    r->d = (unsigned char *)realloc(r->d, r->len + n + 1);
    cr_assert_not_null(r->d);
    memcpy(r->d + r->len, src, n);
    r->len += n;
}

static void ref_drop(ref *r, size_t n)
{
    if (n == 0) return;
    memmove(r->d, r->d + n, r->len - n);
    r->len -= n;
}

/* The chain holds exactly the reference's bytes, seen every way. */
static void same(bw_chain *c, const ref *r)
{
    unsigned char *out = (unsigned char *)malloc(r->len + 1);
    struct iovec iov[4096];
    size_t n, i, off = 0;
    bw_writer w = BW_WRITER_INIT;
    cr_assert_eq(bw_chain_len(c), r->len);
    cr_assert_eq(bw_chain_copy_out(c, 0, out, r->len), BW_OK);
    cr_assert(r->len == 0 || memcmp(out, r->d, r->len) == 0, "copy_out differs");
    n = bw_chain_iovec(c, iov, 4096);
    cr_assert_leq(n, 4096);
    for (i = 0; i < n; i++) {
        cr_assert_gt(iov[i].iov_len, 0);
        cr_assert(memcmp(iov[i].iov_base, r->d + off, iov[i].iov_len) == 0, "iovec %zu", i);
        off += iov[i].iov_len;
    }
    cr_assert_eq(off, r->len);
    cr_assert_eq(bw_chain_flatten(c, &w), BW_OK);
    cr_assert_eq(bw_len(&w), r->len);
    cr_assert(r->len == 0 || memcmp(bw_data(&w), r->d, r->len) == 0, "flatten differs");
    bw_release(&w);
    free(out);
}

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void model_run(bw_pool *p, unsigned seed)
{
    bw_chain c;
    ref r = {NULL, 0};
    unsigned char buf[20000];
    int i;
    cr_assert_eq(bw_chain_init(&c, p), BW_OK);
    for (i = 0; i < 1500; i++) {
        unsigned op = rnd(&seed) % 10;
        size_t n, k;
        switch (op) {
        case 0: case 1: /* writes of every size, some spanning blocks */
            n = rnd(&seed) % (op ? 20000 : 64);
            for (k = 0; k < n; k++) buf[k] = (unsigned char)rnd(&seed);
            cr_assert_eq(bw_chain_write(&c, buf, n), BW_OK);
            ref_add(&r, buf, n);
            break;
        case 2: { /* typed puts */
            uint32_t v = rnd(&seed);
            unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                                  (unsigned char)(v >> 8), (unsigned char)v};
            cr_assert_eq(bw_chain_put_u32be(&c, v), BW_OK);
            ref_add(&r, b, 4);
            cr_assert_eq(bw_chain_put_uvarint(&c, 300), BW_OK);
            ref_add(&r, "\xac\x02", 2);
            break;
        }
        case 3: { /* printf, short and long */
            char s[6000];
            int len, width = (int)(rnd(&seed) % 5000);
            len = snprintf(s, sizeof s, "<%*d>", width, i);
            cr_assert_eq(bw_chain_printf(&c, "<%*d>", width, i), BW_OK);
            ref_add(&r, s, (size_t)len);
            break;
        }
        case 4: { /* span + advance */
            size_t avail;
            unsigned char *sp;
            n = rnd(&seed) % 9000;
            sp = (unsigned char *)bw_chain_get_span(&c, n, &avail);
            cr_assert_not_null(sp);
            cr_assert_geq(avail, n ? n : 1);
            k = n ? n : 1;
            memset(sp, 'S', k);
            cr_assert_eq(bw_chain_advance(&c, k), BW_OK);
            memset(buf, 'S', k);
            ref_add(&r, buf, k);
            break;
        }
        case 5: /* consume from the front */
            n = r.len ? rnd(&seed) % (r.len + 1) : 0;
            cr_assert_eq(bw_chain_consume(&c, n), BW_OK);
            ref_drop(&r, n);
            break;
        case 6: /* patch a range (may span blocks) */
            if (r.len < 8) break;
            n = rnd(&seed) % (r.len - 7);
            memcpy(buf, "PATCHED!", 8);
            cr_assert_eq(bw_chain_patch(&c, n, buf, 8), BW_OK);
            memcpy(r.d + n, buf, 8);
            break;
        case 7: /* copy out a random range */
            if (r.len == 0) break;
            n = rnd(&seed) % r.len;
            k = rnd(&seed) % (r.len - n + 1);
            if (k > sizeof buf) k = sizeof buf;
            cr_assert_eq(bw_chain_copy_out(&c, n, buf, k), BW_OK);
            cr_assert(memcmp(buf, r.d + n, k) == 0);
            break;
        case 8:
            if (rnd(&seed) % 20 == 0) {
                bw_chain_clear(&c);
                r.len = 0;
            }
            break;
        default:
            same(&c, &r);
            break;
        }
    }
    same(&c, &r);
    bw_chain_release(&c);
    cr_expect_eq(bw_chain_len(&c), 0);
    free(r.d);
}

Test(chain, model_random_ops, .timeout = 120)
{
    test_alloc ta;
    bw_pool *p;
    unsigned seed;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, 0);
    for (seed = 1; seed <= 6; seed++) model_run(p, seed);
    ta_finish(&ta, p);
    /* a small threshold: every block at it, and spans above it */
    ta_init(&ta, 1);
    p = ta_pool(&ta, 4096, 0);
    for (seed = 7; seed <= 9; seed++) model_run(p, seed);
    ta_finish(&ta, p);
}

Test(chain, blocks_grow_geometrically_then_stay)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats a, b;
    bw_chain c;
    struct iovec iov[64];
    unsigned char buf[8192];
    size_t n, i;
    int job;
    ta_init(&ta, 1);
    p = ta_pool(&ta, 64u << 10, 0); /* 64 KiB threshold */
    bw_chain_init(&c, p);
    memset(buf, 1, sizeof buf);
    for (i = 0; i < 64; i++) bw_chain_write(&c, buf, sizeof buf); /* 512 KiB */
    n = bw_chain_iovec(&c, iov, 64);
    cr_assert_leq(n, 64);
    cr_expect_eq(iov[0].iov_len, 4096 - 32);
    cr_expect_eq(iov[1].iov_len, 8192 - 32);
    cr_expect_eq(iov[4].iov_len, 65536 - 32);
    cr_expect_eq(iov[5].iov_len, 65536 - 32, "stays at the threshold");
    bw_chain_release(&c);
    /* Steady state: every block comes back from the pool. */
    bw_pool_get_stats(p, &a);
    for (job = 0; job < 5; job++) {
        for (i = 0; i < 64; i++) bw_chain_write(&c, buf, sizeof buf);
        bw_chain_release(&c);
    }
    bw_pool_get_stats(p, &b);
    cr_expect_eq(b.backing_allocs, a.backing_allocs, "no backing allocation at steady state");
    ta_finish(&ta, p);
}

Test(chain, failure_injection_changes_nothing, .timeout = 120)
{
    long total = -1, n;
    test_alloc ta;
    bw_pool *p;
    bw_chain c;
    unsigned char buf[30000];
    size_t i;
    for (i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7);
    /* count the calls of a workload, then fail each one in turn */
    for (n = 0;; n++) {
        ref r = {NULL, 0};
        int step, failed = 0;
        ta_init(&ta, 1);
        atomic_store(&ta.fail_at, n);
        p = ta_pool(&ta, 16384, 0);
        bw_chain_init(&c, p);
        for (step = 0; step < 40; step++) {
            size_t len = (size_t)(step * 977) % sizeof buf;
            int rc = step % 3 ? bw_chain_write(&c, buf, len)
                              : bw_chain_printf(&c, "%0*d", (int)(len % 9000), step);
            if (rc != BW_OK) {
                cr_assert_eq(rc, BW_ENOMEM);
                cr_assert_eq(bw_chain_error(&c), BW_ENOMEM);
                failed = 1;
            } else if (!failed) {
                if (step % 3) ref_add(&r, buf, len);
                else {
                    char s[9100];
                    int k = snprintf(s, sizeof s, "%0*d", (int)(len % 9000), step);
                    ref_add(&r, s, (size_t)k);
                }
            }
            cr_assert_eq(bw_chain_len(&c), r.len, "N=%ld step %d", n, step);
        }
        {
            unsigned char *out = (unsigned char *)malloc(r.len + 1);
            cr_assert_eq(bw_chain_copy_out(&c, 0, out, r.len), BW_OK);
            cr_assert(r.len == 0 || memcmp(out, r.d, r.len) == 0, "N=%ld", n);
            free(out);
        }
        bw_chain_release(&c);
        free(r.d);
        if (n == 0) total = atomic_load(&ta.calls); /* the run without failure */
        ta_finish(&ta, p);
        if (n > 0) cr_assert(failed, "N=%ld: the failure reached the caller", n);
        if (n >= total) break;
    }
    cr_expect_geq(total, 5);
}

Test(chain, bad_input_and_sticky_error)
{
    bw_chain c = BW_CHAIN_INIT;
    size_t avail = 9;
    unsigned char out[4];
    cr_expect_eq(bw_chain_init(NULL, NULL), BW_EINVAL);
    cr_expect_eq(bw_chain_write(NULL, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_chain_len(NULL), 0);
    cr_expect_eq(bw_chain_error(NULL), BW_EINVAL);
    cr_expect_eq(bw_chain_write(&c, NULL, 0), BW_OK);
    cr_expect_eq(bw_chain_puts(&c, "abcd"), BW_OK);
    cr_expect_eq(bw_chain_consume(&c, 5), BW_EINVAL);
    cr_expect_eq(bw_chain_error(&c), BW_EINVAL);
    cr_expect_eq(bw_chain_len(&c), 4, "nothing dropped");
    cr_expect_eq(bw_chain_put_u8(&c, 1), BW_EINVAL, "sticky");
    cr_expect_null(bw_chain_get_span(&c, 1, &avail));
    cr_expect_eq(avail, 0);
    cr_expect_eq(bw_chain_copy_out(&c, 0, out, 4), BW_OK, "reading still works");
    cr_expect(memcmp(out, "abcd", 4) == 0);
    cr_expect_eq(bw_chain_copy_out(&c, 2, out, 3), BW_EINVAL);
    bw_chain_clear(&c);
    cr_expect_eq(bw_chain_error(&c), BW_OK);
    bw_chain_puts(&c, "abcd");
    cr_expect_eq(bw_chain_patch(&c, 2, "xyz", 3), BW_EINVAL, "across the end");
    bw_chain_clear(&c);
    bw_chain_puts(&c, "abcd");
    cr_expect_eq(bw_chain_advance(&c, SIZE_MAX), BW_EINVAL);
    bw_chain_clear(&c);
    {
        volatile size_t huge = SIZE_MAX; /* not a constant: gcc would warn */
        cr_expect_eq(bw_chain_write(&c, "x", huge), BW_EOVERFLOW);
    }
    bw_chain_release(&c);
    cr_expect_eq(bw_chain_puts(&c, NULL), BW_EINVAL);
    bw_chain_release(&c);
}

/* Through a pipe, to a reader that reads slowly in small pieces: writev's
 * partial writes must be resumed, nothing lost or repeated. */
typedef struct reader {
    int fd;
    size_t want, got, period; /* the stream is the same `period` bytes twice */
    long bad;
} reader;

static void *slow_reader(void *arg)
{
    reader *rd = (reader *)arg;
    unsigned char b[1000];
    int pause = 0;
    while (rd->got < rd->want) {
        ssize_t k = read(rd->fd, b, (size_t)(1 + (rd->got * 7) % sizeof b));
        ssize_t i;
        if (k <= 0) break;
        for (i = 0; i < k; i++)
            rd->bad += b[i] != (unsigned char)(((rd->got + (size_t)i) % rd->period) * 13);
        rd->got += (size_t)k;
        if (++pause % 64 == 0) usleep(200);
    }
    return NULL;
}

Test(chain, write_fd_through_pipe_with_slow_reader, .timeout = 60)
{
    bw_chain c = BW_CHAIN_INIT;
    bw_writer w = BW_WRITER_INIT;
    unsigned char buf[5000];
    int fds[2];
    pthread_t t;
    reader rd;
    size_t i, written = 0, total = 0;
    for (i = 0; i < (3u << 20); i += sizeof buf) {
        size_t k;
        for (k = 0; k < sizeof buf; k++) buf[k] = (unsigned char)((i + k) * 13);
        bw_chain_write(&c, buf, sizeof buf);
        total += sizeof buf;
    }
    cr_assert_eq(pipe(fds), 0);
    rd.fd = fds[0];
    rd.want = total * 2;
    rd.period = total;
    rd.got = 0;
    rd.bad = 0;
    pthread_create(&t, NULL, slow_reader, &rd);
    /* the same bytes from a contiguous writer first */
    cr_assert_eq(bw_chain_flatten(&c, &w), BW_OK);
    cr_assert_eq(bw_write_fd(&w, fds[1], &written), BW_OK);
    cr_expect_eq(written, total);
    /* then from the chain: consumed as it goes out */
    cr_assert_eq(bw_chain_write_fd(&c, fds[1], &written), BW_OK);
    cr_expect_eq(written, total);
    cr_expect_eq(bw_chain_len(&c), 0);
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    cr_expect_eq(rd.got, total * 2);
    cr_expect_eq(rd.bad, 0, "%ld bytes differ", rd.bad);
    bw_release(&w);
    bw_chain_release(&c);
}

Test(chain, write_fd_nonblocking_keeps_the_rest)
{
    bw_chain c = BW_CHAIN_INIT;
    unsigned char buf[4096], drain[65536];
    int fds[2];
    size_t written = 0, left, got = 0;
    int i;
    memset(buf, 'q', sizeof buf);
    for (i = 0; i < 100; i++) bw_chain_write(&c, buf, sizeof buf); /* 400 KiB > a pipe */
    cr_assert_eq(pipe2(fds, O_NONBLOCK), 0);
    cr_expect_eq(bw_chain_write_fd(&c, fds[1], &written), BW_EIO);
    cr_expect_eq(errno, EAGAIN);
    cr_expect_gt(written, 0);
    left = bw_chain_len(&c);
    cr_expect_eq(written + left, sizeof buf * 100, "what did not go out is still queued");
    while (bw_chain_len(&c) > 0) { /* drain and resume */
        ssize_t k;
        while ((k = read(fds[0], drain, sizeof drain)) > 0) got += (size_t)k;
        bw_chain_write_fd(&c, fds[1], &written);
    }
    while (1) {
        ssize_t k = read(fds[0], drain, sizeof drain);
        if (k <= 0) break;
        got += (size_t)k;
    }
    cr_expect_eq(got, sizeof buf * 100);
    close(fds[0]);
    close(fds[1]);
    bw_chain_release(&c);
}

Test(chain, file_adapter_fprintf)
{
#ifdef BW_HAVE_FILE_ADAPTER
    bw_writer w = BW_WRITER_INIT;
    bw_chain c = BW_CHAIN_INIT;
    char want[512], got[512];
    int n;
    FILE *f = bw_fopen_writer(&w), *g = bw_fopen_chain(&c);
    cr_assert_not_null(f);
    cr_assert_not_null(g);
#define FMT "%d %i %u %x %X %o %c %s %5.2f %e %g %% %ld %lld %zu %p %-6s| %+d %05d"
#define ARGS -42, 7, 3000000000u, 0xbeefu, 0xbeefu, 8u, 'z', "str", 3.14159, 1e-7, 2.5, \
             -123456789L, 9000000000LL, (size_t)77, (void *)0x1234, "ab", 5, 42
    n = snprintf(want, sizeof want, FMT, ARGS);
    cr_assert_gt(fprintf(f, FMT, ARGS), 0);
    cr_assert_gt(fprintf(g, FMT, ARGS), 0);
    cr_assert_eq(fflush(f), 0);
    cr_expect_eq(bw_len(&w), (size_t)n);
    cr_expect(memcmp(bw_data(&w), want, (size_t)n) == 0, "%.*s", (int)bw_len(&w), bw_data(&w));
    cr_assert_eq(fclose(g), 0);
    cr_expect_eq(bw_chain_len(&c), (size_t)n);
    bw_chain_copy_out(&c, 0, got, (size_t)n);
    cr_expect(memcmp(got, want, (size_t)n) == 0);
    fclose(f);
    cr_expect_eq(bw_len(&w), (size_t)n, "fclose does not release the writer");
    bw_release(&w);
    bw_chain_release(&c);
    cr_expect_null(bw_fopen_writer(NULL));
#else
    cr_skip_test("no FILE* adapter on this platform");
#endif
}
