/* SPDX-License-Identifier: MIT */
/* test_detach.c - bw_detach_malloc gives the caller memory that fits: a
 * block much larger than the bytes (more than twice them with their NUL,
 * plus 64 bytes) is copied into malloc'd memory of their size when they
 * are at most 16 KiB and the thread cache keeps blocks of its size (the
 * block stays in the pool for the next job), else shrunk with the
 * allocator's realloc. A
 * realloc that fails leaves the caller the whole block; a pool whose
 * allocator is not malloc's is never asked to realloc.
 *
 * The default allocator's hooks, with a realloc hook of the test's own in
 * their place, still hand out malloc's memory: that is how these tests
 * see (and fail) the shrink's realloc. The harness's counting allocator
 * (test_alloc) is the custom allocator that is not malloc. */
#define _GNU_SOURCE 1
#include "harness.h"

#include <stdio.h>
#ifdef __GLIBC__
#  include <malloc.h> /* malloc_usable_size */
#endif

/* BW_CHECKED=1 or BW_BYPASS=1 in the environment change every pool: a
 * canary after each block (copies, never a hand-off), or exact sizes. */
static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, "1") == 0;
}

static int plain_env(void) { return !env_set("BW_CHECKED") && !env_set("BW_BYPASS"); }

/* A realloc hook over libc's realloc that counts its calls, remembers the
 * sizes of the last, can fail, and checks the bytes it gives up. */
typedef struct shrink_hook {
    bw_allocator a;
    int calls, fail;
    size_t old_size, new_size;
    int check_tail; /* look at the bytes past new_size (else never written) */
    int tail_zero;  /* they were all 0 (last call) */
} shrink_hook;

static void *sh_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    shrink_hook *h = (shrink_hook *)ctx;
    h->calls++;
    h->old_size = old_size;
    h->new_size = new_size;
    h->tail_zero = h->check_tail && new_size < old_size &&
                   all_bytes((unsigned char *)block + new_size, old_size - new_size, 0);
    if (h->fail) return NULL;
    return realloc(block, new_size);
}

/* A pool on malloc's alloc and free hooks with h's realloc. */
static bw_pool *hook_pool(shrink_hook *h, unsigned flags)
{
    bw_pool_options o;
    memset(h, 0, sizeof *h);
    h->a = *bw_allocator_libc();
    h->a.realloc = sh_realloc;
    h->a.ctx = h;
    memset(&o, 0, sizeof o);
    o.allocator = &h->a;
    o.flags = flags;
    return mkpool(&o);
}

/* A contiguous writer on p holding n pattern bytes (seed) in a block of
 * at least initial; returns where they are. */
static const unsigned char *build(bw_writer *w, bw_pool *p, size_t initial, size_t n,
                                  unsigned seed)
{
    unsigned char piece[20];
    size_t i, k;
    cr_assert_eq(bw_init(w, p, initial), BW_OK);
    for (i = 0; i < n; i += k) {
        k = n - i < sizeof piece ? n - i : sizeof piece;
        for (size_t j = 0; j < k; j++) piece[j] = pat(i + j, seed);
        cr_assert_eq(bw_write(w, piece, k), BW_OK);
    }
    return bw_data(w);
}

/* s holds n pattern bytes (seed) and a NUL. */
static void expect_bytes(const unsigned char *s, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] != pat(i, seed)) break;
    cr_expect_eq(i, n, "byte %zu of %zu differs", i, n);
    cr_expect_eq(s[n], 0, "a NUL after them");
}

Test(detach_fit, a_200_byte_text_in_a_512_byte_block_is_copied_to_fit)
{
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len = 0;
    uint64_t out0;
    memset(&o, 0, sizeof o);
    p = mkpool(&o); /* the default allocator */
    out0 = outstanding(p);
    d = build(&w, p, 0, 200, 1);
    cr_assert_geq(bw_capacity(&w), 512, "the first block is 512 bytes");
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 200);
    expect_bytes(s, 200, 1);
    cr_expect_neq(s, d, "a copy: the block stays in the pool");
#ifdef __GLIBC__
    cr_expect_lt(malloc_usable_size(s), 256, "fits: %zu usable", malloc_usable_size(s));
#endif
    cr_expect_eq(outstanding(p), out0, "the block went back");
    free(s);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_error(&w), BW_OK);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* The point of the copy: a job after a hand-off rents the block it left,
 * so hand-offs in a loop allocate no block in the pool. */
Test(detach_fit, repeated_hand_offs_rent_nothing_new)
{
    bw_pool_options o;
    bw_pool *p;
    bw_pool_stats before, after;
    int i;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    for (i = 0; i < 12; i++) {
        bw_writer w;
        unsigned char *s;
        size_t len;
        if (i == 2) bw_pool_get_stats(p, &before); /* warm */
        (void)build(&w, p, 0, 200, (unsigned)i);
        s = (unsigned char *)bw_detach_malloc(&w, &len);
        cr_assert(s != NULL);
        expect_bytes(s, 200, (unsigned)i);
        free(s);
        bw_release(&w);
    }
    bw_pool_get_stats(p, &after);
    cr_expect_eq(after.backing_allocs, before.backing_allocs, "%llu blocks allocated",
                 (unsigned long long)(after.backing_allocs - before.backing_allocs));
    bw_pool_destroy(p);
}

/* The rule's edge in a 512-byte block: 222 bytes and their NUL (223) are
 * less than (512 - 64) / 2 = 224, copied; 223 are not, the block itself. */
Test(detach_fit, the_rule_twice_the_bytes_plus_64)
{
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len;
    if (!plain_env()) return;
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    d = build(&w, p, 0, 222, 2);
    cr_assert_eq(bw_capacity(&w), 512);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 222);
    expect_bytes(s, 222, 2);
    cr_expect_neq(s, d, "222 bytes: copied");
    free(s);
    bw_release(&w);
    d = build(&w, p, 0, 223, 3);
    cr_assert_eq(bw_capacity(&w), 512);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 223);
    expect_bytes(s, 223, 3);
    cr_expect_eq(s, d, "223 bytes: the block itself");
#ifdef __GLIBC__
    cr_expect_geq(malloc_usable_size(s), 512);
#endif
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* More than 16 KiB of bytes (or a block above the thread cache's classes)
 * are not copied: the block is shrunk with the allocator's realloc to the
 * bytes and their NUL. */
Test(detach_fit, a_large_block_is_shrunk_by_realloc)
{
    shrink_hook h;
    bw_pool *p = hook_pool(&h, 0);
    bw_writer w;
    unsigned char *s;
    size_t len;
    uint64_t out0 = outstanding(p);
    if (!plain_env()) {
        bw_pool_destroy(p);
        return;
    }
    (void)build(&w, p, 64 * KiB, 20000, 4);
    cr_assert_eq(bw_capacity(&w), 64 * KiB);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 20000);
    expect_bytes(s, 20000, 4);
    cr_expect_eq(h.calls, 1, "one realloc");
    cr_expect_eq(h.old_size, 64 * KiB);
    cr_expect_eq(h.new_size, 20001, "to the bytes and their NUL");
#ifdef __GLIBC__
    cr_expect_lt(malloc_usable_size(s), 21 * KiB, "fits: %zu usable", malloc_usable_size(s));
#endif
    cr_expect_eq(outstanding(p), out0, "the block left the pool");
    free(s);
    bw_release(&w);
    /* Not much larger: handed over as it is, no realloc. */
    (void)build(&w, p, 64 * KiB, 40000, 5);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    expect_bytes(s, 40000, 5);
    cr_expect_eq(h.calls, 1, "no realloc for 40000 bytes in 64 KiB");
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* A failed realloc keeps the original block: the caller gets it whole,
 * with the bytes and the NUL, and free() releases it. */
Test(detach_fit, a_failed_shrink_hands_over_the_whole_block)
{
    shrink_hook h;
    bw_pool *p = hook_pool(&h, 0);
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len;
    uint64_t out0 = outstanding(p);
    if (!plain_env()) {
        bw_pool_destroy(p);
        return;
    }
    h.fail = 1;
    d = build(&w, p, 64 * KiB, 20000, 6);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL, "no error: the block as it is");
    cr_expect_eq(h.calls, 1);
    cr_expect_eq(s, d, "the original block");
    cr_expect_eq(len, 20000);
    expect_bytes(s, 20000, 6);
    cr_expect_eq(bw_error(&w), BW_OK);
    cr_expect_eq(outstanding(p), out0, "the block left the pool");
    free(s);
    bw_release(&w);
    /* The writer goes on: the next job is shrunk when realloc works. */
    h.fail = 0;
    (void)build(&w, p, 64 * KiB, 20000, 7);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    expect_bytes(s, 20000, 7);
    cr_expect_eq(h.calls, 2);
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* A pool that zeroes what it gives back (BW_POOL_ZERO_ON_RETURN) zeroes
 * the tail a shrink gives to the allocator: here bytes truncated away. */
Test(detach_fit, a_zeroing_pool_zeroes_the_tail_it_gives_back)
{
    shrink_hook h;
    bw_pool *p = hook_pool(&h, BW_POOL_ZERO_ON_RETURN);
    bw_writer w;
    unsigned char *s;
    size_t len;
    if (!plain_env()) {
        bw_pool_destroy(p);
        return;
    }
    h.check_tail = 1;
    (void)build(&w, p, 0, 400, 8);
    cr_assert_eq(bw_capacity(&w), 512);
    cr_assert_eq(bw_truncate(&w, 100), BW_OK);
    s = (unsigned char *)bw_detach_malloc(&w, &len);
    cr_assert(s != NULL);
    cr_expect_eq(len, 100);
    expect_bytes(s, 100, 8);
    cr_expect_eq(h.calls, 1, "no thread cache in a zeroing pool: a shrink");
    cr_expect_eq(h.new_size, 101);
    cr_expect(h.tail_zero, "the truncated bytes were zeroed first");
    free(s);
    bw_release(&w);
    bw_pool_destroy(p);
}

/* An allocator that is not malloc: always a copy into malloc'd memory of
 * the bytes' size, and its realloc is never called. */
Test(detach_fit, no_shrink_for_an_allocator_that_is_not_malloc)
{
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_writer w;
    const unsigned char *d;
    unsigned char *s;
    size_t len, sizes[] = {200, 1000, 40000};
    size_t initial[] = {0, 64 * KiB, 64 * KiB};
    for (int i = 0; i < 3; i++) {
        long reallocs = atomic_load(&ta.reallocs);
        d = build(&w, p, initial[i], sizes[i], 9 + (unsigned)i);
        s = (unsigned char *)bw_detach_malloc(&w, &len);
        cr_assert(s != NULL);
        cr_expect_eq(len, sizes[i]);
        expect_bytes(s, sizes[i], 9 + (unsigned)i);
        cr_expect_neq(s, d, "%zu bytes: a copy", sizes[i]);
        cr_expect_eq(atomic_load(&ta.reallocs), reallocs, "%zu bytes: no realloc", sizes[i]);
#ifdef __GLIBC__
        cr_expect_lt(malloc_usable_size(s), sizes[i] + 64);
#endif
        free(s);
        bw_release(&w);
    }
    ta_finish(&ta, p); /* every block came back to the pool */
}
