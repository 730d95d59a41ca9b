/* SPDX-License-Identifier: MIT */
/* test_pool_api.c - the public pool calls at their edges, each test
 * guarding a defect that was fixed: allocator hooks that call the pool
 * back, bw_pool_class_size against bw_pool_rent, the shared pool refusing
 * destruction, the learned_size stat, and BW_POOL_ZERO_ON_RETURN on the
 * way to the allocator. (The pool's everyday behaviour: test_pool.c.) */
#include "harness.h"

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
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p;
    bw_writer w;
    o.flags = BW_POOL_LEARN_SIZE;
    p = mkpool(&o);
    cr_expect_eq(stats_of(p).learned_size, 0);
    small_jobs(p, 3, 5000);
    cr_expect_eq(stats_of(p).learned_size, 8192, "learned_size %zu", stats_of(p).learned_size);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_capacity(&w), stats_of(p).learned_size);
    bw_release(&w);
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
