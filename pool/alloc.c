/* alloc.c - the backing allocators: libc, and jemalloc's sized calls in
 * builds with BW_HAVE_JEMALLOC. */
#include "pool_internal.h"

#include <stdlib.h>

static void *bw__libc_alloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *bw__libc_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    (void)ctx;
    (void)old_size;
    return realloc(block, new_size);
}

static void bw__libc_free(void *ctx, void *block, size_t size)
{
    (void)ctx;
    (void)size;
    free(block);
}

static const bw_allocator bw__libc = {bw__libc_alloc, bw__libc_realloc, bw__libc_free, NULL};

const bw_allocator *bw_allocator_libc(void) { return &bw__libc; }

#ifdef BW_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>

/* mallocx/rallocx with flags 0 align to at least alignof(max_align_t), like
 * malloc; sdallocx skips jemalloc's size lookup on free, which is what a
 * hook that always passes the exact size is for. */
static void *bw__je_alloc(void *ctx, size_t size)
{
    (void)ctx;
    return mallocx(size ? size : 1, 0);
}

static void *bw__je_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    (void)ctx;
    (void)old_size;
    return rallocx(block, new_size ? new_size : 1, 0);
}

static void bw__je_free(void *ctx, void *block, size_t size)
{
    (void)ctx;
    sdallocx(block, size ? size : 1, 0);
}

static const bw_allocator bw__je = {bw__je_alloc, bw__je_realloc, bw__je_free, NULL};

const bw_allocator *bw_allocator_jemalloc(void) { return &bw__je; }
#else
const bw_allocator *bw_allocator_jemalloc(void) { return NULL; }
#endif
