/* SPDX-License-Identifier: MIT */
/* test_failinj.c - allocation failure injected at every backing call, in
 * every mode (fail_each_call, harness.h): a failed call keeps nothing of
 * itself, the error sticks, and after bw_clear_error the job finishes
 * with the same bytes.
 *
 * Every check runs in each mode the harness opens (harness.h): contiguous
 * (bw_init, and bw_init_buffer over a caller's first buffer), segmented,
 * streaming (a test-owned sink) and fixed (a buffer inside guard bytes). */
#define _GNU_SOURCE 1 /* pipe, fcntl, sigpending, fopencookie-based bw_fopen */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>

/* 5. Allocation failure at every backing call                              */
/* ======================================================================== */

#define JOB_STEPS 300

static size_t job_chunk(int i) { return (size_t)(i * 37) % 5000 + 1; }
static size_t job_reserve(int i) { return (size_t)(i * 101) % 9000; }

/* One library call per step (span + advance counts as one: the advance
 * cannot fail once the span was given). Mixed sizes that cross every
 * block, buffer and threshold boundary. */
static int job_step(bw_writer *w, int i)
{
    const unsigned char *src = pattern();
    switch (i % 10) {
    case 0: return bw_write(w, src + i, job_chunk(i));
    case 1: return bw_puts(w, "the quick brown fox ");
    case 2:
        return i % 20 == 2 ? bw_put_dec_i64(w, -(int64_t)i * 1000003)
                           : bw_printf(w, "%d:%s;", i, "abc");
    case 3: return bw_printf(w, "%0*d|", 300 + i % 50, i);
    case 4: return bw_put_u32le(w, (uint32_t)i * 2654435761u);
    case 5: return bw_put_uvarint(w, (uint64_t)i << (i % 57));
    case 6: return bw_put_hex(w, src + 3 * i, (size_t)(i % 40));
    case 7: {
        size_t k = (size_t)(i % 100) + 1;
        unsigned char *p = (unsigned char *)bw_get_span(w, k, NULL);
        if (p == NULL) return bw_error(w);
        memcpy(p, src + 5 * i, k);
        return bw_advance(w, k);
    }
    case 8: return bw_reserve(w, job_reserve(i));
    default: return bw_write(w, src + 7 * i, job_reserve(i - 1));
    }
}

/* The job's output and, per step, the position before and after it and the
 * room it needs. */
typedef struct job_ref {
    unsigned char *out;
    size_t total;
    uint64_t before[JOB_STEPS], after[JOB_STEPS];
    size_t need[JOB_STEPS];
} job_ref;

static void job_reference(job_ref *jr)
{
    bw_writer w = BW_WRITER_INIT;
    int i;
    for (i = 0; i < JOB_STEPS; i++) {
        jr->before[i] = bw_tell(&w);
        cr_assert_eq(job_step(&w, i), BW_OK, "reference step %d", i);
        jr->after[i] = bw_tell(&w);
        jr->need[i] = i % 10 == 8 ? job_reserve(i)
                      : i % 10 == 7 ? (size_t)(i % 100) + 1
                                    : (size_t)(jr->after[i] - jr->before[i]);
    }
    jr->total = bw_len(&w);
    jr->out = (unsigned char *)malloc(jr->total);
    cr_assert_not_null(jr->out);
    memcpy(jr->out, bw_data(&w), jr->total);
    bw_release(&w);
}

/* Run the job in `mode` with backing call N failing (alone, or from N on).
 * Returns 1 when a failure reached the caller, 0 when the job made fewer
 * than N calls. */
static int job_with_failure(const job_ref *jr, int mode, long fail_n, int sticky)
{
    harness h;
    long base;
    int i, failed_at = -1, rc;
    uint64_t stop = 0;
    h_open_ex(&h, mode, mode == M_FIXED ? jr->total : default_param(mode), 4096, 0);
    base = h_calls(&h);
    atomic_store(&h.ta.fail_sticky, sticky);
    atomic_store(&h.ta.fail_at, base + fail_n);
    for (i = 0; i < JOB_STEPS; i++) {
        rc = job_step(&h.w, i);
        if (failed_at < 0) {
            if (rc == BW_OK) {
                cr_expect_eq(bw_tell(&h.w), jr->after[i]);
                continue;
            }
            failed_at = i;
            stop = bw_tell(&h.w);
            cr_expect_eq(rc, BW_ENOMEM, "%s N=%ld step %d: %s", mode_name[mode], fail_n, i,
                         bw_strerror(rc));
            cr_expect_eq(bw_error(&h.w), BW_ENOMEM, "recorded");
            if (mode == M_SINK)
                cr_expect(stop >= jr->before[i] && stop <= jr->after[i],
                          "streaming: a prefix of the failed call at most");
            else
                cr_expect_eq(stop, jr->before[i], "%s N=%ld step %d: nothing of the failed call",
                             mode_name[mode], fail_n, i);
        } else {
            cr_expect_eq(rc, BW_ENOMEM, "%s N=%ld step %d: sticks", mode_name[mode], fail_n, i);
            cr_expect_eq(bw_tell(&h.w), stop, "refused calls change nothing");
        }
    }
    if (failed_at >= 0) {
        expect_output(&h, jr->out, (size_t)stop, "held bytes at the failure");
        if (!sticky && stop == jr->before[failed_at]) {
            /* The allocator works again: clear_error and redo the failed call. */
            bw_clear_error(&h.w);
            for (i = failed_at; i < JOB_STEPS; i++)
                cr_expect_eq(job_step(&h.w, i), BW_OK, "%s N=%ld retry step %d",
                             mode_name[mode], fail_n, i);
            cr_expect_eq(bw_flush(&h.w), BW_OK);
            expect_output(&h, jr->out, jr->total, "job finished after clear_error");
        }
    } else {
        cr_expect_eq(bw_flush(&h.w), BW_OK);
        expect_output(&h, jr->out, jr->total, "job without failure");
        cr_expect_lt(h_calls(&h) - base, fail_n, "%s N=%ld: a failed backing call never "
                     "reached the caller", mode_name[mode], fail_n);
    }
    if (mode == M_FIXED) cr_expect_eq(h_calls(&h), base, "a fixed writer never allocates");
    h_close(&h);
    return failed_at >= 0;
}

typedef struct job_run {
    const job_ref *jr;
    int mode;
} job_run;

static int job_run_failing(void *ctx, long n, int sticky)
{
    const job_run *r = (const job_run *)ctx;
    return job_with_failure(r->jr, r->mode, n, sticky);
}

static void fail_every_call(int sticky)
{
    job_ref jr;
    int m;
    job_reference(&jr);
    FOR_EACH_MODE(m) {
        job_run r = {&jr, m};
        long n = fail_each_call(job_run_failing, &r, sticky, 2000);
        if (m != M_FIXED) cr_expect_gt(n, 3, "%s: the job makes backing calls", mode_name[m]);
        else cr_expect_eq(n, 1);
    }
    free(jr.out);
}

Test(failinj, every_backing_call_failing_alone_in_every_mode, .timeout = 300)
{
    fail_every_call(0);
}

Test(failinj, every_backing_call_failing_from_then_on_in_every_mode, .timeout = 300)
{
    fail_every_call(1);
}

Test(failinj, fixed_writer_one_byte_short_at_every_step_is_efull, .timeout = 300)
{
    job_ref jr;
    int j;
    job_reference(&jr);
    for (j = 0; j < JOB_STEPS; j++) {
        harness h;
        size_t size;
        int i, f = -1, rc;
        if (jr.need[j] == 0) continue;
        size = (size_t)jr.before[j] + jr.need[j] - 1;
        for (i = 0; i < JOB_STEPS && f < 0; i++)
            if (jr.before[i] + jr.need[i] > size) f = i;
        cr_assert_geq(f, 0);
        h_open_ex(&h, M_FIXED, size, 0, 0);
        for (i = 0; i < JOB_STEPS; i++) {
            rc = job_step(&h.w, i);
            cr_expect_eq(rc, i < f ? BW_OK : BW_EFULL, "size %zu step %d (first failure %d): %s",
                         size, i, f, bw_strerror(rc));
            if (rc != (i < f ? BW_OK : BW_EFULL)) break;
        }
        cr_expect_eq(bw_tell(&h.w), jr.before[f]);
        expect_output(&h, jr.out, (size_t)jr.before[f], "fixed, one byte short");
        cr_expect_eq(h_calls(&h), 0);
        h_close(&h);
    }
    free(jr.out);
}
