/* SPDX-License-Identifier: MIT */
/* fork.c - what keeps pools right across fork: every pool lock is taken
 * before fork and released in both processes, and the child drops the
 * caches of the threads it does not have (their blocks are left alone: one
 * may have been mid-update). The handlers are registered at load time
 * (bw__load), so that fork handlers registered later may use bufwriter. */
#include "pool_internal.h"

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
