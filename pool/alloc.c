/* SPDX-License-Identifier: MIT */
/* alloc.c - the backing allocators: libc (with large blocks straight from
 * the kernel on Linux), and jemalloc's sized calls in builds with
 * BW_HAVE_JEMALLOC. */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>

/* Large blocks (BW__MAP_MIN, 2 MiB, and up) come straight from the kernel
 * where the platform layer can map them (Linux: aligned for transparent
 * huge pages, grown by moving pages, never bytes; platform/posix.c says
 * what that saves). Elsewhere malloc serves every size. The free hook gets
 * the exact size back, so it knows which way a block was made. */
#define BW__PAGE_ALIGN_MIN ((size_t)16 << 10)

static void *bw__libc_alloc(void *ctx, size_t size)
{
    (void)ctx;
#ifdef BW__MAP_MIN
    if (size >= BW__MAP_MIN) return bw__map(size);
#endif
    /* A block of 16 KiB or more on a page boundary (bw__malloc_pages says
     * why): measured side by side, a repeated 64 KiB job in 8 KiB writes
     * from a source 0x480 past a page ran 1.24x a page-aligned memcpy's
     * time in glibc's block at 0x610 past one, and 1.03x page-aligned.
     * From 16 KiB, as jemalloc aligns its large sizes: glibc's
     * aligned_alloc leaves up to 4 KiB of its heap free before each
     * block, too much for the 4 and 8 KiB classes' many blocks. */
    if (size >= BW__PAGE_ALIGN_MIN) return bw__malloc_pages(size);
    return malloc(size);
}

static void *bw__libc_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    (void)ctx;
#ifdef BW__MAP_MIN
    if (old_size >= BW__MAP_MIN || new_size >= BW__MAP_MIN) {
        void *nb;
        if (old_size >= BW__MAP_MIN && new_size >= BW__MAP_MIN)
            return bw__remap(block, old_size, new_size);
        /* Across the 2 MiB line: a new block and a copy. */
        nb = bw__libc_alloc(ctx, new_size);
        if (nb == NULL) return NULL;
        memcpy(nb, block, old_size < new_size ? old_size : new_size);
        if (old_size >= BW__MAP_MIN) bw__unmap(block, old_size);
        else free(block);
        return nb;
    }
#endif
    (void)old_size;
    return realloc(block, new_size);
}

static void bw__libc_free(void *ctx, void *block, size_t size)
{
    (void)ctx;
#ifdef BW__MAP_MIN
    if (size >= BW__MAP_MIN) {
        bw__unmap(block, size);
        return;
    }
#endif
    (void)size;
    free(block);
}

static const bw_allocator bw__libc = {bw__libc_alloc, bw__libc_realloc, bw__libc_free, NULL};

/* Whether a block of `size` bytes that hook a allocated is memory free()
 * releases: the libc hooks below the size that is mapped from the kernel. */
BW__INTERNAL bool bw__alloc_is_malloc(const bw_allocator *a, size_t size)
{
#ifdef BW__MAP_MIN
    if (size >= BW__MAP_MIN) return false;
#endif
    (void)size;
    return a->alloc == bw__libc_alloc && a->free == bw__libc_free;
}

BW__INTERNAL bool bw__alloc_maps(const bw_allocator *a)
{
#ifdef BW__MAP_MIN
    return a->alloc == bw__libc_alloc && a->realloc == bw__libc_realloc &&
           a->free == bw__libc_free;
#else
    (void)a;
    return false;
#endif
}

const bw_allocator *bw_allocator_libc(void) { return &bw__libc; }

/* After bw_pool_trim freed blocks into malloc: the C library may keep the
 * freed memory (bw__malloc_trim gives it back where it can). Only for the
 * libc allocator: a hook's memory is its own business. */
BW__INTERNAL void bw__alloc_trim(const bw_allocator *a)
{
    if (a->free == bw__libc_free) bw__malloc_trim();
}

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
