/* SPDX-License-Identifier: MIT */
/* helpers.h - a counting, failure-injecting backing allocator for tests.
 *
 * Every block carries a 16-byte header with its size, so a free or realloc
 * with a size other than the one handed out is counted as a size error
 * (the pool must always give back exactly what it got, as sdallocx needs).
 * fail_at = N makes the Nth call (alloc or realloc, counting from 1) fail;
 * with fail_sticky, every call from the Nth on fails. */
#ifndef BW_TEST_HELPERS_H
#define BW_TEST_HELPERS_H

#include "bufwriter.h"

#ifdef BW_MINI_CRITERION
#  include "mini_criterion.h"
#else
#  include <criterion/criterion.h>
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct test_alloc {
    bw_allocator hook;
    _Atomic long calls;        /* alloc + realloc calls, failed ones too */
    _Atomic long live_blocks;
    _Atomic long long live_bytes;
    _Atomic long allocs, frees, reallocs;
    _Atomic long size_errors;  /* free/realloc with a size that does not match */
    _Atomic long fail_at;      /* 0 = never */
    _Atomic int fail_sticky;
    _Atomic int no_realloc;
} test_alloc;

#define TA_HDR 16

static inline int ta_should_fail(test_alloc *ta)
{
    long n = atomic_fetch_add(&ta->calls, 1) + 1;
    long f = atomic_load(&ta->fail_at);
    if (f == 0) return 0;
    return atomic_load(&ta->fail_sticky) ? n >= f : n == f;
}

static inline void *ta_alloc(void *ctx, size_t size)
{
    test_alloc *ta = (test_alloc *)ctx;
    unsigned char *p;
    if (ta_should_fail(ta) || size > SIZE_MAX - TA_HDR) return NULL;
    p = (unsigned char *)malloc(size + TA_HDR);
    if (p == NULL) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&ta->live_blocks, 1);
    atomic_fetch_add(&ta->live_bytes, (long long)size);
    atomic_fetch_add(&ta->allocs, 1);
    return p + TA_HDR;
}

static inline void ta_check_size(test_alloc *ta, void *block, size_t size)
{
    size_t had;
    memcpy(&had, (unsigned char *)block - TA_HDR, sizeof had);
    if (had != size) atomic_fetch_add(&ta->size_errors, 1);
}

static inline void *ta_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    test_alloc *ta = (test_alloc *)ctx;
    unsigned char *p;
    ta_check_size(ta, block, old_size);
    if (ta_should_fail(ta) || new_size > SIZE_MAX - TA_HDR) return NULL;
    p = (unsigned char *)realloc((unsigned char *)block - TA_HDR, new_size + TA_HDR);
    if (p == NULL) return NULL;
    memcpy(p, &new_size, sizeof new_size);
    atomic_fetch_add(&ta->live_bytes, (long long)new_size - (long long)old_size);
    atomic_fetch_add(&ta->reallocs, 1);
    return p + TA_HDR;
}

static inline void ta_free(void *ctx, void *block, size_t size)
{
    test_alloc *ta = (test_alloc *)ctx;
    ta_check_size(ta, block, size);
    atomic_fetch_sub(&ta->live_blocks, 1);
    atomic_fetch_sub(&ta->live_bytes, (long long)size);
    atomic_fetch_add(&ta->frees, 1);
    free((unsigned char *)block - TA_HDR);
}

/* Set up ta as a fresh counting allocator; with_realloc = 0 leaves the
 * realloc hook NULL (the pool then copies). */
static inline void ta_init(test_alloc *ta, int with_realloc)
{
    memset(ta, 0, sizeof *ta);
    ta->hook.alloc = ta_alloc;
    ta->hook.realloc = with_realloc ? ta_realloc : NULL;
    ta->hook.free = ta_free;
    ta->hook.ctx = ta;
}

/* A pool over ta with the given threshold (0 = default) and flags, with
 * 0.1's mechanics, so tests can count exactly: first blocks are the class
 * of the first write, nothing above the threshold is kept or learned, and
 * nothing decays. ta_pool_defaults keeps every 0.2 default. */
static inline bw_pool *ta_pool(test_alloc *ta, size_t threshold, unsigned flags)
{
    bw_pool_options o;
    bw_pool *p = NULL;
    memset(&o, 0, sizeof o);
    o.max_pooled_size = threshold;
    o.flags = flags | BW_POOL_NO_LARGE_RETENTION | BW_POOL_NO_LEARNED_GROWTH;
    o.min_first_block = 1;
    o.decay_ms = BW_DECAY_NEVER;
    o.allocator = &ta->hook;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    return p;
}

static inline bw_pool *ta_pool_defaults(test_alloc *ta)
{
    bw_pool_options o;
    bw_pool *p = NULL;
    memset(&o, 0, sizeof o);
    o.allocator = &ta->hook;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    return p;
}

/* Destroy the pool and check the allocator balances to zero. */
static inline void ta_finish(test_alloc *ta, bw_pool *p)
{
    bw_pool_destroy(p);
    cr_expect_eq(atomic_load(&ta->live_blocks), 0, "blocks leaked: %ld",
                 atomic_load(&ta->live_blocks));
    cr_expect_eq(atomic_load(&ta->live_bytes), 0, "bytes leaked: %lld",
                 atomic_load(&ta->live_bytes));
    cr_expect_eq(atomic_load(&ta->size_errors), 0, "frees with a wrong size: %ld",
                 atomic_load(&ta->size_errors));
}

/* A byte pattern that depends on the position: catches shifted copies. */
static inline unsigned char pat(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + (i >> 8) * 7u + seed) & 0xff);
}

#endif /* BW_TEST_HELPERS_H */
