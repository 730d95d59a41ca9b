/* SPDX-License-Identifier: MIT */
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

#include "../bufwriter.h"

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
