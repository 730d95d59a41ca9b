/* SPDX-License-Identifier: MIT */
/* test_allocfail.c - allocation failure injected through the allocator hook.
 *
 * A workload that crosses the threshold is run once to count the backing
 * allocator calls; then for every N it is run again with call N failing
 * (and, separately, call N and every later one failing). Each failure must
 * return BW_ENOMEM, leave every written byte identical, stick, and leak
 * nothing once the writer is released and the pool destroyed. */
#include "harness.h"

#include <stdio.h>

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
