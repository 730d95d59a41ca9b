/* SPDX-License-Identifier: MIT */
/* test_failinj.c - the allocator failing at every backing call (the
 * counting allocator's fail_at, and fail_each_call: harness.h), alone or
 * from then on. A failed call keeps nothing of itself (a streaming writer:
 * a prefix at most), the error sticks, nothing leaks, and after
 * bw_clear_error the job finishes with the same bytes. The one file for
 * allocation failure injection; by workload:
 *
 *   - allocfail: contiguous jobs that grow through the classes and past
 *     the threshold, on pools without retention, with the learned size and
 *     large retention, and with every default; a failed rent or init;
 *   - failinj: one job of every kind of call in every mode (harness.h's
 *     modes), and a fixed writer one byte short at every step;
 *   - failinj_script: a scripted stream of writes (harness_pool.c) on a
 *     streaming writer whose sink takes random short counts, and on a
 *     segmented one;
 *   - failinj_refs: references, patches, moves (relinked and copied) and a
 *     detach to free() across writers of one pool. */
#define _GNU_SOURCE 1 /* pipe, fcntl, sigpending, fopencookie-based bw_fopen */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#if defined(__linux__)
#  include <sys/resource.h> /* setrlimit: address space for reservations */
#  include <unistd.h>
#endif

/* ======================================================================== */
/* Contiguous jobs across the threshold                                     */
/* ======================================================================== */

#define THRESHOLD 4096

/* One step of the workload: append the bytes of step i through one of the
 * API's paths, mirroring them into the reference on success. */
static int step(bw_writer *w, int i, unsigned char *ref, size_t *ref_len)
{
    unsigned char buf[3000];
    size_t n = 0, k;
    int rc;
    switch ((i + 5) % 6) { /* starts small: every class is crossed */
    case 0: /* a big write */
        n = 100 + (size_t)(i * 37) % 500;
        for (k = 0; k < n; k++) buf[k] = pat(k, (unsigned)i);
        rc = bw_write(w, buf, n);
        break;
    case 1:
        rc = bw_put_u32le(w, (uint32_t)i * 2654435761u);
        bw__st_u32le(buf, (uint32_t)i * 2654435761u);
        n = 4;
        break;
    case 2: {
        char s[64];
        int len = snprintf(s, sizeof s, "step %d: %x;", i, (unsigned)i * 77u);
        rc = bw_printf(w, "step %d: %x;", i, (unsigned)i * 77u);
        memcpy(buf, s, (size_t)len);
        n = (size_t)len;
        break;
    }
    case 3: {
        size_t avail;
        unsigned char *s = (unsigned char *)bw_get_span(w, 500, &avail);
        rc = s ? BW_OK : bw_error(w);
        if (s) {
            for (k = 0; k < 500; k++) s[k] = buf[k] = pat(k, (unsigned)i + 1);
            rc = bw_advance(w, 500);
            n = 500;
        }
        break;
    }
    case 4:
        rc = bw_put_uvarint(w, (uint64_t)i << 40);
        {
            uint64_t v = (uint64_t)i << 40;
            while (v >= 0x80) { buf[n++] = (unsigned char)(v | 0x80); v >>= 7; }
            buf[n++] = (unsigned char)v;
        }
        break;
    default:
        rc = bw_reserve(w, (size_t)i * 50);
        n = 0;
        break;
    }
    if (rc == BW_OK) {
        memcpy(ref + *ref_len, buf, n);
        *ref_len += n;
    }
    return rc;
}

#define STEPS 200
#define JOBS 3
#define REF_MAX (STEPS * 600)

/* Run JOBS writer jobs of STEPS steps each (released in between); returns
 * the number of failed steps. Within a job, once a step fails every later
 * step is refused with the same code. */
static int run(bw_pool *p, unsigned char *ref)
{
    bw_writer w;
    int job, i, failures = 0;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (job = 0; job < JOBS; job++) {
        size_t ref_len = 0;
        int first = -1;
        for (i = 0; i < STEPS; i++) {
            int rc = step(&w, i + job, ref, &ref_len);
            if (rc != BW_OK) {
                cr_assert_eq(rc, BW_ENOMEM, "step %d: %s", i, bw_strerror(rc));
                cr_assert_eq(bw_error(&w), BW_ENOMEM, "the error sticks");
                if (first < 0) first = i;
                failures++;
            }
            /* After every step the written bytes are exactly the reference. */
            cr_assert_eq(bw_len(&w), ref_len, "job %d step %d", job, i);
            cr_assert(ref_len == 0 || memcmp(bw_data(&w), ref, ref_len) == 0,
                      "job %d step %d", job, i);
        }
        if (first >= 0) cr_assert_eq(failures, STEPS - first, "job %d", job);
        bw_release(&w);
        if (first >= 0) break; /* the rest would only repeat the failure */
    }
    return failures;
}

/* Retention off (a 1-byte budget): every job allocates again, so the
 * workload makes many backing calls both below and above the threshold. */
static bw_pool *no_retention_pool(test_alloc *ta)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = THRESHOLD;
    o.max_retained_bytes = 1;
    o.flags = BW_POOL_NO_LARGE_RETENTION | BW_POOL_NO_LEARNED_GROWTH;
    o.min_first_block = 1;
    return mkpool(&o);
}

/* Learned size and large retention: later jobs start big and take kept
 * blocks, so failures land on those paths too. */
static bw_pool *steady_pool(test_alloc *ta)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = THRESHOLD;
    o.flags = BW_POOL_LEARN_SIZE | BW_POOL_NO_LEARNED_GROWTH;
    o.max_large_bytes = 1u << 20;
    o.max_large_blocks = 3;
    o.min_first_block = 1;
    return mkpool(&o);
}

/* Every 0.2 default (large retention, the learned jump, the first block's
 * minimum, decay) with the small threshold. */
static bw_pool *defaults_pool(test_alloc *ta)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = THRESHOLD;
    return mkpool(&o);
}

/* The workload on a fresh pool from make, its allocator's call n failing
 * (with sticky, every later one too; n = 0: none). */
typedef struct workload {
    int with_realloc;
    bw_pool *(*make)(test_alloc *);
    unsigned char *ref;
} workload;

/* Returns the backing calls the run made (n = 0) or, with a failure, 1:
 * each failure reaches the caller (run asserts what it leaves). */
static int run_failing(void *ctx, long n, int sticky)
{
    const workload *wl = (const workload *)ctx;
    test_alloc ta;
    bw_pool *p;
    int failures;
    long calls;
    ta_init(&ta, wl->with_realloc);
    atomic_store(&ta.fail_at, n);
    atomic_store(&ta.fail_sticky, sticky);
    p = wl->make(&ta);
    failures = run(p, wl->ref);
    calls = atomic_load(&ta.calls);
    if (n == 0) cr_assert_eq(failures, 0);
    else cr_assert_gt(failures, 0, "N=%ld: the failure reached the caller", n);
    ta_finish(&ta, p);
    return n == 0 ? (int)calls : 1;
}

static void fail_every_n_with(int with_realloc, int sticky, bw_pool *(*make)(test_alloc *),
                              long min_calls)
{
    workload wl;
    long total;
    wl.with_realloc = with_realloc;
    wl.make = make;
    wl.ref = (unsigned char *)malloc(REF_MAX);
    cr_assert_not_null(wl.ref);
    total = run_failing(&wl, 0, 0);
    cr_assert_geq(total, min_calls, "%ld calls: the workload grows through the classes and "
                  "past the threshold", total);
    /* Call N failing, for every N the failure-free run made. */
    cr_assert_eq(fail_each_call(run_failing, &wl, sticky, total + 1), total + 1);
    free(wl.ref);
}

static void fail_every_n(int with_realloc, int sticky)
{
    fail_every_n_with(with_realloc, sticky, no_retention_pool, 20);
}

Test(allocfail, fail_nth_call, .timeout = 120) { fail_every_n(1, 0); }
Test(allocfail, fail_nth_call_no_realloc, .timeout = 120) { fail_every_n(0, 0); }
Test(allocfail, fail_from_nth_on, .timeout = 120) { fail_every_n(1, 1); }
Test(allocfail, fail_nth_call_learned_and_large, .timeout = 120)
{
    fail_every_n_with(1, 0, steady_pool, 5);
    fail_every_n_with(0, 1, steady_pool, 5);
    fail_every_n_with(1, 0, defaults_pool, 5);
    fail_every_n_with(0, 1, defaults_pool, 5);
}

Test(allocfail, pool_rent_failure_changes_nothing)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_pool_stats before, after;
    size_t cap = 123;
    bw_pool_get_stats(p, &before);
    atomic_store(&ta.fail_at, 1);
    atomic_store(&ta.fail_sticky, 1);
    cr_expect_null(bw_pool_rent(p, 100, &cap));
    cr_expect_eq(cap, 0);
    cr_expect_null(bw_pool_rent(p, 5u << 20, &cap));
    bw_pool_get_stats(p, &after);
    cr_expect_eq(after.rents, before.rents);
    cr_expect_eq(after.backing_allocs, before.backing_allocs);
    cr_expect_eq(after.outstanding_bytes, 0);
    ta_finish(&ta, p);
}

Test(allocfail, init_failure_leaves_clean_writer)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer w;
    atomic_store(&ta.fail_at, 1);
    cr_expect_eq(bw_init(&w, p, 100), BW_ENOMEM);
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_eq(bw_error(&w), BW_ENOMEM, "recorded (a failed call records its error)");
    cr_expect_eq(bw_puts(&w, "refused"), BW_ENOMEM);
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "ok now"), BW_OK);
    bw_release(&w);
    ta_finish(&ta, p);
}

/* ======================================================================== */
/* Every kind of call in every mode                                         */
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

/* ======================================================================== */
/* A scripted stream of writes (streaming, segmented)                       */
/* ======================================================================== */

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

/* ======================================================================== */
/* References, patches, moves and a detach across writers of one pool       */
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
            static unsigned char tmp[40000];
            cr_assert(bl <= sizeof tmp);
            cr_assert_eq(bw_copy_out(&b, 0, tmp, bl), BW_OK);
            rc = bw_move(&a, &b);
            if (rc != BW_OK) { /* room for a's piece records */
                cr_assert_eq(rc, BW_ENOMEM);
                cr_assert_eq(bw_len(&b), bl, "a failed move leaves src as it was");
                failed++;
                bw_clear_error(&a);
                continue;
            }
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

/* The workload with backing call nth failing: 1 when a call failed. */
static int ref_move_failing(void *ctx, long nth, int sticky)
{
    env *e = env_new();
    int failed;
    (void)ctx;
    atomic_store(&e->ta.fail_at, nth);
    atomic_store(&e->ta.fail_sticky, sticky);
    failed = ref_move_workload(e);
    env_free(e); /* leaks nothing */
    return failed > 0;
}

Test(failinj_refs, references_moves_and_detach_at_every_call)
{
    env *e = env_new();
    long calls, sticky;
    cr_expect_eq(ref_move_workload(e), 0);
    calls = atomic_load(&e->ta.calls);
    env_free(e);
    cr_assert(calls > 10, "the workload reaches the allocator (%ld calls)", calls);
    for (sticky = 0; sticky < 2; sticky++)
        cr_expect_eq(fail_each_call(ref_move_failing, NULL, (int)sticky, calls + 2), calls + 1,
                     "every backing call, failing, reaches the caller");
}

/* ======================================================================== */
/* Reservations without the address space for them                         */
/* ======================================================================== */

/* A first job's move past the threshold asks the kernel for 16 x its block
 * of address space (mode_contig.c, bw__contig_rent); capped here (this
 * process's RLIMIT_AS: not where a sanitizer, valgrind or qemu-user owns
 * the address space) so that the reservation fails, the job goes on in a
 * block of its own size, and where even that fails, the write fails
 * whole, and after bw_clear_error the job finishes with the same bytes. */
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && !defined(BW_VALGRIND) && \
    !defined(BW_TEST_EMULATED)
#  if defined(__has_feature)
#    if !__has_feature(address_sanitizer)
#      define RESERVE_RLIMIT_TEST 1
#    endif
#  else
#    define RESERVE_RLIMIT_TEST 1
#  endif
#endif

#ifdef RESERVE_RLIMIT_TEST
/* Cap the address space at what is mapped now plus `more`. */
static void cap_address_space(struct rlimit *old, size_t more)
{
    struct rlimit cap;
    unsigned long vm_pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f != NULL);
    cr_assert_eq(fscanf(f, "%lu", &vm_pages), 1);
    fclose(f);
    cr_assert_eq(getrlimit(RLIMIT_AS, old), 0);
    cap = *old;
    cap.rlim_cur = (rlim_t)vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)more;
    cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0);
}

static int write_pattern(bw_writer *w, size_t from, size_t to, unsigned seed)
{
    unsigned char buf[8192];
    size_t i, n;
    int rc = BW_OK;
    for (; from < to && rc == BW_OK; from += n) {
        n = to - from < sizeof buf ? to - from : sizeof buf;
        for (i = 0; i < n; i++) buf[i] = pat(from + i, seed);
        rc = bw_write(w, buf, n);
    }
    return rc;
}
#endif

Test(allocfail, a_reservation_without_address_space_falls_back_to_its_block)
{
#ifdef RESERVE_RLIMIT_TEST
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    struct rlimit old;
    size_t i, bad = 0, full;
    int rc;
    memset(&o, 0, sizeof o); /* the libc allocator: blocks past 2 MiB are mappings */
    p = mkpool(&o);
    /* Room for the 2, 4, 8 and 16 MiB blocks of a remapped climb (a
     * remap maps the new block and 2 MiB for alignment while the old one
     * is there; 30 MiB was too little here), not for the 32 MiB
     * reservation (a 34 MiB mmap with its alignment). */
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cap_address_space(&old, (size_t)33 << 20);
    rc = write_pattern(&w, 0, (size_t)10 << 20, 31);
    setrlimit(RLIMIT_AS, &old);
    cr_expect_eq(rc, BW_OK);
    cr_assert_eq(bw_len(&w), (size_t)10 << 20);
    for (i = 0; i < bw_len(&w); i++) bad += bw_data(&w)[i] != pat(i, 31);
    cr_expect_eq(bad, 0, "%zu bytes differ", bad);
    bw_release(&w);
    cr_expect_eq(outstanding(p), 0);
    /* No room even for the first mapped block (2 MiB, once the climb's
     * last malloc block is full: 128 KiB, or 256 KiB in a pool that does
     * not stop there, BW_CHECKED): the write fails whole. */
    bw_pool_trim(p);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(write_pattern(&w, 0, (size_t)128 << 10, 32), BW_OK);
    full = bw_capacity(&w);
    cr_assert_eq(write_pattern(&w, (size_t)128 << 10, full, 32), BW_OK);
    cap_address_space(&old, (size_t)1 << 20);
    rc = write_pattern(&w, full, full + ((size_t)44 << 10), 32);
    setrlimit(RLIMIT_AS, &old);
    cr_expect_eq(rc, BW_ENOMEM);
    cr_expect_eq(bw_len(&w), full, "the failed write kept nothing");
    bw_clear_error(&w);
    cr_assert_eq(write_pattern(&w, full, (size_t)5 << 20, 32), BW_OK);
    for (i = 0; i < bw_len(&w); i++) bad += bw_data(&w)[i] != pat(i, 32);
    cr_expect_eq(bad, 0, "%zu bytes differ", bad);
    bw_release(&w);
    cr_expect_eq(outstanding(p), 0);
    bw_pool_destroy(p);
#endif
}

/* Every rent of a chunk of piece records failing in its turn: 300 records
 * of a header written and a body linked, 600 pieces, take six chunks (15
 * records in the first, each next one about twice the last: 491 in five;
 * on 32-bit, 27 and five), each rented at a record's link. The backing
 * allocator fails at each next call in turn; a failed link or write changes nothing (no piece, no done, the length as
 * it was), and the same call succeeds once the allocator heals. */
Test(failinj_refs, chunk_of_records_rent_failing)
{
    static unsigned char body[300][20];
    unsigned char *all;
    env *e = env_new();
    bw_writer w;
    donec dc[300];
    size_t i, len = 0, n, pieces = 0;
    int failed_links = 0, rc;
    memset(dc, 0, sizeof dc);
    cr_assert_eq(bw_init_chain(&w, e->pool), BW_OK);
    for (i = 0; i < 300; i++) {
        fill(body[i], sizeof body[i], (unsigned)i);
        atomic_store(&e->ta.fail_at, atomic_load(&e->ta.calls) + 1); /* the next call fails */
        while ((rc = bw_write(&w, "head", 4)) != BW_OK) {
            cr_assert_eq(rc, BW_ENOMEM);
            cr_expect_eq(bw_len(&w), len, "a failed write adds nothing");
            bw_clear_error(&w);
            atomic_store(&e->ta.fail_at, 0);
        }
        len += 4;
        atomic_store(&e->ta.fail_at, atomic_load(&e->ta.calls) + 1);
        while ((rc = bw_append_ref(&w, body[i], sizeof body[i], on_done, &dc[i])) != BW_OK) {
            cr_assert_eq(rc, BW_ENOMEM);
            cr_expect_eq(bw_len(&w), len, "a failed link adds nothing");
            cr_expect_eq(bw_iovec(&w, NULL, 0), pieces + 1, "nor a piece");
            cr_expect_eq(dc[i].calls, 0, "nor calls done");
            failed_links++;
            bw_clear_error(&w);
            atomic_store(&e->ta.fail_at, 0);
        }
        len += sizeof body[i];
        pieces += 2;
        atomic_store(&e->ta.fail_at, 0);
    }
    cr_expect(failed_links == (sizeof(void *) == 8 ? 6 : 5), "each chunk's rent failed once");
    all = held_by_iovec(&w, &n);
    cr_assert_eq(n, len);
    for (i = 0; i < 300; i++) {
        cr_expect(memcmp(all + i * 24, "head", 4) == 0);
        cr_expect(memcmp(all + i * 24 + 4, body[i], 20) == 0, "record %zu", i);
    }
    free(all);
    bw_release(&w);
    for (i = 0; i < 300; i++) cr_expect_eq(dc[i].calls, 1);
    env_free(e);
}
