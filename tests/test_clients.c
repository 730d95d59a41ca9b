/* test_clients.c - what real serializers needed (0.3): the errno kept with
 * BW_EIO (bw_errno), bw_putc, a fixed writer's printf, bw_cstr on a full
 * buffer, truncate and patch while an error is recorded, the learned size
 * with a first capacity, and a streaming buffer's size after a long item.
 */
#define _GNU_SOURCE 1 /* pipe, sigaction, setrlimit under -std=c11 */
#include "helpers.h"

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

enum { M_CONTIG, M_BUFFER, M_CHAIN, M_SINK, M_FIXED, M_COUNT };
static const char *const mode_name[M_COUNT] = {"contiguous", "buffer", "segmented",
                                               "streaming", "fixed"};

#define SINK_BUF 256
#define IBUF_SIZE 64
#define FIXED_SIZE (1u << 16)

/* What a streaming writer's sink took; fail_errno != 0 makes it fail. */
typedef struct sink_state {
    unsigned char *got;
    size_t len, cap;
    long calls;
    int fail_errno;
    int broken; /* returns 0: a broken sink */
} sink_state;

static ptrdiff_t test_sink(void *ctx, const void *data, size_t n)
{
    sink_state *s = (sink_state *)ctx;
    s->calls++;
    if (s->broken) return 0;
    if (s->fail_errno != 0) {
        errno = s->fail_errno;
        return -1;
    }
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2;
        s->got = (unsigned char *)realloc(s->got, s->cap);
        cr_assert(s->got != NULL);
    }
    memcpy(s->got + s->len, data, n);
    s->len += n;
    return (ptrdiff_t)n;
}

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
    case M_SINK: rc = bw_init_sink(w, e->pool, SINK_BUF, test_sink, &e->sink); break;
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

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = pat(i, seed);
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
    e->sink.fail_errno = ENOSPC;
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    errno = ENOENT; /* an unrelated call later */
    cr_expect_eq(bw_flush(&w), BW_EIO);
    cr_expect_eq(bw_errno(&w), ENOSPC, "the sink's errno, not %d", bw_errno(&w));
    cr_expect_eq(bw_put_u8(&w, 1), BW_EIO);
    cr_expect_eq(bw_errno(&w), ENOSPC, "a refused call keeps it");
    bw_clear_error(&w);
    cr_expect_eq(bw_errno(&w), 0, "cleared with the error");
    e->sink.fail_errno = 0;
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(bw_errno(&w), 0);

    e->sink.broken = 1;
    cr_expect_eq(bw_write(&w, b, sizeof b), BW_EIO);
    cr_expect_eq(bw_errno(&w), EIO, "a broken sink records EIO");
    bw_clear(&w);
    cr_expect_eq(bw_errno(&w), 0, "bw_clear forgets it");
    e->sink.broken = 0;
    e->sink.fail_errno = EPIPE;
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
    e->sink.fail_errno = EDQUOT;
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
    unsigned char b[SINK_BUF];
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
        cr_expect_eq(bw_advance(&w, (size_t)1 << 40), BW_EINVAL);
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
    unsigned char b[SINK_BUF];
    uint64_t mark;
    fill(b, sizeof b, 9);
    mk(e, &w, M_SINK);
    cr_assert_eq(bw_write(&w, b, 200), BW_OK);
    mark = bw_tell(&w);
    cr_assert_eq(bw_write(&w, b, 40), BW_OK);
    e->sink.fail_errno = EAGAIN;
    cr_expect_eq(bw_write(&w, b, 100), BW_EIO, "no room: sends, which fails");
    cr_expect_eq(bw_len(&w), 240, "the unsent bytes stay held");
    cr_expect_eq(bw_truncate(&w, mark), BW_OK, "a mark among the held bytes");
    cr_expect_eq(bw_patch(&w, 0, "AB", 2), BW_OK);
    cr_expect_eq(bw_error(&w), BW_EIO);
    cr_expect_eq(bw_errno(&w), EAGAIN);
    e->sink.fail_errno = 0;
    bw_clear_error(&w);
    cr_expect_eq(bw_flush(&w), BW_OK);
    cr_expect_eq(e->sink.len, 200);
    cr_expect(memcmp(e->sink.got, "AB", 2) == 0 && memcmp(e->sink.got + 2, b + 2, 198) == 0);
    cr_expect_eq(bw_truncate(&w, 10), BW_EINVAL, "sent bytes are gone");
    bw_release(&w);
    env_free(e);
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
    cr_expect_eq(bw_capacity(&w), SINK_BUF);
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
    cr_expect_eq(bw_capacity(&w), SINK_BUF, "the configured size again");
    /* the same when the send comes from a write that does not fit */
    span = (unsigned char *)bw_get_span(&w, 5000, &avail);
    cr_assert(span != NULL);
    cr_assert_eq(bw_advance(&w, avail), BW_OK);
    cr_assert_eq(bw_write(&w, b, 100), BW_OK);
    cr_expect_eq(bw_capacity(&w), SINK_BUF);
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
