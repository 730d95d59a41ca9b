/* SPDX-License-Identifier: MIT */
/* check.c - checked mode: a side table of every block the pool has handed
 * out or holds, so that a double return, a foreign block or a wrong capacity
 * is reported (through a replaceable hook) and refused instead of
 * corrupting the pool, and a canary after every block catches writes past
 * its end when it comes back. On with BW_POOL_CHECKED, in BW_DEBUG builds,
 * or with BW_CHECKED=1 in the environment. It costs a hash lookup under a
 * lock and a 16-byte compare on every rent and return. */
#include "pool_internal.h"

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
