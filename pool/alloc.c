/* SPDX-License-Identifier: MIT */
/* alloc.c - the backing allocators: libc (with large blocks straight from
 * the kernel on Linux), and jemalloc's sized calls in builds with
 * BW_HAVE_JEMALLOC. */

/* The library's own build of this file asks for Linux's mmap extensions
 * (MAP_ANONYMOUS, MADV_HUGEPAGE, mremap). In the single header it is too
 * late to ask: the code below uses what the includer's headers declare,
 * and falls back to malloc without them. */
#if !defined(_GNU_SOURCE) && !defined(BUFWRITER_IMPLEMENTATION)
#  define _GNU_SOURCE 1
#endif

#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#  include <malloc.h> /* malloc_trim */
#endif
#if defined(__linux__)
#  include <sys/mman.h>
#endif

/* Large blocks (2 MiB and up) come straight from the kernel on Linux:
 * mmap'd at a 2 MiB boundary with MADV_HUGEPAGE, so where transparent huge
 * pages are on ("madvise" or "always") a fresh 10 MiB block costs 5 page
 * faults instead of 2,560: measured here, the first 10 MiB written into it
 * take about 1 ms against 40-110 ms with 4 KiB pages (0.25 ms when warm).
 * It also keeps them out of glibc's heap, whose sliding mmap threshold and
 * trimming made a 1 MiB job 6x slower when interleaved with malloc-heavy
 * code. Growth moves the pages (mremap), never the bytes. The free hook
 * gets the exact size back, so it knows which way a block was made. */
#if defined(__linux__) && defined(MAP_ANONYMOUS) && defined(MADV_HUGEPAGE)
#  define BW__HUGE_MIN ((size_t)2 << 20)
#  define BW__HUGE_ALIGN ((size_t)2 << 20)
#  define BW__PAGE_ROUND(n) (((n) + 4095) & ~(size_t)4095)

static void *bw__map(size_t size)
{
    size_t len = BW__PAGE_ROUND(size), head, tail;
    unsigned char *raw, *a;
    if (len < size || len > SIZE_MAX - BW__HUGE_ALIGN) return NULL;
    raw = (unsigned char *)mmap(NULL, len + BW__HUGE_ALIGN, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == (unsigned char *)MAP_FAILED) return NULL;
    a = (unsigned char *)(((uintptr_t)raw + BW__HUGE_ALIGN - 1) & ~(uintptr_t)(BW__HUGE_ALIGN - 1));
    head = (size_t)(a - raw);
    tail = BW__HUGE_ALIGN - head;
    if (head != 0) (void)munmap(raw, head);
    if (tail != 0) (void)munmap(a + len, tail);
    (void)madvise(a, len, MADV_HUGEPAGE); /* a hint: fine if THP is off */
    return a;
}

static void bw__unmap(void *b, size_t size) { (void)munmap(b, BW__PAGE_ROUND(size)); }
#endif

static void *bw__libc_alloc(void *ctx, size_t size)
{
    (void)ctx;
#ifdef BW__HUGE_MIN
    if (size >= BW__HUGE_MIN) return bw__map(size);
#endif
    return malloc(size);
}

static void *bw__libc_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    (void)ctx;
#ifdef BW__HUGE_MIN
    if (old_size >= BW__HUGE_MIN || new_size >= BW__HUGE_MIN) {
        void *nb;
        if (old_size >= BW__HUGE_MIN && new_size >= BW__HUGE_MIN) {
#  ifdef MREMAP_FIXED
            /* Move the pages onto a fresh aligned mapping: no copy, and the
             * huge pages stay huge. */
            nb = bw__map(new_size);
            if (nb == NULL) return NULL;
            if (mremap(block, BW__PAGE_ROUND(old_size), BW__PAGE_ROUND(new_size),
                       MREMAP_MAYMOVE | MREMAP_FIXED, nb) == MAP_FAILED) {
                bw__unmap(nb, new_size);
                return NULL;
            }
            return nb;
#  endif
        }
        /* Across the 2 MiB line (or without mremap): a new block and a copy. */
        nb = bw__libc_alloc(ctx, new_size);
        if (nb == NULL) return NULL;
        memcpy(nb, block, old_size < new_size ? old_size : new_size);
        if (old_size >= BW__HUGE_MIN) bw__unmap(block, old_size);
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
#ifdef BW__HUGE_MIN
    if (size >= BW__HUGE_MIN) {
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
#ifdef BW__HUGE_MIN
    if (size >= BW__HUGE_MIN) return false;
#endif
    (void)size;
    return a->alloc == bw__libc_alloc && a->free == bw__libc_free;
}

const bw_allocator *bw_allocator_libc(void) { return &bw__libc; }

/* After bw_pool_trim freed blocks into malloc: glibc keeps freed memory of
 * its main heap below the top chunk, so the process's RSS stayed 4 MiB up
 * after a trim of the pooled 256 KiB-1 MiB classes. malloc_trim gives the
 * free pages back. Only for the libc allocator: a hook's memory is its
 * own business. */
BW__INTERNAL void bw__alloc_trim(const bw_allocator *a)
{
#if defined(__GLIBC__)
    if (a->free == bw__libc_free) (void)malloc_trim(0);
#else
    (void)a;
#endif
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
