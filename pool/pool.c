/* SPDX-License-Identifier: MIT */
/* pool.c - the size-class pool: create/destroy, rent/return, the shared
 * level, trim and stats. Thread caches live in tcache.c, checked mode in
 * check.c, the backing allocators in alloc.c, kept large blocks and
 * reservations in large.c. */
#include "pool_writer.h"
#include "track.h"

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

bw_pool *_Atomic bw__shared_pool;

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
