// SPDX-License-Identifier: MIT
// alloc_count.cpp - count every heap allocation made in the bench process.
//
// The executable defines malloc, calloc, realloc, free, posix_memalign,
// aligned_alloc, memalign, valloc and pvalloc. The executable comes first in
// symbol lookup, so every caller (libc's own open_memstream, libstdc++'s
// operator new, the bufwriter library) reaches these wrappers, which count
// the call in thread-local counters and forward to the next definition:
// glibc's, or jemalloc's/mimalloc's when one of them is LD_PRELOADed.
//
// dlsym may itself allocate (glibc's dlerror buffer) before the real calloc
// is known: such requests are served from a small static bootstrap arena,
// which free() recognises and ignores.
//
// Counted: one allocation per successful malloc/calloc/realloc/
// posix_memalign/aligned_alloc/memalign/valloc/pvalloc call; bytes are the
// size asked for (for realloc, the new size). free is not counted.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "alloc_count.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <new>

namespace {

using malloc_fn = void *(*)(size_t);
using calloc_fn = void *(*)(size_t, size_t);
using realloc_fn = void *(*)(void *, size_t);
using free_fn = void (*)(void *);
using posix_memalign_fn = int (*)(void **, size_t, size_t);
using aligned_alloc_fn = void *(*)(size_t, size_t);
using memalign_fn = void *(*)(size_t, size_t);
using valloc_fn = void *(*)(size_t);

malloc_fn real_malloc;
calloc_fn real_calloc;
realloc_fn real_realloc;
free_fn real_free;
posix_memalign_fn real_posix_memalign;
aligned_alloc_fn real_aligned_alloc;
memalign_fn real_memalign;
valloc_fn real_valloc;
valloc_fn real_pvalloc;

// Bootstrap arena for allocations made while dlsym runs.
alignas(64) unsigned char boot_arena[64 * 1024];
size_t boot_used;
int resolving;

__thread bench_alloc_counts tl_counts __attribute__((tls_model("initial-exec")));

bool in_boot(const void *p)
{
    const unsigned char *c = static_cast<const unsigned char *>(p);
    return c >= boot_arena && c < boot_arena + sizeof boot_arena;
}

void *boot_alloc(size_t n)
{
    size_t off = (boot_used + 15) & ~static_cast<size_t>(15);
    if (n > sizeof boot_arena - off) return nullptr;
    boot_used = off + n;
    return boot_arena + off; // static storage: already zero
}

template <typename F> void sym(F &f, const char *name)
{
    f = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

void resolve()
{
    if (real_malloc != nullptr || resolving) return;
    resolving = 1;
    sym(real_calloc, "calloc");
    sym(real_realloc, "realloc");
    sym(real_free, "free");
    sym(real_posix_memalign, "posix_memalign");
    sym(real_aligned_alloc, "aligned_alloc");
    sym(real_memalign, "memalign");
    sym(real_valloc, "valloc");
    sym(real_pvalloc, "pvalloc");
    malloc_fn m;
    sym(m, "malloc");
    resolving = 0;
    __atomic_store_n(&real_malloc, m, __ATOMIC_RELEASE);
}

inline void count(size_t n)
{
    tl_counts.allocs++;
    tl_counts.bytes += n;
}

} // namespace

extern "C" {

bench_alloc_counts bench_alloc_snapshot(void) { return tl_counts; }

void bench_alloc_note(uint64_t allocs, uint64_t bytes)
{
    tl_counts.allocs += allocs;
    tl_counts.bytes += bytes;
}

const char *bench_alloc_provider(void)
{
    resolve();
    Dl_info info;
    if (real_malloc != nullptr &&
        dladdr(reinterpret_cast<void *>(real_malloc), &info) != 0 &&
        info.dli_fname != nullptr) {
        const char *slash = strrchr(info.dli_fname, '/');
        return slash ? slash + 1 : info.dli_fname;
    }
    return "unknown";
}

void *malloc(size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) {
        resolve();
        if (real_malloc == nullptr) return boot_alloc(n);
    }
    void *p = real_malloc(n);
    if (p != nullptr) count(n);
    return p;
}

void *calloc(size_t a, size_t b)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) {
        resolve();
        if (real_malloc == nullptr || real_calloc == nullptr) {
            size_t n;
            if (__builtin_mul_overflow(a, b, &n)) return nullptr;
            return boot_alloc(n);
        }
    }
    void *p = real_calloc(a, b);
    if (p != nullptr) count(a * b);
    return p;
}

void *realloc(void *old, size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) resolve();
    if (__builtin_expect(old != nullptr && in_boot(old), 0)) {
        // Move a bootstrap block to the real heap (its size is unknown,
        // but no more than what is left of the arena past it).
        void *p = malloc(n);
        if (p != nullptr) {
            size_t avail = static_cast<size_t>(boot_arena + sizeof boot_arena -
                                               static_cast<unsigned char *>(old));
            memcpy(p, old, n < avail ? n : avail);
        }
        return p;
    }
    if (real_realloc == nullptr) return boot_alloc(n);
    void *p = real_realloc(old, n);
    if (p != nullptr || n == 0) count(n);
    return p;
}

void free(void *p)
{
    if (p == nullptr || in_boot(p)) return;
    if (__builtin_expect(real_free == nullptr, 0)) resolve();
    real_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) resolve();
    int rc = real_posix_memalign(out, align, n);
    if (rc == 0) count(n);
    return rc;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) resolve();
    void *p = real_aligned_alloc(align, n);
    if (p != nullptr) count(n);
    return p;
}

void *memalign(size_t align, size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) resolve();
    void *p = real_memalign(align, n);
    if (p != nullptr) count(n);
    return p;
}

void *valloc(size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) resolve();
    void *p = real_valloc(n);
    if (p != nullptr) count(n);
    return p;
}

void *pvalloc(size_t n)
{
    if (__builtin_expect(real_malloc == nullptr, 0)) resolve();
    void *p = real_pvalloc(n);
    if (p != nullptr) count(n);
    return p;
}

} // extern "C"

extern "C" int bench_alloc_counting(void) { return 1; }

// Replaceable global operator new/delete. jemalloc's shared library defines
// its own operator new, so under LD_PRELOAD=libjemalloc.so.2 libstdc++'s
// allocations would bypass malloc (and the counters): route every
// operator new of the process through the counted malloc instead.
namespace {
void *new_impl(size_t n)
{
    if (n == 0) n = 1;
    for (;;) {
        void *p = malloc(n);
        if (p != nullptr) return p;
        std::new_handler h = std::get_new_handler();
        if (h == nullptr) throw std::bad_alloc();
        h();
    }
}
void *new_aligned_impl(size_t n, std::align_val_t al)
{
    size_t a = static_cast<size_t>(al);
    if (a < sizeof(void *)) a = sizeof(void *);
    if (n == 0) n = 1;
    for (;;) {
        void *p = nullptr;
        if (posix_memalign(&p, a, n) == 0) return p;
        std::new_handler h = std::get_new_handler();
        if (h == nullptr) throw std::bad_alloc();
        h();
    }
}
} // namespace

void *operator new(size_t n) { return new_impl(n); }
void *operator new[](size_t n) { return new_impl(n); }
void *operator new(size_t n, const std::nothrow_t &) noexcept
{
    try { return new_impl(n); } catch (...) { return nullptr; }
}
void *operator new[](size_t n, const std::nothrow_t &) noexcept
{
    try { return new_impl(n); } catch (...) { return nullptr; }
}
void *operator new(size_t n, std::align_val_t a) { return new_aligned_impl(n, a); }
void *operator new[](size_t n, std::align_val_t a) { return new_aligned_impl(n, a); }
void *operator new(size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    try { return new_aligned_impl(n, a); } catch (...) { return nullptr; }
}
void *operator new[](size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    try { return new_aligned_impl(n, a); } catch (...) { return nullptr; }
}
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, size_t) noexcept { free(p); }
void operator delete[](void *p, size_t) noexcept { free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { free(p); }
void operator delete(void *p, std::align_val_t) noexcept { free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { free(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { free(p); }
