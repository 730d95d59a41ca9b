/* SPDX-License-Identifier: MIT */
/* windows.c - the platform layer (platform.h) on Windows: Win32 locks and
 * fiber-local storage, the C runtime's file descriptors. Tested with
 * MinGW-w64 under wine (README, "Platforms"); written to compile with MSVC
 * too (no GNU construct outside a guarded path). What Windows lacks: fork
 * (no handlers to register), SIGPIPE (nothing to guard), fopencookie (no
 * FILE adapter: bufwriter.h leaves bw_fopen out), pages mapped for large
 * blocks (malloc serves them). */
#include "platform.h"

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
