/* SPDX-License-Identifier: MIT */
/* test_sink.c - streaming to a sink: the exact stream whatever counts the
 * sink takes, EINTR retried, when the sink is called, buffer sizes, bad
 * arguments, the sink failing at every call, broken sinks, aliasing. */
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
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <time.h>
#include <unistd.h>

/* Streaming to a sink                                                      */
/* ------------------------------------------------------------------------ */

/* The whole script through a streaming writer on sink s; everything must
 * arrive, exactly once, in order. */
static void stream_all(sink *s, size_t bufsz, unsigned seed, size_t target)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer w;
    work wk;
    size_t i;
    work_make(&wk, seed, target, small_sizes, NSMALL);
    cr_assert_eq(bw_init_sink(&w, p, bufsz, test_sink, s), BW_OK);
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

Test(sink, sink_taking_one_byte_at_a_time_gets_the_exact_stream, .timeout = 60)
{
    sink s;
    sink_init(&s);
    s.take = 1;
    stream_all(&s, 256, 11, 20000);
    sink_free(&s);
}

Test(sink, sink_taking_random_short_counts_gets_the_exact_stream, .timeout = 60)
{
    sink s;
    unsigned seed;
    for (seed = 1; seed <= 3; seed++) {
        sink_init_random(&s, seed);
        stream_all(&s, seed == 3 ? 4096 : 256, seed * 7, 40000);
        sink_free(&s);
    }
}

Test(sink, sink_eintr_is_retried, .timeout = 60)
{
    sink s;
    sink_init_random(&s, 5);
    s.eintr = EINTR_ODD;
    stream_all(&s, 256, 3, 20000);
    cr_expect_geq(s.calls, 2 * 20, "every other call was EINTR");
    sink_free(&s);
}

/* A call that fits never sends; the buffer is rented at the first write
 * and a reserve beyond it is allowed; release and clear never send and keep
 * the mode; zero-length calls never call the sink. */
Test(sink, sink_is_called_only_when_room_lacks, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    sink s;
    unsigned char buf[1000];
    size_t i, avail;
    for (i = 0; i < sizeof buf; i++) buf[i] = pat(i, 1);
    p = fresh_pool(&ta, 0, 0);
    sink_init(&s);
    cr_assert_eq(bw_init_sink(&w, p, 256, test_sink, &s), BW_OK);
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
    sink_free(&s);
    ta_finish(&ta, p);
}

Test(sink, sink_buffer_sizes, .timeout = 60)
{
    bw_writer w;
    sink s;
    volatile size_t huge = (size_t)PTRDIFF_MAX + 1;
    sink_init(&s);
    cr_assert_eq(bw_init_sink(&w, NULL, 0, test_sink, &s), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 65536, "buffer_size 0 is 64 KiB");
    bw_release(&w);
    cr_assert_eq(bw_init_sink(&w, NULL, 300, test_sink, &s), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), 512, "300 rounds up by the growth rule");
    bw_release(&w);
    cr_expect_eq(bw_init_sink(&w, NULL, huge, test_sink, &s), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "a failed init is recorded");
    bw_release(&w);
    cr_expect_eq(s.calls, 0);
    sink_free(&s);
}

/* NULL writer, NULL sink, fd < 0: BW_EINVAL. */
Test(sink, bad_arguments_to_streaming_inits, .timeout = 60)
{
    bw_writer w;
    sink s;
    size_t written = 5;
    sink_init(&s);
    cr_expect_eq(bw_init_sink(NULL, NULL, 0, test_sink, &s), BW_EINVAL);
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
    sink_free(&s);
}

/* The sink fails (-1, EIO) at its Nth call, once, for every N: the failing
 * call records BW_EIO with errno EIO, no byte is lost (sent + held is the
 * accepted prefix), writes are refused, then clear_error + flush resends from
 * the first byte not accepted and the sink ends with the whole stream. */
static long sticky_with_held, sticky_without_held; /* both cases must occur */

static long sink_fail_run(const work *wk, int short_counts, size_t bufsz, long n, int sticky)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer w;
    sink s;
    size_t i, held_at_fail;
    int failures = 0, rc, e;
    long calls;
    sink_init_random(&s, 99);
    s.random = short_counts;
    s.fail_errno = EIO;
    s.fail_at = n;
    s.fail_sticky = sticky;
    cr_assert_eq(bw_init_sink(&w, p, bufsz, test_sink, &s), BW_OK);
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
    sink_free(&s);
    ta_finish(&ta, p);
    return calls;
}

static void sink_fail_every_n(int short_counts, size_t bufsz, int sticky, unsigned seed)
{
    work wk;
    long total, n;
    work_make(&wk, seed, 12000, small_sizes, NSMALL);
    total = sink_fail_run(&wk, short_counts, bufsz, 0, 0);
    cr_assert_gt(total, 10);
    sticky_with_held = sticky_without_held = 0;
    for (n = 1; n <= total + 1; n++) sink_fail_run(&wk, short_counts, bufsz, n, sticky);
    if (sticky) {
        cr_expect_gt(sticky_with_held, 0, "a failure with bytes held was tested");
        cr_expect_gt(sticky_without_held, 0, "a failure with nothing held was tested");
    }
    work_free(&wk);
}

Test(sink, sink_failing_at_every_call_loses_and_repeats_nothing, .timeout = 120)
{
    sink_fail_every_n(0, 256, 0, 21);
    sink_fail_every_n(1, 256, 0, 22);
}

Test(sink, sink_failing_for_good_at_every_call_keeps_the_rest_held, .timeout = 120)
{
    sink_fail_every_n(0, 256, 1, 23);
    sink_fail_every_n(1, 512, 1, 24);
}

/* A sink returning 0, more than n or below -1: BW_EIO, errno EIO, no loop. */
Test(sink, broken_sinks_are_eio_without_looping, .timeout = 60)
{
    static const int kinds[] = {SF_ZERO, SF_TOO_MANY, SF_BELOW};
    int kind;
    unsigned char buf[600];
    size_t i;
    for (i = 0; i < sizeof buf; i++) buf[i] = pat(i, 4);
    for (kind = 1; kind <= 3; kind++) {
        bw_writer w;
        sink s;
        int rc, e;
        sink_init(&s);
        sink_fail(&s, kinds[kind - 1], 0);
        cr_assert_eq(bw_init_sink(&w, NULL, 256, test_sink, &s), BW_OK);
        cr_assert_eq(bw_write(&w, buf, 200), BW_OK);
        expect_flush_eio(&w, EIO, kind == 1 ? "sink returns 0"
                                  : kind == 2 ? "sink returns n + 1" : "sink returns -2");
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
        sink_free(&s);
    }
}

/* A source inside the writer's own held bytes, also when the call
 * sends and reuses the streaming buffer. */
Test(sink, streaming_source_may_alias_the_buffer, .timeout = 60)
{
    bw_writer w;
    sink s;
    bytes exp = {NULL, 0, 0};
    unsigned char buf[200];
    char hex[200];
    size_t i;
    for (i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(1 + pat(i, 9) % 255);
    sink_init_random(&s, 3);
    cr_assert_eq(bw_init_sink(&w, NULL, 256, test_sink, &s), BW_OK);
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
    sink_free(&s);
    by_free(&exp);
}

/* ------------------------------------------------------------------------ */
