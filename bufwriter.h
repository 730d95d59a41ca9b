/* SPDX-License-Identifier: MIT */
/* bufwriter.h - one buffer writer for every destination, over a pooled,
 * power-of-two size-class allocator. Version 0.4.
 *
 * A bw_writer appends bytes: raw, typed (fixed-width integers and floats in
 * either byte order, varints, decimal, hex), formatted (printf), or written
 * in place through a span. Where the bytes go is chosen once, at init:
 *
 *   contiguous  bw_init, bw_init_buffer   one block, moved to a block at
 *                                         least twice as large when full
 *   segmented   bw_init_chain             blocks linked, never copied
 *   streaming   bw_init_sink, bw_init_fd  a buffer that is sent to a
 *                                         callback or a file descriptor
 *                                         when full, then reused
 *   fixed       bw_init_fixed             the caller's buffer, never grown
 *
 * Every write, read-out and output function works in every mode, with one
 * error model. Blocks come from a bw_pool: power-of-two classes up to a
 * threshold (1 MiB), kept and handed out again, with lock-free per-thread
 * caches. Growth is geometric at every size, so writing n bytes copies O(n)
 * bytes in all (a buffer that grows to the exact size asked for copies
 * O(n^2): 10 MiB in 8 KiB chunks is over 1,000x slower that way).
 *
 * CONTENTS
 *   1. Using it (library, single header, an example, C standard)
 *   2. Compile-time options
 *   3. Status codes
 *   4. Backing allocator
 *   5. Pool
 *   6. Writer: modes, init, release, flush
 *   7. Writing
 *   8. Positions: tell, patch, truncate
 *   9. Reading out
 *  10. Output: file descriptors and FILE*
 *  11. Implementation details (inline bodies; not part of the contract)
 *
 * 1. USING IT
 *   Library:       cc app.c $(pkg-config --cflags --libs bufwriter)
 *   Single header: copy single_include/bufwriter.h into your project and, in
 *                  exactly one .c file:
 *                      #define BUFWRITER_IMPLEMENTATION
 *                      #include "bufwriter.h"
 *                  That file must include nothing before it (or define
 *                  _GNU_SOURCE before its first #include): the
 *                  implementation asks glibc and musl for POSIX and GNU
 *                  calls, which a libc header included earlier hides; it
 *                  stops with an #error that says so.
 *   C standard:    the header (declarations and inline writes) compiles as
 *                  C89 with -pedantic, C99 and later, and C++; the library
 *                  and the single header's implementation need C11 (atomics,
 *                  _Thread_local).
 *   Platforms:     Linux (glibc, musl; x86-64, i386, aarch64, s390x), the
 *                  BSDs and macOS (POSIX threads), Windows (Win32 threads;
 *                  tested with MinGW-w64). Windows has no fork, no SIGPIPE
 *                  and no fopencookie: there is no bw_fopen there, bw_write_fd
 *                  writes with the C runtime's _write, and this header
 *                  defines struct iovec (README, "Platforms").
 *
 *   bw_writer w = BW_WRITER_INIT;          // empty; allocates nothing yet
 *   bw_put_u32le(&w, 0);                   // placeholder for a length
 *   bw_puts(&w, "hello, ");
 *   bw_printf(&w, "%s #%d", "world", 42);
 *   bw_put_uvarint(&w, 300);
 *   if (bw_error(&w) != BW_OK)             // one check for the whole run
 *       fprintf(stderr, "%s\n", bw_strerror(bw_error(&w)));
 *   else
 *       fwrite(bw_data(&w), 1, bw_len(&w), stdout);
 *   bw_release(&w);                        // block back to the pool
 *
 * ERRORS
 *   Every int function returns BW_OK (0) or a negative BW_E* code. A failed
 *   call changes no byte already written and is remembered (the sticky
 *   error, bw_error): later writes are refused with the same code until
 *   bw_clear_error, bw_clear, bw_release or bw_detach. So a run of writes is
 *   checked once, at the end (bw_flush returns it too). Where each error's
 *   cause is: the code says it all for every error but BW_EIO, whose cause
 *   is the errno it failed with, kept in the writer and read with bw_errno
 *   (errno itself is long overwritten by then: print it with
 *   strerror(bw_errno(&w)), never with perror). bw_write_fd, which does not
 *   record its BW_EIO, keeps its errno there too. Nothing in the
 *   library aborts or exits on bad input, except the checked-mode report
 *   hook (bw_set_report_hook).
 *
 * THREADS
 *   - A bw_pool is safe from any thread at once, including returning a block
 *     on another thread than the one that rented it.
 *   - A bw_writer belongs to one thread at a time (hand it over with your own
 *     synchronisation, as with any plain struct).
 *   - Allocator hooks and sinks are called on the calling thread, inside the
 *     call; allocator hooks must be thread-safe.
 *
 * INVALIDATION
 *   Contiguous and fixed: bw_data() and a span from bw_get_span() are valid
 *   until the next call that can grow (write, any put, puts, printf,
 *   reserve, get_span, append_writer, cstr, pullup) or move held bytes
 *   (consume, detach, release). Segmented: blocks never move, so pointers to
 *   held bytes stay valid until those bytes are consumed or truncated, or
 *   until pullup, cstr, detach, clear or release (bw_move between two
 *   segmented writers hands src's blocks, unmoved, to dst, but copies a
 *   piece far smaller than its block; a patch into bytes linked by
 *   bw_append_ref copies them first). Streaming: until
 *   the next call that can send. Positions (bw_tell) stay valid; pointers
 *   do not.
 *   Bytes written into a span and not yet committed with bw_advance (or
 *   bw_advance_to) are not part of the output: any other call may discard
 *   them.
 *
 * 2. COMPILE-TIME OPTIONS
 *   Each says whether it must be the same in the library and in every file
 *   that includes this header ("must match"), or is local to one side.
 *   BUFWRITER_IMPLEMENTATION  single header only: emit the implementation in
 *                   this translation unit (exactly one). Local.
 *   BW_DEBUG        checked mode for every pool (see BW_POOL_CHECKED). Library
 *                   only; includers need not match.
 *   BW_HAVE_JEMALLOC  set by builds with the jemalloc hook (make JEMALLOC=1):
 *                   bw_allocator_jemalloc() on jemalloc's mallocx/rallocx/
 *                   sdallocx (link with -ljemalloc); NULL otherwise. Library
 *                   only (pkg-config passes it on; harmless either way).
 *   BW_VALGRIND     mark blocks held by the pool NOACCESS for memcheck
 *                   (needs <valgrind/memcheck.h>). Library only.
 *   BW_NO_FILE_ADAPTER  leave out bw_fopen (no fopencookie / funopen). Must
 *                   match: it removes a declaration. With it, the single
 *                   header's implementation needs only POSIX from glibc and
 *                   musl, not _GNU_SOURCE: a file that asks for a POSIX
 *                   level alone (_POSIX_C_SOURCE, _XOPEN_SOURCE) may include
 *                   libc headers before it. On Linux its blocks of 2 MiB and
 *                   up are then mapped without the huge-page hint and grow
 *                   by a copy (the C library hides those calls then).
 *   BW_HAVE_STRUCT_IOVEC  Windows only: the program has its own struct iovec
 *                   (void *iov_base; size_t iov_len;), so this header does
 *                   not define one. Local.
 *   BW_API          the export attribute on public functions (default:
 *                   visibility "default"). Must match for a shared library.
 *   The pool's defaults (bw_pool_options) are not build-time options: set
 *   them per pool.
 *   Under AddressSanitizer the pool poisons the blocks it holds, in the
 *   library; nothing in this header is instrumented, so an instrumented
 *   program over an uninstrumented library (or the reverse) reports nothing
 *   on correct code.
 */
#ifndef BUFWRITER_H
#define BUFWRITER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h> /* malloc: bw_detach_malloc's inline copy */
#include <string.h>

/* The version of this header. BW_VERSION_NUMBER is major * 10000 +
 * minor * 100 + patch (0.4.0 is 400), for #if checks:
 *   #if BW_VERSION_NUMBER >= 400 */
#define BW_VERSION_MAJOR 0
#define BW_VERSION_MINOR 4
#define BW_VERSION_PATCH 0
#define BW_VERSION_STRING "0.4.0"
#define BW_VERSION_NUMBER \
    (BW_VERSION_MAJOR * 10000 + BW_VERSION_MINOR * 100 + BW_VERSION_PATCH)

/* Symbols the library exports; everything else is hidden (-fvisibility). */
#ifndef BW_API
#  if defined(__GNUC__) || defined(__clang__)
#    define BW_API __attribute__((visibility("default")))
#  else
#    define BW_API
#  endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define BW__LIKELY(x)   __builtin_expect(!!(x), 1)
#  define BW__UNLIKELY(x) __builtin_expect(!!(x), 0)
/* MinGW's "printf" is msvcrt's dialect (no %zu); the library's printf is
 * C99's there too (MinGW's own, which a C11 build gets), so the check is
 * GNU's. */
#  if defined(__MINGW32__)
#    define BW__PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#  else
#    define BW__PRINTF(f, a) __attribute__((format(printf, f, a)))
#  endif
#else
#  define BW__LIKELY(x)   (x)
#  define BW__UNLIKELY(x) (x)
#  define BW__PRINTF(f, a)
#endif

/* static inline needs C99; a C89 includer (cJSON builds with -std=c89
 * -pedantic) gets GCC's __inline__, else plain static functions. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#  define BW__INLINE static inline
#elif defined(__GNUC__) || defined(__clang__)
#  define BW__INLINE static __inline__
#else
#  define BW__INLINE static
#endif

/* Casts in inline code that C++ compiles without -Wold-style-cast noise.
 * Some are needed only where size_t is narrower than uint64_t, so g++'s
 * -Wuseless-cast is quieted for this header's inline bodies. */
#ifdef __cplusplus
#  define BW__CAST(T, x) static_cast<T>(x)
#  define BW__ADDR(x) reinterpret_cast<uintptr_t>(x)
#  if defined(__GNUC__) && !defined(__clang__)
#    define BW__QUIET_BEGIN _Pragma("GCC diagnostic push") \
                            _Pragma("GCC diagnostic ignored \"-Wuseless-cast\"")
#    define BW__QUIET_END   _Pragma("GCC diagnostic pop")
#  endif
#else
#  define BW__CAST(T, x) ((T)(x))
#  define BW__ADDR(x) ((uintptr_t)(x))
#endif
/* A null pointer an inline body returns: no literal 0 for C++'s
 * -Wzero-as-null-pointer-constant (clang warns on NULL's __null too). */
#if defined(__cplusplus) && __cplusplus >= 201103L
#  define BW__NULL nullptr
#elif defined(__cplusplus)
#  define BW__NULL NULL
#else
#  define BW__NULL ((void *)0)
#endif
#ifndef BW__QUIET_BEGIN
#  define BW__QUIET_BEGIN
#  define BW__QUIET_END
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* struct iovec, for bw_iovec: POSIX's, from <sys/uio.h>, in a program that
 * calls bw_iovec (this header needs only the name). Windows has no
 * <sys/uio.h>: there this header defines struct iovec itself, with POSIX's
 * two members (void *iov_base; size_t iov_len;), unless the program
 * defines BW_HAVE_STRUCT_IOVEC because another header of its own already
 * gave it one with those members. */
#if defined(_WIN32) && !defined(BW_HAVE_STRUCT_IOVEC)
#  define BW_HAVE_STRUCT_IOVEC 1
struct iovec {
    void *iov_base;
    size_t iov_len;
};
#else
struct iovec;
#endif

/* ======================================================================== */
/* 3. Status codes                                                          */
/* ======================================================================== */
#define BW_OK         0    /* success */
#define BW_ENOMEM    (-1)  /* the backing allocator failed */
#define BW_EOVERFLOW (-2)  /* a size that cannot be represented was asked for
                              (more than PTRDIFF_MAX bytes, a sum that wraps,
                              printf output longer than INT_MAX) */
#define BW_EINVAL    (-3)  /* a bad argument: NULL, an advance beyond the free
                              space, a position already sent or not yet
                              written, bad pool options */
#define BW_EIO       (-4)  /* a sink or file descriptor write failed;
                              bw_errno says why (EAGAIN for a full
                              non-blocking fd, EPIPE for a reader that has
                              gone) */
#define BW_EFULL     (-5)  /* a fixed writer has no room for the call */
#define BW_ELIMIT    (-6)  /* the call would take bw_tell past the writer's
                              size limit (bw_set_limit) */
#define BW_ENONFINITE (-7) /* a JSON number was asked of a NaN or an
                              infinity (BW_DEC_JSON): nothing written, not
                              recorded */

/* A one-line English description of a status code. Never NULL; unknown codes
 * give "unknown bufwriter status". The string is static. */
BW_API const char *bw_strerror(int status);

/* Version of the library actually linked ("0.4.0"), which may be newer than
 * the header's BW_VERSION_STRING. */
BW_API const char *bw_version(void);

/* ======================================================================== */
/* 4. Backing allocator                                                     */
/* ======================================================================== */
/* Where the pool gets its memory. Every function gets `ctx` first.
 *   alloc(ctx, size)      a block of `size` bytes aligned to at least
 *                         alignof(max_align_t), or NULL on failure.
 *   realloc(ctx, b, old, new)  resize block b (allocated with size `old`) to
 *                         `new` bytes keeping its first min(old,new) bytes; NULL
 *                         on failure, and then b is untouched. May be NULL:
 *                         the pool then allocates a new block and copies.
 *   free(ctx, b, size)    give back block b; `size` is always exactly the size
 *                         it was allocated (or last reallocated) with, as
 *                         jemalloc's sdallocx needs.
 * Hooks are called from any thread and must be thread-safe. The struct must
 * outlive every pool that uses it. One backing allocation is one block. */
typedef struct bw_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *block, size_t old_size, size_t new_size);
    void  (*free)(void *ctx, void *block, size_t size);
    void  *ctx;
} bw_allocator;

/* malloc / realloc / free, except: on Linux a block of 2 MiB or more is a
 * mapping of its own, asking for huge pages; a block of 16 KiB or more
 * (a multiple of 4 KiB) starts on a page boundary, from aligned_alloc,
 * which free() releases (not on Windows), because a memcpy into glibc's
 * usual block, 16 bytes past one, ran up to 1.3x slower here when its
 * source lay just below it modulo 4 KiB. Never NULL. */
BW_API const bw_allocator *bw_allocator_libc(void);
/* jemalloc's mallocx / rallocx / sdallocx (sized free). NULL in a build
 * without jemalloc (BW_HAVE_JEMALLOC undefined). */
BW_API const bw_allocator *bw_allocator_jemalloc(void);

/* ======================================================================== */
/* 5. Pool                                                                  */
/* ======================================================================== */
/* A bw_pool hands out blocks in power-of-two size classes from
 * min_block_size up to max_pooled_size (the threshold). Returned blocks are
 * kept (bounded) and handed out again. Blocks above the threshold come from
 * the backing allocator at exactly the size asked for and are kept too
 * (large retention, bounded by max_large_bytes / max_large_blocks). Every
 * pool function is thread-safe, and a pool stays usable in the child of a
 * fork (its locks are taken around fork, by pthread_atfork handlers that
 * bufwriter registers when it is loaded, with GCC or Clang, so fork
 * handlers registered after that may use bufwriter in prepare, parent and
 * child; other compilers register them at the first pool; Windows has no
 * fork).
 *
 * Retention works in two levels. Each thread keeps a small cache per pool of
 * at most BW_THREAD_CACHE_SLOTS blocks per class (classes up to 1 MiB; those
 * above 32 KiB at most 4 MiB in all), used without locks, given back by
 * decay at the thread's next slow call or at its exit; behind them, each
 * class has a shared, locked stack of at most max_blocks_per_class blocks.
 * max_retained_bytes bounds both levels together. A thread's cache goes
 * back to the pool when the thread exits;
 * the caches of threads still alive when a plugin that embeds bufwriter (the
 * single header, or libbufwriter.a) is unloaded with dlclose leak instead,
 * since the thread-exit hook is removed at unload so no thread runs unmapped
 * code (libbufwriter.so is never unloaded).
 *
 * Defaults need no tuning: a writer's first block is 512 B; a writer that
 * outgrows 16 KiB (jump_floor) jumps to the size recent jobs past 16 KiB
 * ended at (on a fresh pool, before any is known, it grows 16x per move
 * up to the threshold); what is retained and unused for decay_ms (10 s) goes back to
 * the allocator. So a stream of similar 256 KiB .. 64 MiB jobs stops
 * allocating and climbing after the first two, and
 * a program gives that memory back on its first slow-path call once it is
 * due: a call the thread's cache does not serve, or at the latest the
 * 1024th rent of one class that it serves (one in 1024 takes the slow
 * path), so even a thread whose later calls are all small gives back what
 * its big jobs left. A program that makes no pool call gives back nothing.
 *
 *   bw_pool_options o = {0};            // zero what you do not set
 *   o.flags = BW_POOL_LEARN_SIZE;       // one pool per stream of similar jobs:
 *   bw_pool *p;                         // writers start at the usual size
 *   if (bw_pool_create(&p, &o) != BW_OK) ...
 *   bw_init(&w, p, 0); ...; bw_release(&w);
 *   bw_pool_destroy(p); */
typedef struct bw_pool bw_pool;

/* Blocks a thread may keep per class in its own cache. */
#define BW_THREAD_CACHE_SLOTS 4

/* Pool flags, in numeric order. Any other bit is BW_EINVAL. */
#define BW_POOL_ZERO_ON_RETURN  0x1u /* every block a rent hands out reads as
                                        zeros (retained ones are zeroed on
                                        return with a store the compiler keeps,
                                        fresh ones on rent, kept large ones
                                        too, and growth never hands a block
                                        to the allocator's realloc): one
                                        user's bytes never reach the next
                                        renter. A writer's block is zeroed
                                        only as far as it let anything be
                                        written (a contiguous writer's
                                        capacity is then a window of its
                                        block, at least 4 KiB, that at least
                                        doubles when it grows, so a 20 KiB
                                        job in a 64 MiB block zeroes at most
                                        40 KiB); bw_pool_return zeroes the
                                        whole block, bw_detach's too */
#define BW_POOL_NO_THREAD_CACHE 0x2u /* no per-thread caches: every rent and
                                        return goes to the shared level */
#define BW_POOL_CHECKED         0x4u /* checked mode: a double return, a
                                        foreign block or a wrong capacity is
                                        reported (bw_set_report_hook) and
                                        refused, and a write past a block's
                                        end is caught at its return (a 16-byte
                                        canary after every block). Always on
                                        under BW_DEBUG and when the environment
                                        variable BW_CHECKED=1 is set (not in
                                        set-user-ID programs). Under
                                        AddressSanitizer a double return is
                                        reported in every mode. */
#define BW_POOL_LEARN_SIZE      0x8u /* learned starting size: each bw_release,
                                        bw_clear or bw_detach of a non-empty
                                        contiguous writer records its length;
                                        a writer's first block is then sized
                                        for the second largest of the last 16
                                        lengths (none while fewer than two are
                                        recorded), at most max_learned_size, by
                                        the growth rule. The one size outside
                                        bw_init's bound of 16 x the bytes: a
                                        pool for one stream of similar jobs */
#define BW_POOL_FILL            0x10u /* with checked mode: fill rented bytes
                                        with BW_FILL_RENTED and returned ones
                                        with BW_FILL_RETURNED, so a read of
                                        stale or uninitialised bytes shows */
#define BW_POOL_BYPASS          0x20u /* no pooling: every rent is a real
                                        allocation of exactly min_size bytes
                                        (at least 1; *capacity = that) and
                                        every return a real free, so
                                        AddressSanitizer's redzones, quarantine
                                        and stack traces apply in full; no
                                        large retention. Also on with the
                                        environment variable BW_BYPASS=1. */
#define BW_POOL_NO_LARGE_RETENTION 0x40u /* give blocks above the threshold
                                        back to the allocator at once (0.1's
                                        default) instead of keeping them */
#define BW_POOL_NO_LEARNED_GROWTH  0x80u /* a writer that outgrows the
                                        jump floor steps through the growth
                                        rule's sizes instead of jumping to
                                        the learned jump size, and no job is
                                        recorded for it */
#define BW_FILL_RENTED   0xA5
#define BW_FILL_RETURNED 0xDD

/* decay_ms: keep retained memory however long it is unused. */
#define BW_DECAY_NEVER UINT32_MAX

/* Options. Zero every field you do not set (= {0} or memset): 0 means the
 * default, written on each field, and a zeroed struct is the same as NULL. */
typedef struct bw_pool_options {
    size_t max_pooled_size;      /* threshold, power of two; 0 = 1 MiB        */
    size_t min_block_size;       /* smallest class, power of two >= 16; 0 = 16 */
    size_t max_blocks_per_class; /* shared-level bound per class; 0 = 32      */
    size_t max_retained_bytes;   /* bound on the pooled classes' retained
                                    bytes, thread caches included; 0 = 64 MiB */
    unsigned flags;              /* BW_POOL_* flags; 0 = none                 */
    const bw_allocator *allocator; /* NULL = bw_allocator_libc()              */
    /* Large retention: blocks ABOVE the threshold are kept when they come
     * back, so repeated large jobs reuse warm memory instead of fresh pages
     * from the backing allocator; a rent above the threshold is served from
     * a kept block of exactly that size. On unless BW_POOL_NO_LARGE_RETENTION
     * or BW_POOL_BYPASS. The defaults keep a 10 MiB job's 16 MiB block for
     * each of four threads, or one 64 MiB job's blocks past the threshold
     * (a contiguous one's 64 MiB and the 4 MiB it climbed through, bw_init's
     * bound): .NET's ArrayPool.Shared keeps up to 32 arrays per size per
     * core; jemalloc keeps freed pages for 10 s (decay). */
    size_t max_large_bytes;      /* bound on kept large bytes; 0 = 80 MiB     */
    size_t max_large_blocks;     /* bound on kept large blocks; 0 = 8         */
    /* The learned sizes: BW_POOL_LEARN_SIZE's starting size, and the jump
     * of a writer that outgrows the jump floor, are at most this.          */
    size_t max_learned_size;     /* 0 = 64 MiB                                */
    /* Decay: a retained block (pooled or large) that no rent has used for
     * decay_ms goes back to the allocator, at the first slow-path rent or
     * return after that: one the thread's cache does not serve, or one in
     * 1024 rents of each class that it does serve. A return of a block
     * above 32 KiB reads the clock, so such a block ages from its return
     * (and is given back at the first slow call decay_ms after it); the
     * rents and the small returns the cache serves read no clock, and a
     * class they touched counts as used at the thread's next slow call
     * (other classes are not affected). No background thread: a fully
     * idle process keeps up to the bounds until it calls again.            */
    uint32_t decay_ms;           /* 0 = 10000 (10 s, jemalloc's dirty decay);
                                    BW_DECAY_NEVER keeps everything          */
    /* A writer's first block is at least this (rounded up to a class), so a
     * small message does not climb 16 -> 32 -> 64 -> 128 B with a copy at
     * each step. An initial capacity or a caller's buffer is kept as given;
     * with BW_POOL_LEARN_SIZE the larger of it and the learned size wins
     * (bw_init's first block, and the first pooled block of a writer that
     * outgrows its caller's buffer). Above the threshold: EINVAL. */
    size_t min_first_block;      /* 0 = 512 B; 1 = the class of the first
                                    write (0.1)                              */
    /* The learned jump (on unless BW_POOL_NO_LEARNED_GROWTH). Every
     * bw_release, bw_clear or bw_detach of a contiguous writer holding more
     * than jump_floor bytes records its length and the time; the learned
     * jump size is the growth rule's size for the second largest of the
     * last 16 recorded within decay_ms (so one outlier job never decides
     * it alone, and a size no job has needed for decay_ms is forgotten),
     * nothing while fewer than two, at most max_learned_size. It ages when
     * the pool reads the clock for something else, as retained memory
     * does: a slow call, a job's end that records, a return above 32 KiB,
     * bw_pool_get_stats; a move reads none, so the first job after an
     * idle period may still go towards a forgotten size once, within the
     * bound on fresh memory, until its own end forgets it. A contiguous
     * writer's move, and its first block when the first write is larger
     * than min_first_block, take a block of it that the pool holds idle;
     * else they go as far towards it as bw_init's bound on fresh memory
     * allows: to it when it is at most 16 x the bytes the writer needs,
     * else to it divided by 16 as often as it takes to fit, so that each
     * later move can reach it in one step: a stream of 64 KiB jobs in
     * 8 KiB writes rents one 64 KiB block a job, of 1 MiB jobs 8 KiB then
     * their idle 1 MiB block (8 KiB copied); after 64 MiB jobs a 20 KiB
     * job gets the idle 64 MiB block, or 256 KiB when none is. Until two
     * are recorded (a fresh pool), a move to past jump_floor of a writer at
     * most at the threshold goes to 16 x max(capacity, jump_floor), at most
     * max_learned_size: a first 10 MiB job rents 16 KiB, 256 KiB, 4 MiB
     * (then doubles, resized in place above the threshold) instead of every
     * power of two; on Linux, where blocks from 2 MiB up are huge-page
     * mappings, it stops at 128 KiB first (the last 4 KiB pages the bound
     * asks for): 16 KiB, 128 KiB, then 2 MiB, widened in place.
     * Segmented, streaming and fixed writers neither record nor jump; an
     * initial capacity or a caller's buffer is kept as given (it may move
     * towards the jump when it is outgrown). 16 KiB: small messages (up to
     * a few hundred bytes) stay far below it. */
    size_t jump_floor;           /* 0 = 16 KiB (the threshold when that is
                                    smaller)                                 */
    /* A segmented writer's (bw_init_chain) first block, and the least of
     * every later one, rounded up by the growth rule (a class at or below
     * the threshold, a power of two above it): msgpack's vrefbuffer chunk
     * size. Later blocks double from there, as far as the bytes held
     * justify (see bw_init_chain). Above PTRDIFF_MAX / 2: EINVAL. */
    size_t chain_block_size;     /* 0 = 4 KiB, or min_first_block when that
                                    is larger                               */
} bw_pool_options;

/* Counters. Exact whenever no other thread is inside the pool. */
typedef struct bw_pool_stats {
    uint64_t rents;           /* successful bw_pool_rent calls (and writer growths) */
    uint64_t returns;         /* successful bw_pool_return calls                     */
    uint64_t hits;            /* rents served from retained blocks                    */
    uint64_t backing_allocs;  /* calls to the allocator's alloc/realloc that succeeded */
    uint64_t backing_frees;   /* calls to the allocator's free                        */
    size_t retained_bytes;    /* bytes held by the pool (thread caches and kept large
                                 blocks included)                                     */
    size_t outstanding_bytes; /* bytes rented and not yet returned                    */
    size_t large_retained_bytes; /* of retained_bytes, kept blocks above the threshold */
    size_t learned_size;      /* the first block writers now get (BW_POOL_LEARN_SIZE),
                                 by the growth rule; 0 when off or nothing learned    */
    uint64_t decayed_bytes;   /* bytes given back by decay (not trim), cumulative     */
    size_t learned_large_size; /* where a writer that outgrows the jump floor jumps;
                                 0 until learned (two writers) or when off            */
    uint64_t large_hits;      /* of hits, rents served from kept large blocks         */
} bw_pool_stats;

/* Create a pool. opts may be NULL (all defaults). Returns BW_OK and sets *out;
 * BW_EINVAL for a NULL out, a threshold or smallest class that is not a power
 * of two, a smallest class below 16 or above the threshold; BW_ENOMEM when the
 * pool's own bookkeeping cannot be allocated. On failure *out is NULL. */
BW_API int bw_pool_create(bw_pool **out, const bw_pool_options *opts);

/* The options pool (NULL = the shared pool) was created with, as it uses
 * them: every default filled in, min_first_block and chain_block_size as the
 * sizes writers get, allocator pointing at the pool's copy of the hook
 * (valid while the pool lives). Passing them to bw_pool_create makes a pool
 * that behaves the same. A NULL out is a no-op. */
BW_API void bw_pool_get_options(const bw_pool *pool, bw_pool_options *out);

/* Free every block the pool holds (every thread's cache included) and the
 * pool. Blocks still rented stay the caller's (checked mode reports them).
 * No other thread may be inside the pool during the call; after it returns,
 * no thread's exit touches the destroyed pool. NULL and bw_pool_shared() are
 * no-ops (the shared pool lives as long as the process). */
BW_API void bw_pool_destroy(bw_pool *pool);

/* The process-wide pool (default options), created on first use from any
 * thread. NULL only if that creation ran out of memory (tried again next
 * call). Never destroy it. */
BW_API bw_pool *bw_pool_shared(void);

/* The capacity bw_pool_rent(pool, min_size, ...) would give: the class size
 * at or below the threshold, min_size itself above it (bypass: min_size, at
 * least 1). 0 for a NULL pool or a size no rent gives (above PTRDIFF_MAX). */
BW_API size_t bw_pool_class_size(const bw_pool *pool, size_t min_size);

/* Rent a block of at least min_size bytes (0 gives the smallest class),
 * aligned to alignof(max_align_t) (a page from 16 KiB up with the libc
 * allocator: bw_allocator_libc); *capacity receives its usable size, which
 * must be passed back to bw_pool_return. Contents are unspecified (zeros for
 * pooled blocks under BW_POOL_ZERO_ON_RETURN). NULL when pool or capacity is
 * NULL, when min_size is above PTRDIFF_MAX, or when the allocator fails. */
BW_API void *bw_pool_rent(bw_pool *pool, size_t min_size, size_t *capacity);

/* Give a block back with the capacity bw_pool_rent reported. It is kept for
 * reuse (within the bounds) or freed to the backing allocator. The caller
 * must not touch the block afterwards. Returns BW_OK; BW_EINVAL for a NULL
 * pool or a capacity that no rent of this pool can have produced (and, in
 * checked mode, for a double return or a foreign block, after reporting it).
 * block NULL is a no-op returning BW_OK, as free(NULL) is. */
BW_API int bw_pool_return(bw_pool *pool, void *block, size_t capacity);

/* Give retained memory back to the backing allocator at once, whatever its
 * age: the shared level, the kept large blocks and the calling thread's
 * cache. Other live threads' caches go back when those threads exit, trim,
 * or decay. With the default allocator under glibc it then calls
 * malloc_trim(0), so that the freed memory leaves the process (glibc would
 * keep it in its heap); so does a decay that freed 1 MiB or more. NULL is a
 * no-op. */
BW_API void bw_pool_trim(bw_pool *pool);

/* Fill *out with the pool's counters (zeros for a NULL pool). Changes
 * nothing (no decay). */
BW_API void bw_pool_get_stats(bw_pool *pool, bw_pool_stats *out);

/* Checked mode reports through this hook: `what` names the call and the
 * problem ("bw_pool_return: block returned twice"). The default prints the
 * message on stderr and aborts. Pass NULL to restore the default. The hook
 * is process-wide; set it before pools are used from several threads. */
typedef void (*bw_report_fn)(void *ctx, const char *what, const void *block,
                             size_t capacity);
BW_API void bw_set_report_hook(bw_report_fn fn, void *ctx);

/* ======================================================================== */
/* 6. Writer: modes, init, release, flush                                   */
/* ======================================================================== */
/* A bw_writer is a small struct you own: on the stack, static, or inside your
 * own struct; the library never allocates the writer itself. Its fields are
 * private (section 11). An all-zero writer (BW_WRITER_INIT) is a valid, empty
 * contiguous writer on the shared pool that allocates nothing until its
 * first write.
 *
 * Words used below. "Held" bytes are written and not yet consumed or sent;
 * bw_len counts them. A "position" counts every byte written since init
 * (held, consumed or sent): bw_tell is the position of the next byte.
 *
 * Every bw_init_* may be called on a zeroed or released writer. Do not init a
 * writer that holds storage (release it first): the storage would leak. A
 * failed init leaves a valid, empty writer of that mode with the failure
 * recorded (bw_error). A NULL w gives BW_EINVAL. */
typedef struct bw_writer bw_writer;

/* Contiguous, on `pool` (NULL = the shared pool). With initial_capacity 0
 * nothing is allocated; else a block of the growth rule's size for it is
 * rented. BW_EOVERFLOW when that size cannot be represented; BW_ENOMEM.
 * Growth rule: a call that needs room moves to max(class(len + n), 2 x the
 * old capacity), where class() is the pool's power-of-two class at or below
 * its threshold and the next power of two above it; a move may go further,
 * towards the size the pool has learned its jobs past jump_floor (16 KiB)
 * end at (the learned jump, see bw_pool_options), or in a fresh pool 16 x
 * the capacity past jump_floor, so big jobs copy and fault in few blocks.
 * The bound is on fresh memory: a move takes a block of the learned jump's
 * size that the pool holds idle (thread cache, shared level, kept large
 * blocks) whatever its size, and otherwise never gets from the backing
 * allocator a block past 16 x the bytes the writer needs (len + n) further
 * than the growth rule does, whatever other jobs, threads or pool flags
 * did (BW_POOL_LEARN_SIZE's first block aside). So a stream of similar jobs
 * copies only its first block, a 20 KiB job after 64 MiB jobs takes the
 * idle 64 MiB block if it is free and else at most 256 KiB of fresh memory,
 * a burst on many threads shares what is idle (each idle block goes to
 * one writer) and reserves at most 16 x each, and a climb copies at most
 * about 1/15 of the job.
 * Above the threshold a block grows in place where the allocator can (on
 * Linux, by moving pages, never bytes). On Linux with the pool's own
 * allocator, a move that needs a fresh block there (no kept one of its
 * size) maps 16 x that block of address space and lets the writer use the
 * growth rule's capacity of it, widened in place as it grows, so a first
 * 10 MiB job goes from 4 to 16 MiB with no copy and no remap: pages never
 * written cost no memory, so the bound holds for the memory it takes (the
 * capacity), not the address space; the pool's outstanding_bytes counts
 * the address space while the writer holds it, and the block goes back
 * (release, detach, a later move) cut to the capacity. On Linux (5.14 and
 * up) a block a contiguous writer gets fresh from the backing allocator
 * has the pages it is about to fill faulted in with one call, not one
 * fault per page: its first write, or on a move the growth rule's size
 * (which the writer fills more than half of at once). A fresh block the
 * climb or the learned jump made larger than that (at most the
 * threshold's size) is the writer's in windows of the growth rule's
 * capacity, widened in place as it grows (on every platform, so
 * bw_capacity reports the window), each window's new pages faulted in
 * with one call: never a page the writer has not come within the growth
 * rule of. It goes back to the pool whole. */
BW_API int bw_init(bw_writer *w, bw_pool *pool, size_t initial_capacity);

/* Contiguous, starting in a buffer of the caller's (stack, static, inside a
 * struct): writes go there until it overflows, and only then does the writer
 * rent a pooled block (copying what it holds). So small messages allocate
 * nothing. The buffer must stay valid while w uses it; the library never
 * frees it. bw_release drops it (the writer then rents from its pool).
 * BW_EINVAL for a NULL buf or a size of 0. */
BW_API int bw_init_buffer(bw_writer *w, bw_pool *pool, void *buf, size_t size);

/* Give a contiguous writer that has no storage (after bw_init without an
 * initial capacity, BW_WRITER_INIT, bw_release or a detach) a caller's
 * buffer for its next writes, as bw_init_buffer's, keeping everything else
 * (pool, size limit): the first write goes there, and only a write that
 * overflows it rents a pooled block. For a client that reuses one writer
 * for many messages and starts each in its own stack buffer (bw_release
 * drops the buffer, so it is given again for the next message). Returns
 * BW_OK; BW_EINVAL for a NULL w; BW_EINVAL (recorded) for a NULL buf, a
 * size of 0, a writer that is not contiguous or has storage; while an
 * error is recorded, that error. */
BW_API int bw_set_first_buffer(bw_writer *w, void *buf, size_t size);

/* Segmented: blocks rented from `pool` (NULL = shared) and linked; a full
 * block is never copied, it stays where it is and a new one follows it. The
 * held bytes are a sequence of pieces over those blocks and over caller
 * memory linked by bw_append_ref, so a reference or a bw_move costs a piece
 * record, not a block (the records: an array rented from the pool when the
 * bytes first span two pieces). New blocks are max(class of the need,
 * the pool's chain_block_size (4 KiB), min(2 x the previous block, class
 * of the bytes held with the need)): a writer that keeps its bytes
 * doubles its blocks, one that consumes as it goes (a queue) gets blocks
 * of about what it holds, however long it runs.
 * Past the pool's threshold they keep doubling while the writer's blocks
 * above the threshold fit the pool's large retention bounds
 * (max_large_bytes, max_large_blocks; then the largest power of two that
 * still fits), so they all come back to the next job: a stream of similar
 * jobs up to those bounds (a 64 MiB chain by default) allocates nothing in
 * steady state. Beyond the bounds they double on as a contiguous writer's
 * block does (large blocks, huge-page mappings where the kernel has them),
 * so a longer job costs about what a fresh mapping of its size does, and
 * its blocks add up to at most twice its bytes. Without large retention,
 * new blocks are at most the threshold unless one request needs more (the
 * pool's classes keep them for the next job). Read the bytes
 * out with bw_iovec / bw_copy_out / bw_write_fd, or bw_pullup for one
 * contiguous view. Allocates nothing until the first write. */
BW_API int bw_init_chain(bw_writer *w, bw_pool *pool);

/* Streaming: bytes collect in a buffer of buffer_size bytes (0 = 64 KiB;
 * others rounded up by the growth rule; above PTRDIFF_MAX: BW_EOVERFLOW),
 * rented from `pool` at the first write. When a call needs room the buffer
 * lacks, the held bytes go to `sink` and the buffer is reused: memory stays
 * bounded whatever is written. A call that fits never sends; writes larger
 * than the buffer go to the sink straight from the caller's memory. Send the
 * rest with bw_flush; bw_release and bw_clear never send. A reserve or span
 * larger than the buffer takes a larger block, which goes back once its
 * bytes are sent (the next send or bw_flush): the buffer is then the
 * configured size again. The 64 KiB default is one pipe buffer (a 32 KiB
 * buffer streamed 20-50% slower through a pipe); it is above the thread
 * caches' 32 KiB, so for many short-lived streaming writers pass 32 KiB or
 * less: their buffer then comes from the lock-free thread cache (measured
 * about 25 ns per init-write-flush-release against 80 ns).
 *
 * The sink is called with n >= 1 on the calling thread, inside a writer call.
 * It returns how many bytes it took (1..n: the rest is offered again), or -1
 * with errno set: EINTR is retried, anything else records BW_EIO with errno
 * as the sink left it. 0, more than n, or below -1 is a broken sink: BW_EIO
 * with errno EIO, never a loop. A sink must not keep the pointer or call
 * into the writer it serves. A NULL sink is BW_EINVAL (recorded). */
typedef ptrdiff_t (*bw_sink_fn)(void *ctx, const void *data, size_t n);
BW_API int bw_init_sink(bw_writer *w, bw_pool *pool, size_t buffer_size,
                        bw_sink_fn sink, void *ctx);

/* Streaming to a file descriptor (sockets with send(MSG_NOSIGNAL), pipes with
 * SIGPIPE held off: a reader that has gone is BW_EIO with errno EPIPE, never
 * a signal). What fd is gets looked up at each send, so dup2 may point it
 * elsewhere at any time. fd < 0 is BW_EINVAL. The library never closes fd.
 * EAGAIN on a non-blocking fd records BW_EIO like any failure: for
 * non-blocking output, use a segmented writer and bw_write_fd instead. */
BW_API int bw_init_fd(bw_writer *w, bw_pool *pool, size_t buffer_size, int fd);

/* Fixed: the caller's buffer of `size` bytes, never grown, never freed, no
 * allocation ever (printf, put_hex, append_writer, append_ref and move
 * included). A call that does not fit fails with BW_EFULL (recorded),
 * nothing of it written; output that fits exactly succeeds. buf NULL with
 * size 0 is a writer with no room; NULL with size > 0 is BW_EINVAL. This is
 * the "print into this buffer" mode (mpack's fixed writer, cJSON's
 * PrintPreallocated). Example:
 *
 *   char line[64];
 *   bw_writer w;
 *   bw_init_fixed(&w, line, sizeof line);
 *   bw_puts(&w, "id=");  bw_put_dec_u64(&w, id);
 *   if (bw_error(&w) == BW_EFULL) ...     // did not fit: nothing partial
 *   const char *s = bw_cstr(&w);          // "id=..." in line; NULL when the
 *                                         // text took all 64 bytes (no NUL) */
BW_API int bw_init_fixed(bw_writer *w, void *buf, size_t size);

/* Give every block back to the pool (streaming: held bytes are dropped, not
 * sent: bw_flush first). w becomes empty, with no error and positions back at
 * 0, and keeps its mode, pool and parameters: reusable without init. A fixed
 * writer keeps its buffer; a caller's first buffer (bw_init_buffer) is
 * dropped. NULL is a no-op. */
BW_API void bw_release(bw_writer *w);

/* Drop the held bytes and the recorded error, keep the storage (segmented:
 * one block). Never sends. bw_tell becomes the position of the first dropped
 * byte. NULL is a no-op. */
BW_API void bw_clear(bw_writer *w);

/* The recorded error if there is one (nothing sent); else streaming: send
 * every held byte to the sink, other modes: BW_OK. So bw_flush is the one
 * check at the end of a run in every mode. BW_EIO (recorded) when the sink
 * fails: bytes it did not take stay held, and bw_clear_error then bw_flush
 * retries from the first of them.
 *
 *   bw_writer w;
 *   bw_init_fd(&w, NULL, 0, fd);
 *   for (i = 0; i < n; i++) bw_printf(&w, "%d,%s\n", rows[i].id, rows[i].name);
 *   int rc = bw_flush(&w);                        // one check
 *   if (rc == BW_EIO) fprintf(stderr, "write: %s\n", strerror(bw_errno(&w)));
 *   else if (rc != BW_OK) fprintf(stderr, "%s\n", bw_strerror(rc));
 *   bw_release(&w); */
BW_API int bw_flush(bw_writer *w);

/* The recorded (sticky) status: BW_OK if none; BW_EINVAL for NULL. */
BW__INLINE int bw_error(const bw_writer *w);

/* Forget the recorded error (and its errno) and keep the held bytes (to
 * retry output after BW_EIO). NULL is a no-op. */
BW_API void bw_clear_error(bw_writer *w);

/* The errno recorded with the current error: for BW_EIO the sink's (as it
 * left errno) or the kernel's, EIO for a broken sink; 0 for any other error
 * or NULL. With no error recorded: the errno of the last bw_write_fd, if it
 * returned BW_EIO (which it does not record), else 0. Kept until the error
 * is cleared (bw_clear_error, bw_clear, bw_release, a detach) or the next
 * bw_write_fd, so the one check at the end of a run still says why,
 * whatever errno has become since:
 *
 *   if (bw_flush(&w) == BW_EIO)
 *       fprintf(stderr, "write: %s\n", strerror(bw_errno(&w))); */
BW_API int bw_errno(const bw_writer *w);

/* A size limit: no call takes bw_tell past max_bytes (0: no limit, the
 * default of every init). A call that would fails with BW_ELIMIT, writes
 * nothing and records it, in every mode: writes, puts, printf, hex and
 * decimal, reserve and spans (a span's room and bw_free_capacity end at the
 * limit; bw_advance past it, within the block, is BW_ELIMIT), append_writer, append_ref and
 * move. A server building a response from untrusted input caps it this way
 * (as MaxBytesReader or client_max_body_size do). The limit counts
 * positions, so consumed and sent bytes count: for a streaming writer it
 * bounds everything sent since init or release. It is a setting like the
 * mode: bw_clear, bw_release and the detaches keep it (bw_release and the
 * detaches put positions back at 0, so the next job has the whole limit;
 * bw_clear keeps positions, so a writer that consumed still counts them).
 * A limit at or below bw_tell keeps the held bytes (nothing is dropped or
 * recorded by the call) and refuses every later byte until bw_truncate,
 * bw_release or a higher limit. Works while an error is recorded (it stays
 * recorded). Returns BW_OK; BW_EINVAL for a NULL w. */
BW_API int bw_set_limit(bw_writer *w, uint64_t max_bytes);

/* A segmented writer's block size, for it alone (the pool's
 * chain_block_size is every segmented writer's): the smallest block it
 * rents from then on, the trailer included; each later block doubles from
 * there by the pool's rule, as with chain_block_size. A writer of many
 * small pieces asks for small blocks, one of large bodies for large ones,
 * on one pool (msgpack's vrefbuffer takes a chunk size per buffer).
 * size is 0 (the pool's chain_block_size again, the default of
 * bw_init_chain) or 64 B to 1 GiB, rounded up to a power of two; a size
 * above the pool's largest class gives blocks of that class unless the
 * pool keeps large blocks. Callable at any time: the current block stays,
 * the next one follows the new size; bw_clear and bw_release keep it, an
 * init sets it back. Works while an error is recorded. Returns BW_OK;
 * BW_EINVAL (nothing recorded, nothing changed) for a NULL w, a size out
 * of range, or a writer of another mode (contiguous blocks grow by the
 * job's length, streaming and fixed buffers are sized at init). */
BW_API int bw_set_block_size(bw_writer *w, size_t size);

/* The pool the writer's blocks come from (the shared pool for a writer made
 * with a NULL pool); NULL for a fixed or NULL writer. */
BW_API bw_pool *bw_writer_pool(const bw_writer *w);

/* ======================================================================== */
/* 7. Writing                                                               */
/* ======================================================================== */
/* In every mode; each is BW_OK or an error that is recorded and changes
 * nothing (a streaming call larger than its buffer may have sent a prefix:
 * bw_tell says how much was accepted). While an error is recorded, each
 * returns it at once. A source pointer may point into the writer's own held
 * bytes, in every mode, even when the call grows, links or sends.
 *
 * The fast path is inline: a compare, a store and an add when the bytes fit;
 * only the out-of-line cold path knows the mode (move to a bigger block, link
 * a block, flush, or BW_EFULL). */

/* Append n bytes from src. n = 0 is BW_OK (src may then be NULL); src NULL
 * with n > 0 is BW_EINVAL. */
BW__INLINE int bw_write(bw_writer *w, const void *src, size_t n);

/* The bytes of the NUL-terminated string s, without its NUL. NULL: EINVAL. */
BW_API int bw_puts(bw_writer *w, const char *s);

/* printf straight into the writer. Formats once when the output fits the
 * free space (or, with little free space, a 256-byte stack buffer); else a
 * second time, once its length is known, where it will stay: a new block
 * (contiguous: the old one goes back after; segmented: linked), so
 * arguments that point into the held bytes, bw_cstr's string included, are
 * read intact. A streaming writer formats output up to its buffer size in a
 * block of that size at most, and sends longer output straight to the sink
 * after the held bytes, in pieces of 4 KiB (the FILE's buffer, on the
 * stack), whatever the writer's buffer size: a sink call per piece, so
 * its memory stays bounded (without the FILE adapter, see bw_fopen, the
 * whole output is formatted first, in a block from the pool). A fixed
 * writer never allocates: output that does not fit its free space with a
 * byte to spare is formatted on the stack when shorter than 1 KiB; longer,
 * it is formatted in the buffer after the held bytes move down, and its
 * arguments must not point into the held bytes. Output that fits exactly
 * succeeds at every length, but for one case: output of 1 KiB or more that
 * alone fills a fixed buffer holding nothing needs one byte more
 * (vsnprintf's NUL has nowhere else to go). BW_EINVAL for a NULL fmt or an
 * encoding error; BW_EOVERFLOW for output longer than INT_MAX (both as the
 * C library's vsnprintf reports them: MinGW's reports neither an
 * unconvertible %ls nor a width past INT_MAX); BW_ELIMIT past a size limit.
 * Bytes past bw_len are unspecified after. */
BW_API int bw_printf(bw_writer *w, const char *fmt, ...) BW__PRINTF(2, 3);
BW_API int bw_vprintf(bw_writer *w, const char *fmt, va_list ap) BW__PRINTF(2, 0);

/* Typed writes: fixed-width integers and IEEE-754 floats in little (le) or
 * big (be) endian; unsigned LEB128 varints (1..10 bytes) and zig-zag signed
 * varints; each writes exactly its bytes (a fixed writer with exactly that
 * much room takes them). */
BW__INLINE int bw_put_u8(bw_writer *w, uint8_t v);
BW__INLINE int bw_put_u16le(bw_writer *w, uint16_t v);
BW__INLINE int bw_put_u32le(bw_writer *w, uint32_t v);
BW__INLINE int bw_put_u64le(bw_writer *w, uint64_t v);
BW__INLINE int bw_put_u16be(bw_writer *w, uint16_t v);
BW__INLINE int bw_put_u32be(bw_writer *w, uint32_t v);
BW__INLINE int bw_put_u64be(bw_writer *w, uint64_t v);
BW__INLINE int bw_put_i16le(bw_writer *w, int16_t v);
BW__INLINE int bw_put_i32le(bw_writer *w, int32_t v);
BW__INLINE int bw_put_i64le(bw_writer *w, int64_t v);
BW__INLINE int bw_put_i16be(bw_writer *w, int16_t v);
BW__INLINE int bw_put_i32be(bw_writer *w, int32_t v);
BW__INLINE int bw_put_i64be(bw_writer *w, int64_t v);
BW__INLINE int bw_put_f32le(bw_writer *w, float v);
BW__INLINE int bw_put_f64le(bw_writer *w, double v);
BW__INLINE int bw_put_f32be(bw_writer *w, float v);
BW__INLINE int bw_put_f64be(bw_writer *w, double v);
BW__INLINE int bw_put_uvarint(bw_writer *w, uint64_t v);
BW__INLINE int bw_put_svarint(bw_writer *w, int64_t v);

/* One byte, (unsigned char)c, as fputc takes it: bw_put_u8 for a char. */
BW__INLINE int bw_putc(bw_writer *w, int c);

/* Decimal text of v ("-12", "18446744073709551615"), no printf, no NUL: what
 * a JSON or CSV writer needs for an integer. */
BW_API int bw_put_dec_u64(bw_writer *w, uint64_t v);
BW_API int bw_put_dec_i64(bw_writer *w, int64_t v);

/* Decimal text of a double or a float: the shortest digits that strtod (for
 * bw_put_dec_f64) or strtof (bw_put_dec_f32) read back as exactly v, and of
 * those the nearest v (what Go's strconv.FormatFloat(v, 'g', -1, 64),
 * Python's repr and JavaScript print), laid out as printf("%.17g") would lay
 * them out: plain digits when the decimal exponent x of the first digit is
 * in -4..16, exponent form otherwise (at least two exponent digits), no
 * trailing zeros, no trailing point, "-" for a negative v, -0 included:
 *
 *   0.1 -> "0.1"        1.0 -> "1"          100000.0 -> "100000"
 *   123.456 -> "123.456"                     -0.0 -> "-0"
 *   1e16 -> "10000000000000000"              1e17 -> "1e+17"
 *   0.0001 -> "0.0001"  0.00001 -> "1e-05"   1.5e300 -> "1.5e+300"
 *   0.1 + 0.2 -> "0.30000000000000004"       DBL_MAX -> "1.7976931348623157e+308"
 *   5e-324 (the smallest subnormal) -> "5e-324"
 *   1.1f -> "1.1" (bw_put_dec_f32; as a double, 1.100000023841858)
 *   infinities -> "inf", "-inf"; every NaN, whatever its sign -> "nan"
 *
 * At most BW_DEC_F64_MAX (24) and BW_DEC_F32_MAX (18) bytes; no NUL, no
 * locale (the point is always '.'), no allocation but the put's own.
 * Returns BW_OK or what bw_write returns for those bytes: BW_EINVAL for a
 * NULL w, the recorded error while one is, BW_ENOMEM when growing fails,
 * BW_EIO when a streaming writer's send fails, BW_EFULL when a fixed writer
 * lacks room for all of them (recorded; nothing of the text written). */
#define BW_DEC_F64_MAX 24 /* "-2.2250738585072014e-308" */
#define BW_DEC_F32_MAX 18 /* -1e16f, -10000000272564224: "-10000000000000000" */
BW_API int bw_put_dec_f64(bw_writer *w, double v);
BW_API int bw_put_dec_f32(bw_writer *w, float v);

/* The same digits for JSON, and into a room of known size. The flags
 * (any combination; 0 is bw_put_dec_f64's text):
 *   BW_DEC_JSON        finite values only: a NaN or an infinity writes
 *                      nothing and returns BW_ENONFINITE, not recorded (the
 *                      writer is fine: write "null", or fail your own way)
 *   BW_DEC_POINT_ZERO  ".0" after a text with neither point nor exponent,
 *                      so a parser reads a real back, not an integer:
 *                      3.0 -> "3.0", 1e16 -> "10000000000000000.0",
 *                      -0.0 -> "-0.0", 1e17 -> "1e+17" (unchanged)
 *   BW_DEC_EXP_SHORT   the exponent without "+" and leading zeros:
 *                      1e17 -> "1e17", 1e-5 -> "1e-5", 1.5e300 -> "1.5e300"
 *   BW_DEC_JSON_REAL   all three: jansson's and yyjson's layout of a real
 * A flags argument, not one JSON call, because the JSON writers that asked
 * agree only on refusing NaN and infinities: cJSON prints printf's layout
 * (BW_DEC_JSON: "3", "1e+17"), jansson and yyjson mark a real with ".0"
 * and drop the exponent's "+" and zeros (BW_DEC_JSON_REAL). The text reads
 * back exactly with strtod (strtof for a float) and every JSON parser
 * that rounds correctly, whatever the flags. At most BW_DEC_F64_MAX bytes
 * for either type (a float's "-10000000000000000.0" is 20). Unknown flags
 * are BW_EINVAL, not recorded. A NULL w is BW_EINVAL and a recorded error
 * is returned first; otherwise what bw_put_dec_f64 returns. */
#define BW_DEC_JSON       1u
#define BW_DEC_POINT_ZERO 2u
#define BW_DEC_EXP_SHORT  4u
#define BW_DEC_JSON_REAL  (BW_DEC_JSON | BW_DEC_POINT_ZERO | BW_DEC_EXP_SHORT)
BW_API int bw_put_dec_f64_flags(bw_writer *w, double v, unsigned flags);
BW_API int bw_put_dec_f32_flags(bw_writer *w, float v, unsigned flags);

/* The text with flags into dst's room bytes, as snprintf without its NUL:
 * *len (may be NULL) gets the text's length, and BW_OK when it fits in
 * room (stored, and no byte after it touched), BW_EFULL when it does not
 * (nothing stored: room 0 and a NULL dst ask for the length first). So an
 * exact-room buffer (cJSON's ensure(), a fixed record) takes the text in
 * place with no local copy, and grows by the length only when it must:
 *
 *   size_t n;
 *   int rc = bw_fmt_dec_f64(out + used, size - used, d, BW_DEC_JSON, &n);
 *   if (rc == BW_EFULL && grow(n) == 0)       // room for n more bytes
 *       rc = bw_fmt_dec_f64(out + used, size - used, d, BW_DEC_JSON, &n);
 *   if (rc == BW_ENONFINITE) ...               // NaN or inf: no JSON number
 *
 * BW_ENONFINITE (*len 0, nothing stored) as for the puts; BW_EINVAL for
 * unknown flags or a NULL dst with room > 0. No writer, no allocation:
 * with room for BW_DEC_F64_MAX bytes it costs what the cursor form does,
 * with less a copy of the text from the stack. */
BW_API int bw_fmt_dec_f64(void *dst, size_t room, double v, unsigned flags, size_t *len);
BW_API int bw_fmt_dec_f32(void *dst, size_t room, float v, unsigned flags, size_t *len);

/* Lowercase hex of n bytes at src (2n characters). src NULL with n > 0 is
 * BW_EINVAL; 2n not representable is BW_EOVERFLOW. */
BW_API int bw_put_hex(bw_writer *w, const void *src, size_t n);

/* Zero bytes up to the next multiple of align, counted in positions:
 * afterwards bw_tell(w) % align == 0 (0..align-1 bytes; none when it
 * already is). What a binary format's alignment rule needs (Arrow's
 * buffers start at multiples of 8, a file meant to be mapped pads to a
 * page): the position is bw_tell, so a writer that consumed or sent bytes
 * still pads the whole output. align is a power of two, 1 to BW_PAD_MAX
 * (a page), else BW_EINVAL (recorded). The other errors are bw_write's for
 * that many bytes (BW_ELIMIT, BW_EFULL, BW_ENOMEM, BW_EIO), recorded, with
 * nothing of the pad written (but where bw_write itself may send a prefix:
 * a streaming buffer of fewer than 64 bytes). A segmented writer pads in
 * its current block's free space, then a new block, like any write. */
#define BW_PAD_MAX 4096
BW_API int bw_pad(bw_writer *w, size_t align);

/* Make sure at least n bytes are free (bw_free_capacity(w) >= n) without
 * another cold path. n = 0 is BW_OK without allocating. A streaming writer
 * asked for more than its buffer sends what it holds and takes a block big
 * enough; a segmented one starts a new block when the last has less. */
BW_API int bw_reserve(bw_writer *w, size_t n);

/* Zero-copy: a pointer to at least max(size_hint, 1) writable bytes where the
 * next byte goes; *avail (may be NULL) receives bw_free_capacity(w). Write
 * into it, then commit what you wrote with bw_advance. NULL on failure (the
 * error is recorded, *avail is 0). Segmented: when the last block has less
 * than the hint, a new block is started and the old block's rest is skipped.
 *
 *   size_t room;
 *   char *p = bw_get_span(&w, 32, &room);       // >= 32 bytes
 *   if (p) bw_advance(&w, (size_t)snprintf(p, room, "%d", v));
 *
 * Bytes written into a span count only once advanced: any other call may
 * discard them (a moved block is copied up to bw_len only). The cursor
 * encoders (bw_enc_*, below) write into a span; bw_advance_to commits it. */
BW__INLINE void *bw_get_span(bw_writer *w, size_t size_hint, size_t *avail);

/* A span of n bytes only if they are free now: where the next byte goes
 * when at least n bytes (n = 0: 1) are free, else NULL, with no other
 * effect in either case: nothing is made room for, sent, skipped or
 * recorded. For a packer that knows the worst case of an encoding before
 * it knows the length (msgpack: 9 bytes for any integer): it encodes
 * straight into the span when the worst case is free, and otherwise takes
 * the exact-size way (bw_put_*), so a fixed writer fails only when the
 * value's own bytes do not fit, and a segmented writer skips nothing.
 * NULL while an error is recorded, for a NULL w, and past a size limit.
 * Inline: a compare. Commit with bw_advance_to (or bw_advance).
 *
 *   unsigned char *p = bw_try_span(&w, 9);
 *   if (p != NULL) bw_advance_to(&w, encode(p, v));  // the usual case
 *   else put_exact(&w, v);                           // near the end */
BW__INLINE void *bw_try_span(bw_writer *w, size_t n);

/* Commit n bytes written into the span. n beyond the free space is BW_EINVAL
 * (recorded), nothing changed; BW_ELIMIT (recorded) when the block has room
 * for n but a size limit does not (bw_set_limit). */
BW_API int bw_advance(bw_writer *w, size_t n);

/* Commit the span up to `end`, one past the last byte written into it: the
 * same as bw_advance(w, end - span start), where the span starts at the
 * pointer bw_get_span returned (the next byte; bw_advance and every write
 * move it). Returns BW_OK; BW_EINVAL for a NULL w (not recorded); while an
 * error is recorded, that error (nothing committed); BW_EINVAL, recorded and
 * nothing changed, for a NULL end, an end before the span's start, or an end
 * past its free space (bw_free_capacity; BW_ELIMIT instead when only a size
 * limit, not the block, ends the space there). end == the span's start commits
 * nothing and is BW_OK. The cursor use:
 *
 *   size_t room;
 *   unsigned char *p = bw_get_span(&w, 4 + 10 + 8, &room);
 *   if (p == NULL) return bw_error(&w);       // recorded: ENOMEM, EFULL...
 *   p = bw_enc_u32le(p, id);
 *   p = bw_enc_uvarint(p, n);
 *   p = bw_enc_f64le(p, x);
 *   bw_advance_to(&w, p);                     // 13..22 bytes committed */
BW__INLINE int bw_advance_to(bw_writer *w, const void *end);

/* The cursor: encoders for a serializer's tight loop over a span. Each
 * stores its bytes at p exactly as the matching bw_put_* does and returns p
 * plus their length. No checks of any kind: p must have room (a span of at
 * least the sum of the lengths; a varint takes 1..10 bytes), and nothing is
 * committed until bw_advance_to. Pure stores, no writer: they work on any
 * memory, and a loop of them costs what the same stores written by hand do.
 * bw_enc_bytes copies n bytes from src (which must not overlap p's n bytes;
 * NULL only with n == 0). */
BW__INLINE unsigned char *bw_enc_u8(unsigned char *p, uint8_t v);
BW__INLINE unsigned char *bw_enc_u16le(unsigned char *p, uint16_t v);
BW__INLINE unsigned char *bw_enc_u32le(unsigned char *p, uint32_t v);
BW__INLINE unsigned char *bw_enc_u64le(unsigned char *p, uint64_t v);
BW__INLINE unsigned char *bw_enc_u16be(unsigned char *p, uint16_t v);
BW__INLINE unsigned char *bw_enc_u32be(unsigned char *p, uint32_t v);
BW__INLINE unsigned char *bw_enc_u64be(unsigned char *p, uint64_t v);
BW__INLINE unsigned char *bw_enc_i16le(unsigned char *p, int16_t v);
BW__INLINE unsigned char *bw_enc_i32le(unsigned char *p, int32_t v);
BW__INLINE unsigned char *bw_enc_i64le(unsigned char *p, int64_t v);
BW__INLINE unsigned char *bw_enc_i16be(unsigned char *p, int16_t v);
BW__INLINE unsigned char *bw_enc_i32be(unsigned char *p, int32_t v);
BW__INLINE unsigned char *bw_enc_i64be(unsigned char *p, int64_t v);
BW__INLINE unsigned char *bw_enc_f32le(unsigned char *p, float v);
BW__INLINE unsigned char *bw_enc_f64le(unsigned char *p, double v);
BW__INLINE unsigned char *bw_enc_f32be(unsigned char *p, float v);
BW__INLINE unsigned char *bw_enc_f64be(unsigned char *p, double v);
BW__INLINE unsigned char *bw_enc_uvarint(unsigned char *p, uint64_t v); /* 1..10 bytes */
BW__INLINE unsigned char *bw_enc_svarint(unsigned char *p, int64_t v);  /* zig-zag */
BW__INLINE unsigned char *bw_enc_bytes(unsigned char *p, const void *src, size_t n);

/* The cursor form of bw_put_dec_f64 and bw_put_dec_f32: the same bytes
 * stored at p, which must have room for BW_DEC_F64_MAX (BW_DEC_F32_MAX)
 * bytes whatever v is; returns p plus their length. Out of line (a few
 * hundred instructions; bench/BENCHMARKS.md), with no writer and no check. */
BW_API unsigned char *bw_enc_dec_f64(unsigned char *p, double v);
BW_API unsigned char *bw_enc_dec_f32(unsigned char *p, float v);

/* ======================================================================== */
/* 8. Positions: tell, patch, truncate                                      */
/* ======================================================================== */
/* Position of the next byte: every byte written since init, release or
 * detach (held, consumed or sent). bw_tell(w) == base + bw_len(w), where base
 * is the position of the first held byte. 0 for NULL. */
BW__INLINE uint64_t bw_tell(const bw_writer *w);

/* Overwrite n bytes at position pos with src (src may overlap them). Needs
 * base <= pos and pos + n <= bw_tell(w), else BW_EINVAL (recorded), nothing
 * changed; n = 0 is BW_OK. Streaming: only while those bytes are still held
 * (not yet sent): back-patch before the buffer fills, or use a segmented
 * writer. Bytes linked by reference (bw_append_ref) are never written: the
 * references in the patched range are first copied into one block of the
 * writer's own and their done is called (BW_ENOMEM, recorded, nothing
 * changed, when that block cannot be rented). Bytes in the writer's own
 * blocks are patched in place with no memory, whatever the source, but a
 * source in a reference being copied or one that overlaps two of the
 * pieces patched, which is copied first (64 bytes on the stack, more from
 * the pool). Segmented: finding pos costs O(log pieces). Works while an
 * error is recorded (the held bytes are intact after any failure; the
 * error stays). The typed forms store like the matching bw_put_*.
 *
 *   uint64_t at = bw_tell(&w);
 *   bw_put_u32le(&w, 0);                        // length placeholder
 *   write_body(&w);
 *   bw_patch_u32le(&w, at, (uint32_t)(bw_tell(&w) - at - 4)); */
BW_API int bw_patch(bw_writer *w, uint64_t pos, const void *src, size_t n);
BW__INLINE int bw_patch_u8(bw_writer *w, uint64_t pos, uint8_t v);
BW__INLINE int bw_patch_u16le(bw_writer *w, uint64_t pos, uint16_t v);
BW__INLINE int bw_patch_u32le(bw_writer *w, uint64_t pos, uint32_t v);
BW__INLINE int bw_patch_u64le(bw_writer *w, uint64_t pos, uint64_t v);
BW__INLINE int bw_patch_u16be(bw_writer *w, uint64_t pos, uint16_t v);
BW__INLINE int bw_patch_u32be(bw_writer *w, uint64_t pos, uint32_t v);
BW__INLINE int bw_patch_u64be(bw_writer *w, uint64_t pos, uint64_t v);
BW__INLINE int bw_patch_i16le(bw_writer *w, uint64_t pos, int16_t v);
BW__INLINE int bw_patch_i32le(bw_writer *w, uint64_t pos, int32_t v);
BW__INLINE int bw_patch_i64le(bw_writer *w, uint64_t pos, int64_t v);
BW__INLINE int bw_patch_i16be(bw_writer *w, uint64_t pos, int16_t v);
BW__INLINE int bw_patch_i32be(bw_writer *w, uint64_t pos, int32_t v);
BW__INLINE int bw_patch_i64be(bw_writer *w, uint64_t pos, int64_t v);
BW__INLINE int bw_patch_f32le(bw_writer *w, uint64_t pos, float v);
BW__INLINE int bw_patch_f64le(bw_writer *w, uint64_t pos, double v);
BW__INLINE int bw_patch_f32be(bw_writer *w, uint64_t pos, float v);
BW__INLINE int bw_patch_f64be(bw_writer *w, uint64_t pos, double v);

/* Drop the bytes from position pos on (undo back to a mark taken with
 * bw_tell). Needs base <= pos <= bw_tell(w), else BW_EINVAL (recorded).
 * Works while an error is recorded, and leaves it recorded: a frame whose
 * write failed is rolled back first, then the error is dealt with (a
 * streaming writer whose sink failed still holds the unsent bytes, so a
 * mark among them can be truncated to; sent bytes are gone). References
 * dropped get their done call. */
BW_API int bw_truncate(bw_writer *w, uint64_t pos);

/* ======================================================================== */
/* 9. Reading out                                                           */
/* ======================================================================== */
/* Functions taking a const writer never record an error and work while one
 * is recorded. Offsets on the read side count from the first held byte; for
 * a writer that never consumed or sent anything they equal positions. On a
 * NULL writer the accessors give 0 / NULL. */

/* Bytes held. */
BW__INLINE size_t bw_len(const bw_writer *w);

/* The held bytes when they lie in one block (where the next byte goes when
 * none are held); NULL when they span blocks (segmented: use bw_pullup) or
 * there is no storage yet. See INVALIDATION above. */
BW__INLINE const unsigned char *bw_data(const bw_writer *w);

/* bw_len plus bw_free_capacity (so bw_len while an error is recorded). */
BW__INLINE size_t bw_capacity(const bw_writer *w);

/* What the next writes can take without the cold path: the rest of the block
 * (contiguous: of its window, where it has one, see bw_init; segmented: of
 * the last block; streaming: of the buffer; fixed: of buf),
 * no further than a size limit (bw_set_limit), and 0 while an error is
 * recorded (every write then returns it). Consumed room is not counted.
 * Inline, a load and a subtract: the cheap way to know that a write of n
 * bytes will not move, link or send the held bytes (n <= this), as
 * bw_try_span's test is. */
BW__INLINE size_t bw_free_capacity(const bw_writer *w);

/* Make the held bytes contiguous and return them: no copy when they already
 * are (bw_data); else one block of the growth rule's size for bw_len, one
 * copy, the old blocks back to the pool. NULL with BW_ENOMEM recorded on
 * failure, nothing changed; NULL while an error is recorded. */
BW_API const unsigned char *bw_pullup(bw_writer *w);

/* bw_pullup, then a NUL after the held bytes (not counted in bw_len), growing
 * when needed (never sending): a C string of everything held. NULL while an
 * error is recorded (check bw_error first: a text cut short by BW_EFULL or
 * BW_ELIMIT is never shown as if whole), for a NULL w, and, with BW_ENOMEM
 * recorded, when growing fails. A full fixed or streaming buffer (no byte
 * left for the NUL) gives NULL and records nothing: the writer stays usable
 * (size a fixed buffer one byte larger than the text it must hold). A writer
 * with no storage gives a static "". */
BW_API const char *bw_cstr(bw_writer *w);

/* Fill iov[0..max) with the held bytes in order (no empty entries) and return
 * how many entries all of them need: a result above max means iov holds only
 * the first max pieces (call with max 0 to ask: no walk, O(1)). For writev. */
BW_API size_t bw_iovec(const bw_writer *w, struct iovec *iov, size_t max);

/* Copy n held bytes from offset into dst. offset + n beyond bw_len (or offset
 * beyond bw_len with n = 0) is BW_EINVAL. */
BW_API int bw_copy_out(const bw_writer *w, size_t offset, void *dst, size_t n);

/* Drop the first n held bytes (queue use). Never copies: the start moves, and
 * held bytes move down only in a later cold path. Segmented: emptied blocks
 * go back to the pool at once. n > bw_len is BW_EINVAL (recorded). Works
 * while an error is recorded. */
BW_API int bw_consume(bw_writer *w, size_t n);

/* Append a copy of src's held bytes to dst, any modes; dst == src appends a
 * second copy. src's recorded error is ignored; dst's refuses the call. */
BW_API int bw_append_writer(bw_writer *dst, const bw_writer *src);

/* Hand the storage to the caller: returns the block with the held bytes at
 * its start and sets *len and *capacity (the block's real capacity; either
 * pointer may be NULL). Give it back with
 *   bw_pool_return(bw_writer_pool(w), block, capacity);
 * (not free()). The writer becomes empty, with no error and positions at 0,
 * and keeps its mode and pool. Segmented writers are pulled up first;
 * streaming ones hand out their buffer with the unsent bytes; a caller's
 * first buffer is copied into a pooled block. NULL with 0 and 0 for a writer
 * with no storage; NULL with BW_EINVAL recorded for a fixed writer; NULL with
 * BW_ENOMEM recorded (nothing changed) when a needed copy cannot be made.
 *
 *   size_t len, cap;
 *   void *b = bw_detach(&w, &len, &cap);        // the bytes are yours now
 *   queue_for_later(b, len);
 *   ...
 *   bw_pool_return(bw_writer_pool(&w), b, cap); // when done: not free() */
BW_API void *bw_detach(bw_writer *w, size_t *len, size_t *capacity);

/* Hand the held bytes over as memory the caller releases with free(), with
 * a NUL after them (not counted in *len, which may be NULL): what an API
 * that returns a malloc'd string (cJSON_Print, a message buffer) needs.
 * Every mode. No copy when the writer's one block already is such memory:
 * a pool on the default allocator (not in checked mode) rents blocks from
 * malloc below 2 MiB (larger ones are mapped from the kernel on Linux, from
 * malloc elsewhere); else one copy
 * into malloc(bw_len + 1), and the writer's storage goes back to its pool
 * (references get their done call). Nothing held gives "" (still to free).
 * What a hand-off costs the pool decides: the block handed over leaves it
 * (counted as a return and a backing free; no block is allocated in its
 * place then), so the next rent of that size allocates one; a copy costs
 * it nothing, its block goes back to it. So bytes of at most 64 KiB in a
 * block of a class the thread cache keeps (to 1 MiB by default; none with
 * BW_POOL_NO_THREAD_CACHE, _BYPASS, _ZERO_ON_RETURN or checked mode) are
 * copied into malloc(bw_len + 1), whatever their length: inline, in the
 * caller's code (so it is the caller's malloc), the copy costs what the
 * caller's own malloc, memcpy and bw_release do, and the next job rents
 * the same block (a 252-byte text handed over in its 512-byte first block
 * cost 3.6x a copy). Longer ones are handed over, and the
 * caller's memory still fits: a block much larger than the bytes with
 * their NUL (more than twice them, plus 64 bytes) is shrunk with the
 * allocator's realloc (a realloc that fails leaves it whole).
 * The writer becomes empty as with bw_detach (no error, positions at 0,
 * mode, pool and a fixed writer's buffer kept). Works while an error is
 * recorded. NULL for a NULL w; NULL with BW_ENOMEM recorded, nothing
 * changed, when malloc fails.
 *
 *   char *s = bw_detach_malloc(&w, NULL);     // was: malloc + memcpy
 *   return s;                                 // the caller free()s it */
BW__INLINE void *bw_detach_malloc(bw_writer *w, size_t *len);

/* Called once when bytes given to bw_append_ref leave the writer, with the
 * pointer and length given there. It must not call into that writer. */
typedef void (*bw_done_fn)(void *ctx, const void *data, size_t n);

/* Append n bytes at data by reference. Segmented: the caller's memory is
 * linked, not copied; it must stay valid and unchanged until done(ctx, data,
 * n) is called, exactly once, when the last of those bytes leaves the writer:
 * consumed, sent (bw_write_fd), truncated away, copied out by bw_pullup,
 * bw_cstr or a detach, copied by a patch into them, or dropped by bw_clear
 * or bw_release. Memory inside the writer's own blocks is copied instead
 * (consume or truncate could give that block back under the link); caller
 * memory is linked however often it is given, memory already linked
 * included, each link with its own done. A link costs O(1) amortized and
 * no block: one piece record (32 bytes on 64-bit, and 32 beside it that
 * only a link with a done writes, in chunks rented from the pool that
 * never move and are kept until release), and the
 * writes after it go on in the current block's free space. Every other
 * mode: a copy, as bw_write, then done at once. Every read-out sees these
 * bytes like any others. done may be NULL. n = 0 is BW_OK (done called at
 * once). On failure done is not called (the memory stays the caller's):
 * data NULL with n > 0 is BW_EINVAL; n above PTRDIFF_MAX BW_EOVERFLOW;
 * BW_ENOMEM when the piece records cannot grow; each recorded. A recorded
 * error refuses the call. */
BW_API int bw_append_ref(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx);

/* Append src's held bytes to dst and empty src, as bw_consume of all of
 * them would (src's positions go on; it stays usable). Between two
 * segmented writers of one pool src's pieces are relinked after dst's,
 * references included: whatever the length, no byte is copied and
 * pointers into those bytes stay valid, but for a piece in a block of
 * src's more than 16 times its size (a small header), which is copied
 * into dst's current block when it fits there, so that its block goes
 * back rather than being held for a few bytes. dst's next write goes on
 * in its current block, or in src's last one when that has more free
 * room (dst takes it). The only memory taken is room for src's piece
 * records in dst's (BW_ENOMEM, recorded in dst, nothing moved). Any other
 * pair of modes (a contiguous src into a segmented dst included): a copy,
 * as bw_append_writer (a streaming dst may send), and src is emptied only
 * when it succeeded. BW_EINVAL (recorded in dst) for NULL src, src ==
 * dst, or a streaming src (its bytes are on their way to its sink). dst's
 * recorded error refuses the call; src's is returned without being
 * recorded in dst, and nothing moves.
 *
 *   bw_put_u32be(&hdr, (uint32_t)bw_len(&body));   // length known now
 *   bw_move(&hdr, &body);                           // header, then body
 *   bw_write_fd(&hdr, fd, NULL);                    // one writev */
BW_API int bw_move(bw_writer *dst, bw_writer *src);

/* ======================================================================== */
/* 10. Output: file descriptors and FILE*                                   */
/* ======================================================================== */
/* Send the held bytes to fd with writev (sockets: sendmsg with MSG_NOSIGNAL;
 * pipes: SIGPIPE held off and the one a write raised taken back, so EPIPE is
 * BW_EIO, never a signal; a SIGPIPE the caller had pending stays pending, and
 * no second one joins it), consuming what went out. *written (may be NULL) gets the count sent by
 * this call. On a streaming writer the sink is not called. BW_OK when all
 * went out; BW_EIO with errno set (EAGAIN, EPIPE, ...; a write of 0 gives
 * EIO) *without* recording it: the rest stays held and calling again
 * continues where it stopped. The errno is also kept in the writer, as
 * for a recorded BW_EIO: bw_errno gives it until the next bw_write_fd (or
 * clear, release). A writer with a recorded error sends nothing
 * and returns that error. Nothing held: BW_OK without a system call.
 *
 * Windows: fd is a C runtime descriptor (_open, _pipe, 1 for stdout), sent
 * to with _write piece by piece; there is no SIGPIPE to guard against. A
 * descriptor in text mode (the default there) writes '\n' as "\r\n": open
 * it with _O_BINARY (or _setmode it) for the bytes as they are.
 *
 *   while (bw_len(&w) > 0) {                 // non-blocking socket
 *       if (bw_write_fd(&w, sock, NULL) == BW_OK) break;
 *       if (errno != EAGAIN) goto fail;
 *       wait_writable(sock);                  // poll(), then go on
 *   } */
BW_API int bw_write_fd(bw_writer *w, int fd, size_t *written);

/* A write-only FILE* over the writer, any mode, so existing fprintf code
 * writes into it (fopencookie on Linux with glibc or musl, funopen on the
 * BSDs, macOS and Android; Windows has neither: no bw_fopen there).
 * Bytes reach the writer when the FILE flushes (fflush, fclose, or its own
 * buffer filling). fclose neither releases the writer nor flushes it to its
 * sink. A writer failure makes the FILE write fail with errno ENOMEM, ENOSPC
 * (BW_EFULL), EIO or EFBIG (BW_EOVERFLOW, BW_ELIMIT); fseek and ftell fail with ESPIPE.
 * The FILE hands its bytes over in pieces, in the middle of an fprintf or
 * fwrite: in a contiguous or segmented writer the arguments may still point
 * into w's held bytes (the blocks w outgrows meanwhile are kept until
 * fclose), in a streaming or fixed writer they must not (held bytes are sent
 * or moved in place). NULL with errno EINVAL for a NULL w, ENOMEM when the
 * FILE cannot be made. Not declared (and BW_HAVE_FILE_ADAPTER
 * not defined) where neither exists or with BW_NO_FILE_ADAPTER. */
#if !defined(BW_NO_FILE_ADAPTER) && \
    (defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__) || \
     defined(__NetBSD__) || defined(__OpenBSD__) || defined(__DragonFly__))
#  define BW_HAVE_FILE_ADAPTER 1
BW_API FILE *bw_fopen(bw_writer *w);
#endif

/* ======================================================================== */
/* 11. Implementation details                                               */
/* ======================================================================== */
/* Everything below is private (names with bw__ may change between
 * versions): the writer's fields, so it can live on your stack, and the
 * inline fast paths, so a put costs about what a raw store does. */

/* The writer. One layout for every mode: the fast path looks only at data,
 * len and lim, so it is the same compare, store and add whatever the mode;
 * everything mode-specific lives behind the cold path. The first 64 bytes
 * (on 64-bit) hold the fast path and everything a contiguous or fixed
 * writer's init and release touch, so a small message uses one cache line
 * of it; what only a segmented or streaming writer needs comes after, in a
 * union by mode, set by that mode's init alone. */
struct bw_writer { /* a new field: set it in bw__init_mode (writer_internal.h) */
    unsigned char *data; /* where the next byte goes is data + len: the block
                            (contiguous), the last block (segmented), the
                            buffer (streaming) or buf (fixed); NULL until
                            there is storage                                  */
    size_t len;          /* offset of the next byte in data                   */
    size_t lim;          /* fast-path limit: cap (at most where the size
                            limit falls, below), or len while an error is
                            recorded, so a recorded error (and a writer with no
                            storage) simply misses the inline fast path        */
    size_t cap;          /* usable bytes at data                              */
    uint64_t pos;        /* position of data[0] (segmented: of data[k] for k
                            from the open piece's start on; a link moves it) */
    uint64_t base;       /* position of the first held byte                   */
    bw_pool *pool;       /* where blocks come from; NULL = shared pool        */
    unsigned char mode;  /* BW__CONTIG (0), BW__SEG, BW__STREAM, BW__FIXED  */
    unsigned char flags; /* BW__EXTERNAL: data is a caller's first buffer;
                            BW__FD: streaming to fd rather than to a sink;
                            BW__LIMITED: a size limit is set (and more in
                            writer_internal.h)                                */
    int err;             /* sticky status, BW_OK if none                      */
    union {              /* by mode; fixed uses none of it                    */
        struct {         /* segmented (mode_seg.c)                        */
            struct bw__pchunk *head, *tail; /* chunks of closed pieces: from
                                       head's [first], to tail's [count) */
            uint32_t first, count;
            struct bw__blk *blocks; /* owned blocks but the current one, a
                                       tree by address                      */
            size_t open;          /* the open piece is data[open, len)      */
        } c;
        struct {         /* streaming                                         */
            bw_sink_fn sink; /* the sink (NULL for an fd)                     */
            void *ctx;   /* the sink's context                                */
            size_t size; /* buffer size to rent                               */
            int fd;      /* streaming to an fd: the fd                        */
        } s;
        struct {         /* contiguous, on a BW_POOL_ZERO_ON_RETURN pool:
                            cap is a window of the block, widened on the
                            cold path, so that only it is zeroed on return */
            size_t block; /* the pooled block's capacity                     */
        } g;
    } m;
    int syserr;          /* errno recorded with err (BW_EIO), else 0; read
                            only while an error is recorded or a failed
                            bw_write_fd left it (BW__FD_ERRNO)                */
    unsigned char blk_log2; /* segmented: bw_set_block_size's size as its
                            log2, 0: the pool's. Set by bw_init_chain alone
                            (no other mode reads it), in the padding after
                            syserr                                           */
    uint64_t limit;      /* bw_set_limit: no position past it. Read only with
                            BW__LIMITED set, so that init and release need
                            not touch it, out of the first line; lim is
                            clamped to it                                     */
};

/* bw_writer.flags that inline code reads (the other bits are
 * writer_internal.h's): a size limit is set (bw_set_limit), so limit is
 * read; a contiguous writer's data is the caller's first buffer
 * (bw_init_buffer), or its block a reservation of m.g.block bytes with cap
 * its window (mode_contig.c), so not a pooled block of cap bytes. */
#define BW__LIMITED  0x40u
#define BW__EXTERNAL 0x1u
#define BW__RESERVED 0x4u
/* Every flag but the limit: a contiguous writer with none of them set
 * holds a pooled block (or none) and no error, so its release empties
 * data through base and nothing else (bw_detach_malloc's inline test;
 * bufwriter.c checks it covers every flag a release clears). */
#define BW__ALL_BUT_LIMITED (0xffu & ~BW__LIMITED)

/* Modes (bw_writer.mode). The all-zero writer is contiguous. */
#define BW__CONTIG 0
#define BW__SEG    1
#define BW__STREAM 2
#define BW__FIXED  3
#define BW__NMODES 4 /* a new mode: its constant, this count, its table */

/* An empty contiguous writer on the shared pool (all zeros). */
#ifdef __cplusplus
#  define BW_WRITER_INIT bw_writer()
#else
#  define BW_WRITER_INIT {NULL /* data */, 0 /* len */, 0 /* lim */, 0 /* cap */,         \
                          0 /* pos */, 0 /* base */, NULL /* pool */, 0 /* mode */,       \
                          0 /* flags */, BW_OK /* err */,                         \
                          {{NULL, NULL, 0, 0, NULL, 0}} /* m.c */, 0 /* syserr */,         \
                          0 /* blk_log2 */, 0 /* limit */}
#endif

/* The cold path: append n bytes from src (NULL w, NULL src, n == 0, a
 * recorded error, and every mode's way of making room). Out of line and
 * cold, so the fast paths stay a compare, a store and an add. */
BW_API int bw__write_slow(bw_writer *w, const void *src, size_t n);

/* What the compiler may take as true (that a fast path's result it cannot
 * see is never NULL, say), at no cost. */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__ASSUME(x) do { if (!(x)) __builtin_unreachable(); } while (0)
#else
#  define BW__ASSUME(x) ((void)0)
#endif

BW__QUIET_BEGIN

/* Stores, one per encoding. On a little-endian GCC or Clang host a store
 * is a memcpy of the value (byte-swapped for big endian), one mov at -O1 and
 * above; elsewhere byte by byte, which compilers merge less reliably. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#  define BW__ST(p, v, bits, swap) do { uint##bits##_t bw__v = (v);            \
        if (swap) bw__v = __builtin_bswap##bits(bw__v);                      \
        memcpy(p, &bw__v, sizeof bw__v); } while (0)
BW__INLINE void bw__st_u16le(unsigned char *p, uint16_t v) { BW__ST(p, v, 16, 0); }
BW__INLINE void bw__st_u32le(unsigned char *p, uint32_t v) { BW__ST(p, v, 32, 0); }
BW__INLINE void bw__st_u64le(unsigned char *p, uint64_t v) { BW__ST(p, v, 64, 0); }
BW__INLINE void bw__st_u16be(unsigned char *p, uint16_t v) { BW__ST(p, v, 16, 1); }
BW__INLINE void bw__st_u32be(unsigned char *p, uint32_t v) { BW__ST(p, v, 32, 1); }
BW__INLINE void bw__st_u64be(unsigned char *p, uint64_t v) { BW__ST(p, v, 64, 1); }
#else
BW__INLINE void bw__st_u16le(unsigned char *p, uint16_t v)
{ p[0] = BW__CAST(unsigned char, v); p[1] = BW__CAST(unsigned char, v >> 8); }
BW__INLINE void bw__st_u32le(unsigned char *p, uint32_t v)
{ p[0] = BW__CAST(unsigned char, v); p[1] = BW__CAST(unsigned char, v >> 8);
  p[2] = BW__CAST(unsigned char, v >> 16); p[3] = BW__CAST(unsigned char, v >> 24); }
BW__INLINE void bw__st_u64le(unsigned char *p, uint64_t v)
{ bw__st_u32le(p, BW__CAST(uint32_t, v)); bw__st_u32le(p + 4, BW__CAST(uint32_t, v >> 32)); }
BW__INLINE void bw__st_u16be(unsigned char *p, uint16_t v)
{ p[0] = BW__CAST(unsigned char, v >> 8); p[1] = BW__CAST(unsigned char, v); }
BW__INLINE void bw__st_u32be(unsigned char *p, uint32_t v)
{ p[0] = BW__CAST(unsigned char, v >> 24); p[1] = BW__CAST(unsigned char, v >> 16);
  p[2] = BW__CAST(unsigned char, v >> 8); p[3] = BW__CAST(unsigned char, v); }
BW__INLINE void bw__st_u64be(unsigned char *p, uint64_t v)
{ bw__st_u32be(p, BW__CAST(uint32_t, v >> 32)); bw__st_u32be(p + 4, BW__CAST(uint32_t, v)); }
#endif
BW__INLINE void bw__st_u8(unsigned char *p, uint8_t v) { p[0] = v; }
/* Signed: the two's complement bits, through the unsigned store. */
#define BW__ST_SIGNED(bits, e)                                                \
    BW__INLINE void bw__st_i##bits##e(unsigned char *p, int##bits##_t v)      \
    { bw__st_u##bits##e(p, BW__CAST(uint##bits##_t, v)); }
BW__ST_SIGNED(16, le) BW__ST_SIGNED(32, le) BW__ST_SIGNED(64, le)
BW__ST_SIGNED(16, be) BW__ST_SIGNED(32, be) BW__ST_SIGNED(64, be)
#undef BW__ST_SIGNED
/* Floats: their IEEE-754 bits, through memcpy (no aliasing games). */
BW__INLINE void bw__st_f32le(unsigned char *p, float v)
{ uint32_t u; memcpy(&u, &v, sizeof u); bw__st_u32le(p, u); }
BW__INLINE void bw__st_f64le(unsigned char *p, double v)
{ uint64_t u; memcpy(&u, &v, sizeof u); bw__st_u64le(p, u); }
BW__INLINE void bw__st_f32be(unsigned char *p, float v)
{ uint32_t u; memcpy(&u, &v, sizeof u); bw__st_u32be(p, u); }
BW__INLINE void bw__st_f64be(unsigned char *p, double v)
{ uint64_t u; memcpy(&u, &v, sizeof u); bw__st_u64be(p, u); }

/* The one list of fixed-width types: name, C type, size. It generates every
 * bw_enc_*, bw_put_* and bw_patch_* below. */
#define BW__TYPES(X)                                                         \
    X(u8, uint8_t, 1)                                                        \
    X(u16le, uint16_t, 2) X(u32le, uint32_t, 4) X(u64le, uint64_t, 8)        \
    X(u16be, uint16_t, 2) X(u32be, uint32_t, 4) X(u64be, uint64_t, 8)        \
    X(i16le, int16_t, 2)  X(i32le, int32_t, 4)  X(i64le, int64_t, 8)         \
    X(i16be, int16_t, 2)  X(i32be, int32_t, 4)  X(i64be, int64_t, 8)         \
    X(f32le, float, 4)    X(f64le, double, 8)                                \
    X(f32be, float, 4)    X(f64be, double, 8)

#define BW__DEFINE_ENC(name, type, size)                                     \
    BW__INLINE unsigned char *bw_enc_##name(unsigned char *p, type v)        \
    {                                                                        \
        bw__st_##name(p, v);                                                 \
        return p + size;                                                     \
    }
BW__TYPES(BW__DEFINE_ENC)

BW__INLINE unsigned char *bw_enc_uvarint(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = BW__CAST(unsigned char, v | 0x80);
        v >>= 7;
    }
    *p++ = BW__CAST(unsigned char, v);
    return p;
}

BW__INLINE unsigned char *bw_enc_svarint(unsigned char *p, int64_t v)
{
    /* zig-zag: 0,-1,1,-2,... -> 0,1,2,3,...; shifts done unsigned so that
     * they are defined for negative values. */
    uint64_t u = BW__CAST(uint64_t, v);
    return bw_enc_uvarint(p, (u << 1) ^ (0 - (u >> 63)));
}

BW__INLINE unsigned char *bw_enc_bytes(unsigned char *p, const void *src, size_t n)
{
    if (n != 0) memcpy(p, src, n);
    return p + n;
}

/* A put: when the bytes fit, store and add (one mov, plus a bswap for big
 * endian, at -O2); otherwise the cold path makes room for exactly these
 * bytes in whatever way the mode needs (a segmented writer starts a new
 * block when the last has less: at most size - 1 bytes are skipped). This
 * shape lets the compiler keep the NULL test out of a loop of puts. The
 * fields are read into locals before the store and len written once after
 * it: a store through unsigned char * may alias the writer, so the compiler
 * would otherwise load data and len again after it. */
#define BW__DEFINE_PUT(name, type, size)                                     \
    BW__INLINE int bw_put_##name(bw_writer *w, type v)                       \
    {                                                                        \
        size_t bw__n = 0; /* set below: no store is left of this */         \
        if (BW__UNLIKELY(w == NULL || (bw__n = w->len) + size > w->lim)) {   \
            int bw__rc = bw_reserve(w, size);                                \
            if (bw__rc != BW_OK) return bw__rc;                              \
            bw__n = w->len;                                                  \
        }                                                                    \
        bw_enc_##name(w->data + bw__n, v);                                   \
        w->len = bw__n + size;                                               \
        return BW_OK;                                                        \
    }
BW__TYPES(BW__DEFINE_PUT)

#define BW__DEFINE_PATCH(name, type, size)                                   \
    BW__INLINE int bw_patch_##name(bw_writer *w, uint64_t pos, type v)       \
    {                                                                        \
        unsigned char bw__b[size];                                           \
        bw_enc_##name(bw__b, v);                                             \
        return bw_patch(w, pos, bw__b, size);                                \
    }
BW__TYPES(BW__DEFINE_PATCH)

BW__INLINE int bw_put_uvarint(bw_writer *w, uint64_t v)
{
    size_t n = 0; /* clang's -Wconditional-uninitialized: set in the test */
    if (BW__LIKELY(w != NULL && (n = w->len) + 10 <= w->lim)) {
        unsigned char *d = w->data + n;
        w->len = n + BW__CAST(size_t, bw_enc_uvarint(d, v) - d);
        return BW_OK;
    } else {
        unsigned char b[10];
        return bw__write_slow(w, b, BW__CAST(size_t, bw_enc_uvarint(b, v) - b));
    }
}

BW__INLINE int bw_put_svarint(bw_writer *w, int64_t v)
{
    uint64_t u = BW__CAST(uint64_t, v); /* zig-zag, as bw_enc_svarint */
    return bw_put_uvarint(w, (u << 1) ^ (0 - (u >> 63)));
}

/* A span that fits is an inline read of the fields (a cursor takes one per
 * record); the cold path makes room (a size_hint of 0 goes there too, for
 * its room of 1, as does a recorded error: lim == len). A span that fits is
 * never NULL (the block has room): saying so lets the compiler drop the
 * caller's NULL check from the fast path. */
BW_API void *bw__get_span_slow(bw_writer *w, size_t size_hint, size_t *avail);
BW__INLINE void *bw_get_span(bw_writer *w, size_t size_hint, size_t *avail)
{
    if (BW__UNLIKELY(w == NULL)) { /* NULL, as w is: no literal for C++'s
                                      -Wzero-as-null-pointer-constant */
        if (avail) *avail = 0;
        return BW__CAST(void *, w);
    }
    if (BW__LIKELY(size_hint - 1 < w->lim - w->len)) {
        size_t len = w->len;
        unsigned char *p = w->data + len; /* before *avail, which may alias w */
        if (avail) *avail = w->lim - len; /* cap - len, or a size limit's room */
        BW__ASSUME(p != NULL);
        return p;
    }
    return bw__get_span_slow(w, size_hint, avail);
}

/* lim - len: the free space, or none while an error is recorded (lim ==
 * len), at most a size limit's room. */
BW__INLINE void *bw_try_span(bw_writer *w, size_t n)
{
    if (BW__LIKELY(w != NULL && (n != 0 ? n : 1) <= w->lim - w->len)) {
        unsigned char *p = w->data + w->len;
        BW__ASSUME(p != NULL);
        return p;
    }
    return BW__NULL;
}

/* The cursor's commit, in offsets from data: the span starts at len, so
 * end commits when len < end - data <= lim, and len becomes end - data
 * (three loads, two compares and a store). Everything else takes
 * bw_advance, for its result: end == the span's start (0 bytes: BW_OK, or
 * the recorded error), a recorded error (lim == len: nothing passes), an
 * end before data or past lim, and a NULL end (0 - data is past any lim,
 * as no block wraps the address space). */
BW__INLINE int bw_advance_to(bw_writer *w, const void *end)
{
    size_t off;
    if (!w) return BW_EINVAL;
    off = BW__CAST(size_t, BW__ADDR(end) - BW__ADDR(w->data));
    if (BW__LIKELY(off > w->len && off <= w->lim)) {
        w->len = off;
        return BW_OK;
    }
    return bw_advance(w, end ? off - w->len : BW__CAST(size_t, -1));
}

BW__INLINE int bw_write(bw_writer *w, const void *src, size_t n)
{
    /* n - 1 wraps for n == 0, which then takes the cold path (it must report
     * a recorded error, and a NULL src is allowed there). */
    if (BW__LIKELY(w != NULL && src != NULL && n - 1 < w->lim - w->len)) {
        size_t len = w->len;
        memcpy(w->data + len, src, n);
        w->len = len + n;
        return BW_OK;
    }
    return bw__write_slow(w, src, n);
}

/* Every mode but a segmented one holds its bytes in one block, from the
 * first held byte on; a segmented writer walks its blocks out of line. */
BW_API const unsigned char *bw__data_slow(const bw_writer *w);
BW__INLINE const unsigned char *bw_data(const bw_writer *w)
{
    if (BW__LIKELY(w && w->data && w->mode != BW__SEG))
        return w->data + BW__CAST(size_t, w->base - w->pos);
    return bw__data_slow(w);
}

/* bw_detach_malloc's usual case, inline: a contiguous writer on a pooled
 * block of a class the thread cache keeps, of at most BW__DETACH_COPY_MAX
 * bytes, is copied (bw__pool_copies, pool/pool_writer.h, says why). Then
 * the hand-off is the caller's own malloc, memcpy and release, in the
 * caller's code: out of line, the call's frame and tests cost 44
 * instructions more than those (bench rows K). A pool's first field is
 * the largest such block (0: none; struct bw_pool, pool/pool_internal.h),
 * so one compare asks the pool and bounds the text. The usual case has no
 * flag set but the limit (no error, no bytes dropped from the front, so
 * pos is base): the text is then data[0, len), with no arithmetic before
 * and after malloc, and its release has nothing to clear but data through
 * base. Every other case, and a malloc that fails, is
 * bw__detach_malloc_slow's; bw__detach_malloc_release is bw_release
 * without the tests this one made. */
#define BW__DETACH_COPY_MAX ((size_t)64 << 10)
BW_API void *bw__detach_malloc_slow(bw_writer *w, size_t *len);
BW_API void bw__detach_malloc_release(bw_writer *w);
BW__INLINE size_t bw__pool_copy_cap(const bw_pool *p)
{
    return *BW__CAST(const size_t *, BW__CAST(const void *, p));
}
/* Whether w is contiguous with none of flags set. mode and flags are
 * adjacent bytes (bufwriter.c checks): on a little-endian GCC or Clang
 * host one 16-bit load tests both, two instructions where two loads and
 * tests took five. */
BW__INLINE int bw__contig_without(const bw_writer *w, unsigned flags)
{
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint16_t mf;
    memcpy(&mf, BW__CAST(const unsigned char *, BW__CAST(const void *, w)) +
                    offsetof(bw_writer, mode), sizeof mf);
    return (mf & (0xffu | flags << 8)) == 0;
#else
    return w->mode == BW__CONTIG && !(w->flags & flags);
#endif
}
/* GCC takes malloc to leave the caller's memory alone, so it keeps the
 * fields it read before the call for after it, spilled to the stack and
 * back (8 instructions); after this barrier it reads them again (2). */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__REREAD() __asm__ __volatile__("" : : : "memory")
#else
#  define BW__REREAD() ((void)0)
#endif
BW__INLINE void *bw_detach_malloc(bw_writer *w, size_t *len)
{
    unsigned char *b;
    size_t n;
    if (BW__LIKELY(w != BW__NULL && bw__contig_without(w, BW__ALL_BUT_LIMITED) &&
                   w->data != BW__NULL && w->pos == w->base &&
                   w->cap <= bw__pool_copy_cap(w->pool))) {
        b = BW__CAST(unsigned char *, malloc(w->len + 1));
        if (BW__LIKELY(b != BW__NULL)) {
            /* The NUL and *len first: nothing is kept across memcpy but w. */
            BW__REREAD();
            n = w->len;
            b[n] = 0;
            if (len != BW__NULL) *len = n;
            memcpy(b, w->data, n);
            bw__detach_malloc_release(w);
            return b;
        }
    }
    return bw__detach_malloc_slow(w, len);
}

BW__INLINE int bw_putc(bw_writer *w, int c)
{
    return bw_put_u8(w, BW__CAST(uint8_t, BW__CAST(unsigned char, c)));
}

BW__INLINE int bw_error(const bw_writer *w) { return w ? w->err : BW_EINVAL; }
BW__INLINE uint64_t bw_tell(const bw_writer *w) { return w ? w->pos + w->len : 0; }
BW__INLINE size_t bw_len(const bw_writer *w)
{ return w ? BW__CAST(size_t, w->pos + w->len - w->base) : 0; }
/* lim is where the inline fast path ends: cap, at most where a size limit
 * falls, len while an error is recorded. Reading it is 0.3's load and
 * subtract: a test of the limit's flag here cost the ports that call this
 * per write 2-4% (0.4, msgpack, cJSON and protobuf-c ports). */
BW__INLINE size_t bw_free_capacity(const bw_writer *w) { return w ? w->lim - w->len : 0; }
BW__INLINE size_t bw_capacity(const bw_writer *w)
{ return bw_len(w) + bw_free_capacity(w); }

BW__QUIET_END

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BUFWRITER_H */
