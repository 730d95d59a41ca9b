/* SPDX-License-Identifier: MIT */
/* test_clients.c - what real serializers needed (0.3): the hand-off to
 * free() (bw_detach_malloc), by-reference pieces (bw_append_ref), moves
 * between writers (bw_move), the errno kept with BW_EIO (bw_errno),
 * bw_putc, bw_cstr on a full buffer, truncate and patch while an error is
 * recorded, the learned size with a first capacity, and a streaming
 * buffer's size after a long item.
 *
 * Each new call is run in every mode, with NULL arguments, sizes that
 * cannot be represented, memory inside the writer's own bytes, and an
 * allocation failure injected at every backing call. */
#define _GNU_SOURCE 1 /* pipe, sigaction, setrlimit under -std=c11 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

/* ======================================================================== */
/* Harness                                                                  */
/* ======================================================================== */

#define CLIENT_SINK_BUF 256 /* the streaming writers' buffer here */

typedef struct env {
    test_alloc ta;
    bw_pool *pool;
    sink_state sink;
    unsigned char ibuf[IBUF_SIZE];
    unsigned char fixed[FIXED_SIZE];
} env;

static env *env_new(void)
{
    env *e = (env *)calloc(1, sizeof *e);
    cr_assert(e != NULL);
    ta_init(&e->ta, 1);
    e->pool = ta_pool(&e->ta, 4096, 0);
    sink_init(&e->sink);
    return e;
}

static void env_free(env *e)
{
    ta_finish(&e->ta, e->pool);
    free(e->sink.got);
    free(e);
}

static void mk(env *e, bw_writer *w, int mode)
{
    int rc = BW_OK;
    switch (mode) {
    case M_CONTIG: rc = bw_init(w, e->pool, 0); break;
    case M_BUFFER: rc = bw_init_buffer(w, e->pool, e->ibuf, sizeof e->ibuf); break;
    case M_CHAIN: rc = bw_init_chain(w, e->pool); break;
    case M_SINK: rc = bw_init_sink(w, e->pool, CLIENT_SINK_BUF, test_sink, &e->sink); break;
    default: rc = bw_init_fixed(w, e->fixed, sizeof e->fixed); break;
    }
    cr_assert_eq(rc, BW_OK);
}

/* Everything the writer produced: what the sink took, then what is held. */
static size_t produced(env *e, const bw_writer *w, unsigned char *dst)
{
    size_t held = bw_len(w);
    if (e->sink.len != 0) memcpy(dst, e->sink.got, e->sink.len);
    cr_assert_eq(bw_copy_out(w, 0, dst + e->sink.len, held), BW_OK);
    return e->sink.len + held;
}

/* done's record: how often, with what. */
typedef struct donec {
    int calls;
    const void *data;
    size_t n;
} donec;

static void on_done(void *ctx, const void *data, size_t n)
{
    donec *d = (donec *)ctx;
    d->calls++;
    d->data = data;
    d->n = n;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = pat(i, seed);
}

/* The held bytes as one malloc'd copy, through bw_iovec. */
static unsigned char *held_by_iovec(const bw_writer *w, size_t *n)
{
    struct iovec iov[256];
    size_t k = bw_iovec(w, iov, 256), i, off = 0;
    unsigned char *b = (unsigned char *)malloc(bw_len(w) + 1);
    cr_assert(k <= 256 && b != NULL);
    for (i = 0; i < k; i++) {
        cr_assert(iov[i].iov_len != 0, "no empty iovec entry");
        memcpy(b + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    *n = off;
    return b;
}

static uint64_t outstanding(bw_pool *p)
{
    bw_pool_stats st;
    bw_pool_get_stats(p, &st);
    return st.outstanding_bytes;
}

/* ======================================================================== */
/* bw_errno                                                                 */
/* ======================================================================== */

Test(clients_errno, kept_from_the_sink_until_cleared)
{
    env *e = env_new();
    bw_writer w;
    unsigned char b[1000];
    fill(b, sizeof b, 1);
    mk(e, &w, M_SINK);
    cr_expect_eq(bw_errno(&w), 0);
    sink_fail(&e->sink, SF_ERRNO, ENOSPC);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    errno = ENOENT; /* an unrelated call later */
    cr_expect_eq(bw_flush(&w), BW_EIO);
    cr_expect_eq(bw_errno(&w), ENOSPC, "the sink's errno, not %d", bw_errno(&w));
    cr_expect_eq(bw_put_u8(&w, 1), BW_EIO);
    cr_expect_eq(bw_errno(&w), ENOSPC, "a refused call keeps it");
    bw_clear_error(&w);
    cr_expect_eq(bw_errno(&w), 0, "cleared with the error");
    sink_heal(&e->sink);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_errno(&w), 0);

    sink_fail(&e->sink, SF_ZERO, 0);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    cr_expect_eq(bw_errno(&w), EIO, "a broken sink records EIO");
    bw_clear(&w);
    cr_expect_eq(bw_errno(&w), 0, "bw_clear forgets it");
    sink_heal(&e->sink);
    sink_fail(&e->sink, SF_ERRNO, EPIPE);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    cr_expect_eq(bw_errno(&w), EPIPE);
    bw_release(&w);
    cr_expect_eq(bw_errno(&w), 0, "bw_release forgets it");
    env_free(e);
}

Test(clients_errno, kept_from_the_kernel_for_an_fd)
{
    int fds[2];
    bw_writer w;
    unsigned char b[4096];
    struct sigaction ign, old;
    memset(b, 'x', sizeof b);
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]); /* the reader has gone */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    cr_assert_eq(bw_init_fd(&w, NULL, 1024, fds[1]), BW_OK);
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    errno = 0;
    cr_expect_eq(bw_errno(&w), EPIPE);
    bw_release(&w);
    close(fds[1]);
    sigaction(SIGPIPE, &old, NULL);
}

Test(clients_errno, long_printf_to_a_failing_sink_keeps_the_sinks_errno)
{
    env *e = env_new();
    bw_writer w;
    mk(e, &w, M_SINK);
    sink_fail(&e->sink, SF_ERRNO, EDQUOT);
    cr_expect_eq(bw_printf(&w, "%05000d", 7), BW_EIO, "longer than the buffer: to the sink");
    cr_expect_eq(bw_errno(&w), EDQUOT);
    bw_release(&w);
    env_free(e);
}

Test(clients_errno, zero_for_other_errors_and_null)
{
    unsigned char buf[4];
    bw_writer w;
    cr_expect_eq(bw_errno(NULL), 0);
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    errno = EIO;
    cr_expect_eq(bw_write(&w, "12345", 5), BW_EFULL);
    cr_expect_eq(bw_errno(&w), 0, "only BW_EIO has an errno");
    cr_expect_eq(bw_puts(&w, NULL), BW_EFULL);
    cr_expect_eq(bw_errno(&w), 0);
}

/* ======================================================================== */
/* bw_putc                                                                  */
/* ======================================================================== */

Test(clients_putc, one_byte_in_every_mode)
{
    int m;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        bw_writer w;
        unsigned char got[2000], want[2000];
        size_t n, i;
        mk(e, &w, m);
        for (i = 0; i < 1500; i++) {
            int c = (int)(i * 7) - 600; /* negative, and past 255 */
            want[i] = (unsigned char)c;
            cr_assert_eq(bw_putc(&w, c), BW_OK, "%s", mode_name[m]);
        }
        n = produced(e, &w, got);
        cr_expect_eq(n, 1500, "%s", mode_name[m]);
        cr_expect(memcmp(got, want, n) == 0, "%s: (unsigned char)c", mode_name[m]);
        bw_release(&w);
        env_free(e);
    }
}

Test(clients_putc, errors)
{
    unsigned char buf[2];
    bw_writer w;
    cr_expect_eq(bw_putc(NULL, 'a'), BW_EINVAL);
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_putc(&w, 'a'), BW_OK);
    cr_expect_eq(bw_putc(&w, 'b'), BW_OK, "exactly full");
    cr_expect_eq(bw_putc(&w, 'c'), BW_EFULL);
    cr_expect_eq(bw_error(&w), BW_EFULL);
    cr_expect_eq(bw_len(&w), 2);
    cr_expect_eq(bw_truncate(&w, 1), BW_OK);
    cr_expect_eq(bw_putc(&w, 'd'), BW_EFULL, "a recorded error refuses it");
    bw_clear_error(&w);
    cr_expect_eq(bw_putc(&w, 'd'), BW_OK);
    cr_expect(memcmp(buf, "ad", 2) == 0);
}

/* ======================================================================== */
/* A fixed writer never allocates; bw_cstr on a full buffer                 */
/* ======================================================================== */

Test(clients_fixed, printf_of_every_length_never_allocates)
{
    static unsigned char buf[8192];
    bw_pool_stats before, after;
    bw_writer w;
    char want[8192];
    size_t lens[] = {0, 1, 255, 256, 257, 1023, 1024, 1025, 4000, 8190, 8191, 8192};
    static char zeros[8193];
    size_t i;
    memset(zeros, '0', sizeof zeros - 1);
    bw_pool_get_stats(bw_pool_shared(), &before);
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t fit;
        for (fit = 0; fit < 2; fit++) {
            size_t size = lens[i] + fit; /* exactly, and a byte to spare */
            int rc;
            if (size > sizeof buf) continue;
            cr_assert_eq(bw_init_fixed(&w, buf, size), BW_OK);
            rc = bw_printf(&w, "%.*s", (int)lens[i], zeros);
            if (lens[i] == 0) {
                cr_expect_eq(rc, BW_OK);
                continue;
            }
            if (lens[i] >= 1024 && fit == 0) {
                /* longer output is formatted in place: a byte more */
                cr_expect_eq(rc, BW_EFULL, "%zu into %zu", lens[i], size);
                cr_expect_eq(bw_len(&w), 0);
                continue;
            }
            cr_expect_eq(rc, BW_OK, "%zu into %zu", lens[i], size);
            memset(want, '0', lens[i]);
            cr_expect_eq(bw_len(&w), lens[i]);
            cr_expect(memcmp(buf, want, lens[i]) == 0);
        }
    }
    cr_assert_eq(bw_init_fixed(&w, buf, 10), BW_OK);
    cr_expect_eq(bw_printf(&w, "%s", "eleven byte"), BW_EFULL, "too long: nothing written");
    cr_expect_eq(bw_len(&w), 0);
    bw_pool_get_stats(bw_pool_shared(), &after);
    cr_expect_eq(after.rents, before.rents, "a fixed writer rented %llu blocks",
                 (unsigned long long)(after.rents - before.rents));
}

Test(clients_fixed, cstr_of_a_full_buffer_is_null_and_records_nothing)
{
    char buf[6];
    bw_writer w;
    cr_assert_eq(bw_init_fixed(&w, buf, 5), BW_OK);
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    cr_expect_null(bw_cstr(&w), "no room for the NUL");
    cr_expect_eq(bw_error(&w), BW_OK, "the writer is not poisoned");
    cr_expect_eq(bw_truncate(&w, 4), BW_OK);
    cr_expect_str_eq(bw_cstr(&w), "hell");
    cr_expect_eq(bw_putc(&w, '!'), BW_OK);
    cr_expect_null(bw_cstr(&w));
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect(memcmp(buf, "hell!", 5) == 0);
    /* a byte to spare, as the example sizes it */
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_puts(&w, "hello"), BW_OK);
    cr_expect_str_eq(bw_cstr(&w), "hello");
}

Test(clients_fixed, cstr_of_a_full_streaming_buffer_records_nothing)
{
    env *e = env_new();
    bw_writer w;
    unsigned char b[CLIENT_SINK_BUF];
    fill(b, sizeof b, 3);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
    cr_assert_eq(bw_free_capacity(&w), 0);
    cr_expect_null(bw_cstr(&w));
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(e->sink.calls, 0, "bw_cstr never sends");
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.len, sizeof b);
    bw_release(&w);
    env_free(e);
}

/* ======================================================================== */
/* Truncate and patch while an error is recorded                            */
/* ======================================================================== */

Test(clients_rollback, fixed_frame_that_did_not_fit)
{
    unsigned char buf[16];
    bw_writer w;
    uint64_t mark;
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_puts(&w, "ok;"), BW_OK);
    mark = bw_tell(&w);
    cr_assert_eq(bw_put_u32le(&w, 0), BW_OK);
    cr_expect_eq(bw_puts(&w, "far too long a body"), BW_EFULL);
    cr_expect_eq(bw_patch_u32le(&w, mark, 0xdeadbeef), BW_OK, "patch works with the error");
    cr_expect_eq(bw_truncate(&w, mark), BW_OK, "truncate works with the error");
    cr_expect_eq(bw_error(&w), BW_EFULL, "and leaves it recorded");
    cr_expect_eq(bw_len(&w), 3);
    /* the fast path must stay closed: lim follows len */
    cr_expect_eq(bw_put_u8(&w, 'x'), BW_EFULL);
    cr_expect_eq(bw_write(&w, "y", 1), BW_EFULL);
    cr_expect_eq(bw_len(&w), 3);
    cr_expect_eq(bw_truncate(&w, 100), BW_EINVAL, "a bad position is still refused");
    cr_expect_eq(bw_error(&w), BW_EFULL, "the first error stays");
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "next"), BW_OK);
    cr_expect(memcmp(buf, "ok;next", 7) == 0);
}

Test(clients_rollback, every_mode_after_a_failed_call)
{
    int m;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        bw_writer w;
        unsigned char got[4096];
        uint64_t mark;
        size_t n;
        mk(e, &w, m);
        cr_assert_eq(bw_puts(&w, "head"), BW_OK);
        mark = bw_tell(&w);
        cr_assert_eq(bw_puts(&w, "frame"), BW_OK);
        /* a failure every mode records: a bad advance */
        cr_expect_eq(bw_advance(&w, SIZE_MAX), BW_EINVAL);
        cr_expect_eq(bw_patch(&w, mark, "FR", 2), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_truncate(&w, mark + 2), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(bw_put_u8(&w, 'z'), BW_EINVAL, "%s: still refused", mode_name[m]);
        n = produced(e, &w, got);
        cr_expect_eq(n, 6, "%s", mode_name[m]);
        cr_expect(memcmp(got, "headFR", 6) == 0, "%s", mode_name[m]);
        bw_release(&w);
        env_free(e);
    }
}

Test(clients_rollback, streaming_writer_whose_sink_failed)
{
    env *e = env_new();
    bw_writer w;
    unsigned char b[CLIENT_SINK_BUF];
    uint64_t mark;
    fill(b, sizeof b, 9);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, 200), BW_OK);
    mark = bw_tell(&w);
    cr_assert_eq(bw_write(&w, b, 40), BW_OK);
    sink_fail(&e->sink, SF_ERRNO, EAGAIN);
    cr_expect_eq(bw_write(&w, b, 100), BW_EIO, "no room: sends, which fails");
    cr_expect_eq(bw_len(&w), 240, "the unsent bytes stay held");
    cr_expect_eq(bw_truncate(&w, mark), BW_OK, "a mark among the held bytes");
    cr_expect_eq(bw_patch(&w, 0, "AB", 2), BW_OK);
    cr_expect_eq(bw_error(&w), BW_EIO);
    cr_expect_eq(bw_errno(&w), EAGAIN);
    sink_heal(&e->sink);
    bw_clear_error(&w);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.len, 200);
    cr_expect(memcmp(e->sink.got, "AB", 2) == 0 && memcmp(e->sink.got + 2, b + 2, 198) == 0);
    cr_expect_eq(bw_truncate(&w, 10), BW_EINVAL, "sent bytes are gone");
    bw_release(&w);
    env_free(e);
}

/* ======================================================================== */
/* bw_detach_malloc                                                         */
/* ======================================================================== */

/* Write n pattern bytes in pieces, then detach to free(): the bytes, the
 * NUL, an empty writer that can be used again. */
static void detach_check(env *e, int m, size_t n)
{
    bw_writer w;
    unsigned char *src = (unsigned char *)malloc(n + 1), *got;
    unsigned char *all = (unsigned char *)malloc(n + 1);
    size_t len = 12345, i, sent;
    if (m == M_FIXED && n > FIXED_SIZE) {
        free(src);
        free(all);
        return;
    }
    mk(e, &w, m);
    fill(src, n, (unsigned)n);
    for (i = 0; i < n; i += 100)
        cr_assert_eq(bw_write(&w, src + i, n - i < 100 ? n - i : 100), BW_OK);
    sent = e->sink.len;
    got = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(got != NULL, "%s %zu", mode_name[m], n);
    cr_expect_eq(len, n - sent, "%s %zu: the held bytes", mode_name[m], n);
    if (sent != 0) memcpy(all, e->sink.got, sent);
    memcpy(all + sent, got, len);
    cr_expect(memcmp(all, src, n) == 0, "%s %zu", mode_name[m], n);
    cr_expect_eq(got[len], 0, "a NUL after them");
    free(got);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_tell(&w), 0, "positions at 0");
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(bw_puts(&w, "again"), BW_OK, "%s: usable after", mode_name[m]);
    got = (unsigned char *)bw_detach_malloc(&w, NULL);
    cr_assert(got != NULL);
    cr_expect_str_eq((char *)got, "again");
    free(got);
    bw_release(&w);
    e->sink.len = 0;
    free(src);
    free(all);
}

Test(clients_detach_malloc, every_mode_every_size)
{
    size_t sizes[] = {0, 1, 63, 64, 65, 255, 256, 257, 4000, 4096, 5000, 70000};
    int m;
    size_t i;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) detach_check(e, m, sizes[i]);
        env_free(e); /* the hook pool's blocks are copied, and all came back */
    }
}

Test(clients_detach_malloc, no_copy_from_a_malloc_pool)
{
    bw_pool *p;
    bw_pool_options o;
    bw_writer w;
    const unsigned char *d;
    char *s;
    size_t len;
    unsigned char b[3000];
    uint64_t out0;
    int m, checked_env = getenv("BW_CHECKED") != NULL && strcmp(getenv("BW_CHECKED"), "1") == 0;
    fill(b, sizeof b, 4);
    memset(&o, 0, sizeof o);
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK); /* the default allocator */
    out0 = outstanding(p);
    for (m = 0; m < 3; m++) {
        if (m == 0) cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        if (m == 1) cr_assert_eq(bw_init_chain(&w, p), BW_OK);
        if (m == 2) cr_assert_eq(bw_init_sink(&w, p, 4096, test_sink, NULL), BW_OK);
        cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
        cr_assert_eq(bw_consume(&w, 10), BW_OK); /* the bytes move down in the block */
        d = bw_data(&w);
        s = (char *)bw_detach_malloc(&w, &len);
        cr_assert(s != NULL);
        cr_expect_eq(len, sizeof b - 10);
        cr_expect(memcmp(s, b + 10, len) == 0);
        cr_expect_eq(s[len], 0);
        if (!checked_env) /* BW_CHECKED=1 puts a canary after every block: a copy */
            cr_expect_eq((const unsigned char *)s, d - 10, "mode %d: the block itself", m);
        cr_expect_eq(outstanding(p), out0, "the pool no longer counts it");
        free(s);
        bw_release(&w);
    }
    /* exactly full: no room for the NUL, so a copy */
    cr_assert_eq(bw_init(&w, p, 1024), BW_OK);
    cr_assert_eq(bw_write(&w, b, bw_capacity(&w)), BW_OK);
    d = bw_data(&w);
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_neq((const unsigned char *)s, d);
    cr_expect_eq(len, 1024);
    cr_expect(memcmp(s, b, len) == 0 && s[len] == 0);
    free(s);
    cr_expect_eq(outstanding(p), out0, "the block went back to the pool");
    bw_pool_destroy(p);
}

Test(clients_detach_malloc, copies_where_the_block_is_not_mallocs)
{
    bw_pool *p;
    bw_pool_options o;
    bw_writer w;
    const unsigned char *d;
    char *s;
    unsigned char b[3000];
    fill(b, sizeof b, 5);
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_CHECKED; /* a canary after every block */
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
    d = bw_data(&w);
    s = (char *)bw_detach_malloc(&w, NULL);
    cr_assert(s != NULL);
    cr_expect_neq((const unsigned char *)s, d, "checked blocks are copied");
    cr_expect(memcmp(s, b, sizeof b) == 0 && s[sizeof b] == 0);
    free(s);
    bw_pool_destroy(p); /* checked mode reports a block not given back */
}

Test(clients_detach_malloc, segmented_blocks_and_references)
{
    env *e = env_new();
    bw_writer w;
    unsigned char a[5000], r[300], want[5300];
    donec dc = {0, NULL, 0};
    char *s;
    size_t len;
    fill(a, sizeof a, 6);
    fill(r, sizeof r, 7);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_write(&w, a, 2000), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_write(&w, a + 2000, 3000), BW_OK);
    memcpy(want, a, 2000);
    memcpy(want + 2000, r, 300);
    memcpy(want + 2300, a + 2000, 3000);
    cr_expect_eq(dc.calls, 0);
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, sizeof want);
    cr_expect(memcmp(s, want, len) == 0 && s[len] == 0);
    cr_expect_eq(dc.calls, 1, "the reference was copied out: done");
    cr_expect(dc.data == r && dc.n == sizeof r);
    free(s);
    bw_release(&w);
    env_free(e);
}

Test(clients_detach_malloc, null_empty_and_recorded_error)
{
    env *e = env_new();
    bw_writer w;
    size_t len = 99;
    char *s;
    cr_expect_null(bw_detach_malloc(NULL, &len));
    cr_expect_eq(len, 0);
    mk(e, &w, M_CONTIG); /* no storage yet */
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "an empty string, still the caller's to free");
    cr_expect_eq(len, 0);
    cr_expect_eq(s[0], 0);
    free(s);
    cr_assert_eq(bw_puts(&w, "kept"), BW_OK);
    cr_expect_eq(bw_puts(&w, NULL), BW_EINVAL);
    s = (char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "works while an error is recorded");
    cr_expect_str_eq(s, "kept");
    cr_expect_eq(bw_error(&w), BW_OK, "and clears it");
    free(s);
    bw_release(&w);
    env_free(e);
}

/* malloc itself failing: the address space is capped in this test's own
 * process (not where a sanitizer or valgrind owns the address space). */
#if defined(__SANITIZE_ADDRESS__) || defined(BW_VALGRIND)
#  define NO_RLIMIT_TEST 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define NO_RLIMIT_TEST 1
#  endif
#endif

Test(clients_detach_malloc, malloc_failure_records_enomem_and_changes_nothing)
{
#ifndef NO_RLIMIT_TEST
    bw_writer w;
    struct rlimit old, cap;
    const size_t n = (size_t)64 << 20;
    unsigned char *chunk = (unsigned char *)malloc(1 << 20);
    void *s;
    unsigned long vm_pages = 0;
    FILE *f;
    size_t i;
    int rc;
    cr_assert(chunk != NULL);
    fill(chunk, 1 << 20, 8);
    cr_assert_eq(bw_init_chain(&w, NULL), BW_OK);
    for (i = 0; i < n; i += 1 << 20) cr_assert_eq(bw_write(&w, chunk, 1 << 20), BW_OK);
    f = fopen("/proc/self/statm", "r");
    cr_assert(f != NULL);
    cr_assert_eq(fscanf(f, "%lu", &vm_pages), 1);
    fclose(f);
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    cap = old;
    cap.rlim_cur = (rlim_t)vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)16 << 20);
    cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0);
    s = bw_detach_malloc(&w, NULL);
    rc = bw_error(&w);
    setrlimit(RLIMIT_AS, &old);
    cr_expect_null(s, "64 MiB does not fit 16 MiB of address space");
    free(s);
    cr_expect_eq(rc, BW_ENOMEM);
    cr_expect_eq(bw_len(&w), n, "nothing changed");
    for (i = 0; i < n; i += 1 << 20) {
        unsigned char back[64];
        cr_assert_eq(bw_copy_out(&w, i, back, sizeof back), BW_OK);
        cr_assert(memcmp(back, chunk, sizeof back) == 0);
    }
    bw_release(&w);
    free(chunk);
#endif
}

/* ======================================================================== */
/* bw_append_ref                                                            */
/* ======================================================================== */

Test(clients_ref, linked_not_copied_and_done_once_when_consumed)
{
    env *e = env_new();
    bw_writer w;
    static unsigned char r[10000];
    donec dc = {0, NULL, 0};
    struct iovec iov[8];
    size_t k;
    fill(r, sizeof r, 10);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_puts(&w, "hdr:"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, ":end"), BW_OK);
    cr_expect_eq(bw_len(&w), 10008);
    cr_expect_eq(bw_tell(&w), 10008);
    k = bw_iovec(&w, iov, 8);
    cr_assert_eq(k, 3);
    cr_expect(iov[1].iov_base == (void *)r && iov[1].iov_len == sizeof r,
              "the caller's memory itself");
    cr_expect_null(bw_data(&w), "three pieces");
    cr_expect_eq(bw_consume(&w, 4 + 5000), BW_OK);
    cr_expect_eq(dc.calls, 0, "half of it is still held");
    cr_expect_eq(bw_consume(&w, 5000), BW_OK);
    cr_expect_eq(dc.calls, 1, "the last of it left");
    cr_expect(dc.data == r && dc.n == sizeof r, "with the pointer and length given");
    cr_expect_eq(bw_len(&w), 4);
    cr_expect(memcmp(bw_data(&w), ":end", 4) == 0);
    bw_release(&w);
    cr_expect_eq(dc.calls, 1, "once");
    env_free(e);
}

Test(clients_ref, every_way_out_calls_done)
{
    static unsigned char r[3000];
    int way;
    fill(r, sizeof r, 11);
    for (way = 0; way < 8; way++) {
        env *e = env_new();
        bw_writer w;
        donec dc = {0, NULL, 0};
        size_t len;
        mk(e, &w, M_CHAIN);
        cr_assert_eq(bw_puts(&w, "ab"), BW_OK);
        cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
        cr_assert_eq(bw_puts(&w, "cd"), BW_OK);
        switch (way) {
        case 0: bw_release(&w); break;
        case 1: bw_clear(&w); break;
        case 2: cr_expect_eq(bw_truncate(&w, 1), BW_OK); break;
        case 3: {
            const unsigned char *p = bw_pullup(&w);
            cr_assert(p != NULL);
            cr_expect(memcmp(p + 2, r, sizeof r) == 0);
            break;
        }
        case 4: {
            size_t cap;
            void *b = bw_detach(&w, &len, &cap);
            cr_assert(b != NULL);
            cr_expect_eq(len, 3004);
            cr_expect(memcmp((unsigned char *)b + 2, r, sizeof r) == 0);
            cr_expect_eq(bw_pool_return(bw_writer_pool(&w), b, cap), BW_OK);
            break;
        }
        case 5: {
            int fds[2];
            unsigned char got[4000];
            ssize_t n;
            cr_assert_eq(pipe(fds), 0);
            cr_expect_eq(bw_write_fd(&w, fds[1], NULL), BW_OK);
            n = read(fds[0], got, sizeof got);
            cr_expect_eq(n, 3004);
            cr_expect(memcmp(got + 2, r, sizeof r) == 0);
            close(fds[0]);
            close(fds[1]);
            break;
        }
        case 6: cr_expect_eq(bw_patch(&w, 100, "XY", 2), BW_OK); break;
        default: {
            const char *s = bw_cstr(&w);
            cr_assert(s != NULL);
            cr_expect(memcmp(s + 2, r, sizeof r) == 0 && memcmp(s + 3002, "cd", 3) == 0);
            break;
        }
        }
        cr_expect_eq(dc.calls, 1, "way %d", way);
        bw_release(&w);
        cr_expect_eq(dc.calls, 1, "way %d: once", way);
        env_free(e);
    }
}

Test(clients_ref, truncate_keeps_part_of_a_reference)
{
    env *e = env_new();
    bw_writer w;
    unsigned char r1[100], r2[100], got[400];
    donec d1 = {0, NULL, 0}, d2 = {0, NULL, 0};
    fill(r1, sizeof r1, 12);
    fill(r2, sizeof r2, 13);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_append_ref(&w, r1, sizeof r1, on_done, &d1), BW_OK);
    cr_assert_eq(bw_puts(&w, "mid"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r2, sizeof r2, on_done, &d2), BW_OK);
    cr_assert_eq(bw_puts(&w, "tail"), BW_OK);
    cr_expect_eq(bw_truncate(&w, 150), BW_OK, "into the second reference");
    cr_expect_eq(d2.calls, 0, "part of it is kept");
    cr_expect_eq(bw_len(&w), 150);
    cr_expect_eq(bw_puts(&w, "after"), BW_OK);
    cr_assert_eq(bw_copy_out(&w, 0, got, 155), BW_OK);
    cr_expect(memcmp(got, r1, 100) == 0 && memcmp(got + 100, "mid", 3) == 0 &&
              memcmp(got + 103, r2, 47) == 0 && memcmp(got + 150, "after", 5) == 0);
    cr_expect_eq(bw_truncate(&w, 50), BW_OK, "into the first");
    cr_expect_eq(d2.calls, 1);
    cr_expect_eq(d1.calls, 0);
    cr_expect_eq(bw_putc(&w, '!'), BW_OK);
    cr_assert_eq(bw_copy_out(&w, 0, got, 51), BW_OK);
    cr_expect(memcmp(got, r1, 50) == 0 && got[50] == '!');
    cr_expect_eq(bw_truncate(&w, 0), BW_OK, "all of it");
    cr_expect_eq(d1.calls, 1);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_puts(&w, "new"), BW_OK);
    cr_expect(memcmp(bw_data(&w), "new", 3) == 0);
    bw_release(&w);
    cr_expect(d1.calls == 1 && d2.calls == 1);
    env_free(e);
}

Test(clients_ref, patch_copies_the_reference_and_never_writes_the_callers_memory)
{
    env *e = env_new();
    bw_writer w;
    unsigned char r[200], keep[200], got[210];
    donec dc = {0, NULL, 0};
    fill(r, sizeof r, 14);
    memcpy(keep, r, sizeof r);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_puts(&w, "12345"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, "67890"), BW_OK);
    cr_expect_eq(bw_patch(&w, 3, "abcdef", 6), BW_OK, "across the block and the reference");
    cr_expect(memcmp(r, keep, sizeof r) == 0, "the caller's bytes are untouched");
    cr_expect_eq(dc.calls, 1, "the reference is now a copy");
    cr_assert_eq(bw_copy_out(&w, 0, got, 210), BW_OK);
    cr_expect(memcmp(got, "123abcdef", 9) == 0);
    cr_expect(memcmp(got + 9, r + 4, 196) == 0 && memcmp(got + 205, "67890", 5) == 0);
    /* a patch whose source is the referenced memory itself */
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_expect_eq(bw_patch(&w, 0, r, 5), BW_OK);
    cr_expect_eq(dc.calls, 1, "not the patched range");
    cr_expect_eq(bw_patch(&w, 300, r + 10, 20), BW_OK, "into the second, from itself");
    cr_expect_eq(dc.calls, 2);
    cr_assert_eq(bw_copy_out(&w, 290, got, 30), BW_OK);
    cr_expect(memcmp(got, r + 80, 10) == 0 && memcmp(got + 10, r + 10, 20) == 0);
    bw_release(&w);
    cr_expect_eq(dc.calls, 2);
    env_free(e);
}

Test(clients_ref, other_modes_copy_and_call_done_at_once)
{
    int m;
    for (m = 0; m < M_COUNT; m++) {
        env *e = env_new();
        bw_writer w;
        unsigned char r[1000], got[3000];
        donec dc = {0, NULL, 0};
        size_t n;
        if (m == M_CHAIN) {
            env_free(e);
            continue;
        }
        fill(r, sizeof r, 15);
        mk(e, &w, m);
        cr_assert_eq(bw_putc(&w, '<'), BW_OK);
        cr_expect_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(dc.calls, 1, "%s: at once", mode_name[m]);
        cr_expect(dc.data == r && dc.n == sizeof r);
        memset(r, 0, sizeof r); /* the caller may reuse it now */
        cr_assert_eq(bw_putc(&w, '>'), BW_OK);
        n = produced(e, &w, got);
        fill(r, sizeof r, 15);
        cr_expect_eq(n, 1002, "%s", mode_name[m]);
        cr_expect(got[0] == '<' && memcmp(got + 1, r, 1000) == 0 && got[1001] == '>', "%s",
                  mode_name[m]);
        bw_release(&w);
        env_free(e);
    }
}

Test(clients_ref, arguments_and_errors)
{
    env *e = env_new();
    bw_writer w;
    unsigned char small[4], r[8] = "refbytes";
    donec dc = {0, NULL, 0};
    cr_expect_eq(bw_append_ref(NULL, r, 8, on_done, &dc), BW_EINVAL);
    mk(e, &w, M_CHAIN);
    cr_expect_eq(bw_append_ref(&w, NULL, 0, on_done, &dc), BW_OK, "nothing: done at once");
    cr_expect_eq(dc.calls, 1);
    cr_expect_eq(bw_append_ref(&w, r, 8, NULL, NULL), BW_OK, "done may be NULL");
    cr_expect_eq(bw_len(&w), 8);
    cr_expect_eq(bw_append_ref(&w, r, (size_t)PTRDIFF_MAX + 1, on_done, &dc), BW_EOVERFLOW);
    cr_expect_eq(dc.calls, 1, "not on failure");
    cr_expect_eq(bw_append_ref(&w, r, 8, on_done, &dc), BW_EOVERFLOW,
                 "a recorded error refuses it");
    cr_expect_eq(dc.calls, 1);
    bw_clear_error(&w);
    cr_expect_eq(bw_append_ref(&w, NULL, 1, on_done, &dc), BW_EINVAL);
    cr_expect_eq(dc.calls, 1);
    bw_release(&w);
    /* a fixed writer that is full: nothing written, no done */
    cr_assert_eq(bw_init_fixed(&w, small, sizeof small), BW_OK);
    cr_expect_eq(bw_append_ref(&w, r, 8, on_done, &dc), BW_EFULL);
    cr_expect_eq(dc.calls, 1);
    cr_expect_eq(bw_len(&w), 0);
    env_free(e);
}

Test(clients_ref, memory_inside_the_writer_is_copied)
{
    env *e = env_new();
    bw_writer w;
    unsigned char a[3000], got[6000];
    donec dc = {0, NULL, 0};
    const unsigned char *d;
    fill(a, sizeof a, 16);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_write(&w, a, sizeof a), BW_OK);
    d = bw_data(&w);
    cr_expect_eq(bw_append_ref(&w, d + 1000, 2000, on_done, &dc), BW_OK);
    cr_expect_eq(dc.calls, 1, "copied, so done at once");
    cr_expect_eq(bw_consume(&w, 3000), BW_OK); /* the first block goes back */
    cr_assert_eq(bw_copy_out(&w, 0, got, 2000), BW_OK);
    cr_expect(memcmp(got, a + 1000, 2000) == 0);
    bw_release(&w);
    env_free(e);
}

/* A block made by a pullup, emptied by bw_clear, then closed behind a
 * reference: its held range must not come from whatever its link held. */
Test(clients_ref, pulled_up_and_cleared_block_closes_with_its_own_range)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    unsigned char a[3000], r1[100], r2[50], got[200];
    donec dc = {0, NULL, 0};
    fill(a, sizeof a, 17);
    fill(r1, sizeof r1, 18);
    fill(r2, sizeof r2, 19);
    ta_init(&ta, 1);
    p = ta_pool(&ta, 4096, BW_POOL_CHECKED | BW_POOL_FILL); /* rented bytes are 0xA5 */
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    cr_assert_eq(bw_write(&w, a, sizeof a), BW_OK);
    cr_assert_eq(bw_write(&w, a, sizeof a), BW_OK);
    cr_assert(bw_pullup(&w) != NULL);
    bw_clear(&w);
    cr_assert_eq(bw_append_ref(&w, r1, sizeof r1, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, "abc"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r2, sizeof r2, on_done, &dc), BW_OK);
    cr_assert_eq(bw_len(&w), 153);
    cr_assert_eq(bw_copy_out(&w, 0, got, 153), BW_OK);
    cr_expect(memcmp(got, r1, 100) == 0 && memcmp(got + 100, "abc", 3) == 0 &&
              memcmp(got + 103, r2, 50) == 0);
    cr_expect_eq(bw_consume(&w, 153), BW_OK);
    cr_expect_eq(dc.calls, 2);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(clients_ref, many_references_between_small_writes_stay_small)
{
    env *e = env_new();
    bw_writer w;
    static unsigned char r[100][64];
    donec dc = {0, NULL, 0};
    unsigned char *all;
    size_t n, i;
    bw_pool_stats st;
    mk(e, &w, M_CHAIN);
    for (i = 0; i < 100; i++) {
        fill(r[i], 64, (unsigned)i);
        cr_assert_eq(bw_put_u16be(&w, (uint16_t)i), BW_OK);
        cr_assert_eq(bw_append_ref(&w, r[i], 64, on_done, &dc), BW_OK);
    }
    bw_pool_get_stats(e->pool, &st);
    cr_expect_leq(st.outstanding_bytes, (size_t)100 * (4096 + 128) + 4096,
                  "a first-size block after each reference, not doubling: %zu",
                  st.outstanding_bytes);
    all = held_by_iovec(&w, &n);
    cr_assert_eq(n, 100 * 66);
    for (i = 0; i < 100; i++) {
        cr_expect(all[i * 66] == 0 && all[i * 66 + 1] == (unsigned char)i);
        cr_expect(memcmp(all + i * 66 + 2, r[i], 64) == 0);
    }
    free(all);
    bw_release(&w);
    cr_expect_eq(dc.calls, 100);
    env_free(e);
}

/* ======================================================================== */
/* bw_move                                                                  */
/* ======================================================================== */

Test(clients_move, relinks_between_segmented_writers_of_one_pool)
{
    env *e = env_new();
    bw_writer dst, src;
    unsigned char a[10000], b[20000], got[30100];
    unsigned char *all;
    struct iovec iov[32];
    bw_pool_stats before, after;
    size_t k, i, n;
    void *src_first;
    uint64_t src_tell;
    fill(a, sizeof a, 20);
    fill(b, sizeof b, 21);
    mk(e, &dst, M_CHAIN);
    mk(e, &src, M_CHAIN);
    cr_assert_eq(bw_write(&dst, a, sizeof a), BW_OK);
    cr_assert_eq(bw_write(&src, b, 3000), BW_OK);
    cr_assert_eq(bw_write(&src, b + 3000, sizeof b - 3000), BW_OK);
    cr_assert(bw_iovec(&src, iov, 32) >= 2);
    src_first = iov[0].iov_base;
    src_tell = bw_tell(&src);
    bw_pool_get_stats(e->pool, &before);
    cr_expect_eq(bw_move(&dst, &src), BW_OK);
    bw_pool_get_stats(e->pool, &after);
    cr_expect_eq(after.rents, before.rents, "nothing rented");
    cr_expect_eq(after.returns, before.returns, "nothing given back");
    cr_expect_eq(bw_len(&src), 0);
    cr_expect_eq(bw_tell(&src), src_tell, "src's positions go on");
    cr_expect_eq(bw_len(&dst), 30000);
    k = bw_iovec(&dst, iov, 32);
    for (i = 0; i < k && iov[i].iov_base != src_first; i++) {}
    cr_expect(i < k, "src's first block is now dst's");
    cr_expect_eq(bw_puts(&dst, "more"), BW_OK);
    all = held_by_iovec(&dst, &n);
    cr_assert_eq(n, 30004);
    cr_expect(memcmp(all, a, 10000) == 0 && memcmp(all + 10000, b, 20000) == 0 &&
              memcmp(all + 30000, "more", 4) == 0);
    free(all);
    cr_assert_eq(bw_copy_out(&dst, 9990, got, 20), BW_OK);
    cr_expect(memcmp(got, a + 9990, 10) == 0 && memcmp(got + 10, b, 10) == 0);
    /* both go on */
    cr_expect_eq(bw_puts(&src, "src again"), BW_OK);
    cr_expect_eq(bw_len(&src), 9);
    cr_expect_eq(bw_truncate(&dst, 5000), BW_OK, "back into dst's own bytes");
    cr_expect_eq(bw_len(&dst), 5000);
    bw_release(&dst);
    bw_release(&src);
    env_free(e);
}

/* The shapes a relink meets: dst empty, without storage, with an empty last
 * block; src one block (partly consumed), several blocks, references. */
Test(clients_move, relink_shapes)
{
    int shape;
    for (shape = 0; shape < 8; shape++) {
        env *e = env_new();
        bw_writer dst, src;
        unsigned char a[6000], b[9000], r[500], want[20000];
        donec dc = {0, NULL, 0};
        unsigned char *all;
        size_t wn = 0, n;
        fill(a, sizeof a, 30);
        fill(b, sizeof b, 31);
        fill(r, sizeof r, 32);
        mk(e, &dst, M_CHAIN);
        mk(e, &src, M_CHAIN);
        if (shape & 1) { /* dst holds bytes */
            cr_assert_eq(bw_write(&dst, a, 3000), BW_OK);
            memcpy(want, a, 3000);
            wn = 3000;
        } else if (shape & 4) { /* dst had bytes, all consumed */
            cr_assert_eq(bw_write(&dst, a, 100), BW_OK);
            cr_assert_eq(bw_consume(&dst, 100), BW_OK);
        }
        if ((shape & 5) == 5) { /* and an empty last block after them */
            cr_assert(bw_get_span(&dst, 4000, NULL) != NULL);
        }
        if (shape & 2) { /* src: several blocks and a reference */
            cr_assert_eq(bw_write(&src, b, 5000), BW_OK);
            cr_assert_eq(bw_append_ref(&src, r, sizeof r, on_done, &dc), BW_OK);
            cr_assert_eq(bw_write(&src, b + 5000, 4000), BW_OK);
            cr_assert_eq(bw_consume(&src, 10), BW_OK);
            memcpy(want + wn, b + 10, 4990);
            memcpy(want + wn + 4990, r, 500);
            memcpy(want + wn + 5490, b + 5000, 4000);
            wn += 9490;
        } else { /* one block, partly consumed */
            cr_assert_eq(bw_write(&src, b, 1000), BW_OK);
            cr_assert_eq(bw_consume(&src, 300), BW_OK);
            memcpy(want + wn, b + 300, 700);
            wn += 700;
        }
        cr_expect_eq(bw_move(&dst, &src), BW_OK, "shape %d", shape);
        cr_expect_eq(bw_len(&src), 0);
        cr_expect_eq(bw_puts(&dst, "end"), BW_OK);
        memcpy(want + wn, "end", 3);
        wn += 3;
        all = held_by_iovec(&dst, &n);
        cr_expect_eq(n, wn, "shape %d", shape);
        cr_expect(memcmp(all, want, wn) == 0, "shape %d", shape);
        free(all);
        cr_expect_eq(dc.calls, 0, "the reference moved along");
        cr_expect_eq(bw_consume(&dst, bw_len(&dst)), BW_OK);
        cr_expect_eq(dc.calls, (shape & 2) ? 1 : 0, "shape %d: done once dst lets go", shape);
        bw_release(&dst);
        bw_release(&src);
        env_free(e);
    }
}

Test(clients_move, copies_between_any_other_modes)
{
    int md, ms;
    for (md = 0; md < M_COUNT; md++) {
        for (ms = 0; ms < M_COUNT; ms++) {
            env *e = env_new(), *e2;
            bw_writer dst, src;
            unsigned char a[700], b[900], got[2000];
            size_t n;
            if (ms == M_SINK || (md == M_CHAIN && ms == M_CHAIN)) {
                env_free(e);
                continue;
            }
            e2 = env_new();
            fill(a, sizeof a, 40);
            fill(b, sizeof b, 41);
            mk(e, &dst, md);
            mk(e2, &src, ms);
            cr_assert_eq(bw_write(&dst, a, sizeof a), BW_OK);
            cr_assert_eq(bw_write(&src, b, sizeof b), BW_OK);
            cr_expect_eq(bw_move(&dst, &src), BW_OK, "%s <- %s", mode_name[md], mode_name[ms]);
            cr_expect_eq(bw_len(&src), 0);
            cr_expect_eq(bw_tell(&src), sizeof b);
            n = produced(e, &dst, got);
            cr_expect_eq(n, 1600);
            cr_expect(memcmp(got, a, 700) == 0 && memcmp(got + 700, b, 900) == 0, "%s <- %s",
                      mode_name[md], mode_name[ms]);
            cr_expect_eq(bw_puts(&src, "x"), BW_OK, "src usable after");
            bw_release(&dst);
            bw_release(&src);
            env_free(e);
            env_free(e2);
        }
    }
}

Test(clients_move, segmented_writers_of_two_pools_copy)
{
    env *e = env_new(), *e2 = env_new();
    bw_writer dst, src;
    unsigned char r[100], *all;
    donec dc = {0, NULL, 0};
    size_t n;
    fill(r, sizeof r, 42);
    mk(e, &dst, M_CHAIN);
    mk(e2, &src, M_CHAIN);
    cr_assert_eq(bw_puts(&dst, "a"), BW_OK);
    cr_assert_eq(bw_append_ref(&src, r, sizeof r, on_done, &dc), BW_OK);
    cr_expect_eq(bw_move(&dst, &src), BW_OK);
    cr_expect_eq(dc.calls, 1, "copied, so src let go of it");
    all = held_by_iovec(&dst, &n);
    cr_expect(n == 101 && all[0] == 'a' && memcmp(all + 1, r, 100) == 0);
    free(all);
    bw_release(&dst);
    bw_release(&src);
    env_free(e);
    env_free(e2);
}

Test(clients_move, errors)
{
    env *e = env_new();
    bw_writer dst, src, s2;
    unsigned char small[8];
    cr_expect_eq(bw_move(NULL, &src), BW_EINVAL);
    mk(e, &dst, M_CHAIN);
    mk(e, &src, M_CHAIN);
    cr_expect_eq(bw_move(&dst, NULL), BW_EINVAL);
    cr_expect_eq(bw_error(&dst), BW_EINVAL, "recorded in dst");
    bw_clear_error(&dst);
    cr_expect_eq(bw_move(&dst, &dst), BW_EINVAL, "dst == src");
    bw_clear_error(&dst);
    mk(e, &s2, M_SINK);
    cr_assert_eq(bw_puts(&s2, "on its way"), BW_OK);
    cr_expect_eq(bw_move(&dst, &s2), BW_EINVAL, "a streaming src");
    cr_expect_eq(bw_len(&s2), 10, "left as it was");
    bw_release(&s2);
    bw_clear_error(&dst);
    cr_assert_eq(bw_puts(&src, "src"), BW_OK);
    cr_expect_eq(bw_puts(&src, NULL), BW_EINVAL);
    cr_expect_eq(bw_move(&dst, &src), BW_EINVAL, "src's error is returned");
    cr_expect_eq(bw_error(&dst), BW_OK, "not recorded in dst");
    cr_expect_eq(bw_len(&src), 3, "nothing moved");
    bw_clear_error(&src);
    cr_expect_eq(bw_move(&dst, &src), BW_OK);
    cr_expect_eq(bw_len(&dst), 3);
    cr_expect_eq(bw_move(&dst, &src), BW_OK, "nothing held: nothing to do");
    cr_expect_eq(bw_advance(&dst, SIZE_MAX), BW_EINVAL);
    cr_assert_eq(bw_puts(&src, "x"), BW_OK);
    cr_expect_eq(bw_move(&dst, &src), BW_EINVAL, "dst's error refuses it");
    cr_expect_eq(bw_len(&src), 1);
    bw_release(&dst);
    /* a fixed dst without room: all or nothing */
    cr_assert_eq(bw_init_fixed(&dst, small, sizeof small), BW_OK);
    cr_assert_eq(bw_puts(&src, "0123456789"), BW_OK);
    cr_expect_eq(bw_move(&dst, &src), BW_EFULL);
    cr_expect_eq(bw_len(&dst), 0);
    cr_expect_eq(bw_len(&src), 11, "src keeps its bytes");
    bw_release(&src);
    env_free(e);
}

/* ======================================================================== */
/* Allocation failure at every backing call, for the new calls together     */
/* ======================================================================== */

/* One run: two segmented writers and a contiguous one on one pool, with
 * writes, references, patches into them, moves (relinked and copied) and a
 * detach to free() at the end. Returns how many calls failed; the bytes
 * must match a model built from the calls that succeeded, and each done
 * must have run exactly once by the end. */
static int ref_move_workload(env *e)
{
    static unsigned char refs[40][300];
    unsigned char model[40000], *all;
    size_t mlen = 0, n, i;
    bw_writer a, b, c;
    int failed = 0, rc, linked[40];
    donec dc[40];
    memset(dc, 0, sizeof dc);
    memset(linked, 0, sizeof linked);
    cr_assert_eq(bw_init_chain(&a, e->pool), BW_OK);
    cr_assert_eq(bw_init_chain(&b, e->pool), BW_OK);
    cr_assert_eq(bw_init(&c, e->pool, 0), BW_OK);
    for (i = 0; i < 40; i++) {
        unsigned char part[700];
        size_t pn = 50 + (i * 97) % 600;
        bw_writer *t = (i % 3 == 2) ? &b : &a;
        fill(refs[i], 300, (unsigned)i);
        fill(part, pn, (unsigned)i + 100);
        if (bw_error(&a) != BW_OK) break;
        rc = bw_write(t, part, pn);
        if (rc != BW_OK) {
            cr_assert_eq(rc, BW_ENOMEM);
            failed++;
            bw_clear_error(t);
            continue;
        }
        if (t == &a) memcpy(model + mlen, part, pn), mlen += pn;
        rc = bw_append_ref(t, refs[i], 300, on_done, &dc[i]);
        if (rc != BW_OK) {
            cr_assert_eq(rc, BW_ENOMEM);
            cr_assert_eq(dc[i].calls, 0, "no done for a failed reference");
            failed++;
            bw_clear_error(t);
            if (t == &b) {   /* keep b's model simple: drop what it holds */
                bw_clear(&b);
            }
            continue;
        }
        linked[i] = 1;
        if (t == &a) memcpy(model + mlen, refs[i], 300), mlen += 300;
        if (t == &a && i % 4 == 0 && mlen > 20) {
            rc = bw_patch(&a, mlen - 10, "PATCHED!!!", 10);
            if (rc == BW_OK) memcpy(model + mlen - 10, "PATCHED!!!", 10);
            else {
                cr_assert_eq(rc, BW_ENOMEM);
                failed++;
                bw_clear_error(&a);
            }
        }
        if (i % 3 == 2) { /* move b into a: relinked */
            size_t bl = bw_len(&b);
            unsigned char tmp[2000];
            cr_assert(bl <= sizeof tmp);
            cr_assert_eq(bw_copy_out(&b, 0, tmp, bl), BW_OK);
            cr_assert_eq(bw_move(&a, &b), BW_OK, "a relink never fails");
            memcpy(model + mlen, tmp, bl);
            mlen += bl;
        }
    }
    /* a copy: a into the contiguous c */
    rc = bw_move(&c, &a);
    if (rc == BW_OK) {
        cr_assert_eq(bw_len(&a), 0);
        all = (unsigned char *)bw_detach_malloc(&c, &n);
        cr_assert(all != NULL);
        cr_expect_eq(n, mlen);
        cr_expect(memcmp(all, model, mlen) == 0, "the bytes after every failure");
        cr_expect_eq(all[n], 0);
        free(all);
    } else {
        cr_assert_eq(rc, BW_ENOMEM);
        failed++;
        cr_expect_eq(bw_len(&a), mlen, "a failed move leaves src as it was");
        all = held_by_iovec(&a, &n);
        cr_expect(memcmp(all, model, mlen) == 0);
        free(all);
    }
    bw_release(&a);
    bw_release(&b);
    bw_release(&c);
    for (i = 0; i < 40; i++)
        cr_expect_eq(dc[i].calls, linked[i], "done %zu ran %d times", i, dc[i].calls);
    return failed;
}

Test(clients_allocfail, references_moves_and_detach_at_every_call)
{
    env *e = env_new();
    long calls, nth;
    cr_expect_eq(ref_move_workload(e), 0);
    calls = atomic_load(&e->ta.calls);
    env_free(e);
    cr_assert(calls > 10, "the workload reaches the allocator (%ld calls)", calls);
    for (nth = 1; nth <= calls + 1; nth++) {
        int sticky;
        for (sticky = 0; sticky < 2; sticky++) {
            e = env_new();
            atomic_store(&e->ta.fail_at, nth);
            atomic_store(&e->ta.fail_sticky, sticky);
            (void)ref_move_workload(e);
            env_free(e); /* leaks nothing */
        }
    }
}

/* ======================================================================== */
/* The learned size with a first capacity; a streaming buffer's size        */
/* ======================================================================== */

Test(clients_sizes, learned_size_wins_over_a_smaller_first_capacity)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats st;
    bw_writer w;
    unsigned char buf[64], b[10000];
    int i;
    fill(b, sizeof b, 50);
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, BW_POOL_LEARN_SIZE);
    for (i = 0; i < 4; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, b, sizeof b), BW_OK);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &st);
    cr_assert_eq(st.learned_size, 16384);
    cr_assert_eq(bw_init(&w, p, 256), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "the larger of 256 and the learned size");
    bw_release(&w);
    cr_assert_eq(bw_init(&w, p, 40000), BW_OK);
    cr_expect_eq(bw_capacity(&w), 65536, "a larger first capacity wins");
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 16384, "out of the caller's buffer: the learned size");
    bw_release(&w);
    ta_finish(&ta, p);
    /* without learning, as given */
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, 0);
    cr_assert_eq(bw_init(&w, p, 256), BW_OK);
    cr_expect_eq(bw_capacity(&w), 256);
    bw_release(&w);
    cr_assert_eq(bw_init_buffer(&w, p, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), 128);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(clients_sizes, streaming_buffer_goes_back_to_its_size_after_a_long_item)
{
    env *e = env_new();
    bw_writer w;
    unsigned char *span;
    unsigned char b[100];
    size_t avail;
    bw_pool_stats st;
    fill(b, sizeof b, 51);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, 10), BW_OK);
    cr_expect_eq(bw_capacity(&w), CLIENT_SINK_BUF);
    span = (unsigned char *)bw_get_span(&w, 100000, NULL);
    cr_assert(span != NULL);
    memset(span, 'L', 100000);
    cr_assert_eq(bw_advance(&w, 100000), BW_OK);
    cr_expect_geq(bw_capacity(&w), 100000, "a long item takes a larger block");
    cr_assert_eq(bw_write(&w, b, 10), BW_OK); /* fits: nothing sent yet */
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.len, 100020);
    bw_pool_get_stats(e->pool, &st);
    cr_expect_eq(st.outstanding_bytes, 0, "the larger block went back when its bytes were sent");
    cr_assert_eq(bw_write(&w, b, 10), BW_OK);
    cr_expect_eq(bw_capacity(&w), CLIENT_SINK_BUF, "the configured size again");
    /* the same when the send comes from a write that does not fit */
    span = (unsigned char *)bw_get_span(&w, 5000, &avail);
    cr_assert(span != NULL);
    cr_assert_eq(bw_advance(&w, avail), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), CLIENT_SINK_BUF);
    cr_expect_eq(e->sink.len, 100020 + 10 + avail);
    cr_expect_eq(bw_len(&w), 100);
    /* a write from the enlarged buffer's own bytes keeps it until copied */
    span = (unsigned char *)bw_get_span(&w, 5000, &avail);
    cr_assert(span != NULL);
    memset(span, 'Q', avail);
    cr_assert_eq(bw_advance(&w, avail), BW_OK);
    cr_expect_eq(bw_write(&w, span + avail - 100, 100), BW_OK);
    cr_assert_eq(bw_flush(&w), BW_OK);
    cr_expect(e->sink.got[e->sink.len - 1] == 'Q' && e->sink.got[e->sink.len - 100] == 'Q');
    bw_release(&w);
    env_free(e);
}
