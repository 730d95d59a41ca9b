/* SPDX-License-Identifier: MIT */
/* test_failinj_script.c - the allocator failing at every backing call
 * under a scripted stream of writes (streaming, segmented): nothing lost or
 * repeated; and segmented steady state and pullup without a copy. */
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

/* Allocator failure at every call (streaming, segmented)                   */
/* ------------------------------------------------------------------------ */

/* A script and the writer it runs on: segmented (chain) or streaming. */
typedef struct script_run {
    const work *wk;
    int chain;
} script_run;

/* Run the script; the Nth backing call fails (once, or from then on; n = 0:
 * none). A failed call records BW_ENOMEM and (segmented) writes nothing,
 * (streaming) accepts a prefix, all-or-nothing up to the buffer size; the
 * rest is then written and nothing is lost or repeated. Returns the backing
 * calls made: at least n when call n failed, so as fail_each_call's run it
 * reports every N it was given as reached. */
static long alloc_failures_seen;

static int alloc_fail_run(void *ctx, long n, int sticky)
{
    const work *wk = ((const script_run *)ctx)->wk;
    const int chain = ((const script_run *)ctx)->chain;
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 16384, 0);
    bw_writer w;
    sink s;
    const size_t bufsz = 1024;
    long start, calls;
    size_t i;
    int failures = 0, rc;
    start = atomic_load(&ta.calls);
    if (n > 0) {
        atomic_store(&ta.fail_sticky, sticky);
        atomic_store(&ta.fail_at, start + n);
    }
    sink_init_random(&s, 31);
    if (chain) cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    else cr_assert_eq(bw_init_sink(&w, p, bufsz, test_sink, &s), BW_OK);
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
    sink_free(&s);
    ta_finish(&ta, p);
    return (int)calls;
}

static void alloc_fail_every_n(int chain, size_t target, unsigned seed)
{
    work wk;
    script_run r;
    long total;
    work_make(&wk, seed, target, small_sizes, NSMALL);
    r.wk = &wk;
    r.chain = chain;
    total = alloc_fail_run(&r, 0, 0);
    cr_assert_geq(total, 2, "the script makes backing calls");
    alloc_failures_seen = 0;
    /* N = 1 .. total + 1 (one past the last call: nothing fails), alone
     * and from N on. */
    cr_assert_eq(fail_each_call(alloc_fail_run, &r, 0, total + 2), total + 2);
    cr_assert_eq(fail_each_call(alloc_fail_run, &r, 1, total + 2), total + 2);
    cr_expect_geq(alloc_failures_seen, total, "the failures reach the caller (%ld of %ld)",
                  alloc_failures_seen, 2 * total);
    work_free(&wk);
}

Test(failinj_script, allocator_failing_at_every_call_streaming, .timeout = 120)
{
    alloc_fail_every_n(0, 60000, 41);
}

Test(failinj_script, allocator_failing_at_every_call_segmented, .timeout = 120)
{
    alloc_fail_every_n(1, 150000, 42);
}

/* From 0.1's chain test: a stream of similar segmented jobs is served from
 * the pool's retained blocks, with no backing allocation at steady state. */
Test(failinj_script, segmented_jobs_reuse_pooled_blocks_at_steady_state, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 64u << 10, 0);
    bw_pool_stats a, b;
    bw_writer w;
    unsigned char buf[8192];
    int i, job;
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
Test(failinj_script, segmented_pullup_of_bytes_in_one_block_does_not_copy, .timeout = 60)
{
    int how;
    for (how = 0; how < 2; how++) {
        test_alloc ta;
        bw_pool *p = fresh_pool(&ta, 4096, 0);
        bw_writer w;
        const unsigned char *d, *pu;
        size_t avail;
        long allocs;
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
