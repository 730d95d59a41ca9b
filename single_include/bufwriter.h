/* bufwriter.h - single-header build of bufwriter 0.1.0
 *
 * GENERATED FILE - DO NOT EDIT. scripts/amalgamate.py made it from
 *   bufwriter.h, pool/pool_internal.h, pool/track.h, bufwriter.c, chain.c,
 *   io.c, pool/alloc.c, pool/check.c, pool/large.c, pool/pool.c,
 *   pool/tcache.c.
 * Change those files and run `make single`; CI fails when this copy differs
 * from a fresh generation (`make check-single`).
 *
 * bufwriter: a growable, pooled buffer writer for C. Licence: MIT, the text
 * is at the end of this file. Version 0.1.0 (BW_VERSION_STRING).
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
 *   Including the header again is harmless: the declarations have their
 *   include guard and the implementation is emitted once per file.
 *   Functions private to the library are static here: a program gets only
 *   the public bw_ symbols.
 *
 * OPTIONS (define them before the #include, or with -D on the command line;
 * the ones marked [impl] matter in the BUFWRITER_IMPLEMENTATION file)
 *   BUFWRITER_IMPLEMENTATION  emit the implementation in this file.
 *   BW_DEBUG          [impl] checked mode in every pool: a double return, a
 *                     foreign block or a wrong capacity is reported through
 *                     bw_set_report_hook (default: stderr, then abort).
 *                     Without it, BW_POOL_CHECKED or the environment
 *                     variable BW_CHECKED=1 turn checked mode on.
 *   BW_VALGRIND       [impl] mark blocks held by a pool no-access for
 *                     valgrind memcheck (needs <valgrind/memcheck.h>).
 *                     Under AddressSanitizer they are poisoned anyway.
 *   BW_HAVE_JEMALLOC  [impl] build bw_allocator_jemalloc() on jemalloc's
 *                     mallocx/rallocx/sdallocx; link with -ljemalloc.
 *                     Without it bw_allocator_jemalloc() returns NULL.
 *   BW_API            how public functions are declared (default: GCC/Clang
 *                     visibility("default"), else nothing). Define it the
 *                     same way in every file.
 */

/*************** Begin file bufwriter.h *************************************/
/* bufwriter.h - a growable, pooled buffer writer for C.
 *
 * bufwriter appends bytes into one contiguous block rented from a thread-safe
 * pool of power-of-two size classes. When a block is full the writer moves to
 * a block at least twice as large, so the total copying stays linear at every
 * size (a writer that grows by a fixed step, or to the exact size asked for,
 * copies O(n^2) bytes: 10 MiB in 8 KiB chunks is 800x slower that way).
 *
 * USING IT
 *   Library:        cc app.c $(pkg-config --cflags --libs bufwriter)
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
 *   call on a writer changes no byte already written and is remembered (the
 *   "sticky error", see bw_error): later writes are refused with the same
 *   code until bw_clear, bw_release or bw_detach. So a run of writes can be
 *   checked once, at the end. Nothing in the library aborts or exits on bad
 *   input, except the checked-mode report hook (see bw_set_report_hook).
 *
 * THREADS
 *   - A bw_pool is safe to use from any thread at once, including returning
 *     a block on another thread than the one that rented it.
 *   - A bw_writer belongs to one thread at a time (hand it over with your own
 *     synchronisation, as with any plain struct).
 *   - Allocator hooks (bw_allocator) are called from any thread and must be
 *     thread-safe.
 *
 * INVALIDATION
 *   bw_data() and a pointer from bw_get_span() are invalid after the next call
 *   that can grow the buffer (write, any put, puts, printf, reserve, get_span)
 *   and after bw_release / bw_detach. Offsets stay valid; pointers do not.
 *
 * COMPILE-TIME OPTIONS (define before including, or with -D when building)
 *   BW_DEBUG      turn on checked mode for every pool (see BW_POOL_CHECKED).
 *   BW_HAVE_JEMALLOC  defined by builds that include the jemalloc hook
 *                 (make JEMALLOC=1); bw_allocator_jemalloc() is NULL otherwise.
 */
#ifndef BUFWRITER_H
#define BUFWRITER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BW_VERSION_MAJOR 0
#define BW_VERSION_MINOR 1
#define BW_VERSION_PATCH 0
#define BW_VERSION_STRING "0.1.0"

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
#  define BW__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define BW__LIKELY(x)   (x)
#  define BW__UNLIKELY(x) (x)
#  define BW__PRINTF(f, a)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */
#define BW_OK         0    /* success */
#define BW_ENOMEM    (-1)  /* the backing allocator failed */
#define BW_EOVERFLOW (-2)  /* a size that cannot be represented was asked for
                              (more than PTRDIFF_MAX bytes, or a sum that wraps) */
#define BW_EINVAL    (-3)  /* a bad argument: NULL, wrong capacity, an advance
                              beyond the free space, bad pool options */
#define BW_EIO       (-4)  /* a write to a file descriptor failed; errno says
                              why (EAGAIN for a full non-blocking socket) */

/* A one-line English description of a status code. Never NULL; unknown codes
 * give "unknown bufwriter status". The string is static: do not free it. */
BW_API const char *bw_strerror(int status);

/* Version of the library actually linked ("0.1.0"). */
BW_API const char *bw_version(void);

/* ------------------------------------------------------------------------ */
/* Backing allocator hook                                                   */
/* ------------------------------------------------------------------------ */
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

/* malloc / realloc / free. Never NULL. */
BW_API const bw_allocator *bw_allocator_libc(void);
/* jemalloc's mallocx / rallocx / sdallocx (sized free). NULL in a build
 * without jemalloc (BW_HAVE_JEMALLOC undefined). */
BW_API const bw_allocator *bw_allocator_jemalloc(void);

/* ------------------------------------------------------------------------ */
/* Pool                                                                     */
/* ------------------------------------------------------------------------ */
/* A bw_pool hands out blocks in power-of-two size classes from
 * min_block_size up to max_pooled_size (the threshold). Returned blocks are
 * kept (bounded) and handed out again. Blocks above the threshold come from
 * the backing allocator at exactly the size asked for and go back to it on
 * return. Every pool function is thread-safe.
 *
 * Retention works in two levels. Each thread keeps a small cache per pool of
 * at most BW_THREAD_CACHE_SLOTS blocks per class, used without locks; behind
 * them, each class has a shared, locked stack of at most
 * max_blocks_per_class blocks. max_retained_bytes bounds both levels
 * together. A thread's cache goes back to the pool when the thread exits. */
typedef struct bw_pool bw_pool;

/* Blocks a thread may keep per class in its own cache. */
#define BW_THREAD_CACHE_SLOTS 4

/* Pool flags */
#define BW_POOL_ZERO_ON_RETURN  0x1u /* zero every retained block on return,
                                        with a store the compiler keeps; rented
                                        pooled blocks then read as zeros */
#define BW_POOL_NO_THREAD_CACHE 0x2u /* no per-thread caches: every rent and
                                        return goes to the shared level */
#define BW_POOL_LEARN_SIZE      0x8u /* learned starting size: each bw_release,
                                        bw_clear or bw_detach of a non-empty
                                        writer records its length; a writer's
                                        first block is then sized for the
                                        second largest of the last 16 lengths
                                        (about the 90th percentile), at most
                                        max_learned_size, by the growth rule */
#define BW_POOL_FILL            0x10u /* with checked mode: fill rented bytes
                                        with BW_FILL_RENTED and returned ones
                                        with BW_FILL_RETURNED, so a read of
                                        stale or uninitialised bytes shows */
#define BW_POOL_BYPASS          0x20u /* no pooling: every rent is a real
                                        allocation of exactly min_size bytes
                                        (*capacity = min_size) and every return
                                        a real free, so AddressSanitizer's
                                        redzones, quarantine and stack traces
                                        apply in full. Also on with the
                                        environment variable BW_BYPASS=1. */
#define BW_FILL_RENTED   0xA5
#define BW_FILL_RETURNED 0xDD
#define BW_POOL_CHECKED         0x4u /* checked mode: a double return, a
                                        foreign block or a wrong capacity is
                                        reported (bw_set_report_hook) and
                                        refused, and a write past a block's
                                        end is caught at its return (a 16-byte
                                        canary after every block). Always on
                                        under BW_DEBUG and when the environment
                                        variable BW_CHECKED=1 is set. Under
                                        AddressSanitizer a double return is
                                        reported in every mode. */

typedef struct bw_pool_options {
    size_t max_pooled_size;      /* threshold, power of two; 0 = 1 MiB        */
    size_t min_block_size;       /* smallest class, power of two >= 16; 0 = 16 */
    size_t max_blocks_per_class; /* shared-level bound per class; 0 = 32      */
    size_t max_retained_bytes;   /* bound on all retained bytes, thread caches
                                    included (not large blocks); 0 = 64 MiB   */
    unsigned flags;              /* BW_POOL_* flags; 0 = none                 */
    const bw_allocator *allocator; /* NULL = bw_allocator_libc()              */
    /* Large retention: keep blocks ABOVE the threshold when they come back,
     * so repeated large jobs reuse warm memory instead of fresh pages from
     * the backing allocator. A rent above the threshold is served from a
     * kept block of exactly that size. Off when both are 0.               */
    size_t max_large_bytes;      /* bound on kept large bytes; 0 = off        */
    size_t max_large_blocks;     /* bound on kept large blocks; 0 = 8 (when
                                    max_large_bytes is set)                   */
    /* Learned starting size (BW_POOL_LEARN_SIZE): a writer on this pool
     * that starts empty (no initial capacity) takes its first block at the
     * size recent writers ended at, bounded by this.                      */
    size_t max_learned_size;     /* 0 = 64 MiB                                */
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
    size_t learned_size;      /* the starting size writers now get (BW_POOL_LEARN_SIZE),
                                 0 when off or nothing learned yet                    */
} bw_pool_stats;

/* Create a pool. opts may be NULL (all defaults). Returns BW_OK and sets *out;
 * BW_EINVAL for a NULL out, a threshold or smallest class that is not a power
 * of two, a smallest class below 16 or above the threshold; BW_ENOMEM when the
 * pool's own bookkeeping cannot be allocated. On failure *out is NULL. */
BW_API int bw_pool_create(bw_pool **out, const bw_pool_options *opts);

/* Free every block the pool holds (every thread's cache included) and the
 * pool. Blocks still rented stay the caller's (checked mode reports them).
 * No other thread may be inside the pool during the call; after it returns,
 * no thread's exit touches the destroyed pool. NULL is a no-op. Must not be
 * given bw_pool_shared(). */
BW_API void bw_pool_destroy(bw_pool *pool);

/* The process-wide pool (default options), created on first use from any
 * thread. NULL only if that creation ran out of memory (tried again next
 * call). Never destroy it. */
BW_API bw_pool *bw_pool_shared(void);

/* The capacity bw_pool_rent(pool, min_size, ...) would give: the class size
 * at or below the threshold, min_size itself above it. 0 for a NULL pool. */
BW_API size_t bw_pool_class_size(const bw_pool *pool, size_t min_size);

/* Rent a block of at least min_size bytes (0 gives the smallest class),
 * aligned to alignof(max_align_t); *capacity receives its usable size, which
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

/* Give retained memory back to the backing allocator: the shared level, the
 * kept large blocks and the calling thread's cache. Other live threads'
 * caches go back when those threads exit or trim. NULL is a no-op. */
BW_API void bw_pool_trim(bw_pool *pool);

/* Fill *out with the pool's counters (zeros for a NULL pool). */
BW_API void bw_pool_get_stats(bw_pool *pool, bw_pool_stats *out);

/* Checked mode reports through this hook: `what` names the call and the
 * problem ("bw_pool_return: block returned twice"). The default prints the
 * message on stderr and aborts. Pass NULL to restore the default. The hook
 * is process-wide; set it before pools are used from several threads. */
typedef void (*bw_report_fn)(void *ctx, const char *what, const void *block,
                             size_t capacity);
BW_API void bw_set_report_hook(bw_report_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */
/* ------------------------------------------------------------------------ */
/* A bw_writer is a small struct you own: on the stack, static, or inside your
 * own struct. The library never allocates the writer itself, only its block.
 * The fields are private: use the functions below. An all-zero writer
 * (BW_WRITER_INIT) is valid and empty, uses the shared pool, and allocates
 * nothing until its first write. */
typedef struct bw_writer {
    unsigned char *data; /* the block (NULL while cap is 0)                   */
    size_t len;          /* bytes written                                     */
    size_t cap;          /* block size                                        */
    size_t lim;          /* fast-path limit: cap, or len while an error is
                            recorded, so that a recorded error (and an empty
                            writer) simply miss the inline fast path           */
    bw_pool *pool;       /* where blocks come from; NULL = shared pool        */
    int err;             /* sticky status, BW_OK if none                      */
    unsigned flags;      /* BW__EXTERNAL: data is the caller's buffer
                            (bw_init_buffer), never given to the pool         */
} bw_writer;

#define BW__EXTERNAL 0x1u
#define BW__OPEN     0x2u /* ASan only: the tail is not poisoned right now */

#ifdef __cplusplus
#  define BW_WRITER_INIT bw_writer()
#else
#  define BW_WRITER_INIT {NULL, 0, 0, 0, NULL, BW_OK, 0}
#endif

/* Initialise w over `pool` (NULL = the shared pool). With initial_capacity 0
 * nothing is allocated; else a block of the growth rule's size for it is
 * rented. Returns BW_OK; BW_EINVAL for a NULL w; BW_EOVERFLOW when the size
 * cannot be represented; BW_ENOMEM. On failure w is still a valid, empty
 * writer on that pool with no recorded error. Do not init a writer that
 * holds a block (release it first): the block would leak. */
BW_API int bw_init(bw_writer *w, bw_pool *pool, size_t initial_capacity);

/* Start w in a buffer of the caller's (stack, static, or inside a struct):
 * writes go there until it overflows, and only then does the writer rent a
 * pooled block (copying what it holds). Small messages thus allocate
 * nothing. The buffer must stay valid while w uses it; the library never
 * frees it or gives it to the pool. After bw_release the writer no longer
 * uses it. Returns BW_OK; BW_EINVAL for a NULL w, a NULL buf or a size of 0
 * (w is then a valid, empty writer on `pool`). */
BW_API int bw_init_buffer(bw_writer *w, bw_pool *pool, void *buf, size_t size);

/* Give the block back to the pool; w becomes empty (no error recorded) and
 * stays on its pool, reusable without bw_init. NULL is a no-op. */
BW_API void bw_release(bw_writer *w);

/* Length 0 and the recorded error cleared; the block is kept. NULL: no-op. */
BW_API void bw_clear(bw_writer *w);

/* Make sure at least n bytes are free without moving again. Returns BW_OK
 * (n = 0 always succeeds without allocating), or the error (recorded). */
BW_API int bw_reserve(bw_writer *w, size_t n);

/* Zero-copy path: a pointer to bw_data(w) + bw_len(w) with at least
 * max(size_hint, 1) writable bytes; *avail (may be NULL) receives all the free
 * space. Write into it, then commit with bw_advance. NULL on failure (the
 * error is recorded, *avail is 0). Invalid after the next growing call. */
BW_API void *bw_get_span(bw_writer *w, size_t size_hint, size_t *avail);

/* Commit n bytes written into the free space (after bw_get_span). n beyond
 * the free space gives BW_EINVAL, recorded, with nothing changed. */
BW_API int bw_advance(bw_writer *w, size_t n);

/* Append n bytes from src. src may point into the writer's own data, even
 * when the call has to grow. n = 0 is BW_OK (with src NULL too); src NULL
 * with n > 0 is BW_EINVAL. Errors are recorded and change nothing. */
static inline int bw_write(bw_writer *w, const void *src, size_t n);

/* Append the bytes of the NUL-terminated string s, without its NUL. s NULL is
 * BW_EINVAL. */
BW_API int bw_puts(bw_writer *w, const char *s);

/* printf straight into the buffer, no temporary (the NUL lands in the free
 * space, past the length; bytes past the length are unspecified afterwards).
 * BW_EINVAL for a NULL fmt or an encoding error from vsnprintf, with nothing
 * committed. */
BW_API int bw_printf(bw_writer *w, const char *fmt, ...) BW__PRINTF(2, 3);
BW_API int bw_vprintf(bw_writer *w, const char *fmt, va_list ap) BW__PRINTF(2, 0);

/* Typed writes: fixed-width integers and IEEE-754 floats in little (le) or
 * big (be) endian; unsigned LEB128 varints (1..10 bytes) and zig-zag signed
 * varints. All are static inline: a store and an add when the bytes fit, the
 * out-of-line grow path otherwise. Varints ask for room for 10 bytes. */
static inline int bw_put_u8(bw_writer *w, uint8_t v);
static inline int bw_put_u16le(bw_writer *w, uint16_t v);
static inline int bw_put_u32le(bw_writer *w, uint32_t v);
static inline int bw_put_u64le(bw_writer *w, uint64_t v);
static inline int bw_put_u16be(bw_writer *w, uint16_t v);
static inline int bw_put_u32be(bw_writer *w, uint32_t v);
static inline int bw_put_u64be(bw_writer *w, uint64_t v);
static inline int bw_put_i16le(bw_writer *w, int16_t v);
static inline int bw_put_i32le(bw_writer *w, int32_t v);
static inline int bw_put_i64le(bw_writer *w, int64_t v);
static inline int bw_put_i16be(bw_writer *w, int16_t v);
static inline int bw_put_i32be(bw_writer *w, int32_t v);
static inline int bw_put_i64be(bw_writer *w, int64_t v);
static inline int bw_put_f32le(bw_writer *w, float v);
static inline int bw_put_f64le(bw_writer *w, double v);
static inline int bw_put_f32be(bw_writer *w, float v);
static inline int bw_put_f64be(bw_writer *w, double v);
static inline int bw_put_uvarint(bw_writer *w, uint64_t v);
static inline int bw_put_svarint(bw_writer *w, int64_t v);

/* Accessors. On NULL: 0 / NULL. bw_data may be NULL while capacity is 0, and
 * is invalid after the next growing call. */
static inline const unsigned char *bw_data(const bw_writer *w);
static inline size_t bw_len(const bw_writer *w);
static inline size_t bw_capacity(const bw_writer *w);
static inline size_t bw_free_capacity(const bw_writer *w);

/* The recorded (sticky) status: BW_OK if none; BW_EINVAL for NULL. */
static inline int bw_error(const bw_writer *w);

/* The pool the writer's blocks come from (the shared pool for a writer made
 * with a NULL pool; NULL for a NULL writer). */
BW_API bw_pool *bw_writer_pool(const bw_writer *w);

/* Hand the block to the caller: returns bw_data(w) and sets *len and
 * *capacity (either may be NULL). The caller owns the block and gives it back
 * with bw_pool_return(bw_writer_pool(w), block, capacity). The writer becomes
 * empty (no error recorded) and stays on its pool. NULL, with 0 and 0, for a
 * writer that never allocated (or a NULL writer).
 * A writer still in its caller's buffer (bw_init_buffer) first copies its
 * bytes into a block rented from its pool, so what detach hands out can
 * always go back with bw_pool_return. If that rent fails, detach returns
 * NULL (0 and 0) and leaves the writer as it was, with BW_ENOMEM recorded. */
BW_API void *bw_detach(bw_writer *w, size_t *len, size_t *capacity);

/* Back-patching: overwrite n bytes at `offset` of what was already written
 * (a length prefix written as a placeholder before its body was known).
 * offset + n must not pass bw_len(w): otherwise BW_EINVAL (recorded) and
 * nothing changes; a recorded error refuses it too. n = 0 is BW_OK. The
 * typed forms store like the matching bw_put_*. */
BW_API int bw_patch(bw_writer *w, size_t offset, const void *src, size_t n);
static inline int bw_patch_u8(bw_writer *w, size_t offset, uint8_t v);
static inline int bw_patch_u16le(bw_writer *w, size_t offset, uint16_t v);
static inline int bw_patch_u32le(bw_writer *w, size_t offset, uint32_t v);
static inline int bw_patch_u64le(bw_writer *w, size_t offset, uint64_t v);
static inline int bw_patch_u16be(bw_writer *w, size_t offset, uint16_t v);
static inline int bw_patch_u32be(bw_writer *w, size_t offset, uint32_t v);
static inline int bw_patch_u64be(bw_writer *w, size_t offset, uint64_t v);

/* ------------------------------------------------------------------------ */
/* Inline implementation (private: names with bw__ may change)             */
/* ------------------------------------------------------------------------ */
/* The slow path: make room for n more bytes, or record and return why not.
 * Kept out of line and cold so the fast paths stay a compare, a store and an
 * add (about 3 instructions more than a raw store). */
BW_API int bw__grow(bw_writer *w, size_t n);
BW_API int bw__write_slow(bw_writer *w, const void *src, size_t n);

/* Under AddressSanitizer the writer's unused tail [len, cap) is poisoned
 * as a contiguous container, so reading or writing past bw_len() is
 * reported (container-overflow) even inside the block; get_span makes the
 * span writable until advance. Never for a caller's buffer (bw_init_buffer).
 * Define BW_NO_ASAN_CONTAINER to turn it off. In builds without ASan this
 * compiles to nothing. */
#if defined(__SANITIZE_ADDRESS__)
#  define BW__ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define BW__ASAN 1
#  endif
#endif
#if defined(BW__ASAN) && !defined(BW_NO_ASAN_CONTAINER)
void __sanitizer_annotate_contiguous_container(const void *beg, const void *end,
                                               const void *old_mid, const void *new_mid);
/* ASan checks that old_mid is where the poisoning really starts: the tail
 * is poisoned from len, or from nowhere (BW__OPEN: a span, printf's
 * scratch, or a block just rented). */
#  define BW__TAIL_RAW(w, old_mid, new_mid)                                  \
    do {                                                                     \
        if ((w)->cap != 0 && !((w)->flags & BW__EXTERNAL))                   \
            __sanitizer_annotate_contiguous_container(                       \
                (w)->data, (w)->data + (w)->cap, (w)->data + (old_mid),      \
                (w)->data + (new_mid));                                      \
    } while (0)
#  define BW__TAIL_MID(w) (((w)->flags & BW__OPEN) ? (w)->cap : (w)->len)
/* Open the whole tail (a span, scratch, or before the block leaves). */
#  define BW__TAIL_OPEN(w)                                                   \
    do { BW__TAIL_RAW(w, BW__TAIL_MID(w), (w)->cap); (w)->flags |= BW__OPEN; } while (0)
/* Poison from new_len on (call before len becomes new_len). */
#  define BW__TAIL_CLOSE(w, new_len)                                         \
    do { BW__TAIL_RAW(w, BW__TAIL_MID(w), new_len); (w)->flags &= ~BW__OPEN; } while (0)
#else
#  define BW__TAIL_RAW(w, old_mid, new_mid) ((void)0)
#  define BW__TAIL_OPEN(w) ((void)0)
#  define BW__TAIL_CLOSE(w, new_len) ((void)0)
#endif

/* True when n more bytes fit and no error is recorded (lim == len then). */
#define BW__FITS(w, n) ((w) != NULL && (w)->lim - (w)->len >= (size_t)(n))

static inline void bw__st16le(unsigned char *p, uint16_t v)
{ p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void bw__st32le(unsigned char *p, uint32_t v)
{ p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24); }
static inline void bw__st64le(unsigned char *p, uint64_t v)
{ bw__st32le(p, (uint32_t)v); bw__st32le(p + 4, (uint32_t)(v >> 32)); }
static inline void bw__st16be(unsigned char *p, uint16_t v)
{ p[0] = (unsigned char)(v >> 8); p[1] = (unsigned char)v; }
static inline void bw__st32be(unsigned char *p, uint32_t v)
{ p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v; }
static inline void bw__st64be(unsigned char *p, uint64_t v)
{ bw__st32be(p, (uint32_t)(v >> 32)); bw__st32be(p + 4, (uint32_t)v); }

/* One body for every fixed-width put: room (fast compare, else grow), store
 * with the given function, commit. The stores compile to one mov (plus a
 * bswap for big endian) at -O2. */
#define BW__DEFINE_PUT(name, type, utype, size, store)                       \
    static inline int name(bw_writer *w, type v) {                           \
        if (BW__UNLIKELY(!BW__FITS(w, size))) {                              \
            int bw__rc = bw__grow(w, size);                                  \
            if (bw__rc != BW_OK) return bw__rc;                              \
        }                                                                    \
        BW__TAIL_CLOSE(w, w->len + size);                                    \
        store(w->data + w->len, (utype)v);                                   \
        w->len += size;                                                      \
        return BW_OK;                                                        \
    }

static inline void bw__st8(unsigned char *p, uint8_t v) { p[0] = v; }
BW__DEFINE_PUT(bw_put_u8,    uint8_t,  uint8_t,  1, bw__st8)
BW__DEFINE_PUT(bw_put_u16le, uint16_t, uint16_t, 2, bw__st16le)
BW__DEFINE_PUT(bw_put_u32le, uint32_t, uint32_t, 4, bw__st32le)
BW__DEFINE_PUT(bw_put_u64le, uint64_t, uint64_t, 8, bw__st64le)
BW__DEFINE_PUT(bw_put_u16be, uint16_t, uint16_t, 2, bw__st16be)
BW__DEFINE_PUT(bw_put_u32be, uint32_t, uint32_t, 4, bw__st32be)
BW__DEFINE_PUT(bw_put_u64be, uint64_t, uint64_t, 8, bw__st64be)
BW__DEFINE_PUT(bw_put_i16le, int16_t,  uint16_t, 2, bw__st16le)
BW__DEFINE_PUT(bw_put_i32le, int32_t,  uint32_t, 4, bw__st32le)
BW__DEFINE_PUT(bw_put_i64le, int64_t,  uint64_t, 8, bw__st64le)
BW__DEFINE_PUT(bw_put_i16be, int16_t,  uint16_t, 2, bw__st16be)
BW__DEFINE_PUT(bw_put_i32be, int32_t,  uint32_t, 4, bw__st32be)
BW__DEFINE_PUT(bw_put_i64be, int64_t,  uint64_t, 8, bw__st64be)

/* Floats: their IEEE-754 bits, through memcpy (no aliasing games). */
static inline uint32_t bw__f32bits(float v)
{ uint32_t u; memcpy(&u, &v, sizeof u); return u; }
static inline uint64_t bw__f64bits(double v)
{ uint64_t u; memcpy(&u, &v, sizeof u); return u; }
static inline int bw_put_f32le(bw_writer *w, float v)  { return bw_put_u32le(w, bw__f32bits(v)); }
static inline int bw_put_f64le(bw_writer *w, double v) { return bw_put_u64le(w, bw__f64bits(v)); }
static inline int bw_put_f32be(bw_writer *w, float v)  { return bw_put_u32be(w, bw__f32bits(v)); }
static inline int bw_put_f64be(bw_writer *w, double v) { return bw_put_u64be(w, bw__f64bits(v)); }

static inline int bw_put_uvarint(bw_writer *w, uint64_t v)
{
    unsigned char *p;
    if (BW__UNLIKELY(!BW__FITS(w, 10))) {
        int rc = bw__grow(w, 10);
        if (rc != BW_OK) return rc;
    }
    BW__TAIL_CLOSE(w, w->len + 10);
    p = w->data + w->len;
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    BW__TAIL_RAW(w, w->len + 10, (size_t)(p - w->data));
    w->len = (size_t)(p - w->data);
    return BW_OK;
}

static inline int bw_put_svarint(bw_writer *w, int64_t v)
{
    /* zig-zag: 0,-1,1,-2,... -> 0,1,2,3,...; the shift is done unsigned so
     * that it is defined for negative values. */
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(0 - ((uint64_t)v >> 63));
    return bw_put_uvarint(w, u);
}

static inline int bw_write(bw_writer *w, const void *src, size_t n)
{
    /* n - 1 wraps for n == 0, which then takes the slow path (it must report
     * a recorded error, and a NULL src is allowed there). */
    if (BW__LIKELY(w != NULL && src != NULL && n - 1 < w->lim - w->len)) {
        BW__TAIL_CLOSE(w, w->len + n);
        memcpy(w->data + w->len, src, n);
        w->len += n;
        return BW_OK;
    }
    return bw__write_slow(w, src, n);
}

/* Patches: the bytes, stored as the puts store them, then bw_patch. */
#define BW__DEFINE_PATCH(name, utype, size, store)                           \
    static inline int name(bw_writer *w, size_t offset, utype v) {           \
        unsigned char bw__b[size];                                           \
        store(bw__b, v);                                                     \
        return bw_patch(w, offset, bw__b, size);                             \
    }
BW__DEFINE_PATCH(bw_patch_u8,    uint8_t,  1, bw__st8)
BW__DEFINE_PATCH(bw_patch_u16le, uint16_t, 2, bw__st16le)
BW__DEFINE_PATCH(bw_patch_u32le, uint32_t, 4, bw__st32le)
BW__DEFINE_PATCH(bw_patch_u64le, uint64_t, 8, bw__st64le)
BW__DEFINE_PATCH(bw_patch_u16be, uint16_t, 2, bw__st16be)
BW__DEFINE_PATCH(bw_patch_u32be, uint32_t, 4, bw__st32be)
BW__DEFINE_PATCH(bw_patch_u64be, uint64_t, 8, bw__st64be)

static inline const unsigned char *bw_data(const bw_writer *w)
{ return w ? w->data : (const unsigned char *)NULL; }
static inline size_t bw_len(const bw_writer *w) { return w ? w->len : 0; }
static inline size_t bw_capacity(const bw_writer *w) { return w ? w->cap : 0; }
static inline size_t bw_free_capacity(const bw_writer *w)
{ return w ? w->cap - w->len : 0; }
static inline int bw_error(const bw_writer *w) { return w ? w->err : BW_EINVAL; }

/* ------------------------------------------------------------------------ */
/* Chain: a segmented writer                                                */
/* ------------------------------------------------------------------------ */
/* A bw_chain writes into a list of blocks rented from a pool instead of one
 * contiguous block: it never copies on growth, and with default options
 * never touches the backing allocator past warm-up (every block is at or
 * below the threshold). Block sizes grow geometrically (4 KiB, 8 KiB, ...)
 * up to the pool's threshold, then stay there. Each block's link header
 * (32 bytes) lives inside the block itself: the chain allocates nothing of
 * its own, per write or per block. Read it out as an iovec (for writev),
 * flatten it into a writer, copy ranges out, or consume it from the front
 * (queue use). Same error model as the writer: a sticky error, failure
 * atomicity, overflow checks. Like a writer, a chain belongs to one thread
 * at a time; the struct is the caller's; BW_CHAIN_INIT is a valid empty
 * chain on the shared pool. */
struct bw__cblock;
typedef struct bw_chain {
    unsigned char *wp;         /* write position in the last block           */
    size_t wavail;             /* free bytes there; 0 while an error is
                                  recorded (so the fast path misses)          */
    struct bw__cblock *head, *tail;
    size_t done;               /* bytes in blocks before the tail            */
    size_t nblocks;
    bw_pool *pool;             /* NULL = shared pool                         */
    int err;                   /* sticky status                              */
} bw_chain;

#ifdef __cplusplus
#  define BW_CHAIN_INIT bw_chain()
#else
#  define BW_CHAIN_INIT {NULL, 0, NULL, NULL, 0, 0, NULL, BW_OK}
#endif

/* Start an empty chain on `pool` (NULL = shared). Allocates nothing.
 * BW_EINVAL for a NULL c. Do not init a chain that holds blocks. */
BW_API int bw_chain_init(bw_chain *c, bw_pool *pool);
/* Every block back to the pool; c is empty (no error) and reusable. */
BW_API void bw_chain_release(bw_chain *c);
/* Length 0 and the error cleared; keeps the first block, returns the rest. */
BW_API void bw_chain_clear(bw_chain *c);

/* Writes: as bw_write / bw_put_* / bw_puts / bw_printf, spanning blocks.
 * src may not point into the chain. */
static inline int bw_chain_write(bw_chain *c, const void *src, size_t n);
BW_API int bw_chain_puts(bw_chain *c, const char *s);
BW_API int bw_chain_printf(bw_chain *c, const char *fmt, ...) BW__PRINTF(2, 3);
BW_API int bw_chain_vprintf(bw_chain *c, const char *fmt, va_list ap) BW__PRINTF(2, 0);
static inline int bw_chain_put_u8(bw_chain *c, uint8_t v);
static inline int bw_chain_put_u16le(bw_chain *c, uint16_t v);
static inline int bw_chain_put_u32le(bw_chain *c, uint32_t v);
static inline int bw_chain_put_u64le(bw_chain *c, uint64_t v);
static inline int bw_chain_put_u16be(bw_chain *c, uint16_t v);
static inline int bw_chain_put_u32be(bw_chain *c, uint32_t v);
static inline int bw_chain_put_u64be(bw_chain *c, uint64_t v);
static inline int bw_chain_put_uvarint(bw_chain *c, uint64_t v);
static inline int bw_chain_put_svarint(bw_chain *c, int64_t v);

/* Zero-copy: a contiguous span of at least max(size_hint, 1) bytes at the
 * end of the chain (a new block is started when the last one has less
 * room: the rest of that block stays unused). *avail gets the span's size.
 * Commit with bw_chain_advance (beyond *avail: BW_EINVAL, recorded). */
BW_API void *bw_chain_get_span(bw_chain *c, size_t size_hint, size_t *avail);
BW_API int bw_chain_advance(bw_chain *c, size_t n);

/* Overwrite n bytes at offset (which may span blocks); offset + n must not
 * pass the length (else BW_EINVAL, recorded). Walks the blocks: O(blocks). */
BW_API int bw_chain_patch(bw_chain *c, size_t offset, const void *src, size_t n);

/* Reading out. */
BW_API size_t bw_chain_len(const bw_chain *c);
static inline int bw_chain_error(const bw_chain *c) { return c ? c->err : BW_EINVAL; }
/* Fill iov[0..max) with the chain's bytes in order (empty blocks skipped);
 * returns how many entries all of it needs (call with max 0 to ask), so a
 * result above max means iov holds only the first max pieces. */
struct iovec;
BW_API size_t bw_chain_iovec(const bw_chain *c, struct iovec *iov, size_t max);
/* Append every byte of the chain to w (one copy); the chain is unchanged.
 * The writer's status on failure (nothing appended then). */
BW_API int bw_chain_flatten(const bw_chain *c, bw_writer *w);
/* Copy n bytes from offset into dst; BW_EINVAL if the range passes the end. */
BW_API int bw_chain_copy_out(const bw_chain *c, size_t offset, void *dst, size_t n);
/* Drop the first n bytes (n > length: BW_EINVAL, recorded, nothing
 * dropped), giving emptied blocks back to the pool. Invalidates a span
 * from bw_chain_get_span that was not advanced yet. */
BW_API int bw_chain_consume(bw_chain *c, size_t n);

/* ------------------------------------------------------------------------ */
/* I/O helpers                                                              */
/* ------------------------------------------------------------------------ */
/* Write all of w's bytes to fd, retrying short writes and EINTR. *written
 * (may be NULL) gets how many went out. BW_OK; BW_EIO with errno set (e.g.
 * EAGAIN on a non-blocking fd: call again with the rest); BW_EINVAL for a
 * NULL w. The writer is not changed. */
BW_API int bw_write_fd(const bw_writer *w, int fd, size_t *written);
/* Write the chain's bytes to fd with writev (at most IOV_MAX pieces per
 * call), retrying short writes and EINTR, and consume what went out: on
 * BW_EIO the rest stays queued. *written as above. */
BW_API int bw_chain_write_fd(bw_chain *c, int fd, size_t *written);

/* A FILE* over a writer or a chain (write-only), so existing fprintf code
 * writes into it: fopencookie on glibc, funopen on the BSDs and macOS.
 * Bytes reach the writer when the stream is flushed or closed (fflush /
 * fclose); fclose does not release the writer. NULL (errno set) on failure.
 * Where neither exists, or with BW_NO_FILE_ADAPTER defined, these are not
 * declared and BW_HAVE_FILE_ADAPTER is not defined. */
#if !defined(BW_NO_FILE_ADAPTER) && \
    (defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__) || \
     defined(__NetBSD__) || defined(__OpenBSD__) || defined(__DragonFly__))
#  define BW_HAVE_FILE_ADAPTER 1
BW_API FILE *bw_fopen_writer(bw_writer *w);
BW_API FILE *bw_fopen_chain(bw_chain *c);
#endif

/* Chain inline paths. */
BW_API int bw__chain_write_slow(bw_chain *c, const void *src, size_t n);

static inline int bw_chain_write(bw_chain *c, const void *src, size_t n)
{
    /* As bw_write: n == 0 and NULL src take the slow path. */
    if (BW__LIKELY(c != NULL && src != NULL && n - 1 < c->wavail)) {
        memcpy(c->wp, src, n);
        c->wp += n;
        c->wavail -= n;
        return BW_OK;
    }
    return bw__chain_write_slow(c, src, n);
}

#define BW__DEFINE_CHAIN_PUT(name, utype, size, store)                       \
    static inline int name(bw_chain *c, utype v) {                           \
        unsigned char bw__b[size];                                           \
        store(bw__b, v);                                                     \
        return bw_chain_write(c, bw__b, size);                               \
    }
BW__DEFINE_CHAIN_PUT(bw_chain_put_u8,    uint8_t,  1, bw__st8)
BW__DEFINE_CHAIN_PUT(bw_chain_put_u16le, uint16_t, 2, bw__st16le)
BW__DEFINE_CHAIN_PUT(bw_chain_put_u32le, uint32_t, 4, bw__st32le)
BW__DEFINE_CHAIN_PUT(bw_chain_put_u64le, uint64_t, 8, bw__st64le)
BW__DEFINE_CHAIN_PUT(bw_chain_put_u16be, uint16_t, 2, bw__st16be)
BW__DEFINE_CHAIN_PUT(bw_chain_put_u32be, uint32_t, 4, bw__st32be)
BW__DEFINE_CHAIN_PUT(bw_chain_put_u64be, uint64_t, 8, bw__st64be)

static inline int bw_chain_put_uvarint(bw_chain *c, uint64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (unsigned char)v;
    return bw_chain_write(c, b, n);
}

static inline int bw_chain_put_svarint(bw_chain *c, int64_t v)
{
    return bw_chain_put_uvarint(c, ((uint64_t)v << 1) ^ (uint64_t)(0 - ((uint64_t)v >> 63)));
}

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

/* Private functions are static in the single header (as SQLite's
 * amalgamation does), so they stay out of the program's symbol table.
 * "unused": some are called only in some configurations (BW_DEBUG). */
#ifndef BW__INTERNAL
#  if defined(__GNUC__) || defined(__clang__)
#    define BW__INTERNAL static __attribute__((unused))
#  else
#    define BW__INTERNAL static
#  endif
#endif

/*************** Begin file pool/pool_internal.h ****************************/
/* pool_internal.h - the pool's private structures, shared by the files of
 * pool/ and by bufwriter.c. Nothing here is part of the public API. */
#ifndef BW_POOL_INTERNAL_H
#define BW_POOL_INTERNAL_H

/* #include "../bufwriter.h": amalgamated above */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Private functions have external linkage inside the library (hidden by
 * -fvisibility=hidden) and are static in the single-header build. */
#ifndef BW__INTERNAL
#  define BW__INTERNAL
#endif

#define BW__MAX_CLASSES 64
#define BW__RECENT 16      /* lengths remembered for the learned size      */

/* Compile-time knobs (documented defaults). */
#ifndef BW__DEFAULT_THRESHOLD
#  define BW__DEFAULT_THRESHOLD ((size_t)1 << 20)     /* 1 MiB */
#endif
#ifndef BW__DEFAULT_MIN_BLOCK
#  define BW__DEFAULT_MIN_BLOCK ((size_t)16)
#endif
#ifndef BW__DEFAULT_PER_CLASS
#  define BW__DEFAULT_PER_CLASS ((size_t)32)
#endif
#ifndef BW__DEFAULT_RETAINED
#  define BW__DEFAULT_RETAINED  ((size_t)64 << 20)    /* 64 MiB */
#endif

/* Counters, defined once (X-macro) so that the per-thread and the pool-wide
 * copies, their sum and their folding can never disagree. rents is
 * hits + misses; out_bytes is bytes rented minus bytes returned (mod 2^64:
 * a block rented on one thread and returned on another makes one thread's
 * share negative, the sum is right). */
#define BW__COUNTERS(X) \
    X(hits) X(misses) X(returns) X(backing_allocs) X(backing_frees) X(out_bytes)

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

/* One thread's cache for one pool. Only its owner thread changes it (other
 * threads read it for stats, and empty it only when the owner is quiescent
 * (destroy) or gone (exit)).
 *
 * Each class's stack is driven by two monotonic counters: push and pop. The
 * number of blocks held is push - pop, the top slot is at that index, and
 * the counters double as the statistics (a pop is a hit, a push a return),
 * so each fast-path operation updates exactly one counter: a relaxed load
 * and store, no lock prefix. resv[ci] is how many slots of the class have
 * retention budget reserved from the pool; a return takes the fast path
 * only into a reserved slot. */
typedef struct bw__tcache {
    _Atomic uint64_t pool_id;        /* the pool's id; 0 once the pool is gone */
    bw_pool *pool;                   /* valid while pool_id != 0               */
    struct bw__tcache *thread_next;  /* the owner thread's list                */
    struct bw__tcache *pool_prev, *pool_next; /* pool registry (bw__reg_lock) */
    bw__counters ctr;                /* slow-path events                       */
    unsigned char resv[BW__MAX_CLASSES];
    struct {
        _Atomic uint64_t push, pop;
    } n[BW__MAX_CLASSES];
    void *slots[];                   /* nclasses * BW_THREAD_CACHE_SLOTS       */
} bw__tcache;

/* Blocks held in class ci of tc. */
static inline size_t bw__tc_held(bw__tcache *tc, unsigned ci)
{
    return (size_t)(atomic_load_explicit(&tc->n[ci].push, memory_order_relaxed) -
                    atomic_load_explicit(&tc->n[ci].pop, memory_order_relaxed));
}

/* Single-writer increment: a plain load and store, no lock prefix. */
static inline void bw__inc(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* The shared level of one class: a locked stack, grown on demand up to the
 * per-class bound. An array, not a list threaded through the blocks: a
 * use-after-return can then never corrupt the pool's own bookkeeping. */
typedef struct bw__class {
    pthread_mutex_t lock;
    void **stack;
    size_t count, alloc;
} bw__class;

struct bw_pool {
    uint64_t id;               /* unique for the process lifetime            */
    size_t threshold;          /* max_pooled_size                            */
    size_t min_size;           /* min_block_size                             */
    unsigned min_shift;        /* log2(min_size)                             */
    unsigned nclasses;         /* classes min_size .. threshold              */
    size_t max_per_class;
    size_t max_retained;
    unsigned flags;
    bool use_tcache;
    bool checked;
    bool bypass;               /* BW_POOL_BYPASS: every rent a real alloc    */
    size_t extra;              /* canary bytes after each backing block      */
    size_t fast_rent_limit;    /* threshold; 0 when rent must skip the fast
                                  path (checked mode, no thread cache)        */
    size_t fast_return_span;   /* threshold - min_size + 1; 0 when return must
                                  skip it (also when zeroing)                 */
    bw_allocator alloc;        /* a copy of the hook                         */
    _Atomic size_t reserved;   /* shared-level bytes + every thread cache's
                                  reserved slots                              */
    _Atomic size_t shared_bytes; /* bytes in the shared level                */
    bw__counters ctr;          /* paths without a thread cache, and the
                                  counters of threads that have exited        */
    void *check;               /* checked mode's side table (check.c)        */
    bw__tcache *caches;        /* registry of thread caches (bw__reg_lock)   */
    /* Large retention (large.c): kept blocks above the threshold. */
    size_t max_large_bytes, max_large_blocks;
    pthread_mutex_t large_lock;
    struct bw__large *large;   /* oldest first                               */
    size_t nlarge;
    _Atomic size_t large_bytes;
    /* Learned starting size (large.c): the last lengths writers ended at. */
    bool learn;
    size_t max_learned;
    _Atomic size_t recent[BW__RECENT];
    _Atomic unsigned recent_next;
    bw__class cls[];           /* nclasses                                   */
};

typedef struct bw__large {
    void *block;
    size_t size;
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
    size_t x = (min_size - (min_size != 0)) | (p->min_size - 1);
    return (unsigned)(64 - __builtin_clzll((unsigned long long)x)) - p->min_shift;
}

/* Counter helpers: a thread cache's counters have one writer, so a relaxed
 * load and store suffice; the pool-wide ones take an atomic add. */
#define BW__TC_ADD(tc, name, v) \
    atomic_store_explicit(&(tc)->ctr.name, \
        atomic_load_explicit(&(tc)->ctr.name, memory_order_relaxed) + (v), \
        memory_order_relaxed)
#define BW__POOL_ADD(p, name, v) \
    atomic_fetch_add_explicit(&(p)->ctr.name, (uint64_t)(v), memory_order_relaxed)

/* Allocation through the hook, counted (tc may be NULL). */
BW__INTERNAL void *bw__backing_alloc(bw_pool *p, bw__tcache *tc, size_t size);
BW__INTERNAL void bw__backing_free(bw_pool *p, bw__tcache *tc, void *b, size_t size);

/* Zeroing the compiler keeps (BW_POOL_ZERO_ON_RETURN). */
BW__INTERNAL void bw__zero(void *b, size_t n);

/* Shared level. */
BW__INTERNAL void *bw__shared_pop(bw_pool *p, unsigned ci);
BW__INTERNAL bool bw__shared_push(bw_pool *p, unsigned ci, void *b);
/* Retention budget: take or give back bytes of pool->reserved. */
BW__INTERNAL bool bw__budget_take(bw_pool *p, size_t n);
BW__INTERNAL void bw__budget_give(bw_pool *p, size_t n);

/* Thread caches (tcache.c). */
BW__INTERNAL bw__tcache *bw__tcache_get_slow(bw_pool *p);
/* Move every block of tc to the shared level (to_shared) or free it, and
 * give back its reserved budget. Caller holds the registry lock or owns tc. */
BW__INTERNAL void bw__tcache_flush(bw__tcache *tc, bool to_shared);
BW__INTERNAL void bw__tcache_orphan_all(bw_pool *p);
/* Sum every live thread cache's counters into s and the bytes its slots
 * hold into *held, under the registry lock (exact when no thread is in the
 * pool). */
BW__INTERNAL void bw__tcache_sum(bw_pool *p, bw__sums *s, size_t *held);
BW__INTERNAL void bw__tcache_trim_self(bw_pool *p);
BW__INTERNAL uint64_t bw__next_pool_id(void);

/* The calling thread's most recently used cache (initial-exec TLS: one
 * load, no __tls_get_addr call, in the shared library too). Never NULL: it
 * starts at an empty cache whose pool id (0) matches no pool, so "no cache
 * yet" costs the fast path no extra branch. */
#if defined(__GNUC__) || defined(__clang__)
#  define BW__TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#  define BW__TLS_MODEL
#endif
static _Thread_local bw__tcache *bw__tl_last BW__TLS_MODEL;

static inline bw__tcache *bw__tcache_get(bw_pool *p)
{
    bw__tcache *tc = bw__tl_last;
    if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) return tc;
    return bw__tcache_get_slow(p);
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

/* Large retention and the learned size (large.c). */
BW__INTERNAL bool bw__large_init(bw_pool *p, const bw_pool_options *o);
BW__INTERNAL void *bw__large_take(bw_pool *p, size_t size);
BW__INTERNAL bool bw__large_keep(bw_pool *p, void *b, size_t size);
BW__INTERNAL void bw__large_free_all(bw_pool *p);
BW__INTERNAL void bw__learn_record(bw_pool *p, size_t len);
BW__INTERNAL size_t bw__learned(bw_pool *p);

/* Grow a block above the threshold (used by the writer): into a kept large
 * block of new_cap bytes when there is one (copying len bytes: warm memory
 * beats fresh pages), else with the allocator's realloc hook (glibc moves
 * large blocks with mremap instead of copying). Returns the new block, or
 * NULL with b untouched. The caller checks that p->alloc.realloc exists. */
BW__INTERNAL void *bw__pool_regrow(bw_pool *p, void *b, size_t old_cap, size_t len,
                                   size_t new_cap);

/* For the I/O helpers (io.c, chain.c): drop n bytes that went out. */
BW__INTERNAL void bw__chain_consume_sent(bw_chain *c, size_t n);

#endif /* BW_POOL_INTERNAL_H */
/*************** End file pool/pool_internal.h ******************************/

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

/*************** Begin file bufwriter.c *************************************/
/* bufwriter.c - the writer's out-of-line paths: growth, the sticky error,
 * spans, printf, detach. The fast paths are static inline in bufwriter.h. */
/* #include "bufwriter.h": amalgamated above */
/* #include "pool/pool_internal.h": amalgamated above */

#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
#  define BW__COLD __attribute__((cold, noinline))
#else
#  define BW__COLD
#endif

/* The largest block the writer asks for: sizes past PTRDIFF_MAX break
 * pointer differences, so they count as unrepresentable. */
#define BW__MAX_BLOCK ((size_t)PTRDIFF_MAX)

const char *bw_strerror(int status)
{
    switch (status) {
    case BW_OK:        return "success";
    case BW_ENOMEM:    return "out of memory (the backing allocator failed)";
    case BW_EOVERFLOW: return "size overflow (a size that cannot be represented)";
    case BW_EINVAL:    return "invalid argument";
    case BW_EIO:       return "I/O error (see errno)";
    default:           return "unknown bufwriter status";
    }
}

const char *bw_version(void) { return BW_VERSION_STRING; }

/* Record the first error; later writes miss the fast path (lim == len). */
static int bw__fail(bw_writer *w, int rc)
{
    if (w->err == BW_OK) w->err = rc;
    w->lim = w->len;
    return rc;
}

static bw_pool *bw__pool_of(bw_writer *w)
{
    if (w->pool == NULL) w->pool = bw_pool_shared();
    return w->pool;
}

/* The growth rule: room for len + n bytes, at least twice the old capacity,
 * rounded to the pool's class at or below its threshold and to the next
 * power of two above it (so a caller's odd-sized first buffer still leads to
 * power-of-two blocks). BW_EOVERFLOW when that size cannot be represented. */
static int bw__target(const bw_pool *p, size_t len, size_t n, size_t cap, size_t *out)
{
    size_t need;
    if (n > BW__MAX_BLOCK - len) return BW_EOVERFLOW;
    need = len + n;
    if (cap > BW__MAX_BLOCK / 2) return BW_EOVERFLOW;
    if (need < cap * 2) need = cap * 2;
    if (need <= p->threshold) {
        *out = bw_pool_class_size(p, need);
    } else {
        if (need > BW__MAX_BLOCK / 2 + 1) return BW_EOVERFLOW;
        *out = bw__pow2_ceil(need);
    }
    return BW_OK;
}

/* Move to a block with room for n more bytes. With src, also append src[0,n)
 * before the old block goes back to the pool (src may point into it). On
 * failure nothing changes but the recorded error. */
static BW__COLD int bw__move(bw_writer *w, size_t n, const void *src)
{
    bw_pool *p = bw__pool_of(w);
    unsigned char *nb;
    size_t cap, got;
    int rc;

    size_t want = n;

    if (p == NULL) return bw__fail(w, BW_ENOMEM);
    /* A writer's first block: at the size recent writers ended at, if the
     * pool learns it (BW_POOL_LEARN_SIZE), so similar jobs never grow. */
    if (w->cap == 0 && p->learn) {
        size_t learned = bw__learned(p);
        if (learned > want) want = learned;
    }
    rc = bw__target(p, w->len, want, w->cap, &cap);
    if (rc != BW_OK) return bw__fail(w, rc);

    /* Above the threshold the old block is the allocator's own: let the
     * pool resize it in place, remap it (glibc's mremap) or move it into a
     * kept warm block, instead of copying into fresh memory. Not when src
     * lies in the old block (realloc may free it), nor for the caller's
     * buffer. */
    if (w->cap > p->threshold && p->alloc.realloc != NULL && !(w->flags & BW__EXTERNAL) &&
        (src == NULL || (uintptr_t)src + n <= (uintptr_t)w->data ||
         (uintptr_t)src >= (uintptr_t)w->data + w->cap)) {
        BW__TAIL_OPEN(w); /* the allocator sees plain memory */
        nb = (unsigned char *)bw__pool_regrow(p, w->data, w->cap, w->len, cap);
        if (nb == NULL) {
            BW__TAIL_CLOSE(w, w->len);
            return bw__fail(w, BW_ENOMEM);
        }
        got = cap;
        if (src != NULL) memcpy(nb + w->len, src, n);
    } else {
        nb = (unsigned char *)bw_pool_rent(p, cap, &got);
        if (nb == NULL) return bw__fail(w, BW_ENOMEM);
        if (w->len != 0) memcpy(nb, w->data, w->len);
        if (src != NULL) memcpy(nb + w->len, src, n);
        if (w->flags & BW__EXTERNAL) {
            w->flags &= ~BW__EXTERNAL; /* not the pool's */
        } else if (w->data != NULL) {
            BW__TAIL_OPEN(w); /* the pool sees plain memory */
            (void)bw_pool_return(p, w->data, w->cap);
        }
    }
    w->data = nb;
    w->cap = got;
    w->lim = got;
    if (src != NULL) w->len += n;
    w->flags |= BW__OPEN; /* a new block: nothing poisoned yet */
    BW__TAIL_CLOSE(w, w->len);
    return BW_OK;
}

int bw__grow(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (w->cap - w->len >= n) return BW_OK;
    return bw__move(w, n, NULL);
}

int bw__write_slow(bw_writer *w, const void *src, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__fail(w, BW_EINVAL);
    if (w->cap - w->len >= n) {
        BW__TAIL_CLOSE(w, w->len + n);
        memcpy(w->data + w->len, src, n);
        w->len += n;
        return BW_OK;
    }
    return bw__move(w, n, src);
}

int bw_init(bw_writer *w, bw_pool *pool, size_t initial_capacity)
{
    bw_pool *p;
    size_t cap, got;
    void *b;
    int rc;

    if (w == NULL) return BW_EINVAL;
    memset(w, 0, sizeof *w);
    w->pool = pool;
    if (initial_capacity == 0) return BW_OK;
    p = bw__pool_of(w);
    if (p == NULL) return BW_ENOMEM;
    rc = bw__target(p, 0, initial_capacity, 0, &cap);
    if (rc != BW_OK) return rc;
    b = bw_pool_rent(p, cap, &got);
    if (b == NULL) return BW_ENOMEM;
    w->data = (unsigned char *)b;
    w->cap = w->lim = got;
    w->flags |= BW__OPEN;
    BW__TAIL_CLOSE(w, 0);
    return BW_OK;
}

int bw_init_buffer(bw_writer *w, bw_pool *pool, void *buf, size_t size)
{
    if (w == NULL) return BW_EINVAL;
    memset(w, 0, sizeof *w);
    w->pool = pool;
    if (buf == NULL || size == 0) return BW_EINVAL;
    if (size > BW__MAX_BLOCK) size = BW__MAX_BLOCK;
    w->data = (unsigned char *)buf;
    w->cap = w->lim = size;
    w->flags = BW__EXTERNAL;
    return BW_OK;
}

/* The end of a job: its length teaches a learning pool. */
static void bw__job_done(bw_writer *w)
{
    if (w->len != 0 && w->pool != NULL) bw__learn_record(w->pool, w->len);
}

/* Empty, no error, no block; keeps the pool. */
static void bw__reset(bw_writer *w)
{
    w->data = NULL;
    w->len = w->cap = w->lim = 0;
    w->err = BW_OK;
    w->flags = 0;
}

void bw_release(bw_writer *w)
{
    if (w == NULL) return;
    bw__job_done(w);
    if (w->data != NULL && !(w->flags & BW__EXTERNAL)) {
        BW__TAIL_OPEN(w);
        (void)bw_pool_return(w->pool, w->data, w->cap);
    }
    bw__reset(w);
}

void bw_clear(bw_writer *w)
{
    if (w == NULL) return;
    bw__job_done(w);
    BW__TAIL_CLOSE(w, 0);
    w->len = 0;
    w->lim = w->cap;
    w->err = BW_OK;
}

int bw_patch(bw_writer *w, size_t offset, const void *src, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n == 0) return BW_OK;
    if (src == NULL || offset > w->len || n > w->len - offset) return bw__fail(w, BW_EINVAL);
    memmove(w->data + offset, src, n);
    return BW_OK;
}

int bw_reserve(bw_writer *w, size_t n) { return bw__grow(w, n); }

void *bw_get_span(bw_writer *w, size_t size_hint, size_t *avail)
{
    if (avail != NULL) *avail = 0;
    if (bw__grow(w, size_hint ? size_hint : 1) != BW_OK) return NULL;
    if (avail != NULL) *avail = w->cap - w->len;
    BW__TAIL_OPEN(w); /* the span is writable until advance */
    return w->data + w->len;
}

int bw_advance(bw_writer *w, size_t n)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (n > w->cap - w->len) return bw__fail(w, BW_EINVAL);
    BW__TAIL_CLOSE(w, w->len + n);
    w->len += n;
    return BW_OK;
}

int bw_puts(bw_writer *w, const char *s)
{
    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (s == NULL) return bw__fail(w, BW_EINVAL);
    return bw_write(w, s, strlen(s));
}

int bw_vprintf(bw_writer *w, const char *fmt, va_list ap)
{
    size_t avail;
    va_list cp;
    int r;

    if (w == NULL) return BW_EINVAL;
    if (w->err != BW_OK) return w->err;
    if (fmt == NULL) return bw__fail(w, BW_EINVAL);
    /* First try straight into the free space (the NUL lands past len). */
    avail = w->cap - w->len;
    BW__TAIL_OPEN(w); /* the free space is scratch for vsnprintf */
    va_copy(cp, ap);
    r = vsnprintf(avail ? (char *)w->data + w->len : NULL, avail, fmt, cp);
    va_end(cp);
    if (r >= 0 && (size_t)r < avail) {
        BW__TAIL_CLOSE(w, w->len + (size_t)r);
        w->len += (size_t)r;
        return BW_OK;
    }
    BW__TAIL_CLOSE(w, w->len);
    if (r < 0) return bw__fail(w, BW_EINVAL);
    /* Too long: grow once to the exact need (+1 for the NUL), format again. */
    if (bw__grow(w, (size_t)r + 1) != BW_OK) return w->err;
    avail = w->cap - w->len;
    BW__TAIL_OPEN(w);
    r = vsnprintf((char *)w->data + w->len, avail, fmt, ap);
    if (r < 0 || (size_t)r >= avail) {
        BW__TAIL_CLOSE(w, w->len);
        return bw__fail(w, BW_EINVAL);
    }
    BW__TAIL_CLOSE(w, w->len + (size_t)r);
    w->len += (size_t)r;
    return BW_OK;
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

bw_pool *bw_writer_pool(const bw_writer *w)
{
    if (w == NULL) return NULL;
    return w->pool ? w->pool : bw_pool_shared();
}

void *bw_detach(bw_writer *w, size_t *len, size_t *capacity)
{
    void *b = NULL;
    size_t l = 0, c = 0;
    if (len != NULL) *len = 0;
    if (capacity != NULL) *capacity = 0;
    if (w == NULL) return NULL;
    if ((w->flags & BW__EXTERNAL) && w->len != 0) {
        /* The caller's buffer cannot go to the pool: hand out a pooled
         * copy, sized by the growth rule. */
        bw_pool *p = bw__pool_of(w);
        size_t want;
        if (p == NULL || bw__target(p, 0, w->len, 0, &want) != BW_OK ||
            (b = bw_pool_rent(p, want, &c)) == NULL) {
            bw__fail(w, BW_ENOMEM);
            return NULL;
        }
        memcpy(b, w->data, w->len);
        l = w->len;
    } else if (!(w->flags & BW__EXTERNAL)) {
        BW__TAIL_OPEN(w); /* the caller gets plain memory */
        b = w->data;
        l = w->len;
        c = w->cap;
    }
    bw__job_done(w);
    bw__reset(w);
    if (len != NULL) *len = l;
    if (capacity != NULL) *capacity = c;
    return b;
}
/*************** End file bufwriter.c ***************************************/

/*************** Begin file chain.c *****************************************/
/* chain.c - bw_chain, the segmented writer: blocks rented from a pool,
 * linked through a header inside each block, read out as iovecs, flattened,
 * copied out or consumed from the front. */
/* #include "bufwriter.h": amalgamated above */
/* #include "pool/pool_internal.h": amalgamated above */

#include <stdlib.h>
#include <sys/uio.h>

/* The link header at the start of every block (32 bytes keeps the data
 * aligned to alignof(max_align_t) on the usual ABIs). */
struct bw__cblock {
    struct bw__cblock *next;
    size_t cap;   /* data bytes (block capacity minus the header)            */
    size_t start; /* first byte not yet consumed                             */
    size_t used;  /* bytes written; for the tail, c->wp says it              */
};
#define BW__CB_HDR ((size_t)32)
#define BW__CHAIN_FIRST ((size_t)4096)
#define BW__CHAIN_MAX_LEN ((size_t)PTRDIFF_MAX)

typedef char bw__cb_hdr_fits[sizeof(struct bw__cblock) <= BW__CB_HDR ? 1 : -1];

static unsigned char *bw__cb_data(struct bw__cblock *b) { return (unsigned char *)b + BW__CB_HDR; }

/* Bytes written into b (the tail's live count is the write position). */
static size_t bw__cb_used(const bw_chain *c, struct bw__cblock *b)
{
    return b == c->tail ? (size_t)(c->wp - bw__cb_data(b)) : b->used;
}

static int bw__chain_fail(bw_chain *c, int rc)
{
    if (c->err == BW_OK) c->err = rc;
    c->wavail = 0;
    return rc;
}

static bw_pool *bw__chain_pool(bw_chain *c)
{
    if (c->pool == NULL) c->pool = bw_pool_shared();
    return c->pool;
}

size_t bw_chain_len(const bw_chain *c)
{
    if (c == NULL || c->tail == NULL) return 0;
    return c->done + (size_t)(c->wp - bw__cb_data(c->tail)) - c->tail->start;
}

int bw_chain_init(bw_chain *c, bw_pool *pool)
{
    if (c == NULL) return BW_EINVAL;
    memset(c, 0, sizeof *c);
    c->pool = pool;
    return BW_OK;
}

/* The next block's size: double the last one's (prev_cap data bytes; 0
 * for the first block, 4 KiB), up to the pool's threshold, then stay
 * there; always at least `need` data bytes. */
static size_t bw__chain_next_size(const bw_pool *p, size_t prev_cap, size_t need)
{
    size_t size = prev_cap ? (prev_cap + BW__CB_HDR) * 2 : BW__CHAIN_FIRST;
    if (size > p->threshold) size = p->threshold;
    if (size < 2 * BW__CB_HDR) size = 2 * BW__CB_HDR;
    if (need > size - BW__CB_HDR) size = need + BW__CB_HDR;
    return size;
}

/* Rent a block after one of prev_cap data bytes, with at least `need`;
 * NULL when the pool fails. */
static struct bw__cblock *bw__chain_rent(bw_pool *p, size_t prev_cap, size_t need)
{
    size_t cap;
    struct bw__cblock *b =
        (struct bw__cblock *)bw_pool_rent(p, bw__chain_next_size(p, prev_cap, need), &cap);
    if (b == NULL) return NULL;
    b->next = NULL;
    b->cap = cap - BW__CB_HDR;
    b->start = 0;
    b->used = 0;
    return b;
}

/* Append b as the new tail (the old tail's count is frozen). */
static void bw__chain_link(bw_chain *c, struct bw__cblock *b)
{
    if (c->tail != NULL) {
        c->tail->used = (size_t)(c->wp - bw__cb_data(c->tail));
        c->done += c->tail->used - c->tail->start;
        c->tail->next = b;
    } else {
        c->head = b;
    }
    c->tail = b;
    c->nblocks++;
    c->wp = bw__cb_data(b);
    c->wavail = b->cap;
}

int bw__chain_write_slow(bw_chain *c, const void *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    struct bw__cblock *first = NULL, *last = NULL, *b;
    bw_pool *p;
    size_t room, have;

    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (n == 0) return BW_OK;
    if (src == NULL) return bw__chain_fail(c, BW_EINVAL);
    if (n > BW__CHAIN_MAX_LEN - bw_chain_len(c)) return bw__chain_fail(c, BW_EOVERFLOW);
    if ((p = bw__chain_pool(c)) == NULL) return bw__chain_fail(c, BW_ENOMEM);

    /* Rent every block the write needs first, so that a failure leaves the
     * chain exactly as it was. */
    room = c->wavail;
    have = room;
    while (have < n) {
        b = bw__chain_rent(p, last ? last->cap : c->tail ? c->tail->cap : 0, 0);
        if (b == NULL) {
            while (first != NULL) {
                struct bw__cblock *next = first->next;
                (void)bw_pool_return(p, first, first->cap + BW__CB_HDR);
                first = next;
            }
            return bw__chain_fail(c, BW_ENOMEM);
        }
        if (last) last->next = b;
        else first = b;
        last = b;
        have += b->cap;
    }
    /* Then copy: the rest of the tail, then each new block. */
    if (room > 0) {
        memcpy(c->wp, s, room);
        c->wp += room;
        c->wavail = 0;
        s += room;
        n -= room;
    }
    while (first != NULL) {
        size_t k;
        b = first;
        first = first->next;
        b->next = NULL;
        bw__chain_link(c, b);
        k = n < b->cap ? n : b->cap;
        memcpy(c->wp, s, k);
        c->wp += k;
        c->wavail -= k;
        s += k;
        n -= k;
    }
    return BW_OK;
}

int bw_chain_puts(bw_chain *c, const char *s)
{
    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (s == NULL) return bw__chain_fail(c, BW_EINVAL);
    return bw_chain_write(c, s, strlen(s));
}

int bw_chain_vprintf(bw_chain *c, const char *fmt, va_list ap)
{
    va_list cp;
    bw_pool *p;
    size_t cap;
    char *tmp;
    int r, rc;

    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (fmt == NULL) return bw__chain_fail(c, BW_EINVAL);
    va_copy(cp, ap);
    r = vsnprintf(c->wavail ? (char *)c->wp : NULL, c->wavail, fmt, cp);
    va_end(cp);
    if (r < 0) return bw__chain_fail(c, BW_EINVAL);
    if ((size_t)r < c->wavail) { /* straight into the last block */
        c->wp += r;
        c->wavail -= (size_t)r;
        return BW_OK;
    }
    /* Does not fit: format into a pooled scratch block, then append it
     * across blocks. */
    if ((p = bw__chain_pool(c)) == NULL) return bw__chain_fail(c, BW_ENOMEM);
    tmp = (char *)bw_pool_rent(p, (size_t)r + 1, &cap);
    if (tmp == NULL) return bw__chain_fail(c, BW_ENOMEM);
    if (vsnprintf(tmp, cap, fmt, ap) != r) rc = bw__chain_fail(c, BW_EINVAL);
    else rc = bw_chain_write(c, tmp, (size_t)r);
    (void)bw_pool_return(p, tmp, cap);
    return rc;
}

int bw_chain_printf(bw_chain *c, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_chain_vprintf(c, fmt, ap);
    va_end(ap);
    return rc;
}

void *bw_chain_get_span(bw_chain *c, size_t size_hint, size_t *avail)
{
    size_t need = size_hint ? size_hint : 1;
    struct bw__cblock *b;
    bw_pool *p;
    if (avail != NULL) *avail = 0;
    if (c == NULL || c->err != BW_OK) return NULL;
    if (c->wavail < need) {
        if (need > BW__CHAIN_MAX_LEN - BW__CB_HDR - bw_chain_len(c)) {
            bw__chain_fail(c, BW_EOVERFLOW);
            return NULL;
        }
        if ((p = bw__chain_pool(c)) == NULL ||
            (b = bw__chain_rent(p, c->tail ? c->tail->cap : 0, need)) == NULL) {
            bw__chain_fail(c, BW_ENOMEM);
            return NULL;
        }
        bw__chain_link(c, b);
    }
    if (avail != NULL) *avail = c->wavail;
    return c->wp;
}

int bw_chain_advance(bw_chain *c, size_t n)
{
    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (n > c->wavail) return bw__chain_fail(c, BW_EINVAL);
    c->wp += n;
    c->wavail -= n;
    return BW_OK;
}

/* Walk [offset, offset + n) piece by piece: copy out of (to_chain = 0) or
 * into (to_chain = 1) the chain. The range is already checked. */
static void bw__chain_walk(const bw_chain *c, size_t offset, unsigned char *buf, size_t n,
                           int to_chain)
{
    struct bw__cblock *b;
    for (b = c->head; b != NULL && n > 0; b = b->next) {
        size_t len = bw__cb_used(c, b) - b->start, k;
        if (offset >= len) {
            offset -= len;
            continue;
        }
        k = len - offset < n ? len - offset : n;
        if (to_chain) memcpy(bw__cb_data(b) + b->start + offset, buf, k);
        else memcpy(buf, bw__cb_data(b) + b->start + offset, k);
        buf += k;
        n -= k;
        offset = 0;
    }
}

int bw_chain_patch(bw_chain *c, size_t offset, const void *src, size_t n)
{
    size_t len;
    if (c == NULL) return BW_EINVAL;
    if (c->err != BW_OK) return c->err;
    if (n == 0) return BW_OK;
    len = bw_chain_len(c);
    if (src == NULL || offset > len || n > len - offset) return bw__chain_fail(c, BW_EINVAL);
    bw__chain_walk(c, offset, (unsigned char *)(uintptr_t)src, n, 1);
    return BW_OK;
}

int bw_chain_copy_out(const bw_chain *c, size_t offset, void *dst, size_t n)
{
    size_t len;
    if (c == NULL) return BW_EINVAL;
    if (n == 0) return BW_OK;
    len = bw_chain_len(c);
    if (dst == NULL || offset > len || n > len - offset) return BW_EINVAL;
    bw__chain_walk(c, offset, (unsigned char *)dst, n, 0);
    return BW_OK;
}

size_t bw_chain_iovec(const bw_chain *c, struct iovec *iov, size_t max)
{
    struct bw__cblock *b;
    size_t k = 0;
    if (c == NULL) return 0;
    for (b = c->head; b != NULL; b = b->next) {
        size_t len = bw__cb_used(c, b) - b->start;
        if (len == 0) continue;
        if (k < max && iov != NULL) {
            iov[k].iov_base = bw__cb_data(b) + b->start;
            iov[k].iov_len = len;
        }
        k++;
    }
    return k;
}

int bw_chain_flatten(const bw_chain *c, bw_writer *w)
{
    struct bw__cblock *b;
    int rc;
    if (c == NULL || w == NULL) return BW_EINVAL;
    /* One reservation first: then the copies cannot fail half way. */
    if ((rc = bw_reserve(w, bw_chain_len(c))) != BW_OK) return rc;
    for (b = c->head; b != NULL; b = b->next) {
        size_t len = bw__cb_used(c, b) - b->start;
        if (len && (rc = bw_write(w, bw__cb_data(b) + b->start, len)) != BW_OK) return rc;
    }
    return BW_OK;
}

/* Drop the first n bytes (n <= length, checked by the caller), giving
 * emptied blocks back; a fully consumed tail is rewound for reuse. */
static void bw__chain_drop(bw_chain *c, size_t n)
{
    for (;;) {
        struct bw__cblock *b = c->head;
        size_t len;
        if (b == NULL) return;
        len = bw__cb_used(c, b) - b->start;
        if (b == c->tail) {
            b->start += n;
            if (b->start == bw__cb_used(c, b)) {
                b->start = 0;
                c->wp = bw__cb_data(b);
                c->wavail = c->err == BW_OK ? b->cap : 0;
            }
            return;
        }
        if (n < len) {
            b->start += n;
            c->done -= n;
            return;
        }
        n -= len; /* the whole block is gone (an empty one too) */
        c->done -= len;
        c->head = b->next;
        c->nblocks--;
        (void)bw_pool_return(c->pool, b, b->cap + BW__CB_HDR);
    }
}

int bw_chain_consume(bw_chain *c, size_t n)
{
    if (c == NULL) return BW_EINVAL;
    if (n > bw_chain_len(c)) return bw__chain_fail(c, BW_EINVAL);
    bw__chain_drop(c, n);
    return BW_OK;
}

void bw_chain_release(bw_chain *c)
{
    struct bw__cblock *b;
    if (c == NULL) return;
    for (b = c->head; b != NULL;) {
        struct bw__cblock *next = b->next;
        (void)bw_pool_return(c->pool, b, b->cap + BW__CB_HDR);
        b = next;
    }
    bw_chain_init(c, c->pool);
}

void bw_chain_clear(bw_chain *c)
{
    struct bw__cblock *b, *keep;
    if (c == NULL) return;
    keep = c->head;
    if (keep == NULL) {
        c->err = BW_OK;
        return;
    }
    for (b = keep->next; b != NULL;) {
        struct bw__cblock *next = b->next;
        (void)bw_pool_return(c->pool, b, b->cap + BW__CB_HDR);
        b = next;
    }
    keep->next = NULL;
    keep->start = keep->used = 0;
    c->head = c->tail = keep;
    c->nblocks = 1;
    c->done = 0;
    c->wp = bw__cb_data(keep);
    c->wavail = keep->cap;
    c->err = BW_OK;
}

/* For the I/O helpers (io.c): drop what went out, never recording. */
BW__INTERNAL void bw__chain_consume_sent(bw_chain *c, size_t n) { bw__chain_drop(c, n); }
/*************** End file chain.c *******************************************/

/*************** Begin file io.c ********************************************/
/* io.c - getting bytes out: a writer or a chain to a file descriptor
 * (write / writev, short writes and EINTR handled), and a FILE* adapter
 * (fopencookie on glibc, funopen on the BSDs) for existing fprintf code. */
/* #include "bufwriter.h": amalgamated above */
/* #include "pool/pool_internal.h": amalgamated above */

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

/* At most this many pieces per writev (and never more than IOV_MAX). */
#define BW__IOV_BATCH 64
#if defined(IOV_MAX) && IOV_MAX < BW__IOV_BATCH
#  undef BW__IOV_BATCH
#  define BW__IOV_BATCH IOV_MAX
#endif

int bw_write_fd(const bw_writer *w, int fd, size_t *written)
{
    size_t done = 0, len;
    int rc = BW_OK;
    if (written != NULL) *written = 0;
    if (w == NULL) return BW_EINVAL;
    len = w->len;
    while (done < len) {
        ssize_t k = write(fd, w->data + done, len - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = BW_EIO;
            break;
        }
        done += (size_t)k;
    }
    if (written != NULL) *written = done;
    return rc;
}

int bw_chain_write_fd(bw_chain *c, int fd, size_t *written)
{
    struct iovec iov[BW__IOV_BATCH];
    size_t done = 0;
    int rc = BW_OK;
    if (written != NULL) *written = 0;
    if (c == NULL) return BW_EINVAL;
    for (;;) {
        size_t n = bw_chain_iovec(c, iov, BW__IOV_BATCH);
        ssize_t k;
        if (n == 0) break;
        if (n > BW__IOV_BATCH) n = BW__IOV_BATCH;
        k = writev(fd, iov, (int)n);
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = BW_EIO;
            break;
        }
        /* What went out leaves the queue; a short write just loops. */
        bw__chain_consume_sent(c, (size_t)k);
        done += (size_t)k;
    }
    if (written != NULL) *written = done;
    return rc;
}

#ifdef BW_HAVE_FILE_ADAPTER
#if defined(__GLIBC__)
/* fopencookie and its function table. Declared here when the including
 * file did not ask for _GNU_SOURCE (the single header, included after
 * <stdio.h>): the table is four function pointers in every glibc since
 * 2.2, so the two declarations are the same to the ABI. */
#  ifdef _GNU_SOURCE
typedef cookie_io_functions_t bw__cookie_io;
#  else
typedef struct bw__cookie_io {
    ssize_t (*read)(void *, char *, size_t);
    ssize_t (*write)(void *, const char *, size_t);
    int (*seek)(void *, long long *, int);
    int (*close)(void *);
} bw__cookie_io;
extern FILE *fopencookie(void *cookie, const char *mode, bw__cookie_io io);
#  endif

/* glibc treats a return below the count as an error (the stream's error
 * flag is set; fprintf then returns a negative value). */
static ssize_t bw__cookie_writer(void *cookie, const char *buf, size_t n)
{
    return bw_write((bw_writer *)cookie, buf, n) == BW_OK ? (ssize_t)n : 0;
}
static ssize_t bw__cookie_chain(void *cookie, const char *buf, size_t n)
{
    return bw_chain_write((bw_chain *)cookie, buf, n) == BW_OK ? (ssize_t)n : 0;
}

static FILE *bw__fopen(void *cookie, ssize_t (*fn)(void *, const char *, size_t))
{
    bw__cookie_io io;
    if (cookie == NULL) {
        errno = EINVAL;
        return NULL;
    }
    memset(&io, 0, sizeof io);
    io.write = fn;
    return fopencookie(cookie, "w", io);
}
#else /* the BSDs and macOS: funopen */
static int bw__funopen_writer(void *cookie, const char *buf, int n)
{
    return bw_write((bw_writer *)cookie, buf, (size_t)n) == BW_OK ? n : -1;
}
static int bw__funopen_chain(void *cookie, const char *buf, int n)
{
    return bw_chain_write((bw_chain *)cookie, buf, (size_t)n) == BW_OK ? n : -1;
}
#endif

FILE *bw_fopen_writer(bw_writer *w)
{
#if defined(__GLIBC__)
    return bw__fopen(w, bw__cookie_writer);
#else
    if (w == NULL) { errno = EINVAL; return NULL; }
    return funopen(w, NULL, bw__funopen_writer, NULL, NULL);
#endif
}

FILE *bw_fopen_chain(bw_chain *c)
{
#if defined(__GLIBC__)
    return bw__fopen(c, bw__cookie_chain);
#else
    if (c == NULL) { errno = EINVAL; return NULL; }
    return funopen(c, NULL, bw__funopen_chain, NULL, NULL);
#endif
}
#endif /* BW_HAVE_FILE_ADAPTER */
/*************** End file io.c **********************************************/

/*************** Begin file pool/alloc.c ************************************/
/* alloc.c - the backing allocators: libc, and jemalloc's sized calls in
 * builds with BW_HAVE_JEMALLOC. */
/* #include "pool_internal.h": amalgamated above */

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
/*************** End file pool/alloc.c **************************************/

/*************** Begin file pool/check.c ************************************/
/* check.c - checked mode: a side table of every block the pool has handed
 * out or holds, so that a double return, a foreign block or a wrong capacity
 * is reported (through a replaceable hook) and refused instead of
 * corrupting the pool, and a canary after every block catches writes past
 * its end when it comes back. On with BW_POOL_CHECKED, in BW_DEBUG builds,
 * or with BW_CHECKED=1 in the environment. It costs a hash lookup under a
 * lock and a 16-byte compare on every rent and return (measured in
 * bench/RESULTS.md). */
/* #include "pool_internal.h": amalgamated above */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#  include <sys/auxv.h>
#endif

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
    pthread_mutex_t lock;
    bw__centry *e;
    size_t mask, used;
    bool lossy;
} bw__ctab;

static pthread_mutex_t bw__report_lock = PTHREAD_MUTEX_INITIALIZER;
static bw_report_fn bw__report_fn;
static void *bw__report_ctx;

void bw_set_report_hook(bw_report_fn fn, void *ctx)
{
    pthread_mutex_lock(&bw__report_lock);
    bw__report_fn = fn;
    bw__report_ctx = ctx;
    pthread_mutex_unlock(&bw__report_lock);
}

BW__INTERNAL void bw__report(const char *what, const void *block, size_t cap)
{
    bw_report_fn fn;
    void *ctx;
    pthread_mutex_lock(&bw__report_lock);
    fn = bw__report_fn;
    ctx = bw__report_ctx;
    pthread_mutex_unlock(&bw__report_lock);
    if (fn != NULL) {
        fn(ctx, what, block, cap);
        return;
    }
    fprintf(stderr, "bufwriter: %s (block %p, capacity %zu)\n", what, block, cap);
    abort();
}

/* BW_CHECKED=1 in the environment, read the way secure_getenv does: never
 * in a set-user-ID/set-group-ID program (AT_SECURE), where the environment
 * belongs to someone else. (secure_getenv itself needs _GNU_SOURCE.) */
BW__INTERNAL bool bw__check_env(const char *name)
{
    const char *v;
#if defined(__linux__)
    if (getauxval(AT_SECURE) != 0) return false;
#endif
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
            for (j = bw__hash(t->e[i].block, n - 1); e[j].state != BW__FREE_SLOT; j = (j + 1) & (n - 1)) {}
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
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
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
    pthread_mutex_lock(&t->lock);
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
    pthread_mutex_unlock(&t->lock);
    if (problem) bw__report(problem, b, cap);
}

BW__INTERNAL bool bw__check_return(bw_pool *p, void *b, size_t cap, bool keeps)
{
    bw__ctab *t = (bw__ctab *)p->check;
    bw__centry *e;
    const char *problem = NULL;
    pthread_mutex_lock(&t->lock);
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
    pthread_mutex_unlock(&t->lock);
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
    pthread_mutex_lock(&t->lock);
    e = bw__find(t, b);
    if (e != NULL) bw__remove(t, e);
    pthread_mutex_unlock(&t->lock);
}

BW__INTERNAL void bw__check_destroy(bw_pool *p)
{
    bw__ctab *t = (bw__ctab *)p->check;
    size_t i;
    if (t == NULL) return;
    for (i = 0; t->e != NULL && i <= t->mask; i++)
        if (t->e[i].state == BW__RENTED)
            bw__report("bw_pool_destroy: block still rented", t->e[i].block, t->e[i].cap);
    pthread_mutex_destroy(&t->lock);
    free(t->e);
    free(t);
    p->check = NULL;
}
/*************** End file pool/check.c **************************************/

/*************** Begin file pool/large.c ************************************/
/* large.c - two things a pool can learn about its writers' big jobs:
 *
 * Large retention (max_large_bytes): blocks above the threshold are kept
 * when they come back, bounded in bytes and count, oldest evicted first, so
 * a steady stream of 10 MiB jobs reuses warm memory instead of asking the
 * backing allocator for fresh pages each time (jemalloc hands blocks of
 * 8 MiB and more back to the kernel at once: every job then pays page
 * faults, several times the cost of the copy). A rent above the threshold is
 * served from a kept block of exactly that size; writers only ask for powers
 * of two there, so sizes repeat.
 *
 * Learned starting size (BW_POOL_LEARN_SIZE): writers record the length they
 * ended at; a new writer starts at about the 90th percentile of the last 16,
 * so similar jobs stop growing (and copying) altogether. */
/* #include "pool_internal.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdlib.h>
#include <string.h>

#define BW__DEFAULT_LARGE_BLOCKS 8
#define BW__DEFAULT_MAX_LEARNED ((size_t)64 << 20)

BW__INTERNAL bool bw__large_init(bw_pool *p, const bw_pool_options *o)
{
    p->learn = (o->flags & BW_POOL_LEARN_SIZE) != 0;
    p->max_learned = o->max_learned_size ? o->max_learned_size : BW__DEFAULT_MAX_LEARNED;
    p->max_large_bytes = o->max_large_bytes;
    p->max_large_blocks = o->max_large_blocks ? o->max_large_blocks : BW__DEFAULT_LARGE_BLOCKS;
    if (p->max_large_bytes == 0) return true;
    if (pthread_mutex_init(&p->large_lock, NULL) != 0) return false;
    p->large = (bw__large *)calloc(p->max_large_blocks, sizeof *p->large);
    if (p->large == NULL) {
        pthread_mutex_destroy(&p->large_lock);
        return false;
    }
    return true;
}

BW__INTERNAL void *bw__large_take(bw_pool *p, size_t size)
{
    void *b = NULL;
    size_t i;
    if (p->max_large_bytes == 0) return NULL;
    pthread_mutex_lock(&p->large_lock);
    for (i = p->nlarge; i-- > 0;) { /* newest first: the warmest */
        if (p->large[i].size == size) {
            b = p->large[i].block;
            memmove(&p->large[i], &p->large[i + 1], (p->nlarge - i - 1) * sizeof *p->large);
            p->nlarge--;
            atomic_fetch_sub_explicit(&p->large_bytes, size, memory_order_relaxed);
            break;
        }
    }
    pthread_mutex_unlock(&p->large_lock);
    if (b != NULL) BW__TRACK_UNDEFINED(b, size);
    return b;
}

BW__INTERNAL bool bw__large_keep(bw_pool *p, void *b, size_t size)
{
    bw__large evicted[BW__DEFAULT_LARGE_BLOCKS];
    size_t nev = 0, i;
    if (p->max_large_bytes == 0 || size > p->max_large_bytes) return false;
    if (p->flags & BW_POOL_ZERO_ON_RETURN) bw__zero(b, size);
    BW__TRACK_NOACCESS(b, size);
    pthread_mutex_lock(&p->large_lock);
    /* Make room: evict the oldest (at most a handful per call; the rest of
     * an oversized backlog goes on later calls). */
    while (p->nlarge > 0 &&
           (p->nlarge == p->max_large_blocks ||
            atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size > p->max_large_bytes) &&
           nev < BW__DEFAULT_LARGE_BLOCKS) {
        evicted[nev++] = p->large[0];
        atomic_fetch_sub_explicit(&p->large_bytes, p->large[0].size, memory_order_relaxed);
        memmove(&p->large[0], &p->large[1], (p->nlarge - 1) * sizeof *p->large);
        p->nlarge--;
    }
    if (p->nlarge < p->max_large_blocks &&
        atomic_load_explicit(&p->large_bytes, memory_order_relaxed) + size <= p->max_large_bytes) {
        p->large[p->nlarge].block = b;
        p->large[p->nlarge].size = size;
        p->nlarge++;
        atomic_fetch_add_explicit(&p->large_bytes, size, memory_order_relaxed);
        b = NULL;
    }
    pthread_mutex_unlock(&p->large_lock);
    for (i = 0; i < nev; i++) bw__backing_free(p, NULL, evicted[i].block, evicted[i].size);
    return b == NULL;
}

BW__INTERNAL void bw__large_free_all(bw_pool *p)
{
    if (p->max_large_bytes == 0) return;
    for (;;) {
        bw__large e;
        pthread_mutex_lock(&p->large_lock);
        if (p->nlarge == 0) {
            pthread_mutex_unlock(&p->large_lock);
            return;
        }
        e = p->large[--p->nlarge];
        atomic_fetch_sub_explicit(&p->large_bytes, e.size, memory_order_relaxed);
        pthread_mutex_unlock(&p->large_lock);
        bw__backing_free(p, NULL, e.block, e.size);
    }
}

BW__INTERNAL void bw__learn_record(bw_pool *p, size_t len)
{
    unsigned i;
    if (!p->learn || len == 0) return;
    i = atomic_fetch_add_explicit(&p->recent_next, 1, memory_order_relaxed);
    atomic_store_explicit(&p->recent[i % BW__RECENT], len, memory_order_relaxed);
}

/* About the 90th percentile of the recorded lengths: with k of them, the
 * (k/10 + 1)-th largest (the second largest of 16), so one outlier job does
 * not make every later writer huge. At most max_learned; 0 when off. */
BW__INTERNAL size_t bw__learned(bw_pool *p)
{
    size_t v[BW__RECENT], r;
    unsigned k = 0, i, j;
    if (!p->learn) return 0;
    for (i = 0; i < BW__RECENT; i++) {
        size_t x = atomic_load_explicit(&p->recent[i], memory_order_relaxed);
        if (x == 0) continue;
        /* insertion sort, largest first */
        for (j = k++; j > 0 && v[j - 1] < x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
    if (k == 0) return 0;
    r = v[k / 10];
    return r < p->max_learned ? r : p->max_learned;
}
/*************** End file pool/large.c **************************************/

/*************** Begin file pool/pool.c *************************************/
/* pool.c - the size-class pool: create/destroy, rent/return, the shared
 * level, trim and stats. Thread caches live in tcache.c, checked mode in
 * check.c, the backing allocators in alloc.c. */
/* #include "pool_internal.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdlib.h>
#include <string.h>

/* Count into the thread cache when there is one (no atomic RMW), else into
 * the pool-wide counters. */
#define BW__COUNT(p, tc, name, v) \
    do { if (tc) BW__TC_ADD(tc, name, v); else BW__POOL_ADD(p, name, v); } while (0)

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

/* Retention budget ------------------------------------------------------ */

BW__INTERNAL bool bw__budget_take(bw_pool *p, size_t n)
{
    size_t cur = atomic_load_explicit(&p->reserved, memory_order_relaxed);
    do {
        if (cur > p->max_retained || n > p->max_retained - cur) return false;
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
    pthread_mutex_lock(&c->lock);
    if (c->count > 0) b = c->stack[--c->count];
    pthread_mutex_unlock(&c->lock);
    if (b != NULL) {
        size_t cap = p->min_size << ci;
        atomic_fetch_sub_explicit(&p->shared_bytes, cap, memory_order_relaxed);
        bw__budget_give(p, cap);
    }
    return b;
}

BW__INTERNAL bool bw__shared_push(bw_pool *p, unsigned ci, void *b)
{
    bw__class *c = &p->cls[ci];
    size_t cap = p->min_size << ci;
    bool kept = false;
    pthread_mutex_lock(&c->lock);
    if (c->count < p->max_per_class) {
        if (c->count == c->alloc) {
            /* Grow the stack geometrically up to the bound; if even that
             * small allocation fails, the block is simply not retained. */
            size_t n = c->alloc ? c->alloc * 2 : 8;
            void **s;
            if (n > p->max_per_class) n = p->max_per_class;
            s = (void **)realloc(c->stack, n * sizeof *s);
            if (s != NULL) { c->stack = s; c->alloc = n; }
        }
        if (c->count < c->alloc && bw__budget_take(p, cap)) {
            c->stack[c->count++] = b;
            kept = true;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (kept) atomic_fetch_add_explicit(&p->shared_bytes, cap, memory_order_relaxed);
    return kept;
}

static void bw__shared_free_all(bw_pool *p)
{
    unsigned ci;
    for (ci = 0; ci < p->nclasses; ci++) {
        bw__class *c = &p->cls[ci];
        size_t cap = p->min_size << ci;
        pthread_mutex_lock(&c->lock);
        while (c->count > 0) {
            bw__backing_free(p, NULL, c->stack[--c->count], cap);
            atomic_fetch_sub_explicit(&p->shared_bytes, cap, memory_order_relaxed);
            bw__budget_give(p, cap);
        }
        pthread_mutex_unlock(&c->lock);
    }
}

/* Create / destroy ------------------------------------------------------ */

/* The pool's own bookkeeping, once it holds no block: one teardown for
 * destroy and for a create that failed half way. */
static void bw__pool_free(bw_pool *p)
{
    unsigned ci;
    if (p->large != NULL) {
        pthread_mutex_destroy(&p->large_lock);
        free(p->large);
    }
    if (p->check != NULL) bw__check_destroy(p);
    for (ci = 0; ci < p->nclasses; ci++) {
        pthread_mutex_destroy(&p->cls[ci].lock);
        free(p->cls[ci].stack);
    }
    free(p);
}

int bw_pool_create(bw_pool **out, const bw_pool_options *opts)
{
    static const bw_pool_options defaults; /* all zeros: every default */
    const bw_pool_options *o = opts ? opts : &defaults;
    size_t threshold = o->max_pooled_size ? o->max_pooled_size : BW__DEFAULT_THRESHOLD;
    size_t min_size = o->min_block_size ? o->min_block_size : BW__DEFAULT_MIN_BLOCK;
    const bw_allocator *a = o->allocator ? o->allocator : bw_allocator_libc();
    bw_pool *p;
    unsigned n, ci;

    if (out == NULL) return BW_EINVAL;
    *out = NULL;
    /* Blocks never exceed PTRDIFF_MAX bytes, so neither may a class. */
    if (!bw__is_pow2(threshold) || !bw__is_pow2(min_size) || min_size < 16 ||
        min_size > threshold || threshold > (size_t)PTRDIFF_MAX / 2 + 1)
        return BW_EINVAL;
    if (a->alloc == NULL || a->free == NULL) return BW_EINVAL;

    n = bw__log2(threshold) - bw__log2(min_size) + 1;
    p = (bw_pool *)calloc(1, sizeof *p + n * sizeof(bw__class));
    if (p == NULL) return BW_ENOMEM;
    for (ci = 0; ci < n; ci++) {
        if (pthread_mutex_init(&p->cls[ci].lock, NULL) != 0) {
            while (ci-- > 0) pthread_mutex_destroy(&p->cls[ci].lock);
            free(p);
            return BW_ENOMEM;
        }
    }
    p->id = bw__next_pool_id();
    p->threshold = threshold;
    p->min_size = min_size;
    p->min_shift = bw__log2(min_size);
    p->nclasses = n;
    p->max_per_class = o->max_blocks_per_class ? o->max_blocks_per_class : BW__DEFAULT_PER_CLASS;
    p->max_retained = o->max_retained_bytes ? o->max_retained_bytes : BW__DEFAULT_RETAINED;
    p->flags = o->flags;
    p->use_tcache = (o->flags & BW_POOL_NO_THREAD_CACHE) == 0;
    p->checked = (o->flags & BW_POOL_CHECKED) != 0 || bw__check_env("BW_CHECKED");
#ifdef BW_DEBUG
    p->checked = true;
#endif
    p->extra = p->checked ? BW__CANARY_SIZE : 0;
    p->bypass = (o->flags & BW_POOL_BYPASS) != 0 || bw__check_env("BW_BYPASS");
    /* Checked mode, no thread cache and zeroing all need the slow paths. */
    p->fast_rent_limit =
        (p->checked || p->bypass || !p->use_tcache || (o->flags & BW_POOL_ZERO_ON_RETURN))
            ? 0 : threshold;
    p->fast_return_span = p->fast_rent_limit ? threshold - min_size + 1 : 0;
    p->alloc = *a;
    if (!bw__large_init(p, o) || (p->checked && !bw__check_init(p))) {
        bw__pool_free(p);
        return BW_ENOMEM;
    }
    *out = p;
    return BW_OK;
}

void bw_pool_destroy(bw_pool *pool)
{
    if (pool == NULL) return;
    bw__tcache_orphan_all(pool);
    bw__shared_free_all(pool);
    bw__large_free_all(pool);
    if (pool->checked) bw__check_destroy(pool); /* reports blocks still rented */
    bw__pool_free(pool);
}

static _Atomic(bw_pool *) bw__shared_pool;
static pthread_mutex_t bw__shared_lock = PTHREAD_MUTEX_INITIALIZER;

bw_pool *bw_pool_shared(void)
{
    bw_pool *p = atomic_load_explicit(&bw__shared_pool, memory_order_acquire);
    if (BW__LIKELY(p != NULL)) return p;
    pthread_mutex_lock(&bw__shared_lock);
    p = atomic_load_explicit(&bw__shared_pool, memory_order_relaxed);
    if (p == NULL && bw_pool_create(&p, NULL) == BW_OK)
        atomic_store_explicit(&bw__shared_pool, p, memory_order_release);
    pthread_mutex_unlock(&bw__shared_lock);
    return p;
}

size_t bw_pool_class_size(const bw_pool *pool, size_t min_size)
{
    if (pool == NULL) return 0;
    if (min_size > pool->threshold || pool->bypass) return min_size;
    return pool->min_size << bw__class_index(pool, min_size);
}

/* Rent / return --------------------------------------------------------- */
/* The fast paths serve a class from the calling thread's cache: no lock, no
 * atomic read-modify-write, no call. They cost about 20 instructions each
 * (a TLS load, the pool-id compare, one bit scan for the class, a slot pop
 * or push, two single-writer counter updates). Everything else (an empty
 * or full slot, the shared level, the backing allocator, above-threshold
 * blocks, checked mode, zeroing, bad arguments) goes to the slow path,
 * kept out of line so the fast path needs no stack frame. */

#if defined(__GNUC__) || defined(__clang__)
#  define BW__NOINLINE __attribute__((noinline))
#else
#  define BW__NOINLINE
#endif

static BW__NOINLINE void *bw__rent_slow(bw_pool *p, size_t min_size, size_t *capacity)
{
    bw__tcache *tc = NULL;
    void *b;
    size_t cap;

    if (capacity == NULL) return NULL;
    *capacity = 0;
    if (p == NULL) return NULL;
    if (p->use_tcache) tc = bw__tcache_get(p);

    if (p->bypass) {
        /* A real allocation of exactly what was asked for (at least 1). */
        if (min_size > (size_t)PTRDIFF_MAX) return NULL;
        cap = min_size ? min_size : 1;
        b = bw__backing_alloc(p, tc, cap);
        if (b == NULL) return NULL;
        BW__COUNT(p, tc, misses, 1);
        BW__COUNT(p, tc, out_bytes, cap);
    } else if (min_size <= p->threshold) {
        unsigned ci = bw__class_index(p, min_size);
        cap = p->min_size << ci;
        size_t n = tc != NULL ? bw__tc_held(tc, ci) : 0;
        if (n > 0) {
            b = tc->slots[ci * BW_THREAD_CACHE_SLOTS + n - 1];
            bw__inc(&tc->n[ci].pop); /* counts the hit and the bytes out */
        } else if ((b = bw__shared_pop(p, ci)) != NULL) {
            BW__COUNT(p, tc, hits, 1);
            BW__COUNT(p, tc, out_bytes, cap);
        } else {
            b = bw__backing_alloc(p, tc, cap);
            if (b == NULL) return NULL;
            BW__COUNT(p, tc, misses, 1);
            BW__COUNT(p, tc, out_bytes, cap);
            goto fresh;
        }
        /* A retained block: accessible again (zeros under ZERO_ON_RETURN). */
        if (p->flags & BW_POOL_ZERO_ON_RETURN) BW__TRACK_DEFINED(b, cap);
        else BW__TRACK_UNDEFINED(b, cap);
    } else {
        /* Above the threshold: exactly what was asked for, from the kept
         * large blocks (large retention) or the backing allocator. */
        if (min_size > (size_t)PTRDIFF_MAX) return NULL;
        cap = min_size;
        if ((b = bw__large_take(p, cap)) != NULL) {
            BW__COUNT(p, tc, hits, 1);
        } else {
            b = bw__backing_alloc(p, tc, cap);
            if (b == NULL) return NULL;
            BW__COUNT(p, tc, misses, 1);
        }
        BW__COUNT(p, tc, out_bytes, cap);
    }
fresh:
    if (p->checked) {
        bw__check_rented(p, b, cap);
        if (p->flags & BW_POOL_FILL) memset(b, BW_FILL_RENTED, cap);
    }
    *capacity = cap;
    return b;
}

void *bw_pool_rent(bw_pool *p, size_t min_size, size_t *capacity)
{
    bw__tcache *tc = bw__tl_last;
    /* min_size - 1 < limit: 1 <= min_size <= threshold, and a limit of 0
     * sends every rent of a checked or cache-less pool to the slow path. */
    if (BW__LIKELY(p != NULL && capacity != NULL && min_size - 1 < p->fast_rent_limit &&
                   atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id)) {
        unsigned ci = bw__class_index(p, min_size);
        uint64_t pop = atomic_load_explicit(&tc->n[ci].pop, memory_order_relaxed);
        size_t n = (size_t)(atomic_load_explicit(&tc->n[ci].push, memory_order_relaxed) - pop);
        if (BW__LIKELY(n != 0)) {
            size_t cap = p->min_size << ci;
            void *b = tc->slots[ci * BW_THREAD_CACHE_SLOTS + n - 1];
            atomic_store_explicit(&tc->n[ci].pop, pop + 1, memory_order_relaxed);
            BW__TRACK_UNDEFINED(b, cap);
            *capacity = cap;
            return b;
        }
    }
    return bw__rent_slow(p, min_size, capacity);
}

/* Reserve budget for one more slot of class ci in tc. A cache never
 * reserves more than BW_THREAD_CACHE_SLOTS slots per class; the budget goes
 * back on trim and at thread exit. */
static bool bw__tcache_reserve(bw_pool *p, bw__tcache *tc, unsigned ci)
{
    if (tc->resv[ci] >= BW_THREAD_CACHE_SLOTS || !bw__budget_take(p, p->min_size << ci))
        return false;
    tc->resv[ci]++;
    return true;
}

static BW__NOINLINE int bw__return_slow(bw_pool *p, void *block, size_t capacity)
{
    bw__tcache *tc = NULL;
    bool pooled;
    unsigned ci = 0;

    if (p == NULL) return BW_EINVAL;
    if (block == NULL) return BW_OK;
    if (!p->bypass && BW__TRACK_IS_NOACCESS(block)) {
        /* Under AddressSanitizer a block the pool holds is poisoned: this
         * one came back before (or was never rented). In bypass mode
         * ASan's own double-free report, with its stacks, says more. */
        bw__report("bw_pool_return: block returned twice (it is poisoned: the pool holds it)",
                   block, capacity);
        return BW_EINVAL;
    }
    pooled = capacity <= p->threshold && !p->bypass;
    if ((pooled && (!bw__is_pow2(capacity) || capacity < p->min_size)) ||
        capacity > (size_t)PTRDIFF_MAX || capacity == 0) {
        if (p->checked)
            bw__report("bw_pool_return: wrong capacity (no rent of this pool gives it)",
                       block, capacity);
        return BW_EINVAL;
    }
    if (p->checked) {
        if (!bw__check_return(p, block, capacity, pooled || p->max_large_bytes))
            return BW_EINVAL;
        if (p->flags & BW_POOL_FILL) memset(block, BW_FILL_RETURNED, capacity);
    }
    if (p->use_tcache) tc = bw__tcache_get(p);

    if (pooled) {
        ci = bw__class_index(p, capacity);
        if (p->flags & BW_POOL_ZERO_ON_RETURN) bw__zero(block, capacity);
        BW__TRACK_NOACCESS(block, capacity);
        if (tc != NULL) {
            size_t n = bw__tc_held(tc, ci);
            if (n < tc->resv[ci] || (n < BW_THREAD_CACHE_SLOTS && bw__tcache_reserve(p, tc, ci))) {
                tc->slots[ci * BW_THREAD_CACHE_SLOTS + n] = block;
                bw__inc(&tc->n[ci].push); /* counts the return and the bytes */
                return BW_OK;
            }
        }
    }
    BW__COUNT(p, tc, returns, 1);
    BW__COUNT(p, tc, out_bytes, 0 - (uint64_t)capacity);
    if (!pooled) {
        if (p->bypass || !bw__large_keep(p, block, capacity))
            bw__backing_free(p, tc, block, capacity);
        return BW_OK;
    }
    if (bw__shared_push(p, ci, block)) return BW_OK;
    bw__backing_free(p, tc, block, capacity);
    return BW_OK;
}

int bw_pool_return(bw_pool *p, void *block, size_t capacity)
{
    bw__tcache *tc = bw__tl_last;
    /* A power of two with capacity - min_size < span: min_size <= capacity
     * <= threshold in one compare (unsigned wrap); a span of 0 sends every
     * return of a checked, zeroing or cache-less pool to the slow path. */
    if (BW__LIKELY(p != NULL && block != NULL && (capacity & (capacity - 1)) == 0 &&
                   capacity - p->min_size < p->fast_return_span &&
                   !BW__TRACK_IS_NOACCESS(block) &&
                   atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id)) {
        unsigned ci = bw__log2(capacity) - p->min_shift;
        uint64_t push = atomic_load_explicit(&tc->n[ci].push, memory_order_relaxed);
        size_t n = (size_t)(push - atomic_load_explicit(&tc->n[ci].pop, memory_order_relaxed));
        if (BW__LIKELY(n < tc->resv[ci])) {
            BW__TRACK_NOACCESS(block, capacity);
            tc->slots[ci * BW_THREAD_CACHE_SLOTS + n] = block;
            atomic_store_explicit(&tc->n[ci].push, push + 1, memory_order_relaxed);
            return BW_OK;
        }
    }
    return bw__return_slow(p, block, capacity);
}

BW__INTERNAL void *bw__pool_regrow(bw_pool *p, void *b, size_t old_cap, size_t len,
                                   size_t new_cap)
{
    bw__tcache *tc = p->use_tcache ? bw__tcache_get(p) : NULL;
    void *nb;
    if ((nb = bw__large_take(p, new_cap)) != NULL) {
        /* Warm memory: a copy of len bytes costs less than fresh pages. */
        BW__COUNT(p, tc, hits, 1);
        BW__COUNT(p, tc, out_bytes, new_cap);
        if (p->checked) bw__check_rented(p, nb, new_cap);
        memcpy(nb, b, len);
        (void)bw_pool_return(p, b, old_cap);
        return nb;
    }
    if (p->checked && !bw__check_return(p, b, old_cap, false)) return NULL;
    nb = p->alloc.realloc(p->alloc.ctx, b, old_cap + p->extra, new_cap + p->extra);
    if (nb == NULL) {
        if (p->checked) bw__check_rented(p, b, old_cap); /* still the caller's */
        return NULL;
    }
    if (p->checked) {
        bw__canary_set(nb, new_cap);
        bw__check_freed(p, b);
        bw__check_rented(p, nb, new_cap);
    }
    /* One realloc is one backing free and one backing allocation, one
     * return and one rent: the counters stay balanced. */
    BW__COUNT(p, tc, backing_allocs, 1);
    BW__COUNT(p, tc, backing_frees, 1);
    BW__COUNT(p, tc, misses, 1);
    BW__COUNT(p, tc, returns, 1);
    BW__COUNT(p, tc, out_bytes, (uint64_t)new_cap - (uint64_t)old_cap);
    return nb;
}

/* Trim / stats ---------------------------------------------------------- */

void bw_pool_trim(bw_pool *pool)
{
    if (pool == NULL) return;
    bw__tcache_trim_self(pool);
    bw__shared_free_all(pool);
    bw__large_free_all(pool);
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
    out->learned_size = bw__learned(pool);
    out->outstanding_bytes = (size_t)s.out_bytes;
}
/*************** End file pool/pool.c ***************************************/

/*************** Begin file pool/tcache.c ***********************************/
/* tcache.c - per-thread caches in front of the pool's shared level.
 *
 * Each thread keeps, per pool it has used, a bw__tcache: up to
 * BW_THREAD_CACHE_SLOTS blocks per class, used without locks. The caches of
 * one thread form a list in thread-local storage; the caches of one pool
 * form a registry in the pool, guarded by one process-wide lock (taken only
 * when a cache is created or ends, and for stats/trim/destroy, never on the
 * rent/return fast path).
 *
 * Lifetimes, the part that is easy to get wrong:
 *   - thread exit: a pthread key destructor flushes every cache of the
 *     thread into its pool (shared level, or freed) and frees the caches;
 *   - pool destroy: frees the blocks of every registered cache and marks
 *     each cache orphaned (pool_id = 0) under the lock, so a later thread
 *     exit never touches the destroyed pool. An orphaned cache is freed by
 *     its thread, at exit or when it next creates a cache.
 * Pool ids are never reused, so a new pool at a destroyed pool's address
 * never matches an old cache. */
/* #include "pool_internal.h": amalgamated above */
/* #include "track.h": amalgamated above */

#include <stdlib.h>
#include <string.h>

/* The empty cache every thread starts with: pool id 0 matches no pool. */
static bw__tcache bw__no_cache;

static _Thread_local bw__tcache *bw__tl_last BW__TLS_MODEL = &bw__no_cache;
static _Thread_local bw__tcache *bw__tl_head BW__TLS_MODEL;

static pthread_mutex_t bw__reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t bw__exit_key;
static pthread_once_t bw__exit_once = PTHREAD_ONCE_INIT;
static bool bw__exit_key_ok;
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
    for (ci = 0; ci < p->nclasses; ci++) {
        uint64_t push = atomic_load_explicit(&tc->n[ci].push, memory_order_relaxed);
        uint64_t pop = atomic_load_explicit(&tc->n[ci].pop, memory_order_relaxed);
        s->hits += pop;
        s->returns += push;
        s->out_bytes += (pop - push) * (uint64_t)(p->min_size << ci);
        if (held) *held += (size_t)(push - pop) * (p->min_size << ci);
    }
}

BW__INTERNAL void bw__tcache_flush(bw__tcache *tc, bool to_shared)
{
    bw_pool *p = tc->pool;
    unsigned ci;
    for (ci = 0; ci < p->nclasses; ci++) {
        size_t cap = p->min_size << ci, n;
        while ((n = bw__tc_held(tc, ci)) > 0) {
            void *b = tc->slots[ci * BW_THREAD_CACHE_SLOTS + n - 1];
            /* Taking a block out is not a rent: undo the hit and the bytes
             * out that the pop counter will report for it. */
            bw__inc(&tc->n[ci].pop);
            BW__TC_ADD(tc, hits, (uint64_t)0 - 1);
            BW__TC_ADD(tc, out_bytes, (uint64_t)0 - cap);
            if (!to_shared || !bw__shared_push(p, ci, b))
                bw__backing_free(p, tc, b, cap);
        }
        bw__budget_give(p, (size_t)tc->resv[ci] * cap);
        tc->resv[ci] = 0;
    }
}

/* Thread exit: every cache of this thread goes back to its pool. */
static void bw__thread_exit(void *head)
{
    bw__tcache *tc, *next;
    pthread_mutex_lock(&bw__reg_lock);
    for (tc = (bw__tcache *)head; tc != NULL; tc = tc->thread_next) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) == 0) continue;
        bw__sums s;
        memset(&s, 0, sizeof s);
        bw__tcache_flush(tc, true);
        bw__tcache_totals(tc, &s, NULL);
        bw__counters_fold(&tc->pool->ctr, &s);
        bw__reg_unlink(tc);
    }
    pthread_mutex_unlock(&bw__reg_lock);
    for (tc = (bw__tcache *)head; tc != NULL; tc = next) {
        next = tc->thread_next;
        free(tc);
    }
    /* A later destructor of another library may use a pool again: it then
     * starts a fresh cache and sets the key again. */
    bw__tl_head = NULL;
    bw__tl_last = &bw__no_cache;
}

static void bw__exit_key_init(void)
{
    bw__exit_key_ok = pthread_key_create(&bw__exit_key, bw__thread_exit) == 0;
}

/* Free this thread's caches whose pool has been destroyed. */
static void bw__drop_orphans(void)
{
    bw__tcache **pp = &bw__tl_head;
    while (*pp != NULL) {
        bw__tcache *tc = *pp;
        if (atomic_load_explicit(&tc->pool_id, memory_order_acquire) == 0) {
            *pp = tc->thread_next;
            if (bw__tl_last == tc) bw__tl_last = &bw__no_cache;
            free(tc);
        } else {
            pp = &tc->thread_next;
        }
    }
    /* The exit hook walks the list from the key's value: keep it the head. */
    (void)pthread_setspecific(bw__exit_key, bw__tl_head);
}

BW__INTERNAL bw__tcache *bw__tcache_get_slow(bw_pool *p)
{
    bw__tcache *tc;
    for (tc = bw__tl_head; tc != NULL; tc = tc->thread_next) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) {
            bw__tl_last = tc;
            return tc;
        }
    }
    pthread_once(&bw__exit_once, bw__exit_key_init);
    /* Without the exit hook a cache would leak its blocks at thread exit:
     * then this thread uses the shared level only. */
    if (!bw__exit_key_ok) return NULL;
    bw__drop_orphans();
    tc = (bw__tcache *)calloc(1, sizeof *tc +
                              (size_t)p->nclasses * BW_THREAD_CACHE_SLOTS * sizeof(void *));
    if (tc == NULL) return NULL;
    if (pthread_setspecific(bw__exit_key, tc) != 0) {
        free(tc);
        return NULL;
    }
    tc->pool = p;
    atomic_store_explicit(&tc->pool_id, p->id, memory_order_relaxed);
    tc->thread_next = bw__tl_head;
    bw__tl_head = tc;
    pthread_mutex_lock(&bw__reg_lock);
    tc->pool_next = p->caches;
    if (p->caches) p->caches->pool_prev = tc;
    p->caches = tc;
    pthread_mutex_unlock(&bw__reg_lock);
    bw__tl_last = tc;
    return tc;
}

BW__INTERNAL void bw__tcache_orphan_all(bw_pool *p)
{
    bw__tcache *tc, *next;
    pthread_mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = next) {
        next = tc->pool_next;
        bw__tcache_flush(tc, false);
        tc->pool_prev = tc->pool_next = NULL;
        atomic_store_explicit(&tc->pool_id, 0, memory_order_release);
    }
    p->caches = NULL;
    pthread_mutex_unlock(&bw__reg_lock);
}

BW__INTERNAL void bw__tcache_sum(bw_pool *p, bw__sums *s, size_t *held)
{
    bw__tcache *tc;
    pthread_mutex_lock(&bw__reg_lock);
    for (tc = p->caches; tc != NULL; tc = tc->pool_next) bw__tcache_totals(tc, s, held);
    pthread_mutex_unlock(&bw__reg_lock);
}

BW__INTERNAL void bw__tcache_trim_self(bw_pool *p)
{
    bw__tcache *tc;
    for (tc = bw__tl_head; tc != NULL; tc = tc->thread_next) {
        if (atomic_load_explicit(&tc->pool_id, memory_order_relaxed) == p->id) {
            bw__tcache_flush(tc, false);
            return;
        }
    }
}
/*************** End file pool/tcache.c *************************************/

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
