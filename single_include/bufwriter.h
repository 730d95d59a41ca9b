/* SPDX-License-Identifier: MIT */
/* bufwriter.h - single-header build of bufwriter 0.4.0
 *
 * GENERATED FILE - DO NOT EDIT. scripts/amalgamate.py made it from
 *   platform/prelude.h, bufwriter.h, fmt_float_table.h,
 *   platform/platform.h, pool/track.h, pool/pool_internal.h,
 *   pool/pool_writer.h, writer_internal.h, seg_internal.h, bufwriter.c,
 *   fmt_float.c, fmt_int.c, io.c, mode_block.c, mode_contig.c,
 *   mode_fixed.c, mode_seg.c, mode_stream.c, seg_check.c, seg_pieces.c,
 *   platform/posix.c, platform/windows.c, pool/alloc.c, pool/check.c,
 *   pool/fork.c, pool/growth.c, pool/large.c, pool/pool.c, pool/tcache.c.
 * Change those files and run `make single`; CI fails when this copy differs
 * from a fresh generation (`make check-single`).
 *
 * bufwriter: a growable, pooled buffer writer for C. Licence: MIT, the text
 * is at the end of this file. Version 0.4.0 (BW_VERSION_STRING).
 *
 * HOW TO USE IT
 *   Copy this one file into your project. Include it wherever you use it:
 *
 *       #include "bufwriter.h"
 *
 *   and in exactly ONE C file define the implementation first:
 *
 *       #define BUFWRITER_IMPLEMENTATION
 *       #include "bufwriter.h"
 *
 *   Compile that file as C11 (or later) and link with -pthread:
 *       cc -std=c11 -O2 app.c other.c -pthread
 *   The declarations compile as C and as C++ (extern "C"); the
 *   implementation is C11 only (it uses <stdatomic.h> and _Thread_local),
 *   so define BUFWRITER_IMPLEMENTATION in a .c file, not a .cpp file.
 *   Below C11 the implementation stops with an #error that says so.
 *   Including the header again is harmless: the declarations have their
 *   include guard and the implementation is emitted once per file.
 *
 * WARNINGS
 *   The implementation compiles without a warning under gcc -Wall -Wextra
 *   -Wnull-dereference, and under clang -Weverything with two kinds left
 *   (clang 14): -Wpadded (structs laid out for their fast paths and cache
 *   lines, not to the byte) and -Wformat-nonliteral (bw_printf formats the
 *   caller's format string: vsnprintf of a parameter, checked at the
 *   caller by the format attribute). A file that only includes the header
 *   gets -Wpadded on bw_writer and bw_pool_options alone.
 *   Functions private to the library are static here: a program gets only
 *   the public bw_ symbols.
 *
 * OPTIONS (define them before the #include, or with -D on the command line;
 * "library only" means the BUFWRITER_IMPLEMENTATION file here). Copied from
 * the header's COMPILE-TIME OPTIONS section:
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

/* The implementation's feature-test macros, before the declarations' own
 * #include lines: only where BUFWRITER_IMPLEMENTATION is defined. */
#if defined(BUFWRITER_IMPLEMENTATION) && !defined(BW__IMPLEMENTATION_DONE)
/*************** Begin file platform/prelude.h ******************************/
/* prelude.h - the feature-test macros the platform layer needs, defined
 * before the first libc header. The library's own build gets them in
 * platform/posix.c, its one file that asks libc for more than ISO C. The
 * single header emits this first of all in the BUFWRITER_IMPLEMENTATION
 * file; where a libc header the includer put before it has already hidden
 * those calls, it stops with an #error that says what to do, rather than
 * declaring libc's functions itself (their prototypes and constants differ
 * between C libraries and architectures). */
#ifndef BW_PRELUDE_H
#define BW_PRELUDE_H

#if !defined(_WIN32)
/* POSIX (signal masks, clock_gettime, writev, sendmsg), Linux's mmap
 * extensions and fopencookie: glibc and musl declare them only when
 * _GNU_SOURCE (or a POSIX level) comes before their first header, which
 * then defines _FEATURES_H; a strict -std=c11 build asks for none. The
 * FILE adapter needs the GNU level; without it (BW_NO_FILE_ADAPTER) POSIX
 * is enough. Other C libraries (the BSDs, macOS) show all of it by
 * default and ignore _GNU_SOURCE. */
#  if defined(_FEATURES_H) && defined(__GLIBC__)
#    if !defined(__USE_POSIX199506) || (!defined(__USE_GNU) && !defined(BW_NO_FILE_ADAPTER))
#      define BW__PRELUDE_TOO_LATE 1
#    endif
#  elif defined(_FEATURES_H) && !defined(_GNU_SOURCE)
#    if !defined(BW_NO_FILE_ADAPTER) || \
        !(defined(_XOPEN_SOURCE) || defined(_POSIX_C_SOURCE) || defined(_BSD_SOURCE))
#      define BW__PRELUDE_TOO_LATE 1
#    endif
#  endif
#  ifdef BW__PRELUDE_TOO_LATE
/* The single header then emits no implementation: the #error stands alone
 * instead of heading a page of implicit declarations. */
#    define BW__IMPLEMENTATION_DONE 1
#    error "bufwriter: the implementation needs POSIX and GNU declarations (signal masks, \
clock_gettime, fopencookie) that a libc header included before it has hidden. Put \
'#define BUFWRITER_IMPLEMENTATION' and '#include \"bufwriter.h\"' first in their own .c file, \
or define _GNU_SOURCE before that file's first #include (or build it with -D_GNU_SOURCE)."
#  endif
#  ifndef _GNU_SOURCE
#    define _GNU_SOURCE 1
#  endif
#endif

#endif /* BW_PRELUDE_H */
/*************** End file platform/prelude.h ********************************/
#endif /* BUFWRITER_IMPLEMENTATION && !BW__IMPLEMENTATION_DONE */

/*************** Begin file bufwriter.h *************************************/
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
/*************** End file bufwriter.h ***************************************/

/* ======================================================================== */
/* Implementation: only where BUFWRITER_IMPLEMENTATION is defined, and only */
/* once per translation unit.                                               */
/* ======================================================================== */
#if defined(BUFWRITER_IMPLEMENTATION) && !defined(BW__IMPLEMENTATION_DONE)
#define BW__IMPLEMENTATION_DONE

#ifdef __cplusplus
#  error "bufwriter: define BUFWRITER_IMPLEMENTATION in a C11 file, not in C++ (the implementation uses <stdatomic.h> and _Thread_local); C++ files include the header without it"
#endif
#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#  error "bufwriter: the implementation (BUFWRITER_IMPLEMENTATION) needs C11 (<stdatomic.h>, _Thread_local): compile this file with -std=c11 or later; other files may include the header as C89 or C99"
#endif

/* Private functions are static in the single header (as SQLite's
 * amalgamation does), so they stay out of the program's symbol table.
 * Some are called only in some configurations (BW_DEBUG): -Wunused-function
 * is off for the implementation, rather than each marked unused (which
 * clang's -Wused-but-marked-unused reports wherever one is called). */
#ifndef BW__INTERNAL
#  define BW__INTERNAL static
#endif
#if defined(__GNUC__) || defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wunused-function"
#endif

/*************** Begin file fmt_float_table.h *******************************/
/* fmt_float_table.h - generated by scripts/gen_float_table.py: do not edit.
 * make check-float-table (part of make test) checks it is up to date.
 *
 * bw__ff_g[2 (k - BW__FF_K_MIN)] and [.. + 1] are the high and low 64 bits of
 * g(k) = floor(10^-k 2^(125 - floor(log2 10^-k))) + 1, in [2^125, 2^126): an
 * upper approximation of 10^-k, for every k a double's exponent gives.
 * The logarithm constants are checked over every input fmt_float.c gives. */
#ifndef BW__FMT_FLOAT_TABLE_H
#define BW__FMT_FLOAT_TABLE_H

#include <stdint.h>

/* floor(log10(2^q)) = ((q BW__FF_L10 + (BW__FF_B10 << BW__FF_S10)) >> BW__FF_S10)
 * - BW__FF_B10 for q in [-1074, 971]; floor(log10(3/4 2^q)) the same with
 * BW__FF_L10_34 added (q in [-1073, 971]); floor(log2(10^k)) =
 * ((k BW__FF_L2 + (BW__FF_B2 << BW__FF_S2)) >> BW__FF_S2) - BW__FF_B2 for k in
 * [-292, 324]. */
#define BW__FF_S10 20
#define BW__FF_L10 315653
#define BW__FF_L10_34 (-131047)
#define BW__FF_B10 1100
#define BW__FF_S2 19
#define BW__FF_L2 1741647
#define BW__FF_B2 1100
#define BW__FF_K_MIN (-324)
#define BW__FF_K_MAX 292

static const uint64_t bw__ff_g[1234] = {
    UINT64_C(0x278676e4ad38c6ea), UINT64_C(0x5b01e8b09aa0d1b5), /* k = -324 */
    UINT64_C(0x3f3d8b077b8e0b10), UINT64_C(0x919ca780f767b5ee), /* k = -323 */
    UINT64_C(0x3297a26c62d808da), UINT64_C(0x0e16ec672c52f7f2), /* k = -322 */
    UINT64_C(0x28794ebd1be00714), UINT64_C(0xd81256b8f0425ff5), /* k = -321 */
    UINT64_C(0x20610bca7cb338dd), UINT64_C(0x79a84560c0351991), /* k = -320 */
    UINT64_C(0x33ce7943fab85afb), UINT64_C(0xf5da089acd21c281), /* k = -319 */
    UINT64_C(0x2971fa9cc8937bfc), UINT64_C(0xc4ae6d48a41b0201), /* k = -318 */
    UINT64_C(0x2127fbb0a075fcca), UINT64_C(0x36f1f106e9af34cd), /* k = -317 */
    UINT64_C(0x350cc5e767232e10), UINT64_C(0x57e981a4a918547b), /* k = -316 */
    UINT64_C(0x2a709e52b8e8f1a6), UINT64_C(0xacbace1d541376c9), /* k = -315 */
    UINT64_C(0x21f3b1dbc720c152), UINT64_C(0x23c8a4e44342c56e), /* k = -314 */
    UINT64_C(0x3652b62c71ce021d), UINT64_C(0x060dd4a06b9e08b0), /* k = -313 */
    UINT64_C(0x2b755e89f4a4ce7d), UINT64_C(0x9e7176e6bc7e6d59), /* k = -312 */
    UINT64_C(0x22c44ba19083d864), UINT64_C(0x7ec12bebc9febde1), /* k = -311 */
    UINT64_C(0x37a0790280d2f3d3), UINT64_C(0xfe01dfdfa9979635), /* k = -310 */
    UINT64_C(0x2c8060cecd758fdc), UINT64_C(0xcb34b319547944f7), /* k = -309 */
    UINT64_C(0x2399e70bd7913fe3), UINT64_C(0xd5c3c27aa9fa9d93), /* k = -308 */
    UINT64_C(0x38f63e7958e86639), UINT64_C(0x560603f7765dc8ea), /* k = -307 */
    UINT64_C(0x2d91cb94472051c7), UINT64_C(0x7804cff92b7e3a55), /* k = -306 */
    UINT64_C(0x2474a2dd05b3749f), UINT64_C(0x93370cc755fe9511), /* k = -305 */
    UINT64_C(0x3a5437c8091f20ff), UINT64_C(0x51f1ae0bbcca881b), /* k = -304 */
    UINT64_C(0x2ea9c639a0e5b3ff), UINT64_C(0x74c1580963d539af), /* k = -303 */
    UINT64_C(0x25549e9480b7c332), UINT64_C(0xc3cde0078310faf3), /* k = -302 */
    UINT64_C(0x3bba97540126051e), UINT64_C(0x0616333f381b2b1e), /* k = -301 */
    UINT64_C(0x2fc8791000eb374b), UINT64_C(0x3811c298f9af55b1), /* k = -300 */
    UINT64_C(0x2639fa7333ef5f6f), UINT64_C(0x600e35472e25de28), /* k = -299 */
    UINT64_C(0x3d2990b8531898b2), UINT64_C(0x3349eed849d6303f), /* k = -298 */
    UINT64_C(0x30ee0d60427a13c1), UINT64_C(0xc2a18be03b11c033), /* k = -297 */
    UINT64_C(0x2724d780352e7634), UINT64_C(0x9bb46fe695a7ccf5), /* k = -296 */
    UINT64_C(0x3ea158cd21e3f054), UINT64_C(0x2c53e63dbc3fae55), /* k = -295 */
    UINT64_C(0x321aad70e7e98d10), UINT64_C(0x237651cafcffbeaa), /* k = -294 */
    UINT64_C(0x2815578d865470d9), UINT64_C(0xb5f8416f30cc9888), /* k = -293 */
    UINT64_C(0x201112d79ea9f3e1), UINT64_C(0x5e603458f3d6e06d), /* k = -292 */
    UINT64_C(0x334e848c310fec9b), UINT64_C(0xca3386f4b957cd7b), /* k = -291 */
    UINT64_C(0x290b9d3cf40cbd49), UINT64_C(0x6e8f9f2a2ddfd796), /* k = -290 */
    UINT64_C(0x20d61763f670976d), UINT64_C(0xf20c7f54f17fdfab), /* k = -289 */
    UINT64_C(0x3489bf06571a8be3), UINT64_C(0x1ce0cbbb1bffcc45), /* k = -288 */
    UINT64_C(0x2a07cc05127ba31c), UINT64_C(0x171a3c95afffd69e), /* k = -287 */
    UINT64_C(0x219fd66a752fb5b0), UINT64_C(0x127b63aaf3331218), /* k = -286 */
    UINT64_C(0x35cc8a43eeb2bc4c), UINT64_C(0xea5f05de51eb5026), /* k = -285 */
    UINT64_C(0x2b0a0836588efd0a), UINT64_C(0x5518d17ea7ef7352), /* k = -284 */
    UINT64_C(0x226e6cf846d8ca6e), UINT64_C(0xaa7a41321ff2c2a8), /* k = -283 */
    UINT64_C(0x371714c0715add7d), UINT64_C(0xdd906850331e043f), /* k = -282 */
    UINT64_C(0x2c1277005aaf1797), UINT64_C(0xe47386a68f4b3699), /* k = -281 */
    UINT64_C(0x2341f8cd1558dfac), UINT64_C(0xb6c2d21ed908f87b), /* k = -280 */
    UINT64_C(0x38698e14eef49914), UINT64_C(0x579e1cfe280e5a5d), /* k = -279 */
    UINT64_C(0x2d213e7725907a76), UINT64_C(0xac7e7d98200b7b7e), /* k = -278 */
    UINT64_C(0x241a985f514061f8), UINT64_C(0x89fecae019a2c932), /* k = -277 */
    UINT64_C(0x39c426fee8670327), UINT64_C(0x43314499c29e0eb6), /* k = -276 */
    UINT64_C(0x2e368598b9ec0285), UINT64_C(0xcf5a9d47cee4d891), /* k = -275 */
    UINT64_C(0x24f86ae094bcced1), UINT64_C(0x72aee4397250ad41), /* k = -274 */
    UINT64_C(0x3b27116754614ae8), UINT64_C(0xb77e39f583b44868), /* k = -273 */
    UINT64_C(0x2f527452a9e76f20), UINT64_C(0x92cb61913629d387), /* k = -272 */
    UINT64_C(0x25db90422185f280), UINT64_C(0x756f8140f8217605), /* k = -271 */
    UINT64_C(0x3c928069cf3cb733), UINT64_C(0xef18cece59cf233c), /* k = -270 */
    UINT64_C(0x30753387d8fd5f5c), UINT64_C(0xbf470bd847d8e8fd), /* k = -269 */
    UINT64_C(0x26c429397a644c4a), UINT64_C(0x329f3cad064720ca), /* k = -268 */
    UINT64_C(0x3e06a85bf706e076), UINT64_C(0xb7652de1a3a50143), /* k = -267 */
    UINT64_C(0x319eed165f38b392), UINT64_C(0x2c50f1814fb73436), /* k = -266 */
    UINT64_C(0x27b2574518fa2941), UINT64_C(0xbd0d8e010c92902b), /* k = -265 */
    UINT64_C(0x3f83bed4f4c37535), UINT64_C(0xfb48e334e0ea8045), /* k = -264 */
    UINT64_C(0x32cfcbdd909c5dc4), UINT64_C(0xc9071c2a4d88669d), /* k = -263 */
    UINT64_C(0x28a63cb1407d17d0), UINT64_C(0xa0d27ceea46d1ee4), /* k = -262 */
    UINT64_C(0x2084fd5a99fdaca6), UINT64_C(0xe70eca58838a7f1d), /* k = -261 */
    UINT64_C(0x3407fbc42995e10b), UINT64_C(0x0b4add5a6c10cb62), /* k = -260 */
    UINT64_C(0x299ffc9cee1180d5), UINT64_C(0xa2a24aaebcda3c4e), /* k = -259 */
    UINT64_C(0x214cca1724dacd77), UINT64_C(0xb54ea22563e1c9d8), /* k = -258 */
    UINT64_C(0x3547a9bea15e158c), UINT64_C(0x554a9d089fcfa95a), /* k = -257 */
    UINT64_C(0x2a9fbafee77e77a3), UINT64_C(0x776ee406e63fbaae), /* k = -256 */
    UINT64_C(0x2219626585fec61c), UINT64_C(0x5f8be99f1e996225), /* k = -255 */
    UINT64_C(0x368f03d5a3313cfa), UINT64_C(0x327975cb64289d08), /* k = -254 */
    UINT64_C(0x2ba59caae8f430c8), UINT64_C(0x28612b091ced4a6d), /* k = -253 */
    UINT64_C(0x22eae3bbed902706), UINT64_C(0x86b4226db0bdd524), /* k = -252 */
    UINT64_C(0x37de392caf4d0b3d), UINT64_C(0xa4536a491ac95506), /* k = -251 */
    UINT64_C(0x2cb1c756f2a408fe), UINT64_C(0x1d0f883a7bd44405), /* k = -250 */
    UINT64_C(0x23c16c458ee9a0cb), UINT64_C(0x4a72d361fca9d004), /* k = -249 */
    UINT64_C(0x39357a08e4a90145), UINT64_C(0x43eaebcffaa94cd3), /* k = -248 */
    UINT64_C(0x2dc461a0b6ed9a9d), UINT64_C(0xcfef230cc88770a9), /* k = -247 */
    UINT64_C(0x249d1ae6f8be154b), UINT64_C(0x0cbf4f3d6d3926ee), /* k = -246 */
    UINT64_C(0x3a94f7d7f4635544), UINT64_C(0xe1321862485b717c), /* k = -245 */
    UINT64_C(0x2edd931329e91103), UINT64_C(0xe75b46b506af8dfd), /* k = -244 */
    UINT64_C(0x257e0f4287eda736), UINT64_C(0x52af6bc405593e64), /* k = -243 */
    UINT64_C(0x3bfce5373fe2a523), UINT64_C(0xb77f12d33bc1fd6d), /* k = -242 */
    UINT64_C(0x2ffd842c331bb74f), UINT64_C(0xc5ff42429634cabd), /* k = -241 */
    UINT64_C(0x266469bcf5afc5d9), UINT64_C(0x6b329b68782a3bcb), /* k = -240 */
    UINT64_C(0x3d6d75fb22b2d628), UINT64_C(0xab842bda59dd2c77), /* k = -239 */
    UINT64_C(0x31245e628228ab53), UINT64_C(0xbc69bcaeae4a89f9), /* k = -238 */
    UINT64_C(0x27504b8201ba22a9), UINT64_C(0x6387ca25583ba194), /* k = -237 */
    UINT64_C(0x3ee6df366929d10f), UINT64_C(0x05a6103bc05f68ed), /* k = -236 */
    UINT64_C(0x32524c2b8754a73f), UINT64_C(0x37b80cfc99e5ed8a), /* k = -235 */
    UINT64_C(0x2841d689391085cc), UINT64_C(0x2c933d96e184be08), /* k = -234 */
    UINT64_C(0x2034aba0fa739e3c), UINT64_C(0xf075cadf1ad09807), /* k = -233 */
    UINT64_C(0x3387790190b8fd2e), UINT64_C(0x4d8944982ae759a4), /* k = -232 */
    UINT64_C(0x29392d9ada2d9758), UINT64_C(0x3e076a135585e150), /* k = -231 */
    UINT64_C(0x20fa8ae248247913), UINT64_C(0x64d2bb42aad1810d), /* k = -230 */
    UINT64_C(0x34c4116a0d07281f), UINT64_C(0x07b7920444826815), /* k = -229 */
    UINT64_C(0x2a367454d738ece5), UINT64_C(0x9fc60e69d0685344), /* k = -228 */
    UINT64_C(0x21c529dd78fa571e), UINT64_C(0x196b3ebb0d20429d), /* k = -227 */
    UINT64_C(0x360842fbf4c3be96), UINT64_C(0x8f11fdf815006a94), /* k = -226 */
    UINT64_C(0x2b39cf2ff702fede), UINT64_C(0xd8db319344005543), /* k = -225 */
    UINT64_C(0x2294a5bff8cf324b), UINT64_C(0xe0af5adc3666aa9c), /* k = -224 */
    UINT64_C(0x37543c665ae51d46), UINT64_C(0x344bc4938a3dddc7), /* k = -223 */
    UINT64_C(0x2c4363851584176b), UINT64_C(0x5d096a0fa1cb17d2), /* k = -222 */
    UINT64_C(0x23691c6a779cdf89), UINT64_C(0x173abb3fb4a27975), /* k = -221 */
    UINT64_C(0x38a82d7725c7cc0e), UINT64_C(0x8b912b992103f588), /* k = -220 */
    UINT64_C(0x2d535792849fd672), UINT64_C(0x0940efadb4032ad3), /* k = -219 */
    UINT64_C(0x2442ac7536e64528), UINT64_C(0x07672624900288a9), /* k = -218 */
    UINT64_C(0x3a044721f1706ea6), UINT64_C(0x723ea36db337410e), /* k = -217 */
    UINT64_C(0x2e69d2818df38bb8), UINT64_C(0x5b654f8af5c5cda5), /* k = -216 */
    UINT64_C(0x25217534718fa2f9), UINT64_C(0xe2b772d5916b0aeb), /* k = -215 */
    UINT64_C(0x3b68bb871c1904c3), UINT64_C(0x0458b7bc1bde77dd), /* k = -214 */
    UINT64_C(0x2f86fc6c167a6a35), UINT64_C(0x9d13c630164b9318), /* k = -213 */
    UINT64_C(0x260596bcdec854f7), UINT64_C(0xb0dc9e8cdea2dc13), /* k = -212 */
    UINT64_C(0x3cd5bdfafe0d54bf), UINT64_C(0x8160fdae31049351), /* k = -211 */
    UINT64_C(0x30aafe6264d776ff), UINT64_C(0x9ab3fe24f403a90e), /* k = -210 */
    UINT64_C(0x26ef31e850ac5f32), UINT64_C(0xe229981d9002eda5), /* k = -209 */
    UINT64_C(0x3e4b830d4de09851), UINT64_C(0x69dc2695b337e2a1), /* k = -208 */
    UINT64_C(0x31d602710b1a1374), UINT64_C(0x54b01ede28f9821b), /* k = -207 */
    UINT64_C(0x27de685a6f480f90), UINT64_C(0x43c018b1ba6134e2), /* k = -206 */
    UINT64_C(0x3fca4090b20ce5b3), UINT64_C(0x9f99c11c5d68549d), /* k = -205 */
    UINT64_C(0x330833a6f4d71e29), UINT64_C(0x4c7b00e37ded107e), /* k = -204 */
    UINT64_C(0x28d35c8590ac1821), UINT64_C(0x09fc00b5fe574065), /* k = -203 */
    UINT64_C(0x20a916d14089ace7), UINT64_C(0x3b3000919845cd1d), /* k = -202 */
    UINT64_C(0x3441be1b9a75e171), UINT64_C(0xf84ccdb5c06fae95), /* k = -201 */
    UINT64_C(0x29ce31afaec4b45b), UINT64_C(0x2d0a3e2b00595877), /* k = -200 */
    UINT64_C(0x2171c159589d5d15), UINT64_C(0xbda1cb5599e11393), /* k = -199 */
    UINT64_C(0x3582cef55a9561bc), UINT64_C(0x629c7888f634ec1e), /* k = -198 */
    UINT64_C(0x2acf0bf77baab496), UINT64_C(0xb549fa072b5d89b1), /* k = -197 */
    UINT64_C(0x223f3cc5fc889078), UINT64_C(0x9107fb38ef7e07c1), /* k = -196 */
    UINT64_C(0x36cb946ffa741a5a), UINT64_C(0x81a65ec17f300c68), /* k = -195 */
    UINT64_C(0x2bd610599529aeae), UINT64_C(0xce1eb23465c009ed), /* k = -194 */
    UINT64_C(0x2311a6ae10ee2558), UINT64_C(0xa4e55b5d1e333b24), /* k = -193 */
    UINT64_C(0x381c3de34e49d55a), UINT64_C(0xa16ef894fd1ec506), /* k = -192 */
    UINT64_C(0x2ce364b5d83b1115), UINT64_C(0x4df2607730e56a6c), /* k = -191 */
    UINT64_C(0x23e91d5e4695a744), UINT64_C(0x3e5b805f5a5121f0), /* k = -190 */
    UINT64_C(0x3974fbca0a890ba0), UINT64_C(0x63c59a322a1b697f), /* k = -189 */
    UINT64_C(0x2df72fd4d53a6fb3), UINT64_C(0x83047b5b54e2bacc), /* k = -188 */
    UINT64_C(0x24c5bfdd7761f2f6), UINT64_C(0x0269fc4910b5623d), /* k = -187 */
    UINT64_C(0x3ad5ffc8bf031e56), UINT64_C(0x6a432d41b45569fb), /* k = -186 */
    UINT64_C(0x2f11996d659c1845), UINT64_C(0x21cf5767c37787fc), /* k = -185 */
    UINT64_C(0x25a7adf11e1679d0), UINT64_C(0xe7d912b9692c6cca), /* k = -184 */
    UINT64_C(0x3c3f7cb4fcf0c2e7), UINT64_C(0xd95b5128a8471476), /* k = -183 */
    UINT64_C(0x3032ca2a63f3cf1f), UINT64_C(0xe115da86ed05a9f8), /* k = -182 */
    UINT64_C(0x268f0821e98fd8e6), UINT64_C(0x4dab1538bd9e2193), /* k = -181 */
    UINT64_C(0x3db1a69ca8e627d6), UINT64_C(0xe2ab552795c9cf52), /* k = -180 */
    UINT64_C(0x315aebb0871e8645), UINT64_C(0x8222aa86116e3f75), /* k = -179 */
    UINT64_C(0x277befc06c186b6a), UINT64_C(0xce822204dabe992a), /* k = -178 */
    UINT64_C(0x3f2cb2cd79c0abde), UINT64_C(0x17369cd49130f510), /* k = -177 */
    UINT64_C(0x328a28a46166efe4), UINT64_C(0xdf5ee3dd40f3f740), /* k = -176 */
    UINT64_C(0x286e86e9e7858cb7), UINT64_C(0x1918b64a9a5cc5cd), /* k = -175 */
    UINT64_C(0x20586bee52d13d5f), UINT64_C(0x4746f83baeb09e3e), /* k = -174 */
    UINT64_C(0x33c0acb08481fbcb), UINT64_C(0xa53e59f91780fd2f), /* k = -173 */
    UINT64_C(0x2966f08d36ce6309), UINT64_C(0x50feae60df9a6426), /* k = -172 */
    UINT64_C(0x211f26d75f0b826d), UINT64_C(0xda65584d7faeb685), /* k = -171 */
    UINT64_C(0x34fea48bcb459d7c), UINT64_C(0x90a226e265e4573b), /* k = -170 */
    UINT64_C(0x2a65506fd5d14aca), UINT64_C(0x0d4e8581eb1d1295), /* k = -169 */
    UINT64_C(0x21eaa6bfde4108a1), UINT64_C(0xa43ed134bc174211), /* k = -168 */
    UINT64_C(0x36443dffca01a769), UINT64_C(0x06cae85460253682), /* k = -167 */
    UINT64_C(0x2b69cb33080152ba), UINT64_C(0x6bd586a9e6842b9b), /* k = -166 */
    UINT64_C(0x22bb08f5a0010efb), UINT64_C(0x89779eee52035616), /* k = -165 */
    UINT64_C(0x3791a7ef666817f8), UINT64_C(0xdbf297e3b66bbcef), /* k = -164 */
    UINT64_C(0x2c7486591eb9acc7), UINT64_C(0x165bacb62b8963f3), /* k = -163 */
    UINT64_C(0x23906b7a7efaf09f), UINT64_C(0x451623c4efa11cc2), /* k = -162 */
    UINT64_C(0x38e7125d97f7e765), UINT64_C(0x3b569fa17f682e03), /* k = -161 */
    UINT64_C(0x2d85a84adff985ea), UINT64_C(0x95dee61acc535803), /* k = -160 */
    UINT64_C(0x246aed08b32e04bb), UINT64_C(0xab18b8157042accf), /* k = -159 */
    UINT64_C(0x3a44ae7451e33ac5), UINT64_C(0xde8df355806aae18), /* k = -158 */
    UINT64_C(0x2e9d585d0e4f6237), UINT64_C(0xe53e5c4466bbbe7a), /* k = -157 */
    UINT64_C(0x254aad173ea5e82c), UINT64_C(0xb765169d1efc9861), /* k = -156 */
    UINT64_C(0x3baaae8b976fd9e1), UINT64_C(0x256e8a94fe60f3cf), /* k = -155 */
    UINT64_C(0x2fbbbed612bfe180), UINT64_C(0xeabed543feb3f63f), /* k = -154 */
    UINT64_C(0x262fcbde75664e00), UINT64_C(0xbbcbddcffef65e99), /* k = -153 */
    UINT64_C(0x3d194630bbd6e334), UINT64_C(0x5fac961997f0975b), /* k = -152 */
    UINT64_C(0x30e104f3c978b5c3), UINT64_C(0x7fbd44e1465a12af), /* k = -151 */
    UINT64_C(0x271a6a5ca12d5e35), UINT64_C(0xffca9d810514dbbf), /* k = -150 */
    UINT64_C(0x3e90aa2dceaefd23), UINT64_C(0x32ddc8ce6e87c5ff), /* k = -149 */
    UINT64_C(0x320d54f17225974f), UINT64_C(0x5be4a0a525396b32), /* k = -148 */
    UINT64_C(0x280aaa5ac1b7ac3f), UINT64_C(0x7cb6e6ea842def5c), /* k = -147 */
    UINT64_C(0x200888489af95699), UINT64_C(0x30925255368b25e3), /* k = -146 */
    UINT64_C(0x3340da0dc4c22428), UINT64_C(0x4db6ea21f0dea304), /* k = -145 */
    UINT64_C(0x2900ae716a34e9b9), UINT64_C(0xd7c5881b2718826a), /* k = -144 */
    UINT64_C(0x20cd585abb5d87c7), UINT64_C(0xdfd139af527a01ef), /* k = -143 */
    UINT64_C(0x347bc0912bc8d93f), UINT64_C(0xcc81f5e550c3364a), /* k = -142 */
    UINT64_C(0x29fc9a0dbca0adcc), UINT64_C(0xa39b2b1dda35c508), /* k = -141 */
    UINT64_C(0x2196e1a496e6f170), UINT64_C(0x82e288e4ae916a6d), /* k = -140 */
    UINT64_C(0x35be35d424a4b580), UINT64_C(0xd16a74a1174f10ae), /* k = -139 */
    UINT64_C(0x2afe917683b6f79a), UINT64_C(0x4121f6e745d8da25), /* k = -138 */
    UINT64_C(0x2265412b9c925fae), UINT64_C(0x9a8192529e4714eb), /* k = -137 */
    UINT64_C(0x37086845c7509917), UINT64_C(0x5d9c1d50fd3e87dd), /* k = -136 */
    UINT64_C(0x2c06b9d16c407a79), UINT64_C(0x17b01773fdcb9fe4), /* k = -135 */
    UINT64_C(0x233894a789cd2ec7), UINT64_C(0x4626792997d61984), /* k = -134 */
    UINT64_C(0x385a8772761517a5), UINT64_C(0x3d0a5b75bfbcf59f), /* k = -133 */
    UINT64_C(0x2d1539285e77461d), UINT64_C(0xca6eaf916630c47f), /* k = -132 */
    UINT64_C(0x2410fa86b1f904e4), UINT64_C(0xa1f2260deb5a36cc), /* k = -131 */
    UINT64_C(0x39b4c40ab65b3b07), UINT64_C(0x69837016455d247a), /* k = -130 */
    UINT64_C(0x2e2a366ef848fc05), UINT64_C(0xee02c011d1175062), /* k = -129 */
    UINT64_C(0x24ee91f2603a6337), UINT64_C(0xf19bccdb0dac404e), /* k = -128 */
    UINT64_C(0x3b174fea33909ebf), UINT64_C(0xe8f947c4e2ad33b0), /* k = -127 */
    UINT64_C(0x2f45d98829407eff), UINT64_C(0xed94396a4ef0f627), /* k = -126 */
    UINT64_C(0x25d17ad3543398cc), UINT64_C(0xbe102deea58d91b9), /* k = -125 */
    UINT64_C(0x3c825e1eed1f5ae1), UINT64_C(0x3019e3176f48e927), /* k = -124 */
    UINT64_C(0x30684b4bf0e5e24d), UINT64_C(0xc014b5ac590720ec), /* k = -123 */
    UINT64_C(0x26b9d5d65a5181d7), UINT64_C(0xccdd5e237a6c1a57), /* k = -122 */
    UINT64_C(0x3df622f090826959), UINT64_C(0x47c8969f2a46908a), /* k = -121 */
    UINT64_C(0x3191b58d40685447), UINT64_C(0x6ca0787f5505406f), /* k = -120 */
    UINT64_C(0x27a7c4710053769f), UINT64_C(0x8a19f9ff773766bf), /* k = -119 */
    UINT64_C(0x3f72d3e800858a98), UINT64_C(0xdcf65ccbf1f23dfe), /* k = -118 */
    UINT64_C(0x32c24320006ad547), UINT64_C(0x172b7d6ff4c1cb32), /* k = -117 */
    UINT64_C(0x289b68e666bbddd2), UINT64_C(0x78ef978cc3ce3c28), /* k = -116 */
    UINT64_C(0x207c53eb856317db), UINT64_C(0x93f2dfa3cfd83020), /* k = -115 */
    UINT64_C(0x33fa1fdf3bd1bfc5), UINT64_C(0xb98499061959e699), /* k = -114 */
    UINT64_C(0x2994e64c2fdaffd1), UINT64_C(0x6136e0d1ade18548), /* k = -113 */
    UINT64_C(0x2143eb702648cca7), UINT64_C(0x80f8b3daf181376d), /* k = -112 */
    UINT64_C(0x353978b370747aa5), UINT64_C(0x9b27862b1c01f247), /* k = -111 */
    UINT64_C(0x2a94608f8d29fbb7), UINT64_C(0xaf52d1bc1667f506), /* k = -110 */
    UINT64_C(0x22104d3fa421962c), UINT64_C(0x8c424163451ff738), /* k = -109 */
    UINT64_C(0x36807b99069c237a), UINT64_C(0x7a039bd208332526), /* k = -108 */
    UINT64_C(0x2b99fc7a6bb01c61), UINT64_C(0xfb361641a028ea85), /* k = -107 */
    UINT64_C(0x22e196c856267d1b), UINT64_C(0x2f5e78348020bb9e), /* k = -106 */
    UINT64_C(0x37cf57a6f03d94f8), UINT64_C(0x4bca59ed99cdf8fc), /* k = -105 */
    UINT64_C(0x2ca5dfb8c03143f9), UINT64_C(0xd63b7b247b0b2d96), /* k = -104 */
    UINT64_C(0x23b7e62d668dcffb), UINT64_C(0x11c92f50626f57ac), /* k = -103 */
    UINT64_C(0x39263d1570e2e65e), UINT64_C(0x82db7ee703e55912), /* k = -102 */
    UINT64_C(0x2db830ddf3e8b84b), UINT64_C(0x9be2cbec031de0dc), /* k = -101 */
    UINT64_C(0x24935a4b2986f9d6), UINT64_C(0x164f09899c17e716), /* k = -100 */
    UINT64_C(0x3a855d450f3e5c89), UINT64_C(0xbd4b4275c68ca4f0), /* k = -99 */
    UINT64_C(0x2ed1176a72984a07), UINT64_C(0xcaa29b916ba3b726), /* k = -98 */
    UINT64_C(0x257412bb8ee03b39), UINT64_C(0x6ee87c74561c9285), /* k = -97 */
    UINT64_C(0x3beceac5b166c528), UINT64_C(0xb173fa53bcfa8408), /* k = -96 */
    UINT64_C(0x2ff0bbd15ab89dba), UINT64_C(0x278ffb7630c869a0), /* k = -95 */
    UINT64_C(0x265a2fdaaefa17c8), UINT64_C(0x1fa662c4f3d387b3), /* k = -94 */
    UINT64_C(0x3d5d195de4c35940), UINT64_C(0x32a3d13b1fb8d91f), /* k = -93 */
    UINT64_C(0x3117477e509c4766), UINT64_C(0x8ee9742f4c93e0e6), /* k = -92 */
    UINT64_C(0x2745d2cb73b0391e), UINT64_C(0xd8bac3590a0fe71e), /* k = -91 */
    UINT64_C(0x3ed61e1252b38e97), UINT64_C(0xc12ad228101971c9), /* k = -90 */
    UINT64_C(0x3244e4db755c7213), UINT64_C(0x00ef0e8673478e3b), /* k = -89 */
    UINT64_C(0x28371d7c5de38e75), UINT64_C(0x9a58d86b8f6c71c9), /* k = -88 */
    UINT64_C(0x202c1796b182d85e), UINT64_C(0x1513e0560c56c16e), /* k = -87 */
    UINT64_C(0x3379bf57826af3c9), UINT64_C(0xbb530089ad579be2), /* k = -86 */
    UINT64_C(0x292e32ac68558fd4), UINT64_C(0x95dc006e2446164f), /* k = -85 */
    UINT64_C(0x20f1c22386aad976), UINT64_C(0xde4999f1b69e783f), /* k = -84 */
    UINT64_C(0x34b6036c0aaaf58a), UINT64_C(0xfd428fe92430c065), /* k = -83 */
    UINT64_C(0x2a2b35f00888c46f), UINT64_C(0x31020cba835a3384), /* k = -82 */
    UINT64_C(0x21bc2b266d3a36bf), UINT64_C(0x5a680a2ecf7b5c69), /* k = -81 */
    UINT64_C(0x35f9dea3e1f6bdfe), UINT64_C(0xf70cdd17b25efa42), /* k = -80 */
    UINT64_C(0x2b2e4bb64e5efe65), UINT64_C(0x9270b0dfc1e59502), /* k = -79 */
    UINT64_C(0x228b6fc50b7f31ea), UINT64_C(0xdb8d5a4c9b1e10ce), /* k = -78 */
    UINT64_C(0x37457fa1abfeb644), UINT64_C(0x927bc3adc4fce7b0), /* k = -77 */
    UINT64_C(0x2c37994e23322b6a), UINT64_C(0x0ec96957d0ca52f3), /* k = -76 */
    UINT64_C(0x235fadd81c2822bb), UINT64_C(0x3f07877973d50f29), /* k = -75 */
    UINT64_C(0x3899162693736ac5), UINT64_C(0x31a5a58f1fbb4b75), /* k = -74 */
    UINT64_C(0x2d4744eba9292237), UINT64_C(0x5aeaead8e62f6f91), /* k = -73 */
    UINT64_C(0x243903efba874e92), UINT64_C(0xaf22557a51bf8c74), /* k = -72 */
    UINT64_C(0x39f4d3192a721751), UINT64_C(0x1836ef2a1c65ad86), /* k = -71 */
    UINT64_C(0x2e5d75adbb8e790d), UINT64_C(0xacf8bf54e3848ad2), /* k = -70 */
    UINT64_C(0x25179157c93ec73e), UINT64_C(0x23fa32aa4f9d3bdb), /* k = -69 */
    UINT64_C(0x3b58e88c75313ec9), UINT64_C(0xd329eaaa18fb92f8), /* k = -68 */
    UINT64_C(0x2f7a53a390f4323b), UINT64_C(0x0f54bbbb472fa8c6), /* k = -67 */
    UINT64_C(0x25fb761c73f68e95), UINT64_C(0xa5dd62fc38f2ed6c), /* k = -66 */
    UINT64_C(0x3cc589c71ff0e422), UINT64_C(0xa2fbd1938e517bdf), /* k = -65 */
    UINT64_C(0x309e07d27ff3e9b5), UINT64_C(0x4f2fdadc71dac97f), /* k = -64 */
    UINT64_C(0x26e4d30eccc3215d), UINT64_C(0xd8f3157d27e23acc), /* k = -63 */
    UINT64_C(0x3e3aeb4ae1383562), UINT64_C(0xf4b82261d969f7ad), /* k = -62 */
    UINT64_C(0x31c8bc3be7602ab5), UINT64_C(0x90934eb4adee5fbe), /* k = -61 */
    UINT64_C(0x27d3c9c985e68891), UINT64_C(0x4075d8908b251965), /* k = -60 */
    UINT64_C(0x3fb942dc0970da82), UINT64_C(0x00bc8db411d4f56e), /* k = -59 */
    UINT64_C(0x32fa9be33ac0aece), UINT64_C(0x66fd3e29a7dd9125), /* k = -58 */
    UINT64_C(0x28c87cb5c89a2571), UINT64_C(0xebfdcb54864ada84), /* k = -57 */
    UINT64_C(0x20a063c4a07b5127), UINT64_C(0xeffe3c439ea2486a), /* k = -56 */
    UINT64_C(0x3433d2d433f881d9), UINT64_C(0x7ffd2d38fdd073dc), /* k = -55 */
    UINT64_C(0x29c30f1029939b14), UINT64_C(0x6664242d97d9f64a), /* k = -54 */
    UINT64_C(0x2168d8d9badc7c10), UINT64_C(0x51e9b68adfe191d5), /* k = -53 */
    UINT64_C(0x35748e292afa601a), UINT64_C(0x1ca924116635b621), /* k = -52 */
    UINT64_C(0x2ac3a4edbbfb8014), UINT64_C(0xe3ba83411e915e81), /* k = -51 */
    UINT64_C(0x22361d8afcc93343), UINT64_C(0xe962029a7edab201), /* k = -50 */
    UINT64_C(0x36bcfc1194751ed3), UINT64_C(0x0f03375d97c45001), /* k = -49 */
    UINT64_C(0x2bca63414390e575), UINT64_C(0xa59c2c4adfd04001), /* k = -48 */
    UINT64_C(0x23084f676940b791), UINT64_C(0x5149bd08b30d0001), /* k = -47 */
    UINT64_C(0x380d4bd8a8678c1b), UINT64_C(0xb542c80deb480001), /* k = -46 */
    UINT64_C(0x2cd76fe086b93ce2), UINT64_C(0xf768a00b22a00001), /* k = -45 */
    UINT64_C(0x23df8cb39efa971b), UINT64_C(0xf9208008e8800001), /* k = -44 */
    UINT64_C(0x3965adec3190f1c6), UINT64_C(0x5b67334174000001), /* k = -43 */
    UINT64_C(0x2deaf189c140c16b), UINT64_C(0x7c528f6790000001), /* k = -42 */
    UINT64_C(0x24bbf46e3433cdef), UINT64_C(0x96a872b940000001), /* k = -41 */
    UINT64_C(0x3ac653e386b9497f), UINT64_C(0x5773eac200000001), /* k = -40 */
    UINT64_C(0x2f050fe938943acc), UINT64_C(0x45f6556800000001), /* k = -39 */
    UINT64_C(0x259da6542d43623d), UINT64_C(0x04c5112000000001), /* k = -38 */
    UINT64_C(0x3c2f7086aed236c8), UINT64_C(0x07a1b50000000001), /* k = -37 */
    UINT64_C(0x3025f39ef241c56c), UINT64_C(0xd2e7c40000000001), /* k = -36 */
    UINT64_C(0x2684c2e58e9b0457), UINT64_C(0x0f1fd00000000001), /* k = -35 */
    UINT64_C(0x3da137d5b0f806f1), UINT64_C(0xb1cc800000000001), /* k = -34 */
    UINT64_C(0x314dc6448d9338c1), UINT64_C(0x5b0a000000000001), /* k = -33 */
    UINT64_C(0x27716b6a0adc2d67), UINT64_C(0x7c08000000000001), /* k = -32 */
    UINT64_C(0x3f1bdf10116048a5), UINT64_C(0x9340000000000001), /* k = -31 */
    UINT64_C(0x327cb2734119d3b7), UINT64_C(0xa900000000000001), /* k = -30 */
    UINT64_C(0x2863c1f5cdae42f9), UINT64_C(0x5400000000000001), /* k = -29 */
    UINT64_C(0x204fce5e3e250261), UINT64_C(0x1000000000000001), /* k = -28 */
    UINT64_C(0x33b2e3c9fd0803ce), UINT64_C(0x8000000000000001), /* k = -27 */
    UINT64_C(0x295be96e64066972), UINT64_C(0x0000000000000001), /* k = -26 */
    UINT64_C(0x2116545850052128), UINT64_C(0x0000000000000001), /* k = -25 */
    UINT64_C(0x34f086f3b33b6840), UINT64_C(0x0000000000000001), /* k = -24 */
    UINT64_C(0x2a5a058fc295ed00), UINT64_C(0x0000000000000001), /* k = -23 */
    UINT64_C(0x21e19e0c9bab2400), UINT64_C(0x0000000000000001), /* k = -22 */
    UINT64_C(0x3635c9adc5dea000), UINT64_C(0x0000000000000001), /* k = -21 */
    UINT64_C(0x2b5e3af16b188000), UINT64_C(0x0000000000000001), /* k = -20 */
    UINT64_C(0x22b1c8c1227a0000), UINT64_C(0x0000000000000001), /* k = -19 */
    UINT64_C(0x3782dace9d900000), UINT64_C(0x0000000000000001), /* k = -18 */
    UINT64_C(0x2c68af0bb1400000), UINT64_C(0x0000000000000001), /* k = -17 */
    UINT64_C(0x2386f26fc1000000), UINT64_C(0x0000000000000001), /* k = -16 */
    UINT64_C(0x38d7ea4c68000000), UINT64_C(0x0000000000000001), /* k = -15 */
    UINT64_C(0x2d79883d20000000), UINT64_C(0x0000000000000001), /* k = -14 */
    UINT64_C(0x246139ca80000000), UINT64_C(0x0000000000000001), /* k = -13 */
    UINT64_C(0x3a35294400000000), UINT64_C(0x0000000000000001), /* k = -12 */
    UINT64_C(0x2e90edd000000000), UINT64_C(0x0000000000000001), /* k = -11 */
    UINT64_C(0x2540be4000000000), UINT64_C(0x0000000000000001), /* k = -10 */
    UINT64_C(0x3b9aca0000000000), UINT64_C(0x0000000000000001), /* k = -9 */
    UINT64_C(0x2faf080000000000), UINT64_C(0x0000000000000001), /* k = -8 */
    UINT64_C(0x2625a00000000000), UINT64_C(0x0000000000000001), /* k = -7 */
    UINT64_C(0x3d09000000000000), UINT64_C(0x0000000000000001), /* k = -6 */
    UINT64_C(0x30d4000000000000), UINT64_C(0x0000000000000001), /* k = -5 */
    UINT64_C(0x2710000000000000), UINT64_C(0x0000000000000001), /* k = -4 */
    UINT64_C(0x3e80000000000000), UINT64_C(0x0000000000000001), /* k = -3 */
    UINT64_C(0x3200000000000000), UINT64_C(0x0000000000000001), /* k = -2 */
    UINT64_C(0x2800000000000000), UINT64_C(0x0000000000000001), /* k = -1 */
    UINT64_C(0x2000000000000000), UINT64_C(0x0000000000000001), /* k = 0 */
    UINT64_C(0x3333333333333333), UINT64_C(0x3333333333333334), /* k = 1 */
    UINT64_C(0x28f5c28f5c28f5c2), UINT64_C(0x8f5c28f5c28f5c29), /* k = 2 */
    UINT64_C(0x20c49ba5e353f7ce), UINT64_C(0xd916872b020c49bb), /* k = 3 */
    UINT64_C(0x346dc5d63886594a), UINT64_C(0xf4f0d844d013a92b), /* k = 4 */
    UINT64_C(0x29f16b11c6d1e108), UINT64_C(0xc3f3e0370cdc8755), /* k = 5 */
    UINT64_C(0x218def416bdb1a6d), UINT64_C(0x698fe69270b06c44), /* k = 6 */
    UINT64_C(0x35afe535795e90af), UINT64_C(0x0f4ca41d811a46d4), /* k = 7 */
    UINT64_C(0x2af31dc4611873bf), UINT64_C(0x3f70834acdae9f10), /* k = 8 */
    UINT64_C(0x225c17d04dad2965), UINT64_C(0xcc5a02a23e254c0d), /* k = 9 */
    UINT64_C(0x36f9bfb3af7b756f), UINT64_C(0xad5cd10396a21347), /* k = 10 */
    UINT64_C(0x2bfaffc2f2c92abf), UINT64_C(0xbde3da69454e75d3), /* k = 11 */
    UINT64_C(0x232f33025bd42232), UINT64_C(0xfe4fe1edd10b9175), /* k = 12 */
    UINT64_C(0x384b84d092ed0384), UINT64_C(0xca19697c81ac1bef), /* k = 13 */
    UINT64_C(0x2d09370d42573603), UINT64_C(0xd4e1213067bce326), /* k = 14 */
    UINT64_C(0x24075f3dceac2b36), UINT64_C(0x43e74dc052fd8285), /* k = 15 */
    UINT64_C(0x39a5652fb1137856), UINT64_C(0xd30baf9a1e626a6d), /* k = 16 */
    UINT64_C(0x2e1dea8c8da92d12), UINT64_C(0x426fbfae7eb521f1), /* k = 17 */
    UINT64_C(0x24e4bba3a4875741), UINT64_C(0xcebfcc8b9890e7f4), /* k = 18 */
    UINT64_C(0x3b07929f6da55869), UINT64_C(0x4acc7a78f41b0cba), /* k = 19 */
    UINT64_C(0x2f394219248446ba), UINT64_C(0xa23d2ec729af3d62), /* k = 20 */
    UINT64_C(0x25c768141d369efb), UINT64_C(0xb4fdbf05baf29781), /* k = 21 */
    UINT64_C(0x3c7240202ebdcb2c), UINT64_C(0x54c931a2c4b758cf), /* k = 22 */
    UINT64_C(0x305b66802564a289), UINT64_C(0xdd6dc14f03c5e0a5), /* k = 23 */
    UINT64_C(0x26af8533511d4ed4), UINT64_C(0xb1249aa59c9e4d51), /* k = 24 */
    UINT64_C(0x3de5a1ebb4fbb154), UINT64_C(0x4ea0f76f60fd4882), /* k = 25 */
    UINT64_C(0x318481895d962776), UINT64_C(0xa54d92bf80caa068), /* k = 26 */
    UINT64_C(0x279d346de4781f92), UINT64_C(0x1dd7a89933d54d20), /* k = 27 */
    UINT64_C(0x3f61ed7ca0c03283), UINT64_C(0x62f2a75b86221500), /* k = 28 */
    UINT64_C(0x32b4bdfd4d668ecf), UINT64_C(0x825bb91604e810cd), /* k = 29 */
    UINT64_C(0x289097fdd7853f0c), UINT64_C(0x684960de6a5340a4), /* k = 30 */
    UINT64_C(0x2073accb12d0ff3d), UINT64_C(0x203ab3e521dc33b6), /* k = 31 */
    UINT64_C(0x33ec47ab514e652e), UINT64_C(0x99f7863b696052bd), /* k = 32 */
    UINT64_C(0x2989d2ef743eb758), UINT64_C(0x7b2c6b62bab37564), /* k = 33 */
    UINT64_C(0x213b0f25f69892ad), UINT64_C(0x2f56bc4efbc2c450), /* k = 34 */
    UINT64_C(0x352b4b6ff0f41de1), UINT64_C(0xe55793b192d13a1a), /* k = 35 */
    UINT64_C(0x2a8909265a5ce4b4), UINT64_C(0xb77942f475742e7b), /* k = 36 */
    UINT64_C(0x22073a8515171d5d), UINT64_C(0x5f9435905df68b96), /* k = 37 */
    UINT64_C(0x3671f73b54f1c895), UINT64_C(0x65b9ef4d63241289), /* k = 38 */
    UINT64_C(0x2b8e5f62aa5b06dd), UINT64_C(0xeafb25d782834207), /* k = 39 */
    UINT64_C(0x22d84c4eeeaf38b1), UINT64_C(0x88c8eb12cecf6806), /* k = 40 */
    UINT64_C(0x37c07a17e44b8de8), UINT64_C(0xdadb11b7b14bd9a3), /* k = 41 */
    UINT64_C(0x2c99fb46503c7187), UINT64_C(0x157c0e2c8dd647b5), /* k = 42 */
    UINT64_C(0x23ae629ea696c138), UINT64_C(0xddfcd823a4ab6c91), /* k = 43 */
    UINT64_C(0x391704310a8acec1), UINT64_C(0x632e269f6ddf141b), /* k = 44 */
    UINT64_C(0x2dac035a6ed57234), UINT64_C(0x4f581ee5f17f4349), /* k = 45 */
    UINT64_C(0x24899c4858aac1c3), UINT64_C(0x72ace584c1329c3b), /* k = 46 */
    UINT64_C(0x3a75c6da27779c6b), UINT64_C(0xeaae3c079b842d2a), /* k = 47 */
    UINT64_C(0x2ec49f14ec5fb056), UINT64_C(0x5558300616035755), /* k = 48 */
    UINT64_C(0x256a18dd89e626ab), UINT64_C(0x7779c004de6912ab), /* k = 49 */
    UINT64_C(0x3bdcf495a9703ddf), UINT64_C(0x258f99a163db5111), /* k = 50 */
    UINT64_C(0x2fe3f6de212697e5), UINT64_C(0xb7a614811caf740d), /* k = 51 */
    UINT64_C(0x264ff8b1b41edfea), UINT64_C(0xf951aa00e3bf900b), /* k = 52 */
    UINT64_C(0x3d4cc11c53649977), UINT64_C(0xf54f7667d2cc19ab), /* k = 53 */
    UINT64_C(0x310a3416a91d4793), UINT64_C(0x2aa5f8530f09ae22), /* k = 54 */
    UINT64_C(0x273b5cdeedb1060f), UINT64_C(0x55519375a5a1581b), /* k = 55 */
    UINT64_C(0x3ec56164af81a34b), UINT64_C(0xbbb5b8bc3c3559c5), /* k = 56 */
    UINT64_C(0x3237811d593482a2), UINT64_C(0xfc9160969691149e), /* k = 57 */
    UINT64_C(0x282c674aadc39bb5), UINT64_C(0x96dab3ababa743b2), /* k = 58 */
    UINT64_C(0x202385d557cfafc4), UINT64_C(0x78aef622efb902f5), /* k = 59 */
    UINT64_C(0x336c0955594c4c6d), UINT64_C(0x8de4bd04b2c19e54), /* k = 60 */
    UINT64_C(0x29233aaaadd6a38a), UINT64_C(0xd7ea30d08f014b76), /* k = 61 */
    UINT64_C(0x20e8fbbbbe454fa2), UINT64_C(0x4654f3da0c01092c), /* k = 62 */
    UINT64_C(0x34a7f92c63a21903), UINT64_C(0xa3bb1fc346680eac), /* k = 63 */
    UINT64_C(0x2a1ffa89e94e7a69), UINT64_C(0x4fc8e635d1ecd88a), /* k = 64 */
    UINT64_C(0x21b32ed4baa52eba), UINT64_C(0xa63a51c4a7f0ad3b), /* k = 65 */
    UINT64_C(0x35eb7e212aa1e45d), UINT64_C(0xd6c3b607731aaec4), /* k = 66 */
    UINT64_C(0x2b22cb4dbbb4b6b1), UINT64_C(0x789c919f8f488bd0), /* k = 67 */
    UINT64_C(0x22823c3e2fc3c55a), UINT64_C(0xc6e3a7b2d906d640), /* k = 68 */
    UINT64_C(0x3736c6c9e6060891), UINT64_C(0x3e390c515b3e239a), /* k = 69 */
    UINT64_C(0x2c2bd23b1e6b3a0d), UINT64_C(0xcb60d6a77c31b615), /* k = 70 */
    UINT64_C(0x235641c8e52294d7), UINT64_C(0xd5e7121f968e2b44), /* k = 71 */
    UINT64_C(0x388a02db0837548c), UINT64_C(0x8971b698f0e3786d), /* k = 72 */
    UINT64_C(0x2d3b357c0692aa0a), UINT64_C(0x078e2bad8d82c6bd), /* k = 73 */
    UINT64_C(0x242f5dfcd20eee6e), UINT64_C(0x6c71bc8ad79bd231), /* k = 74 */
    UINT64_C(0x39e5632e1ce4b0b0), UINT64_C(0xad82c7448c2c8382), /* k = 75 */
    UINT64_C(0x2e511c24e3ea26f3), UINT64_C(0xbe023903a356cf9b), /* k = 76 */
    UINT64_C(0x250db01d8321b8c2), UINT64_C(0xfe682d9c82abd949), /* k = 77 */
    UINT64_C(0x3b4919c8d1cf8e04), UINT64_C(0xca4048fa6aac8edb), /* k = 78 */
    UINT64_C(0x2f6dae3a4172d803), UINT64_C(0xd5003a61eef07249), /* k = 79 */
    UINT64_C(0x25f1582e9ac24669), UINT64_C(0x773361e7f259f507), /* k = 80 */
    UINT64_C(0x3cb559e42ad070a8), UINT64_C(0xbeb89ca6508fee71), /* k = 81 */
    UINT64_C(0x309114b688a6c086), UINT64_C(0xfefa16eb73a6585b), /* k = 82 */
    UINT64_C(0x26da76f86d52339f), UINT64_C(0x3261abef8fb846af), /* k = 83 */
    UINT64_C(0x3e2a57f3e21d1f65), UINT64_C(0x1d691318e5f3a44b), /* k = 84 */
    UINT64_C(0x31bb798fe8174c50), UINT64_C(0xe4540f471e5c836f), /* k = 85 */
    UINT64_C(0x27c92e0cb9ac3d0d), UINT64_C(0x8376729f4b7d35f3), /* k = 86 */
    UINT64_C(0x3fa849adf5e061af), UINT64_C(0x38bd84321261efeb), /* k = 87 */
    UINT64_C(0x32ed07be5e4d1af2), UINT64_C(0x93cad0280eb4bfef), /* k = 88 */
    UINT64_C(0x28bd9fcb7ea4158e), UINT64_C(0xdca240200bc3ccbf), /* k = 89 */
    UINT64_C(0x2097b309321cde0b), UINT64_C(0xe3b50019a3030a33), /* k = 90 */
    UINT64_C(0x3425eb41e9c7c9ac), UINT64_C(0x9f88002904d1a9ea), /* k = 91 */
    UINT64_C(0x29b7ef67ee396e23), UINT64_C(0xb2d3335403daee55), /* k = 92 */
    UINT64_C(0x215ff2b98b6124e9), UINT64_C(0x5bdc291003158b77), /* k = 93 */
    UINT64_C(0x35665128df01d4a8), UINT64_C(0x92f9db4cd1bc1258), /* k = 94 */
    UINT64_C(0x2ab840ed7f34aa20), UINT64_C(0x7594af70a7c9a847), /* k = 95 */
    UINT64_C(0x222d00bdff5d54e6), UINT64_C(0xc476f2c0863aed06), /* k = 96 */
    UINT64_C(0x36ae679665622171), UINT64_C(0x3a57eacda3917b3c), /* k = 97 */
    UINT64_C(0x2bbeb9451de81ac0), UINT64_C(0xfb7988a482dac8fd), /* k = 98 */
    UINT64_C(0x22fefa9db1867bcd), UINT64_C(0x95fad3b6cf156d97), /* k = 99 */
    UINT64_C(0x37fe5dc91c0a5faf), UINT64_C(0x565e1f8ae4ef15be), /* k = 100 */
    UINT64_C(0x2ccb7e3a7cd51959), UINT64_C(0x11e4e608b725aaff), /* k = 101 */
    UINT64_C(0x23d5fe9530aa7aad), UINT64_C(0xa7ea51a0928488cc), /* k = 102 */
    UINT64_C(0x39566421e7772aaf), UINT64_C(0x7310829a84074146), /* k = 103 */
    UINT64_C(0x2ddeb68185f8eef2), UINT64_C(0xc2739baed005cdd2), /* k = 104 */
    UINT64_C(0x24b22b9ad193f25b), UINT64_C(0xcec2e2f24004a4a8), /* k = 105 */
    UINT64_C(0x3ab6ac2ae8ecb6f9), UINT64_C(0x4ad16b1d333aa10c), /* k = 106 */
    UINT64_C(0x2ef889bbed8a2bfa), UINT64_C(0xa241227dc2954da3), /* k = 107 */
    UINT64_C(0x2593a163246e8995), UINT64_C(0x4e9a81fe35443e1c), /* k = 108 */
    UINT64_C(0x3c1f689ea0b0dc22), UINT64_C(0x175d9cc9eed39694), /* k = 109 */
    UINT64_C(0x3019207ee6f3e34e), UINT64_C(0x7917b0a18bdc7876), /* k = 110 */
    UINT64_C(0x267a8065858fe90b), UINT64_C(0x9412f3b46fe39392), /* k = 111 */
    UINT64_C(0x3d90cd6f3c1974df), UINT64_C(0x535185ed7fd285b6), /* k = 112 */
    UINT64_C(0x3140a458fce12a4c), UINT64_C(0x42a79e57997537c5), /* k = 113 */
    UINT64_C(0x2766e9e0ca4dbb70), UINT64_C(0x3552e512e12a9304), /* k = 114 */
    UINT64_C(0x3f0b0fce107c5f19), UINT64_C(0xeeeb081e3510eb39), /* k = 115 */
    UINT64_C(0x326f3fd80d304c14), UINT64_C(0xbf226ce4f740bc2e), /* k = 116 */
    UINT64_C(0x2858ffe00a8d09aa), UINT64_C(0x3281f0b72c33c9be), /* k = 117 */
    UINT64_C(0x20473319a20a6e21), UINT64_C(0xc2018d5f568fd498), /* k = 118 */
    UINT64_C(0x33a51e8f69aa49cf), UINT64_C(0x9ccf48988a7fba8d), /* k = 119 */
    UINT64_C(0x2950e53f87bb6e3f), UINT64_C(0xb0a5d3ad3b99620b), /* k = 120 */
    UINT64_C(0x210d8432d2fc5832), UINT64_C(0xf3b7dc8a96144e6f), /* k = 121 */
    UINT64_C(0x34e26d1e1e608d1e), UINT64_C(0x52bfc7442353b0b1), /* k = 122 */
    UINT64_C(0x2a4ebdb1b1e6d74b), UINT64_C(0x756639034f7626f4), /* k = 123 */
    UINT64_C(0x21d897c15b1f12a2), UINT64_C(0xc451c735d92b525d), /* k = 124 */
    UINT64_C(0x362759355e981dd1), UINT64_C(0x3a1c71efc1deea2e), /* k = 125 */
    UINT64_C(0x2b52adc44bace4a7), UINT64_C(0x61b05b2634b254f2), /* k = 126 */
    UINT64_C(0x22a88b036fbd83b9), UINT64_C(0x1af37c1e908eaa5b), /* k = 127 */
    UINT64_C(0x3774119f192f3928), UINT64_C(0x2b1f2cfdb41776f8), /* k = 128 */
    UINT64_C(0x2c5cdae5adbf60ec), UINT64_C(0xef4c23fe29ac5f2d), /* k = 129 */
    UINT64_C(0x237d7beaf165e723), UINT64_C(0xf2a34ffe87bd18f1), /* k = 130 */
    UINT64_C(0x38c8c644b56fd839), UINT64_C(0x84387ffda5fb5b1b), /* k = 131 */
    UINT64_C(0x2d6d6b6a2abfe02e), UINT64_C(0x0360666484c915af), /* k = 132 */
    UINT64_C(0x24578921bbccb358), UINT64_C(0x02b3851d3707448c), /* k = 133 */
    UINT64_C(0x3a25a835f9478559), UINT64_C(0x9dec082ebe720746), /* k = 134 */
    UINT64_C(0x2e8486919439377a), UINT64_C(0xe4bcd358985b3905), /* k = 135 */
    UINT64_C(0x2536d20e102dc5fb), UINT64_C(0xea30a913ad15c738), /* k = 136 */
    UINT64_C(0x3b8ae9b019e2d65f), UINT64_C(0xdd1aa81f7b560b8c), /* k = 137 */
    UINT64_C(0x2fa2548ce1824519), UINT64_C(0x7daeece5fc44d609), /* k = 138 */
    UINT64_C(0x261b76d71ace9dad), UINT64_C(0xfe258a51969d7808), /* k = 139 */
    UINT64_C(0x3cf8be24f7b0fc49), UINT64_C(0x96a276e8f0fbf33f), /* k = 140 */
    UINT64_C(0x30c6fe83f95a636e), UINT64_C(0x121b9253f3fcc299), /* k = 141 */
    UINT64_C(0x2705986994484f8b), UINT64_C(0x41afa84329970214), /* k = 142 */
    UINT64_C(0x3e6f5a4286da18de), UINT64_C(0xcf7f739ea8f19ced), /* k = 143 */
    UINT64_C(0x31f2ae9b9f14e0b2), UINT64_C(0x3f99294bba5ae3f1), /* k = 144 */
    UINT64_C(0x27f5587c7f43e6f4), UINT64_C(0xffadbaa2fb7be98d), /* k = 145 */
    UINT64_C(0x3feef3fa65397187), UINT64_C(0xff7c5dd1925fdc15), /* k = 146 */
    UINT64_C(0x33258ffb842df46c), UINT64_C(0xcc637e4141e649ab), /* k = 147 */
    UINT64_C(0x28ead9960357f6bd), UINT64_C(0x704f983434b83aef), /* k = 148 */
    UINT64_C(0x20bbe144cf799231), UINT64_C(0x26a6135cf6f9c8bf), /* k = 149 */
    UINT64_C(0x345fced47f28e9e8), UINT64_C(0x3dd685618b294132), /* k = 150 */
    UINT64_C(0x29e63f1065ba54b9), UINT64_C(0xcb12044e08edcdc2), /* k = 151 */
    UINT64_C(0x2184ff405161dd61), UINT64_C(0x6f419d0b3a57d7ce), /* k = 152 */
    UINT64_C(0x35a19866e89c9568), UINT64_C(0xb20294dec3bfbfb0), /* k = 153 */
    UINT64_C(0x2ae7ad1f207d4453), UINT64_C(0xc19baa4bcfcc995a), /* k = 154 */
    UINT64_C(0x2252f0e5b39769dc), UINT64_C(0x9ae2eea30ca3ade1), /* k = 155 */
    UINT64_C(0x36eb1b091f58a960), UINT64_C(0xf7d17dd1add2afcf), /* k = 156 */
    UINT64_C(0x2bef48d41913bab3), UINT64_C(0xf97464a7be42263f), /* k = 157 */
    UINT64_C(0x2325d3dce0dc955c), UINT64_C(0xc790508631ce84ff), /* k = 158 */
    UINT64_C(0x383c862e3494222e), UINT64_C(0x0c1a1a704fb0d4cc), /* k = 159 */
    UINT64_C(0x2cfd3824f6dce824), UINT64_C(0xd67b4859d95a43d6), /* k = 160 */
    UINT64_C(0x23fdc683f8b0b9b7), UINT64_C(0x11fc39e17aae9cab), /* k = 161 */
    UINT64_C(0x39960a6cc11ac2be), UINT64_C(0x832d2968c44a9445), /* k = 162 */
    UINT64_C(0x2e11a1f09a7bcefe), UINT64_C(0xcf575453d03ba9d1), /* k = 163 */
    UINT64_C(0x24dae7f3aec97265), UINT64_C(0x72ac4376402fbb0e), /* k = 164 */
    UINT64_C(0x3af7d985e47583d5), UINT64_C(0x8446d256cd192b49), /* k = 165 */
    UINT64_C(0x2f2cae04b6c46977), UINT64_C(0x9d0575123dadbc3a), /* k = 166 */
    UINT64_C(0x25bd5803c569edf9), UINT64_C(0x4a6ac40e97be302f), /* k = 167 */
    UINT64_C(0x3c62266c6f0fe328), UINT64_C(0x771139b0f2c9e6b1), /* k = 168 */
    UINT64_C(0x304e85238c0cb5b9), UINT64_C(0xf8da948d8f07ebc1), /* k = 169 */
    UINT64_C(0x26a5374fa33d5e2e), UINT64_C(0x60aedd3e0c065634), /* k = 170 */
    UINT64_C(0x3dd5254c3862304a), UINT64_C(0x344afb9679a3bd20), /* k = 171 */
    UINT64_C(0x31775109c6b4f36e), UINT64_C(0x903bfc78614fca80), /* k = 172 */
    UINT64_C(0x2792a73b055d8f8b), UINT64_C(0xa6966393810ca200), /* k = 173 */
    UINT64_C(0x3f510b91a22f4c12), UINT64_C(0xa423d2859b476999), /* k = 174 */
    UINT64_C(0x32a73c7481bf700e), UINT64_C(0xe9b642047c392148), /* k = 175 */
    UINT64_C(0x2885c9f6ce32c00b), UINT64_C(0xee2b680396941aa0), /* k = 176 */
    UINT64_C(0x206b07f8a4f5666f), UINT64_C(0xf1bc53361210154d), /* k = 177 */
    UINT64_C(0x33de73276e5570b3), UINT64_C(0x1c6085235019bbae), /* k = 178 */
    UINT64_C(0x297ec285f1ddf3c2), UINT64_C(0x7d1a041c40149625), /* k = 179 */
    UINT64_C(0x21323537f4b18fce), UINT64_C(0xca7b367d0010781d), /* k = 180 */
    UINT64_C(0x351d21f3211c194a), UINT64_C(0xdd91f0c8001a59c8), /* k = 181 */
    UINT64_C(0x2a7db4c280e3476f), UINT64_C(0x17a7f3d3334847d4), /* k = 182 */
    UINT64_C(0x21fe2a3533e905f2), UINT64_C(0x79532975c2a03976), /* k = 183 */
    UINT64_C(0x366376bb8641a31d), UINT64_C(0x8eeb75893766c256), /* k = 184 */
    UINT64_C(0x2b82c562d1ce1c17), UINT64_C(0xa5892ad42c523512), /* k = 185 */
    UINT64_C(0x22cf044f0e3e7cdf), UINT64_C(0xb7a0ef102374f742), /* k = 186 */
    UINT64_C(0x37b1a07e7d30c7cc), UINT64_C(0x59017e8038bb2536), /* k = 187 */
    UINT64_C(0x2c8e19feca8d6ca3), UINT64_C(0x7a67986693c8ea91), /* k = 188 */
    UINT64_C(0x23a4e198a20abd4f), UINT64_C(0x951fad1edca0bba8), /* k = 189 */
    UINT64_C(0x3907cf5a9cddfbb2), UINT64_C(0x8832ae97c76792a5), /* k = 190 */
    UINT64_C(0x2d9fd9154a4b2fc2), UINT64_C(0x068ef21305ec7551), /* k = 191 */
    UINT64_C(0x247fe0ddd508f301), UINT64_C(0x9ed8c1a8d189f774), /* k = 192 */
    UINT64_C(0x3a66349621a7eb35), UINT64_C(0xcaf4690e1c0ff253), /* k = 193 */
    UINT64_C(0x2eb82a11b48655c4), UINT64_C(0xa25d20d816732843), /* k = 194 */
    UINT64_C(0x256021a7c39eab03), UINT64_C(0xb5174d79ab8f5369), /* k = 195 */
    UINT64_C(0x3bcd02a605caab39), UINT64_C(0x21bee25c45b21f0e), /* k = 196 */
    UINT64_C(0x2fd735519e3bbc2d), UINT64_C(0xb498b5169e2818d8), /* k = 197 */
    UINT64_C(0x2645c4414b62fcf1), UINT64_C(0x5d46f7454b534713), /* k = 198 */
    UINT64_C(0x3d3c6d35456b2e4e), UINT64_C(0xfba4bed545520b52), /* k = 199 */
    UINT64_C(0x30fd242a9def583f), UINT64_C(0x2fb6ff110441a2a8), /* k = 200 */
    UINT64_C(0x2730e9bbb18c4698), UINT64_C(0xf2f8cc0d9d014eed), /* k = 201 */
    UINT64_C(0x3eb4a92c4f46d75b), UINT64_C(0x1e5ae015c80217e1), /* k = 202 */
    UINT64_C(0x322a20f03f6bdf7c), UINT64_C(0x1848b344a001acb4), /* k = 203 */
    UINT64_C(0x2821b3f365efe5fc), UINT64_C(0xe03a2903b3348a2a), /* k = 204 */
    UINT64_C(0x201af65c518cb7fd), UINT64_C(0x802e873628f6d4ee), /* k = 205 */
    UINT64_C(0x335e56fa1c145995), UINT64_C(0x99e40b89db2487e3), /* k = 206 */
    UINT64_C(0x29184594e3437ade), UINT64_C(0x14b66fa17c1d3983), /* k = 207 */
    UINT64_C(0x20e037aa4f692f18), UINT64_C(0x1091f2e7967dc79c), /* k = 208 */
    UINT64_C(0x3499f2aa18a84b59), UINT64_C(0xb41cb7d8f0c93f5f), /* k = 209 */
    UINT64_C(0x2a14c221ad536f7a), UINT64_C(0xf67d5fe0c0a0ff80), /* k = 210 */
    UINT64_C(0x21aa34e7bddc592f), UINT64_C(0x2b977fe70080cc66), /* k = 211 */
    UINT64_C(0x35dd2172c9608eb1), UINT64_C(0xdf58cca4cd9ae0a3), /* k = 212 */
    UINT64_C(0x2b174df56de6d88e), UINT64_C(0x4c470a1d7148b3b6), /* k = 213 */
    UINT64_C(0x22790b2abe5246d8), UINT64_C(0x3d05a1b1276d5c92), /* k = 214 */
    UINT64_C(0x372811ddfd507159), UINT64_C(0xfb3c35e83f1560e9), /* k = 215 */
    UINT64_C(0x2c200e4b310d277b), UINT64_C(0x2f635e5365aab3ed), /* k = 216 */
    UINT64_C(0x234cd83c273db92f), UINT64_C(0x591c4b75eaeef658), /* k = 217 */
    UINT64_C(0x387af39371fc5b7e), UINT64_C(0xf4fa125644b18a26), /* k = 218 */
    UINT64_C(0x2d2f2942c196af98), UINT64_C(0xc3fb41de9d5ad4eb), /* k = 219 */
    UINT64_C(0x2425ba9bce122613), UINT64_C(0xcffc34b2177bdd89), /* k = 220 */
    UINT64_C(0x39d5f75fb01d09b9), UINT64_C(0x4cc6bab68bf96274), /* k = 221 */
    UINT64_C(0x2e44c5e6267da161), UINT64_C(0x0a38955ed6611b90), /* k = 222 */
    UINT64_C(0x2503d184eb97b44d), UINT64_C(0xa1c6dde5784dafa7), /* k = 223 */
    UINT64_C(0x3b394f3b128c53af), UINT64_C(0x693e2fd58d49190b), /* k = 224 */
    UINT64_C(0x2f610c2f4209dc8c), UINT64_C(0x5431bfde0aa0e0d5), /* k = 225 */
    UINT64_C(0x25e73cf29b3b16d6), UINT64_C(0xa9c1664b3bb3e711), /* k = 226 */
    UINT64_C(0x3ca52e50f85e8af1), UINT64_C(0x0f9bd6dec5eca4e8), /* k = 227 */
    UINT64_C(0x3084250d937ed58d), UINT64_C(0xa616457f04bd50ba), /* k = 228 */
    UINT64_C(0x26d01da475ff113e), UINT64_C(0x1e783798d09773c8), /* k = 229 */
    UINT64_C(0x3e19c9072331b530), UINT64_C(0x30c058f480f252d9), /* k = 230 */
    UINT64_C(0x31ae3a6c1c27c426), UINT64_C(0x8d66ad9067284247), /* k = 231 */
    UINT64_C(0x27be952349b969b8), UINT64_C(0x711ef14052869b6c), /* k = 232 */
    UINT64_C(0x3f97550542c242c0), UINT64_C(0xb4fe4ecd50d75f14), /* k = 233 */
    UINT64_C(0x32df7737689b689a), UINT64_C(0x2a650bd773df7f43), /* k = 234 */
    UINT64_C(0x28b2c5c5ed49207b), UINT64_C(0x551da312c319329c), /* k = 235 */
    UINT64_C(0x208f049e576db395), UINT64_C(0xddb14f4235adc217), /* k = 236 */
    UINT64_C(0x34180763bf15ec22), UINT64_C(0xfc4ee536bc49368a), /* k = 237 */
    UINT64_C(0x29acd2b63277f01b), UINT64_C(0xfd0bea92303a9208), /* k = 238 */
    UINT64_C(0x21570ef8285ff349), UINT64_C(0x973cbba8269541a0), /* k = 239 */
    UINT64_C(0x355817f373ccb875), UINT64_C(0xbec792a6a422029a), /* k = 240 */
    UINT64_C(0x2aacdff5f63d605e), UINT64_C(0x3239421ee9b4cee1), /* k = 241 */
    UINT64_C(0x2223e65e5e97804b), UINT64_C(0x5b6101b25490a581), /* k = 242 */
    UINT64_C(0x369fd6fd64259a12), UINT64_C(0x2bce691d541aa268), /* k = 243 */
    UINT64_C(0x2bb31264501e14db), UINT64_C(0x563eba7ddce21b87), /* k = 244 */
    UINT64_C(0x22f5a850401810af), UINT64_C(0x78322ecb171b4939), /* k = 245 */
    UINT64_C(0x37ef73b399c01ab2), UINT64_C(0x59e9e47824f87527), /* k = 246 */
    UINT64_C(0x2cbf8fc2e1667bc1), UINT64_C(0xe187e9f9b72d2a86), /* k = 247 */
    UINT64_C(0x23cc73024deb9634), UINT64_C(0xb46cbb2e2c242205), /* k = 248 */
    UINT64_C(0x39471e6a1645bd21), UINT64_C(0x20adf849e039d007), /* k = 249 */
    UINT64_C(0x2dd27ebb4504974d), UINT64_C(0xb3be603b19c7d99f), /* k = 250 */
    UINT64_C(0x24a865629d9d45d7), UINT64_C(0xc2feb3627b0647b3), /* k = 251 */
    UINT64_C(0x3aa7089dc8fba2f2), UINT64_C(0xd197856a5e7072b8), /* k = 252 */
    UINT64_C(0x2eec06e4a0c94f28), UINT64_C(0xa7ac6abb7ec05bc6), /* k = 253 */
    UINT64_C(0x25899f1d4d6dd8ed), UINT64_C(0x52f05562cbcd1638), /* k = 254 */
    UINT64_C(0x3c0f64fbaf1627e2), UINT64_C(0x1e4d556adfae89f3), /* k = 255 */
    UINT64_C(0x300c50c958de864e), UINT64_C(0x7ea444557fbed4c3), /* k = 256 */
    UINT64_C(0x267040a113e5383e), UINT64_C(0xcbb69d1132ff109c), /* k = 257 */
    UINT64_C(0x3d8067681fd526ca), UINT64_C(0xdf8a94e851981a93), /* k = 258 */
    UINT64_C(0x313385ece6441f08), UINT64_C(0xb2d543ed0e134875), /* k = 259 */
    UINT64_C(0x275c6b23eb69b26d), UINT64_C(0x5bddcff0d80f6d2b), /* k = 260 */
    UINT64_C(0x3efa45064575ea48), UINT64_C(0x92fc7fe7c018aeab), /* k = 261 */
    UINT64_C(0x3261d0d1d12b21d3), UINT64_C(0xa8c9ffec99ad5889), /* k = 262 */
    UINT64_C(0x284e40a7da88e7dc), UINT64_C(0x8707fff07af113a1), /* k = 263 */
    UINT64_C(0x203e9a1fe2071fe3), UINT64_C(0x9f39998d2f2742e7), /* k = 264 */
    UINT64_C(0x33975cffd00b6638), UINT64_C(0xfec28f484b7204a4), /* k = 265 */
    UINT64_C(0x2945e3ffd9a2b82d), UINT64_C(0x989ba5d36f8e6a1d), /* k = 266 */
    UINT64_C(0x2104b66647b56024), UINT64_C(0x7a161e42bfa521b1), /* k = 267 */
    UINT64_C(0x34d4570a0c5566a0), UINT64_C(0xc35696d132a1cf81), /* k = 268 */
    UINT64_C(0x2a4378d4d6aab880), UINT64_C(0x9c454574288172ce), /* k = 269 */
    UINT64_C(0x21cf93dd7888939a), UINT64_C(0x169dd129ba0128a5), /* k = 270 */
    UINT64_C(0x3618ec958da75290), UINT64_C(0x242fb50f9001daa1), /* k = 271 */
    UINT64_C(0x2b4723aad7b90ed9), UINT64_C(0xb68c90d940017bb4), /* k = 272 */
    UINT64_C(0x229f4fbbdfc73f14), UINT64_C(0x920a0d7a999ac95d), /* k = 273 */
    UINT64_C(0x37654c5fcc71fe87), UINT64_C(0x50101590f5c47561), /* k = 274 */
    UINT64_C(0x2c5109e63d27fed2), UINT64_C(0xa6734473f7d05de8), /* k = 275 */
    UINT64_C(0x237407eb641fff0e), UINT64_C(0xeb8f69f65fd9e4b9), /* k = 276 */
    UINT64_C(0x38b9a6456cfffe7e), UINT64_C(0x45b24323cc8fd45c), /* k = 277 */
    UINT64_C(0x2d6151d123fffecb), UINT64_C(0x6af502830a0ca9e3), /* k = 278 */
    UINT64_C(0x244ddb0db666656f), UINT64_C(0x88c402026e7087e9), /* k = 279 */
    UINT64_C(0x3a162b4923d708b2), UINT64_C(0x746cd003e3e73fdb), /* k = 280 */
    UINT64_C(0x2e7822a0e978d3c1), UINT64_C(0xf6bd73364fec3315), /* k = 281 */
    UINT64_C(0x252ce880bac70fce), UINT64_C(0x5efdf5c50cbcf5ab), /* k = 282 */
    UINT64_C(0x3b7b0d9ac471b2e3), UINT64_C(0xcb2fefa1adfb22ab), /* k = 283 */
    UINT64_C(0x2f95a47bd05af583), UINT64_C(0x08f3261af195b555), /* k = 284 */
    UINT64_C(0x261150630d159135), UINT64_C(0xa0c284e25ade2aab), /* k = 285 */
    UINT64_C(0x3ce8809e7b55b522), UINT64_C(0x9ad0d49d5e304444), /* k = 286 */
    UINT64_C(0x30ba007ec9115db5), UINT64_C(0x48a7107de4f369d0), /* k = 287 */
    UINT64_C(0x26fb3398a0dab15d), UINT64_C(0xd3b8d9fe50c2bb0d), /* k = 288 */
    UINT64_C(0x3e5eb8f434911bc9), UINT64_C(0x52c15cca1ad12b48), /* k = 289 */
    UINT64_C(0x31e560c35d40e307), UINT64_C(0x75677d6e7bda8906), /* k = 290 */
    UINT64_C(0x27eab3cf7dcd826c), UINT64_C(0x5dec645863153a6c), /* k = 291 */
    UINT64_C(0x3fddec7f2faf3713), UINT64_C(0xc97a3a2704eec3df), /* k = 292 */
};

#endif
/*************** End file fmt_float_table.h *********************************/

/*************** Begin file platform/platform.h *****************************/
/* platform.h - everything bufwriter asks of the operating system, behind
 * one small interface: threads (locks, once, yield), thread-local storage
 * and the thread-exit hook, fork handlers, the clock, large blocks mapped
 * from the kernel, sending to a file descriptor without SIGPIPE, and the
 * FILE adapter. One file per family implements it: platform/posix.c
 * (Linux with glibc or musl, the BSDs, macOS) and platform/windows.c. No
 * other file of the library includes an OS header; they include this one.
 *
 * Contract of each call, the same on every platform. Where a platform has
 * no such facility the call says what it does there instead. Nothing here
 * is part of the public API. */
#ifndef BW_PLATFORM_H
#define BW_PLATFORM_H

/* #include "../bufwriter.h": amalgamated above */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#if !defined(_WIN32)
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h defines it) */
#endif

/* Private functions have external linkage inside the library (hidden by
 * -fvisibility=hidden) and are static in the single-header build. */
#ifndef BW__INTERNAL
#  define BW__INTERNAL
#endif

/* ---- thread-local storage ---------------------------------------------
 * BW__THREAD_LOCAL declares a thread-local variable: C11's _Thread_local,
 * with the initial-exec model where the compiler has one (one load, no
 * __tls_get_addr call, in the shared library too); MSVC's own spelling. */
#if defined(_MSC_VER) && !defined(__clang__)
#  define BW__THREAD_LOCAL __declspec(thread)
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32)
#  define BW__THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))
#else
#  define BW__THREAD_LOCAL _Thread_local
#endif

/* ---- locks and once ---------------------------------------------------
 * bw__mutex: a plain (not recursive) lock. BW__MUTEX_INIT initialises a
 * static one; bw__mutex_init a dynamic one (false when the system is out
 * of resources; then nothing is to be destroyed). bw__once_run calls fn
 * exactly once per bw__once (BW__ONCE_INIT), every caller returning after
 * it ran. POSIX: pthreads, inline. Windows: an SRWLOCK and an INIT_ONCE,
 * both one pointer, kept opaque here so no file but windows.c sees
 * <windows.h>. */
#if defined(_WIN32)
typedef struct bw__mutex {
    void *opaque;
} bw__mutex;
typedef struct bw__once {
    void *opaque;
} bw__once;
#  define BW__MUTEX_INIT {NULL}
#  define BW__ONCE_INIT {NULL}
BW__INTERNAL bool bw__mutex_init(bw__mutex *m);
BW__INTERNAL void bw__mutex_destroy(bw__mutex *m);
BW__INTERNAL void bw__mutex_lock(bw__mutex *m);
BW__INTERNAL void bw__mutex_unlock(bw__mutex *m);
BW__INTERNAL void bw__once_run(bw__once *o, void (*fn)(void));
#else
#  include <pthread.h>
typedef pthread_mutex_t bw__mutex;
typedef pthread_once_t bw__once;
#  define BW__MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#  define BW__ONCE_INIT PTHREAD_ONCE_INIT
static inline bool bw__mutex_init(bw__mutex *m) { return pthread_mutex_init(m, NULL) == 0; }
static inline void bw__mutex_destroy(bw__mutex *m) { (void)pthread_mutex_destroy(m); }
static inline void bw__mutex_lock(bw__mutex *m) { (void)pthread_mutex_lock(m); }
static inline void bw__mutex_unlock(bw__mutex *m) { (void)pthread_mutex_unlock(m); }
static inline void bw__once_run(bw__once *o, void (*fn)(void)) { (void)pthread_once(o, fn); }
#endif

/* Let another thread run (a wait that polls). */
BW__INTERNAL void bw__yield(void);

/* ---- the thread-exit hook ---------------------------------------------
 * One per process. bw__thread_exit_init(fn) sets it up (call it once,
 * under a bw__once): false when the system cannot. bw__thread_exit_set(v)
 * makes fn(v) run when the calling thread exits (v non-NULL; a later call
 * replaces v): false on failure. bw__thread_exit_remove, at unload, stops
 * every later call of fn (the caller's threads then leak what they hold).
 * POSIX: a pthread key's destructor. Windows: a fiber-local slot's
 * callback (FlsAlloc), which runs at thread exit too. */
BW__INTERNAL bool bw__thread_exit_init(void (*fn)(void *));
BW__INTERNAL bool bw__thread_exit_set(void *value);
BW__INTERNAL void bw__thread_exit_remove(void);

/* ---- fork ---------------------------------------------------------------
 * Register handlers run around fork (pthread_atfork: prepare in the parent
 * before, parent and child after). Windows has no fork: nothing. */
BW__INTERNAL void bw__atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* ---- the clock ----------------------------------------------------------
 * A coarse monotonic clock in milliseconds (read on slow paths only; its
 * origin is arbitrary), or 0 when it cannot be read. */
BW__INTERNAL uint64_t bw__now_ms(void);

/* ---- memory -------------------------------------------------------------
 * Where BW__MAP_MIN is defined (Linux), blocks of that size and up may come
 * straight from the kernel: bw__map(size) maps size bytes at a 2 MiB
 * boundary, asking for huge pages (NULL on failure); bw__remap moves a
 * mapped block's pages to a new mapping of new_size (no copy where the
 * kernel can move pages; NULL on failure, the block untouched); bw__unmap
 * gives one back (size as mapped); bw__unmap_tail gives back a mapped
 * block's pages past its first `keep` bytes in place (keep a multiple of
 * 2 MiB, below size): the block keeps its address and its pages below
 * keep, and is then a block of keep bytes. Pages of a mapping that were
 * never written cost address space, not memory: bw__unmap_tail over them
 * frees nothing but addresses. bw__malloc_trim returns malloc's free
 * memory to the system where the C library can (glibc), else nothing. */
#if defined(__linux__)
#  define BW__MAP_MIN ((size_t)2 << 20)
BW__INTERNAL void *bw__map(size_t size);
BW__INTERNAL void *bw__remap(void *block, size_t old_size, size_t new_size);
BW__INTERNAL void bw__unmap(void *block, size_t size);
BW__INTERNAL void bw__unmap_tail(void *block, size_t size, size_t keep);
#endif
BW__INTERNAL void bw__malloc_trim(void);
/* A block of `size` bytes that free() releases, starting on a 4 KiB
 * boundary where the C library can give one (C11's aligned_alloc, for a
 * size that is a multiple of 4 KiB; elsewhere, and on Windows, where
 * free() cannot release an aligned block, malloc's): NULL on failure.
 * Why: glibc's malloc puts a block 16 bytes past a page boundary (or
 * anywhere in its heap), and a memcpy whose destination lies a few
 * hundred bytes past its source modulo 4 KiB runs up to 1.3x slower
 * (loads that look like they alias the stores just made); a page-aligned
 * block copies as fast as the page-aligned buffer a user compares it to,
 * whatever the source's alignment. */
BW__INTERNAL void *bw__malloc_pages(size_t size);
/* Fault in the whole 4 KiB pages of block[0, n) for writing, in one call
 * where the kernel can (Linux >= 5.14, MADV_POPULATE_WRITE); elsewhere, or
 * when the call fails (an older kernel, a larger page size), nothing: the
 * pages fault in one at a time as they are written, as before. It changes
 * no byte. */
BW__INTERNAL void bw__populate(void *block, size_t n);

/* Whether the environment is the program's own to read: false in a
 * set-user-ID or set-group-ID program, whose environment belongs to its
 * caller (what secure_getenv checks); true on Windows. */
BW__INTERNAL bool bw__env_trusted(void);

/* ---- file descriptors ---------------------------------------------------
 * One send of iov[0, cnt) to fd (cnt >= 1), that never raises SIGPIPE
 * whatever fd is at that moment: bytes sent (possibly fewer than asked,
 * like writev), or -1 with errno. POSIX: writev or sendmsg, with SIGPIPE
 * held off and the one a write raised taken back. Windows: the C runtime's
 * _write, piece by piece (there is no SIGPIPE). */
BW__INTERNAL ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt);

/* ---- the FILE adapter ---------------------------------------------------
 * Where BW_HAVE_FILE_ADAPTER is defined (bufwriter.h): a write-only FILE
 * over a cookie whose first member is a const bw__file_ops *. The FILE's
 * writes call ops->write (1: all taken; 0: failed, errno set); fseek and
 * ftell fail with ESPIPE; fclose calls ops->close when it is not NULL.
 * NULL with errno when the C library cannot make the FILE. glibc and musl:
 * fopencookie; the BSDs, macOS and Android: funopen. */
typedef struct bw__file_ops {
    int (*write)(void *cookie, const char *buf, size_t n);
    void (*close)(void *cookie);
} bw__file_ops;
#ifdef BW_HAVE_FILE_ADAPTER
BW__INTERNAL FILE *bw__file_make(void *cookie);
#endif

#endif /* BW_PLATFORM_H */
/*************** End file platform/platform.h *******************************/

/*************** Begin file pool/track.h ************************************/
/* track.h - tell memory checkers which bytes the user may touch.
 *
 * A pool hides use-after-free from the tools that would catch it: a returned
 * block is still mapped and the next rent hands out the same bytes. So blocks
 * held by the pool are marked no-access, and unmarked when rented:
 *   - under AddressSanitizer: poisoned (a touch is reported as
 *     use-after-poison, with the stack);
 *   - under valgrind memcheck, in builds with -DBW_VALGRIND and valgrind's
 *     headers: NOACCESS, and UNDEFINED when rented (DEFINED when the pool
 *     zeroes blocks);
 *   - otherwise: nothing, no cost.
 * The pool code calls only these three macros, never the tools directly. */
#ifndef BW_TRACK_H
#define BW_TRACK_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#  define BW__ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define BW__ASAN 1
#  endif
#endif

#if defined(BW__ASAN)
#  include <sanitizer/asan_interface.h>
#  define BW__TRACK_NOACCESS(p, n)  ASAN_POISON_MEMORY_REGION((p), (n))
#  define BW__TRACK_UNDEFINED(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#  define BW__TRACK_DEFINED(p, n)   ASAN_UNPOISON_MEMORY_REGION((p), (n))
/* A block handed back while it is still poisoned was already returned. */
#  define BW__TRACK_IS_NOACCESS(p)  __asan_address_is_poisoned(p)
#elif defined(BW_VALGRIND) && defined(__has_include)
#  if __has_include(<valgrind/memcheck.h>)
#    include <valgrind/memcheck.h>
#    define BW__TRACK_NOACCESS(p, n)  ((void)VALGRIND_MAKE_MEM_NOACCESS((p), (n)))
#    define BW__TRACK_UNDEFINED(p, n) ((void)VALGRIND_MAKE_MEM_UNDEFINED((p), (n)))
#    define BW__TRACK_DEFINED(p, n)   ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#  endif
#endif

#ifndef BW__TRACK_IS_NOACCESS
#  define BW__TRACK_IS_NOACCESS(p)  ((void)(p), 0)
#endif

#ifndef BW__TRACK_NOACCESS
#  define BW__TRACK_NOACCESS(p, n)  ((void)(p), (void)(n))
#  define BW__TRACK_UNDEFINED(p, n) ((void)(p), (void)(n))
#  define BW__TRACK_DEFINED(p, n)   ((void)(p), (void)(n))
#endif

#endif /* BW_TRACK_H */
/*************** End file pool/track.h **************************************/

/*************** Begin file pool/pool_internal.h ****************************/
/* pool_internal.h - the pool's private structures, shared by the files of
 * pool/. The writer includes it only through pool_writer.h, whose inline
 * accessors read it; the writer's files read none of it. Nothing here is
 * part of the public API. */
#ifndef BW_POOL_INTERNAL_H
#define BW_POOL_INTERNAL_H

/* #include "../bufwriter.h": amalgamated above */
/* #include "../platform/platform.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdatomic.h>
#include <stdbool.h>

/* Private functions have external linkage inside the library (hidden by
 * -fvisibility=hidden) and are static in the single-header build. */
#ifndef BW__INTERNAL
#  define BW__INTERNAL
#endif

#define BW__MAX_CLASSES 64
#define BW__RECENT 16      /* lengths remembered for the learned size      */

/* The learned jump's floor: a contiguous writer whose growth crosses it
 * jumps to the learned size. Measured (256 KiB / 1 MiB jobs in 8 KiB
 * chunks against a warm memcpy, private pool): a floor of 8 KiB costs
 * 1.07x / 1.01x, 16 KiB 1.17x / 1.03x, 32 KiB 1.31x / 1.07x, 64 KiB
 * 1.58x / 1.13x, 128 KiB 2.16x / 1.25x: below the floor a job copies what
 * it held at every doubling. 16 KiB is 64 times the largest small message
 * (256 B) and 32 times the first block; 8 KiB would make most medium
 * messages jump to the size of a pool's big jobs. */
#define BW__DEFAULT_JUMP_FLOOR   ((size_t)16 << 10)   /* 16 KiB */
/* A writer's first block: 512 B holds a 256-byte payload with its header in
 * one rent; with 256 B such a message rented twice and copied (45 ns
 * against 19 ns per message, E/mfb rows), and 16 or 64 B messages cost the
 * same either way (.NET's ArrayBufferWriter starts at 256, Go's
 * bytes.Buffer at 64). */
#define BW__DEFAULT_FIRST_BLOCK  ((size_t)512)
/* A segmented writer's first block, and the least of every later one:
 * 4 KiB, a page, as 0.3 (measured in bench/BENCHMARKS.md, "Segmented"). */
#define BW__DEFAULT_CHAIN_BLOCK  ((size_t)4096)

/* The pool's options, one table: the bw_pool_options field, its type and
 * the value a 0 (NULL) there stands for (bufwriter.h documents each at its
 * field). bw__options_resolve (pool.c) is the one reader: it fills every
 * default, and the rest of the pool reads only the resolved copy. Adding an
 * option is its field and doc line in bufwriter.h, one row here, and the
 * code that uses it. */
#define BW__OPTIONS(X)                                                   \
    X(max_pooled_size, size_t, (size_t)1 << 20)       /* 1 MiB */        \
    X(min_block_size, size_t, (size_t)16)                                \
    X(max_blocks_per_class, size_t, (size_t)32)                          \
    X(max_retained_bytes, size_t, (size_t)64 << 20)   /* 64 MiB */       \
    X(max_large_bytes, size_t, (size_t)80 << 20)      /* 80 MiB */       \
    X(max_large_blocks, size_t, (size_t)8)                               \
    X(max_learned_size, size_t, (size_t)64 << 20)     /* 64 MiB */       \
    X(decay_ms, uint32_t, 10000u)  /* jemalloc's dirty decay */          \
    X(min_first_block, size_t, BW__DEFAULT_FIRST_BLOCK)                  \
    X(jump_floor, size_t, BW__DEFAULT_JUMP_FLOOR)                         \
    X(chain_block_size, size_t, BW__DEFAULT_CHAIN_BLOCK)                  \
    X(allocator, const bw_allocator *, bw_allocator_libc())
/* Thread caches serve classes up to this size: the medium blocks (64 KiB
 * .. 1 MiB, the default threshold) too, so a job from 64 KiB up rents and
 * returns them without the shared level's lock, as mimalloc keeps
 * per-thread pages for these sizes (through the shared level a rent plus a
 * return of 64 KiB .. 1 MiB took 52-59 ns; mimalloc's malloc + free 12).
 * What an idle thread holds there decays only with its help (its next slow
 * path, or its exit), so the classes above BW__TCACHE_SMALL share a bound
 * in bytes per thread and pool, BW__TCACHE_MEDIUM_BYTES: 4 MiB holds one
 * block of each medium class (64 KiB .. 1 MiB: 1,984 KiB) twice over, what
 * a thread running one job at a time and the job after it needs, and is
 * one sixteenth of the default max_retained_bytes. */
#define BW__TCACHE_MAX_SHIFT 20
#define BW__TCACHE_MAX ((size_t)1 << BW__TCACHE_MAX_SHIFT)
#define BW__TCACHE_SMALL ((size_t)32 << 10)
#define BW__TCACHE_MEDIUM_BYTES ((size_t)4 << 20)
#define BW__ALL_FLAGS (BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE | BW_POOL_CHECKED | \
                       BW_POOL_LEARN_SIZE | BW_POOL_FILL | BW_POOL_BYPASS |              \
                       BW_POOL_NO_LARGE_RETENTION | BW_POOL_NO_LEARNED_GROWTH)

/* Counters, defined once (X-macro) so that the per-thread and the pool-wide
 * copies, their sum and their folding can never disagree. rents is
 * hits + misses; out_bytes is bytes rented minus bytes returned (mod 2^64:
 * a block rented on one thread and returned on another makes one thread's
 * share negative, the sum is right). */
#define BW__COUNTERS(X) \
    X(hits) X(misses) X(returns) X(backing_allocs) X(backing_frees) X(out_bytes) \
    X(large_hits) X(decayed)

typedef struct bw__counters {
#define BW__FIELD(name) _Atomic uint64_t name;
    BW__COUNTERS(BW__FIELD)
#undef BW__FIELD
} bw__counters;

/* Plain sums of counters, for stats. */
typedef struct bw__sums {
#define BW__FIELD(name) uint64_t name;
    BW__COUNTERS(BW__FIELD)
#undef BW__FIELD
} bw__sums;

static inline void bw__sums_add(bw__sums *s, bw__counters *c)
{
#define BW__FIELD(name) s->name += atomic_load_explicit(&c->name, memory_order_relaxed);
    BW__COUNTERS(BW__FIELD)
#undef BW__FIELD
}

/* Add sums to a pool's counters (an exiting thread's totals). */
static inline void bw__counters_fold(bw__counters *dst, const bw__sums *src)
{
#define BW__FIELD(name) atomic_fetch_add_explicit(&dst->name, src->name, memory_order_relaxed);
    BW__COUNTERS(BW__FIELD)
#undef BW__FIELD
}

/* One class of a thread cache: its stack and the counters that drive it,
 * together, so a fast path reaches them all from one pointer.
 *
 * The stack is driven by two monotonic counters: push and pop. The number
 * of blocks held is push - pop, the top slot is at that index, and the
 * counters double as the statistics (a pop is a hit, a push a return), so
 * each fast-path operation updates exactly one counter: a relaxed load and
 * store, no lock prefix. resv is how many slots have retention budget
 * reserved from the pool; a return takes the fast path only into a
 * reserved slot. low is the fewest blocks held since the cache's last
 * decay: the blocks below it are untouched since then. 64 bytes, a cache
 * line: a class's index is a shift. */
typedef struct bw__tc_class {
    _Atomic uint64_t push, pop;
    void *slots[BW_THREAD_CACHE_SLOTS];
    unsigned char resv;
    unsigned char low;     /* only the owner, or a caller that holds the
                              owner quiescent, reads or writes resv and low */
    unsigned char pad_[64 - 2 * 8 - BW_THREAD_CACHE_SLOTS * sizeof(void *) - 2];
} bw__tc_class;
_Static_assert(sizeof(bw__tc_class) == 64, "a thread cache's class is a cache line");

/* What a slow call last saw of one class of a thread cache: its push + pop
 * count, and the time it first saw that count. The fast paths read no
 * clock, so a block they moved counts as moved at the thread's next slow
 * call; a count unchanged since `ms` means no block of the class has moved
 * since then. Per class, not per cache: the small messages a thread keeps
 * serving from its cache must not make the big block it left idle look
 * young. Kept apart from bw__tc_class, whose line the fast paths use. */
typedef struct bw__tc_seen {
    uint64_t ops, ms;
} bw__tc_seen;

/* One thread's cache for one pool. Only its owner thread changes it (other
 * threads read it for stats, and empty it only when the owner is quiescent
 * (destroy) or gone (exit)). */
typedef struct bw__tcache {
    _Atomic uint64_t pool_id;        /* the pool's id; 0 once the pool is gone */
    bw__tc_class *first;             /* the class of first_size                */
    size_t first_size;               /* the pool's first_block when its rent and
                                        return take the fast path, else 0: a
                                        small message's block, one compare    */
    size_t first_back;               /* first_size, or SIZE_MAX when it is 0: a
                                        release compares a writer's capacity
                                        with it, which is 0 when the writer
                                        has no block, so that compare alone
                                        says "a block, of the first size"     */
    size_t shared_first;             /* first_size in the shared pool's cache,
                                        0 in every other: a writer on the
                                        shared pool by NULL rents its first
                                        block with no load of the pool and no
                                        compare of its id (the shared pool is
                                        never destroyed: its caches are never
                                        orphaned)                             */
    bw_pool *pool;                   /* valid while pool_id != 0               */
    struct bw__tcache *thread_next;  /* the owner thread's list                */
    struct bw__tcache *pool_prev, *pool_next; /* pool registry (bw__reg_lock) */
    bw__counters ctr;                /* slow-path events                       */
    uint64_t last_decay;             /* when this cache last decayed (ms)      */
    struct bw__tc_seen *seen;        /* per class, after cls: decay's ages     */
    size_t medium;                   /* bytes of the reserved slots of classes
                                        above BW__TCACHE_SMALL: at most
                                        BW__TCACHE_MEDIUM_BYTES              */
    bw__tc_class cls[];              /* tc_classes                             */
} bw__tcache;

/* The shared pool once created (pool.c), for a writer's general first
 * rent and for a new cache's shared_first; NULL before: then
 * bw_pool_shared() creates it. It is never destroyed. */
static bw_pool *_Atomic bw__shared_pool;

/* Blocks held in class ci of tc. */
static inline size_t bw__tc_held(bw__tcache *tc, unsigned ci)
{
    return (size_t)(atomic_load_explicit(&tc->cls[ci].push, memory_order_relaxed) -
                    atomic_load_explicit(&tc->cls[ci].pop, memory_order_relaxed));
}

/* The shared level of one class: a locked stack, grown on demand up to the
 * per-class bound. An array, not a list threaded through the blocks: a
 * use-after-return can then never corrupt the pool's own bookkeeping. */
typedef struct bw__kept {
    void *block;
    uint64_t since;            /* when it came back (ms): decay              */
} bw__kept;

typedef struct bw__class {
    bw__mutex lock;
    bw__kept *stack;           /* oldest at the bottom                       */
    size_t count, alloc;
} bw__class;

struct bw_pool {
    size_t detach_copy_cap;    /* the first field, read there by the inline
                                  bw_detach_malloc (bufwriter.h): a block of
                                  at most this capacity holds a text that
                                  bw__pool_copies copies: fast_rent_limit,
                                  at most BW__DETACH_COPY_MAX                */
    uint64_t id;               /* unique for the process lifetime            */
    bw_pool *all_prev, *all_next; /* every pool (bw__all_lock), for fork     */
    /* The options as resolved (bw__options_resolve): every default filled,
     * min_first_block and chain_block_size rounded to the sizes writers
     * get, allocator pointing at `alloc`. The pool reads its options here,
     * by their public names; bw_pool_get_options hands out a copy. */
    bw_pool_options opt;
    bw_allocator alloc;        /* a copy of the hook (opt.allocator)         */
    /* Derived from opt once (bw__pool_derive), for the paths that ask. */
    unsigned min_shift;        /* log2(min_block_size)                       */
    unsigned nclasses;         /* classes min_block_size .. max_pooled_size  */
    bool use_tcache;
    bool checked;
    bool bypass;               /* BW_POOL_BYPASS: every rent a real alloc    */
    size_t extra;              /* canary bytes after each backing block      */
    size_t fast_rent_limit;    /* largest thread-cached class; 0 when rent must
                                  skip the fast path (checked mode, no thread
                                  cache)                                      */
    size_t fast_return_span;   /* the largest small class (at most
                                  BW__TCACHE_SMALL) - min_block_size + 1;
                                  0 when return must skip it (also when
                                  zeroing)                                   */
    size_t medium_return_span; /* the largest thread-cached class -
                                  min_block_size + 1: a return the cache
                                  takes with a clock read (bw__return_medium);
                                  0 with fast_return_span                    */
    unsigned tc_classes;       /* classes a thread cache serves              */
    _Atomic uint64_t next_decay; /* when the shared level and the large blocks
                                  are next swept (ms)                         */
    /* The writer's shortcuts (mode_contig.c), asked of the size rule once at
     * creation (bw__pool_shortcuts), so a small message reads one field for
     * each question. */
    size_t first_block;        /* a contiguous writer's first block when it
                                  needs at most this many bytes: min_first,
                                  when no learned size or jump applies to it;
                                  0 when one does                            */
    unsigned first_class;      /* its class index                            */
    size_t first_fast;         /* first_block when the thread cache serves
                                  its class inline, else 0: each cache's
                                  first_size                                 */
    size_t learn_above;        /* a contiguous writer's final length teaches
                                  the pool when above this: 0 with
                                  BW_POOL_LEARN_SIZE, jump_floor with the
                                  learned jump alone, SIZE_MAX with neither  */
    _Atomic size_t reserved;   /* shared-level bytes + every thread cache's
                                  reserved slots                              */
    _Atomic size_t shared_bytes; /* bytes in the shared level                */
    bw__counters ctr;          /* paths without a thread cache, and the
                                  counters of threads that have exited        */
    void *check;               /* checked mode's side table (check.c)        */
    bw__tcache *caches;        /* registry of thread caches (bw__reg_lock)   */
    _Atomic unsigned exiting;  /* threads freeing an unlinked cache's blocks */
    /* Large retention (large.c): kept blocks above the threshold. */
    bw__mutex large_lock;
    struct bw__large *large;   /* oldest first                               */
    bool keep_large;           /* large retention on                         */
    bool reserves;             /* writers may rent reservations (pool.c)     */
    size_t nlarge;
    _Atomic size_t large_bytes;
    /* Learned starting size (growth.c): the last lengths writers ended at. */
    bool learn;
    _Atomic size_t recent[BW__RECENT];
    _Atomic unsigned recent_next;
    /* The learned jump: final lengths of writers that passed jump_floor,
     * and when (ms), so they age (growth.c). */
    bool learn_growth;
    struct {
        _Atomic size_t len;
        _Atomic uint64_t ms;
    } big[BW__RECENT];
    _Atomic unsigned big_next;
    /* Their statistic as last computed (a block size: the growth rule's
     * for it), and when (ms) it next changes by ageing (UINT64_MAX: not by
     * ageing), checked at the pool's clock reads (bw__jump_age), so a move
     * reads one field and no clock. */
    _Atomic size_t jump;
    _Atomic uint64_t jump_until;
    bw__class cls[];           /* nclasses                                   */
};

typedef struct bw__large {
    void *block;
    size_t size;
    uint64_t since;            /* when it came back (ms): decay              */
} bw__large;

/* Size arithmetic ------------------------------------------------------- */

/* The smallest power of two >= x, for 1 <= x <= SIZE_MAX/2 + 1. */
static inline size_t bw__pow2_ceil(size_t x)
{
    if (x <= 1) return 1;
    return (size_t)1 << (64 - __builtin_clzll((unsigned long long)(x - 1)));
}

static inline bool bw__is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static inline unsigned bw__log2(size_t x)
{
    return (unsigned)(63 - __builtin_clzll((unsigned long long)x));
}

/* Class index of a request at or below the threshold: one bit scan.
 * (x - 1) | (min_size - 1) has its top bit where the class's does; a
 * request of 0 counts as 1. */
static inline unsigned bw__class_index(const bw_pool *p, size_t min_size)
{
    size_t x = (min_size - (min_size != 0)) | (p->opt.min_block_size - 1);
    return (unsigned)(64 - __builtin_clzll((unsigned long long)x)) - p->min_shift;
}

/* bw_pool_class_size for 1 <= min_size <= the threshold, inline: the size
 * rule asks it two or three times for every move (out of line, a call and
 * the public function's checks each time). */
static inline size_t bw__class_size(const bw_pool *p, size_t min_size)
{
    return p->bypass ? min_size : p->opt.min_block_size << bw__class_index(p, min_size);
}

/* Counter helpers: a thread cache's counters have one writer, so a relaxed
 * load and store suffice; the pool-wide ones take an atomic add. */
#define BW__TC_ADD(tc, name, v) \
    atomic_store_explicit(&(tc)->ctr.name, \
        atomic_load_explicit(&(tc)->ctr.name, memory_order_relaxed) + (v), \
        memory_order_relaxed)
#define BW__POOL_ADD(p, name, v) \
    atomic_fetch_add_explicit(&(p)->ctr.name, (uint64_t)(v), memory_order_relaxed)

/* Count into the thread cache when there is one (no atomic RMW), else into
 * the pool-wide counters. */
#define BW__COUNT(p, tc, name, v) \
    do { if (tc) BW__TC_ADD(tc, name, v); else BW__POOL_ADD(p, name, v); } while (0)

/* Allocation through the hook, counted (tc may be NULL). Never called with
 * one of the pool's locks held: a hook may use bufwriter itself. */
BW__INTERNAL void *bw__backing_alloc(bw_pool *p, bw__tcache *tc, size_t size);
BW__INTERNAL void bw__backing_free(bw_pool *p, bw__tcache *tc, void *b, size_t size);
/* bw_pool_trim's last step: let the libc allocator give free memory back to
 * the kernel (alloc.c). */
BW__INTERNAL void bw__alloc_trim(const bw_allocator *a);
/* Whether a block of that size from hook a is memory free() releases. */
BW__INTERNAL bool bw__alloc_is_malloc(const bw_allocator *a, size_t size);
/* Whether hook a's blocks of BW__MAP_MIN bytes and up are the platform's
 * mappings (bw__map): the libc hooks where the platform maps; never where
 * BW__MAP_MIN is not defined. */
BW__INTERNAL bool bw__alloc_maps(const bw_allocator *a);

/* Blocks on their way back to the allocator, gathered under a lock and
 * freed after it (bw__backing_free outside every lock). A shared-level
 * release fills it BW__FREES_MAX at a time; a thread cache's whole flush
 * must fit at once: its classes run from the smallest class a pool may have
 * (BW__MIN_CLASS) to BW__TCACHE_MAX, each with BW_THREAD_CACHE_SLOTS blocks. */
#define BW__MIN_CLASS ((size_t)16)
#define BW__FREES_MAX 72
typedef struct bw__frees {
    size_t n;
    struct { void *block; size_t size; } e[BW__FREES_MAX];
} bw__frees;
_Static_assert(BW__MIN_CLASS == (size_t)1 << 4 &&
                   (BW__TCACHE_MAX_SHIFT - 4 + 1) * BW_THREAD_CACHE_SLOTS <= BW__FREES_MAX,
               "a thread cache's whole flush must fit in one bw__frees");
BW__INTERNAL void bw__frees_flush(bw_pool *p, bw__frees *f);

/* The other fixed capacities, and what must hold for each. */
_Static_assert((BW__RECENT & (BW__RECENT - 1)) == 0 && BW__RECENT >= 2,
               "the learning rings: a power of two, so slot = counter % BW__RECENT "
               "stays in turn when the counter wraps; two at least for the jump");
_Static_assert((BW__TCACHE_MAX_SHIFT - 4 + 1) <= BW__MAX_CLASSES &&
                   (sizeof(size_t) * 8 - 1) - 4 + 1 <= BW__MAX_CLASSES,
               "a thread cache's per-class arrays cover every class a pool may have");
_Static_assert(BW_THREAD_CACHE_SLOTS <= 255,
               "resv and low (unsigned char) count a class's slots");
_Static_assert(BW__TCACHE_MEDIUM_BYTES >= BW_THREAD_CACHE_SLOTS * BW__TCACHE_MAX,
               "every slot of the largest thread-cached class fits the medium bound");

/* fork: the lock that guards the shared pool's creation. */
BW__INTERNAL void bw__shared_lock_fork(bool lock);

/* The clock (bw__now_ms) is the platform layer's, read on slow paths only. */
/* Decay: give back what has been retained unused for decay_ms (the shared
 * level and the large blocks when due; the calling thread's cache tc). */
BW__INTERNAL void bw__decay(bw_pool *p, bw__tcache *tc, uint64_t now);
/* Every slow path starts here (pool.c): the thread's cache (NULL without
 * one), and decay when it is on, with the learned jump's ageing
 * (bw__jump_age). The clock is read on slow paths only. */
BW__INTERNAL bw__tcache *bw__slow_enter(bw_pool *p, uint64_t *now);

/* Zeroing the compiler keeps (BW_POOL_ZERO_ON_RETURN). */
BW__INTERNAL void bw__zero(void *b, size_t n);

/* Shared level. */
BW__INTERNAL void *bw__shared_pop(bw_pool *p, unsigned ci);
BW__INTERNAL bool bw__shared_push(bw_pool *p, unsigned ci, void *b, uint64_t now);
/* Retention budget: take or give back bytes of pool->reserved. */
BW__INTERNAL bool bw__budget_take(bw_pool *p, size_t n);
BW__INTERNAL void bw__budget_give(bw_pool *p, size_t n);

/* Thread caches (tcache.c). */
BW__INTERNAL bw__tcache *bw__tcache_get_slow(bw_pool *p);
/* The calling thread's cache for p from its hash map, or NULL; it becomes
 * bw__tl_last. Never creates one. */
BW__INTERNAL bw__tcache *bw__tcache_find(bw_pool *p);
/* Move every block of tc to the shared level (to_shared) or gather it in f
 * to be freed, and give back its reserved budget. Caller holds the registry
 * lock or owns tc. */
BW__INTERNAL void bw__tcache_flush(bw__tcache *tc, bool to_shared, bw__frees *f);
BW__INTERNAL void bw__tcache_decay(bw_pool *p, bw__tcache *tc, uint64_t now);
/* Note what a slow path changed in the cache's classes: moved now. */
BW__INTERNAL void bw__tcache_seen(bw_pool *p, bw__tcache *tc, uint64_t now);
BW__INTERNAL void bw__tcache_orphan_all(bw_pool *p);
/* Sum every live thread cache's counters into s and the bytes its slots
 * hold into *held, under the registry lock (exact when no thread is in the
 * pool). */
BW__INTERNAL void bw__tcache_sum(bw_pool *p, bw__sums *s, size_t *held);
BW__INTERNAL void bw__tcache_trim_self(bw_pool *p);
BW__INTERNAL uint64_t bw__next_pool_id(void);

/* The calling thread's most recently used cache (BW__THREAD_LOCAL:
 * initial-exec TLS where there is one, one load, no __tls_get_addr call,
 * in the shared library too). Never NULL: it starts at an empty cache
 * whose pool id (0) matches no pool, so "no cache yet" costs the fast path
 * no extra branch. */
static BW__THREAD_LOCAL bw__tcache *bw__tl_last;

static inline bw__tcache *bw__tcache_get(bw_pool *p)
{
    bw__tcache *tc = bw__tl_last;
    if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) return tc;
    return bw__tcache_get_slow(p);
}

/* The thread-cache fast paths, inline: bw_pool_rent and bw_pool_return
 * (pool.c) start with them, and so do the writer's first block and its
 * release (bw__rent_first, bw__return_fast in pool_writer.h), which then
 * make no call into the pool for a small message. */

/* min_size - 1 < limit: 1 <= min_size <= the largest thread-cached class,
 * and a limit of 0 sends every rent of a checked or cache-less pool to the
 * slow path. */
static inline bool bw__rent_fast_ok(const bw_pool *p, size_t min_size, const size_t *capacity)
{
    return p != NULL && capacity != NULL && min_size - 1 < p->fast_rent_limit;
}

/* Decay runs on slow paths only, where the clock is read. So that a thread
 * whose calls are all served by its cache still gives back what bigger jobs
 * left retained (the shared level, the large blocks, its own idle blocks),
 * one pop of a class in BW__DECAY_POPS goes to the slow path anyway: a mask
 * test of the pop counter the fast path has loaded already. */
#define BW__DECAY_POPS 1024u
_Static_assert((BW__DECAY_POPS & (BW__DECAY_POPS - 1)) == 0,
               "the fast path tests a pop count against BW__DECAY_POPS with a mask");

/* The top block of class c, which holds n > 0 blocks and has popped
 * `pop`: taken, counted (a hit, and the bytes out) and the decay low-water
 * mark lowered. The slow path's pop; the fast path's (bw__tc_pop_class)
 * pops only above the mark, so it never lowers it. */
static inline void *bw__tc_take(bw__tc_class *c, size_t n, uint64_t pop)
{
    void *b = c->slots[n - 1];
    atomic_store_explicit(&c->pop, pop + 1, memory_order_relaxed);
    /* Decay's low-water mark: the blocks below it stay untouched. n is at
     * most BW_THREAD_CACHE_SLOTS, so a byte compares it. */
    if ((unsigned char)(n - 1) < c->low) c->low = (unsigned char)(n - 1);
    return b;
}

/* Put block on class c, which holds n blocks (fewer than its reserved
 * slots) and has pushed `push`: counted (a return, and the bytes back).
 * The one push, for the fast path and the slow. */
static inline void bw__tc_put(bw__tc_class *c, size_t n, uint64_t push, void *block)
{
    c->slots[n] = block;
    atomic_store_explicit(&c->push, push + 1, memory_order_relaxed);
}

/* A block of class c (cap bytes), or NULL (the slow path pops it) when
 * that class holds no more blocks than its low-water mark (none: empty),
 * or when this pop is the class's BW__DECAY_POPS-th.
 *
 * The low-water mark in the empty test, as jemalloc's cache bins do: a pop
 * from above the mark leaves it as it is, so the one compare says both
 * "not empty" and "the mark stays"; the pop that would go below it is the
 * slow path's (bw__tc_take lowers the mark there). That is at most
 * BW_THREAD_CACHE_SLOTS slow pops per class between two decay passes
 * (each pass sets the mark to what the class holds), and none in a steady
 * stream of rents and returns, whose class never goes below its mark
 * again once it has been there. The mark means what it always meant: the
 * fewest blocks held since the last pass. */
static inline void *bw__tc_pop_class(bw__tc_class *c, size_t cap, size_t *capacity)
{
    uint64_t pop = atomic_load_explicit(&c->pop, memory_order_relaxed);
    size_t n = (size_t)(atomic_load_explicit(&c->push, memory_order_relaxed) - pop);
    void *b;
    /* n <= BW_THREAD_CACHE_SLOTS, so a byte compares it. pop + 1 is the
     * counter's next value, stored below: one test more. */
    if (BW__UNLIKELY((unsigned char)n <= c->low || ((pop + 1) & (BW__DECAY_POPS - 1)) == 0))
        return NULL;
    b = c->slots[n - 1];
    atomic_store_explicit(&c->pop, pop + 1, memory_order_relaxed);
    BW__ASSUME(b != NULL); /* a slot holds a block */
    BW__TRACK_UNDEFINED(b, cap);
    *capacity = cap;
    return b;
}

/* The same for min_size's class: one bit scan more. */
static inline void *bw__tc_pop(bw_pool *p, bw__tcache *tc, size_t min_size, size_t *capacity)
{
    unsigned ci = bw__class_index(p, min_size);
    return bw__tc_pop_class(&tc->cls[ci], p->opt.min_block_size << ci, capacity);
}

/* A power of two with capacity - min_size < the span (medium false:
 * fast_return_span, the inline path; true: medium_return_span,
 * bw__return_medium's test): min_size <= capacity <= the largest class
 * of the span in one compare (unsigned wrap); a span of 0 sends every
 * return of a checked, zeroing or cache-less pool to the slow path. The
 * span is read after the NULL test, as a memory operand of the compare. */
static inline bool bw__return_in_span(const bw_pool *p, const void *block, size_t capacity,
                                      bool medium)
{
    return p != NULL && block != NULL && (capacity & (capacity - 1)) == 0 &&
           capacity - p->opt.min_block_size <
               (medium ? p->medium_return_span : p->fast_return_span) &&
           !BW__TRACK_IS_NOACCESS(block);
}

static inline bool bw__return_fast_ok(const bw_pool *p, const void *block, size_t capacity)
{
    return bw__return_in_span(p, block, capacity, false);
}

/* Keep block in class c; false when it holds all the slots it reserved. */
static inline bool bw__tc_push_class(bw__tc_class *c, void *block, size_t capacity)
{
    uint64_t push = atomic_load_explicit(&c->push, memory_order_relaxed);
    size_t n = (size_t)(push - atomic_load_explicit(&c->pop, memory_order_relaxed));
    if (BW__UNLIKELY((unsigned char)n >= c->resv)) return false; /* n <= resv */
    BW__TRACK_NOACCESS(block, capacity);
    bw__tc_put(c, n, push, block);
    return true;
}

/* Keep block in tc; false when its class holds all the slots it reserved. */
static inline bool bw__tc_push(bw_pool *p, bw__tcache *tc, void *block, size_t capacity)
{
    return bw__tc_push_class(&tc->cls[bw__log2(capacity) - p->min_shift], block, capacity);
}

/* Class ci's pushes and pops: what decay compares to tell a class that
 * moved since it was last seen. */
static inline uint64_t bw__tc_ops(bw__tcache *tc, unsigned ci)
{
    return atomic_load_explicit(&tc->cls[ci].push, memory_order_relaxed) +
           atomic_load_explicit(&tc->cls[ci].pop, memory_order_relaxed);
}

/* A block just pushed into class ci of the thread's own cache, with the
 * clock read for it (`now`): the class as seen then, so decay ages the
 * block from its return (no decay pass). Inline: two stores. */
static inline void bw__tc_stamp(bw__tcache *tc, unsigned ci, uint64_t now)
{
    tc->seen[ci].ops = bw__tc_ops(tc, ci);
    tc->seen[ci].ms = now;
}


/* Checked mode (check.c). Each returns false after reporting a problem. */
#define BW__CANARY_SIZE 16
BW__INTERNAL bool bw__check_env(const char *name);
BW__INTERNAL void bw__canary_set(void *b, size_t cap);
BW__INTERNAL bool bw__canary_ok(const void *b, size_t cap);
BW__INTERNAL bool bw__check_init(bw_pool *p);
BW__INTERNAL void bw__check_rented(bw_pool *p, void *b, size_t cap);
BW__INTERNAL bool bw__check_return(bw_pool *p, void *b, size_t cap, bool keeps);
BW__INTERNAL void bw__check_freed(bw_pool *p, void *b);
BW__INTERNAL void bw__check_destroy(bw_pool *p);
BW__INTERNAL void bw__report(const char *what, const void *block, size_t cap);
/* p NULL: the report hook's lock; else p's table lock. */
BW__INTERNAL void bw__check_fork_lock(bw_pool *p, bool lock);

/* Large retention (large.c): its lock and table, once p->opt is set. */
BW__INTERNAL bool bw__large_init(bw_pool *p);
BW__INTERNAL void *bw__large_take(bw_pool *p, size_t size);
BW__INTERNAL bool bw__large_keep(bw_pool *p, void *b, size_t size, uint64_t now);
BW__INTERNAL void bw__large_free_all(bw_pool *p);
BW__INTERNAL void bw__large_decay(bw_pool *p, uint64_t now);
/* Learning (growth.c). */
/* Set the writer's shortcuts (first_block, first_class, first_fast,
 * learn_above) from bw__pool_size, once the options and the fast paths'
 * limits are derived. */
BW__INTERNAL void bw__pool_shortcuts(bw_pool *p);
/* The learned lengths (0 while unknown or off), not yet rounded. */
BW__INTERNAL size_t bw__learned(bw_pool *p);
/* The learned jump as of now (bw_pool_get_stats), and its ageing at a
 * clock read the pool made for something else (growth.c says why). */
BW__INTERNAL size_t bw__learned_large(bw_pool *p);
BW__INTERNAL void bw__jump_age(bw_pool *p, uint64_t now);
/* fork (tcache.c): the cache registry's lock; in the child, drop p's
 * caches of the threads the child does not have. */
BW__INTERNAL void bw__tcache_fork_lock(bool lock);
BW__INTERNAL void bw__tcache_fork_child(bw_pool *p);
/* Fork safety (fork.c): every pool's locks, in a fixed order. */
BW__INTERNAL void bw__pool_register(bw_pool *p);
BW__INTERNAL void bw__pool_unregister(bw_pool *p);
BW__INTERNAL void bw__pool_lock_all(bw_pool *p);
BW__INTERNAL void bw__pool_unlock_all(bw_pool *p);


#endif /* BW_POOL_INTERNAL_H */
/*************** End file pool/pool_internal.h ******************************/

/*************** Begin file pool/pool_writer.h ******************************/
/* pool_writer.h - what the writer's files ask of the pool, and all
 * it asks: every size it gets (one request, one answer: bw__pool_size,
 * which alone applies the growth rule), learning from a finished job, the
 * inline thread-cache rent and return of a small message, growing a large
 * block in place and handing a block to free(); beyond these, only the
 * public bw_pool_* functions. The writer never reads the fields of
 * struct bw_pool itself: the policies live in the pool, once, and the few
 * facts a fast path needs are inline accessors here (as cheap as the field
 * read they replace). Nothing here is part of the public API. */
#ifndef BW_POOL_WRITER_H
#define BW_POOL_WRITER_H

/* #include "pool_internal.h": amalgamated above */

#include <stdint.h>

/* The largest block the writer ever asks for: blocks never exceed
 * PTRDIFF_MAX bytes (pointer differences inside one stay defined). */
#define BW__MAX_BLOCK ((size_t)PTRDIFF_MAX)

/* The growth rule's size for n bytes: the pool's class at or below its
 * threshold, the next power of two above it; 0 for 0 or when that cannot
 * be represented. The pool's (growth.c, and pool.c's options and stats):
 * the writer asks bw__pool_size for every size it gets. */
static inline size_t bw__grow_size(const bw_pool *p, size_t n)
{
    if (n == 0 || n > BW__MAX_BLOCK / 2 + 1) return 0;
    if (n <= p->opt.max_pooled_size) return bw__class_size(p, n);
    return bw__pow2_ceil(n);
}

/* What a writer asks the pool for, one request for every size it gets;
 * bw__pool_size (growth.c) is the one function that answers, and the pool
 * derives its shortcuts (first_block, learn_above) by asking it too.
 * Written with designated initializers: a field a kind does not read is 0. */
enum {
    BW__SIZE_CONTIG, /* a contiguous writer's first block (cap 0) or move   */
    BW__SIZE_START,  /* bw_init's block for an initial capacity of n       */
    BW__SIZE_SEG,    /* a segmented writer's next block                    */
    BW__SIZE_BLOCK,  /* a block for n bytes by the growth rule: a segmented
                        writer's for n contiguous bytes, a streaming
                        writer's buffer, bw_detach's copy of n held bytes  */
    BW__SIZE_WINDOW  /* a zeroing pool's or a reservation's window (the
                        writer's capacity) in a block of `block` bytes      */
};
typedef struct bw__size_req {
    unsigned kind;
    bool external;      /* CONTIG: held bytes in the caller's buffer           */
    size_t n;           /* CONTIG, WINDOW: bytes more; START: the initial
                           capacity; SEG, BLOCK: bytes (SEG: contiguous,
                           trailer included)                                 */
    size_t held;        /* CONTIG: bytes held; SEG: the writer's length;
                           WINDOW: bytes below the n more                    */
    size_t cap;         /* CONTIG: the block held; SEG: the last block;
                           WINDOW: the window now, or the capacity a move
                           leaves (0: none yet)                              */
    size_t block;       /* WINDOW: the block the window is of                */
    size_t large_held;  /* SEG: bytes in its blocks above the threshold      */
    size_t large_count; /* SEG: and how many                                 */
    size_t align;       /* SEG, BLOCK: a power of two the size is rounded to
                           (0: none)                                         */
    size_t first;       /* SEG: the writer's smallest block (bw_set_block_size;
                           0: the pool's chain_block_size)                   */
} bw__size_req;
/* The answer: rent size (SEG and BLOCK: exactly; WINDOW: the window), unless the pool has a
 * block of warm bytes idle (0: do not look), which costs no fresh memory
 * (bw__pool_rent_size). learned: a learned statistic took part, so the
 * answer may change as the pool learns. fill (CONTIG): the bytes of the
 * block the writer is about to fill, which a block fresh from the backing
 * allocator gets faulted in at once (bw__populate): what it writes now on
 * a first block, the growth rule's size on a move (room for held + n, at
 * least twice the old block, so the writer holds more than half of it);
 * never the rest of a block the climb made 16x larger (the writer faults
 * that in window by window as it fills it: mode_contig.c). */
typedef struct bw__size {
    size_t size, warm;
    bool learned;
    size_t fill;
} bw__size;
BW__INTERNAL int bw__pool_size(bw_pool *p, const bw__size_req *r, bw__size *out);
/* bw_pool_rent of a size bw__pool_size gave: an idle block of s->warm
 * bytes when the pool holds one (one thread gets it), else s->size. And
 * *filled, when filled is not NULL (the caller's 0 before), becomes
 * s->fill when the block is fresh from the backing allocator and longer
 * than s->fill, faulted in up to it alone where the platform can (its
 * other pages untouched: the writer faults them in as it comes within the
 * growth rule of them, mode_contig.c); not for an idle block, or one of
 * exactly s->fill. */
BW__INTERNAL void *bw__pool_rent_fill(bw_pool *p, const bw__size *s, size_t *capacity,
                                      size_t *filled);
/* The same without *filled: a first block (its fill is all it gets). */
static inline void *bw__pool_rent_size(bw_pool *p, const bw__size *s, size_t *capacity)
{
    return bw__pool_rent_fill(p, s, capacity, NULL);
}

/* The pool's threshold: rents at or below it come from its classes. */
static inline size_t bw__pool_threshold(const bw_pool *p) { return p->opt.max_pooled_size; }

/* A contiguous writer's usual first block when it needs at most this many
 * bytes (rent it with bw__rent_first); 0 when learning decides instead
 * (bw__pool_shortcuts). */
static inline size_t bw__pool_first_block(const bw_pool *p) { return p->first_block; }

/* Whether a contiguous writer that ends at len bytes teaches the pool
 * (then bw__learn_record): one compare, so a small message's release makes
 * no call for nothing. */
static inline bool bw__pool_learns(const bw_pool *p, size_t len)
{
    return len > p->learn_above;
}

/* A writer's final length, when bw__pool_learns says so (growth.c):
 * BW_POOL_LEARN_SIZE's samples, and the learned jump's when it passed the
 * jump floor. Returns the clock it read for the jump (bw__now_ms), 0 when
 * it read none. */
BW__INTERNAL uint64_t bw__learn_record(bw_pool *p, size_t len);

/* A writer's usual first block (first_block bytes) from the calling
 * thread's cache when its first write of n bytes fits it, or NULL: then
 * the general way. *pp is the writer's pool, NULL for the shared pool:
 * then the shared pool's cache answers (shared_first, 0 in every other
 * cache) and *pp becomes its pool, with no load of bw__shared_pool and no
 * compare of ids, which a pool that may be destroyed needs (the shared
 * pool is not). The cache knows the class and whether the fast paths
 * serve it (first_size, 0 when not), so this is the pool id's compare (or
 * none), one for the size, and the pop. */
static inline void *bw__rent_first(bw_pool **pp, size_t n, size_t *capacity)
{
    bw__tcache *tc = bw__tl_last;
    bw_pool *p = *pp;
    if (BW__LIKELY(p == NULL)) { /* bw_init(&w, NULL, 0): the usual writer */
        if (n - 1 >= tc->shared_first) return NULL;
        *pp = tc->pool;
        return bw__tc_pop_class(tc->first, tc->shared_first, capacity);
    }
    if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id &&
        n - 1 < tc->first_size)
        return bw__tc_pop_class(tc->first, tc->first_size, capacity);
    return NULL;
}

/* Keep a writer's block in the calling thread's cache; false when it
 * cannot (then bw_pool_return, which tries the general fast path too). A
 * block of the first size goes to its class with no arithmetic. */
static inline bool bw__return_fast(bw_pool *p, void *block, size_t capacity)
{
    bw__tcache *tc = bw__tl_last;
    if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) != p->id ||
        BW__TRACK_IS_NOACCESS(block))
        return false;
    if (capacity == tc->first_size) return bw__tc_push_class(tc->first, block, capacity);
    return bw__return_fast_ok(p, block, capacity) && bw__tc_push(p, tc, block, capacity);
}

/* Keep a writer's block of the first size in the calling thread's cache
 * (no arithmetic: the cache knows the class); false for any other block,
 * or when the class is full. capacity is 0 for a writer with no block,
 * which first_back never is, so b may be NULL and p NULL then: the size's
 * compare comes first and says there is a block (which implies its pool).
 * Such a writer never teaches the pool: a first size is set only where no
 * learned size applies to it, and then it is at most learn_above
 * (bw_pool_create), so bw__pool_learns is false for every length it
 * holds. */
static inline bool bw__return_first(bw_pool *p, void *block, size_t capacity)
{
    bw__tcache *tc = bw__tl_last;
    return capacity == tc->first_back &&
           atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id &&
           !BW__TRACK_IS_NOACCESS(block) && bw__tc_push_class(tc->first, block, capacity);
}

/* Whether the pool zeroes what comes back (BW_POOL_ZERO_ON_RETURN): then
 * a contiguous writer lets its caller write only into a window of its
 * block, widened on the cold path, and returns the block with the
 * window's end (bw__pool_return_written), so that only what may have been
 * written is zeroed. */
static inline bool bw__pool_zeroes(const bw_pool *p)
{
    return (p->opt.flags & BW_POOL_ZERO_ON_RETURN) != 0;
}

/* bw_pool_return for a block whose user wrote nothing at or past
 * `written` since it was rented: a zeroing pool zeroes [0, written) only
 * (the rest still holds the zeros the block was handed out with); any
 * other pool is given a reservation back cut to `written` (bw__pool_cut).
 * The public bw_pool_return cannot know, so it zeroes the whole block. */
BW__INTERNAL int bw__pool_return_written(bw_pool *p, void *block, size_t capacity,
                                         size_t written);

/* The end of a contiguous writer's job of len bytes: the length teaches
 * the pool when bw__pool_learns says so, then block (NULL: none) goes back
 * as by bw__return_fast, else bw__pool_return_written. */
BW__INTERNAL void bw__pool_job_end(bw_pool *p, void *block, size_t capacity, size_t written,
                                   size_t len);

/* Reservations: a contiguous writer whose move must take fresh memory
 * above the threshold rents, where the pool's blocks there are the
 * platform's mappings (Linux; bw__pool_reserves), `reserve` bytes of
 * address space of which it writes only a window below the growth rule's
 * size (m.g.block and cap in mode_contig.c), widened in place as it
 * grows: no copy and no remap until the window reaches the reservation.
 * Pages of a mapping that were never written cost no memory, so the
 * writer's fresh memory is its window, within the bound as any block the
 * rule gives. A kept block of `size` comes first (*capacity = size);
 * a reservation only while the pool keeps no block above the threshold
 * (else the writer's later moves take kept ones: no fresh pages in steady
 * state); otherwise, or when the mapping fails, a plain rent of size.
 * NULL on failure. */
BW__INTERNAL void *bw__pool_rent_reserve(bw_pool *p, size_t size, size_t reserve,
                                         size_t *capacity);
/* Cut a reservation of capacity bytes to its first `size` (a power of two
 * of at least 2 MiB, the window) in place: the pages past it were never
 * written. Then a block of size, as any rented one (its return, regrow). */
BW__INTERNAL void bw__pool_cut(bw_pool *p, void *block, size_t capacity, size_t size);
/* Whether bw__pool_rent_reserve may hand out more than the size asked. */
static inline bool bw__pool_reserves(const bw_pool *p) { return p->reserves; }

/* bw__shared_pool, the shared pool once created, is pool_internal.h's:
 * the thread cache asks it too (shared_first). */

/* Grow a block above the threshold (used by the writer) to what
 * bw__pool_size said: into an idle kept large block of s->warm bytes, else
 * of s->size, when there is one (copying len bytes: warm memory beats
 * fresh pages), else with the allocator's realloc hook to s->size (glibc
 * moves large blocks with mremap instead of copying). Returns the new
 * block and its size in *new_cap, or NULL with b untouched. Only where
 * bw__pool_can_regrow says so. */
BW__INTERNAL void *bw__pool_regrow(bw_pool *p, void *b, size_t old_cap, size_t len,
                                   const bw__size *s, size_t *new_cap);
/* Whether bw__pool_regrow may be used: the hook has a realloc, and the pool
 * does not zero what comes back (realloc gives the old bytes to the
 * allocator as they are, so the next malloc in the process could read
 * them). */
static inline bool bw__pool_can_regrow(const bw_pool *p)
{
    return p->alloc.realloc != NULL && (p->opt.flags & BW_POOL_ZERO_ON_RETURN) == 0;
}

/* bw_detach_malloc's first question, inline: whether need bytes (the text
 * and its NUL) in a block of cap from p are copied rather than handed
 * over, for what a hand-off costs the pool. A block of a class the thread
 * cache keeps is the one the next job rents from it at once; handed over,
 * it leaves the pool and the next job's rent goes to the backing
 * allocator: a 252-byte text handed over in its 512-byte first block cost
 * 3.6x the instructions of building it and copying it out (the slow rent,
 * malloc and the general return; bench/profile_driver textoff).
 * So texts up to 64 KiB in those blocks are copied, whatever the block's
 * size, and the caller's memory fits them. Past 64 KiB the block goes, as
 * before: a copy and a hand-off count the same instructions there (1.000x
 * at 64 KiB, 0.997x-1.000x at 128-512 KiB), and a hand-off copies nothing
 * (a memcpy that big is a few instructions, rep movsb, to callgrind). */
#define BW__HAND_OFF_COPY_MAX ((size_t)64 << 10 | 1)
static inline bool bw__pool_copies(const bw_pool *p, size_t cap, size_t need)
{
    return p != NULL && need <= BW__HAND_OFF_COPY_MAX && cap <= p->fast_rent_limit;
}

/* bw_detach_malloc, when bw__pool_copies said no: true when block b,
 * rented from p with capacity cap, is to be handed over as memory free()
 * releases; it then leaves the pool's counts (a return and a backing free)
 * and is the caller's. False changes nothing: copy the bytes instead
 * (the block is not malloc's, or carries a canary). */
BW__INTERNAL bool bw__pool_hand_off(bw_pool *p, void *b, size_t cap, size_t need);
/* After bw__pool_hand_off, the need bytes at the start of b in place: the
 * block the caller gets. One much larger than need (more than twice need,
 * plus 64 bytes) is shrunk to need with the allocator's realloc hook (one
 * of malloc's: the hand-off allowed no other); otherwise, or when that
 * realloc fails, b itself. Nothing was written at or past `written` (a
 * zeroing pool zeroes the tail up to there only). */
BW__INTERNAL void *bw__pool_hand_off_fit(bw_pool *p, void *b, size_t cap, size_t need,
                                         size_t written);

#endif /* BW_POOL_WRITER_H */
/*************** End file pool/pool_writer.h ********************************/

/*************** Begin file writer_internal.h *******************************/
/* writer_internal.h - what the writer's files (bufwriter.c, the mode_*.c
 * files, io.c) share about a writer's modes and storage. Nothing here is
 * part of the public API. */
#ifndef BW_WRITER_INTERNAL_H
#define BW_WRITER_INTERNAL_H

/* #include "bufwriter.h": amalgamated above */
/* #include "platform/platform.h": amalgamated above */
/* #include "pool/pool_writer.h": amalgamated above */

/* Modes (bw_writer.mode): BW__CONTIG, BW__SEG, BW__STREAM, BW__FIXED and
 * their count BW__NMODES, in bufwriter.h (section 11), where bw_data's
 * inline fast path needs them. */

/* bw_writer.flags */
#define BW__FD        0x2u /* streaming to w->m.s.fd rather than to a sink   */
#define BW__DONES     0x8u /* segmented: a piece held may have a done to call
                              (a reset walks the records only then)       */
#define BW__FILLING   0x8u /* contiguous (the bit is BW__DONES in a segmented
                              writer, whose reset walks the records before
                              bw__reset clears it): cap is a window of a
                              fresh block of m.g.block bytes whose pages
                              past it were never touched (mode_contig.c) */
#define BW__CSTR      0x10u /* bw_cstr stored a NUL at data + len, which a
                               string among printf's arguments may end at */
#define BW__FD_ERRNO  0x20u /* syserr is a failed bw_write_fd's errno, with
                               no error recorded (bw_errno)              */
#define BW__FAILED    0x80u /* an error is recorded (err != BW_OK): set with it
                               by bw__fail, cleared with it, so a small
                               message's first put tests the mode, the size
                               limit and the error with one 16-bit load
                               (bw_reserve)                                */
/* 0x1 is BW__EXTERNAL, 0x4 BW__RESERVED and 0x40 BW__LIMITED, in
 * bufwriter.h: inline code reads them. */

/* A segmented writer's held bytes are a sequence of pieces, each a
 * (pointer, length) over a block the writer owns or over caller memory
 * linked by reference (bw_append_ref); the blocks it owns are kept apart.
 * The closed pieces sit in chunks of records (mode_seg.c, bw__pchunk), a
 * list from m.c.head to m.c.tail, oldest first; the open piece, where
 * writes go, is the current block's data[open, len), not among them. Its
 * start is where the last closed piece ends (or base), so positions need
 * no other field: data[k] is at position pos + k for every k from the open
 * piece's start on. A
 * reference or a move closes the open piece and pushes pieces; the next
 * write goes on in the same block's free space as a new open piece. */
typedef struct bw__blk bw__blk;
struct bw__piece {
    const unsigned char *p; /* the first held byte                          */
    size_t n;               /* held bytes (never 0)                          */
    uint64_t end;           /* the position just past the piece              */
    uintptr_t own;          /* the owned block it lies in (a bw__blk *); 0: a
                               reference; odd: a reference with a done, whose
                               bw__aside is at own - 1 (seg_internal.h)      */
};
typedef struct bw__piece bw__piece;

/* An owned block's trailer, in its last BW__SEG_HDR bytes (a trailer, so a
 * detached block starts with the bytes). The current block (data) is not
 * in the writer's tree; every block in the tree holds at least one closed
 * piece, and goes back the moment it holds none. The tree is a treap by
 * address (mode_seg.c, bw__blk_link), so that bw_append_ref's check for
 * the writer's own memory is O(log blocks) however many moves brought
 * them. */
struct bw__blk {
    unsigned char *data;        /* the block                                */
    bw__blk *left, *right;      /* the writer's tree (m.c.blocks): lower and
                                   higher addresses                         */
    size_t pieces;              /* closed pieces that lie in it             */
};
#define BW__SEG_HDR ((size_t)32)
#if defined(BW_DEBUG) || defined(BW_SEG_CHECK)
/* Every invariant of a segmented writer's pieces, owned blocks, counts and
 * positions (mode_seg.c); aborts naming the one broken. Run after every
 * segmented operation in BW_DEBUG builds, and with BW_SEG_CHECK alone (the
 * fuzzer's build: the pool unchecked). */
#  define BW__SEG_CHECKS 1
BW__INTERNAL void bw__seg_check(const bw_writer *w);
#endif
/* Segmented block sizes are multiples of this, so that the trailer
 * (pointers and sizes) at a block's end is aligned. */
#define BW__SEG_ALIGN ((size_t)16)

/* The position-to-offset arithmetic: the first held byte is at
 * data + (base - pos) when all held bytes are in the current block. */
static inline size_t bw__start(const bw_writer *w) { return (size_t)(w->base - w->pos); }

/* True when n more bytes would take bw_tell past the size limit
 * (bw_set_limit): every call that adds bytes asks before it makes room or
 * writes anything. */
static inline int bw__over(const bw_writer *w, size_t n)
{
    uint64_t tell = w->pos + w->len;
    return (w->flags & BW__LIMITED) && n != 0 && (w->limit < tell || n > w->limit - tell);
}

/* A walk's place among the held pieces (bw__walk): the closed pieces'
 * chunk and index, then the open piece. */
typedef struct bw__cursor {
    size_t i;
    int started;
    const void *chunk; /* segmented: the chunk of records i is in */
} bw__cursor;

/* A mode's operations: the one fixed set of what differs between modes.
 * Each mode fills one table (bw__mode_ops) in its file (mode_contig.c and
 * the rest), by name, every entry given (a mode that has nothing to do for
 * one names a shared do-nothing function); the mode table in bufwriter.c maps
 * w->mode to it, and the bw__ functions below call through it. A failure
 * is recorded.
 * - room: room for n contiguous bytes at data + len; with src also append
 *   src[0, n) (src may point into the held bytes). The caller checked the
 *   writer and its error.
 * - room kept: the same, leaving the held bytes' storage as it is until
 *   the caller gives *old back (contiguous, segmented; see bw__room_keep).
 * - send: send every held byte where the mode has somewhere to send them
 *   (streaming); the others keep theirs. BW_OK or the recorded error.
 * - reset: give back every block (and reference) held; data and cap are 0
 *   after, but a fixed writer keeps the caller's buffer.
 * - make contiguous: the held bytes in one block with extra free bytes
 *   after them; their start, or NULL. Works while an error is recorded.
 * - walk: the next held piece (empty pieces included): 1, or 0 at the end.
 * - pieces: how many non-empty pieces the held bytes are (bw_iovec's
 *   count), without a walk.
 * - drop from the front: n <= bw_len held bytes, base moved already; never
 *   records.
 * - cut: the held bytes end at pos (base <= pos <= tell); never records.
 * - overlaps: whether [p, p + n) lies in the writer's own storage.
 * - patch: write src[0, n) over the held bytes at [pos, pos + n) (checked
 *   by the caller; src may point into the held bytes). A segmented writer
 *   first copies the references there into a block of its own (the only
 *   case that needs memory); BW_ENOMEM (recorded) leaves everything as it
 *   was.
 * - block size: the real size of the one pooled block holding every held
 *   byte (what bw_detach hands out), or 0 (none, several, not the pool's).
 * - printf rest: printf's pass two, need bytes of output, known not to fit
 *   the free space with vsnprintf's NUL; the arguments may point into the
 *   held bytes (bw_vprintf).
 * - link: append data[0, n) by reference, done(ctx, data, n) once it is
 *   no longer needed; modes that cannot link copy and call done at once.
 * - take: move every held byte of src after dst's without copying, when
 *   the two modes allow it: 1, 0 to have them copied (bw_move), or a
 *   failure (recorded in dst).
 * - room at once: whether one room can take n bytes without sending part
 *   of them (streaming: no more than its buffer).
 * - hand out: the held bytes, as one block of the pool's starting with
 *   them, for bw_detach: *block and its capacity *cap (left NULL and 0
 *   when there is nothing to hand out); 0 on a failure (recorded, or the
 *   first error kept). Works while an error is recorded; the caller
 *   empties the writer after.
 * - traits: what the calls common to every mode need to know (BW__GROWS
 *   and the others below). */
typedef struct bw__mode_ops {
    int (*room)(bw_writer *w, size_t n, const void *src);
    int (*room_keep)(bw_writer *w, size_t n, void **old, size_t *old_cap);
    int (*send)(bw_writer *w);
    void (*drop_storage)(bw_writer *w);
    unsigned char *(*contiguous)(bw_writer *w, size_t extra);
    int (*walk)(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n);
    size_t (*pieces)(const bw_writer *w);
    void (*drop_front)(bw_writer *w, size_t n);
    void (*cut)(bw_writer *w, uint64_t pos);
    int (*overlaps)(const bw_writer *w, const void *p, size_t n);
    int (*patch)(bw_writer *w, uint64_t pos, const void *src, size_t n);
    size_t (*block_size)(const bw_writer *w);
    int (*printf_rest)(bw_writer *w, size_t need, const char *fmt, va_list ap);
    int (*link)(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx);
    int (*take)(bw_writer *dst, bw_writer *src);
    int (*room_at_once)(const bw_writer *w, size_t n);
    int (*hand_out)(bw_writer *w, void **block, size_t *cap);
    unsigned traits;
    const char *name; /* the mode's name in the manual ("contiguous") */
} bw__mode_ops;

/* The operations through the mode table (bufwriter.c), with what every
 * mode shares around them: bw__room checks the size and takes a small
 * message's first block itself, bw__room_keep checks the size,
 * bw__drop_front moves base and starts over when all is gone, and
 * bw__block_size answers 0 for no block or a caller's buffer. */
BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src);
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n);
BW__INTERNAL void bw__drop_storage(bw_writer *w);
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra);
BW__INTERNAL int bw__walk(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                          size_t *n);
BW__INTERNAL size_t bw__pieces(const bw_writer *w);
BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n);
BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos);
BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n);
BW__INTERNAL size_t bw__block_size(const bw_writer *w);

/* The traits: what the calls common to every mode ask of it, beyond the
 * operations (bw__traits: the table's). */
#define BW__GROWS   0x1u  /* one block that growth moves to a new one (its old
                             block goes back); the job's length teaches the
                             pool; the block and the first line are all the
                             writer holds (bw_release's inline way)           */
#define BW__LINKS   0x2u  /* pieces are linked, not copied: a failed append is
                             undone by cutting back to where it began; the
                             segmented mode's only, so what is for it alone
                             (bw_set_block_size, bw__seg_check) asks this     */
#define BW__SENDS   0x4u  /* held bytes go to a sink: nothing to move out     */
#define BW__NO_POOL 0x8u  /* the caller's buffer alone: never allocates, has
                             no pool, hands nothing out                       */
#define BW__BOUNDED 0x10u /* the buffer never grows: a full one has no room for
                             bw_cstr's NUL                                    */
BW__INTERNAL unsigned bw__traits(const bw_writer *w);

/* Record the first error (bufwriter.c). */
BW__INTERNAL int bw__fail(bw_writer *w, int rc);
/* The one send loop, over the sink contract (mode_stream.c): iov[0, cnt)
 * to sink, or to fd with sink NULL; bw_write_fd and a streaming writer
 * send through it. */
BW__INTERNAL int bw__send_iov(int fd, bw_sink_fn sink, void *ctx, struct iovec *iov, size_t cnt,
                              size_t *sent);

/* The room functions stay out of line (the fast paths' callers stay
 * small), but not `cold`: gcc compiles a cold function for size and turns
 * its memcpy into rep movsb, a byte loop on CPUs without ERMS, and these
 * copy every held byte when a writer grows (make check-copies). */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__COLD __attribute__((noinline))
#else
#  define BW__COLD
#endif

/* The mode tables, one in each mode's file (mode_contig.c and the rest),
 * gathered by bufwriter.c's bw__modes. */
static const bw__mode_ops bw__contig_ops;
static const bw__mode_ops bw__seg_ops;
static const bw__mode_ops bw__stream_ops;
static const bw__mode_ops bw__fixed_ops;

/* What the one-block modes (contiguous, streaming, fixed) share in their
 * tables, and what modes without an ability name there (mode_block.c). */
BW__INTERNAL void bw__move_down(bw_writer *w, const void **src);
BW__INTERNAL int bw__block_put(bw_writer *w, const void *src, size_t n);
BW__INTERNAL int bw__block_piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                                 size_t *n);
BW__INTERNAL void bw__block_drop_storage(bw_writer *w);
BW__INTERNAL void bw__block_cut(bw_writer *w, uint64_t pos);
BW__INTERNAL unsigned char *bw__block_contiguous(bw_writer *w, size_t extra);
BW__INTERNAL size_t bw__block_pieces(const bw_writer *w);
BW__INTERNAL void bw__block_drop_front(bw_writer *w, size_t n);
BW__INTERNAL int bw__block_patch(bw_writer *w, uint64_t pos, const void *src, size_t n);
BW__INTERNAL size_t bw__block_cap(const bw_writer *w);
BW__INTERNAL int bw__keeps_bytes(bw_writer *w);
BW__INTERNAL int bw__no_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap);
BW__INTERNAL int bw__no_take(bw_writer *dst, bw_writer *src);
BW__INTERNAL int bw__at_once(const bw_writer *w, size_t n);
BW__INTERNAL int bw__block_hand_out(bw_writer *w, void **block, size_t *cap);
BW__INTERNAL int bw__link_copy(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                               void *ctx);
BW__INTERNAL int bw__printf_apart(bw_writer *w, size_t need, const char *fmt, va_list ap);
BW__INTERNAL int bw__printf_grow(bw_writer *w, size_t need, const char *fmt, va_list ap,
                                 int apart);

/* A contiguous writer's first block the general way (mode_contig.c); its
 * inline way is bw__contig_first_in below. */
BW__INTERNAL int bw__contig_first_slow(bw_writer *w, size_t n, const void *src);
/* A contiguous writer's release the general way (mode_contig.c): the job's
 * length teaches the pool, and the block (block bytes, nothing written at
 * or past cap) goes back; bw_release takes a small message's block back
 * inline. */
BW__INTERNAL void bw__contig_release_block(bw_pool *p, unsigned char *b, size_t block,
                                           size_t cap, size_t len);

/* ---- state helpers every file of the writer uses (bufwriter.c) ---- */

/* The fast-path limit: the block's end (or the size limit's), or len while
 * an error is recorded, so that every inline put misses and reaches the
 * cold path's check. Every change of pos, len or cap ends here. */
BW__INTERNAL void bw__set_lim(bw_writer *w);
/* Append src[0, n) to a writer whose checks were made (not NULL, no error
 * recorded, src not NULL unless n is 0): the write the entry points and the
 * modes share, so that none calls another entry point for it. */
BW__INTERNAL int bw__put(bw_writer *w, const void *src, size_t n);
/* The one stable copy of a source (bufwriter.c, which says how): n bytes
 * that stay valid while the writer moves, links or sends. */
BW__INTERNAL const void *bw__stable_copy(bw_writer *w, const void *src, size_t n, void *buf,
                                         size_t nbuf, void **tmp, size_t *tmp_cap);

/* A size limit's clamp of lim: no further than the offset in data where
 * the limit falls (len when the limit is below bw_tell), so a write that
 * would pass it misses the inline fast path and meets bw__over. */
static inline void bw__clamp_lim(bw_writer *w)
{
    uint64_t tell = w->pos + w->len;
    if (w->limit <= tell) w->lim = w->len;
    else if (w->limit - w->pos < w->lim) w->lim = (size_t)(w->limit - w->pos);
}


static inline bw_pool *bw__pool_of(bw_writer *w)
{
    if (w->pool == NULL) { /* the shared pool: a load once it exists */
        bw_pool *p = atomic_load_explicit(&bw__shared_pool, memory_order_acquire);
        w->pool = p != NULL ? p : bw_pool_shared();
    }
    return w->pool;
}

/* What every init starts with (each mode's file has its inits). The first
 * line's fields set by themselves, not by a memset of the struct, which
 * gcc turns into rep stos, whose start-up costs more than the rest of a
 * small message's bw_init; data through base are one memset of 48 bytes
 * (on 64-bit), three vector stores with gcc. The mode's part (w->m) is set
 * by the segmented and streaming inits alone: contiguous and fixed writers
 * never read it. A new field of bw_writer must be set here too (the
 * valgrind run reports one that is not). */
static inline int bw__init_mode(bw_writer *w, bw_pool *pool, unsigned char mode)
{
    if (w == NULL) return BW_EINVAL;
    memset(w, 0, offsetof(bw_writer, pool)); /* data through base */
    w->pool = pool;
    /* mode, flags (no limit, no bw_write_fd errno, no error) and err
     * (BW_OK, 0) with the padding between them: one 8-byte store, and no
     * more for a contiguous writer (BW__CONTIG is 0; storing it again
     * made gcc split the zeros into three stores). */
    memset((unsigned char *)w + offsetof(bw_writer, mode), 0,
           offsetof(bw_writer, err) + sizeof w->err - offsetof(bw_writer, mode));
    if (mode != BW__CONTIG) w->mode = mode;
    return BW_OK;
}

/* The flags a release (or any reset) clears; with none of them set, no
 * error is recorded either (BW__FAILED), so a release has only data
 * through base to empty (bw_release's first test). */
#define BW__RESET_FLAGS                                                                        \
    (BW__EXTERNAL | BW__RESERVED | BW__FILLING | BW__CSTR | BW__FD_ERRNO | BW__FAILED)

/* Empty, no error, positions at 0; keeps the mode and its parameters. */
/* The storage is given back (bw__drop_storage) or handed out first. */
static inline void bw__reset(bw_writer *w)
{
    w->len = 0;
    w->pos = w->base = 0;
    w->err = BW_OK;
    w->flags &= (unsigned char)~BW__RESET_FLAGS;
    w->lim = w->cap; /* no error now */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w); /* the limit stays */
}

/* True when [p, p + n) overlaps the writer's current block (for the modes
 * with one block, all of its storage; bw__overlaps for any mode). */
static inline int bw__in_block(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, b = a + n;
    if (w->data == NULL || n == 0) return 0;
    return b > (uintptr_t)w->data && a < (uintptr_t)w->data + w->cap;
}


/* ---- the contiguous mode's inline first block (mode_contig.c) ---- */

/* The one place outside the mode table that reads the mode (but the inits
 * and the inline bw_data and bw__contig_without, bufwriter.h): a small
 * message's first write (bw__first_write; bw_reserve tests the mode with
 * bw__contig_without, and the flags in the same 16-bit load) and its
 * release (bw_release, likewise) are a compare away from their block, with
 * no load of the table and no call. */
static inline bool bw__is_contig(const bw_writer *w) { return w->mode == BW__CONTIG; }

/* Whether a contiguous writer's cap is a window of a block of m.g.block
 * bytes: on a zeroing pool, in a reservation, or while a fresh block is
 * faulted in (BW__FILLING). */
static inline bool bw__contig_windowed(const bw_writer *w)
{
    return bw__pool_zeroes(w->pool) || (w->flags & (BW__RESERVED | BW__FILLING));
}

/* The block's capacity (bw_detach's, and what goes back to the pool): a
 * window is narrower. */
static inline size_t bw__contig_block_cap(const bw_writer *w)
{
    return bw__contig_windowed(w) ? w->m.g.block : w->cap;
}

/* The first write of every small message comes here (bw_reserve, or
 * bw__room after bw__first_write), from a caller that found no size limit
 * set and no error recorded: the usual first block (the pool's
 * first_block: min_first_block, no learning in play) needs no size rule,
 * and its rent is the thread cache's inline pop (bw__rent_first, which
 * takes the shared pool's from its cache without loading the pool). With
 * no error, lim is the capacity. No stack frame and no call but the copy.
 * Every other case is bw__contig_first_slow's, which also makes
 * bw_reserve's checks. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int bw__contig_first_in(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p = w->pool;
    unsigned char *b = (unsigned char *)bw__rent_first(&p, n, &w->lim);
    if (BW__LIKELY(b != NULL)) {
        /* pos is base already: a contiguous writer without storage holds
         * nothing (init, release, detach and bw_take leave it so). */
        w->pool = p;
        w->data = b;
        w->cap = w->lim;
        if (src != NULL) {
            w->len = n; /* before the copy: a store through b may alias w */
            memcpy(b, src, n);
        }
        return BW_OK;
    }
    return bw__contig_first_slow(w, n, src);
}

/* Whether a write of n bytes is a contiguous writer's first (no storage):
 * the one test of the mode outside the table but the inits and bw_data,
 * made before the table so a small message's first write is a compare
 * away from its block. */
static inline bool bw__first_write(const bw_writer *w, size_t n)
{
    return w->data == NULL && bw__is_contig(w) && n <= BW__MAX_BLOCK;
}

/* What a contiguous writer's release leaves, as bw__reset with no block:
 * data through base zero (one memset of the fields before pool: a few
 * vector stores), no error, the limit kept (a lim of 0 is already within
 * it). */
static inline void bw__contig_emptied(bw_writer *w)
{
    memset(w, 0, offsetof(bw_writer, pool));
    w->err = BW_OK;
    w->flags &= (unsigned char)~BW__RESET_FLAGS;
}

/* A contiguous writer's release the general way (bw_release's inline
 * test takes a small message's block back itself, with no call and no
 * stack frame): its one block and the first line are all it has. Any
 * block, and a length that teaches the pool, go to bw__contig_release_block
 * (mode_contig.c); b is the block to give back (NULL for none or a
 * caller's buffer). */
static inline void bw__contig_release_rest(bw_writer *w, unsigned char *b)
{
    bw_pool *p = w->pool;
    size_t cap = w->cap, block = b != NULL ? bw__contig_block_cap(w) : 0;
    /* The length only where a pool may learn it: a caller's buffer with
     * no pool (bw_init_buffer over a stack array) reads none of it. */
    size_t len = p != NULL ? bw_len(w) : 0;
    bw__contig_emptied(w);
    if (b != NULL || (p != NULL && bw__pool_learns(p, len)))
        bw__contig_release_block(p, b, block, cap, len);
}

/* ---- decimal text (bw_put_dec_*, fmt_int.c; the float text, fmt_float.c) ---- */

/* Two decimal digits of every value below 100 (fmt_int.c). */
static const char bw__digits2[201];

/* Eight digits of r < 10^8, ending at `end`: two independent halves of
 * 32-bit arithmetic, cheaper than 64-bit division by 100 on every target. */
static inline void bw__dec_digits8(unsigned char *end, uint32_t r)
{
    uint32_t hi = r / 10000, lo = r % 10000;
    memcpy(end - 2, bw__digits2 + (lo % 100) * 2, 2);
    memcpy(end - 4, bw__digits2 + (lo / 100) * 2, 2);
    memcpy(end - 6, bw__digits2 + (hi % 100) * 2, 2);
    memcpy(end - 8, bw__digits2 + (hi / 100) * 2, 2);
}

/* The decimal digits of f, written backwards ending at `end`; returns the
 * first. The integer text (bw_put_dec_*) and the float text share it. */
static inline unsigned char *bw__dec_digits(unsigned char *end, uint64_t f)
{
    uint32_t v;
    if (f >= 100000000) {
        bw__dec_digits8(end, (uint32_t)(f % 100000000));
        f /= 100000000;
        end -= 8;
        if (f >= 100000000) {
            bw__dec_digits8(end, (uint32_t)(f % 100000000));
            f /= 100000000;
            end -= 8;
        }
    }
    v = (uint32_t)f;
    while (v >= 10000) {
        uint32_t r = v % 10000;
        v /= 10000;
        memcpy(end - 2, bw__digits2 + (r % 100) * 2, 2);
        memcpy(end - 4, bw__digits2 + (r / 100) * 2, 2);
        end -= 4;
    }
    if (v >= 100) {
        memcpy(end -= 2, bw__digits2 + (v % 100) * 2, 2);
        v /= 100;
    }
    if (v >= 10) {
        memcpy(end - 2, bw__digits2 + v * 2, 2);
        return end - 2;
    }
    end[-1] = (unsigned char)('0' + v);
    return end - 1;
}


#endif /* BW_WRITER_INTERNAL_H */
/*************** End file writer_internal.h *********************************/

/*************** Begin file seg_internal.h **********************************/
/* seg_internal.h - what the segmented rooms share: mode_seg.c (the mode's
 * operations and table), seg_pieces.c (the tree of owned blocks and the
 * chunks of piece records) and seg_check.c (the invariants). The small
 * helpers are static inline, so that each operation compiles as it did when
 * the three were one file; the larger ones are BW__INTERNAL, called as they
 * were. The layout of a piece and of a block's trailer is in
 * writer_internal.h. */
#ifndef BW_SEG_INTERNAL_H
#define BW_SEG_INTERNAL_H

/* #include "writer_internal.h": amalgamated above */

/* The current block's trailer, at data + cap. */
static inline bw__blk *bw__cur(const bw_writer *w)
{
    return (bw__blk *)(void *)(w->data + w->cap);
}
static inline size_t bw__blk_size(const bw__blk *b)
{
    return (size_t)((const unsigned char *)b - b->data) + BW__SEG_HDR;
}

/* Where the open piece starts (m.c.open): data[open] is where the last
 * closed piece ends, or base (bw__seg_check states it). */
static inline size_t bw__open(const bw_writer *w) { return w->m.c.open; }

/* A block's key in the tree of owned blocks (seg_pieces.c) is its
 * address, its priority a hash of that address. */
static inline uintptr_t bw__key(const bw__blk *b) { return (uintptr_t)b->data; }
static inline uint64_t bw__prio(const bw__blk *b)
{
    uint64_t x = (uint64_t)bw__key(b); /* murmur3's finalizer: distinct keys differ */
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    return x ^ (x >> 33);
}

/* The closed pieces' records sit in chunks rented from the pool, a list
 * (prev: older, next: newer) from m.c.head, whose held records are
 * [first, cap), to m.c.tail, whose held records are [0, count) (the head's
 * [first, count) when head is tail); every chunk between is full. The
 * chunks after the tail are spares, kept for the next pushes: a chunk
 * emptied by consume goes there, and bw_clear keeps them all, so a writer
 * used again allocates nothing. 0.4 kept one array that doubled by
 * copying itself: 49% of a linked record's instructions at 5,000 records
 * (callgrind, profile_driver refs). A record never moves, so growth costs
 * one rent. seq numbers the records: a chunk's pc[0] is record seq, the
 * next chunk's seq follows its last, so the held count is a subtraction.
 * The head also keeps the address range of the tree's blocks (lo, hi),
 * bw_append_ref's quick answer for memory that is not the writer's. */
typedef struct bw__pchunk bw__pchunk;
struct bw__pchunk {
    bw__pchunk *prev, *next;
    uint64_t seq;     /* pc[0]'s number among the records (64 bits: a
                         size_t wraps after 2^32 on 32-bit, and a queue
                         writer's records are numbered all its life)   */
    size_t cap;       /* records it holds                                */
    size_t bytes;     /* its size as rented                              */
    uintptr_t lo, hi; /* the head's: the tree's blocks lie in [lo, hi)   */
};
#define BW__PC(ch) ((bw__piece *)(void *)((ch) + 1))

/* What a reference with a done keeps beside its record: done(ctx, orig,
 * orig_n) once it leaves (consume and truncate move the record's p and
 * n). A chunk's cap records are followed by cap asides, the one at a
 * record's index its own, written only for a reference with a done: the
 * record that every link, write and walk touches is 32 bytes (on 64-bit)
 * and a link writes 4 fields for it, where one 64-byte record with these
 * in it cost a linked record 16 stores (callgrind, profile_driver refs).
 * Its place never moves, as the record's does not, so the record points
 * to it (own, odd). */
typedef struct bw__aside {
    bw_done_fn done; /* never NULL: a reference without one has no aside */
    void *ctx;
    const void *orig;
    size_t orig_n;
} bw__aside;
#define BW__PA(ch) ((bw__aside *)(void *)(BW__PC(ch) + (ch)->cap))
/* The bytes a record takes in a chunk: itself and its aside. */
#define BW__REC (sizeof(bw__piece) + sizeof(bw__aside))

/* The records after the header are aligned for their 64-bit end, the
 * asides after the records for their pointers, with the low bit of an
 * aside's address free for own's tag. */
typedef char bw__pc_aligned[sizeof(bw__pchunk) % sizeof(uint64_t) == 0 ? 1 : -1];
typedef char bw__pa_aligned[sizeof(bw__piece) % sizeof(void *) == 0 &&
                                    sizeof(void *) >= 2 ? 1 : -1];

/* Record pc's owned block, NULL for a reference. */
static inline bw__blk *bw__pc_blk(const bw__piece *pc)
{
    return (pc->own & 1) ? NULL : (bw__blk *)pc->own;
}

/* Record pc's aside: a reference's with a done, else NULL. */
static inline bw__aside *bw__pc_aside(const bw__piece *pc)
{
    return (pc->own & 1) ? (bw__aside *)(pc->own - 1) : NULL;
}

/* No closed piece held. */
static inline int bw__pc_none(const bw_writer *w)
{
    return w->m.c.head == w->m.c.tail && w->m.c.first == w->m.c.count;
}

/* The closed pieces held. */
static inline size_t bw__pc_held(const bw_writer *w)
{
    if (w->m.c.head == NULL) return 0;
    return (size_t)(w->m.c.tail->seq + w->m.c.count - (w->m.c.head->seq + w->m.c.first));
}

/* The record at (*ch, *i), moved on to the next chunk's first when *i is
 * past a full chunk's last; NULL when it is past the held ones (where the
 * open piece comes). Out of line (seg_pieces.c): inlined, gcc -O2 put it
 * into every caller, 157 bytes more in bw__seg_patch, 88 in bw__seg_take. */
BW__INTERNAL bw__piece *bw__pc_at(const bw_writer *w, bw__pchunk **ch, size_t *i);

/* seg_pieces.c: room for k more closed pieces (bw__pc_reserve's slow way),
 * a piece leaving, and the owned blocks: added to the tree, rented (its
 * trailer set, linked nowhere), the next one for a write. */
BW__INTERNAL BW__COLD int bw__pc_more(bw_writer *w, size_t k);
BW__INTERNAL void bw__piece_drop(bw_writer *w, bw__piece *pc);
BW__INTERNAL void bw__blk_link(bw_writer *w, bw__blk *b);
BW__INTERNAL bw__blk *bw__blk_rent(bw_writer *w, bw__size_req *r);
BW__INTERNAL bw__blk *bw__blk_next(bw_writer *w, size_t need);

/* Room for k more closed pieces: O(1) but for a chunk's rent. */
static inline int bw__pc_reserve(bw_writer *w, size_t k)
{
    const bw__pchunk *t = w->m.c.tail;
    if (BW__LIKELY(t != NULL && w->m.c.count + k <= t->cap)) return BW_OK;
    return bw__pc_more(w, k);
}

/* The tail is full: the next chunk (reserved) becomes the tail. */
static inline bw__pchunk *bw__pc_next_tail(bw_writer *w)
{
    bw__pchunk *t = w->m.c.tail, *nx = t->next;
    nx->seq = t->seq + t->cap;
    w->m.c.tail = nx;
    w->m.c.count = 0;
    return nx;
}

/* The head's records are all consumed (head is not the tail): it becomes
 * the first spare, after the tail, and the next chunk the head. */
static inline void bw__pc_head_done(bw_writer *w)
{
    bw__pchunk *h = w->m.c.head, *t = w->m.c.tail;
    w->m.c.head = h->next;
    h->next->prev = NULL;
    h->next->lo = h->lo;
    h->next->hi = h->hi;
    h->prev = t;
    h->next = t->next;
    if (t->next != NULL) t->next->prev = h;
    t->next = h;
    w->m.c.first = 0;
}

/* The last closed piece leaves (some held): the tail steps back to the
 * chunk before when it is left empty. */
static inline void bw__pc_pop(bw_writer *w)
{
    bw__piece *pc = &BW__PC(w->m.c.tail)[--w->m.c.count];
    if (w->m.c.count == 0 && w->m.c.tail != w->m.c.head) {
        w->m.c.tail = w->m.c.tail->prev;
        w->m.c.count = (uint32_t)w->m.c.tail->cap;
    }
    bw__piece_drop(w, pc);
}

/* No closed piece left: records start again at the head's first. */
static inline void bw__pc_restart(bw_writer *w)
{
    if (w->m.c.head != NULL && bw__pc_none(w)) w->m.c.first = w->m.c.count = 0;
}

/* Take the highest block out of tree *t, or NULL: for emptying a whole
 * tree in O(blocks) (rotations, no stack; the priorities no longer hold,
 * so nothing but more pops may follow). Highest first, as the list gave
 * the newest first: given back lowest first, the blocks of a job of 1,000
 * moved headers that the pool cannot keep cost 716 page faults a job under
 * glibc (bench Z/link_after_move: 45x slower). */
static inline bw__blk *bw__blk_pop(bw__blk **t)
{
    bw__blk *b = *t, *r;
    if (b == NULL) return NULL;
    while ((r = b->right) != NULL) {
        b->right = r->left;
        r->left = b;
        b = r;
    }
    *t = b->left;
    return b;
}

/* Block b (NULL: none) goes back to the pool. */
static inline void bw__blk_return(bw_writer *w, bw__blk *b)
{
    if (b != NULL) (void)bw_pool_return(w->pool, b->data, bw__blk_size(b));
}

#endif /* BW_SEG_INTERNAL_H */
/*************** End file seg_internal.h ************************************/

/*************** Begin file bufwriter.c *************************************/
/* bufwriter.c - the writer's public calls, written once for every mode:
 * the sticky error, release and clear, reserve and spans, printf's first
 * pass, positions, reading out, detach,
 * append and move; and the dispatcher, the mode table (bw__modes) that
 * maps w->mode to the mode's operations (bw__mode_ops, writer_internal.h).
 * Each mode is a file of its own that owns its storage, its inits, its
 * operations and its table: mode_contig.c, mode_seg.c, mode_stream.c,
 * mode_fixed.c, with what the one-block modes share in mode_block.c. The
 * fast paths are static inline in bufwriter.h and know no mode (but
 * bw_data's, which tells a segmented writer from the rest). */
/* #include "writer_internal.h": amalgamated above */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* printf formats short output here when the free space is smaller. */
#define BW__PRINTF_STACK 256

/* The writer's layout on 64-bit (bufwriter.h): data, len, lim, cap, pos,
 * base, pool, mode, flags and err, the fast path and all a contiguous or
 * fixed writer's init and release touch, in the first 64 bytes, one cache
 * line when the writer is 64-byte aligned; the mode's part after them.
 * 120 bytes in all with syserr and the size limit after the mode's part
 * (the segmented part, 40 bytes with its open piece's start, the largest). */
#if UINTPTR_MAX > 0xffffffffu
#  define BW__IN_LINE(f, n) (offsetof(bw_writer, f) + (n) <= 64)
typedef char bw__writer_first_line[BW__IN_LINE(data, 8) && BW__IN_LINE(len, 8) &&
                                           BW__IN_LINE(lim, 8) && BW__IN_LINE(cap, 8) &&
                                           BW__IN_LINE(pos, 8) && BW__IN_LINE(base, 8) &&
                                           BW__IN_LINE(pool, 8) && BW__IN_LINE(mode, 1) &&
                                           BW__IN_LINE(flags, 1) && BW__IN_LINE(err, 4)
                                       ? 1
                                       : -1];
typedef char bw__writer_mode_after[offsetof(bw_writer, m) >= 64 ? 1 : -1];
typedef char bw__writer_size[sizeof(bw_writer) <= 120 ? 1 : -1];
#  undef BW__IN_LINE
#endif

const char *bw_strerror(int status)
{
    switch (status) {
    case BW_OK:        return "success";
    case BW_ENOMEM:    return "out of memory (the backing allocator failed)";
    case BW_EOVERFLOW: return "size overflow (a size that cannot be represented)";
    case BW_EINVAL:    return "invalid argument";
    case BW_EIO:       return "I/O error (bw_errno says why)";
    case BW_EFULL:     return "no room left in the fixed buffer";
    case BW_ELIMIT:    return "size limit reached (bw_set_limit)";
    case BW_ENONFINITE: return "not a finite number (no JSON text for NaN or infinity)";
    default:           return "unknown bufwriter status";
    }
}

const char *bw_version(void) { return BW_VERSION_STRING; }

/* ------------------------------------------------------------------------ */
/* State helpers                                                            */
/* ------------------------------------------------------------------------ */

/* Their contracts are in writer_internal.h. */
BW__INTERNAL void bw__set_lim(bw_writer *w)
{
    w->lim = w->err != BW_OK ? w->len : w->cap;
    if (BW__UNLIKELY(w->flags & BW__LIMITED) && w->err == BW_OK) bw__clamp_lim(w);
}

BW__INTERNAL int bw__put(bw_writer *w, const void *src, size_t n)
{
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len >= n) {
        if (n != 0) memcpy(w->data + w->len, src, n);
        w->len += n;
        return BW_OK;
    }
    return bw__room(w, n, src);
}

/* Record the first error; later writes miss the fast path. Out of line:
 * inlined, its store to flags made gcc load the flags into a register
 * ahead of the callers' own tests of them (bw_append_ref: one instruction
 * more a record). */
BW__INTERNAL BW__COLD int bw__fail(bw_writer *w, int rc)
{
    if (w->err == BW_OK) {
        w->err = rc;
        w->flags |= BW__FAILED;
        /* Kept with it: errno is overwritten long before the one check at
         * the end of a run (bw_errno). */
        w->syserr = rc == BW_EIO ? errno : 0;
    }
    w->lim = w->len;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The mode table: the one place that maps the mode to its operations       */
/* ------------------------------------------------------------------------ */
/* One table per mode, in its file; this array, indexed by the mode, is the
 * only code that reads it (but the inline fast paths' tests, bw__is_contig
 * in writer_internal.h and bw__contig_without in bufwriter.h, and the
 * inits). A new mode, whose constant is the
 * last, adds its file with its table and its entry here; the size check
 * below fails until the entry is there, and a table with a missing
 * operation fails -Wmissing-field-initializers (-Wextra). */
static const bw__mode_ops *const bw__modes[] = {
    [BW__CONTIG] = &bw__contig_ops,
    [BW__SEG] = &bw__seg_ops,
    [BW__STREAM] = &bw__stream_ops,
    [BW__FIXED] = &bw__fixed_ops,
};
typedef char bw__every_mode_has_a_table[sizeof bw__modes / sizeof bw__modes[0] == BW__NMODES
                                            ? 1 : -1];

static const bw__mode_ops *bw__ops(const bw_writer *w) { return bw__modes[w->mode]; }

BW__INTERNAL unsigned bw__traits(const bw_writer *w) { return bw__ops(w)->traits; }

BW__INTERNAL int bw__room(bw_writer *w, size_t n, const void *src)
{
    /* A small message's first write (bw__contig_first_in) is one compare
     * away: the mode's own test, before the table. */
    if (bw__first_write(w, n))
        return BW__UNLIKELY(w->flags & BW__LIMITED) ? bw__contig_first_slow(w, n, src)
                                                    : bw__contig_first_in(w, n, src);
    if (n > BW__MAX_BLOCK && !(bw__ops(w)->traits & BW__NO_POOL))
        return bw__fail(w, BW_EOVERFLOW);
    return bw__ops(w)->room(w, n, src);
}

/* Room for n contiguous bytes at data + len that leaves every byte the held
 * bytes are in where it is and as it is, so that a source among them (a
 * printf argument, the rest of a FILE's write) stays readable until the
 * caller gives *old back (bw_pool_return with *old_cap; NULL for nothing).
 * Contiguous: a new block; segmented: a new block linked after the last.
 * Streaming and fixed writers have nowhere else to go: BW_EINVAL. */
BW__INTERNAL int bw__room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    *old = NULL;
    *old_cap = 0;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    return bw__ops(w)->room_keep(w, n, old, old_cap);
}

BW__INTERNAL void bw__drop_storage(bw_writer *w) { bw__ops(w)->drop_storage(w); }
BW__INTERNAL unsigned char *bw__contiguous(bw_writer *w, size_t extra)
{
    return bw__ops(w)->contiguous(w, extra);
}
BW__INTERNAL int bw__walk(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    return bw__ops(w)->walk(w, c, p, n);
}
BW__INTERNAL size_t bw__pieces(const bw_writer *w) { return bw__ops(w)->pieces(w); }

BW__INTERNAL void bw__drop_front(bw_writer *w, size_t n)
{
    w->base += n;
    bw__ops(w)->drop_front(w, n);
    if (w->base == bw_tell(w)) { /* all gone: start over at the beginning */
        w->pos = w->base;
        w->len = 0;
        bw__set_lim(w);
    }
}

BW__INTERNAL int bw__overlaps(const bw_writer *w, const void *p, size_t n)
{
    return bw__ops(w)->overlaps(w, p, n);
}
BW__INTERNAL int bw__room_at_once(const bw_writer *w, size_t n)
{
    return bw__ops(w)->room_at_once(w, n);
}
BW__INTERNAL size_t bw__block_size(const bw_writer *w)
{
    if (w->data == NULL || (w->flags & BW__EXTERNAL)) return 0;
    return bw__ops(w)->block_size(w);
}
BW__INTERNAL void bw__cut(bw_writer *w, uint64_t pos) { bw__ops(w)->cut(w, pos); }

int bw__write_slow(bw_writer *w, const void *src, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    return bw__put(w, src, n);
}

/* ------------------------------------------------------------------------ */
/* Release, clear, flush                                                    */
/* ------------------------------------------------------------------------ */

/* The end of a job: a growing writer's length teaches a learning pool.
 * Only what the pool learns from (bw__learn_record's checks, folded into
 * bw__pool_learns: one compare), so that a small message's release
 * makes no call for nothing. */
static inline void bw__job_done(bw_writer *w)
{
    bw_pool *p = w->pool;
    if ((bw__traits(w) & BW__GROWS) && p != NULL && bw__pool_learns(p, bw_len(w)))
        bw__learn_record(p, bw_len(w));
}



/* bw_release of the modes that do not grow by moving (segmented, streaming,
 * fixed): none of them teaches the pool, so bw__job_done is not needed. */
static BW__COLD void bw__release_rest(bw_writer *w)
{
    bw__drop_storage(w);
    bw__reset(w);
}


/* A contiguous writer's release is the one inline fast path: no table, no
 * call for a small message. One 16-bit test finds it contiguous with none
 * of the flags a reset clears, so with no error recorded either: then its
 * block goes back by the thread cache's inline push (bw__return_first,
 * whose compare of cap also says whether there is a block) and data
 * through base are all there is to empty. A contiguous writer with a flag
 * set (a caller's buffer, a window, an error, bw_cstr's NUL) takes
 * bw__contig_release_rest (writer_internal.h); other modes give their
 * storage back through the table (bw__release_rest). */
void bw_release(bw_writer *w)
{
    if (w == NULL) return;
    if (BW__LIKELY(bw__contig_without(w, BW__RESET_FLAGS))) {
        if (bw__return_first(w->pool, w->data, w->cap)) memset(w, 0, offsetof(bw_writer, pool));
        else bw__contig_release_rest(w, w->data);
        return;
    }
    if (!bw__is_contig(w)) {
        bw__release_rest(w);
        return;
    }
    bw__contig_release_rest(w, w->flags & BW__EXTERNAL ? NULL : w->data);
}

void bw_clear(bw_writer *w)
{
    uint64_t at;
    if (w == NULL) return;
    bw__job_done(w);
    at = w->base;
    bw__drop_front(w, bw_len(w)); /* every piece but the last block goes */
    w->pos = w->base = at; /* bw_tell: the first dropped byte */
    w->len = 0;
    w->err = BW_OK;
    w->flags &= (unsigned char)~(BW__FD_ERRNO | BW__FAILED);
    bw__set_lim(w);
}

void bw_clear_error(bw_writer *w)
{
    if (w == NULL) return;
    w->err = BW_OK;
    w->flags &= (unsigned char)~(BW__FD_ERRNO | BW__FAILED);
    bw__set_lim(w);
}

/* syserr is written with every recorded error (bw__fail) and by a failed
 * bw_write_fd (which records nothing, and sets BW__FD_ERRNO): it means
 * something only with one of them, so init, clear and release need not
 * touch it (it is outside the first cache line); they clear the flag. */
int bw_errno(const bw_writer *w)
{
    return w != NULL && (w->err != BW_OK || (w->flags & BW__FD_ERRNO)) ? w->syserr : 0;
}

int bw_flush(bw_writer *w)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    return bw__ops(w)->send(w);
}

int bw_set_limit(bw_writer *w, uint64_t max_bytes)
{
    if (w == NULL) return BW_EINVAL;
    w->limit = max_bytes;
    if (max_bytes != 0) w->flags |= BW__LIMITED;
    else w->flags &= (unsigned char)~BW__LIMITED;
    bw__set_lim(w);
    return BW_OK;
}

bw_pool *bw_writer_pool(const bw_writer *w)
{
    if (w == NULL || (bw__traits(w) & BW__NO_POOL)) return NULL;
    return w->pool ? w->pool : bw_pool_shared();
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

int bw_reserve(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    /* A small message's first put: no storage, contiguous, no size limit
     * and no error (mode and flags in one 16-bit test); n's range is
     * checked on its slow way. */
    if (w->data == NULL && bw__contig_without(w, BW__LIMITED | BW__FAILED))
        return bw__contig_first_in(w, n, NULL);
    if (w->err != BW_OK) return w->err;
    if (w->data == NULL && bw__is_contig(w)) return bw__contig_first_slow(w, n, NULL);
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len >= n) return BW_OK;
    return bw__room(w, n, NULL);
}

/* bw_get_span's cold path (its fast path is inline). */
void *bw__get_span_slow(bw_writer *w, size_t size_hint, size_t *avail)
{
    if (avail != NULL) *avail = 0;
    if (bw_reserve(w, size_hint ? size_hint : 1) != BW_OK) return NULL;
    if (avail != NULL) *avail = bw_free_capacity(w);
    return w->data + w->len;
}

int bw_advance(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n > w->cap - w->len) return bw__fail(w, BW_EINVAL); /* past the block: not a span's */
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    w->len += n;
    return BW_OK;
}

int bw_puts(bw_writer *w, const char *s)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (s == NULL) return bw__fail(w, BW_EINVAL);
    return bw__put(w, s, strlen(s));
}

/* The one stable copy of a source: n bytes that stay valid while the
 * writer moves, links or sends, copied from src, or with src NULL from the
 * writer's own held bytes (n is then bw_len). In buf (nbuf bytes) when they
 * fit, else in a block from the pool (*tmp, *tmp_cap: give it back after).
 * A writer with no pool never allocates, and its room moves the held bytes
 * down in place, a source among them with them: they move down now, and
 * the source where it went is the copy. NULL with the error recorded. */
BW__INTERNAL const void *bw__stable_copy(bw_writer *w, const void *src, size_t n, void *buf,
                                         size_t nbuf, void **tmp, size_t *tmp_cap)
{
    void *to = buf;
    *tmp = NULL;
    if (bw__traits(w) & BW__NO_POOL) {
        const void *at = src != NULL ? src : w->data + bw__start(w);
        bw__move_down(w, &at);
        return at;
    }
    if (n > nbuf) {
        bw_pool *p = bw__pool_of(w);
        if (p == NULL || (*tmp = bw_pool_rent(p, n, tmp_cap)) == NULL) {
            bw__fail(w, BW_ENOMEM);
            return NULL;
        }
        to = *tmp;
    }
    if (src != NULL) return memcpy(to, src, n);
    (void)bw_copy_out(w, 0, to, n);
    return to;
}

int bw_vprintf(bw_writer *w, const char *fmt, va_list ap)
{
    char stack[BW__PRINTF_STACK], *dst;
    size_t avail, size, shift = 0, need;
    va_list cp;
    int r;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (fmt == NULL) return bw__fail(w, BW_EINVAL);
    /* Pass one: into the free space when there is a useful amount of it,
     * else into a stack buffer, so short output is formatted once, also on
     * a writer with no storage yet. After bw_cstr the free space starts
     * with the NUL of a string an argument may be: then one byte further. */
    avail = w->data != NULL ? w->cap - w->len : 0;
    if (w->flags & BW__CSTR) {
        shift = avail != 0;
        w->flags &= (unsigned char)~BW__CSTR;
    }
    if (avail - shift >= sizeof stack) {
        dst = (char *)w->data + w->len + shift;
        size = avail - shift;
    } else {
        dst = stack;
        size = sizeof stack;
    }
    va_copy(cp, ap);
    errno = 0;
    r = vsnprintf(dst, size, fmt, cp);
    va_end(cp);
    if (r < 0) return bw__fail(w, errno == EOVERFLOW ? BW_EOVERFLOW : BW_EINVAL);
    need = (size_t)r;
    if (BW__UNLIKELY(bw__over(w, need))) return bw__fail(w, BW_ELIMIT);
    if (need < size) {
        if (dst == stack) return bw__put(w, stack, need);
        if (shift) memmove(w->data + w->len, dst, need);
        w->len += need;
        return BW_OK;
    }
    /* Pass two, the length known: formatted again where it will stay, while
     * everything the arguments may point into stays as it is. */
    return bw__ops(w)->printf_rest(w, need, fmt, ap);
}

int bw_printf(bw_writer *w, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_vprintf(w, fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Positions                                                                */
/* ------------------------------------------------------------------------ */

int bw_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    uint64_t tell;
    /* Allowed while an error is recorded (as truncate): the held bytes are
     * intact after any failure, so a frame can be fixed or rolled back
     * before the error is dealt with. A failure returns its own code, not
     * w->err: with an error already recorded that would hide it (the
     * first error stays). */
    if (w == NULL) return BW_EINVAL;
    if (n == 0) return BW_OK;
    tell = bw_tell(w);
    if (src == NULL || pos < w->base || pos > tell || n > tell - pos) return bw__fail(w, BW_EINVAL);
    return bw__ops(w)->patch(w, pos, src, n);
}

int bw_truncate(bw_writer *w, uint64_t pos)
{
    if (w == NULL) return BW_EINVAL;
    if (pos < w->base || pos > bw_tell(w)) return bw__fail(w, BW_EINVAL);
    bw__cut(w, pos);
    return BW_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading out                                                              */
/* ------------------------------------------------------------------------ */

/* bw_data's cold path (its fast path, a writer that is not segmented, is
 * inline). */
const unsigned char *bw__data_slow(const bw_writer *w)
{
    bw__cursor c = {0, 0, NULL};
    const unsigned char *p;
    size_t n, count;
    if (w == NULL) return NULL;
    count = bw__pieces(w);
    if (count > 1) return NULL;
    if (count == 0) return w->data != NULL ? w->data + w->len : NULL;
    while (bw__walk(w, &c, &p, &n) && n == 0) {}
    return p;
}

/* The count without a walk; a walk only for the entries asked for. */
size_t bw_iovec(const bw_writer *w, struct iovec *iov, size_t max)
{
    bw__cursor c = {0, 0, NULL};
    const unsigned char *p;
    size_t n, k = 0;
    if (w == NULL) return 0;
    if (iov == NULL) max = 0;
    while (k < max && bw__walk(w, &c, &p, &n)) {
        if (n == 0) continue;
        iov[k].iov_base = (void *)(uintptr_t)p;
        iov[k].iov_len = n;
        k++;
    }
    return bw__pieces(w);
}

int bw_copy_out(const bw_writer *w, size_t offset, void *dst, size_t n)
{
    bw__cursor c = {0, 0, NULL};
    const unsigned char *p;
    unsigned char *out = (unsigned char *)dst;
    size_t k, len;
    if (w == NULL) return BW_EINVAL;
    len = bw_len(w);
    if (offset > len || n > len - offset) return BW_EINVAL;
    if (n == 0) return BW_OK;
    if (dst == NULL) return BW_EINVAL;
    while (n > 0 && bw__walk(w, &c, &p, &k)) {
        if (offset >= k) {
            offset -= k;
            continue;
        }
        p += offset;
        k -= offset;
        offset = 0;
        if (k > n) k = n;
        memcpy(out, p, k);
        out += k;
        n -= k;
    }
    return BW_OK;
}


int bw_consume(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (n > bw_len(w)) return bw__fail(w, BW_EINVAL);
    if (n != 0) bw__drop_front(w, n);
    return BW_OK;
}

const unsigned char *bw_pullup(bw_writer *w)
{
    const unsigned char *d;
    if (w == NULL || w->err != BW_OK) return NULL;
    d = bw_data(w); /* already in one piece: no copy */
    if (d != NULL || bw_len(w) == 0) return d;
    return bw__contiguous(w, 0);
}

const char *bw_cstr(bw_writer *w)
{
    unsigned char *p;
    if (w == NULL || w->err != BW_OK) return NULL;
    if (w->data == NULL && bw_len(w) == 0) return "";
    /* A full buffer that cannot grow: a question with no answer, not a
     * failed write, so nothing is recorded and writing can go on. */
    if ((bw__traits(w) & BW__BOUNDED) && bw_len(w) == w->cap) return NULL;
    p = bw__contiguous(w, 1);
    if (p == NULL) return NULL;
    w->data[w->len] = 0;
    w->flags |= BW__CSTR; /* printf must not write over it first */
    return (const char *)p;
}

/* ------------------------------------------------------------------------ */
/* Appending, hand-off and zero-copy                                        */
/* ------------------------------------------------------------------------ */

int bw_append_writer(bw_writer *dst, const bw_writer *src)
{
    bw__cursor c = {0, 0, NULL};
    const unsigned char *p;
    size_t n, len;
    uint64_t mark;
    int rc;

    if (dst == NULL) return BW_EINVAL;
    if (dst->err != BW_OK) return dst->err;
    if (src == NULL) return bw__fail(dst, BW_EINVAL);
    len = bw_len(src);
    if (len == 0) return BW_OK;
    if (BW__UNLIKELY(bw__over(dst, len))) return bw__fail(dst, BW_ELIMIT);
    if (dst == src) {
        /* A second copy of itself: made stable first (writing may move,
         * link or send what is being read). */
        unsigned char buf[256];
        void *tmp;
        size_t tmp_cap = 0;
        const void *copy = bw__stable_copy(dst, NULL, len, buf, sizeof buf, &tmp, &tmp_cap);
        if (copy == NULL) return dst->err;
        rc = bw__put(dst, copy, len);
        if (tmp != NULL) (void)bw_pool_return(dst->pool, tmp, tmp_cap);
        return rc;
    }
    /* All or nothing: room first where it is made at once (a streaming
     * writer only for what fits its buffer); a segmented writer links its
     * pieces instead, and undoes to the mark. */
    if (!(bw__traits(dst) & BW__LINKS) && bw__room_at_once(dst, len)) {
        rc = dst->cap - dst->len >= len ? BW_OK : bw__room(dst, len, NULL);
        if (rc != BW_OK) return rc;
    }
    mark = bw_tell(dst);
    while (bw__walk(src, &c, &p, &n)) {
        if (n == 0) continue;
        rc = bw__put(dst, p, n);
        if (rc != BW_OK) {
            if ((bw__traits(dst) & BW__LINKS) && mark >= dst->base) bw__cut(dst, mark);
            return rc;
        }
    }
    return BW_OK;
}

void *bw_detach(bw_writer *w, size_t *len, size_t *capacity)
{
    void *b = NULL;
    size_t l = 0, c = 0;
    if (len != NULL) *len = 0;
    if (capacity != NULL) *capacity = 0;
    if (w == NULL) return NULL;
    if (bw__traits(w) & BW__NO_POOL) {
        bw__fail(w, BW_EINVAL);
        return NULL;
    }
    if (w->data != NULL || bw_len(w) != 0) {
        l = bw_len(w);
        if (!bw__ops(w)->hand_out(w, &b, &c)) return NULL;
    }
    bw__job_done(w);
    w->data = NULL; /* handed out: what else the mode holds goes back */
    w->cap = 0;
    bw__drop_storage(w);
    bw__reset(w);
    if (len != NULL) *len = l;
    if (capacity != NULL) *capacity = c;
    return b;
}

/* bw_detach_malloc's inline copy (bufwriter.h) takes a block of at most
 * the pool's first field's capacity, which holds at most that many bytes:
 * a text bw__pool_copies would copy too, so the two agree. The inline
 * copy's release, and every case it does not take, are these two. */
_Static_assert(offsetof(struct bw_pool, detach_copy_cap) == 0,
               "bw__pool_copy_cap reads a pool's first field");
_Static_assert(offsetof(bw_writer, flags) == offsetof(bw_writer, mode) + 1,
               "bw__contig_without loads mode and flags at once");
_Static_assert(BW__DETACH_COPY_MAX + 1 == BW__HAND_OFF_COPY_MAX,
               "bw_detach_malloc's inline copy and bw__pool_copies agree on the length");
_Static_assert((BW__RESET_FLAGS & ~BW__ALL_BUT_LIMITED) == 0,
               "bw_detach_malloc's inline test finds none of the flags a release clears");
/* Any other block (1 KiB to 64 KiB texts): bw__contig_release_rest for
 * what the inline test found, a block of cap bytes (no reservation), no
 * flag to clear and pos at base, so the length is len. Out of line, so the
 * usual case below keeps no register for bw__contig_release_block's
 * arguments (inline, that cost it a move of w). */
static BW__COLD void bw__detach_malloc_release_rest(bw_writer *w)
{
    bw_pool *p = w->pool;
    unsigned char *b = w->data;
    size_t cap = w->cap, len = w->len;
    memset(w, 0, offsetof(bw_writer, pool));
    bw__contig_release_block(p, b, cap, cap, len);
}

/* The inline test found a pooled block and none of the flags a release
 * clears, so no error either: as bw_release's first test, the block goes
 * back and data through base are all there is to empty. */
void bw__detach_malloc_release(bw_writer *w)
{
    BW__ASSUME(w->data != NULL); /* and not a caller's buffer: the inline test */
    if (bw__return_first(w->pool, w->data, w->cap)) memset(w, 0, offsetof(bw_writer, pool));
    else bw__detach_malloc_release_rest(w);
}

void *bw__detach_malloc_slow(bw_writer *w, size_t *len)
{
    unsigned char *b;
    size_t l, cap;
    if (len != NULL) *len = 0;
    if (w == NULL) return NULL;
    l = bw_len(w);
    cap = bw__block_size(w);
    if (cap != 0) {
        /* One block of the pool's: handed over when it is malloc's memory
         * with room for the NUL (a segmented block's link after the bytes
         * is room too), shrunk to fit when it is much larger than them;
         * the pool says when a copy is cheaper (pool_writer.h). */
        if (l < cap && !bw__pool_copies(w->pool, cap, l + 1) &&
            bw__pool_hand_off(w->pool, w->data, cap, l + 1)) {
            bw__move_down(w, NULL);
            b = w->data;
            b[l] = 0;
            /* Nothing past w->cap written: a contiguous writer's window,
             * else the block's end. */
            b = (unsigned char *)bw__pool_hand_off_fit(
                w->pool, b, cap, l + 1, bw__traits(w) & BW__GROWS ? w->cap : cap);
            w->data = NULL; /* handed out, as in bw_detach */
            w->cap = 0;
            bw__drop_storage(w);
            goto done;
        }
    }
    b = (unsigned char *)malloc(l + 1);
    if (b == NULL) {
        bw__fail(w, BW_ENOMEM);
        return NULL;
    }
    /* One block holds them at data[start, len) (as bw__move_down has it):
     * no walk. */
    if (cap != 0 && l != 0) memcpy(b, w->data + bw__start(w), l);
    else (void)bw_copy_out(w, 0, b, l);
    b[l] = 0;
    bw__drop_storage(w);
done:
    bw__job_done(w);
    bw__reset(w);
    if (len != NULL) *len = l;
    return b;
}

int bw_append_ref(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    /* the size limit's flag tested before its sum: 17 instructions to
     * the link were 15 (objdump), for a call made once a record */
    if (BW__UNLIKELY(data == NULL) && n != 0) return bw__fail(w, BW_EINVAL);
    if (BW__UNLIKELY(w->flags & BW__LIMITED) && bw__over(w, n)) return bw__fail(w, BW_ELIMIT);
    return bw__ops(w)->link(w, data, n, done, ctx);
}

int bw_move(bw_writer *dst, bw_writer *src)
{
    size_t len;
    int rc;
    if (dst == NULL) return BW_EINVAL;
    if (dst->err != BW_OK) return dst->err;
    if (src == NULL || src == dst || (bw__traits(src) & BW__SENDS)) return bw__fail(dst, BW_EINVAL);
    if (src->err != BW_OK) return src->err; /* src's to deal with: not recorded */
    len = bw_len(src);
    if (len == 0) return BW_OK;
    if (BW__UNLIKELY(bw__over(dst, len))) return bw__fail(dst, BW_ELIMIT);
    rc = bw__ops(dst)->take(dst, src);
    if (rc != 0) return rc > 0 ? BW_OK : rc;
    rc = bw_append_writer(dst, src);
    if (rc == BW_OK) bw__drop_front(src, len);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Padding                                                                  */
/* ------------------------------------------------------------------------ */

/* Zeros up to the next multiple of align (Arrow's 8-byte buffers, a page
 * for what is mapped). Up to 64 bytes is one write. A longer pad makes its
 * room first, so that no write after it can fail (a fixed writer short of
 * room takes none of it, a streaming one sends before, never in the middle);
 * a segmented writer is not asked to, since bw_reserve would skip the rest
 * of its block: there a failed link (BW_ENOMEM, nothing sent) is undone. */
int bw_pad(bw_writer *w, size_t align)
{
    static const unsigned char zeros[64];
    uint64_t start;
    size_t pad, n;
    int rc = BW_OK;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (align == 0 || (align & (align - 1)) != 0 || align > BW_PAD_MAX)
        return bw__fail(w, BW_EINVAL);
    start = bw_tell(w);
    pad = (size_t)((0 - start) & (uint64_t)(align - 1));
    if (pad <= sizeof zeros) return bw_write(w, zeros, pad);
    if (BW__UNLIKELY(bw__over(w, pad))) return bw__fail(w, BW_ELIMIT);
    if (!(bw__traits(w) & BW__LINKS)) rc = bw_reserve(w, pad);
    for (; rc == BW_OK && pad > 0; pad -= n) {
        n = pad < sizeof zeros ? pad : sizeof zeros;
        rc = bw_write(w, zeros, n);
    }
    if (rc != BW_OK && start >= w->base) (void)bw_truncate(w, start);
    return rc;
}
/*************** End file bufwriter.c ***************************************/

/*************** Begin file fmt_float.c *************************************/
/* fmt_float.c - floating-point text: the shortest decimal that reads back
 * (strtod, strtof) as exactly the value, in printf("%.17g")'s notation.
 *
 * The digits come from the Schubfach method (R. Giulietti, "The Schubfach
 * way to render doubles", 2020; Java's Double.toString since JDK 19),
 * chosen over Ryu, Grisu and Dragonbox for its size and speed: one table of
 * 617 128-bit powers of ten, three 64x128-bit products, no loop and no
 * fallback (Grisu needs one), and in published measurements a little behind
 * Dragonbox and ahead of Ryu (fmtlib's dtoa-benchmark on an M1: Dragonbox
 * 21 ns, Schubfach 25, Ryu 37) with much less to get right.
 *
 * The idea: v = c 2^q rounds back from every decimal in its rounding
 * interval R = [v - gap below / 2, v + gap above / 2] (closed when c is even,
 * as strtod breaks ties to even). With k = floor(log10 of R's width), R is
 * at least 10^k wide and less than 10^(k+1), so it holds at most one multiple of
 * 10^(k+1) and at least one of 10^k. The answer is that multiple of
 * 10^(k+1) when there is one (no shorter decimal can be in R: it would be
 * one too), else the multiple of 10^k in R nearest v, which is floor or ceil
 * of v / 10^k. All of these tests are comparisons of 4 v / 10^k and of R's
 * scaled ends with even integers, and the paper shows that rounding the
 * products with a 126-bit approximation of 10^-k to odd (the floor, with the
 * lowest bit set when bits were dropped) keeps each comparison exact.
 *
 * No allocation, no locale, no libc call but memcpy. */
/* #include "writer_internal.h": amalgamated above */
/* #include "fmt_float_table.h": amalgamated above */

#include <string.h>

/* The text's steps, inlined into each encoder: the plain ones
 * (bw_enc_dec_f64, _f32) then test no flag at run time, as before the
 * flags came (rows T of bench/BENCHMARKS.md), and the flags' forms share
 * one encoder per type. */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__FF_INLINE static inline __attribute__((always_inline))
#else
#  define BW__FF_INLINE static inline
#endif

/* ---- 64 x 64 -> 128-bit products ------------------------------------- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 bw__ff_u128;

/* The high 64 bits of a * b; *lo gets the low 64. */
static uint64_t bw__ff_mul(uint64_t a, uint64_t b, uint64_t *lo)
{
    bw__ff_u128 p = (bw__ff_u128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}
#else
static uint64_t bw__ff_mul(uint64_t a, uint64_t b, uint64_t *lo)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

/* ---- The logarithms, in integer arithmetic (constants checked by the
 * table's generator over every input they get here) -------------------- */

static int bw__ff_log10_pow2(int q)
{
    return ((q * BW__FF_L10 + (BW__FF_B10 << BW__FF_S10)) >> BW__FF_S10) - BW__FF_B10;
}

static int bw__ff_log10_34_pow2(int q)
{
    return ((q * BW__FF_L10 + BW__FF_L10_34 + (BW__FF_B10 << BW__FF_S10)) >> BW__FF_S10) -
           BW__FF_B10;
}

static int bw__ff_log2_pow10(int k)
{
    return ((k * BW__FF_L2 + (BW__FF_B2 << BW__FF_S2)) >> BW__FF_S2) - BW__FF_B2;
}

/* ---- The shortest digits ---------------------------------------------- */

/* floor(g cp / 2^127), rounded to odd: the lowest bit set when bits 64..126
 * of the product are not all zero (g = hi 2^64 + lo < 2^126, cp < 2^61).
 * Bits 0..63 are left out: they hold no more than g's own rounding error
 * (the paper's proof of the double case is for exactly this). */
static uint64_t bw__ff_rop64(uint64_t hi, uint64_t lo, uint64_t cp)
{
    uint64_t l0, h0, l1 = bw__ff_mul(lo, cp, &l0), h1 = bw__ff_mul(hi, cp, &h0);
    uint64_t mid = h0 + l1, top = h1 + (mid < h0);
    (void)l0;
    return (top << 1 | mid >> 63) | ((mid & ~((uint64_t)1 << 63)) != 0);
}

/* The float case: g is the table's top 63 bits plus one (g < 2^63,
 * cp < 2^62): floor(g cp / 2^95), odd when bits 64..94 are not all zero. */
static uint64_t bw__ff_rop32(uint64_t g, uint64_t cp)
{
    uint64_t lo, x1 = bw__ff_mul(g, cp, &lo);
    (void)lo;
    return (x1 >> 31) | ((x1 & 0xffffffffu) != 0);
}

/* The choice among the candidates, once the scaled bounds are known:
 * vb = 4 v / 10^k, vbl and vbr R's ends scaled alike (all rounded to odd),
 * out = 1 when R is open. Returns the digits, of 10^k. */
static uint64_t bw__ff_pick(uint64_t vb, uint64_t vbl, uint64_t vbr, uint64_t out)
{
    uint64_t s = vb >> 2, sp10 = s / 10 * 10, tp10 = sp10 + 10, t = s + 1;
    int upin = vbl + out <= sp10 << 2, wpin = (tp10 << 2) + out <= vbr;
    int uin, win;
    /* One multiple of 10^(k+1) in R: the shortest (both cannot be: R is
     * narrower than 10^(k+1)). */
    if (upin != wpin) return upin ? sp10 : tp10;
    uin = vbl + out <= s << 2;
    win = (t << 2) + out <= vbr;
    if (uin != win) return uin ? s : t;
    /* Both in R (R is at least 10^k wide, so never neither): the nearer,
     * and on a tie the even one. vb is compared with 4 s + 2. */
    if (vb < (s << 2) + 2) return s;
    if (vb > (s << 2) + 2) return t;
    return (s & 1) ? t : s;
}

/* v = c 2^q (c > 0) as f 10^*e with f shortest. A normal c of 2^52 (2^23
 * for a float) is a power of two, whose gap below is half the gap above,
 * but for the smallest normal (its gap below is the subnormals'). */
static uint64_t bw__ff_shortest64(uint64_t c, int q, int *e)
{
    int irregular = c == (uint64_t)1 << 52 && q > -1074;
    int k = irregular ? bw__ff_log10_34_pow2(q) : bw__ff_log10_pow2(q);
    int h = q + bw__ff_log2_pow10(-k) + 2;
    const uint64_t *g = bw__ff_g + 2 * (k - BW__FF_K_MIN);
    uint64_t cb = c << 2, cbl = irregular ? cb - 1 : cb - 2, cbr = cb + 2;
    uint64_t vb = bw__ff_rop64(g[0], g[1], cb << h);
    uint64_t vbl = bw__ff_rop64(g[0], g[1], cbl << h);
    uint64_t vbr = bw__ff_rop64(g[0], g[1], cbr << h);
    *e = k;
    return bw__ff_pick(vb, vbl, vbr, c & 1);
}

BW__FF_INLINE uint64_t bw__ff_shortest32(uint64_t c, int q, int *e)
{
    int irregular = c == (uint64_t)1 << 23 && q > -149;
    int k = irregular ? bw__ff_log10_34_pow2(q) : bw__ff_log10_pow2(q);
    int h = q + bw__ff_log2_pow10(-k) + 33;
    const uint64_t *g2 = bw__ff_g + 2 * (k - BW__FF_K_MIN);
    uint64_t g = (g2[0] << 1 | g2[1] >> 63) + 1;
    uint64_t cb = c << 2, cbl = irregular ? cb - 1 : cb - 2, cbr = cb + 2;
    uint64_t vb = bw__ff_rop32(g, cb << h);
    uint64_t vbl = bw__ff_rop32(g, cbl << h);
    uint64_t vbr = bw__ff_rop32(g, cbr << h);
    *e = k;
    return bw__ff_pick(vb, vbl, vbr, c & 1);
}

/* ---- The text --------------------------------------------------------- */

/* How many decimal digits f (0 < f < 10^19) has. */
static int bw__ff_ndigits(uint64_t f)
{
    static const uint64_t pow10[20] = {
        UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
        UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
        UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
        UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
        UINT64_C(1000000000000000), UINT64_C(10000000000000000),
        UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
        UINT64_C(10000000000000000000)};
    int bits, t;
#if defined(__GNUC__) || defined(__clang__)
    bits = 64 - __builtin_clzll(f);
#else
    for (bits = 0; bits < 64 && f >> bits != 0; bits++) {}
#endif
    /* floor(bits log10 2) is the digit count of 2^(bits - 1), less one;
     * f, in [2^(bits-1), 2^bits), may have one digit more. */
    t = bits * 1233 >> 12;
    return t + 1 - (f < pow10[t]);
}

/* The flags a caller may pass (bufwriter.h). */
#define BW__DEC_FLAGS (BW_DEC_JSON | BW_DEC_POINT_ZERO | BW_DEC_EXP_SHORT)

/* The exponent of the exponent form, x != 0 or x == 0 never reached (the
 * form is for x < -4 or x >= 17): "e+17", "e-05", "e+300"; with
 * BW_DEC_EXP_SHORT no "+" and no leading zero, "e17", "e-5". */
BW__FF_INLINE unsigned char *bw__ff_exp(unsigned char *p, int x, unsigned flags)
{
    unsigned ax = (unsigned)(x < 0 ? -x : x);
    *p++ = 'e';
    if (x < 0) *p++ = '-';
    else if (!(flags & BW_DEC_EXP_SHORT)) *p++ = '+';
    if (ax >= 100) {
        *p++ = (unsigned char)('0' + ax / 100);
        ax %= 100;
    } else if (ax < 10 && (flags & BW_DEC_EXP_SHORT)) {
        *p = (unsigned char)('0' + ax);
        return p + 1;
    }
    memcpy(p, bw__digits2 + ax * 2, 2);
    return p + 2;
}

/* f 10^e (f > 0) as printf("%.17g") lays out its digits: exponent form
 * when the decimal exponent x (of the first digit) is below -4 or at least
 * 17, else plain digits with zeros, no trailing zeros either way; flags as
 * bufwriter.h's BW_DEC_* say. The digits go straight to their place. */
BW__FF_INLINE unsigned char *bw__ff_text(unsigned char *p, uint64_t f, int e, unsigned flags)
{
    int n, x, i;
    /* Trailing zeros off: the shortest digits have at most 17. */
    while (f % 10000 == 0) {
        f /= 10000;
        e += 4;
    }
    while (f % 10 == 0) {
        f /= 10;
        e++;
    }
    n = bw__ff_ndigits(f);
    x = e + n - 1;
    if (x < -4 || x >= 17) {
        if (n > 1) { /* d.ddd: the digits one place right, the first moved back */
            bw__dec_digits(p + 1 + n, f);
            p[0] = p[1];
            p[1] = '.';
            p += n + 1;
        } else {
            *p++ = (unsigned char)('0' + f);
        }
        return bw__ff_exp(p, x, flags);
    }
    if (x < 0) { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (i = x + 1; i < 0; i++) *p++ = '0';
        bw__dec_digits(p + n, f);
        return p + n;
    }
    if (x + 1 >= n) { /* ddd000, and ".0" after it for BW_DEC_POINT_ZERO */
        bw__dec_digits(p + n, f);
        for (i = n; i <= x; i++) p[i] = '0';
        p += x + 1;
        if (flags & BW_DEC_POINT_ZERO) {
            memcpy(p, ".0", 2);
            p += 2;
        }
        return p;
    }
    bw__dec_digits(p + 1 + n, f); /* ddd.ddd: the integer digits moved back */
    for (i = 0; i <= x; i++) p[i] = p[i + 1];
    p[x + 1] = '.';
    return p + n + 1;
}

/* nan, inf, -inf; NULL, nothing stored, under BW_DEC_JSON. */
BW__FF_INLINE unsigned char *bw__ff_special(unsigned char *p, int neg, int nan, unsigned flags)
{
    if (flags & BW_DEC_JSON) return NULL;
    if (nan) {
        memcpy(p, "nan", 3);
        return p + 3;
    }
    if (neg) *p++ = '-';
    memcpy(p, "inf", 3);
    return p + 3;
}

/* Zero: "0", "0.0" for BW_DEC_POINT_ZERO (after the sign). */
BW__FF_INLINE unsigned char *bw__ff_zero(unsigned char *p, unsigned flags)
{
    *p = '0';
    if (!(flags & BW_DEC_POINT_ZERO)) return p + 1;
    memcpy(p + 1, ".0", 2);
    return p + 3;
}

/* The text of v with flags at p (room for BW_DEC_F64_MAX); NULL, nothing
 * stored, for NaN or an infinity under BW_DEC_JSON. */
BW__FF_INLINE unsigned char *bw__ff_enc64(unsigned char *p, double v, unsigned flags)
{
    uint64_t bits, t, c;
    int be, q, e;
    memcpy(&bits, &v, sizeof bits);
    t = bits & (((uint64_t)1 << 52) - 1);
    be = (int)(bits >> 52 & 0x7ff);
    if (be == 0x7ff) return bw__ff_special(p, (int)(bits >> 63), t != 0, flags);
    if (bits >> 63) *p++ = '-';
    if (be == 0) {
        if (t == 0) return bw__ff_zero(p, flags);
        c = t;
        q = -1074;
    } else {
        c = t | (uint64_t)1 << 52;
        q = be - 1075;
        /* An integer below 2^53: its own digits are the shortest (every
         * other decimal as short is another integer, at least 1 away, and
         * R is at most 1 wide). */
        if (q <= 0 && q > -53 && (c & (((uint64_t)1 << -q) - 1)) == 0)
            return bw__ff_text(p, c >> -q, 0, flags);
    }
    c = bw__ff_shortest64(c, q, &e);
    return bw__ff_text(p, c, e, flags);
}

BW__FF_INLINE unsigned char *bw__ff_enc32(unsigned char *p, float v, unsigned flags)
{
    uint32_t bits, t;
    uint64_t c;
    int be, q, e;
    memcpy(&bits, &v, sizeof bits);
    t = bits & ((1u << 23) - 1);
    be = (int)(bits >> 23 & 0xff);
    if (be == 0xff) return bw__ff_special(p, (int)(bits >> 31), t != 0, flags);
    if (bits >> 31) *p++ = '-';
    if (be == 0) {
        if (t == 0) return bw__ff_zero(p, flags);
        c = t;
        q = -149;
    } else {
        c = t | 1u << 23;
        q = be - 150;
        if (q <= 0 && q > -24 && (c & (((uint64_t)1 << -q) - 1)) == 0)
            return bw__ff_text(p, c >> -q, 0, flags);
    }
    c = bw__ff_shortest32(c, q, &e);
    return bw__ff_text(p, c, e, flags);
}

unsigned char *bw_enc_dec_f64(unsigned char *p, double v) { return bw__ff_enc64(p, v, 0); }
unsigned char *bw_enc_dec_f32(unsigned char *p, float v) { return bw__ff_enc32(p, v, 0); }

/* The flags' encoders: one copy each, flags tested at run time. */
static unsigned char *bw__ff_enc64_flags(unsigned char *p, double v, unsigned flags)
{
    return bw__ff_enc64(p, v, flags);
}

static unsigned char *bw__ff_enc32_flags(unsigned char *p, float v, unsigned flags)
{
    return bw__ff_enc32(p, v, flags);
}

/* The puts: with room for the longest text, straight into the writer (the
 * inline puts' test: lim is len while an error is recorded, and 0 with no
 * storage); otherwise on the stack and through bw_write, which grows,
 * links, sends or refuses as every put does. */
int bw_put_dec_f64(bw_writer *w, double v)
{
    unsigned char b[BW_DEC_F64_MAX];
    if (w != NULL && w->lim - w->len >= BW_DEC_F64_MAX) {
        w->len = (size_t)(bw_enc_dec_f64(w->data + w->len, v) - w->data);
        return BW_OK;
    }
    return bw_write(w, b, (size_t)(bw_enc_dec_f64(b, v) - b));
}

int bw_put_dec_f32(bw_writer *w, float v)
{
    unsigned char b[BW_DEC_F32_MAX];
    if (w != NULL && w->lim - w->len >= BW_DEC_F32_MAX) {
        w->len = (size_t)(bw_enc_dec_f32(w->data + w->len, v) - w->data);
        return BW_OK;
    }
    return bw_write(w, b, (size_t)(bw_enc_dec_f32(b, v) - b));
}

/* The flags' puts: as above, with the text stored first and committed only
 * when there is one (no text: a NaN or an infinity under BW_DEC_JSON). The
 * checks a put makes come first, so a recorded error wins over the value;
 * neither BW_ENONFINITE nor unknown flags are recorded (the writer is not
 * at fault, and a JSON writer goes on, say with "null"). */
static int bw__put_dec_flags(bw_writer *w, double d, float f, int is32, unsigned flags)
{
    unsigned char b[BW_DEC_F64_MAX], *q;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (flags & ~(unsigned)BW__DEC_FLAGS) return BW_EINVAL;
    if (w->lim - w->len >= BW_DEC_F64_MAX) {
        q = is32 ? bw__ff_enc32_flags(w->data + w->len, f, flags)
                 : bw__ff_enc64_flags(w->data + w->len, d, flags);
        if (q == NULL) return BW_ENONFINITE;
        w->len = (size_t)(q - w->data);
        return BW_OK;
    }
    q = is32 ? bw__ff_enc32_flags(b, f, flags) : bw__ff_enc64_flags(b, d, flags);
    if (q == NULL) return BW_ENONFINITE;
    return bw_write(w, b, (size_t)(q - b));
}

int bw_put_dec_f64_flags(bw_writer *w, double v, unsigned flags)
{
    return bw__put_dec_flags(w, v, 0, 0, flags);
}

int bw_put_dec_f32_flags(bw_writer *w, float v, unsigned flags)
{
    return bw__put_dec_flags(w, 0, v, 1, flags);
}

/* Into the room given: straight there when it holds the longest text,
 * else on the stack and copied when it fits, so nothing is stored past
 * room and a text that does not fit stores nothing. */
static int bw__fmt_dec(void *dst, size_t room, double d, float f, int is32, unsigned flags,
                       size_t *len)
{
    unsigned char b[BW_DEC_F64_MAX], *p = room >= BW_DEC_F64_MAX ? (unsigned char *)dst : b, *q;
    size_t n;
    if (len != NULL) *len = 0;
    if ((flags & ~(unsigned)BW__DEC_FLAGS) || (dst == NULL && room != 0)) return BW_EINVAL;
    q = is32 ? bw__ff_enc32_flags(p, f, flags) : bw__ff_enc64_flags(p, d, flags);
    if (q == NULL) return BW_ENONFINITE;
    n = (size_t)(q - p);
    if (len != NULL) *len = n;
    if (p == b) {
        if (n > room) return BW_EFULL;
        memcpy(dst, b, n);
    }
    return BW_OK;
}

int bw_fmt_dec_f64(void *dst, size_t room, double v, unsigned flags, size_t *len)
{
    return bw__fmt_dec(dst, room, v, 0, 0, flags, len);
}

int bw_fmt_dec_f32(void *dst, size_t room, float v, unsigned flags, size_t *len)
{
    return bw__fmt_dec(dst, room, 0, v, 1, flags, len);
}
/*************** End file fmt_float.c ***************************************/

/*************** Begin file fmt_int.c ***************************************/
/* fmt_int.c - integer text that is not inline: decimal (bw_put_dec_u64,
 * bw_put_dec_i64) and hex (bw_put_hex), for every mode, on top of the
 * dispatcher's cold paths; and the two-digit table the float text
 * (fmt_float.c) shares. */
/* #include "writer_internal.h": amalgamated above */

/* Two decimal digits of every value below 100, for the one decimal routine
 * (bw__dec_digits, writer_internal.h): this file's and the float text's. */
static const char bw__digits2[201] = {
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899"};

int bw_put_dec_u64(bw_writer *w, uint64_t v)
{
    unsigned char b[20], *p = bw__dec_digits(b + sizeof b, v);
    return bw_write(w, p, (size_t)(b + sizeof b - p));
}

int bw_put_dec_i64(bw_writer *w, int64_t v)
{
    unsigned char b[21], *p;
    uint64_t u = (uint64_t)v;
    if (v < 0) u = 0 - u; /* INT64_MIN too */
    p = bw__dec_digits(b + sizeof b, u);
    if (v < 0) *--p = '-';
    return bw_write(w, p, (size_t)(b + sizeof b - p));
}

static void bw__hex(unsigned char *out, const unsigned char *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = (unsigned char)digits[in[i] >> 4];
        out[2 * i + 1] = (unsigned char)digits[in[i] & 15];
    }
}

int bw_put_hex(bw_writer *w, const void *src, size_t n)
{
    unsigned char buf[256];
    const unsigned char *in = (const unsigned char *)src;
    void *tmp = NULL;
    size_t tmp_cap = 0;
    int rc = BW_OK;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    /* 2n bytes no writer can hold: the mode's room says which error
     * (BW_EOVERFLOW, or BW_EFULL for a fixed buffer). */
    if (n > BW__MAX_BLOCK / 2) return bw__room(w, SIZE_MAX, NULL);
    if (BW__UNLIKELY(bw__over(w, 2 * n))) return bw__fail(w, BW_ELIMIT);
    if (w->cap - w->len < 2 * n) {
        /* The cold path may move, link or send the bytes src points into:
         * they are made stable first. */
        if (bw__overlaps(w, src, n)) {
            in = (const unsigned char *)bw__stable_copy(w, src, n, buf, sizeof buf, &tmp, &tmp_cap);
            if (in == NULL) return w->err;
        }
        if (!bw__room_at_once(w, 2 * n)) {
            /* Larger than a streaming buffer: in pieces (a prefix on
             * failure). */
            unsigned char out[512];
            size_t i;
            for (i = 0; i < n && rc == BW_OK; i += sizeof out / 2) {
                size_t k = n - i < sizeof out / 2 ? n - i : sizeof out / 2;
                bw__hex(out, in + i, k);
                rc = bw__put(w, out, 2 * k);
            }
            goto done;
        }
        rc = bw__room(w, 2 * n, NULL);
        if (rc != BW_OK) goto done;
    }
    bw__hex(w->data + w->len, in, n);
    w->len += 2 * n;
done:
    if (tmp != NULL) (void)bw_pool_return(w->pool, tmp, tmp_cap);
    return rc;
}
/*************** End file fmt_int.c *****************************************/

/*************** Begin file io.c ********************************************/
/* io.c - getting bytes out of any writer: to a file descriptor (through
 * the one send loop, bw__send_iov in mode_stream.c, whose sends never
 * raise SIGPIPE), and a FILE* adapter for fprintf code (the FILE itself
 * comes from the platform layer). It calls the public API and the
 * dispatcher's cold paths only: no mode's file calls back into it. */
/* #include "writer_internal.h": amalgamated above */

#include <errno.h>
#include <stdlib.h>

/* At most this many pieces per send (bw__fd_send sends fewer where the
 * system's limit, IOV_MAX, is lower). */
#define BW__IOV_BATCH 64

int bw_write_fd(bw_writer *w, int fd, size_t *written)
{
    struct iovec iov[BW__IOV_BATCH];
    size_t done = 0;
    int rc = BW_OK;

    if (written != NULL) *written = 0;
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    w->flags &= (unsigned char)~BW__FD_ERRNO;
    while (rc == BW_OK && bw_len(w) != 0) {
        size_t n = bw_iovec(w, iov, BW__IOV_BATCH), sent;
        if (n > BW__IOV_BATCH) n = BW__IOV_BATCH;
        rc = bw__send_iov(fd, NULL, NULL, iov, n, &sent);
        if (rc == BW_OK && sent == 0) { /* only empty pieces: no progress, never loop */
            errno = EIO;
            rc = BW_EIO;
        }
        /* What went out is no longer held; a short write just loops. */
        bw__drop_front(w, sent);
        done += sent;
    }
    if (rc != BW_OK) {
        w->syserr = errno; /* not recorded: calling again continues, */
        w->flags |= BW__FD_ERRNO; /* but kept, for bw_errno */
    }
    if (written != NULL) *written = done;
    return rc;
}

#ifdef BW_HAVE_FILE_ADAPTER
/* A writer failure as the errno a FILE write reports. */
static int bw__errno_of(int rc)
{
    switch (rc) {
    case BW_ENOMEM:    return ENOMEM;
    case BW_EFULL:     return ENOSPC;
    case BW_EOVERFLOW: return EFBIG;
    case BW_ELIMIT:    return EFBIG;
    case BW_EINVAL:    return EINVAL;
    default:           return EIO;
    }
}

/* A FILE's state: its writer, and the blocks a contiguous writer outgrew
 * while the FILE wrote into it. glibc hands a write to the cookie when the
 * FILE's buffer fills, in the middle of an fprintf or fwrite whose
 * argument may be the writer's own held bytes, and then goes on reading
 * that argument: so the old block is kept until fclose (the blocks a writer
 * outgrows add up to less than the one it has). Segmented writers never
 * move their bytes; streaming and fixed writers send or move them in
 * place (bufwriter.h says so). */
typedef struct bw__kept_block {
    bw_pool *pool;
    void *block;
    size_t size;
} bw__kept_block;

typedef struct bw__file {
    const bw__file_ops *ops; /* first: the platform's FILE calls it */
    bw_writer *w;
    bw__kept_block *kept;
    size_t n, cap;
} bw__file;
/* The platform reads the cookie as a pointer to its first member. */
typedef char bw__file_ops_first[offsetof(bw__file, ops) == 0 ? 1 : -1];

static int bw__file_write(bw__file *f, const char *buf, size_t n)
{
    bw_writer *w = f->w;
    if (w->err == BW_OK && bw__over(w, n)) return bw__fail(w, BW_ELIMIT); /* before a move */
    if ((bw__traits(w) & BW__GROWS) && w->err == BW_OK && w->cap - w->len < n) {
        void *old;
        size_t old_cap;
        int rc;
        if (f->n == f->cap) { /* room to note the old block, before it moves */
            size_t nc = f->cap ? 2 * f->cap : 8;
            bw__kept_block *k = (bw__kept_block *)realloc(f->kept, nc * sizeof *k);
            if (k == NULL) return bw__fail(w, BW_ENOMEM);
            f->kept = k;
            f->cap = nc;
        }
        rc = bw__room_keep(w, n, &old, &old_cap);
        if (rc != BW_OK) return rc;
        if (old != NULL) {
            f->kept[f->n].pool = w->pool;
            f->kept[f->n].block = old;
            f->kept[f->n].size = old_cap;
            f->n++;
        }
    }
    return bw_write(w, buf, n);
}

static void bw__file_close(bw__file *f)
{
    size_t i;
    for (i = 0; i < f->n; i++)
        (void)bw_pool_return(f->kept[i].pool, f->kept[i].block, f->kept[i].size);
    free(f->kept);
    free(f);
}

/* The FILE's calls: a write hands the bytes to the writer (0 with errno on
 * failure); close gives the kept blocks back. */
static int bw__file_put(void *cookie, const char *buf, size_t n)
{
    int rc = bw__file_write((bw__file *)cookie, buf, n);
    if (rc == BW_OK) return 1;
    errno = bw__errno_of(rc);
    return 0;
}

static void bw__file_closed(void *cookie) { bw__file_close((bw__file *)cookie); }

static const bw__file_ops bw__file_calls = {bw__file_put, bw__file_closed};

static bw__file *bw__file_new(bw_writer *w)
{
    bw__file *f;
    if (w == NULL) {
        errno = EINVAL;
        return NULL;
    }
    f = (bw__file *)calloc(1, sizeof *f);
    if (f == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    f->ops = &bw__file_calls;
    f->w = w;
    return f;
}

FILE *bw_fopen(bw_writer *w)
{
    bw__file *f = bw__file_new(w);
    FILE *fp;
    if (f == NULL) return NULL;
    fp = bw__file_make(f);
    if (fp == NULL) bw__file_close(f);
    return fp;
}

#endif /* BW_HAVE_FILE_ADAPTER */
/*************** End file io.c **********************************************/

/*************** Begin file mode_block.c ************************************/
/* mode_block.c - what more than one mode's room shares: the one-block
 * storage of the contiguous, streaming and fixed modes (their held bytes
 * are data[base - pos, len) of one block: one piece, moved down over
 * consumed bytes, patched in place), the do-nothing operations a mode
 * without an ability names in its table, and printf's pass two apart or
 * in kept room. It owns no mode and reads none. */
/* #include "writer_internal.h": amalgamated above */

/* bw_append_ref's bytes copied, where nothing is linked: done is called
 * once they are. */
BW__INTERNAL int bw__link_copy(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                               void *ctx)
{
    int rc = bw__put(w, data, n);
    if (rc == BW_OK && done != NULL) done(ctx, data, n);
    return rc;
}

/* printf's pass two, the length known (bw_vprintf), for the modes that
 * grow: output formatted into a block of its own, then written from there
 * (all or nothing), so the writer may move, link or send as it likes. */
BW__INTERNAL int bw__printf_apart(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    bw_pool *p;
    void *tmp;
    size_t tmp_cap;
    int r, rc;
    p = bw__pool_of(w);
    if (p == NULL || (tmp = bw_pool_rent(p, need + 1, &tmp_cap)) == NULL)
        return bw__fail(w, BW_ENOMEM);
    r = vsnprintf((char *)tmp, need + 1, fmt, ap);
    rc = r >= 0 && (size_t)r == need ? bw__put(w, tmp, need) : bw__fail(w, BW_EINVAL);
    (void)bw_pool_return(p, tmp, tmp_cap);
    return rc;
}

/* The same in place, in room that leaves the held bytes (which arguments
 * may point into) as they are until formatted (bw__room_keep). Output that
 * fills the free space to the last byte, or with `apart` the room growth
 * makes, is formatted apart instead: in place it would take a byte more
 * for vsnprintf's NUL (a move, a link, the next size up). */
BW__INTERNAL int bw__printf_grow(bw_writer *w, size_t need, const char *fmt, va_list ap,
                                 int apart)
{
    void *old;
    size_t old_cap;
    int r, rc;
    if (apart || (w->data != NULL && need <= w->cap - w->len))
        return bw__printf_apart(w, need, fmt, ap);
    rc = bw__room_keep(w, need + 1, &old, &old_cap);
    if (rc != BW_OK) return rc;
    r = vsnprintf((char *)w->data + w->len, need + 1, fmt, ap);
    if (r >= 0 && (size_t)r == need) w->len += need;
    else rc = bw__fail(w, BW_EINVAL);
    if (old != NULL) (void)bw_pool_return(w->pool, old, old_cap);
    return rc;
}

/* ---- one block: contiguous, streaming and fixed share these ---- */
/* A room operation (bw__mode_ops.room) makes room for n contiguous bytes at
 * data + len; with src it also appends src[0, n) and commits them. src may
 * point into held bytes. On failure the error is recorded and nothing held
 * changes. */

/* Move the held bytes of a one-block writer to the block's start (the cold
 * path of a writer that consumed); *src follows if it pointed into them. */
BW__INTERNAL void bw__move_down(bw_writer *w, const void **src)
{
    size_t start = bw__start(w), held = w->len - start;
    if (start == 0) return;
    if (src != NULL && *src != NULL && (uintptr_t)*src >= (uintptr_t)(w->data + start) &&
        (uintptr_t)*src < (uintptr_t)(w->data + w->len))
        *src = (const unsigned char *)*src - start;
    if (held != 0) memmove(w->data, w->data + start, held);
    w->pos = w->base;
    w->len = held;
    bw__set_lim(w); /* a size limit's lim counts from pos */
}

/* The end of a one-block room operation that moves in place (fixed, streaming),
 * with room for n after the held bytes once moved down: src, which follows
 * them if it points into them, is appended when not NULL. */
BW__INTERNAL int bw__block_put(bw_writer *w, const void *src, size_t n)
{
    bw__move_down(w, &src);
    if (src != NULL) {
        memmove(w->data + w->len, src, n);
        w->len += n;
    }
    return BW_OK;
}

/* Walk: the held bytes are one piece. */
BW__INTERNAL int bw__block_piece(const bw_writer *w, bw__cursor *c, const unsigned char **p,
                                 size_t *n)
{
    if (c->started || w->data == NULL) return 0;
    c->started = 1;
    *p = w->data + bw__start(w);
    *n = w->len - bw__start(w);
    return 1;
}

/* Reset: give the one block back (not the caller's first buffer). */
BW__INTERNAL void bw__block_drop_storage(bw_writer *w)
{
    /* Nothing past cap was ever handed out (a contiguous writer's window
     * on a zeroing pool: bw__contig_widen). */
    if (w->data != NULL && !(w->flags & BW__EXTERNAL))
        (void)bw__pool_return_written(w->pool, w->data, bw__block_size(w), w->cap);
    w->data = NULL;
    w->cap = 0;
}

/* Cut (bw_truncate) at pos, base <= pos <= tell: the held bytes end there.
 * Works while an error is recorded, which keeps lim at len. */
BW__INTERNAL void bw__block_cut(bw_writer *w, uint64_t pos)
{
    w->len = (size_t)(pos - w->pos);
    bw__set_lim(w);
}

/* Make contiguous for the modes that grow or move in place (contiguous,
 * fixed): their room. */
BW__INTERNAL unsigned char *bw__block_contiguous(bw_writer *w, size_t extra)
{
    if (w->cap - w->len < extra && bw__room(w, extra, NULL) != BW_OK) return NULL;
    return w->data + bw__start(w);
}

/* What the one-block modes share in their tables: one piece, nothing to
 * drop from a list, a patch in place, the block's capacity. */
BW__INTERNAL size_t bw__block_pieces(const bw_writer *w)
{
    return w->data != NULL && w->len != bw__start(w);
}
BW__INTERNAL void bw__block_drop_front(bw_writer *w, size_t n) { (void)w, (void)n; }
BW__INTERNAL int bw__block_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    memmove(w->data + (size_t)(pos - w->pos), src, n);
    return BW_OK;
}
BW__INTERNAL size_t bw__block_cap(const bw_writer *w) { return w->cap; }

/* Hand out (bw_detach): made contiguous in one block of the writer's own
 * (a segmented writer's pieces copied into one), moved to its start. */
BW__INTERNAL int bw__block_hand_out(bw_writer *w, void **block, size_t *cap)
{
    /* Works while an error is recorded: bw__contiguous does not check it
     * (a failure then keeps the first error). */
    if (bw__contiguous(w, 0) == NULL) return 0;
    bw__move_down(w, NULL);
    *block = w->data;
    *cap = bw__block_size(w);
    return 1;
}

/* And what modes without the matching ability name in their tables. */
BW__INTERNAL int bw__keeps_bytes(bw_writer *w) { return (void)w, BW_OK; }
BW__INTERNAL int bw__no_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    (void)n, (void)old, (void)old_cap;
    return bw__fail(w, BW_EINVAL);
}
BW__INTERNAL int bw__no_take(bw_writer *dst, bw_writer *src) { return (void)dst, (void)src, 0; }
BW__INTERNAL int bw__at_once(const bw_writer *w, size_t n) { return (void)w, (void)n, 1; }

/*************** End file mode_block.c **************************************/

/*************** Begin file mode_contig.c ***********************************/
/* mode_contig.c - the contiguous room (bw_init, bw_init_buffer,
 * bw_set_first_buffer): one block that growth moves to a bigger one, or
 * grows in place above the pool's threshold; the caller's first buffer
 * (BW__EXTERNAL); a zeroing pool's window (m.g.block). It owns the moves,
 * the first block's general way (its inline way is bw__contig_first_in in
 * writer_internal.h) and its table, bw__contig_ops. */
/* #include "writer_internal.h": amalgamated above */

/* On a zeroing pool (BW_POOL_ZERO_ON_RETURN) a contiguous writer's cap is a
 * window of its block (m.g.block bytes): every byte the caller may write
 * lies below cap (the inline puts and spans stop at lim <= cap, and
 * bw_free_capacity, bw_reserve and bw_advance count to cap), and the
 * window never narrows while the writer holds the block, so the block goes
 * back with cap as the end of what was written (bw__pool_return_written),
 * and a 20 KiB job in a 64 MiB block zeroes at most 40 KiB, not 64 MiB.
 * The window is the pool's size for what was asked for (bw__pool_size's
 * BW__SIZE_WINDOW: the growth rule's, at least 4 KiB, or the block whole)
 * and at least doubles when the cold path widens it, so it costs a cold
 * path per doubling, as growth does, and is at most twice the furthest
 * byte asked for (or the block whole, when that is less than twice it). */
static size_t bw__contig_window(bw_pool *p, size_t block, size_t held, size_t n, size_t cap)
{
    bw__size_req r = {.kind = BW__SIZE_WINDOW, .n = n, .held = held, .cap = cap, .block = block};
    bw__size s;
    (void)bw__pool_size(p, &r, &s); /* a window always has one: at most the block */
    return s.size;
}

/* A newly rented block of got bytes for a writer that asked for n more
 * bytes after held, its capacity having been cap (0: none): its window on
 * a zeroing pool or in a reservation (BW__RESERVED, set by
 * bw__contig_rent), the whole block otherwise. */
static inline void bw__contig_take(bw_writer *w, bw_pool *p, size_t got, size_t held, size_t n,
                                   size_t cap)
{
    w->m.g.block = got;
    w->cap = bw__contig_windowed(w) ? bw__contig_window(p, got, held, n, cap) : got;
}

/* A fresh block that the climb or the learned jump made larger than the
 * growth rule's size comes faulted in up to that size alone (pool.c,
 * bw__rent_slow; the fresh-memory bound). Its other pages would fault in
 * one at a time as the writer fills them: on the VM of bench/BENCHMARKS.md
 * 10 us a 4 KiB page, against 1 us populated (and the 4.7 us of the first
 * touch that a guest pays either way). So the writer gets the filled part
 * as its window (BW__FILLING), and each widening by the growth rule faults
 * in the new part with one call: never a page the writer has not come
 * within the growth rule of. Where the platform cannot fault pages in, the
 * windows are the same (so are the capacities a writer reports, on every
 * platform), each costing a cold path, as a move does. Only past
 * jump_floor (the usual first block is at most it, so the inline release
 * never takes a window for one) and at most at the threshold (no
 * reservation: bw__pool_return_written cuts only those); a zeroing pool
 * zeroes a fresh block whole. */
static void bw__contig_fill_window(bw_writer *w, bw_pool *p, size_t got, size_t filled)
{
    if (filled <= p->opt.jump_floor || got > p->opt.max_pooled_size || bw__pool_zeroes(p))
        return;
    w->flags |= BW__FILLING;
    w->m.g.block = got;
    w->cap = filled;
}

/* Widen a window in place for n more bytes; false when the block itself
 * has no room for them (or there is no window). A window being faulted
 * in gets its new pages in one call and ends at its block. */
static bool bw__contig_widen(bw_writer *w, size_t n)
{
    size_t was = w->cap;
    if ((w->flags & BW__EXTERNAL) || !bw__contig_windowed(w) || w->cap == w->m.g.block ||
        w->m.g.block - w->len < n)
        return false;
    w->cap = bw__contig_window(w->pool, w->m.g.block, w->len, n, w->cap);
    if (w->flags & BW__FILLING) {
        /* The pages the new part's bytes lie in: from the one the old
         * window ended in (was >= jump_floor: it lies in the block) to the
         * one its last byte lies in (a page of the block's, mapped). */
        (void)bw__populate(w->data + was - 4095, w->cap - was + 2 * 4095);
        if (w->cap == w->m.g.block) w->flags &= (unsigned char)~BW__FILLING;
    }
    bw__set_lim(w);
    return true;
}


/* A reservation back to a block of its window (bw__pool_cut), before the
 * block moves, is regrown or leaves the writer any way but its return
 * (bw__pool_return_written cuts it there). */
static void bw__contig_fit(bw_writer *w)
{
    if (w->flags & BW__FILLING) {
        /* The whole block is the writer's: the rest faults in as written. */
        w->cap = w->m.g.block;
        w->flags &= (unsigned char)~BW__FILLING;
        bw__set_lim(w);
        return;
    }
    if (!(w->flags & BW__RESERVED)) return;
    if (w->cap < w->m.g.block) bw__pool_cut(w->pool, w->data, w->m.g.block, w->cap);
    w->m.g.block = w->cap;
    w->flags &= (unsigned char)~BW__RESERVED;
}

/* The address space a move into fresh memory above the threshold asks for
 * (bw__pool_rent_reserve) with a block of cap: 16 x cap, so a first job
 * that reaches its first large block (2 MiB after 128 KiB, growth.c's
 * bw__fresh_stop) grows to 32 MiB by widening its window, with no copy
 * and no remap (past it, a regrow moves the pages). */
#define BW__RESERVE_FACTOR ((size_t)16)

/* A block for the size the pool's rule gave (an idle block of the learned
 * jump first, bw__pool_rent_fill, which says in *filled how far a fresh
 * one is faulted in), or a reservation when it must be fresh memory above
 * the threshold: *reserved says which it got (a reservation that could not
 * be mapped falls back to a plain block). */
static void *bw__contig_rent(bw_pool *p, const bw__size *s, size_t *got, bool *reserved,
                             size_t *filled)
{
    size_t cap = s->size;
    size_t reserve = cap <= BW__MAX_BLOCK / BW__RESERVE_FACTOR ? cap * BW__RESERVE_FACTOR : cap;
    void *b;
    *reserved = false;
    if (!bw__pool_reserves(p) || cap <= bw__pool_threshold(p) || s->warm > cap)
        return bw__pool_rent_fill(p, s, got, filled);
    b = bw__pool_rent_reserve(p, cap, reserve, got);
    *reserved = b != NULL && *got > cap;
    return b;
}

/* The size a contiguous writer moves to for n more bytes (the pool's
 * rule: first block, growth, learned jump). */
static int bw__contig_size(const bw_writer *w, bw_pool *p, size_t n, bw__size *out)
{
    bw__size_req r = {.kind = BW__SIZE_CONTIG,
                      .external = (w->flags & BW__EXTERNAL) != 0,
                      .n = n,
                      .held = w->len - bw__start(w),
                      .cap = w->cap};
    return bw__pool_size(p, &r, out);
}

/* Move a contiguous writer's held bytes into a new block with room for n
 * more, leaving the old storage as it is: *old and *old_cap get the block
 * to give back once nothing reads from it (NULL for none, or for the
 * caller's first buffer, which is not the pool's). */
static int bw__contig_move(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw_pool *p = bw__pool_of(w);
    size_t got, filled = 0, start = bw__start(w), held = w->len - start;
    bw__size cap;
    bool reserved;
    unsigned char *nb;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__contig_size(w, p, n, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    bw__contig_fit(w); /* the old block goes back whole, as its window */
    nb = (unsigned char *)bw__contig_rent(p, &cap, &got, &reserved, &filled);
    if (nb == NULL) return bw__fail(w, BW_ENOMEM);
    if (held != 0) memcpy(nb, w->data + start, held);
    if (w->data != NULL && !(w->flags & BW__EXTERNAL)) {
        *old = w->data;
        *old_cap = bw__contig_block_cap(w);
    }
    /* The window of a move: for held + n after the old capacity; in a
     * reservation, for the size the rule gave. */
    if (reserved) {
        w->flags |= BW__RESERVED;
        bw__contig_take(w, p, got, 0, cap.size, 0);
    } else {
        bw__contig_take(w, p, got, held, n, w->cap);
        if (filled != 0) bw__contig_fill_window(w, p, got, filled);
    }
    w->flags &= (unsigned char)~BW__EXTERNAL;
    w->data = nb;
    w->pos = w->base;
    w->len = held;
    bw__set_lim(w);
    return BW_OK;
}

/* Contiguous: move to a block of bw__contig_size. The old block goes back
 * only after src was copied (src may point into it). Above the threshold
 * the old block is the allocator's own: the pool resizes it in place,
 * remaps it (glibc's mremap) or moves it into a kept warm block instead of
 * copying into fresh memory; not when src lies in the old block (realloc
 * may free it), nor for the caller's buffer, nor on a zeroing pool (realloc
 * would hand the old bytes to the allocator unzeroed). */
static BW__COLD int bw__room_contig(bw_writer *w, size_t n, const void *src)
{
    void *old = NULL;
    size_t old_cap = 0, old_win = w->cap;
    int rc;

    if (w->data != NULL) {
        bw__move_down(w, &src);
        if (w->cap - w->len >= n || bw__contig_widen(w, n)) goto copy;
        bw__contig_fit(w); /* regrown or moved: a block of its window */
        if (!(w->flags & BW__EXTERNAL) && w->cap > bw__pool_threshold(w->pool) &&
            bw__pool_can_regrow(w->pool) && !bw__in_block(w, src, src != NULL ? n : 0)) {
            size_t cap;
            bw__size want;
            unsigned char *nb;
            rc = bw__contig_size(w, w->pool, n, &want);
            if (rc != BW_OK) return bw__fail(w, rc);
            nb = (unsigned char *)bw__pool_regrow(w->pool, w->data, w->cap, w->len, &want, &cap);
            if (nb == NULL) return bw__fail(w, BW_ENOMEM);
            w->data = nb;
            w->cap = cap;
            bw__set_lim(w);
            goto copy;
        }
    }
    rc = bw__contig_move(w, n, &old, &old_cap);
    if (rc != BW_OK) return rc;
copy:
    if (src != NULL) {
        memmove(w->data + w->len, src, n);
        w->len += n;
    }
    if (old != NULL) (void)bw__pool_return_written(w->pool, old, old_cap, old_win);
    return BW_OK;
}

/* Room kept (bw__room_keep): a zeroing pool's window widens in place,
 * which moves no held byte; else a move. */
static int bw__contig_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    if (w->data != NULL && bw__contig_widen(w, n)) return BW_OK;
    return bw__contig_move(w, n, old, old_cap);
}

/* A contiguous writer's first block (it has no storage, so holds nothing):
 * no bytes to move or copy, no old block to give back, just the rent, and
 * src written at the start. The general way: a first block the size rule
 * decides (learning, a bigger first write), a size limit, a shared pool
 * not yet created, or the thread cache's class empty. */
BW__INTERNAL BW__COLD int bw__contig_first_slow(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p;
    size_t got = 0;
    bw__size cap = {0, 0, false, 0};
    unsigned char *b;
    int rc;
    /* bw_reserve comes here first, before its own checks. */
    if (n == 0 && src == NULL) return BW_OK;
    if (BW__UNLIKELY(bw__over(w, n))) return bw__fail(w, BW_ELIMIT);
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    p = bw__pool_of(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    if (n <= bw__pool_first_block(p)) {
        cap.size = bw__pool_first_block(p);
    } else {
        rc = bw__contig_size(w, p, n, &cap);
        if (rc != BW_OK) return bw__fail(w, rc);
    }
    b = (unsigned char *)bw__pool_rent_size(p, &cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = b;
    bw__contig_take(w, p, got, 0, n, 0);
    w->lim = w->cap;
    w->pos = w->base;
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__clamp_lim(w);
    if (src != NULL) {
        memcpy(b, src, n);
        w->len = n;
    }
    return BW_OK;
}

/* bw_release's rest (writer_internal.h, bw__contig_release_rest). */
BW__INTERNAL BW__COLD void bw__contig_release_block(bw_pool *p, unsigned char *b, size_t block,
                                                    size_t cap, size_t len)
{
    if (p != NULL) bw__pool_job_end(p, b, block, cap, len);
}

/* Hand out (bw_detach): the caller's first buffer cannot go to the pool,
 * so a pooled copy, the pool's block for the held bytes (none when nothing
 * is held); else the block itself. */
static int bw__contig_hand_out(bw_writer *w, void **block, size_t *cap)
{
    bw__size_req r = {.kind = BW__SIZE_BLOCK};
    bw__size want;
    size_t l;
    bw_pool *p;
    BW__ASSUME(w != NULL); /* bw_detach checked; bw_len's own check hides it from gcc */
    l = bw_len(w);
    if (!(w->flags & BW__EXTERNAL)) {
        bw__contig_fit(w); /* the caller gets a block of its window */
        return bw__block_hand_out(w, block, cap);
    }
    if (l == 0) return 1;
    p = bw__pool_of(w);
    r.n = l;
    if (p == NULL || bw__pool_size(p, &r, &want) != BW_OK ||
        (*block = bw_pool_rent(p, want.size, cap)) == NULL) {
        bw__fail(w, BW_ENOMEM);
        return 0;
    }
    memcpy(*block, w->data + bw__start(w), l);
    return 1;
}

/* printf's pass two: as bw__printf_grow, and also apart when the output
 * would fill the block growth moves to exactly. */
static int bw__printf_contig(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    bw_pool *p = bw__pool_of(w);
    bw__size cap;
    int fills = 0;
    if (p != NULL && bw__contig_size(w, p, need, &cap) == BW_OK)
        fills = cap.size - (w->len - bw__start(w)) == need;
    return bw__printf_grow(w, need, fmt, ap, fills);
}

/* bw_init's block for an initial capacity, apart: bw_init without one (a
 * small message) is then the stores alone, no stack frame. */
static BW__COLD int bw__init_block(bw_writer *w, size_t initial_capacity)
{
    bw_pool *p = bw__pool_of(w);
    bw__size_req r = {.kind = BW__SIZE_START, .n = initial_capacity};
    bw__size cap;
    size_t got;
    void *b;
    int rc;

    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    /* With BW_POOL_LEARN_SIZE the larger of it and the learned size. */
    rc = bw__pool_size(p, &r, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);
    b = bw_pool_rent(p, cap.size, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    w->data = (unsigned char *)b;
    bw__contig_take(w, p, got, 0, initial_capacity, 0);
    w->lim = w->cap;
    return BW_OK;
}

static const bw__mode_ops bw__contig_ops = {
    .room = bw__room_contig,
    .room_keep = bw__contig_keep,
    .send = bw__keeps_bytes,
    .drop_storage = bw__block_drop_storage,
    .contiguous = bw__block_contiguous,
    .walk = bw__block_piece,
    .pieces = bw__block_pieces,
    .drop_front = bw__block_drop_front,
    .cut = bw__block_cut,
    .overlaps = bw__in_block,
    .patch = bw__block_patch,
    .block_size = bw__contig_block_cap,
    .printf_rest = bw__printf_contig,
    .link = bw__link_copy,
    .take = bw__no_take,
    .room_at_once = bw__at_once,
    .hand_out = bw__contig_hand_out,
    .traits = BW__GROWS,
    .name = "contiguous",
};

int bw_init(bw_writer *w, bw_pool *pool, size_t initial_capacity)
{
    if (bw__init_mode(w, pool, BW__CONTIG) != BW_OK) return BW_EINVAL;
    if (initial_capacity == 0) return BW_OK;
    return bw__init_block(w, initial_capacity);
}

/* Each field stored once (not bw__init_mode's zeros, then the buffer's):
 * a writer over a stack array is a few stores. */
int bw_init_buffer(bw_writer *w, bw_pool *pool, void *buf, size_t size)
{
    if (w == NULL) return BW_EINVAL;
    if (buf == NULL || size == 0) {
        (void)bw__init_mode(w, pool, BW__CONTIG);
        return bw__fail(w, BW_EINVAL);
    }
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->len = 0;
    w->cap = w->lim = size;
    w->pos = w->base = 0;
    w->pool = pool;
    w->mode = BW__CONTIG;
    w->flags = BW__EXTERNAL;
    w->err = BW_OK;
    return BW_OK;
}

int bw_set_first_buffer(bw_writer *w, void *buf, size_t size)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (buf == NULL || size == 0 || !(bw__traits(w) & BW__GROWS) || w->data != NULL)
        return bw__fail(w, BW_EINVAL);
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = size;
    w->pos = w->base;
    w->len = 0;
    w->flags |= BW__EXTERNAL;
    bw__set_lim(w);
    return BW_OK;
}

/*************** End file mode_contig.c *************************************/

/*************** Begin file mode_fixed.c ************************************/
/* mode_fixed.c - the fixed room (bw_init_fixed): the caller's buffer and
 * nothing else; never allocates, BW_EFULL when full. It owns its room,
 * its printf (exact fits on the stack or in place) and its table,
 * bw__fixed_ops. */
/* #include "writer_internal.h": amalgamated above */

/* A fixed writer's printf formats output up to this long on the stack when
 * it does not fit the free space with vsnprintf's NUL (exact fits). */
#define BW__PRINTF_FIXED_STACK 1024

/* Fixed: the held bytes may move down over consumed room; nothing else. */
static BW__COLD int bw__room_fixed(bw_writer *w, size_t n, const void *src)
{
    if (w->cap - (w->len - bw__start(w)) < n) return bw__fail(w, BW_EFULL);
    return bw__block_put(w, src, n);
}

/* The output did not fit in pass one. A fixed writer has only its own
 * buffer and never allocates: output below BW__PRINTF_FIXED_STACK is
 * formatted on the stack and written like any source (moving the held bytes
 * down over consumed room when needed); longer output is formatted in the
 * buffer after the held bytes are moved down, and its arguments must not
 * point into the held bytes (bufwriter.h says so). vsnprintf's NUL needs a
 * byte past the output: when the output fills the buffer exactly, it is
 * formatted one byte early, over the last held byte (kept aside), then
 * moved up into place, so an exact fit succeeds. Only output that fills a
 * buffer holding nothing has no byte before it: that one needs a spare. */
static int bw__printf_fixed(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    char buf[BW__PRINTF_FIXED_STACK];
    size_t room = w->cap - (w->len - bw__start(w));
    unsigned char *at, kept = 0;
    int r, early;
    if (need < sizeof buf) {
        if (need > room) return bw__fail(w, BW_EFULL);
        r = vsnprintf(buf, sizeof buf, fmt, ap);
        return r >= 0 && (size_t)r == need ? bw__put(w, buf, need) : bw__fail(w, BW_EINVAL);
    }
    early = need == room;
    if (need > room || (early && room == w->cap)) return bw__fail(w, BW_EFULL);
    bw__move_down(w, NULL);
    at = w->data + w->len - early;
    if (early) kept = *at;
    r = vsnprintf((char *)at, need + 1, fmt, ap);
    if (early) {
        memmove(at + 1, at, need);
        *at = kept;
    }
    if (r < 0 || (size_t)r != need) return bw__fail(w, BW_EINVAL);
    w->len += need;
    return BW_OK;
}

/* The caller's buffer stays; no block is the pool's. */
static void bw__fixed_keep_buffer(bw_writer *w) { (void)w; }
static size_t bw__fixed_no_block(const bw_writer *w) { return (void)w, 0; }
/* Nothing to hand out: bw_detach refuses a writer without a pool
 * (BW__NO_POOL) before it asks; this says so again. */
static int bw__fixed_no_hand_out(bw_writer *w, void **block, size_t *cap)
{
    (void)block, (void)cap;
    return (void)bw__fail(w, BW_EINVAL), 0;
}

static const bw__mode_ops bw__fixed_ops = {
    .room = bw__room_fixed,
    .room_keep = bw__no_room_keep,
    .send = bw__keeps_bytes,
    .drop_storage = bw__fixed_keep_buffer,
    .contiguous = bw__block_contiguous,
    .walk = bw__block_piece,
    .pieces = bw__block_pieces,
    .drop_front = bw__block_drop_front,
    .cut = bw__block_cut,
    .overlaps = bw__in_block,
    .patch = bw__block_patch,
    .block_size = bw__fixed_no_block,
    .printf_rest = bw__printf_fixed,
    .link = bw__link_copy,
    .take = bw__no_take,
    .room_at_once = bw__at_once,
    .hand_out = bw__fixed_no_hand_out,
    .traits = BW__NO_POOL | BW__BOUNDED,
    .name = "fixed",
};

int bw_init_fixed(bw_writer *w, void *buf, size_t size)
{
    if (bw__init_mode(w, NULL, BW__FIXED) != BW_OK) return BW_EINVAL;
    if (buf == NULL && size != 0) return bw__fail(w, BW_EINVAL);
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = w->lim = size;
    return BW_OK;
}

/*************** End file mode_fixed.c **************************************/

/*************** Begin file mode_seg.c **************************************/
/* mode_seg.c - the segmented room (bw_init_chain): held bytes as pieces
 * over blocks the writer owns and over caller memory linked by reference
 * (bw_append_ref, bw_move). It holds the open piece, every operation on
 * the held bytes and the mode's table, bw__seg_ops. The tree of owned
 * blocks and the chunks of piece records are seg_pieces.c's, the
 * invariants seg_check.c's, what they share seg_internal.h's. */
/* #include "seg_internal.h": amalgamated above */

/* One rule (writer_internal.h, bw__piece): the held bytes are the closed
 * pieces, then the open piece data[open, len) of the current block. A
 * reference or a move closes the open piece and pushes pieces; a full
 * block is closed the same way and a new one becomes current. Nothing
 * moves once written, so every pointer to a held byte stays valid until
 * that byte leaves; a piece leaves by consume (front), truncate (back) or
 * reset, and a block goes back when the last piece in it leaves. */

/* The one way a closed piece joins the records (room reserved): p[0, n)
 * owned as own says (bw__piece: a block, 0 for a reference; a reference
 * with a done is bw__push_ref's), at the place of the open piece, so it
 * ends n bytes after pos + open. The caller then moves the open piece
 * after it: open = len when it was the open piece's bytes, else pos += n
 * (the open piece was empty). A block's count is the caller's (a relinked
 * piece is counted already). Fields stored one by one: a struct copy cost
 * a linked record 5 more instructions (callgrind, profile_driver refs). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline bw__piece *bw__push(bw_writer *w, const unsigned char *p, size_t n, uintptr_t own)
{
    bw__pchunk *t = w->m.c.tail;
    bw__piece *pc;
    if (BW__UNLIKELY(w->m.c.count == t->cap)) t = bw__pc_next_tail(w);
    pc = &BW__PC(t)[w->m.c.count++];
    pc->p = p;
    pc->n = n;
    pc->end = w->pos + w->m.c.open + n;
    pc->own = own;
    return pc;
}

/* A reference pushed (room reserved), its done (a: none when NULL or a's
 * done is NULL) kept in the aside at its record's place. */
static void bw__push_ref(bw_writer *w, const unsigned char *p, size_t n, const bw__aside *a)
{
    bw__piece *pc = bw__push(w, p, n, 0);
    bw__aside *to;
    if (a == NULL || a->done == NULL) return;
    to = BW__PA(w->m.c.tail) + (w->m.c.count - 1);
    *to = *a;
    pc->own = (uintptr_t)to | 1;
    w->flags |= BW__DONES;
}

/* Whether the open piece holds bytes, which closing it pushes. */
static int bw__must_close(const bw_writer *w) { return w->data != NULL && bw__open(w) != w->len; }

/* Close the open piece (room for it reserved): it joins the array, and
 * the open piece starts again, empty, at len. */
static void bw__close_open(bw_writer *w)
{
    bw__blk *b;
    if (!bw__must_close(w)) return;
    b = bw__cur(w);
    b->pieces++;
    (void)bw__push(w, w->data + w->m.c.open, w->len - w->m.c.open, (uintptr_t)b);
    w->m.c.open = w->len;
}

/* b becomes the current block (room for closing the open piece reserved).
 * The old one joins the tree when it holds pieces; else it is returned
 * for the caller to give back (bw_cstr's "" may still be read in it). */
static bw__blk *bw__blk_switch(bw_writer *w, bw__blk *b)
{
    bw__blk *gone = NULL;
    if (w->data != NULL) {
        bw__close_open(w);
        if (bw__cur(w)->pieces != 0) bw__blk_link(w, bw__cur(w));
        else gone = bw__cur(w);
    }
    w->pos = bw_tell(w);
    w->data = b->data;
    w->cap = (size_t)((unsigned char *)b - b->data);
    w->len = w->m.c.open = 0;
    bw__set_lim(w);
    return gone;
}

/* Room: a write fills the rest of the current block first; room alone
 * (src NULL) must be contiguous and leaves that rest. */
static BW__COLD int bw__room_seg(bw_writer *w, size_t n, const void *src)
{
    size_t first = src != NULL && w->data != NULL ? w->cap - w->len : 0;
    bw__blk *b = bw__blk_next(w, n - first), *gone;
    if (b == NULL || bw__pc_reserve(w, (size_t)(bw__must_close(w) || first != 0)) != BW_OK) {
        bw__blk_return(w, b);
        return w->err;
    }
    if (first != 0) {
        memcpy(w->data + w->len, src, first);
        w->len += first;
    }
    gone = bw__blk_switch(w, b);
    if (src != NULL) {
        memcpy(w->data, (const unsigned char *)src + first, n - first);
        w->len = n - first;
    }
    bw__blk_return(w, gone); /* it held nothing, so src was not in it */
    return BW_OK;
}

/* Room kept (bw__room_keep): a new current block; nothing moves. */
static int bw__seg_room_keep(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    bw__blk *b = bw__blk_next(w, n), *gone;
    if (b == NULL || bw__pc_reserve(w, (size_t)bw__must_close(w)) != BW_OK) {
        bw__blk_return(w, b);
        return w->err;
    }
    gone = bw__blk_switch(w, b);
    if (gone != NULL) {
        *old = gone->data;
        *old_cap = bw__blk_size(gone);
    }
    return BW_OK;
}

/* Walk: the closed pieces, then the open one. */
static int bw__seg_walk(const bw_writer *w, bw__cursor *c, const unsigned char **p, size_t *n)
{
    bw__pchunk *ch = c->started ? (bw__pchunk *)(uintptr_t)c->chunk : w->m.c.head;
    size_t i = c->started ? c->i + 1 : w->m.c.first;
    const bw__piece *pc = bw__pc_at(w, &ch, &i);
    int past = c->started && c->chunk == NULL; /* the open piece was walked */
    c->started = 1;
    c->chunk = pc != NULL ? (const void *)ch : NULL;
    c->i = i;
    if (pc != NULL) {
        *p = pc->p;
        *n = pc->n;
        return 1;
    }
    if (past || w->data == NULL) return 0;
    *p = w->data + bw__open(w);
    *n = w->len - bw__open(w);
    return 1;
}

static size_t bw__seg_pieces(const bw_writer *w)
{
    return bw__pc_held(w) + (w->data != NULL && bw__open(w) != w->len);
}

/* Drop from the front (base has moved): whole pieces leave, the first kept
 * one starts later; what is left of n is the open piece's, whose start
 * follows base. All gone: the open piece starts over at data[0]. */
static void bw__seg_drop_front(bw_writer *w, size_t n)
{
    while (n != 0 && !bw__pc_none(w)) {
        bw__piece *pc = &BW__PC(w->m.c.head)[w->m.c.first];
        if (n < pc->n) {
            pc->p += n;
            pc->n -= n;
            return;
        }
        n -= pc->n;
        w->m.c.first++;
        if (w->m.c.head != w->m.c.tail && w->m.c.first == w->m.c.head->cap) bw__pc_head_done(w);
        bw__piece_drop(w, pc);
    }
    if (!bw__pc_none(w)) return;
    bw__pc_restart(w);
    if (w->base == bw_tell(w)) {
        w->pos = w->base;
        w->len = 0;
        bw__set_lim(w);
    }
    w->m.c.open = (size_t)(w->base - w->pos);
}

/* The first closed piece that ends after pos (*i in the chunk returned;
 * past the held ones: the open piece's): O(1) in the open piece (a patch
 * at the end), else back over the chunks from the tail (O(log records)
 * of them, bw__pc_more) and a binary search in one. */
static bw__pchunk *bw__seg_find(const bw_writer *w, uint64_t pos, size_t *i)
{
    bw__pchunk *ch = w->m.c.tail;
    size_t lo, hi = w->m.c.count;
    if (bw__pc_none(w) || BW__PC(ch)[hi - 1].end <= pos) {
        *i = hi;
        return ch;
    }
    while (ch != w->m.c.head && BW__PC(ch->prev)[ch->prev->cap - 1].end > pos) {
        ch = ch->prev;
        hi = ch->cap;
    }
    lo = ch == w->m.c.head ? w->m.c.first : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (BW__PC(ch)[mid].end > pos) hi = mid;
        else lo = mid + 1;
    }
    *i = lo;
    return ch;
}

/* Cut: in the open piece, len moves back; else the piece holding pos is
 * shortened, every later one leaves, and writes go on at the current
 * block's len (from its start when no piece is left in it). */
static void bw__seg_cut(bw_writer *w, uint64_t pos)
{
    size_t i;
    bw__pchunk *ch;
    bw__piece *pc;
    uint64_t keep, open_at = w->pos + bw__open(w);
    if (pos >= open_at || bw__pc_none(w)) {
        w->len = (size_t)(pos - w->pos);
        bw__set_lim(w);
        return;
    }
    ch = bw__seg_find(w, pos, &i);
    pc = &BW__PC(ch)[i];
    keep = ch->seq + i; /* the records before this one stay */
    if (pos > pc->end - pc->n) { /* pos inside it: it stays */
        pc->n -= (size_t)(pc->end - pos);
        pc->end = pos;
        keep++;
    }
    while (w->m.c.tail->seq + w->m.c.count > keep) bw__pc_pop(w);
    bw__pc_restart(w);
    if (w->data != NULL && bw__cur(w)->pieces == 0) w->len = 0;
    w->pos = pos - w->len;
    w->m.c.open = w->len;
    bw__set_lim(w);
}

/* Reset: every piece leaves (a reference's done is called: the records
 * are walked only when one was linked with a done, BW__DONES), every
 * block and every chunk of records go back; no block unlinked one by
 * one. */
static void bw__seg_drop_storage(bw_writer *w)
{
    bw__pchunk *ch = w->m.c.head, *nx;
    size_t i = w->m.c.first;
    const bw__piece *pc;
    const bw__aside *a;
    bw__blk *b;
    for (; (w->flags & BW__DONES) && (pc = bw__pc_at(w, &ch, &i)) != NULL; i++)
        if ((a = bw__pc_aside(pc)) != NULL) a->done(a->ctx, a->orig, a->orig_n);
    w->flags &= (unsigned char)~BW__DONES;
    while ((b = bw__blk_pop(&w->m.c.blocks)) != NULL) bw__blk_return(w, b);
    if (w->data != NULL) bw__blk_return(w, bw__cur(w));
    for (ch = w->m.c.head; ch != NULL; ch = nx) {
        nx = ch->next;
        (void)bw_pool_return(w->pool, ch, ch->bytes);
    }
    w->m.c.head = w->m.c.tail = NULL;
    w->m.c.first = w->m.c.count = 0;
    w->m.c.blocks = NULL;
    w->m.c.open = 0;
    w->data = NULL;
    w->cap = w->len = w->lim = 0; /* holding nothing, at base */
    w->pos = w->base;
}

/* Make contiguous: the held bytes as the open piece of one block with
 * extra free bytes after them (already so: as they are); else copied into
 * a new block, every piece leaving. */
static unsigned char *bw__seg_contiguous(bw_writer *w, size_t extra)
{
    size_t held, off = 0, k;
    bw__size_req r = {.kind = BW__SIZE_BLOCK};
    bw__cursor c = {0, 0, NULL};
    const unsigned char *src;
    bw__blk *b;
    BW__ASSUME(w != NULL); /* every caller checked; bw_len's own check hides it from gcc */
    if (bw__pc_none(w) && w->data != NULL && w->cap - w->len >= extra)
        return w->data + bw__open(w);
    held = bw_len(w);
    if (held > BW__MAX_BLOCK - BW__SEG_HDR - extra) {
        bw__fail(w, BW_EOVERFLOW);
        return NULL;
    }
    r.n = held + extra + BW__SEG_HDR;
    b = bw__blk_rent(w, &r);
    if (b == NULL) return NULL;
    while (bw__seg_walk(w, &c, &src, &k)) {
        if (k != 0) memcpy(b->data + off, src, k);
        off += k;
    }
    bw__seg_drop_front(w, held);
    if (w->data != NULL) bw__blk_return(w, bw__cur(w));
    w->data = b->data;
    w->cap = (size_t)((unsigned char *)b - b->data);
    w->pos = w->base;
    w->len = held;
    w->m.c.open = 0;
    bw__set_lim(w);
    return b->data;
}

/* Overlaps: the writer's own blocks (references are the caller's): the
 * current block, then no when outside the tree's range (caller memory
 * mostly is: static data, the stack, another mapping), else in
 * O(log blocks): blocks do not overlap, so of those in the tree only the
 * last that starts below the end of [p, p + n) can reach into it. */
static int bw__seg_overlaps(const bw_writer *w, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, e = a + n;
    const bw__blk *b = w->m.c.blocks, *below = NULL;
    if (n == 0) return 0;
    if (bw__in_block(w, p, n)) return 1;
    if (b == NULL || e <= w->m.c.head->lo || a >= w->m.c.head->hi) return 0; /* the range */
    while (b != NULL) {
        if (bw__key(b) < e) {
            below = b;
            b = b->right;
        } else {
            b = b->left;
        }
    }
    return below != NULL && a < (uintptr_t)below + BW__SEG_HDR; /* the trailer ends it */
}

/* Block size: the current block's, its trailer included, when it holds
 * every held byte. */
static size_t bw__seg_block_size(const bw_writer *w)
{
    return bw__pc_none(w) ? w->cap + BW__SEG_HDR : 0;
}

/* Closed piece pc's part of [pos, end) (NULL: the open piece's): where
 * it starts in memory, and its length in *k (0: none). */
static unsigned char *bw__seg_span(const bw_writer *w, const bw__piece *pc, uint64_t pos,
                                     uint64_t end, size_t *k)
{
    const unsigned char *p;
    uint64_t from, to;
    if (pc != NULL) {
        to = pc->end;
        from = to - pc->n;
        p = pc->p;
    } else if (w->data == NULL) {
        *k = 0;
        return NULL;
    } else {
        from = w->pos + bw__open(w);
        to = bw_tell(w);
        p = w->data + bw__open(w);
    }
    if (from < pos) {
        p += pos - from;
        from = pos;
    }
    if (to > end) to = end;
    *k = to > from ? (size_t)(to - from) : 0;
    return (unsigned char *)(uintptr_t)p;
}

/* Own: the references among [pos, end) from record (ch, i) on are copied
 * into one new block (a patch never writes the caller's memory); their
 * done is called. */
static int bw__seg_own(bw_writer *w, bw__pchunk *ch, size_t i, uint64_t end, size_t bytes)
{
    bw__size_req r = {.kind = BW__SIZE_BLOCK, .n = bytes + BW__SEG_HDR};
    bw__blk *b = bw__blk_rent(w, &r);
    bw__piece *pc;
    size_t off = 0;
    if (b == NULL) return BW_ENOMEM;
    for (; (pc = bw__pc_at(w, &ch, &i)) != NULL && pc->end - pc->n < end; i++) {
        if (bw__pc_blk(pc) != NULL) continue;
        memcpy(b->data + off, pc->p, pc->n);
        bw__piece_drop(w, pc);
        pc->p = b->data + off;
        pc->own = (uintptr_t)b;
        b->pieces++;
        off += pc->n;
    }
    bw__blk_link(w, b);
    return BW_OK;
}

/* Not a piece: where a loop over the records starts. */
static const bw__piece bw__piece_none = {NULL, 0, 0, 0};

/* Patch: O(log pieces) to find the first piece, then each piece's part. A
 * source among the writer's blocks needs no copy unless it overlaps two
 * of the parts written (a part that overlaps it is written last, with
 * memmove); a source in a reference that own gives back is copied first.
 * Memory only for references (own) and for such a source. */
static int bw__seg_patch(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    unsigned char buf[64], *last = NULL, *d;
    const unsigned char *in = (const unsigned char *)src;
    uintptr_t a = (uintptr_t)src, e = a + n;
    void *tmp = NULL;
    size_t i0, i, k, refs = 0, last_off = 0, last_k = 0, tmp_cap = 0;
    bw__pchunk *ch0 = bw__seg_find(w, pos, &i0), *ch = ch0;
    const bw__piece *pc = &bw__piece_none;
    uint64_t end = pos + n;
    int in_ref = 0, hits = 0, rc = BW_OK;
    for (i = i0; pc != NULL; i++) { /* the open piece (NULL) last */
        pc = bw__pc_at(w, &ch, &i);
        d = bw__seg_span(w, pc, pos, end, &k);
        if (k == 0) break;
        if (pc != NULL && bw__pc_blk(pc) == NULL) {
            refs += pc->n;
            in_ref |= e > (uintptr_t)pc->p && a < (uintptr_t)pc->p + pc->n;
        } else if (e > (uintptr_t)d && a < (uintptr_t)d + k) {
            hits++;
        }
    }
    if (in_ref || hits > 1) {
        in = (const unsigned char *)bw__stable_copy(w, src, n, buf, sizeof buf, &tmp, &tmp_cap);
        if (in == NULL) return BW_ENOMEM;
    }
    if (refs != 0) rc = bw__seg_own(w, ch0, i0, end, refs);
    for (ch = ch0, i = i0, pc = &bw__piece_none; rc == BW_OK && pc != NULL; i++) {
        pc = bw__pc_at(w, &ch, &i);
        d = bw__seg_span(w, pc, pos, end, &k);
        if (k == 0) break;
        if (in == src && e > (uintptr_t)d && a < (uintptr_t)d + k) {
            last = d; /* over the source: written last, when it has been read */
            last_k = k;
            last_off = (size_t)(pos - end + n);
        } else {
            memcpy(d, in + (pos - end + n), k);
        }
        pos += k;
    }
    if (last != NULL) memmove(last, in + last_off, last_k);
    if (tmp != NULL) (void)bw_pool_return(w->pool, tmp, tmp_cap);
    return rc;
}

/* Link: O(1) amortized; the bytes are copied instead when they are empty
 * or lie in a block of the writer's (consume or truncate would give it
 * back under the reference). Caller memory is linked as often as given.
 * The general way, which bw__seg_link takes when its quick one cannot:
 * and always for a reference with a done, whose aside it writes. */
static BW__COLD int bw__seg_link_slow(bw_writer *w, const void *data, size_t n, bw_done_fn done,
                                      void *ctx)
{
    bw__aside a;
    if (n > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    if (n == 0 || bw__seg_overlaps(w, data, n)) return bw__link_copy(w, data, n, done, ctx);
    if (bw__pc_reserve(w, 2) != BW_OK) return w->err;
    bw__close_open(w);
    a.done = done;
    a.ctx = ctx;
    a.orig = data;
    a.orig_n = n;
    bw__push_ref(w, (const unsigned char *)data, n, &a);
    w->pos += n; /* the open piece starts after it, in the same block */
    /* lim is cap (no error: the caller checked) unless a size limit is
     * set, which is nearer now */
    if (BW__UNLIKELY(w->flags & BW__LIMITED)) bw__set_lim(w);
    return BW_OK;
}

/* Link, the usual case: no done, no size limit, caller memory outside the
 * current block and the tree's range, room in the tail for the two
 * records (the open piece closed, the reference), written in place with
 * no call. A linked record cost 320 instructions at 1,000 records in 0.4,
 * 165 with the chunks and bw__seg_link_slow's way, 118 with 64-byte
 * records written here (callgrind, profile_driver refs 1000 256 linked,
 * the 10-byte header's write included); what it costs now is in
 * bench/BENCHMARKS.md. */
static int bw__seg_link(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    bw__pchunk *t = w->m.c.tail;
    uintptr_t a = (uintptr_t)data, d = (uintptr_t)w->data;
    bw__piece *pc;
    uint64_t at;
    size_t k;
    if (BW__UNLIKELY(done != NULL)) return bw__seg_link_slow(w, data, n, done, ctx);
    if (BW__UNLIKELY(n - 1 >= BW__MAX_BLOCK || t == NULL || w->m.c.count + 2 > t->cap ||
                     (a + n > d && a < d + w->cap) || /* no block: cap 0 */
                     (w->m.c.blocks != NULL && a + n > w->m.c.head->lo &&
                      a < w->m.c.head->hi) ||
                     (w->flags & BW__LIMITED)))
        return bw__seg_link_slow(w, data, n, NULL, NULL);
    k = w->m.c.count;
    pc = BW__PC(t) + k;
    at = w->pos + w->len;
    /* the open piece starts after it, in the same block (stored first:
     * gcc then saves one register fewer, 2 instructions a link) */
    w->pos += n;
    if (w->m.c.open != w->len) { /* the open piece (so a current block) closes */
        bw__blk *cur = bw__cur(w);
        cur->pieces++;
        pc->p = w->data + w->m.c.open;
        pc->n = w->len - w->m.c.open;
        pc->end = at;
        pc->own = (uintptr_t)cur;
        w->m.c.open = w->len;
        pc++;
        k++;
    }
    pc->p = (const unsigned char *)data;
    pc->n = n;
    pc->end = at + n;
    pc->own = 0;
    w->m.c.count = (uint32_t)(k + 1);
    return BW_OK;
}

/* A moved piece in a block of src's is copied rather than relinked when
 * that block is more than this many times its bytes, the bound a writer
 * keeps to (no block larger than 16 x its bytes, pool/growth.c): a 16-byte
 * header written in a writer of its own would otherwise bring its 4 KiB
 * block, and 8,000 of them 32 MiB for 128 KB. The copy is at most 1/16 of
 * a block that goes back to the pool at once, and needs no memory. */
#define BW__MOVE_COPY ((size_t)16)

/* Whether take copies src's piece pc into dst's current block: it lies in
 * a block of src's more than BW__MOVE_COPY times its bytes, and fits. */
static int bw__take_copies(const bw_writer *dst, const bw__piece *pc)
{
    const bw__blk *b = bw__pc_blk(pc);
    return b != NULL && dst->data != NULL && dst->cap - dst->len >= pc->n &&
           bw__blk_size(b) / BW__MOVE_COPY > pc->n;
}

/* Src's closed piece `from`, after dst's bytes: copied onto dst's open
 * piece (bw__take_copies; its block's count drops, and a block left with
 * none goes back with src's), or relinked after dst's open piece, closed. */
static void bw__take_piece(bw_writer *dst, bw__piece *from)
{
    if (bw__take_copies(dst, from)) {
        memcpy(dst->data + dst->len, from->p, from->n);
        dst->len += from->n;
        bw__pc_blk(from)->pieces--;
        return;
    }
    bw__close_open(dst);
    if (bw__pc_blk(from) != NULL) (void)bw__push(dst, from->p, from->n, from->own);
    else bw__push_ref(dst, from->p, from->n, bw__pc_aside(from)); /* its aside copied */
    dst->pos += from->n;
}

/* Src's open piece (not empty; cur is src's current block), after dst's
 * bytes: copied as above; or dst takes cur as its current block when cur
 * has more free room, so that the small pieces of later moves have
 * somewhere to go (a writer that only moves and links has no block of its
 * own): 1, cur is dst's now; or relinked, counted in cur. */
static int bw__take_open(bw_writer *dst, bw_writer *src, bw__blk *cur)
{
    bw__piece last = {NULL, 0, 0, 0};
    last.p = src->data + src->m.c.open;
    last.n = src->len - src->m.c.open;
    last.own = (uintptr_t)cur;
    if (bw__take_copies(dst, &last)) {
        memcpy(dst->data + dst->len, last.p, last.n);
        dst->len += last.n;
        return 0;
    }
    bw__close_open(dst);
    if (dst->data == NULL || src->cap - src->len > dst->cap - dst->len) {
        if (dst->data != NULL) {
            if (bw__cur(dst)->pieces != 0) bw__blk_link(dst, bw__cur(dst));
            else bw__blk_return(dst, bw__cur(dst));
        }
        dst->pos = bw_tell(dst) - src->m.c.open; /* data[open] is at dst's tell */
        dst->data = src->data;
        dst->cap = src->cap;
        dst->len = src->len;
        dst->m.c.open = src->m.c.open;
        return 1;
    }
    cur->pieces++;
    (void)bw__push(dst, last.p, last.n, (uintptr_t)cur);
    dst->pos += last.n;
    return 0;
}

/* After a take: src's blocks that still hold pieces are dst's (cur: src's
 * current block, unless dst took it), the others go back; src is left
 * empty at its tell, its chunks of records kept. */
static void bw__take_blocks(bw_writer *dst, bw_writer *src, bw__blk *cur)
{
    bw__blk *b;
    while ((b = bw__blk_pop(&src->m.c.blocks)) != NULL) {
        if (b->pieces != 0) bw__blk_link(dst, b);
        else bw__blk_return(src, b);
    }
    if (cur != NULL) {
        if (cur->pieces != 0) bw__blk_link(dst, cur);
        else bw__blk_return(src, cur);
    }
    src->m.c.tail = src->m.c.head; /* its chunks kept, all spares */
    src->m.c.first = src->m.c.count = 0;
    src->pos = src->base = bw_tell(src);
    src->data = NULL;
    src->cap = src->len = src->m.c.open = 0;
    src->flags &= (unsigned char)~BW__CSTR;
    bw__set_lim(src);
}

/* Take (bw_move) between segmented writers of one pool: src's pieces
 * follow dst's in order, as closed pieces (their positions moved) whose
 * blocks join dst's tree, but for a small piece of src's own, whose bytes
 * go on dst's open piece (bw__take_copies), as a write would put them.
 * Nothing is rented but room for the records: one per src piece, and one
 * for closing dst's open piece before each piece relinked after bytes
 * copied (at most one more than src's pieces in all). 1 done, 0 to have
 * the bytes copied, or the recorded error. */
static int bw__seg_take(bw_writer *dst, bw_writer *src)
{
    size_t i;
    bw__blk *cur = src->data != NULL ? bw__cur(src) : NULL;
    bw__pchunk *ch = src->m.c.head;
    bw__piece *pc;
    if (!(bw__traits(src) & BW__LINKS) || bw_writer_pool(dst) != bw_writer_pool(src)) return 0;
    if (bw__pc_reserve(dst, bw__pc_held(src) + 2) != BW_OK) return dst->err;
    for (i = src->m.c.first; (pc = bw__pc_at(src, &ch, &i)) != NULL; i++) bw__take_piece(dst, pc);
    if (cur != NULL && src->m.c.open != src->len && bw__take_open(dst, src, cur)) cur = NULL;
    bw__take_blocks(dst, src, cur);
    dst->pool = bw__pool_of(src);
    dst->flags &= (unsigned char)~BW__CSTR;
    dst->flags |= (unsigned char)(src->flags & BW__DONES);
    src->flags &= (unsigned char)~BW__DONES;
    bw__set_lim(dst);
    return 1;
}

static int bw__printf_seg(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    return bw__printf_grow(w, need, fmt, ap, 0);
}

#ifdef BW__SEG_CHECKS
/* The operations that change the state, each followed by the check
 * (seg_check.c). */
static int bw__room_seg_chk(bw_writer *w, size_t n, const void *src)
{
    int rc = bw__room_seg(w, n, src);
    bw__seg_check(w);
    return rc;
}
static int bw__seg_room_keep_chk(bw_writer *w, size_t n, void **old, size_t *old_cap)
{
    int rc = bw__seg_room_keep(w, n, old, old_cap);
    bw__seg_check(w);
    return rc;
}
static void bw__seg_drop_storage_chk(bw_writer *w)
{
    bw__seg_drop_storage(w);
    bw__seg_check(w);
}
static unsigned char *bw__seg_contiguous_chk(bw_writer *w, size_t extra)
{
    unsigned char *p = bw__seg_contiguous(w, extra);
    bw__seg_check(w);
    return p;
}
static void bw__seg_drop_front_chk(bw_writer *w, size_t n)
{
    bw__seg_drop_front(w, n);
    bw__seg_check(w);
}
static void bw__seg_cut_chk(bw_writer *w, uint64_t pos)
{
    bw__seg_cut(w, pos);
    bw__seg_check(w);
}
static int bw__seg_patch_chk(bw_writer *w, uint64_t pos, const void *src, size_t n)
{
    int rc = bw__seg_patch(w, pos, src, n);
    bw__seg_check(w);
    return rc;
}
static int bw__printf_seg_chk(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    int rc = bw__printf_seg(w, need, fmt, ap);
    bw__seg_check(w);
    return rc;
}
static int bw__seg_link_chk(bw_writer *w, const void *data, size_t n, bw_done_fn done, void *ctx)
{
    int rc = bw__seg_link(w, data, n, done, ctx);
    bw__seg_check(w);
    return rc;
}
static int bw__seg_take_chk(bw_writer *dst, bw_writer *src)
{
    int rc = bw__seg_take(dst, src);
    if (bw__traits(src) & BW__LINKS) bw__seg_check(src); /* src segmented too */
    bw__seg_check(dst);
    return rc;
}
#  define BW__SEG_OP(f) f##_chk
#else
#  define BW__SEG_OP(f) f
#endif

static const bw__mode_ops bw__seg_ops = {
    .room = BW__SEG_OP(bw__room_seg),
    .room_keep = BW__SEG_OP(bw__seg_room_keep),
    .send = bw__keeps_bytes,
    .drop_storage = BW__SEG_OP(bw__seg_drop_storage),
    .contiguous = BW__SEG_OP(bw__seg_contiguous),
    .walk = bw__seg_walk,
    .pieces = bw__seg_pieces,
    .drop_front = BW__SEG_OP(bw__seg_drop_front),
    .cut = BW__SEG_OP(bw__seg_cut),
    .overlaps = bw__seg_overlaps,
    .patch = BW__SEG_OP(bw__seg_patch),
    .block_size = bw__seg_block_size,
    .printf_rest = BW__SEG_OP(bw__printf_seg),
    .link = BW__SEG_OP(bw__seg_link),
    .take = BW__SEG_OP(bw__seg_take),
    .room_at_once = bw__at_once,
    .hand_out = bw__block_hand_out,
    .traits = BW__LINKS,
    .name = "segmented",
};

int bw_init_chain(bw_writer *w, bw_pool *pool)
{
    if (bw__init_mode(w, pool, BW__SEG) != BW_OK) return BW_EINVAL;
    w->m.c.head = w->m.c.tail = NULL;
    w->m.c.first = w->m.c.count = 0;
    w->m.c.blocks = NULL;
    w->m.c.open = 0;
    w->blk_log2 = 0; /* the pool's chain_block_size */
    return BW_OK;
}

/* The sizes bw_set_block_size takes, as log2: 64 B to 1 GiB. */
#define BW__BLK_MIN_LOG2 6
#define BW__BLK_MAX_LOG2 30

int bw_set_block_size(bw_writer *w, size_t size)
{
    unsigned k = BW__BLK_MIN_LOG2;
    if (w == NULL || !(bw__traits(w) & BW__LINKS)) return BW_EINVAL; /* not segmented */
    if (size == 0) {
        w->blk_log2 = 0;
        return BW_OK;
    }
    if (size > ((size_t)1 << BW__BLK_MAX_LOG2)) return BW_EINVAL;
    while (((size_t)1 << k) < size) k++; /* rounded up to a power of two */
    w->blk_log2 = (unsigned char)k;
    return BW_OK;
}

/*************** End file mode_seg.c ****************************************/

/*************** Begin file mode_stream.c ***********************************/
/* mode_stream.c - the streaming room (bw_init_sink, bw_init_fd): one
 * buffer whose bytes go to a sink or a file descriptor when it fills or on
 * bw_flush; an enlarged buffer shrinks back once sent. It owns the one
 * send loop over the sink contract (bw_write_fd's too), its room, its
 * printf (longer output through a FILE straight to the sink) and its
 * table, bw__stream_ops. */
/* #include "writer_internal.h": amalgamated above */

#include <errno.h>
#include <limits.h>
#include <stdio.h>

/* A streaming writer's buffer. */
#define BW__STREAM_DEFAULT ((size_t)64 << 10)

/* The one send loop (a streaming writer's sends, bw_write_fd's): hands
 * iov[0, cnt) to the sink (one piece a call) or, with sink NULL, to fd
 * (writev's batch; bw__fd_send never raises SIGPIPE), until all is taken or
 * it fails, by the sink contract: 1..n taken, -1 with EINTR retried, -1
 * failed, anything else (0, more than offered) broken, with errno EIO, so
 * that it never loops. *sent gets what was taken; iov is advanced over it. */
BW__INTERNAL int bw__send_iov(int fd, bw_sink_fn sink, void *ctx, struct iovec *iov, size_t cnt,
                              size_t *sent)
{
    size_t done = 0, left = 0, i;
    for (i = 0; i < cnt; i++) left += iov[i].iov_len;
    while (left != 0) {
        size_t most = left;
        ptrdiff_t r;
        while (iov->iov_len == 0) {
            iov++;
            cnt--;
        }
        if (sink != NULL) {
            most = iov->iov_len;
            r = sink(ctx, iov->iov_base, most);
        } else {
            r = bw__fd_send(fd, iov, cnt < INT_MAX ? (int)cnt : INT_MAX);
        }
        if (r == -1 && errno == EINTR) continue;
        if (r <= 0 || (size_t)r > most) {
            if (r != -1) errno = EIO;
            *sent = done;
            return BW_EIO;
        }
        done += (size_t)r;
        left -= (size_t)r;
        for (i = (size_t)r; i != 0 && i >= iov->iov_len; iov++, cnt--) i -= iov->iov_len;
        if (i != 0) { /* into the middle of a piece: never past the last */
            iov->iov_base = (unsigned char *)iov->iov_base + i;
            iov->iov_len -= i;
        }
    }
    *sent = done;
    return BW_OK;
}

/* Streaming: p[0, n) to the writer's sink or fd; *sent gets what was taken. */
static int bw__send_bytes(bw_writer *w, const unsigned char *p, size_t n, size_t *sent)
{
    struct iovec one;
    one.iov_base = (void *)(uintptr_t)p;
    one.iov_len = n;
    *sent = 0;
    if (w->flags & BW__FD) return bw__send_iov(w->m.s.fd, NULL, NULL, &one, 1, sent);
    if (w->m.s.sink == NULL) return BW_EINVAL; /* a streaming writer whose init failed */
    return bw__send_iov(-1, w->m.s.sink, w->m.s.ctx, &one, 1, sent);
}

/* Send every held byte; on failure the rest stays held and BW_EIO is
 * recorded. Afterwards the buffer is empty and restarts at its beginning. */
static int bw__send_held(bw_writer *w)
{
    size_t start = bw__start(w), sent;
    int rc = bw__send_bytes(w, w->data + start, w->len - start, &sent);
    w->base += sent;
    if (rc != BW_OK) return bw__fail(w, rc);
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* A buffer enlarged for a long reserve or span goes back once its bytes
 * are sent (nothing held then), unless src points into it: the next write
 * rents the configured size, so memory stays what was configured. */
static void bw__stream_shrink(bw_writer *w, const void *src, size_t n)
{
    if (w->cap <= w->m.s.size || w->len != bw__start(w) || bw__in_block(w, src, n)) return;
    (void)bw_pool_return(w->pool, w->data, w->cap);
    w->data = NULL;
    w->cap = 0;
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
}

/* The pool's buffer for n bytes (the growth rule's size). */
static int bw__stream_size(bw_pool *p, size_t n, size_t *out)
{
    bw__size_req r = {.kind = BW__SIZE_BLOCK, .n = n};
    bw__size s;
    int rc = bw__pool_size(p, &r, &s);
    *out = s.size;
    return rc;
}

/* The buffer, rented at the first write, or replaced by a bigger block when
 * a reserve or span needs more than it has (nothing held then). */
static int bw__stream_buffer(bw_writer *w, size_t n)
{
    bw_pool *p = bw__pool_of(w);
    size_t cap = w->m.s.size, got;
    unsigned char *b;
    int rc;
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    if (n > cap) {
        rc = bw__stream_size(p, n, &cap);
        if (rc != BW_OK) return bw__fail(w, rc);
    }
    b = (unsigned char *)bw_pool_rent(p, cap, &got);
    if (b == NULL) return bw__fail(w, BW_ENOMEM);
    if (w->data != NULL) (void)bw_pool_return(p, w->data, w->cap);
    w->data = b;
    w->cap = got;
    w->pos = w->base;
    w->len = 0;
    bw__set_lim(w);
    return BW_OK;
}

/* Send p[0, n) straight from memory that is not the buffer (nothing is
 * held then), the positions following what was taken; a failure is
 * recorded. */
static int bw__send_past(bw_writer *w, const void *p, size_t n)
{
    size_t sent;
    int rc = bw__send_bytes(w, (const unsigned char *)p, n, &sent);
    w->pos += sent;
    w->base += sent;
    if (rc != BW_OK) return bw__fail(w, rc);
    bw__set_lim(w);
    return BW_OK;
}

static BW__COLD int bw__room_stream(bw_writer *w, size_t n, const void *src)
{
    int rc;
    if (w->data == NULL && n <= w->m.s.size) {
        rc = bw__stream_buffer(w, n);
        if (rc != BW_OK) return rc;
    }
    if (w->data != NULL && w->cap - (w->len - bw__start(w)) < n) {
        /* It does not fit even over consumed room: send what is held. A
         * source among the held bytes stays intact until copied below. */
        rc = bw__send_held(w);
        if (rc != BW_OK) return rc;
        if (n <= w->m.s.size) {
            bw__stream_shrink(w, src, src != NULL ? n : 0);
            if (w->data == NULL && (rc = bw__stream_buffer(w, n)) != BW_OK) return rc;
        }
    }
    if (src != NULL && (w->data == NULL || n > w->cap)) {
        /* Larger than the buffer: straight from the caller's memory (it
         * cannot be among the held bytes, which fit the buffer). */
        return bw__send_past(w, src, n);
    }
    if (w->data == NULL || n > w->cap) {
        rc = bw__stream_buffer(w, n);
        if (rc != BW_OK) return rc;
    }
    return bw__block_put(w, src, n);
}

#ifdef BW_HAVE_FILE_ADAPTER
/* bw__vprintf_sent's FILE buffer, on the stack: the size of the pieces
 * printf output longer than a streaming buffer goes to the sink in. */
#define BW__SENT_FILE_BUF 4096

/* bw__vprintf_sent's FILE: the writer, and the errno its sink failed with
 * (the FILE's own calls overwrite errno after it). */
typedef struct bw__sent {
    const bw__file_ops *ops; /* first: the platform's FILE calls it */
    bw_writer *w;
    int err_no;
} bw__sent;

static int bw__sent_piece(void *cookie, const char *buf, size_t n)
{
    bw__sent *st = (bw__sent *)cookie;
    if (st->w->err == BW_OK && bw__send_past(st->w, buf, n) == BW_OK) return 1;
    if (st->err_no == 0) st->err_no = errno;
    errno = EIO;
    return 0;
}

/* What the FILE behind bw__vprintf_sent hands over goes to the sink at
 * once, never into the buffer. */
static const bw__file_ops bw__sent_calls = {bw__sent_piece, NULL};
/* The platform reads the cookie as a pointer to its first member. */
typedef char bw__sent_ops_first[offsetof(bw__sent, ops) == 0 ? 1 : -1];

/* printf output longer than a streaming writer's buffer: the held bytes
 * are sent, then the output goes to the sink in the pieces the FILE hands
 * over (its buffer is on the stack), so memory stays bounded whatever the
 * output's length, and the buffer, where arguments may point, is neither
 * written nor reused. On a failure the bytes sent are a prefix (bw_tell
 * says how many). */
static int bw__vprintf_sent(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
    char buf[BW__SENT_FILE_BUF];
    bw__sent st;
    FILE *f;
    int r, rc = bw_len(w) != 0 ? bw__send_held(w) : BW_OK;
    if (rc != BW_OK) return rc;
    st.ops = &bw__sent_calls;
    st.w = w;
    st.err_no = 0;
    f = bw__file_make(&st);
    if (f == NULL) return bw__fail(w, BW_ENOMEM);
    (void)setvbuf(f, buf, _IOFBF, sizeof buf);
    r = vfprintf(f, fmt, ap);
    if (fclose(f) != 0 && w->err == BW_OK) (void)bw__fail(w, BW_EIO);
    if (w->err != BW_OK) {
        if (st.err_no != 0) errno = st.err_no; /* the sink's, as for any write */
        return w->err;
    }
    return r >= 0 && (size_t)r == need ? BW_OK : bw__fail(w, BW_EINVAL);
}
#endif /* BW_HAVE_FILE_ADAPTER */

/* Streaming: output up to the buffer size is formatted apart into a block
 * of that size at most and written all or nothing; longer output goes
 * straight to the sink through a FILE (bw__vprintf_sent, above) after the
 * held bytes, so memory stays bounded and the buffer (where arguments may
 * point) is not touched. Without the FILE adapter it too is formatted
 * apart. */
static int bw__printf_stream(bw_writer *w, size_t need, const char *fmt, va_list ap)
{
#ifdef BW_HAVE_FILE_ADAPTER
    if (need > w->m.s.size) return bw__vprintf_sent(w, need, fmt, ap);
#endif
    return bw__printf_apart(w, need, fmt, ap);
}

/* Send: every held byte goes to the sink; an enlarged buffer goes back. */
static int bw__stream_send(bw_writer *w)
{
    if (bw_len(w) != 0 && bw__send_held(w) != BW_OK) return w->err;
    if (w->data != NULL) bw__stream_shrink(w, NULL, 0);
    return BW_OK;
}

/* Make contiguous: the held bytes move down; never sends or grows here
 * (BW_EFULL when extra does not fit the buffer). */
static unsigned char *bw__stream_contiguous(bw_writer *w, size_t extra)
{
    if (w->cap - w->len < extra) {
        if (w->cap - bw_len(w) < extra) {
            bw__fail(w, BW_EFULL);
            return NULL;
        }
        bw__move_down(w, NULL);
    }
    return w->data + bw__start(w);
}

/* The streaming modes' common part: the buffer size, the pool's for
 * buffer_size. */
static int bw__init_stream(bw_writer *w, bw_pool *pool, size_t buffer_size)
{
    bw_pool *p;
    int rc;
    if (bw__init_mode(w, pool, BW__STREAM) != BW_OK) return BW_EINVAL;
    w->m.s.sink = NULL;
    w->m.s.ctx = NULL;
    w->m.s.size = 0;
    w->m.s.fd = -1;
    if (buffer_size == 0) buffer_size = BW__STREAM_DEFAULT;
    if (buffer_size > BW__MAX_BLOCK) return bw__fail(w, BW_EOVERFLOW);
    p = bw__pool_of(w);
    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    rc = bw__stream_size(p, buffer_size, &w->m.s.size);
    return rc != BW_OK ? bw__fail(w, rc) : BW_OK;
}

/* One room takes at most the buffer without sending part of it. */
static int bw__stream_at_once(const bw_writer *w, size_t n) { return n <= w->m.s.size; }

static const bw__mode_ops bw__stream_ops = {
    .room = bw__room_stream,
    .room_keep = bw__no_room_keep,
    .send = bw__stream_send,
    .drop_storage = bw__block_drop_storage,
    .contiguous = bw__stream_contiguous,
    .walk = bw__block_piece,
    .pieces = bw__block_pieces,
    .drop_front = bw__block_drop_front,
    .cut = bw__block_cut,
    .overlaps = bw__in_block,
    .patch = bw__block_patch,
    .block_size = bw__block_cap,
    .printf_rest = bw__printf_stream,
    .link = bw__link_copy,
    .take = bw__no_take,
    .room_at_once = bw__stream_at_once,
    .hand_out = bw__block_hand_out,
    .traits = BW__SENDS | BW__BOUNDED,
    .name = "streaming",
};

int bw_init_sink(bw_writer *w, bw_pool *pool, size_t buffer_size, bw_sink_fn sink, void *ctx)
{
    int rc = bw__init_stream(w, pool, buffer_size);
    if (w == NULL) return rc;
    w->m.s.sink = sink;
    w->m.s.ctx = ctx;
    if (rc == BW_OK && sink == NULL) rc = bw__fail(w, BW_EINVAL);
    return rc;
}

int bw_init_fd(bw_writer *w, bw_pool *pool, size_t buffer_size, int fd)
{
    int rc = bw__init_stream(w, pool, buffer_size);
    if (w == NULL) return rc;
    w->flags = BW__FD;
    w->m.s.fd = fd;
    if (rc == BW_OK && fd < 0) rc = bw__fail(w, BW_EINVAL);
    return rc;
}

/*************** End file mode_stream.c *************************************/

/*************** Begin file seg_check.c *************************************/
/* seg_check.c - the segmented mode's inspection room: bw__seg_check, every
 * invariant of a segmented writer's pieces, owned blocks, counts and
 * positions, in BW_DEBUG builds and the fuzzer's (BW_SEG_CHECK). mode_seg.c
 * runs it after every operation that changes the state. */
/* #include "seg_internal.h": amalgamated above */

#ifdef BW__SEG_CHECKS
/* ---- the invariants (BW_DEBUG, and the fuzzer's build) ----
 * bw__seg_check states every rule of the segmented storage, as mimalloc's
 * mi_page_is_valid and _mi_heap_check do for theirs: the tests and the
 * fuzzer see the bytes, this sees the state behind them, after every
 * operation (the table below is wrapped). It aborts naming the rule. */
#include <stdio.h>
#include <stdlib.h>

/* _Noreturn: C11's, which the implementation needs anyway (_Thread_local,
 * <stdatomic.h>); callers then need no path after a broken rule. */
static _Noreturn void bw__seg_broken(const char *rule)
{
    fprintf(stderr, "bw__seg_check: broken invariant: %s\n", rule);
    abort();
}
#define BW__SEG_RULE(c, rule) ((c) ? (void)0 : bw__seg_broken(rule))

/* The tree t in address order: heap-ordered by priority, blocks apart,
 * each holding a piece; counted in *k, and listed in out[] if not NULL. */
static void bw__check_tree(const bw__blk *t, const bw__blk **prev, const bw__blk **out,
                           size_t *k)
{
    for (; t != NULL; t = t->right) {
        BW__SEG_RULE(t->left == NULL || bw__prio(t->left) <= bw__prio(t),
                     "the block tree is a heap by priority (left)");
        BW__SEG_RULE(t->right == NULL || bw__prio(t->right) <= bw__prio(t),
                     "the block tree is a heap by priority (right)");
        bw__check_tree(t->left, prev, out, k);
        BW__SEG_RULE((const unsigned char *)t > t->data, "a block's trailer follows its bytes");
        BW__SEG_RULE(*prev == NULL || (uintptr_t)*prev + BW__SEG_HDR <= bw__key(t),
                     "the block tree is in address order, blocks apart");
        BW__SEG_RULE(t->pieces != 0, "a block in the tree holds a closed piece");
        if (out != NULL) out[*k] = t;
        (*k)++;
        *prev = t;
    }
}

/* Closed piece pc, record i of chunk ch: its block, blks[k] (blocks in
 * address order, n of them), or n for the current block cur; its bytes
 * inside it. A reference with a done has its record's aside, and its
 * bytes lie in what the caller linked (n + 1); a reference without one
 * keeps nothing else (n + 1). */
static size_t bw__check_owner(const bw__blk *const *blks, size_t n, const bw__blk *cur,
                              bw__pchunk *ch, size_t i)
{
    const bw__piece *pc = &BW__PC(ch)[i];
    const bw__blk *b = bw__pc_blk(pc);
    const bw__aside *a = bw__pc_aside(pc);
    size_t lo = 0, hi = n;
    BW__SEG_RULE(pc->n != 0 && pc->p != NULL, "a closed piece holds bytes");
    if (a != NULL) {
        BW__SEG_RULE(a == BW__PA(ch) + i, "a reference's aside is at its record's place");
        BW__SEG_RULE(a->done != NULL, "a reference with an aside has a done");
        BW__SEG_RULE((const unsigned char *)a->orig <= pc->p &&
                         pc->p + pc->n <= (const unsigned char *)a->orig + a->orig_n,
                     "a reference's bytes lie in the memory linked");
    }
    if (b == NULL) return n + 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bw__key(blks[mid]) < bw__key(b)) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n || blks[lo] != b) lo = n;
    BW__SEG_RULE(lo < n || b == cur, "a piece's block is owned (current or in the tree)");
    BW__SEG_RULE(pc->p >= b->data && pc->p + pc->n <= (const unsigned char *)b,
                 "a piece's bytes lie inside its block");
    return lo;
}

/* The chunks of records: a list from head (no prev) through tail to the
 * spares, each of its rented size; held records [first, cap) in the head,
 * [0, count) in the tail ([first, count) when one chunk), every chunk
 * between full; a chunk's seq follows the last's; the head a spare only
 * when nothing is held, and the tail empty only then. */
static void bw__check_chunks(const bw_writer *w)
{
    const bw__pchunk *ch = w->m.c.head, *prev = NULL;
    int at_tail = 0;
    BW__SEG_RULE((w->m.c.head == NULL) == (w->m.c.tail == NULL),
                 "a head of the records when a tail");
    BW__SEG_RULE(w->m.c.head != NULL || (w->m.c.first == 0 && w->m.c.count == 0),
                 "no chunk of records: none held");
    for (; ch != NULL; prev = ch, ch = ch->next) {
        BW__SEG_RULE(ch->prev == prev, "the chunks of records are a list (prev)");
        BW__SEG_RULE(ch->cap != 0 && ch->cap <= UINT32_MAX / 2 &&
                         sizeof *ch + ch->cap * BW__REC <= ch->bytes,
                     "a chunk's records and their asides fit its rented size");
        if (at_tail) continue; /* a spare: nothing more to hold */
        BW__SEG_RULE(prev == NULL || ch->seq == prev->seq + prev->cap,
                     "a chunk's records are numbered after the last's");
        if (ch == w->m.c.tail) {
            at_tail = 1;
            BW__SEG_RULE(w->m.c.count <= ch->cap, "the tail's records [0, count) fit it");
            BW__SEG_RULE(ch == w->m.c.head ? w->m.c.first <= w->m.c.count : w->m.c.count != 0,
                         "the tail holds a record unless nothing is held");
        }
        if (ch == w->m.c.head && ch != w->m.c.tail)
            BW__SEG_RULE(w->m.c.first < ch->cap, "the head holds a record unless it is the tail");
    }
    BW__SEG_RULE(w->m.c.head == NULL || at_tail, "the tail follows the head");
}

/* The writer's fields: storage, the open piece, the records, lim. */
static void bw__check_fields(const bw_writer *w)
{
    BW__SEG_RULE(w->data != NULL || (w->cap == 0 && w->len == 0 && w->m.c.open == 0),
                 "no current block: no capacity, no open piece");
    BW__SEG_RULE(w->data == NULL || (w->m.c.open <= w->len && w->len <= w->cap),
                 "the open piece data[open, len) lies in the current block");
    BW__SEG_RULE(w->data == NULL || bw__cur(w)->data == w->data,
                 "the current block's trailer is at data + cap");
    BW__SEG_RULE(w->base <= bw_tell(w), "base is at or before tell");
    BW__SEG_RULE(w->err != BW_OK ? w->lim == w->len
                                 : w->lim <= w->cap &&
                                       ((w->flags & BW__LIMITED) || w->lim == w->cap),
                 "lim: cap (or the size limit's), len while an error is recorded");
}

BW__INTERNAL void bw__seg_check(const bw_writer *w)
{
    const bw__blk *prev = NULL, *cur = w->data != NULL ? bw__cur(w) : NULL, **blks;
    size_t nblk = 0, i, k, *counts, sum = 0;
    uint64_t at = w->base;
    bw__pchunk *ch = w->m.c.head;
    const bw__piece *pc;
    bw__check_fields(w);
    bw__check_chunks(w);
    bw__check_tree(w->m.c.blocks, &prev, NULL, &nblk);
    blks = (const bw__blk **)malloc((nblk + 1) * sizeof *blks);
    counts = (size_t *)calloc(nblk + 2, sizeof *counts);
    BW__SEG_RULE(blks != NULL && counts != NULL, "(the check's own memory)");
    prev = NULL;
    nblk = 0;
    bw__check_tree(w->m.c.blocks, &prev, blks, &nblk);
    for (i = w->m.c.first; (pc = bw__pc_at(w, &ch, &i)) != NULL; i++) {
        BW__SEG_RULE(bw__pc_aside(pc) == NULL || (w->flags & BW__DONES),
                     "a reference with a done is flagged (BW__DONES)");
        counts[bw__check_owner(blks, nblk, cur, ch, i)]++;
        BW__SEG_RULE(pc->end - pc->n == at, "each closed piece starts where the last ended");
        at = pc->end;
        sum += pc->n;
    }
    BW__SEG_RULE(at == w->pos + w->m.c.open,
                 "the open piece starts where the last closed piece ends (or base)");
    BW__SEG_RULE(bw_tell(w) - w->base == sum + (w->len - w->m.c.open),
                 "the held bytes are the closed pieces and the open piece");
    for (k = 0; k < nblk; k++) {
        BW__SEG_RULE(counts[k] == blks[k]->pieces, "a block's piece count");
        BW__SEG_RULE(w->m.c.head->lo <= bw__key(blks[k]) &&
                         (uintptr_t)blks[k] + BW__SEG_HDR <= w->m.c.head->hi,
                     "the tree's blocks lie in the head's range [lo, hi)");
    }
    BW__SEG_RULE(cur == NULL || counts[nblk] == cur->pieces, "the current block's piece count");
    for (k = 0; cur != NULL && k < nblk; k++)
        BW__SEG_RULE(blks[k] != cur, "the current block is not in the tree");
    free(blks);
    free(counts);
}

#else
/* ISO C wants something in every translation unit. */
typedef int bw__seg_check_unused;
#endif /* BW__SEG_CHECKS */
/*************** End file seg_check.c ***************************************/

/*************** Begin file seg_pieces.c ************************************/
/* seg_pieces.c - the segmented mode's storage room: the tree of blocks a
 * segmented writer owns (m.c.blocks, a treap by address) and the chunks
 * its closed pieces' records sit in (m.c.head to m.c.tail), with renting a
 * block and a chunk. The operations on the held bytes are in mode_seg.c;
 * what the rooms share, in seg_internal.h. */
/* #include "seg_internal.h": amalgamated above */

typedef char bw__seg_fits[sizeof(bw__blk) <= BW__SEG_HDR ? 1 : -1];
typedef char bw__seg_hdr_aligned[BW__SEG_HDR % BW__SEG_ALIGN == 0 ? 1 : -1];

/* The owned blocks but the current one are a treap keyed by address
 * (m.c.blocks its root), a block's priority a hash of its address: found,
 * added and removed in O(log blocks) expected, whatever order they come
 * in. 0.4 kept a list, and bw_append_ref's overlap check walked it: after
 * n moves that each brought a block, n links cost O(n^2). The links live
 * in the trailer, so the tree costs no memory. */

/* Split tree t into the blocks below key k (*l) and the rest (*r). */
static void bw__blk_split(bw__blk *t, uintptr_t k, bw__blk **l, bw__blk **r)
{
    while (t != NULL) {
        if (bw__key(t) < k) {
            *l = t;
            l = &t->right;
            t = t->right;
        } else {
            *r = t;
            r = &t->left;
            t = t->left;
        }
    }
    *l = *r = NULL;
}

static void bw__range_add(bw_writer *w, const bw__blk *b);

/* Add b: down to where its priority belongs, the subtree there split
 * around it. */
BW__INTERNAL void bw__blk_link(bw_writer *w, bw__blk *b)
{
    bw__blk **at = &w->m.c.blocks;
    uint64_t pr = bw__prio(b);
    bw__range_add(w, b);
    while (*at != NULL && bw__prio(*at) > pr)
        at = bw__key(b) < bw__key(*at) ? &(*at)->left : &(*at)->right;
    bw__blk_split(*at, bw__key(b), &b->left, &b->right);
    *at = b;
}

/* Remove b (in the tree): its two subtrees merged in its place. */
static void bw__blk_unlink(bw_writer *w, bw__blk *b)
{
    bw__blk **at = &w->m.c.blocks, *l = b->left, *r = b->right;
    while (*at != b) at = bw__key(b) < bw__key(*at) ? &(*at)->left : &(*at)->right;
    while (l != NULL && r != NULL) { /* every key in l is below every key in r */
        if (bw__prio(l) > bw__prio(r)) {
            *at = l;
            at = &l->right;
            l = l->right;
        } else {
            *at = r;
            at = &r->left;
            r = r->left;
        }
    }
    *at = l != NULL ? l : r;
}

/* A piece leaves: a reference's done is called; a block of the tree that
 * holds no piece any more goes back (the current block stays). */
BW__INTERNAL void bw__piece_drop(bw_writer *w, bw__piece *pc)
{
    bw__blk *b = bw__pc_blk(pc);
    if (b == NULL) {
        const bw__aside *a = bw__pc_aside(pc);
        if (a != NULL) a->done(a->ctx, a->orig, a->orig_n);
        return;
    }
    if (--b->pieces == 0 && (w->data == NULL || b != bw__cur(w))) {
        bw__blk_unlink(w, b);
        (void)bw_pool_return(w->pool, b->data, bw__blk_size(b));
    }
}

/* The first chunk of records' size (seg_internal.h, bw__pchunk); each next
 * one twice the last, up to the largest: O(log records) chunks
 * (bw__seg_find walks them) for what a writer holds at once, and one chunk
 * never much larger than it needs. */
#define BW__PC_FIRST ((size_t)1024)
#define BW__PC_LARGEST ((size_t)1 << 20)

/* The tree's address range (the head's lo, hi) takes in block b, about
 * to join it: the range of b alone when the tree is empty. A block that
 * leaves does not narrow it: a wider range only sends bw__seg_overlaps to
 * the tree. The tree holds blocks only while closed pieces are held, so
 * there is a head to keep it. */
static void bw__range_add(bw_writer *w, const bw__blk *b)
{
    bw__pchunk *h = w->m.c.head;
    uintptr_t lo = bw__key(b), hi = (uintptr_t)b + BW__SEG_HDR;
    if (h == NULL) return;
    if (w->m.c.blocks == NULL) {
        h->lo = lo;
        h->hi = hi;
        return;
    }
    if (lo < h->lo) h->lo = lo;
    if (hi > h->hi) h->hi = hi;
}

/* A new chunk of at least `want` bytes after `last` (NULL: the first). */
static int bw__pc_rent(bw_writer *w, bw__pchunk *last, size_t want)
{
    bw_pool *p = bw__pool_of(w);
    size_t got = 0;
    bw__pchunk *c = p != NULL ? (bw__pchunk *)bw_pool_rent(p, want, &got) : NULL;
    if (c == NULL) return bw__fail(w, BW_ENOMEM);
    c->bytes = got;
    c->cap = (got - sizeof *c) / BW__REC;
    if (c->cap > UINT32_MAX / 2) c->cap = UINT32_MAX / 2; /* count is 32 bits */
    c->prev = last;
    c->next = NULL;
    c->seq = 0;
    c->lo = c->hi = 0;
    if (last != NULL) {
        last->next = c;
    } else {
        w->m.c.head = w->m.c.tail = c;
        w->m.c.first = w->m.c.count = 0;
    }
    return BW_OK;
}

/* Room for k more closed pieces beyond the tail's: the spares count, and
 * one chunk is rented for the rest. BW_ENOMEM recorded, nothing changed. */
BW__INTERNAL BW__COLD int bw__pc_more(bw_writer *w, size_t k)
{
    bw__pchunk *last = w->m.c.tail, *c;
    size_t room = last != NULL ? last->cap - w->m.c.count : 0, want;
    for (c = last != NULL ? last->next : NULL; c != NULL && room < k; c = c->next) {
        room += c->cap;
        last = c;
    }
    if (room >= k) return BW_OK;
    if (k - room > (BW__MAX_BLOCK - sizeof *c) / BW__REC || k > UINT32_MAX / 2)
        return bw__fail(w, BW_EOVERFLOW);
    want = last == NULL ? BW__PC_FIRST : last->bytes < BW__PC_LARGEST ? 2 * last->bytes
                                                                      : BW__PC_LARGEST;
    if (want < sizeof *c + (k - room) * BW__REC) want = sizeof *c + (k - room) * BW__REC;
    return bw__pc_rent(w, last, want);
}

/* Rent a block of the size the pool's rule gives for request r (SEG or
 * BLOCK: n bytes, trailer included, aligned to BW__SEG_ALIGN): its trailer
 * set, not linked anywhere. NULL: recorded. */
BW__INTERNAL bw__blk *bw__blk_rent(bw_writer *w, bw__size_req *r)
{
    bw_pool *p = bw__pool_of(w);
    size_t got = 0;
    bw__size want;
    unsigned char *d;
    bw__blk *b;
    int rc;
    r->align = BW__SEG_ALIGN;
    rc = p != NULL ? bw__pool_size(p, r, &want) : BW_ENOMEM;
    d = rc == BW_OK ? (unsigned char *)bw_pool_rent(p, want.size, &got) : NULL;
    if (d == NULL) {
        bw__fail(w, rc != BW_OK ? rc : BW_ENOMEM);
        return NULL;
    }
    b = (bw__blk *)(void *)(d + got - BW__SEG_HDR);
    b->data = d;
    b->left = b->right = NULL;
    b->pieces = 0;
    return b;
}

/* The blocks of tree t larger than `above`: their bytes added to *held,
 * their number to *count (recursion as deep as the tree). */
static void bw__blk_large(const bw__blk *t, size_t above, size_t *held, size_t *count)
{
    for (; t != NULL; t = t->right) {
        bw__blk_large(t->left, above, held, count);
        if (bw__blk_size(t) > above) {
            *held += bw__blk_size(t);
            (*count)++;
        }
    }
}

/* The next block for `need` contiguous bytes: one request to the pool's
 * size rule, told what the writer holds, and what it holds above the
 * threshold. One request, however large. */
BW__INTERNAL bw__blk *bw__blk_next(bw_writer *w, size_t need)
{
    bw_pool *p = bw__pool_of(w);
    bw__size_req r = {.kind = BW__SIZE_SEG};
    if (p == NULL || need > BW__MAX_BLOCK - BW__SEG_HDR) {
        bw__fail(w, p == NULL ? BW_ENOMEM : BW_EOVERFLOW);
        return NULL;
    }
    r.n = need + BW__SEG_HDR;
    r.held = bw_len(w);
    r.cap = w->data != NULL ? w->cap + BW__SEG_HDR : 0;
    /* Only a segmented writer about to pass the threshold walks its blocks. */
    if (r.cap > bw__pool_threshold(p) / 2)
        bw__blk_large(w->m.c.blocks, bw__pool_threshold(p), &r.large_held, &r.large_count);
    if (r.cap > bw__pool_threshold(p)) {
        r.large_held += r.cap;
        r.large_count++;
    }
    r.first = w->blk_log2 != 0 ? (size_t)1 << w->blk_log2 : 0;
    return bw__blk_rent(w, &r);
}

/* The record at (*ch, *i) (seg_internal.h). */
BW__INTERNAL bw__piece *bw__pc_at(const bw_writer *w, bw__pchunk **ch, size_t *i)
{
    if (*ch != NULL && *ch != w->m.c.tail && *i == (*ch)->cap) {
        *ch = (*ch)->next;
        *i = 0;
    }
    if (*ch == NULL || (*ch == w->m.c.tail && *i >= w->m.c.count)) return NULL;
    return &BW__PC(*ch)[*i];
}
/*************** End file seg_pieces.c **************************************/

/*************** Begin file platform/posix.c ********************************/
/* posix.c - the platform layer (platform.h) on POSIX systems: Linux with
 * glibc or musl, the BSDs, macOS. Only the Linux paths are tested on every
 * change (see README, "Platforms"); the BSD and macOS branches (funopen,
 * issetugid) are written to their manuals. */
/* #include "prelude.h": amalgamated above */

/* #include "platform.h": amalgamated above */

#if !defined(_WIN32)

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/auxv.h> /* getauxval(AT_SECURE) */
#  include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#  include <malloc.h> /* malloc_trim */
#endif

void bw__yield(void) { (void)sched_yield(); }

/* ---- the thread-exit hook: a pthread key's destructor ---- */

static pthread_key_t bw__exit_key;

bool bw__thread_exit_init(void (*fn)(void *))
{
    return pthread_key_create(&bw__exit_key, fn) == 0;
}

bool bw__thread_exit_set(void *value) { return pthread_setspecific(bw__exit_key, value) == 0; }

void bw__thread_exit_remove(void) { (void)pthread_key_delete(bw__exit_key); }

void bw__atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)pthread_atfork(prepare, parent, child);
}

/* A coarse clock is enough: decay periods are seconds, and the coarse one
 * costs a few nanoseconds (no timer read) where there is one. */
uint64_t bw__now_ms(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
#endif
        if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- memory ---- */

/* Large blocks (2 MiB and up) come straight from the kernel on Linux:
 * mmap'd at a 2 MiB boundary with MADV_HUGEPAGE, so where transparent huge
 * pages are on ("madvise" or "always") a fresh 10 MiB block costs 5 page
 * faults instead of 2,560: measured here, the first 10 MiB written into it
 * take about 1 ms against 40-110 ms with 4 KiB pages (0.25 ms when warm).
 * It also keeps them out of glibc's heap, whose sliding mmap threshold and
 * trimming made a 1 MiB job 6x slower when interleaved with malloc-heavy
 * code. Growth moves the pages (mremap), never the bytes. */
#if defined(__linux__)
#  define BW__HUGE_ALIGN ((size_t)2 << 20)
#  define BW__PAGE_ROUND(n) (((n) + 4095) & ~(size_t)4095)

/* Zeroed private pages. MAP_ANONYMOUS is not in POSIX 2008: glibc hides it
 * (and MADV_HUGEPAGE, mremap) from a program that asked for a POSIX level
 * alone before its first header, where the single header's prelude comes
 * too late to ask for more (BW_NO_FILE_ADAPTER needs only POSIX). Then a
 * private mapping of /dev/zero, the way before MAP_ANONYMOUS: Linux makes
 * it the same anonymous memory. */
static unsigned char *bw__map_zeros(size_t len)
{
#  ifdef MAP_ANONYMOUS
    return (unsigned char *)mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                 -1, 0);
#  else
#    ifdef O_CLOEXEC
    int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
#    else
    int fd = open("/dev/zero", O_RDWR);
#    endif
    void *m;
    if (fd < 0) return (unsigned char *)MAP_FAILED;
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    (void)close(fd);
    return (unsigned char *)m;
#  endif
}

void *bw__map(size_t size)
{
    size_t len = BW__PAGE_ROUND(size), head, tail;
    unsigned char *raw, *a;
    if (len < size || len > SIZE_MAX - BW__HUGE_ALIGN) return NULL;
    raw = bw__map_zeros(len + BW__HUGE_ALIGN);
    if (raw == (unsigned char *)MAP_FAILED) return NULL;
    a = (unsigned char *)(((uintptr_t)raw + BW__HUGE_ALIGN - 1) & ~(uintptr_t)(BW__HUGE_ALIGN - 1));
    head = (size_t)(a - raw);
    tail = BW__HUGE_ALIGN - head;
    if (head != 0) (void)munmap(raw, head);
    if (tail != 0) (void)munmap(a + len, tail);
#  ifdef MADV_HUGEPAGE
    (void)madvise(a, len, MADV_HUGEPAGE); /* a hint: fine if THP is off */
#  endif
    return a;
}

void bw__unmap(void *block, size_t size) { (void)munmap(block, BW__PAGE_ROUND(size)); }

/* At a 2 MiB boundary of a 2 MiB aligned block, so the huge pages below
 * keep stay whole. */
void bw__unmap_tail(void *block, size_t size, size_t keep)
{
    (void)munmap((unsigned char *)block + keep, BW__PAGE_ROUND(size) - keep);
}

void *bw__remap(void *block, size_t old_size, size_t new_size)
{
    void *nb = bw__map(new_size);
    if (nb == NULL) return NULL;
#  ifdef MREMAP_FIXED
    /* Move the pages onto the fresh aligned mapping: no copy, and the huge
     * pages stay huge. */
    if (mremap(block, BW__PAGE_ROUND(old_size), BW__PAGE_ROUND(new_size),
               MREMAP_MAYMOVE | MREMAP_FIXED, nb) == MAP_FAILED) {
        bw__unmap(nb, new_size);
        return NULL;
    }
#  else
    memcpy(nb, block, old_size < new_size ? old_size : new_size);
    bw__unmap(block, old_size);
#  endif
    return nb;
}
#endif

/* On the 2-core VM of bench/BENCHMARKS.md a fresh 128 KiB mapping written
 * a page at a time cost 265 us (a fault a page); populated in one call,
 * then written, 113 us. MADV_POPULATE_WRITE is 23 in Linux's uapi
 * headers; older C library headers lack the name, and an older kernel
 * answers EINVAL, which is ignored. madvise and the MADV_ names are hidden,
 * as MADV_HUGEPAGE above, from a program that asked for a POSIX level
 * alone (MADV_NORMAL tells): then pages fault in one at a time. */
#if defined(__linux__) && defined(MADV_NORMAL)
#  ifndef MADV_POPULATE_WRITE
#    define MADV_POPULATE_WRITE 23
#  endif
#  define BW__POPULATES 1
#endif

void bw__populate(void *block, size_t n)
{
#ifdef BW__POPULATES
    uintptr_t a = ((uintptr_t)block + 4095) & ~(uintptr_t)4095;
    uintptr_t e = ((uintptr_t)block + n) & ~(uintptr_t)4095;
    if (e > a) (void)madvise((void *)a, (size_t)(e - a), MADV_POPULATE_WRITE);
#else
    (void)block, (void)n;
#endif
}

/* glibc keeps freed memory of its main heap below the top chunk, so the
 * process's RSS stayed 4 MiB up after a trim of the pooled 256 KiB-1 MiB
 * classes: malloc_trim gives the free pages back. */
void bw__malloc_trim(void)
{
#if defined(__GLIBC__)
    (void)malloc_trim(0);
#endif
}

void *bw__malloc_pages(size_t size)
{
    const size_t page = 4096;
    return size % page == 0 ? aligned_alloc(page, size) : malloc(size);
}

bool bw__env_trusted(void)
{
#if defined(__linux__)
    return getauxval(AT_SECURE) == 0;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || \
      defined(__OpenBSD__) || defined(__DragonFly__)
    return !issetugid();
#else
    return true;
#endif
}

/* ---- file descriptors ---- */

/* O_CLOEXEC where the headers have it. */
#if defined(O_CLOEXEC)
#  define BW__O_CLOEXEC O_CLOEXEC
#else
#  define BW__O_CLOEXEC 0
#endif

/* Whether a SIGPIPE is pending in this thread's own set: 1 or 0, or -1 when
 * that cannot be told. Linux keeps a pending set per thread (where the
 * SIGPIPE of a write goes) and one for the process (kill), and sigpending
 * shows only their union; /proc/thread-self/status shows the thread's own
 * as SigPnd, a hex mask with the highest signal first. Read into the stack
 * with open and read: no allocation, for a path that is rare anyway (a
 * SIGPIPE pending around a write that may have raised one). */
static int bw__sigpipe_in_thread_set(void)
{
#ifdef __linux__
    static const char key[] = "\nSigPnd:";
    char buf[1024];
    size_t k = 1; /* key chars matched: the file's start counts as a '\n' */
    int fd, digits = 0, found = 0, done = 0;
    uint64_t mask = 0;

    fd = open("/proc/thread-self/status", O_RDONLY | BW__O_CLOEXEC);
    if (fd < 0) return -1;
    while (!done) {
        ssize_t i, n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (i = 0; i < n && !done; i++) {
            char c = buf[i];
            if (!found) {
                if (c == key[k]) {
                    found = key[++k] == '\0';
                } else {
                    k = c == '\n' ? 1 : 0;
                }
            } else {
                unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                                    : 16u;
                if (d < 16) {
                    mask = (mask << 4) | d; /* the low 64 bits: signals 1 to 64 */
                    digits++;
                } else if (digits > 0 || (c != ' ' && c != '\t')) {
                    done = 1;
                }
            }
        }
    }
    (void)close(fd);
    if (!done || digits == 0) return -1;
    return (int)((mask >> (SIGPIPE - 1)) & 1u);
#else
    return -1;
#endif
}

/* SIGPIPE pending for this thread, told apart: 0 none at all, 1 one in the
 * thread's own set, and when one is pending elsewhere only: 0 if the
 * thread's own set is known to be empty, -1 if that cannot be told. */
static int bw__sigpipe_mine(void)
{
    sigset_t pending;
    if (sigpending(&pending) != 0) return -1;
    if (sigismember(&pending, SIGPIPE) != 1) return 0;
    return bw__sigpipe_in_thread_set();
}

/* writev with SIGPIPE blocked for this thread; a SIGPIPE that this write
 * raised is taken off the pending set before the old mask comes back, so
 * the process neither dies nor sees it later (as libcurl and OpenSSL do),
 * and any SIGPIPE of the caller's is left as it was: the library adds none.
 *
 * A write raises SIGPIPE when it fails with EPIPE, and also when it wrote
 * part of its bytes before the reader went (Linux returns the partial count
 * and raises it anyway). That SIGPIPE goes to the writing thread's own
 * pending set, where standard signals coalesce, and sigwait takes from that
 * set before the process's. So one is taken exactly when the thread's set
 * held none before the write and holds one now: then it is ours, and
 * sigwait takes it and not one of the caller's. A caller's one in the
 * thread's set already absorbed ours; one in the process's set is not
 * touched. Where the thread's set cannot be read (no /proc), a SIGPIPE
 * pending before the write counts as the caller's and nothing is taken. */
static ptrdiff_t bw__writev_guarded(int fd, const struct iovec *iov, int cnt)
{
    sigset_t pipe_set, old;
    int before, saved, i;
    size_t total = 0;
    ssize_t r;

    for (i = 0; i < cnt; i++) total += iov[i].iov_len;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0) return writev(fd, iov, cnt);
    before = bw__sigpipe_mine();
    r = writev(fd, iov, cnt);
    saved = errno;
    if ((r < 0 ? saved == EPIPE : (size_t)r < total) && before == 0 &&
        bw__sigpipe_mine() != 0) {
        int sig;
        (void)sigwait(&pipe_set, &sig);
    }
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return r;
}

/* The kind of fd is looked up at every send, never kept: dup2 can make a
 * file a pipe between two sends (a program that starts a pager on its
 * stdout). Only pipes, FIFOs and sockets raise SIGPIPE, and lseek fails with
 * ESPIPE on exactly those (POSIX; some systems add terminals, which then
 * just get the guard) at half the cost of an fstat: a file or a device
 * costs one lseek besides the writev. After ESPIPE, sendmsg with
 * MSG_NOSIGNAL: a socket takes it, anything else refuses with ENOTSOCK and
 * gets the guarded writev. At most IOV_MAX pieces go in one call: the
 * rest is a short write, which the callers loop on. */
ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt)
{
    int saved = errno;
#ifdef IOV_MAX
    if (cnt > IOV_MAX) cnt = IOV_MAX;
#endif
    if (lseek(fd, 0, SEEK_CUR) != -1 || errno != ESPIPE) {
        errno = saved;
        return writev(fd, iov, cnt);
    }
#ifdef MSG_NOSIGNAL
    {
        struct msghdr m;
        ssize_t r;
        memset(&m, 0, sizeof m);
        m.msg_iov = (struct iovec *)(uintptr_t)iov;
        m.msg_iovlen = (size_t)cnt;
        r = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (r >= 0 || errno != ENOTSOCK) return r;
    }
#endif
    errno = saved;
    return bw__writev_guarded(fd, iov, cnt);
}

/* ---- the FILE adapter ---- */

#ifdef BW_HAVE_FILE_ADAPTER
static int bw__os_file_put(void *cookie, const char *buf, size_t n)
{
    return (*(const bw__file_ops *const *)cookie)->write(cookie, buf, n);
}

static int bw__os_file_end(void *cookie)
{
    const bw__file_ops *ops = *(const bw__file_ops *const *)cookie;
    if (ops->close != NULL) ops->close(cookie);
    return 0;
}

/* The stream cannot seek: a writer only appends. */
static int bw__no_seek(void)
{
    errno = ESPIPE;
    return -1;
}

#  if defined(__linux__) && !defined(__ANDROID__)
/* glibc and musl: fopencookie. The seek position is off64_t in glibc's
 * table and off_t in musl's (64 bits in both); the prelude's _GNU_SOURCE
 * declares it either way. */
static ssize_t bw__cookie_write(void *cookie, const char *buf, size_t n)
{
    /* A failure as each C library reads one (the stream's error flag set,
     * fflush and fprintf failing): glibc takes a return below the count
     * and wants no negative value; musl takes only a negative one (0 is
     * "nothing written", and the FILE would carry on). */
    if (bw__os_file_put(cookie, buf, n)) return (ssize_t)n;
#    if defined(__GLIBC__)
    return 0;
#    else
    return -1;
#    endif
}

#    if defined(__GLIBC__)
typedef off64_t bw__cookie_off;
#    else
typedef off_t bw__cookie_off;
#    endif

static int bw__cookie_seek(void *cookie, bw__cookie_off *off, int whence)
{
    return (void)cookie, (void)off, (void)whence, bw__no_seek();
}

FILE *bw__file_make(void *cookie)
{
    cookie_io_functions_t io;
    memset(&io, 0, sizeof io);
    io.write = bw__cookie_write;
    io.seek = bw__cookie_seek;
    io.close = bw__os_file_end;
    return fopencookie(cookie, "w", io);
}
#  else /* the BSDs, macOS, Android: funopen */
static int bw__funopen_write(void *cookie, const char *buf, int n)
{
    return bw__os_file_put(cookie, buf, (size_t)n) ? n : -1;
}

static fpos_t bw__funopen_seek(void *cookie, fpos_t off, int whence)
{
    return (void)cookie, (void)off, (void)whence, bw__no_seek();
}

FILE *bw__file_make(void *cookie)
{
    return funopen(cookie, NULL, bw__funopen_write, bw__funopen_seek, bw__os_file_end);
}
#  endif
#endif /* BW_HAVE_FILE_ADAPTER */

#else
/* ISO C wants something in every translation unit. */
typedef int bw__posix_unused;
#endif /* !_WIN32 */
/*************** End file platform/posix.c **********************************/

/*************** Begin file platform/windows.c ******************************/
/* windows.c - the platform layer (platform.h) on Windows: Win32 locks and
 * fiber-local storage, the C runtime's file descriptors. Tested with
 * MinGW-w64 under wine (README, "Platforms"); written to compile with MSVC
 * too (no GNU construct outside a guarded path). What Windows lacks: fork
 * (no handlers to register), SIGPIPE (nothing to guard), fopencookie (no
 * FILE adapter: bufwriter.h leaves bw_fopen out), pages mapped for large
 * blocks (malloc serves them). */
/* #include "platform.h": amalgamated above */

#if defined(_WIN32)

#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <errno.h>
#include <io.h>
#include <limits.h>

/* The opaque one-pointer types of platform.h hold an SRWLOCK and an
 * INIT_ONCE: their sizes must agree. */
typedef char bw__mutex_fits[sizeof(SRWLOCK) == sizeof(bw__mutex) ? 1 : -1];
typedef char bw__once_fits[sizeof(INIT_ONCE) == sizeof(bw__once) ? 1 : -1];

bool bw__mutex_init(bw__mutex *m)
{
    InitializeSRWLock((PSRWLOCK)(void *)m);
    return true;
}

void bw__mutex_destroy(bw__mutex *m) { (void)m; }

void bw__mutex_lock(bw__mutex *m) { AcquireSRWLockExclusive((PSRWLOCK)(void *)m); }

void bw__mutex_unlock(bw__mutex *m) { ReleaseSRWLockExclusive((PSRWLOCK)(void *)m); }

typedef struct bw__once_call {
    void (*fn)(void);
} bw__once_call;

static BOOL CALLBACK bw__once_tramp(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
    (void)once;
    (void)ctx;
    ((bw__once_call *)param)->fn();
    return TRUE;
}

void bw__once_run(bw__once *o, void (*fn)(void))
{
    bw__once_call c;
    c.fn = fn;
    (void)InitOnceExecuteOnce((PINIT_ONCE)(void *)o, bw__once_tramp, &c, NULL);
}

void bw__yield(void) { (void)SwitchToThread(); }

/* ---- the thread-exit hook: a fiber-local slot's callback ----
 * FlsAlloc's callback runs when a thread exits with a non-NULL value in
 * the slot, and also, for every thread, when the slot is freed: at unload
 * that would run the hook on the unloading thread with other threads'
 * values, so bw__thread_exit_remove first turns the hook off. */
static DWORD bw__fls = FLS_OUT_OF_INDEXES;
static void (*bw__exit_fn)(void *);
static volatile LONG bw__exit_off;

static VOID WINAPI bw__fls_done(PVOID value)
{
    if (value != NULL && InterlockedCompareExchange(&bw__exit_off, 0, 0) == 0)
        bw__exit_fn(value);
}

bool bw__thread_exit_init(void (*fn)(void *))
{
    bw__exit_fn = fn;
    bw__fls = FlsAlloc(bw__fls_done);
    return bw__fls != FLS_OUT_OF_INDEXES;
}

bool bw__thread_exit_set(void *value) { return FlsSetValue(bw__fls, value) != 0; }

void bw__thread_exit_remove(void)
{
    (void)InterlockedExchange(&bw__exit_off, 1);
    if (bw__fls != FLS_OUT_OF_INDEXES) (void)FlsFree(bw__fls);
}

/* No fork on Windows: nothing to prepare for. */
void bw__atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)prepare;
    (void)parent;
    (void)child;
}

uint64_t bw__now_ms(void) { return (uint64_t)GetTickCount64(); }

void bw__malloc_trim(void) {}

/* _aligned_malloc's blocks need _aligned_free, not free(): malloc's. */
void *bw__malloc_pages(size_t size) { return malloc(size); }

void bw__populate(void *block, size_t n) { (void)block, (void)n; }

bool bw__env_trusted(void) { return true; }

/* The C runtime's descriptors: each piece with _write, stopping at the
 * first short one. No signal to guard against: a write to a pipe whose
 * reader has gone fails with EPIPE or EINVAL. */
ptrdiff_t bw__fd_send(int fd, const struct iovec *iov, int cnt)
{
    ptrdiff_t done = 0;
    int i;
    for (i = 0; i < cnt; i++) {
        unsigned n = iov[i].iov_len > (size_t)INT_MAX ? (unsigned)INT_MAX
                                                      : (unsigned)iov[i].iov_len;
        int r;
        if (n == 0) continue;
        r = _write(fd, iov[i].iov_base, n);
        if (r < 0) return done > 0 ? done : -1;
        done += r;
        if ((unsigned)r < n) break;
    }
    return done;
}

#else
/* ISO C wants something in every translation unit. */
typedef int bw__windows_unused;
#endif /* _WIN32 */
/*************** End file platform/windows.c ********************************/

/*************** Begin file pool/alloc.c ************************************/
/* alloc.c - the backing allocators: libc (with large blocks straight from
 * the kernel on Linux), and jemalloc's sized calls in builds with
 * BW_HAVE_JEMALLOC. */
/* #include "pool_internal.h": amalgamated above */

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
/*************** End file pool/alloc.c **************************************/

/*************** Begin file pool/check.c ************************************/
/* check.c - checked mode: a side table of every block the pool has handed
 * out or holds, so that a double return, a foreign block or a wrong capacity
 * is reported (through a replaceable hook) and refused instead of
 * corrupting the pool, and a canary after every block catches writes past
 * its end when it comes back. On with BW_POOL_CHECKED, in BW_DEBUG builds,
 * or with BW_CHECKED=1 in the environment. It costs a hash lookup under a
 * lock and a 16-byte compare on every rent and return. */
/* #include "pool_internal.h": amalgamated above */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BW__FREE_SLOT = 0, BW__RENTED = 1, BW__HELD = 2 };

typedef struct bw__centry {
    const void *block;
    size_t cap;
    int state;
} bw__centry;

/* Open addressing, linear probing, deletion by backward shift (no
 * tombstones). `lossy` is set if the table ever failed to grow: from then
 * on unknown blocks are not called foreign, since they may just be
 * untracked. */
typedef struct bw__ctab {
    bw__mutex lock;
    bw__centry *e;
    size_t mask, used;
    bool lossy;
} bw__ctab;

static bw__mutex bw__report_lock = BW__MUTEX_INIT;
static bw_report_fn bw__report_fn;
static void *bw__report_ctx;

void bw_set_report_hook(bw_report_fn fn, void *ctx)
{
    bw__mutex_lock(&bw__report_lock);
    bw__report_fn = fn;
    bw__report_ctx = ctx;
    bw__mutex_unlock(&bw__report_lock);
}

BW__INTERNAL void bw__report(const char *what, const void *block, size_t cap)
{
    bw_report_fn fn;
    void *ctx;
    bw__mutex_lock(&bw__report_lock);
    fn = bw__report_fn;
    ctx = bw__report_ctx;
    bw__mutex_unlock(&bw__report_lock);
    if (fn != NULL) {
        fn(ctx, what, block, cap);
        return;
    }
    fprintf(stderr, "bufwriter: %s (block %p, capacity %zu)\n", what, block, cap);
    abort();
}

/* BW_CHECKED=1 in the environment, read the way secure_getenv does: never
 * in a set-user-ID/set-group-ID program, where the environment belongs to
 * someone else (bw__env_trusted). */
BW__INTERNAL bool bw__check_env(const char *name)
{
    const char *v;
    if (!bw__env_trusted()) return false;
    v = getenv(name);
    return v != NULL && strcmp(v, "1") == 0;
}

/* The canary after each block in checked mode: a fixed pattern that a
 * write of zeros, of text or of the fill bytes is unlikely to restore. */
static const unsigned char bw__canary[BW__CANARY_SIZE] = {
    0xc5, 0x3a, 0x96, 0x5f, 0x0b, 0xe1, 0x72, 0x4d,
    0xa8, 0x1e, 0xf3, 0x69, 0x27, 0xbc, 0x50, 0x8d};

BW__INTERNAL void bw__canary_set(void *b, size_t cap)
{
    memcpy((unsigned char *)b + cap, bw__canary, BW__CANARY_SIZE);
}

BW__INTERNAL bool bw__canary_ok(const void *b, size_t cap)
{
    return memcmp((const unsigned char *)b + cap, bw__canary, BW__CANARY_SIZE) == 0;
}

static size_t bw__hash(const void *b, size_t mask)
{
    uint64_t x = (uint64_t)(uintptr_t)b;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & mask;
}

static bw__centry *bw__find(bw__ctab *t, const void *b)
{
    size_t i;
    if (t->e == NULL) return NULL;
    for (i = bw__hash(b, t->mask); t->e[i].state != BW__FREE_SLOT; i = (i + 1) & t->mask)
        if (t->e[i].block == b) return &t->e[i];
    return NULL;
}

static bool bw__grow_table(bw__ctab *t)
{
    size_t n = t->e ? (t->mask + 1) * 2 : 256, i;
    bw__centry *e = (bw__centry *)calloc(n, sizeof *e);
    if (e == NULL) return false;
    if (t->e != NULL) {
        for (i = 0; i <= t->mask; i++) {
            size_t j;
            if (t->e[i].state == BW__FREE_SLOT) continue;
            j = bw__hash(t->e[i].block, n - 1);
            while (e[j].state != BW__FREE_SLOT) j = (j + 1) & (n - 1);
            e[j] = t->e[i];
        }
        free(t->e);
    }
    t->e = e;
    t->mask = n - 1;
    return true;
}

static void bw__remove(bw__ctab *t, bw__centry *victim)
{
    size_t i = (size_t)(victim - t->e), j = i;
    t->e[i].state = BW__FREE_SLOT;
    t->used--;
    for (;;) {
        size_t home;
        j = (j + 1) & t->mask;
        if (t->e[j].state == BW__FREE_SLOT) return;
        home = bw__hash(t->e[j].block, t->mask);
        /* Move e[j] into the hole at i unless its home lies cyclically in
         * (i, j]: then it is already reachable without passing i. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            t->e[i] = t->e[j];
            t->e[j].state = BW__FREE_SLOT;
            i = j;
        }
    }
}

BW__INTERNAL bool bw__check_init(bw_pool *p)
{
    bw__ctab *t = (bw__ctab *)calloc(1, sizeof *t);
    if (t == NULL) return false;
    if (!bw__mutex_init(&t->lock)) {
        free(t);
        return false;
    }
    p->check = t;
    return true;
}

BW__INTERNAL void bw__check_rented(bw_pool *p, void *b, size_t cap)
{
    bw__ctab *t = (bw__ctab *)p->check;
    bw__centry *e;
    const char *problem = NULL;
    bw__mutex_lock(&t->lock);
    e = bw__find(t, b);
    if (e != NULL) {
        if (e->state == BW__RENTED) problem = "bw_pool_rent: block handed out while already rented";
    } else if ((t->used + 1) * 2 > t->mask + 1 && !bw__grow_table(t)) {
        t->lossy = true;
    } else {
        size_t i;
        for (i = bw__hash(b, t->mask); t->e[i].state != BW__FREE_SLOT; i = (i + 1) & t->mask) {}
        e = &t->e[i];
        e->block = b;
        t->used++;
    }
    if (e != NULL) {
        e->state = BW__RENTED;
        e->cap = cap;
    }
    bw__mutex_unlock(&t->lock);
    if (problem) bw__report(problem, b, cap);
}

BW__INTERNAL bool bw__check_return(bw_pool *p, void *b, size_t cap, bool keeps)
{
    bw__ctab *t = (bw__ctab *)p->check;
    bw__centry *e;
    const char *problem = NULL;
    bw__mutex_lock(&t->lock);
    e = bw__find(t, b);
    if (e == NULL) {
        if (!t->lossy) problem = "bw_pool_return: foreign block (not rented from this pool)";
    } else if (e->state == BW__HELD) {
        problem = "bw_pool_return: block returned twice";
    } else if (e->cap != cap) {
        problem = "bw_pool_return: wrong capacity (not the one rent gave)";
    } else if (!bw__canary_ok(b, cap)) {
        problem = "bw_pool_return: write past the end of the block (canary overwritten)";
    } else if (keeps) {
        e->state = BW__HELD;
    } else {
        bw__remove(t, e);
    }
    bw__mutex_unlock(&t->lock);
    if (problem) {
        bw__report(problem, b, cap);
        return false;
    }
    return true;
}

BW__INTERNAL void bw__check_freed(bw_pool *p, void *b)
{
    bw__ctab *t = (bw__ctab *)p->check;
    bw__centry *e;
    bw__mutex_lock(&t->lock);
    e = bw__find(t, b);
    if (e != NULL) bw__remove(t, e);
    bw__mutex_unlock(&t->lock);
}

BW__INTERNAL void bw__check_destroy(bw_pool *p)
{
    bw__ctab *t = (bw__ctab *)p->check;
    size_t i;
    if (t == NULL) return;
    for (i = 0; t->e != NULL && i <= t->mask; i++)
        if (t->e[i].state == BW__RENTED)
            bw__report("bw_pool_destroy: block still rented", t->e[i].block, t->e[i].cap);
    bw__mutex_destroy(&t->lock);
    free(t->e);
    free(t);
    p->check = NULL;
}

/* fork: the report lock and a pool's table lock, taken before fork and
 * released after it in both processes (tcache.c orders them). */
BW__INTERNAL void bw__check_fork_lock(bw_pool *p, bool lock)
{
    bw__mutex *m = p != NULL ? &((bw__ctab *)p->check)->lock : &bw__report_lock;
    if (lock) bw__mutex_lock(m);
    else bw__mutex_unlock(m);
}
/*************** End file pool/check.c **************************************/

/*************** Begin file pool/fork.c *************************************/
/* fork.c - what keeps pools right across fork: every pool lock is taken
 * before fork and released in both processes, and the child drops the
 * caches of the threads it does not have (their blocks are left alone: one
 * may have been mid-update). The handlers are registered at load time
 * (bw__load), so that fork handlers registered later may use bufwriter. */
/* #include "pool_internal.h": amalgamated above */

/* Every live pool, for the fork handlers. */
static bw__mutex bw__all_lock = BW__MUTEX_INIT;
static bw_pool *bw__all_pools;
static bw__once bw__fork_once = BW__ONCE_INIT;

/* Lock order, everywhere: the shared pool's creation lock, the pool list,
 * the cache registry, then each pool's class locks in order, its large
 * lock and its checked-mode table, and last the report hook's lock. */
BW__INTERNAL void bw__pool_lock_all(bw_pool *p)
{
    unsigned ci;
    for (ci = 0; ci < p->nclasses; ci++) bw__mutex_lock(&p->cls[ci].lock);
    if (p->keep_large) bw__mutex_lock(&p->large_lock);
    if (p->check != NULL) bw__check_fork_lock(p, true);
}

BW__INTERNAL void bw__pool_unlock_all(bw_pool *p)
{
    unsigned ci;
    if (p->check != NULL) bw__check_fork_lock(p, false);
    if (p->keep_large) bw__mutex_unlock(&p->large_lock);
    for (ci = p->nclasses; ci-- > 0;) bw__mutex_unlock(&p->cls[ci].lock);
}

static void bw__fork_prepare(void)
{
    bw_pool *p;
    bw__shared_lock_fork(true);
    bw__mutex_lock(&bw__all_lock);
    bw__tcache_fork_lock(true);
    for (p = bw__all_pools; p != NULL; p = p->all_next) bw__pool_lock_all(p);
    bw__check_fork_lock(NULL, true);
}

static void bw__fork_parent(void)
{
    bw_pool *p;
    bw__check_fork_lock(NULL, false);
    for (p = bw__all_pools; p != NULL; p = p->all_next) bw__pool_unlock_all(p);
    bw__tcache_fork_lock(false);
    bw__mutex_unlock(&bw__all_lock);
    bw__shared_lock_fork(false);
}

/* The child has one thread: each pool drops the caches of the others. */
static void bw__fork_child(void)
{
    bw_pool *p;
    for (p = bw__all_pools; p != NULL; p = p->all_next) bw__tcache_fork_child(p);
    bw__fork_parent();
}

static void bw__fork_init(void)
{
    bw__atfork(bw__fork_prepare, bw__fork_parent, bw__fork_child);
}

/* The handlers are registered when the library is loaded (a constructor:
 * at program start, or at dlopen), not at the first pool. POSIX runs
 * prepare handlers in reverse order of registration and the others in
 * order, so every handler registered after the library is loaded has its
 * prepare run before bufwriter's takes the pool locks, and its parent and
 * child after bufwriter's released them: such handlers may use bufwriter
 * (a logger that writes a line in its fork handlers). Registered lazily,
 * a handler registered before the program's first pool had its prepare
 * run with every pool lock held, and fork deadlocked. Compilers without
 * constructor functions fall back to the first pool (bw__pool_register);
 * the once makes the two one registration. Windows has no fork:
 * bw__atfork registers nothing there. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((constructor)) static void bw__load(void)
{
    bw__once_run(&bw__fork_once, bw__fork_init);
}
#endif

BW__INTERNAL void bw__pool_register(bw_pool *p)
{
    bw__once_run(&bw__fork_once, bw__fork_init);
    bw__mutex_lock(&bw__all_lock);
    p->all_prev = NULL;
    p->all_next = bw__all_pools;
    if (bw__all_pools != NULL) bw__all_pools->all_prev = p;
    bw__all_pools = p;
    bw__mutex_unlock(&bw__all_lock);
}

BW__INTERNAL void bw__pool_unregister(bw_pool *p)
{
    bw__mutex_lock(&bw__all_lock);
    if (p->all_prev) p->all_prev->all_next = p->all_next;
    else bw__all_pools = p->all_next;
    if (p->all_next) p->all_next->all_prev = p->all_prev;
    bw__mutex_unlock(&bw__all_lock);
}
/*************** End file pool/fork.c ***************************************/

/*************** Begin file pool/growth.c ***********************************/
/* growth.c - the sizes writers get, in one place: a contiguous writer's
 * first block and every move, a segmented writer's next block, and what
 * the pool learns from finished jobs to choose them. The growth rule
 * itself (a class at or below the threshold, a power of two above it; at
 * least twice the old block) is bw__pool_grow, and the writer asks for
 * every size through bw__pool_size, at the end of this file.
 *
 * The bound is on fresh memory, not warm memory. A move towards the
 * learned size first takes a block of that size already idle in the pool
 * (the thread's cache, a class's shared level, the kept large blocks)
 * whatever its size, because it costs no new memory: a stream of similar
 * jobs takes its block at the first move and copies only its first block.
 * Only a block the pool must get from its backing allocator is bounded:
 * past the jump floor (16 KiB), never larger than BW__BOUND (16) times the
 * bytes the writer needs, whatever other jobs or threads did, so a burst
 * of 20 KiB jobs on many threads after 64 MiB jobs takes the one idle
 * 64 MiB block (one thread: the levels hand out a block under their lock)
 * and reserves at most 256 KiB each, where 0.3 gave each a fresh 64 MiB
 * block. Within the bound a move goes as far towards the learned size as
 * it can: to it when it is at most 16 x the need, else to the learned
 * size divided by 16 as often as it takes to fit, so each later move can
 * reach it in one step and the whole climb copies at most 1/15 of the job
 * (a stream of 1 MiB jobs with nothing idle: 64 KiB, then 1 MiB).
 *
 * The learned jump (on unless BW_POOL_NO_LEARNED_GROWTH): contiguous
 * writers that end past the jump floor record their length and when; the
 * learned size is the second largest of the last 16 recorded within
 * decay_ms (so one outlier never decides alone, and a size nobody has
 * needed for decay_ms is forgotten, as retained memory is). Until two are
 * recorded a move past the floor of a writer at or below the threshold
 * climbs 16x (16 KiB, 256 KiB, 4 MiB; where blocks from 2 MiB up are
 * huge-page mappings 16 KiB, 128 KiB, 2 MiB: bw__fresh_stop), so a
 * process's first big job copies and faults in few blocks; above the
 * threshold blocks double, resized in place.
 *
 * Learned starting size (BW_POOL_LEARN_SIZE, opt-in, outside the bound:
 * its stream chose it): writers record every length; a new writer starts
 * at the second largest of the last 16, once two are recorded. */
/* #include "pool_writer.h": amalgamated above */

/* The bound factor. A climb by factor f copies at most 1/(f - 1) of the
 * job; the block it holds is at most f x its bytes. 16 keeps the copy near
 * a jump's (a 1 MiB job copies 64 KiB) and a 20 KiB job's block at
 * 256 KiB; bench/BENCHMARKS.md, "The sweep", has what it costs. */
#define BW__BOUND ((size_t)16)

/* The growth rule for a writer holding len bytes in a block of cap (0:
 * none) that needs n more: room for len + n, at least twice cap, by
 * bw__grow_size. BW_EOVERFLOW when that cannot be represented. Inline, as
 * it was in pool_writer.h: out of line, gcc calls it from bw__pool_size,
 * and a segmented writer's 64 KiB job cost 156 instructions more. */
static inline int bw__pool_grow(const bw_pool *p, size_t len, size_t n, size_t cap, size_t *out)
{
    size_t need;
    if (n > BW__MAX_BLOCK - len) return BW_EOVERFLOW;
    need = len + n;
    if (cap > BW__MAX_BLOCK / 2) return BW_EOVERFLOW;
    if (need < cap * 2) need = cap * 2;
    *out = bw__grow_size(p, need | (need == 0)); /* a need of 0 gets a class */
    return *out != 0 ? BW_OK : BW_EOVERFLOW;
}

/* The indexes of the largest (*a) and second largest (*b) of k >= 2
 * values: one pass, shared by both learned statistics. */
static void bw__top2(const size_t *v, unsigned k, unsigned *a, unsigned *b)
{
    unsigned i;
    *a = v[1] > v[0];
    *b = !*a;
    for (i = 2; i < k; i++) {
        if (v[i] > v[*a]) {
            *b = *a;
            *a = i;
        } else if (v[i] > v[*b]) {
            *b = i;
        }
    }
}

/* A learned size, at most max_learned_size: the one place that cap is
 * applied. */
static size_t bw__capped(const bw_pool *p, size_t x)
{
    return x < p->opt.max_learned_size ? x : p->opt.max_learned_size;
}

/* Compute the learned jump at `now` from the ring: the growth rule's
 * block for the second largest of the lengths recorded within decay_ms
 * (so a move takes it as it is), and when it next changes by ageing
 * (when the older of the two largest ages out). Threads that race here
 * store results from about the same ring; either is as good. */
static size_t bw__jump_update(bw_pool *p, uint64_t now)
{
    size_t v[BW__RECENT], j = 0;
    uint64_t ms[BW__RECENT], age = p->opt.decay_ms, until = UINT64_MAX;
    unsigned i, k = 0, a, b;
    for (i = 0; i < BW__RECENT; i++) {
        ms[k] = atomic_load_explicit(&p->big[i].ms, memory_order_relaxed);
        v[k] = atomic_load_explicit(&p->big[i].len, memory_order_relaxed);
        k += v[k] != 0 && (age == BW_DECAY_NEVER || now - ms[k] < age || ms[k] > now);
    }
    if (k >= 2) {
        bw__top2(v, k, &a, &b);
        j = bw__grow_size(p, bw__capped(p, v[b])); /* a block size: moves take it as is */
        if (age != BW_DECAY_NEVER) until = (ms[a] < ms[b] ? ms[a] : ms[b]) + age;
    }
    atomic_store_explicit(&p->jump_until, until, memory_order_relaxed);
    atomic_store_explicit(&p->jump, j, memory_order_relaxed);
    return j;
}

/* The learned jump ages at the clock reads the pool makes anyway, never
 * by one of its own (bufwriter.h, jump_floor): a slow call, a job's end
 * that records, a return above the small classes, bw_pool_get_stats. A
 * move used to read the clock to age it (about 6 ns a read here, one of
 * the two a repeated job paid). Now the first job after an idle period
 * may still go towards a size nobody has needed for decay_ms, within the
 * bound on fresh memory, and its own clock read (its end, or the return
 * of the block the jump gave it, above the small classes) forgets it. */
BW__INTERNAL void bw__jump_age(bw_pool *p, uint64_t now)
{
    if (now >= atomic_load_explicit(&p->jump_until, memory_order_relaxed))
        (void)bw__jump_update(p, now);
}

BW__INTERNAL uint64_t bw__learn_record(bw_pool *p, size_t len)
{
    unsigned i;
    if (len == 0) return 0;
    if (p->learn) {
        i = atomic_fetch_add_explicit(&p->recent_next, 1, memory_order_relaxed);
        atomic_store_explicit(&p->recent[i % BW__RECENT], len, memory_order_relaxed);
    }
    if (p->learn_growth && len > p->opt.jump_floor) {
        uint64_t now = bw__now_ms(), age = p->opt.decay_ms, was_ms;
        size_t was;
        /* The next slot by a load and a store, not a read-modify-write:
         * threads that end jobs at the same instant may write one slot and
         * lose a record, which a statistic of the last 16 lengths shrugs
         * off (the next job records again), while the locked add cost
         * every job about 6 ns, a third of a 64 KiB job's cost over its
         * memcpy. */
        i = atomic_load_explicit(&p->big_next, memory_order_relaxed);
        atomic_store_explicit(&p->big_next, i + 1, memory_order_relaxed);
        i %= BW__RECENT;
        was = atomic_load_explicit(&p->big[i].len, memory_order_relaxed);
        was_ms = atomic_load_explicit(&p->big[i].ms, memory_order_relaxed);
        /* The time first: a reader that sees the new length sees a time
         * at least as new (or the slot's old one: then it ages early). */
        atomic_store_explicit(&p->big[i].ms, now, memory_order_relaxed);
        atomic_store_explicit(&p->big[i].len, len, memory_order_relaxed);
        /* A stream of similar jobs replaces a length that still counted
         * with the same one: the lengths that count are the same, so is
         * the statistic, and the time it next changes by ageing can only
         * be later (the stored one recomputes it no later than due). The
         * recomputation cost a 64 KiB job 530 of its 9,400 instructions. */
        if (was == len && (age == BW_DECAY_NEVER || now - was_ms < age || was_ms > now))
            bw__jump_age(p, now);
        else
            bw__jump_update(p, now);
        return now;
    }
    return 0;
}

/* BW_POOL_LEARN_SIZE: the second largest of the last 16 lengths; 0 when
 * off or fewer than two are recorded. */
BW__INTERNAL size_t bw__learned(bw_pool *p)
{
    size_t v[BW__RECENT];
    unsigned i, k = 0, a, b;
    if (!p->learn) return 0;
    for (i = 0; i < BW__RECENT; i++) {
        v[k] = atomic_load_explicit(&p->recent[i], memory_order_relaxed);
        k += v[k] != 0;
    }
    if (k < 2) return 0;
    bw__top2(v, k, &a, &b);
    return bw__capped(p, v[b]);
}

/* The learned jump as of now, for bw_pool_get_stats: aged by a clock
 * read of its own. */
BW__INTERNAL size_t bw__learned_large(bw_pool *p)
{
    if (atomic_load_explicit(&p->jump, memory_order_relaxed) != 0) bw__jump_age(p, bw__now_ms());
    return atomic_load_explicit(&p->jump, memory_order_relaxed);
}

/* The block on the way to `target` that a writer needing `need` bytes may
 * take fresh: target when it is at most BW__BOUND x need, else
 * target / 16^k for the least k that fits (both powers of two by the
 * growth rule), so that every later move can reach target in one step. */
static size_t bw__toward(const bw_pool *p, size_t target, size_t need)
{
    size_t t = bw__grow_size(p, target), bound;
    if (t == 0) return 0;
    bound = need <= BW__MAX_BLOCK / BW__BOUND ? need * BW__BOUND : BW__MAX_BLOCK;
    while (t > bound) t /= BW__BOUND;
    return t;
}

/* Where the pool's blocks from BW__MAP_MIN (2 MiB) up are huge-page
 * mappings it can widen in place (bw__pool_reserves), a fresh climb stops
 * at BW__MAP_MIN / BW__BOUND (128 KiB), the largest block whose next step
 * may be a huge-page mapping within the bound: the climb goes 16 KiB,
 * 128 KiB, then a 2 MiB window of a reservation. Climbing to 256 KiB first
 * cost a first 10 MiB job 32 more 4 KiB page faults (12-20 us each on the
 * VM of bench/BENCHMARKS.md) than the bound asks for. */
static size_t bw__fresh_stop(const bw_pool *p, size_t cap, size_t target)
{
#ifdef BW__MAP_MIN
    const size_t stop = BW__MAP_MIN / BW__BOUND;
    if (bw__pool_reserves(p) && cap < stop && target > stop) return stop;
#else
    (void)p, (void)cap;
#endif
    return target;
}

/* A contiguous writer's first block or move (see the top of this file and
 * bufwriter.h's bw_init): its first block (min_first_block, the learned
 * starting size), else the growth rule; then, for a move or a first block
 * for more than min_first_block (not a small message), as far towards the
 * learned jump (or, for a move in a fresh pool, 16x past the floor) as the
 * bound allows, and the learned jump itself as the warm size: a stream of
 * 1 MiB jobs in 8 KiB writes then takes its idle 1 MiB block at the first
 * move and copies 8 KiB. */
static int bw__size_contig(bw_pool *p, const bw__size_req *r, bw__size *out)
{
    size_t want = r->n, size, need, target, t;
    int rc;
    if (r->cap == 0) {
        size_t first = p->learn ? bw__learned(p) : 0;
        if (first < p->opt.min_first_block) first = p->opt.min_first_block;
        if (first > want) want = first;
    }
    out->learned = p->learn && (r->cap == 0 || r->external);
    if (r->cap == 0 && want <= p->opt.max_pooled_size) {
        size = bw__class_size(p, want); /* want >= min_first_block */
    } else {
        rc = bw__pool_grow(p, r->held, want, r->cap, &size);
        if (rc != BW_OK) return rc;
    }
    need = r->held + r->n; /* bw__pool_grow checked the sum */
    /* What the writer is about to fill: the growth rule's block on a move,
     * not the learned or climbed one that may follow (bw__size's fill). */
    out->fill = r->cap == 0 ? need : size;
    if (r->external && p->learn) {
        /* Out of the caller's buffer: its first block of the pool's, so the
         * learned size as for a writer that started with none. */
        size_t first = bw__grow_size(p, bw__learned(p));
        if (first > size) size = first;
    }
    out->size = size;
    if (!p->learn_growth || (r->cap == 0 && need <= p->opt.min_first_block)) return BW_OK;
    out->learned = true;
    target = atomic_load_explicit(&p->jump, memory_order_relaxed); /* a block size */
    if (target > size) {
        /* Warm: the learned size itself, if the pool has one idle. */
        out->warm = target;
    } else if (target == 0 && r->cap != 0 && r->cap <= p->opt.max_pooled_size &&
               size > p->opt.jump_floor) {
        /* Fresh: 16x from the floor, up to the threshold. */
        target = r->cap > p->opt.jump_floor ? r->cap : p->opt.jump_floor;
        target = target <= p->opt.max_learned_size / BW__BOUND ? target * BW__BOUND
                                                              : p->opt.max_learned_size;
        target = bw__fresh_stop(p, r->cap, target);
    }
    if (target > size) {
        t = bw__toward(p, target, need);
        if (t > size) out->size = t;
    }
    if (out->warm <= out->size) out->warm = 0;
    return BW_OK;
}

/* A segmented writer's next block for n contiguous bytes (its trailer
 * included) after a block of r->cap (0: its first), the writer holding
 * r->held bytes: max(the growth rule's size for n, chain_block_size,
 * min(2 x prev, the growth rule's size for held + n)). Doubling only as
 * far as the held bytes justify: a growing writer holds what its blocks
 * did, so its blocks double (O(log n) of them), while a writer that
 * consumes as it goes (a queue, a socket's backlog) stays at the size of
 * what it holds; 0.4 doubled on whatever was held, and a queue of at most
 * 1,100 bytes ended with a 32 MiB block. Blocks above the threshold are
 * kept as large blocks when they come back, so a segmented writer keeps
 * doubling there while its large blocks (r->large_held bytes in
 * r->large_count blocks) still fit the large retention bounds, then takes
 * the largest power of two that fits: a 64 MiB job is ten pooled blocks
 * and six large ones that all come back to the next job (with 1 MiB
 * blocks only 32 of its 64 were kept, max_blocks_per_class, and every job
 * paid for 32 MiB of fresh pages). Past the bounds it doubles on, as a
 * contiguous writer does: large blocks are huge-page mappings (alloc.c),
 * so a 256 MiB job costs about a fresh mapping of its size, where
 * threshold-sized blocks from malloc cost 4-5x that in page faults.
 * Without large retention, threshold-sized blocks, which the classes keep
 * for the next job. At least the writer's own block size (r->first,
 * bw_set_block_size), else the pool's chain_block_size. */
static size_t bw__size_seg(const bw_pool *p, const bw__size_req *r)
{
    size_t prev = r->cap, need = r->n, len = r->held, held = r->large_held, first;
    size_t want = prev > BW__MAX_BLOCK / 2 ? BW__MAX_BLOCK : 2 * prev, room, fit;
    const size_t max = p->opt.max_pooled_size;
    fit = bw__grow_size(p, len < BW__MAX_BLOCK - need ? len + need : BW__MAX_BLOCK);
    if (fit != 0 && want > fit) want = fit;
    first = r->first != 0 ? r->first : p->opt.chain_block_size;
    if (want < first) want = first;
    if (want > max) {
        if (!p->keep_large) {
            want = max;
        } else if (r->large_count < p->opt.max_large_blocks && held < p->opt.max_large_bytes) {
            room = p->opt.max_large_bytes - held;
            if (want > room) {
                room = (size_t)1 << bw__log2(room); /* the largest power of two that fits */
                want = room > max ? room : max;
            }
        }
    }
    return want > need ? want : need;
}

/* The smallest window: a small job in a large block zeroes a page. */
#define BW__ZERO_STEP ((size_t)4096)

/* A window (mode_contig.c says what it is for) in a block of r->block
 * bytes for r->n more bytes after r->held, the window being r->cap: by
 * the growth rule, so capacities stay the sizes the rule gives (room for
 * held + n, at least twice cap), at least BW__ZERO_STEP; and the whole
 * block when the rule's size is more than half of it (or past what it
 * can represent), so widening a window at least doubles it as the rule
 * does: a block of an exact size (BW_POOL_BYPASS rents what is asked
 * for, 4205 bytes for a learned 4205) less than twice the rule's size is
 * taken whole (widening 4096 to 4205 broke the rule). */
static size_t bw__size_window(const bw_pool *p, const bw__size_req *r)
{
    size_t n = r->n, size;
    if (r->held < BW__ZERO_STEP && n < BW__ZERO_STEP - r->held) n = BW__ZERO_STEP - r->held;
    if (bw__pool_grow(p, r->held, n, r->cap, &size) != BW_OK) return r->block;
    return size <= r->block / 2 ? size : r->block;
}

/* Every size a writer gets, decided here (the request kinds: pool_writer.h). */
BW__INTERNAL int bw__pool_size(bw_pool *p, const bw__size_req *r, bw__size *out)
{
    size_t n = r->n, learned, mask;
    int rc;
    out->size = out->warm = out->fill = 0;
    out->learned = false;
    switch (r->kind) {
    case BW__SIZE_CONTIG:
        return bw__size_contig(p, r, out);
    case BW__SIZE_START:
        /* bw_init's initial capacity, or the learned size when larger. */
        learned = bw__learned(p);
        out->learned = p->learn;
        return bw__pool_grow(p, 0, learned > n ? learned : n, 0, &out->size);
    case BW__SIZE_SEG:
        n = bw__size_seg(p, r);
        break;
    case BW__SIZE_WINDOW:
        out->size = bw__size_window(p, r);
        return BW_OK;
    default: /* BW__SIZE_BLOCK */
        break;
    }
    /* By the growth rule, rounded up to r->align (a segmented block: a
     * rent of exactly that size, BW_POOL_BYPASS or above the threshold,
     * may not be aligned). */
    rc = bw__pool_grow(p, 0, n, 0, &n);
    if (rc != BW_OK) return rc;
    mask = (r->align | (r->align == 0)) - 1;
    if (n > BW__MAX_BLOCK - mask) return BW_EOVERFLOW;
    out->size = (n + mask) & ~mask;
    return BW_OK;
}

/* Whether a contiguous writer's final length teaches the pool: above
 * this. The two learners of bw__learn_record: BW_POOL_LEARN_SIZE takes
 * every length, the learned jump those past the floor. */
static size_t bw__learn_above(const bw_pool *p)
{
    return p->learn ? 0 : p->learn_growth ? p->opt.jump_floor : SIZE_MAX;
}

/* The writer's shortcuts, asked of bw__pool_size once at creation: a small
 * message's first block is what a first write of min_first_block bytes
 * gets (the same for every smaller one), kept only when no learned
 * statistic decided it and its writers cannot teach the pool (at most
 * learn_above): then the size rule and bw__learn_record have nothing to
 * say about such a writer, and the inline paths skip both. */
BW__INTERNAL void bw__pool_shortcuts(bw_pool *p)
{
    bw__size_req r = {.kind = BW__SIZE_CONTIG, .n = p->opt.min_first_block};
    bw__size s;
    p->learn_above = bw__learn_above(p);
    p->first_block = bw__pool_size(p, &r, &s) == BW_OK && !s.learned && s.warm == 0 &&
                             s.size <= p->learn_above
                         ? s.size
                         : 0;
    p->first_class = bw__class_index(p, p->first_block);
    /* The thread cache serves it inline only when its class is cached. */
    p->first_fast = p->first_block - 1 < p->fast_rent_limit ? p->first_block : 0;
}
/*************** End file pool/growth.c *************************************/

/*************** Begin file pool/large.c ************************************/
/* large.c - what a pool keeps of its writers' big jobs:
 *
 * Large retention (on by default): blocks above the threshold are kept
 * when they come back, bounded in bytes and count, oldest evicted first, so
 * a steady stream of 10 MiB jobs reuses warm memory instead of asking the
 * backing allocator for fresh pages each time (jemalloc hands blocks of
 * 8 MiB and more back to the kernel at once: every job then pays page
 * faults, several times the cost of the copy). A rent above the threshold is
 * served from a kept block of exactly that size; writers only ask for powers
 * of two there, so sizes repeat.
 *
 * Kept blocks decay: one unused for decay_ms goes back to the allocator.
 *
 * A writer's large blocks also move here: a reservation widened in place
 * (bw__pool_rent_reserve, bw__pool_cut) and a move that takes a kept block
 * or the hook's realloc (bw__pool_regrow).
 *
 * The sizes writers ask for, and what the pool learns, are in growth.c. */
/* #include "pool_writer.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdlib.h>
#include <string.h>

#define BW__EVICT_MAX 8 /* evictions per keep; the rest on later calls */

BW__INTERNAL bool bw__large_init(bw_pool *p)
{
    if (!p->keep_large) return true;
    if (!bw__mutex_init(&p->large_lock)) return false;
    p->large = (bw__large *)calloc(p->opt.max_large_blocks, sizeof *p->large);
    if (p->large == NULL) {
        bw__mutex_destroy(&p->large_lock);
        return false;
    }
    return true;
}

BW__INTERNAL void *bw__large_take(bw_pool *p, size_t size)
{
    void *b = NULL;
    size_t i;
    if (!p->keep_large) return NULL;
    bw__mutex_lock(&p->large_lock);
    for (i = p->nlarge; i-- > 0;) { /* newest first: the warmest */
        if (p->large[i].size == size) {
            b = p->large[i].block;
            memmove(&p->large[i], &p->large[i + 1], (p->nlarge - i - 1) * sizeof *p->large);
            p->nlarge--;
            atomic_fetch_sub_explicit(&p->large_bytes, size, memory_order_relaxed);
            break;
        }
    }
    bw__mutex_unlock(&p->large_lock);
    if (b != NULL && (p->opt.flags & BW_POOL_ZERO_ON_RETURN)) BW__TRACK_DEFINED(b, size);
    else if (b != NULL) BW__TRACK_UNDEFINED(b, size);
    return b;
}

BW__INTERNAL bool bw__large_keep(bw_pool *p, void *b, size_t size, uint64_t now)
{
    bw__large evicted[BW__EVICT_MAX];
    size_t nev = 0, i;
    if (!p->keep_large || size > p->opt.max_large_bytes) return false;
    BW__TRACK_NOACCESS(b, size); /* (zeroed by the caller under ZERO_ON_RETURN) */
    bw__mutex_lock(&p->large_lock);
    /* Make room: evict the oldest (at most a handful per call; the rest of
     * an oversized backlog goes on later calls). */
    while (p->nlarge > 0 &&
           (p->nlarge == p->opt.max_large_blocks ||
            atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size >
                p->opt.max_large_bytes) &&
           nev < BW__EVICT_MAX) {
        evicted[nev++] = p->large[0];
        atomic_fetch_sub_explicit(&p->large_bytes, p->large[0].size, memory_order_relaxed);
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
    }
    if (p->nlarge < p->opt.max_large_blocks &&
        atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size <=
            p->opt.max_large_bytes) {
        p->large[p->nlarge].block = b;
        p->large[p->nlarge].size = size;
        p->large[p->nlarge].since = now;
        p->nlarge++;
        atomic_fetch_add_explicit(&p->large_bytes, size, memory_order_relaxed);
        b = NULL;
    }
    bw__mutex_unlock(&p->large_lock);
    if (b != NULL) BW__TRACK_DEFINED(b, size); /* not kept: the caller frees it */
    for (i = 0; i < nev; i++) bw__backing_free(p, NULL, evicted[i].block, evicted[i].size);
    return b == NULL;
}

/* Give back the kept blocks unused for decay_ms (oldest first). */
BW__INTERNAL void bw__large_decay(bw_pool *p, uint64_t now)
{
    uint64_t bytes = 0;
    if (!p->keep_large) return;
    for (;;) {
        bw__large e;
        bw__mutex_lock(&p->large_lock);
        if (p->nlarge == 0 || now - p->large[0].since < p->opt.decay_ms) {
            bw__mutex_unlock(&p->large_lock);
            break;
        }
        e = p->large[0];
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        bw__mutex_unlock(&p->large_lock);
        bw__backing_free(p, NULL, e.block, e.size);
        bytes += e.size;
    }
    if (bytes) BW__POOL_ADD(p, decayed, bytes);
}

BW__INTERNAL void bw__large_free_all(bw_pool *p)
{
    if (!p->keep_large) return;
    for (;;) {
        bw__large e;
        bw__mutex_lock(&p->large_lock);
        if (p->nlarge == 0) {
            bw__mutex_unlock(&p->large_lock);
            return;
        }
        e = p->large[--p->nlarge];
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        bw__mutex_unlock(&p->large_lock);
        bw__backing_free(p, NULL, e.block, e.size);
    }
}

/* Reservations and moves of large blocks ---------------------------------- */

BW__INTERNAL void *bw__pool_rent_reserve(bw_pool *p, size_t size, size_t reserve,
                                         size_t *capacity)
{
#ifdef BW__MAP_MIN
    bw__tcache *tc;
    uint64_t now;
    void *b;
    if (p->reserves && size >= BW__MAP_MIN && size > p->opt.max_pooled_size &&
        reserve > size) {
        tc = bw__slow_enter(p, &now);
        if ((b = bw__large_take(p, size)) != NULL) {
            /* Idle memory first: it costs no fresh pages. */
            BW__COUNT(p, tc, hits, 1);
            BW__COUNT(p, tc, large_hits, 1);
            BW__COUNT(p, tc, out_bytes, size);
            *capacity = size;
            return b;
        }
        /* Only where growth would take fresh memory all the way: with
         * blocks kept above the threshold, the writer's next moves take
         * them (warm memory beats fresh pages, even with a copy), and a
         * reservation would fault in fresh pages every job. */
        if (atomic_load_explicit(&p->large_bytes, memory_order_relaxed) == 0 &&
            (b = bw__backing_alloc(p, tc, reserve)) != NULL) {
            BW__COUNT(p, tc, misses, 1);
            BW__COUNT(p, tc, out_bytes, reserve);
            *capacity = reserve;
            return b;
        }
        /* No address space for it: the block alone. */
    }
#else
    (void)reserve;
#endif
    return bw_pool_rent(p, size, capacity);
}

BW__INTERNAL void bw__pool_cut(bw_pool *p, void *block, size_t capacity, size_t size)
{
#ifdef BW__MAP_MIN
    bw__tcache *tc = p->use_tcache ? bw__tcache_get(p) : NULL;
    bw__unmap_tail(block, capacity, size);
    BW__COUNT(p, tc, out_bytes, (uint64_t)size - (uint64_t)capacity);
#else
    (void)p, (void)block, (void)capacity, (void)size;
#endif
}

BW__INTERNAL void *bw__pool_regrow(bw_pool *p, void *b, size_t old_cap, size_t len,
                                   const bw__size *s, size_t *new_cap)
{
    bw__tcache *tc = p->use_tcache ? bw__tcache_get(p) : NULL;
    void *nb = NULL;
    if (s->warm > s->size && (nb = bw__large_take(p, s->warm)) != NULL) *new_cap = s->warm;
    if (nb == NULL && (nb = bw__large_take(p, s->size)) != NULL) *new_cap = s->size;
    if (nb != NULL) {
        /* Warm memory: a copy of len bytes costs less than fresh pages. */
        BW__COUNT(p, tc, hits, 1);
        BW__COUNT(p, tc, large_hits, 1);
        BW__COUNT(p, tc, out_bytes, *new_cap);
        if (p->checked) bw__check_rented(p, nb, *new_cap);
        memcpy(nb, b, len);
        (void)bw_pool_return(p, b, old_cap);
        return nb;
    }
    *new_cap = s->size;
    if (p->checked && !bw__check_return(p, b, old_cap, false)) return NULL;
    nb = p->alloc.realloc(p->alloc.ctx, b, old_cap + p->extra, *new_cap + p->extra);
    if (nb == NULL) {
        if (p->checked) bw__check_rented(p, b, old_cap); /* still the caller's */
        return NULL;
    }
    if (p->checked) {
        bw__canary_set(nb, *new_cap);
        bw__check_freed(p, b);
        bw__check_rented(p, nb, *new_cap);
    }
    /* One realloc is one backing free and one backing allocation, one
     * return and one rent: the counters stay balanced. */
    BW__COUNT(p, tc, backing_allocs, 1);
    BW__COUNT(p, tc, backing_frees, 1);
    BW__COUNT(p, tc, misses, 1);
    BW__COUNT(p, tc, returns, 1);
    BW__COUNT(p, tc, out_bytes, (uint64_t)*new_cap - (uint64_t)old_cap);
    return nb;
}
/*************** End file pool/large.c **************************************/

/*************** Begin file pool/pool.c *************************************/
/* pool.c - the size-class pool: create/destroy, rent/return, the shared
 * level, trim and stats. Thread caches live in tcache.c, checked mode in
 * check.c, the backing allocators in alloc.c, kept large blocks and
 * reservations in large.c. */
/* #include "pool_writer.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdlib.h>
#include <string.h>

/* Zeroing that the compiler may not drop even though the block is not read
 * again before it is handed out (what explicit_bzero does, without needing
 * _GNU_SOURCE, so the single header works whatever the user included
 * first): the empty asm claims to read the memory. */
BW__INTERNAL void bw__zero(void *b, size_t n)
{
    memset(b, 0, n);
#if defined(__GNUC__) || defined(__clang__)
    __asm__ __volatile__("" : : "r"(b) : "memory");
#else
    {
        volatile unsigned char *v = (volatile unsigned char *)b;
        size_t i;
        for (i = 0; i < n; i++) v[i] = 0;
    }
#endif
}

/* Backing allocator ----------------------------------------------------- */

/* In checked mode every backing block carries a canary after its usable
 * bytes (p->extra); the allocator always gets the same total size back. */
BW__INTERNAL void *bw__backing_alloc(bw_pool *p, bw__tcache *tc, size_t size)
{
    void *b = p->alloc.alloc(p->alloc.ctx, size + p->extra);
    if (b == NULL) return NULL;
    if (p->extra) bw__canary_set(b, size);
    BW__COUNT(p, tc, backing_allocs, 1);
    return b;
}

BW__INTERNAL void bw__backing_free(bw_pool *p, bw__tcache *tc, void *b, size_t size)
{
    /* Accessible again before the hook sees it: a custom allocator may
     * touch the memory it is given back. */
    BW__TRACK_DEFINED(b, size);
    if (p->checked) bw__check_freed(p, b);
    p->alloc.free(p->alloc.ctx, b, size + p->extra);
    BW__COUNT(p, tc, backing_frees, 1);
}

BW__INTERNAL void bw__frees_flush(bw_pool *p, bw__frees *f)
{
    size_t i;
    for (i = 0; i < f->n; i++) bw__backing_free(p, NULL, f->e[i].block, f->e[i].size);
    f->n = 0;
}

/* Retention budget ------------------------------------------------------ */

BW__INTERNAL bool bw__budget_take(bw_pool *p, size_t n)
{
    size_t cur = atomic_load_explicit(&p->reserved, memory_order_relaxed);
    do {
        if (cur > p->opt.max_retained_bytes || n > p->opt.max_retained_bytes - cur) return false;
    } while (!atomic_compare_exchange_weak_explicit(&p->reserved, &cur, cur + n,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

BW__INTERNAL void bw__budget_give(bw_pool *p, size_t n)
{
    if (n) atomic_fetch_sub_explicit(&p->reserved, n, memory_order_relaxed);
}

/* Shared level ---------------------------------------------------------- */

BW__INTERNAL void *bw__shared_pop(bw_pool *p, unsigned ci)
{
    bw__class *c = &p->cls[ci];
    void *b = NULL;
    bw__mutex_lock(&c->lock);
    if (c->count > 0) b = c->stack[--c->count].block;
    bw__mutex_unlock(&c->lock);
    if (b != NULL) {
        size_t cap = p->opt.min_block_size << ci;
        atomic_fetch_sub_explicit(&p->shared_bytes, cap, memory_order_relaxed);
        bw__budget_give(p, cap);
    }
    return b;
}

BW__INTERNAL bool bw__shared_push(bw_pool *p, unsigned ci, void *b, uint64_t now)
{
    bw__class *c = &p->cls[ci];
    size_t cap = p->opt.min_block_size << ci;
    bool kept = false;
    bw__mutex_lock(&c->lock);
    if (c->count < p->opt.max_blocks_per_class) {
        if (c->count == c->alloc) {
            /* Grow the stack geometrically up to the bound; if even that
             * small allocation fails, the block is simply not retained. */
            size_t n = c->alloc ? c->alloc * 2 : 8;
            bw__kept *s;
            if (n > p->opt.max_blocks_per_class) n = p->opt.max_blocks_per_class;
            s = (bw__kept *)realloc(c->stack, n * sizeof *s);
            if (s != NULL) { c->stack = s; c->alloc = n; }
        }
        if (c->count < c->alloc && bw__budget_take(p, cap)) {
            c->stack[c->count].block = b;
            c->stack[c->count].since = now;
            c->count++;
            kept = true;
        }
    }
    bw__mutex_unlock(&c->lock);
    if (kept) atomic_fetch_add_explicit(&p->shared_bytes, cap, memory_order_relaxed);
    return kept;
}

/* Give back the blocks of the shared level that came back before `before`
 * (every block for UINT64_MAX), oldest first, freeing them outside the
 * lock. Returns the bytes given back. */
static uint64_t bw__shared_release(bw_pool *p, uint64_t before)
{
    bw__frees f;
    uint64_t bytes = 0;
    unsigned ci;
    f.n = 0;
    for (ci = 0; ci < p->nclasses; ci++) {
        bw__class *c = &p->cls[ci];
        size_t cap = p->opt.min_block_size << ci, k;
        do {
            bw__mutex_lock(&c->lock);
            for (k = 0; k < c->count && k < BW__FREES_MAX && c->stack[k].since < before; k++) {
                f.e[f.n].block = c->stack[k].block;
                f.e[f.n].size = cap;
                f.n++;
            }
            if (k != 0) {
                memmove(c->stack, c->stack + k, (c->count - k) * sizeof *c->stack);
                c->count -= k;
                atomic_fetch_sub_explicit(&p->shared_bytes, k * cap, memory_order_relaxed);
                bw__budget_give(p, k * cap);
            }
            bw__mutex_unlock(&c->lock);
            bytes += (uint64_t)k * cap;
            bw__frees_flush(p, &f);
        } while (k == BW__FREES_MAX);
    }
    return bytes;
}

BW__INTERNAL void bw__decay(bw_pool *p, bw__tcache *tc, uint64_t now)
{
    uint64_t due = atomic_load_explicit(&p->next_decay, memory_order_relaxed);
    if (tc != NULL) bw__tcache_decay(p, tc, now);
    /* One thread at a time sweeps, at most every decay_ms / 8. */
    if (now < due || !atomic_compare_exchange_strong_explicit(
                         &p->next_decay, &due, now + p->opt.decay_ms / 8 + 1,
                         memory_order_relaxed, memory_order_relaxed))
        return;
    if (now >= p->opt.decay_ms) {
        uint64_t bytes = bw__shared_release(p, now - p->opt.decay_ms + 1);
        if (bytes) BW__POOL_ADD(p, decayed, bytes);
        /* Freed into malloc is not yet given back (glibc keeps it in its
         * heaps): worth a malloc_trim when it is at least a megabyte. At
         * most once per sweep, that is every decay_ms / 8. */
        if (bytes >= ((uint64_t)1 << 20)) bw__alloc_trim(&p->alloc);
        bw__large_decay(p, now);
    }
}

/* Create / destroy ------------------------------------------------------ */

/* The pool's own bookkeeping, once it holds no block: one teardown for
 * destroy and for a create that failed half way. */
static void bw__pool_free(bw_pool *p)
{
    unsigned ci;
    if (p->large != NULL) {
        bw__mutex_destroy(&p->large_lock);
        free(p->large);
    }
    if (p->check != NULL) bw__check_destroy(p);
    for (ci = 0; ci < p->nclasses; ci++) {
        bw__mutex_destroy(&p->cls[ci].lock);
        free(p->cls[ci].stack);
    }
    free(p);
}

/* The one reader of bw_pool_options (BW__OPTIONS): *r is *o (NULL: all
 * zeros) with every zero option replaced by its default. BW_EINVAL for
 * options no pool can have. */
static int bw__options_resolve(bw_pool_options *r, const bw_pool_options *o)
{
    static const bw_pool_options zeros;
    size_t max, min;
    *r = o != NULL ? *o : zeros;
#define BW__RESOLVE(name, type, dflt) if (r->name == 0) r->name = (type)(dflt);
    BW__OPTIONS(BW__RESOLVE)
#undef BW__RESOLVE
    max = r->max_pooled_size;
    min = r->min_block_size;
    /* Blocks never exceed PTRDIFF_MAX bytes, so neither may a class. */
    if (!bw__is_pow2(max) || !bw__is_pow2(min) || min < BW__MIN_CLASS || min > max ||
        max > (size_t)PTRDIFF_MAX / 2 + 1 || r->allocator->alloc == NULL ||
        r->allocator->free == NULL || (r->flags & ~(unsigned)BW__ALL_FLAGS) != 0 ||
        (o != NULL && o->min_first_block > max) || r->chain_block_size > BW__MAX_BLOCK / 2 + 1)
        return BW_EINVAL;
    if (r->min_first_block > max) r->min_first_block = max;
    /* A threshold below the default jump floor keeps the floor at the
     * threshold (where 0.2 jumped); a floor set by the caller stays. */
    if ((o == NULL || o->jump_floor == 0) && r->jump_floor > max) r->jump_floor = max;
    return BW_OK;
}

/* Everything the pool derives from its options, decided once: the classes,
 * the fast paths' limits, the sizes writers get, and the shortcuts a small
 * message reads (bw__pool_first_block, bw__pool_learns). */
static void bw__pool_derive(bw_pool *p, const bw_pool_options *caller)
{
    bw_pool_options *o = &p->opt;
    size_t top = o->max_pooled_size < BW__TCACHE_MAX ? o->max_pooled_size : BW__TCACHE_MAX;
    p->alloc = *o->allocator;
    o->allocator = &p->alloc;
    p->min_shift = bw__log2(o->min_block_size);
    p->nclasses = bw__log2(o->max_pooled_size) - p->min_shift + 1;
    p->use_tcache = (o->flags & BW_POOL_NO_THREAD_CACHE) == 0;
    p->checked = (o->flags & BW_POOL_CHECKED) != 0 || bw__check_env("BW_CHECKED");
#ifdef BW_DEBUG
    p->checked = true;
#endif
    p->extra = p->checked ? BW__CANARY_SIZE : 0;
    p->bypass = (o->flags & BW_POOL_BYPASS) != 0 || bw__check_env("BW_BYPASS");
    /* Thread caches serve the classes up to BW__TCACHE_MAX; checked mode,
     * no thread cache and zeroing take the slow paths. */
    if (top < o->min_block_size) top = o->min_block_size;
    p->tc_classes = bw__log2(top) - p->min_shift + 1;
    p->fast_rent_limit =
        (p->checked || p->bypass || !p->use_tcache || (o->flags & BW_POOL_ZERO_ON_RETURN))
            ? 0 : top;
    p->detach_copy_cap =
        p->fast_rent_limit < BW__DETACH_COPY_MAX ? p->fast_rent_limit : BW__DETACH_COPY_MAX;
    /* Returns of the medium classes (above BW__TCACHE_SMALL) leave the
     * inline path for bw__return_medium, which pushes them as
     * the inline path does and reads the coarse clock (3.5 ns): decay then
     * ages a big block from its return, which a clock-free return could
     * not tell it (a 256 KiB block returned on the fast path, then idle
     * 4 x decay_ms, went back only at a slow call decay_ms after the next
     * one). Small returns stay inline and clock-free. */
    p->medium_return_span = p->fast_rent_limit ? top - o->min_block_size + 1 : 0;
    p->fast_return_span = p->fast_rent_limit
                              ? (top < BW__TCACHE_SMALL ? top : BW__TCACHE_SMALL) -
                                    o->min_block_size + 1
                              : 0;
    o->min_first_block = bw_pool_class_size(p, o->min_first_block);
    /* The default is at least the first block of every writer. */
    o->chain_block_size = bw__grow_size(p, o->chain_block_size);
    if ((caller == NULL || caller->chain_block_size == 0) &&
        o->chain_block_size < o->min_first_block)
        o->chain_block_size = o->min_first_block;
    p->learn = (o->flags & BW_POOL_LEARN_SIZE) != 0;
    p->learn_growth = (o->flags & BW_POOL_NO_LEARNED_GROWTH) == 0;
    p->keep_large = (o->flags & (BW_POOL_NO_LARGE_RETENTION | BW_POOL_BYPASS)) == 0 && !p->bypass;
    /* Reservations are the platform's mappings, cut in place: only for its
     * own blocks, exact sizes (no canary, no bypass), nothing to zero. */
    p->reserves = bw__alloc_maps(&p->alloc) && !p->checked && !p->bypass &&
                  (o->flags & BW_POOL_ZERO_ON_RETURN) == 0;
    bw__pool_shortcuts(p);
}

int bw_pool_create(bw_pool **out, const bw_pool_options *opts)
{
    bw_pool_options o;
    bw_pool *p;
    unsigned n, ci;
    int rc;

    if (out == NULL) return BW_EINVAL;
    *out = NULL;
    rc = bw__options_resolve(&o, opts);
    if (rc != BW_OK) return rc;
    n = bw__log2(o.max_pooled_size) - bw__log2(o.min_block_size) + 1;
    p = (bw_pool *)calloc(1, sizeof *p + n * sizeof(bw__class));
    if (p == NULL) return BW_ENOMEM;
    for (ci = 0; ci < n; ci++) {
        if (!bw__mutex_init(&p->cls[ci].lock)) {
            while (ci-- > 0) bw__mutex_destroy(&p->cls[ci].lock);
            free(p);
            return BW_ENOMEM;
        }
    }
    p->id = bw__next_pool_id();
    p->opt = o;
    bw__pool_derive(p, opts);
    if (!bw__large_init(p) || (p->checked && !bw__check_init(p))) {
        bw__pool_free(p);
        return BW_ENOMEM;
    }
    bw__pool_register(p);
    *out = p;
    return BW_OK;
}

void bw_pool_get_options(const bw_pool *pool, bw_pool_options *out)
{
    if (out == NULL) return;
    if (pool == NULL) pool = bw_pool_shared();
    if (pool == NULL) {
        (void)bw__options_resolve(out, NULL);
        return;
    }
    *out = pool->opt;
}

static bw_pool *_Atomic bw__shared_pool;

void bw_pool_destroy(bw_pool *pool)
{
    if (pool == NULL || pool == atomic_load_explicit(&bw__shared_pool, memory_order_acquire))
        return; /* the shared pool lives as long as the process */
    bw__pool_unregister(pool);
    bw__tcache_orphan_all(pool);
    (void)bw__shared_release(pool, UINT64_MAX);
    bw__large_free_all(pool);
    if (pool->checked) bw__check_destroy(pool); /* reports blocks still rented */
    bw__pool_free(pool);
}

static bw__mutex bw__shared_lock = BW__MUTEX_INIT;

BW__INTERNAL void bw__shared_lock_fork(bool lock)
{
    if (lock) bw__mutex_lock(&bw__shared_lock);
    else bw__mutex_unlock(&bw__shared_lock);
}

bw_pool *bw_pool_shared(void)
{
    bw_pool *p = atomic_load_explicit(&bw__shared_pool, memory_order_acquire);
    if (BW__LIKELY(p != NULL)) return p;
    bw__mutex_lock(&bw__shared_lock);
    p = atomic_load_explicit(&bw__shared_pool, memory_order_relaxed);
    if (p == NULL && bw_pool_create(&p, NULL) == BW_OK)
        atomic_store_explicit(&bw__shared_pool, p, memory_order_release);
    bw__mutex_unlock(&bw__shared_lock);
    return p;
}

size_t bw_pool_class_size(const bw_pool *pool, size_t min_size)
{
    if (pool == NULL || min_size > (size_t)PTRDIFF_MAX) return 0;
    if (pool->bypass) return min_size ? min_size : 1;
    if (min_size > pool->opt.max_pooled_size) return min_size;
    return pool->opt.min_block_size << bw__class_index(pool, min_size);
}

/* Rent / return --------------------------------------------------------- */
/* The fast paths serve a class from the calling thread's cache: no lock, no
 * atomic read-modify-write, no call. They cost about 20 instructions each
 * (a TLS load, the pool-id compare, one bit scan for the class, a slot pop
 * or push, two single-writer counter updates). Everything else (an empty
 * or full slot, one pop in BW__DECAY_POPS of a class, the shared level, the
 * backing allocator, above-threshold blocks, checked mode, zeroing, bad
 * arguments) goes to the slow path, kept out of line so the fast path
 * needs no stack frame. */

#if defined(__GNUC__) || defined(__clang__)
#  define BW__NOINLINE __attribute__((noinline))
#else
#  define BW__NOINLINE
#endif

BW__INTERNAL bw__tcache *bw__slow_enter(bw_pool *p, uint64_t *now)
{
    bw__tcache *tc = p->use_tcache ? bw__tcache_get(p) : NULL;
    *now = 0;
    if (p->opt.decay_ms != BW_DECAY_NEVER) {
        *now = bw__now_ms();
        bw__decay(p, tc, *now);
        bw__jump_age(p, *now);
    }
    return tc;
}

/* A block of at least min_size bytes from where the pool keeps them (the
 * thread's cache tc, the shared level, the kept large blocks), counted;
 * NULL when none is idle. *cap gets its size. */
static void *bw__rent_idle(bw_pool *p, bw__tcache *tc, size_t min_size, size_t *cap)
{
    void *b;
    if (min_size <= p->opt.max_pooled_size) {
        unsigned ci = bw__class_index(p, min_size);
        size_t n = tc != NULL && ci < p->tc_classes ? bw__tc_held(tc, ci) : 0;
        *cap = p->opt.min_block_size << ci;
        if (n > 0) /* counted by the pop */
            return bw__tc_take(&tc->cls[ci], n,
                               atomic_load_explicit(&tc->cls[ci].pop, memory_order_relaxed));
        b = bw__shared_pop(p, ci);
    } else {
        /* Above the threshold: a kept block of exactly min_size bytes. */
        *cap = min_size;
        b = bw__large_take(p, min_size);
        if (b != NULL) BW__COUNT(p, tc, large_hits, 1);
    }
    if (b == NULL) return NULL;
    BW__COUNT(p, tc, hits, 1);
    BW__COUNT(p, tc, out_bytes, *cap);
    return b;
}

/* idle: only a block the pool holds, never the backing allocator's: NULL
 * when there is none. fill: the bytes a fresh block gets faulted in at
 * once (bw__size's fill; 0: none); an idle block was written before.
 * *filled (when filled is not NULL): fill when a fresh block is longer
 * than it (its other pages untouched but by checked mode's fill), else
 * left as it is. */
static BW__NOINLINE void *bw__rent_slow(bw_pool *p, size_t min_size, size_t *capacity,
                                        bool idle, size_t fill, size_t *filled)
{
    bw__tcache *tc;
    uint64_t now;
    void *b;
    size_t cap;

    /* A pool switch (the thread's last cache is another pool's): find this
     * pool's cache in the thread's map and serve from it as the fast path
     * would, with no clock read or decay pass, which are for calls that
     * miss the cache. */
    if (bw__rent_fast_ok(p, min_size, capacity) &&
        atomic_load_explicit(&bw__tl_last->pool_id, memory_order_relaxed) != p->id &&
        (tc = bw__tcache_find(p)) != NULL &&
        (b = bw__tc_pop(p, tc, min_size, capacity)) != NULL)
        return b;
    if (capacity == NULL) return NULL;
    *capacity = 0;
    if (p == NULL || min_size > (size_t)PTRDIFF_MAX) return NULL;
    tc = bw__slow_enter(p, &now);

    if (!p->bypass && (b = bw__rent_idle(p, tc, min_size, &cap)) != NULL) {
        /* A retained block: accessible again (zeros under ZERO_ON_RETURN). */
        if (p->opt.flags & BW_POOL_ZERO_ON_RETURN) BW__TRACK_DEFINED(b, cap);
        else BW__TRACK_UNDEFINED(b, cap);
    } else if (idle) {
        return NULL;
    } else {
        /* A real allocation: exactly what was asked for (at least 1) in
         * bypass mode and above the threshold, else min_size's class. */
        cap = p->bypass || min_size > p->opt.max_pooled_size ? (min_size ? min_size : 1)
                                                              : bw_pool_class_size(p, min_size);
        b = bw__backing_alloc(p, tc, cap);
        if (b == NULL) return NULL;
        if (fill != 0) bw__populate(b, fill < cap ? fill : cap);
        if (fill != 0 && fill < cap && filled != NULL) *filled = fill;
        BW__COUNT(p, tc, misses, 1);
        BW__COUNT(p, tc, out_bytes, cap);
        /* Fresh memory holds whatever the allocator's last user left there. */
        if (p->opt.flags & BW_POOL_ZERO_ON_RETURN) bw__zero(b, cap);
    }
    if (p->checked) {
        bw__check_rented(p, b, cap);
        if (p->opt.flags & BW_POOL_FILL) memset(b, BW_FILL_RENTED, cap);
    }
    *capacity = cap;
    return b;
}

/* bw_pool_rent's fast path: a block of the calling thread's last cache,
 * when it is this pool's; NULL otherwise. */
static inline void *bw__rent_cached(bw_pool *p, size_t min_size, size_t *capacity)
{
    if (BW__LIKELY(bw__rent_fast_ok(p, min_size, capacity) &&
                   atomic_load_explicit(&bw__tl_last->pool_id, memory_order_relaxed) == p->id))
        return bw__tc_pop(p, bw__tl_last, min_size, capacity);
    return NULL;
}

void *bw_pool_rent(bw_pool *p, size_t min_size, size_t *capacity)
{
    void *b = bw__rent_cached(p, min_size, capacity);
    if (BW__LIKELY(b != NULL)) return b;
    return bw__rent_slow(p, min_size, capacity, false, 0, NULL);
}

/* The warm block is taken under the lock of the level that holds it (the
 * calling thread's own cache needs none), so of threads that race for one
 * idle block one gets it and the others rent s->size: a burst of small
 * jobs takes at most the blocks that were idle, and fresh memory within
 * the bound. */
BW__INTERNAL void *bw__pool_rent_fill(bw_pool *p, const bw__size *s, size_t *capacity,
                                      size_t *filled)
{
    void *b;
    if (s->warm > s->size) {
        /* A warm block in this thread's own cache is bw_pool_rent's pop: the
         * slow path's clock read and decay pass are for calls the cache
         * cannot serve (through them J's repeated 256 KiB job cost 1,419
         * instructions more than its memcpy, 768 without: make -C bench
         * callgrind). */
        if ((b = bw__rent_cached(p, s->warm, capacity)) != NULL) return b;
        if ((b = bw__rent_slow(p, s->warm, capacity, true, 0, NULL)) != NULL) return b;
    }
    /* bw_pool_rent's fast path, then its slow path told what to fill. */
    if ((b = bw__rent_cached(p, s->size, capacity)) != NULL) return b;
    return bw__rent_slow(p, s->size, capacity, false, s->fill, filled);
}

/* Reserve budget for one more slot of class ci in tc. A cache never
 * reserves more than BW_THREAD_CACHE_SLOTS slots per class, nor more than
 * BW__TCACHE_MEDIUM_BYTES in the classes above BW__TCACHE_SMALL; the
 * budget goes back on trim, decay and at thread exit (bw__tcache_unreserve). */
static bool bw__tcache_reserve(bw_pool *p, bw__tcache *tc, unsigned ci)
{
    size_t cap = p->opt.min_block_size << ci;
    bool medium = cap > BW__TCACHE_SMALL;
    if (tc->cls[ci].resv >= BW_THREAD_CACHE_SLOTS ||
        (medium && cap > BW__TCACHE_MEDIUM_BYTES - tc->medium) || !bw__budget_take(p, cap))
        return false;
    tc->cls[ci].resv++;
    if (medium) tc->medium += cap;
    return true;
}

/* A block coming back, checked: BW_EINVAL (reported in checked mode) for
 * one the pool holds already or a capacity no rent of this pool gives;
 * under BW_POOL_FILL a checked pool fills it, so all of it was written. */
static int bw__return_check(bw_pool *p, void *block, size_t capacity, bool pooled,
                            size_t *written)
{
    if (!p->bypass && BW__TRACK_IS_NOACCESS(block)) {
        /* Under AddressSanitizer a block the pool holds is poisoned: this
         * one came back before (or was never rented). In bypass mode
         * ASan's own double-free report, with its stacks, says more. */
        bw__report("bw_pool_return: block returned twice (it is poisoned: the pool holds it)",
                   block, capacity);
        return BW_EINVAL;
    }
    if ((pooled && (!bw__is_pow2(capacity) || capacity < p->opt.min_block_size)) ||
        capacity > (size_t)PTRDIFF_MAX || capacity == 0) {
        if (p->checked)
            bw__report("bw_pool_return: wrong capacity (no rent of this pool gives it)",
                       block, capacity);
        return BW_EINVAL;
    }
    if (p->checked) {
        if (!bw__check_return(p, block, capacity, pooled || p->keep_large))
            return BW_EINVAL;
        if (p->opt.flags & BW_POOL_FILL) {
            memset(block, BW_FILL_RETURNED, capacity);
            *written = capacity;
        }
    }
    return BW_OK;
}

/* written: how far from the block's start its user may have written since
 * it was handed out (capacity when the pool cannot know). Under
 * BW_POOL_ZERO_ON_RETURN every block is handed out all zeros, so zeroing
 * [0, written) makes it all zeros again. */
static BW__NOINLINE int bw__return_slow(bw_pool *p, void *block, size_t capacity,
                                        size_t written)
{
    bw__tcache *tc;
    uint64_t now;
    bool pooled;
    unsigned ci = 0;

    /* A pool switch: as in bw__rent_slow. */
    if (bw__return_fast_ok(p, block, capacity) &&
        atomic_load_explicit(&bw__tl_last->pool_id, memory_order_relaxed) != p->id &&
        (tc = bw__tcache_find(p)) != NULL &&
        bw__tc_push(p, tc, block, capacity))
        return BW_OK;
    if (p == NULL) return BW_EINVAL;
    if (block == NULL) return BW_OK;
    pooled = capacity <= p->opt.max_pooled_size && !p->bypass;
    if (bw__return_check(p, block, capacity, pooled, &written) != BW_OK) return BW_EINVAL;
    tc = bw__slow_enter(p, &now);
    /* Zeroed before it is kept or freed: one user's bytes never reach the
     * next renter, here or through the allocator. Only what was written:
     * the rest is still the zeros it was handed out with (a 20 KiB job in
     * a 64 MiB block costs a 20 KiB memset, not 64 MiB). */
    if (p->opt.flags & BW_POOL_ZERO_ON_RETURN)
        bw__zero(block, written < capacity ? written : capacity);

    if (pooled) {
        ci = bw__class_index(p, capacity);
        BW__TRACK_NOACCESS(block, capacity);
        if (tc != NULL && ci < p->tc_classes) {
            size_t n = bw__tc_held(tc, ci);
            bw__tc_class *c = &tc->cls[ci];
            if (n < c->resv || (n < BW_THREAD_CACHE_SLOTS && bw__tcache_reserve(p, tc, ci))) {
                bw__tc_put(c, n, atomic_load_explicit(&c->push, memory_order_relaxed), block);
                if (now != 0) bw__tcache_seen(p, tc, now);
                return BW_OK;
            }
        }
    }
    BW__COUNT(p, tc, returns, 1);
    BW__COUNT(p, tc, out_bytes, 0 - (uint64_t)capacity);
    if (!pooled) {
        if (!bw__large_keep(p, block, capacity, now)) bw__backing_free(p, tc, block, capacity);
        return BW_OK;
    }
    if (bw__shared_push(p, ci, block, now)) return BW_OK;
    bw__backing_free(p, tc, block, capacity);
    return BW_OK;
}

/* A medium block into this thread's cache: the inline path's push, then
 * its class stamped with the time (see medium_return_span): `now`, or the
 * clock read after the push when now is 0 (which also ages the learned
 * jump, bw__jump_age). False: the cache did not take it. */
static inline bool bw__push_medium(bw_pool *p, void *block, size_t capacity, uint64_t now)
{
    bw__tcache *tc = bw__tl_last;
    if (!bw__return_in_span(p, block, capacity, true) ||
        atomic_load_explicit(&tc->pool_id, memory_order_relaxed) != p->id ||
        !bw__tc_push(p, tc, block, capacity))
        return false;
    if (p->opt.decay_ms != BW_DECAY_NEVER) {
        if (now == 0) bw__jump_age(p, now = bw__now_ms());
        bw__tc_stamp(tc, bw__log2(capacity) - p->min_shift, now);
    }
    return true;
}

/* bw_pool_return's medium blocks, and anything else to bw__return_slow. A
 * function of its own, apart from bw__return_slow, whose frame (six
 * registers saved before its first test) cost a 64 KiB rent + return 20
 * of its 180 instructions. */
static BW__NOINLINE int bw__return_medium(bw_pool *p, void *block, size_t capacity)
{
    if (bw__push_medium(p, block, capacity, 0)) return BW_OK;
    return bw__return_slow(p, block, capacity, capacity);
}

int bw_pool_return(bw_pool *p, void *block, size_t capacity)
{
    if (BW__LIKELY(bw__return_fast_ok(p, block, capacity) &&
                   atomic_load_explicit(&bw__tl_last->pool_id, memory_order_relaxed) == p->id &&
                   bw__tc_push(p, bw__tl_last, block, capacity)))
        return BW_OK;
    return bw__return_medium(p, block, capacity);
}

BW__INTERNAL int bw__pool_return_written(bw_pool *p, void *block, size_t capacity,
                                         size_t written)
{
    if (!bw__pool_zeroes(p)) {
        /* On a pool that does not zero, a reservation's window ends
         * before its block: the block goes back as what was written. A
         * block at or below the threshold is no reservation (a window
         * being faulted in, mode_contig.c): it goes back whole. */
        if (written < capacity && p->reserves && capacity > p->opt.max_pooled_size) {
            bw__pool_cut(p, block, capacity, written);
            capacity = written;
        }
        return bw_pool_return(p, block, capacity);
    }
    return bw__return_slow(p, block, capacity, written);
}

/* One clock read for the two that want it: the learned jump stamps the
 * length with the time, and a medium block pushed into the thread's cache
 * its class (as bw__return_medium stamps it). The time is read a few
 * instructions before the push, so it is the push's to the coarse clock's
 * tick, as a read after it would be: decay still ages the block from its
 * return. Two reads were two of the three of a repeated 64 KiB job. What
 * was written does not matter to the push: the thread cache takes only
 * blocks of its classes, at or below the threshold, where no block is a
 * reservation to cut (a window being faulted in goes back whole). */
BW__INTERNAL void bw__pool_job_end(bw_pool *p, void *block, size_t capacity, size_t written,
                                   size_t len)
{
    uint64_t now = bw__pool_learns(p, len) ? bw__learn_record(p, len) : 0;
    if (block == NULL || bw__return_fast(p, block, capacity)) return;
    if (now != 0 && bw__push_medium(p, block, capacity, now)) return;
    (void)bw__pool_return_written(p, block, capacity, written);
}

/* More than twice need and 64 bytes more: a 200-byte string in a 512-byte
 * block is, a 250-byte one or a 40-byte one in a 128-byte block is not
 * (malloc's own rounding and header are about that much). */
static bool bw__much_larger(size_t cap, size_t need)
{
    return cap > 64 && need < (cap - 64) / 2;
}

BW__INTERNAL bool bw__pool_hand_off(bw_pool *p, void *b, size_t cap, size_t need)
{
    (void)need; /* bw__pool_copies weighed it */
    if (p == NULL || b == NULL) return false;
    /* A checked block carries a canary and is tracked: never handed off. */
    if (p->checked || p->extra != 0 || !bw__alloc_is_malloc(&p->alloc, cap)) return false;
    BW__POOL_ADD(p, returns, 1);
    BW__POOL_ADD(p, out_bytes, 0 - (uint64_t)cap);
    BW__POOL_ADD(p, backing_frees, 1);
    return true;
}

BW__INTERNAL void *bw__pool_hand_off_fit(bw_pool *p, void *b, size_t cap, size_t need,
                                         size_t written)
{
    void *nb;
    if (!bw__much_larger(cap, need) || p->alloc.realloc == NULL) return b;
    /* The tail goes back to malloc now: zeroed first where the pool
     * promises that no user's bytes reach the allocator (past written it
     * still holds the zeros it was rented with). */
    if (written > cap) written = cap;
    if ((p->opt.flags & BW_POOL_ZERO_ON_RETURN) && written > need)
        memset((unsigned char *)b + need, 0, written - need);
    nb = p->alloc.realloc(p->alloc.ctx, b, cap, need);
    return nb != NULL ? nb : b; /* a failed realloc keeps the block */
}

/* Trim / stats ---------------------------------------------------------- */

void bw_pool_trim(bw_pool *pool)
{
    if (pool == NULL) return;
    bw__tcache_trim_self(pool);
    (void)bw__shared_release(pool, UINT64_MAX);
    bw__large_free_all(pool);
    bw__alloc_trim(&pool->alloc);
}

void bw_pool_get_stats(bw_pool *pool, bw_pool_stats *out)
{
    bw__sums s;
    size_t held = 0;
    if (out == NULL) return;
    memset(out, 0, sizeof *out);
    if (pool == NULL) return;
    memset(&s, 0, sizeof s);
    bw__tcache_sum(pool, &s, &held);
    bw__sums_add(&s, &pool->ctr);
    out->rents = s.hits + s.misses;
    out->returns = s.returns;
    out->hits = s.hits;
    out->backing_allocs = s.backing_allocs;
    out->backing_frees = s.backing_frees;
    out->large_retained_bytes = atomic_load_explicit(&pool->large_bytes, memory_order_relaxed);
    out->retained_bytes = held + atomic_load_explicit(&pool->shared_bytes, memory_order_relaxed) +
                          out->large_retained_bytes;
    out->learned_size = bw__grow_size(pool, bw__learned(pool));
    out->learned_large_size = bw__grow_size(pool, bw__learned_large(pool));
    out->outstanding_bytes = (size_t)s.out_bytes;
    out->decayed_bytes = s.decayed;
    out->large_hits = s.large_hits;
}
/*************** End file pool/pool.c ***************************************/

/*************** Begin file pool/tcache.c ***********************************/
/* tcache.c - per-thread caches in front of the pool's shared level, and
 * what the caches need across fork (the handlers are in fork.c).
 *
 * Each thread keeps, per pool it has used, a bw__tcache: up to
 * BW_THREAD_CACHE_SLOTS blocks per class (classes up to BW__TCACHE_MAX),
 * used without locks. A thread finds its cache for a pool in O(1): the last
 * one used (one TLS load, the rent/return fast path), else a per-thread hash
 * table keyed by pool id. The caches of one pool form a registry in the pool,
 * guarded by one process-wide lock (taken only when a cache is created or
 * ends, and for stats/trim/destroy, never on the fast path).
 *
 * Lifetimes, the part that is easy to get wrong:
 *   - thread exit: the platform's thread-exit hook (a pthread key's
 *     destructor; on Windows a fiber-local slot's) flushes every cache of the
 *     thread into its pool (shared level, or freed) and frees the caches;
 *     the thread has no cache from the start of that cleanup, so a hook
 *     it calls that uses a pool goes to the shared level;
 *   - unload (dlclose of a plugin that embeds the library, or exit): the
 *     key is deleted, so that destructor never runs in unmapped code; the
 *     caches of live threads then leak (bw__unload);
 *   - pool destroy: takes the blocks of every registered cache and marks
 *     each cache orphaned (pool_id = 0) under the lock, so a later thread
 *     exit never touches the destroyed pool. An orphaned cache is freed by
 *     its thread, at exit or when its table is rebuilt;
 *   - allocator hooks are never called with a lock held (a hook may use
 *     bufwriter itself): blocks to free are gathered under the lock and
 *     freed after it; destroy waits for exiting threads still doing so;
 *   - fork: the child drops the caches of the threads it does not have
 *     (bw__tcache_fork_child, called by fork.c's handlers).
 * Pool ids are never reused, so a new pool at a destroyed pool's address
 * never matches an old cache. */
/* #include "pool_internal.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdlib.h>
#include <string.h>

/* The empty cache every thread starts with: pool id 0 matches no pool, a
 * first_back of SIZE_MAX no capacity, a shared_first of 0 no size. */
static bw__tcache bw__no_cache = {.first_back = SIZE_MAX};

static BW__THREAD_LOCAL bw__tcache *bw__tl_last = &bw__no_cache;
static BW__THREAD_LOCAL bw__tcache *bw__tl_head;
/* This thread's caches by pool id: open addressing, linear probing. */
static BW__THREAD_LOCAL bw__tcache **bw__tl_map;
static BW__THREAD_LOCAL size_t bw__tl_mask, bw__tl_used;
/* Set while this thread's exit cleanup runs: the thread has no cache then. */
static BW__THREAD_LOCAL bool bw__tl_exiting;

static bw__mutex bw__reg_lock = BW__MUTEX_INIT;
static bw__once bw__exit_once = BW__ONCE_INIT;
/* The key exists and is ours: set once it is created, cleared when the
 * library is unloaded (bw__unload). Without it no cache is created. */
static _Atomic bool bw__exit_key_ok;
static _Atomic uint64_t bw__pool_ids;

BW__INTERNAL uint64_t bw__next_pool_id(void)
{
    return atomic_fetch_add_explicit(&bw__pool_ids, 1, memory_order_relaxed) + 1;
}

static void bw__reg_unlink(bw__tcache *tc)
{
    if (tc->pool_prev) tc->pool_prev->pool_next = tc->pool_next;
    else tc->pool->caches = tc->pool_next;
    if (tc->pool_next) tc->pool_next->pool_prev = tc->pool_prev;
    tc->pool_prev = tc->pool_next = NULL;
}

/* Add tc's counts to s: its slow-path counters, and what its push/pop
 * counters mean (a pop is a hit and bytes out, a push a return). */
static void bw__tcache_totals(bw__tcache *tc, bw__sums *s, size_t *held)
{
    bw_pool *p = tc->pool;
    unsigned ci;
    bw__sums_add(s, &tc->ctr);
    for (ci = 0; ci < p->tc_classes; ci++) {
        uint64_t push = atomic_load_explicit(&tc->cls[ci].push, memory_order_relaxed);
        uint64_t pop = atomic_load_explicit(&tc->cls[ci].pop, memory_order_relaxed);
        s->hits += pop;
        s->returns += push;
        s->out_bytes += (pop - push) * (uint64_t)(p->opt.min_block_size << ci);
        if (held) *held += (size_t)(push - pop) * (p->opt.min_block_size << ci);
    }
}

/* Give back the budget of class ci's reserved slots beyond the first
 * `keep`, and their share of the medium bound. */
static void bw__tcache_unreserve(bw__tcache *tc, unsigned ci, size_t keep)
{
    bw_pool *p = tc->pool;
    size_t cap = p->opt.min_block_size << ci, k;
    if (tc->cls[ci].resv <= keep) return;
    k = tc->cls[ci].resv - keep;
    bw__budget_give(p, k * cap);
    if (cap > BW__TCACHE_SMALL) tc->medium -= k * cap;
    tc->cls[ci].resv = (unsigned char)keep;
}

/* Take the bottom k blocks of class ci out of tc (not a rent: the hit and
 * the bytes out that the pop counter reports for them are undone) and give
 * back their slots' budget. */
static void bw__tcache_take(bw__tcache *tc, unsigned ci, size_t k, bw__frees *f)
{
    bw_pool *p = tc->pool;
    bw__tc_class *c = &tc->cls[ci];
    size_t cap = p->opt.min_block_size << ci, n = bw__tc_held(tc, ci), i;
    for (i = 0; i < k; i++) {
        f->e[f->n].block = c->slots[i];
        f->e[f->n].size = cap;
        f->n++;
    }
    memmove(c->slots, c->slots + k, (n - k) * sizeof *c->slots);
    /* The low-water mark counts untouched blocks from the bottom. */
    c->low = (unsigned char)(c->low > k ? c->low - k : 0);
    atomic_store_explicit(&c->pop, atomic_load_explicit(&c->pop, memory_order_relaxed) + k,
                          memory_order_relaxed);
    BW__TC_ADD(tc, hits, (uint64_t)0 - k);
    BW__TC_ADD(tc, out_bytes, (uint64_t)0 - k * cap);
    bw__tcache_unreserve(tc, ci, n - k);
}

BW__INTERNAL void bw__tcache_flush(bw__tcache *tc, bool to_shared, bw__frees *f)
{
    bw_pool *p = tc->pool;
    uint64_t now = to_shared && p->opt.decay_ms != BW_DECAY_NEVER ? bw__now_ms() : 0;
    unsigned ci;
    for (ci = 0; ci < p->tc_classes; ci++) {
        size_t n = bw__tc_held(tc, ci), first = f->n, i;
        bw__tcache_take(tc, ci, n, f);
        if (to_shared) { /* keep what the shared level takes */
            size_t kept = first;
            for (i = first; i < f->n; i++)
                if (!bw__shared_push(p, ci, f->e[i].block, now)) f->e[kept++] = f->e[i];
            f->n = kept;
        }
        bw__tcache_unreserve(tc, ci, 0);
    }
}

BW__INTERNAL void bw__tcache_seen(bw_pool *p, bw__tcache *tc, uint64_t now)
{
    unsigned ci;
    for (ci = 0; ci < p->tc_classes; ci++) {
        uint64_t ops = bw__tc_ops(tc, ci);
        if (ops != tc->seen[ci].ops) {
            tc->seen[ci].ops = ops;
            tc->seen[ci].ms = now;
        }
    }
}

/* Decay of a thread's own cache, gathered into f. Two ways to know a block
 * is old enough: its class untouched since a slow call saw it decay_ms ago
 * (then all its blocks go), or the blocks below the class's low-water mark,
 * untouched since the last decay, decay_ms or more ago. Each class is
 * judged by its own count: a thread whose small messages keep one class
 * busy on the fast path still gives back, at its next slow call, the big
 * block another class has held untouched for decay_ms.
 *
 * An empty class is skipped: it has nothing to give back, its mark is 0
 * already (the mark is never above what a class holds: a pop below it is
 * the slow path's, which lowers it), and its count is judged at the first
 * slow call that finds a block in it, which sees the count moved since
 * (the block's push) and ages the block from then, as it would have with
 * the count noted here. Most of a cache's 17 classes are empty: J's
 * 4 MiB job's two passes (its large rent and return) took 986
 * instructions, 608 with the skip (make -C bench callgrind). */
static uint64_t bw__tcache_decay_into(bw_pool *p, bw__tcache *tc, uint64_t now, bw__frees *f)
{
    uint64_t bytes = 0;
    bool pass = now - tc->last_decay >= p->opt.decay_ms;
    unsigned ci;
    for (ci = 0; ci < p->tc_classes; ci++) {
        bw__tc_seen *seen = &tc->seen[ci];
        size_t n = bw__tc_held(tc, ci), k = 0;
        uint64_t ops;
        if (n == 0) continue;
        ops = bw__tc_ops(tc, ci);
        if (ops != seen->ops) {
            seen->ops = ops;
            seen->ms = now;
        } else if (now - seen->ms >= p->opt.decay_ms) {
            k = n;
        }
        if (pass && k < tc->cls[ci].low) k = tc->cls[ci].low < n ? tc->cls[ci].low : n;
        if (k != 0) {
            bw__tcache_take(tc, ci, k, f);
            bytes += (uint64_t)k * (p->opt.min_block_size << ci);
            /* Taken is not used: what is left keeps its age. */
            seen->ops = bw__tc_ops(tc, ci);
        }
        if (pass) tc->cls[ci].low = (unsigned char)(n - k);
    }
    if (pass) tc->last_decay = now;
    if (bytes) BW__TC_ADD(tc, decayed, bytes);
    return bytes;
}

BW__INTERNAL void bw__tcache_decay(bw_pool *p, bw__tcache *tc, uint64_t now)
{
    bw__frees f;
    f.n = 0;
    (void)bw__tcache_decay_into(p, tc, now, &f);
    bw__frees_flush(p, &f);
}

/* Thread exit: every cache of this thread goes back to its pool, one at a
 * time; blocks the shared level does not take are freed outside the lock.
 *
 * Those frees call the allocator hooks, and a hook may use bufwriter (a
 * free hook that logs a line through a writer on another pool). Such a
 * call must never reach one of the caches being given back: a block it
 * returned would be parked in a cache that is then freed, lost with its
 * retention budget and its counts. So the thread forgets its caches before
 * the first one goes back (its map, its list, its last cache), and until
 * the cleanup ends it creates none: every call from a hook uses the shared
 * level. Nothing is created during the cleanup, so nothing can be lost. */
static void bw__thread_exit(void *head)
{
    bw__tcache *tc, *next;
    free(bw__tl_map);
    bw__tl_map = NULL;
    bw__tl_mask = bw__tl_used = 0;
    bw__tl_head = NULL;
    bw__tl_last = &bw__no_cache;
    bw__tl_exiting = true;
    for (tc = (bw__tcache *)head; tc != NULL; tc = tc->thread_next) {
        bw_pool *p = NULL;
        bw__frees f;
        f.n = 0;
        bw__mutex_lock(&bw__reg_lock);
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) != 0) {
            bw__sums s;
            p = tc->pool;
            memset(&s, 0, sizeof s);
            /* What has been idle long enough goes back now, not to the
             * shared level with a fresh age. */
            if (p->opt.decay_ms != BW_DECAY_NEVER)
                (void)bw__tcache_decay_into(p, tc, bw__now_ms(), &f);
            bw__tcache_flush(tc, true, &f);
            bw__tcache_totals(tc, &s, NULL);
            bw__counters_fold(&p->ctr, &s);
            bw__reg_unlink(tc);
            atomic_fetch_add_explicit(&p->exiting, 1, memory_order_acq_rel);
        }
        bw__mutex_unlock(&bw__reg_lock);
        if (p != NULL) {
            bw__frees_flush(p, &f);
            atomic_fetch_sub_explicit(&p->exiting, 1, memory_order_acq_rel);
        }
    }
    for (tc = (bw__tcache *)head; tc != NULL; tc = next) {
        next = tc->thread_next;
        free(tc);
    }
    /* A later destructor of another library may use a pool again: it then
     * starts a fresh cache and sets the key again. */
    bw__tl_exiting = false;
}

static void bw__exit_key_init(void)
{
    atomic_store_explicit(&bw__exit_key_ok,
                          bw__thread_exit_init(bw__thread_exit),
                          memory_order_release);
}

/* Unload. A copy of the library inside a plugin (the single header, or
 * libbufwriter.a linked into a shared object) is unmapped by dlclose, but
 * the key's destructor would still point into it and run whenever a thread
 * that used a pool exits: the process would crash. So the key goes with the
 * library (at dlclose, or at exit): no destructor into unmapped code is
 * left. The price: the caches of the threads still alive then (the calling
 * one too) are never given back; their blocks and the caches themselves
 * leak at unload (they cannot be taken from here: their owners may be using
 * them, and the pools may be gone). From then on, a thread that has no
 * cache for a pool uses the shared level. The shared library is linked
 * -z nodelete and never unmapped, so for it this runs at exit only, where
 * nothing is lost. Compilers without destructor functions keep the key:
 * there a plugin must not be unloaded while threads that used it live. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void bw__unload(void)
{
    if (atomic_exchange_explicit(&bw__exit_key_ok, false, memory_order_acq_rel))
        bw__thread_exit_remove();
}
#endif

static size_t bw__id_hash(uint64_t id, size_t mask)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

/* Rebuild this thread's table at twice the live count (at least 16),
 * freeing the caches of destroyed pools on the way. False when out of
 * memory (the old table stays). */
static bool bw__map_rebuild(void)
{
    bw__tcache **pp, *tc;
    size_t live = 0, n = 16, i;
    bw__tcache **map;
    for (pp = &bw__tl_head; (tc = *pp) != NULL;) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) == 0) {
            *pp = tc->thread_next;
            if (bw__tl_last == tc) bw__tl_last = &bw__no_cache;
            free(tc);
        } else {
            live++;
            pp = &tc->thread_next;
        }
    }
    /* The exit hook walks the list from the key's value: keep it the head. */
    (void)bw__thread_exit_set(bw__tl_head);
    while (n < 4 * (live + 1)) n *= 2;
    map = (bw__tcache **)calloc(n, sizeof *map);
    if (map == NULL) return false;
    for (tc = bw__tl_head; tc != NULL; tc = tc->thread_next) {
        for (i = bw__id_hash(atomic_load_explicit(&tc->pool_id, memory_order_relaxed), n - 1);
             map[i] != NULL; i = (i + 1) & (n - 1)) {}
        map[i] = tc;
    }
    free(bw__tl_map);
    bw__tl_map = map;
    bw__tl_mask = n - 1;
    bw__tl_used = live;
    return true;
}

BW__INTERNAL bw__tcache *bw__tcache_find(bw_pool *p)
{
    bw__tcache *tc;
    size_t i;
    if (bw__tl_map == NULL) return NULL;
    for (i = bw__id_hash(p->id, bw__tl_mask); (tc = bw__tl_map[i]) != NULL;
         i = (i + 1) & bw__tl_mask) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) {
            bw__tl_last = tc;
            return tc;
        }
    }
    return NULL;
}

BW__INTERNAL bw__tcache *bw__tcache_get_slow(bw_pool *p)
{
    bw__tcache *tc;
    size_t i;
    if ((tc = bw__tcache_find(p)) != NULL) return tc;
    if (bw__tl_exiting) return NULL; /* the exit cleanup: the shared level */
    bw__once_run(&bw__exit_once, bw__exit_key_init);
    /* Without the exit hook a cache would leak its blocks at thread exit:
     * then this thread uses the shared level only. */
    if (!atomic_load_explicit(&bw__exit_key_ok, memory_order_acquire)) return NULL;
    if ((bw__tl_used + 1) * 4 > (bw__tl_mask + 1) * 3 && !bw__map_rebuild()) return NULL;
    tc = (bw__tcache *)calloc(1, sizeof *tc + (size_t)p->tc_classes *
                                              (sizeof(bw__tc_class) + sizeof(bw__tc_seen)));
    if (tc == NULL) return NULL;
    tc->seen = (bw__tc_seen *)(void *)&tc->cls[p->tc_classes];
    tc->thread_next = bw__tl_head;
    if (!bw__thread_exit_set(tc)) {
        free(tc);
        return NULL;
    }
    tc->pool = p;
    /* A small message's block: the pool's first block, when the fast paths
     * serve its class (bw__rent_first, bw__return_fast). */
    tc->first_size = p->first_fast;
    tc->first_back = p->first_fast != 0 ? p->first_fast : SIZE_MAX;
    tc->shared_first =
        p == atomic_load_explicit(&bw__shared_pool, memory_order_acquire) ? p->first_fast : 0;
    tc->first = &tc->cls[p->first_class];
    tc->last_decay = p->opt.decay_ms != BW_DECAY_NEVER ? bw__now_ms() : 0;
    for (i = 0; i < p->tc_classes; i++) tc->seen[i].ms = tc->last_decay;
    atomic_store_explicit(&tc->pool_id, p->id, memory_order_relaxed);
    bw__tl_head = tc;
    for (i = bw__id_hash(p->id, bw__tl_mask); bw__tl_map[i] != NULL; i = (i + 1) & bw__tl_mask) {}
    bw__tl_map[i] = tc;
    bw__tl_used++;
    bw__mutex_lock(&bw__reg_lock);
    tc->pool_next = p->caches;
    if (p->caches) p->caches->pool_prev = tc;
    p->caches = tc;
    bw__mutex_unlock(&bw__reg_lock);
    bw__tl_last = tc;
    return tc;
}

BW__INTERNAL void bw__tcache_orphan_all(bw_pool *p)
{
    bw__tcache *tc, *next;
    bw__frees *f = NULL;
    size_t count = 0, i;
    /* Every block of every cache, gathered under the lock (an owner thread
     * may free its orphaned cache as soon as the lock is released), freed
     * after it. */
    bw__mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = tc->pool_next) count++;
    if (count != 0) f = (bw__frees *)calloc(count, sizeof *f);
    for (tc = p->caches, i = 0; tc != NULL; tc = next, i++) {
        bw__frees one;
        next = tc->pool_next;
        one.n = 0;
        bw__tcache_flush(tc, false, f != NULL ? &f[i] : &one);
        if (f == NULL) bw__frees_flush(p, &one); /* out of memory: under the lock */
        tc->pool_prev = tc->pool_next = NULL;
        atomic_store_explicit(&tc->pool_id, 0, memory_order_release);
    }
    p->caches = NULL;
    bw__mutex_unlock(&bw__reg_lock);
    for (i = 0; f != NULL && i < count; i++) bw__frees_flush(p, &f[i]);
    free(f);
    /* Threads that unlinked their cache before us may still be freeing
     * its blocks through the hook: the pool must outlive that. */
    while (atomic_load_explicit(&p->exiting, memory_order_acquire) != 0) bw__yield();
}

BW__INTERNAL void bw__tcache_sum(bw_pool *p, bw__sums *s, size_t *held)
{
    bw__tcache *tc;
    bw__mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = tc->pool_next) bw__tcache_totals(tc, s, held);
    bw__mutex_unlock(&bw__reg_lock);
}

BW__INTERNAL void bw__tcache_trim_self(bw_pool *p)
{
    bw__tcache *tc;
    bw__frees f;
    if (!p->use_tcache || (tc = bw__tcache_get(p)) == NULL) return;
    f.n = 0;
    bw__tcache_flush(tc, false, &f);
    bw__frees_flush(p, &f);
}

/* Fork (fork.c) --------------------------------------------------------- */

BW__INTERNAL void bw__tcache_fork_lock(bool lock)
{
    if (lock) bw__mutex_lock(&bw__reg_lock);
    else bw__mutex_unlock(&bw__reg_lock);
}

/* The child has one thread: the caches of the others are unregistered and
 * left as they are (their counters are kept, their budget given back, their
 * blocks and structs leaked: an owner may have been mid-update). */
BW__INTERNAL void bw__tcache_fork_child(bw_pool *p)
{
    bw__tcache *tc, *next, *mine;
    for (tc = p->caches; tc != NULL; tc = next) {
        bw__sums s;
        unsigned ci;
        next = tc->pool_next;
        for (mine = bw__tl_head; mine != NULL && mine != tc; mine = mine->thread_next) {}
        if (mine != NULL) continue;
        memset(&s, 0, sizeof s);
        bw__tcache_totals(tc, &s, NULL);
        bw__counters_fold(&p->ctr, &s);
        for (ci = 0; ci < p->tc_classes; ci++) bw__tcache_unreserve(tc, ci, 0);
        bw__reg_unlink(tc);
    }
    atomic_store_explicit(&p->exiting, 0, memory_order_relaxed);
}
/*************** End file pool/tcache.c *************************************/

#if defined(__GNUC__) || defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#endif /* BUFWRITER_IMPLEMENTATION && !BW__IMPLEMENTATION_DONE */

/*
 * --------------------------------------------------------------------------
 * LICENCE
 *
 * MIT License
 *
 * Copyright (c) 2026 The bufwriter authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
