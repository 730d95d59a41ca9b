/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* setenv */
/* test_pool.c - the size-class pool: options, classes, reuse, bounds,
 * stats, trim, zeroing, checked mode; and, last, the public pool calls at
 * their edges, each test guarding a defect that was fixed: allocator hooks
 * that call the pool back, bw_pool_class_size against bw_pool_rent, the
 * shared pool refusing destruction, the learned_size stat, and
 * BW_POOL_ZERO_ON_RETURN on the way to the allocator. */
#include "harness.h"

#include <signal.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

Test(pool, create_defaults_and_class_sizes)
{
    bw_pool *p = NULL;
    cr_assert_eq(bw_pool_create(&p, NULL), BW_OK);
    cr_assert_not_null(p);
    cr_expect_eq(bw_pool_class_size(p, 0), 16);
    cr_expect_eq(bw_pool_class_size(p, 1), 16);
    cr_expect_eq(bw_pool_class_size(p, 16), 16);
    cr_expect_eq(bw_pool_class_size(p, 17), 32);
    cr_expect_eq(bw_pool_class_size(p, 1000), 1024);
    cr_expect_eq(bw_pool_class_size(p, 1024), 1024);
    cr_expect_eq(bw_pool_class_size(p, 1025), 2048);
    cr_expect_eq(bw_pool_class_size(p, (1u << 20) - 1), 1u << 20);
    cr_expect_eq(bw_pool_class_size(p, 1u << 20), 1u << 20);
    /* Above the threshold: exactly what was asked for. */
    cr_expect_eq(bw_pool_class_size(p, (1u << 20) + 1), (1u << 20) + 1);
    cr_expect_eq(bw_pool_class_size(NULL, 100), 0);
    bw_pool_destroy(p);
}

Test(pool, every_class_boundary)
{
    bw_pool *p = NULL;
    size_t k;
    cr_assert_eq(bw_pool_create(&p, NULL), BW_OK);
    for (k = 16; k <= (1u << 20); k *= 2) {
        cr_expect_eq(bw_pool_class_size(p, k - 1), k < 32 ? 16 : k);
        cr_expect_eq(bw_pool_class_size(p, k), k);
        cr_expect_eq(bw_pool_class_size(p, k + 1), k == (1u << 20) ? k + 1 : 2 * k);
    }
    bw_pool_destroy(p);
}

Test(pool, bad_options_are_einval)
{
    bw_pool *p = (bw_pool *)0x1;
    bw_pool_options o;
    bw_allocator no_free = {ta_alloc, NULL, NULL, NULL};

    cr_expect_eq(bw_pool_create(NULL, NULL), BW_EINVAL);
    memset(&o, 0, sizeof o);
    o.max_pooled_size = 3000; /* not a power of two */
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    cr_expect_null(p);
    memset(&o, 0, sizeof o);
    o.min_block_size = 24;
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    o.min_block_size = 8; /* below 16 */
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    o.min_block_size = 4096;
    o.max_pooled_size = 2048; /* smallest class above the threshold */
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    memset(&o, 0, sizeof o);
    o.allocator = &no_free;
    cr_expect_eq(bw_pool_create(&p, &o), BW_EINVAL);
    cr_expect_null(p);
}

/* The pool keeps its options as it resolved them, and hands them back. */
Test(pool, options_read_back_resolved)
{
    bw_pool *p = NULL, *q = NULL;
    bw_pool_options o, r, r2;
    memset(&o, 0, sizeof o);
    cr_assert_eq(bw_pool_create(&p, NULL), BW_OK);
    bw_pool_get_options(p, &r);
    cr_expect_eq(r.max_pooled_size, (size_t)1 << 20);
    cr_expect_eq(r.min_block_size, 16);
    cr_expect_eq(r.max_blocks_per_class, 32);
    cr_expect_eq(r.max_retained_bytes, (size_t)64 << 20);
    cr_expect_eq(r.max_large_bytes, (size_t)80 << 20);
    cr_expect_eq(r.max_large_blocks, 8);
    cr_expect_eq(r.max_learned_size, (size_t)64 << 20);
    cr_expect_eq(r.decay_ms, 10000u);
    cr_expect_eq(r.min_first_block, 512);
    cr_expect_eq(r.jump_floor, (size_t)16 << 10);
    cr_expect_eq(r.chain_block_size, 4096);
    cr_expect_eq(r.flags, 0u);
    cr_assert_not_null(r.allocator);
    cr_expect_eq(r.allocator->alloc, bw_allocator_libc()->alloc);
    bw_pool_destroy(p);

    /* Set ones stay, rounded as writers get them; the copy makes the same pool. */
    o.max_pooled_size = 4096;
    o.min_block_size = 64;
    o.min_first_block = 100;     /* its class: 128 */
    o.chain_block_size = 1000;   /* its class: 1024 */
    o.flags = BW_POOL_LEARN_SIZE | BW_POOL_NO_THREAD_CACHE;
    o.decay_ms = BW_DECAY_NEVER;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    bw_pool_get_options(p, &r);
    cr_expect_eq(r.max_pooled_size, 4096);
    cr_expect_eq(r.min_block_size, 64);
    cr_expect_eq(r.min_first_block, 128);
    cr_expect_eq(r.chain_block_size, 1024);
    cr_expect_eq(r.flags, BW_POOL_LEARN_SIZE | BW_POOL_NO_THREAD_CACHE);
    cr_expect_eq(r.decay_ms, BW_DECAY_NEVER);
    cr_expect_eq(r.jump_floor, 4096); /* the threshold, below the default floor */
    cr_assert_eq(bw_pool_create(&q, &r), BW_OK);
    bw_pool_get_options(q, &r2);
    r.allocator = r2.allocator = NULL; /* each pool's own copy of the hook */
    cr_expect_eq(memcmp(&r, &r2, sizeof r), 0);
    bw_pool_destroy(q);
    bw_pool_destroy(p);

    /* NULL: the shared pool's; a NULL out is a no-op. */
    bw_pool_get_options(NULL, &r);
    cr_expect_eq(r.max_pooled_size, (size_t)1 << 20);
    bw_pool_get_options(NULL, NULL);
}

Test(pool, custom_classes)
{
    bw_pool *p = NULL;
    bw_pool_options o;
    size_t cap;
    void *b;
    memset(&o, 0, sizeof o);
    o.min_block_size = 64;
    o.max_pooled_size = 4096;
    p = mkpool(&o);
    cr_expect_eq(bw_pool_class_size(p, 1), 64);
    cr_expect_eq(bw_pool_class_size(p, 4096), 4096);
    cr_expect_eq(bw_pool_class_size(p, 4097), 4097);
    b = bw_pool_rent(p, 0, &cap);
    cr_assert_not_null(b);
    cr_expect_eq(cap, 64);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    /* 16 is a valid class only in pools whose smallest class is 16. */
    b = bw_pool_rent(p, 10, &cap);
    cr_expect_eq(bw_pool_return(p, b, 16), BW_EINVAL);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    bw_pool_destroy(p);
}

Test(pool, rent_gives_class_and_alignment)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    size_t sizes[] = {0, 1, 15, 16, 17, 100, 4095, 4096, 65537, 1u << 20, (1u << 20) + 1, 3u << 20};
    size_t i;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t cap = 0;
        unsigned char *b = (unsigned char *)bw_pool_rent(p, sizes[i], &cap);
        cr_assert_not_null(b);
        cr_expect_eq(cap, bw_pool_class_size(p, sizes[i]), "size %zu", sizes[i]);
        cr_expect_geq(cap, sizes[i]);
        cr_expect_eq((uintptr_t)b % alignof(max_align_t), 0);
        memset(b, 0xab, cap); /* the whole capacity is usable */
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    }
    ta_finish(&ta, p);
}

Test(pool, rent_bad_arguments)
{
    bw_pool *p = NULL;
    size_t cap = 99;
    cr_assert_eq(bw_pool_create(&p, NULL), BW_OK);
    cr_expect_null(bw_pool_rent(p, 10, NULL));
    cr_expect_null(bw_pool_rent(NULL, 10, &cap));
    cr_expect_eq(cap, 0);
    cap = 99;
    cr_expect_null(bw_pool_rent(p, (size_t)PTRDIFF_MAX + 1, &cap));
    cr_expect_eq(cap, 0);
    cr_expect_null(bw_pool_rent(p, SIZE_MAX, &cap));
    cr_expect_eq(bw_pool_return(p, NULL, 16), BW_OK);
    cr_expect_eq(bw_pool_return(NULL, NULL, 16), BW_EINVAL);
    bw_pool_destroy(p);
    bw_pool_destroy(NULL); /* no-op */
    bw_pool_trim(NULL);
}

Test(pool, wrong_capacity_is_refused_and_block_kept_by_caller)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    size_t cap;
    void *b;
    b = bw_pool_rent(p, 100, &cap);
    cr_assert_eq(cap, 128);
    cr_expect_eq(bw_pool_return(p, b, 100), BW_EINVAL); /* not a class */
    cr_expect_eq(bw_pool_return(p, b, 8), BW_EINVAL);   /* below the smallest */
    cr_expect_eq(bw_pool_return(p, b, (size_t)PTRDIFF_MAX + 1), BW_EINVAL);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    ta_finish(&ta, p);
}

/* The pool's counters: rents, hits, returns, backing allocs and frees, then
 * the outstanding and retained bytes, after the step `after`. */
static void expect_counts(bw_pool *p, const char *after, uint64_t rents, uint64_t hits,
                          uint64_t returns, uint64_t allocs, uint64_t frees,
                          size_t outstanding, size_t retained)
{
    bw_pool_stats st = stats_of(p);
    cr_expect_eq(st.rents, rents, "rents after %s", after);
    cr_expect_eq(st.hits, hits, "hits after %s", after);
    cr_expect_eq(st.returns, returns, "returns after %s", after);
    cr_expect_eq(st.backing_allocs, allocs, "backing allocs after %s", after);
    cr_expect_eq(st.backing_frees, frees, "backing frees after %s", after);
    cr_expect_eq(st.outstanding_bytes, outstanding, "outstanding bytes after %s", after);
    cr_expect_eq(st.retained_bytes, retained, "retained bytes after %s", after);
}

Test(pool, reuse_counts_hits_and_stats)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_pool_stats st;
    size_t cap, cap2;
    void *a, *b;
    a = bw_pool_rent(p, 1000, &cap);
    expect_counts(p, "the first rent", 1, 0, 0, 1, 0, 1024, 0);
    cr_expect_eq(bw_pool_return(p, a, cap), BW_OK);
    expect_counts(p, "its return", 1, 0, 1, 1, 0, 0, 1024);
    b = bw_pool_rent(p, 600, &cap2);
    cr_expect_eq(b, a, "the retained block is served again");
    cr_expect_eq(cap2, 1024);
    expect_counts(p, "the second rent", 2, 1, 1, 1, 0, 1024, 0);
    /* Above the threshold: backing allocator both ways, never retained. */
    a = bw_pool_rent(p, 2u << 20, &cap);
    cr_expect_eq(cap, 2u << 20);
    cr_expect_eq(bw_pool_return(p, a, cap), BW_OK);
    expect_counts(p, "2 MiB rented and returned", 3, 1, 2, 2, 1, 1024, 0);
    cr_expect_eq(bw_pool_return(p, b, cap2), BW_OK);
    bw_pool_get_stats(NULL, &st);
    cr_expect_eq(st.rents, 0);
    ta_finish(&ta, p);
}

static void bounds_case(unsigned flags)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool_stats st;
    void *blocks[100];
    size_t cap = 0;
    int i;
    o.max_blocks_per_class = 5;
    o.max_retained_bytes = 1u << 20;
    o.flags = flags;
    p = mkpool(&o);
    for (i = 0; i < 100; i++) blocks[i] = bw_pool_rent(p, 64, &cap);
    for (i = 0; i < 100; i++) cr_assert_eq(bw_pool_return(p, blocks[i], cap), BW_OK);
    bw_pool_get_stats(p, &st);
    /* At most 5 in the shared level, plus the thread cache's slots. */
    cr_expect_leq(st.retained_bytes,
                  (5 + ((flags & BW_POOL_NO_THREAD_CACHE) ? 0 : BW_THREAD_CACHE_SLOTS)) * 64);
    cr_expect_geq(st.retained_bytes, 5 * 64);
    cr_expect_eq((long)st.backing_frees, 100 - (long)(st.retained_bytes / 64));
    /* The byte bound: 1 MiB in total, thread cache included. */
    for (i = 0; i < 10; i++) blocks[i] = bw_pool_rent(p, 256u << 10, &cap);
    for (i = 0; i < 10; i++) bw_pool_return(p, blocks[i], cap);
    bw_pool_get_stats(p, &st);
    cr_expect_leq(st.retained_bytes, 1u << 20);
    ta_finish(&ta, p);
}

Test(pool, retention_is_bounded) { bounds_case(0); }
Test(pool, retention_is_bounded_without_thread_cache) { bounds_case(BW_POOL_NO_THREAD_CACHE); }

Test(pool, trim_gives_everything_back)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_pool_stats st;
    void *b[20];
    size_t cap[20];
    int i;
    for (i = 0; i < 20; i++) b[i] = bw_pool_rent(p, (size_t)16 << i, &cap[i]);
    for (i = 0; i < 20; i++) bw_pool_return(p, b[i], cap[i]);
    bw_pool_get_stats(p, &st);
    cr_expect_gt(st.retained_bytes, 0);
    bw_pool_trim(p);
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.retained_bytes, 0);
    cr_expect_eq(atomic_load(&ta.live_blocks), 0);
    cr_expect_eq(st.backing_allocs, st.backing_frees);
    /* Still usable after a trim. */
    b[0] = bw_pool_rent(p, 10, &cap[0]);
    cr_assert_not_null(b[0]);
    bw_pool_return(p, b[0], cap[0]);
    ta_finish(&ta, p);
}

Test(pool, zero_on_return)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, BW_POOL_ZERO_ON_RETURN);
    size_t cap, cap2, i;
    unsigned char *b, *c;
    int bad = 0;
    b = (unsigned char *)bw_pool_rent(p, 4000, &cap);
    memset(b, 0x5a, cap);
    bw_pool_return(p, b, cap);
    c = (unsigned char *)bw_pool_rent(p, 4000, &cap2);
    cr_assert_eq(c, b);
    for (i = 0; i < cap2; i++) bad += c[i] != 0;
    cr_expect_eq(bad, 0, "%d bytes not zeroed", bad);
    bw_pool_return(p, c, cap2);
    ta_finish(&ta, p);
}

Test(pool, destroy_frees_retained_blocks)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    void *b[64];
    size_t cap[64];
    int i;
    for (i = 0; i < 64; i++) b[i] = bw_pool_rent(p, (size_t)(i * 977) % 300000, &cap[i]);
    for (i = 0; i < 64; i++) bw_pool_return(p, b[i], cap[i]);
    cr_expect_gt(atomic_load(&ta.live_blocks), 0);
    ta_finish(&ta, p);
}

Test(pool, shared_pool_is_one_pool)
{
    bw_pool *a = bw_pool_shared(), *b = bw_pool_shared();
    size_t cap;
    void *blk;
    cr_assert_not_null(a);
    cr_expect_eq(a, b);
    cr_expect_eq(bw_pool_class_size(a, 100), 128);
    blk = bw_pool_rent(a, 100, &cap);
    cr_assert_not_null(blk);
    cr_expect_eq(bw_pool_return(a, blk, cap), BW_OK);
}

Test(pool, libc_allocator_hook)
{
    const bw_allocator *a = bw_allocator_libc();
    void *b;
    cr_assert_not_null(a);
    b = a->alloc(a->ctx, 100);
    cr_assert_not_null(b);
    b = a->realloc(a->ctx, b, 100, 5000);
    cr_assert_not_null(b);
    a->free(a->ctx, b, 5000);
#ifdef BW_HAVE_JEMALLOC
    cr_expect_not_null(bw_allocator_jemalloc());
#else
    cr_expect_null(bw_allocator_jemalloc());
#endif
}

/* Checked mode ----------------------------------------------------------- */

static int reports;
static char last_report[200];

static void record_report(void *ctx, const char *what, const void *block, size_t cap)
{
    (void)ctx;
    (void)block;
    (void)cap;
    reports++;
    strncpy(last_report, what, sizeof last_report - 1);
}

static bw_pool *checked_pool(test_alloc *ta)
{
    reports = 0;
    last_report[0] = 0;
    bw_set_report_hook(record_report, NULL);
    ta_init(ta, 1);
    return ta_pool(ta, 0, BW_POOL_CHECKED);
}

/* The n-th report so far, and it names `word`. */
static void expect_report(int n, const char *word)
{
    cr_expect_eq(reports, n);
    cr_expect(strstr(last_report, word) != NULL, "%s", last_report);
}

/* Destroy a checked_pool, check the allocator balances, and unhook. */
static void checked_done(test_alloc *ta, bw_pool *p)
{
    ta_finish(ta, p);
    bw_set_report_hook(NULL, NULL);
}

Test(checked, double_return_is_reported_and_refused)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    size_t cap, c1, c2;
    void *b = bw_pool_rent(p, 100, &cap), *x, *y;
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    cr_expect_eq(reports, 0);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_EINVAL);
    expect_report(1, "bw_pool_return");
    cr_expect(strstr(last_report, "twice") != NULL, "%s", last_report);
    /* The block was not put in twice: two rents give two blocks. */
    x = bw_pool_rent(p, 100, &c1);
    y = bw_pool_rent(p, 100, &c2);
    cr_expect_neq(x, y);
    bw_pool_return(p, x, c1);
    bw_pool_return(p, y, c2);
    checked_done(&ta, p);
}

Test(checked, foreign_block_is_reported)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    static max_align_t foreign[8];
    cr_expect_eq(bw_pool_return(p, foreign, 64), BW_EINVAL);
    expect_report(1, "foreign");
    checked_done(&ta, p);
}

Test(checked, wrong_capacity_is_reported)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    size_t cap;
    void *b = bw_pool_rent(p, 100, &cap), *big;
    cr_expect_eq(bw_pool_return(p, b, 256), BW_EINVAL); /* a class, but not this block's */
    expect_report(1, "capacity");
    cr_expect_eq(bw_pool_return(p, b, 100), BW_EINVAL); /* not a class at all */
    cr_expect_eq(reports, 2);
    big = bw_pool_rent(p, 3u << 20, &cap);
    cr_expect_eq(bw_pool_return(p, big, cap + 1), BW_EINVAL);
    cr_expect_eq(reports, 3);
    cr_expect_eq(bw_pool_return(p, big, cap), BW_OK);
    cr_expect_eq(bw_pool_return(p, b, 128), BW_OK);
    cr_expect_eq(reports, 3);
    checked_done(&ta, p);
}

Test(checked, still_rented_at_destroy_is_reported)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    size_t cap;
    void *b = bw_pool_rent(p, 100, &cap);
    bw_pool_destroy(p);
    expect_report(1, "still rented");
    ta.hook.free(ta.hook.ctx, b, cap); /* the caller's to free */
    bw_set_report_hook(NULL, NULL);
}

Test(checked, quiet_on_correct_use)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    bw_writer w;
    int i;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (i = 0; i < 3; i++) {
        int k;
        for (k = 0; k < 1000; k++) bw_printf(&w, "line %d of round %d\n", k, i);
        bw_clear(&w);
    }
    bw_release(&w);
    cr_expect_eq(reports, 0, "%s", last_report);
    checked_done(&ta, p);
}

/* The default hook prints the report on stderr and aborts. It runs in a
 * child whose stderr is a pipe, so the expected report is checked here
 * instead of showing in the test run's output as if something failed. */
Test(checked, default_hook_aborts)
{
    int fds[2], status = 0;
    char msg[256] = {0};
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        bw_pool_options o;
        bw_pool *p = NULL;
        size_t cap;
        void *b;
        dup2(fds[1], 2);
        memset(&o, 0, sizeof o);
        o.flags = BW_POOL_CHECKED;
        bw_set_report_hook(NULL, NULL);
        if (bw_pool_create(&p, &o) != BW_OK) _exit(2);
        b = bw_pool_rent(p, 100, &cap);
        bw_pool_return(p, b, cap);
        bw_pool_return(p, b, cap); /* reported on stderr, then abort() */
        _exit(3);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x", status);
    cr_assert_gt(n, 0);
    cr_assert(strstr(msg, "bw_pool_return: block returned twice") != NULL, "stderr: %s", msg);
}

Test(checked, write_past_the_end_is_caught_at_return)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    size_t cap;
    unsigned char *b = (unsigned char *)bw_pool_rent(p, 100, &cap);
    cr_assert_eq(cap, 128);
    memset(b, 'x', cap); /* the whole capacity is fine */
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    cr_expect_eq(reports, 0, "%s", last_report);
    b = (unsigned char *)bw_pool_rent(p, 100, &cap);
    b[cap] = 0; /* one byte past the end: into the canary */
    cr_expect_eq(bw_pool_return(p, b, cap), BW_EINVAL);
    expect_report(1, "past the end");
    /* Refused: still the caller's. Mend it and give it back. */
    {
        unsigned char fresh[128 + 16];
        size_t c2;
        unsigned char *probe = (unsigned char *)bw_pool_rent(p, 4000, &c2); /* any block */
        memcpy(fresh, probe + c2, 16);  /* an intact canary */
        memcpy(b + cap, fresh, 16);
        bw_pool_return(p, probe, c2);
    }
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    checked_done(&ta, p);
}

Test(checked, double_return_then_no_block_is_handed_out_twice)
{
    test_alloc ta;
    bw_pool *p = checked_pool(&ta);
    static void *held[1000];
    size_t cap, i, j;
    void *b = bw_pool_rent(p, 64, &cap);
    bw_pool_return(p, b, cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_EINVAL);
    cr_expect_eq(reports, 1);
    for (i = 0; i < 1000; i++) held[i] = bw_pool_rent(p, 64, &cap);
    /* sorting would be faster; 1000^2/2 compares is still instant */
    for (i = 0; i < 1000; i++)
        for (j = i + 1; j < 1000; j++) cr_assert_neq(held[i], held[j], "block %zu handed out twice", i);
    for (i = 0; i < 1000; i++) bw_pool_return(p, held[i], cap);
    cr_expect_eq(reports, 1);
    checked_done(&ta, p);
}

/* An allocator that looks at the bytes it is given back. */
static int all_dd;
static void dd_free(void *ctx, void *block, size_t size)
{
    size_t i;
    all_dd = 1;
    for (i = 0; i < size - 16; i++) /* the last 16 bytes are the canary */
        if (((unsigned char *)block)[i] != BW_FILL_RETURNED) all_dd = 0;
    ta_free(ctx, block, size);
}

Test(checked, fill_patterns)
{
    test_alloc ta;
    bw_pool *p = NULL;
    bw_pool_options o;
    size_t cap, i, bad = 0;
    unsigned char *b;
    reports = 0;
    bw_set_report_hook(record_report, NULL);
    ta_init(&ta, 1);
    ta.hook.free = dd_free;
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_CHECKED | BW_POOL_FILL;
    o.max_retained_bytes = 1; /* nothing kept: every return reaches dd_free */
    o.allocator = &ta.hook;
    p = mkpool(&o);
    b = (unsigned char *)bw_pool_rent(p, 300, &cap);
    for (i = 0; i < cap; i++) bad += b[i] != BW_FILL_RENTED;
    cr_expect_eq(bad, 0, "rented bytes are 0xA5");
    memset(b, 0, cap);
    all_dd = 0;
    cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    cr_expect_eq(all_dd, 1, "returned bytes are 0xDD");
    cr_expect_eq(reports, 0);
    checked_done(&ta, p);
}

Test(checked, switched_on_by_environment)
{
    bw_pool *p = NULL;
    size_t cap;
    void *b;
    reports = 0;
    bw_set_report_hook(record_report, NULL);
    setenv("BW_CHECKED", "1", 1); /* each test runs in its own process */
    cr_assert_eq(bw_pool_create(&p, NULL), BW_OK);
    b = bw_pool_rent(p, 10, &cap);
    bw_pool_return(p, b, cap);
    cr_expect_eq(bw_pool_return(p, b, cap), BW_EINVAL);
    cr_expect_eq(reports, 1);
    bw_pool_destroy(p);
    bw_set_report_hook(NULL, NULL);
}

Test(bypass, every_rent_is_a_real_allocation)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, BW_POOL_BYPASS);
    bw_pool_stats st;
    bw_writer w;
    size_t cap;
    void *b;
    int i;
    cr_expect_eq(bw_pool_class_size(p, 100), 100);
    for (i = 0; i < 10; i++) {
        b = bw_pool_rent(p, 100, &cap);
        cr_assert_eq(cap, 100, "exactly what was asked for");
        cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
    }
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.backing_allocs, 10);
    cr_expect_eq(st.backing_frees, 10);
    cr_expect_eq(st.hits, 0);
    cr_expect_eq(st.retained_bytes, 0);
    /* The writer works the same way over it. */
    bw_init(&w, p, 0);
    for (i = 0; i < 10000; i++) bw_put_u32be(&w, (uint32_t)i);
    cr_expect_eq(bw_len(&w), 40000);
    cr_expect_eq(bw_capacity(&w), 65536);
    cr_expect_eq(bw_data(&w)[39999], (unsigned char)9999);
    bw_release(&w);
    cr_expect_eq(atomic_load(&ta.live_blocks), 0, "nothing retained");
    ta_finish(&ta, p);
}

Test(bypass, switched_on_by_environment)
{
    bw_pool *p = NULL;
    setenv("BW_BYPASS", "1", 1);
    cr_assert_eq(bw_pool_create(&p, NULL), BW_OK);
    cr_expect_eq(bw_pool_class_size(p, 100), 100);
    bw_pool_destroy(p);
}

/* ------------------------------------------------------------------ */
/* The public pool calls at their edges                                 */
/* ------------------------------------------------------------------ */

/* A free hook that uses the same pool: hooks must never run under one of
 * the pool's locks. What broke (0.1): trim and destroy freed blocks under
 * the class lock, and the hook's rent deadlocked on it. */
typedef struct reent {
    test_alloc ta; /* first: ta_alloc takes the same ctx */
    bw_pool *p;
    size_t when; /* re-enter when a block of this size is freed */
    size_t use;  /* rent and return a block of this size */
    _Atomic int depth;
    _Atomic long reentries;
} reent;

static void reent_free(void *ctx, void *block, size_t size)
{
    reent *r = (reent *)ctx;
    if (r->p != NULL && size == r->when) {
        if (atomic_fetch_add(&r->depth, 1) == 0) {
            size_t cap;
            void *b = bw_pool_rent(r->p, r->use, &cap);
            if (b != NULL) {
                memset(b, 0x11, cap);
                (void)bw_pool_return(r->p, b, cap);
                atomic_fetch_add(&r->reentries, 1);
            }
        }
        atomic_fetch_sub(&r->depth, 1);
    }
    ta_free(&r->ta, block, size);
}

Test(pool_api, free_hook_that_uses_the_same_pool_does_not_deadlock, .timeout = 20)
{
    reent r;
    bw_pool_options o;
    bw_pool_stats s;
    void *b[40];
    size_t cap[40], i, nb = 40;
    memset(&r, 0, sizeof r);
    ta_init(&r.ta, 1);
    r.ta.hook.free = reent_free;
    o = opts_for(&r.ta);
    o.flags = BW_POOL_NO_THREAD_CACHE;
    o.max_blocks_per_class = 32;
    o.decay_ms = BW_DECAY_NEVER;
    r.p = mkpool(&o);
    r.when = 64;
    r.use = 64;
    /* Fill the shared level of the 64-byte class and overflow it. */
    for (i = 0; i < nb; i++) b[i] = rent_ok(r.p, 64, &cap[i]);
    for (i = 0; i < nb; i++) cr_expect_eq(bw_pool_return(r.p, b[i], cap[i]), BW_OK);
    cr_expect_eq(stats_of(r.p).retained_bytes, 32 * 64);
    cr_expect_gt(atomic_load(&r.reentries), 0);
    /* Trim frees the class: the hook rents and returns a block of it. */
    bw_pool_trim(r.p);
    s = stats_of(r.p);
    cr_expect_leq(s.retained_bytes, 64, "what the hook returned during trim, at most");
    cr_expect_geq(atomic_load(&r.reentries), (long)nb, "8 on overflow, 32 in trim");
    /* Destroy: fill again; the hook now uses a larger class (which it does
     * not re-enter for, so destroy can finish with nothing left). */
    for (i = 0; i < nb; i++) b[i] = rent_ok(r.p, 64, &cap[i]);
    for (i = 0; i < nb; i++) cr_expect_eq(bw_pool_return(r.p, b[i], cap[i]), BW_OK);
    r.use = 1024;
    bw_pool_destroy(r.p);
    r.p = NULL;
    cr_expect_eq(atomic_load(&r.ta.live_blocks), 0, "blocks leaked: %ld",
                 atomic_load(&r.ta.live_blocks));
    cr_expect_eq(atomic_load(&r.ta.live_bytes), 0);
    cr_expect_eq(atomic_load(&r.ta.size_errors), 0);
}

/* What broke (0.1): bw_pool_class_size disagreed with what bw_pool_rent
 * gives for 0 on a bypass pool and for sizes above PTRDIFF_MAX. */
Test(pool_api, class_size_agrees_with_rent_for_0_on_bypass_and_above_ptrdiff_max)
{
    test_alloc ta;
    bw_pool *p;
    size_t cap, huge[2] = { (size_t)PTRDIFF_MAX + 1, SIZE_MAX }, k;
    void *b;
    unsigned flags[2] = { BW_POOL_BYPASS, 0 };
    unsigned f;
    for (f = 0; f < 2; f++) {
        long calls;
        p = fresh_learn_pool(&ta, flags[f], 0);
        if (flags[f] == BW_POOL_BYPASS) {
            cr_expect_eq(bw_pool_class_size(p, 0), 1);
            b = rent_ok(p, 0, &cap);
            cr_expect_eq(cap, 1);
            cr_expect_eq(cap, bw_pool_class_size(p, 0));
            cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
            cr_expect_eq(bw_pool_class_size(p, 100), 100);
        }
        for (k = 0; k < 2; k++) {
            cr_expect_eq(bw_pool_class_size(p, huge[k]), 0, "flags 0x%x size %zu", flags[f],
                         huge[k]);
            calls = atomic_load(&ta.calls);
            cap = 12345;
            cr_expect_null(bw_pool_rent(p, huge[k], &cap));
            cr_expect_eq(cap, 0);
            cr_expect_eq(atomic_load(&ta.calls), calls, "no allocator call");
        }
        cr_expect_eq(bw_pool_class_size(p, (size_t)PTRDIFF_MAX), (size_t)PTRDIFF_MAX);
        ta_finish(&ta, p);
    }
}

/* What broke (0.1): bw_pool_destroy(bw_pool_shared()) destroyed it under
 * every writer still using it; it is ignored now. */
Test(pool_api, destroying_the_shared_pool_is_ignored)
{
    bw_writer w = BW_WRITER_INIT;
    bw_pool *shared = bw_pool_shared();
    size_t cap;
    void *b;
    cr_assert_not_null(shared);
    cr_assert_eq(bw_printf(&w, "before %d", 1), BW_OK);
    bw_release(&w);
    b = rent_ok(shared, 100, &cap);
    cr_expect_eq(bw_pool_return(shared, b, cap), BW_OK);
    bw_pool_destroy(bw_pool_shared());
    cr_expect_eq(bw_pool_shared(), shared);
    cr_assert_eq(bw_printf(&w, "after %d", 2), BW_OK);
    cr_expect_eq(bw_len(&w), 7);
    cr_expect(memcmp(bw_data(&w), "after 2", 7) == 0);
    bw_release(&w);
    b = rent_ok(shared, 100, &cap);
    cr_expect_eq(bw_pool_return(shared, b, cap), BW_OK);
    b = rent_ok(shared, 4 * MiB, &cap);
    cr_expect_eq(bw_pool_return(shared, b, cap), BW_OK);
    bw_pool_trim(shared);
}

/* What broke (0.1): the learned_size stat was not the capacity a writer
 * then got. */
Test(pool_api, learned_size_stat_is_the_size_writers_get)
{
    test_alloc ta;
    bw_pool *p = fresh_flags_pool(&ta, BW_POOL_LEARN_SIZE, 0);
    cr_expect_eq(stats_of(p).learned_size, 0);
    small_jobs(p, 3, 5000);
    cr_expect_eq(stats_of(p).learned_size, 8192, "learned_size %zu", stats_of(p).learned_size);
    cr_expect_eq(first_block(p), stats_of(p).learned_size);
    ta_finish(&ta, p);
}

/* What broke (0.2): BW_POOL_ZERO_ON_RETURN zeroed blocks it kept, but a
 * block above the threshold that grew went through the allocator's realloc
 * with its bytes, and blocks it freed reached free() unzeroed. */
static _Atomic long dirty_frees, zero_reallocs;

static void zero_check_free(void *ctx, void *block, size_t size)
{
    const unsigned char *b = (const unsigned char *)block;
    size_t i;
    for (i = 0; i < size; i++)
        if (b[i] != 0) {
            atomic_fetch_add(&dirty_frees, 1);
            break;
        }
    ta_free(ctx, block, size);
}

static void *zero_check_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    atomic_fetch_add(&zero_reallocs, 1); /* hands old_size bytes over unzeroed */
    return ta_realloc(ctx, block, old_size, new_size);
}

Test(pool_api, zero_on_return_growth_above_the_threshold_never_hands_over_bytes)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    char *s = letters(8192, 1);
    int i;
    ta_init(&ta, 1);
    ta.hook.free = zero_check_free;
    ta.hook.realloc = zero_check_realloc;
    memset(&o, 0, sizeof o);
    o.max_pooled_size = 64 << 10;
    o.flags = BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_LARGE_RETENTION;
    o.allocator = &ta.hook;
    p = mkpool(&o);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (i = 0; i < 128; i++) cr_assert_eq(bw_write(&w, s, 8192), BW_OK); /* 1 MiB */
    cr_expect_eq(bw_len(&w), 1u << 20);
    bw_release(&w);
    bw_pool_trim(p);
    cr_expect_eq(atomic_load(&zero_reallocs), 0, "realloc gives the old block's bytes away");
    cr_expect_eq(atomic_load(&dirty_frees), 0, "%ld blocks reached the allocator unzeroed",
                 atomic_load(&dirty_frees));
    free(s);
    ta_finish(&ta, p);
}
