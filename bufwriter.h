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
