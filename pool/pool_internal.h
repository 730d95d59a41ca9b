/* SPDX-License-Identifier: MIT */
/* pool_internal.h - the pool's private structures, shared by the files of
 * pool/. The writer includes it only through pool_writer.h, whose inline
 * accessors read it; the writer's files read none of it. Nothing here is
 * part of the public API. */
#ifndef BW_POOL_INTERNAL_H
#define BW_POOL_INTERNAL_H

#include "../bufwriter.h"
#include "../platform/platform.h"
#include "track.h"

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
extern bw_pool *_Atomic bw__shared_pool;

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
extern BW__THREAD_LOCAL bw__tcache *bw__tl_last;

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
