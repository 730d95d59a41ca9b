/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* fork, waitpid, pthread_atfork under -std=c11 */
/* test_pool_defects.c - defects of the pool found after 0.2, each with the
 * test that guards it:
 *
 *   fork_handlers_registered_first_use_the_pool: a program (a logging
 *     library, say) registers pthread_atfork handlers that write through
 *     bufwriter before it creates its first pool. bufwriter registered its
 *     own handlers lazily, at the first pool, so its prepare handler ran
 *     first and held every pool lock when the program's prepare handler
 *     rented: fork deadlocked. bufwriter now registers them when it is
 *     loaded, so handlers registered after that may use it in prepare,
 *     parent and child.
 *
 *   thread_exit_with_a_free_hook_that_writes_loses_nothing: pool P's free
 *     hook writes a line through a writer on pool L. A thread's exit
 *     cleanup gives its caches back one pool at a time; when it freed P's
 *     blocks, the hook's rent and return on L went through the thread's
 *     cache for L, already given back but still the thread's current
 *     cache: the returned block was parked there and freed with it, one
 *     block of L (and its retention budget, and its counts) lost per
 *     thread exit. Once the cleanup starts the thread now has no cache, so
 *     such calls use L's shared level.
 *
 *   decay_when_the_thread_cache_serves_every_call: decay ran only on slow
 *     paths (where the clock is read), so a program whose later calls were
 *     all served by the thread cache (small messages) never gave back what
 *     its bigger jobs left retained (a kept large block, mid-size blocks in
 *     the shared level), however long ago. One rent in 1024 of a class now
 *     takes the slow path, which decays: the test makes only small calls
 *     after those returns and expects the memory back soon after decay_ms.
 *
 * Unloading a plugin that embeds bufwriter (the single header, or
 * libbufwriter.a) while threads that used it live is tested by
 * tests/dl/run.sh (make test-dlclose): it needs a separately built plugin
 * that dlclose really unmaps. */
#include "harness.h"

#include <pthread.h>
#include <sys/types.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Fork handlers registered before the first pool                       */
/* ------------------------------------------------------------------ */

/* The pool the handlers write through: no thread cache, so every rent and
 * return takes its class lock, the lock bufwriter's prepare handler holds. */
static bw_pool *fork_pool;
static _Atomic int fork_ok[3]; /* prepare, parent, child: lines written */

static void fork_handler_write(int which)
{
    static const char *const names[3] = { "prepare", "parent", "child" };
    bw_writer w;
    size_t cap = 0;
    void *b;
    bw_pool *p = fork_pool;
    int ok;
    if (p == NULL) return; /* a fork of some other test code */
    if (bw_init(&w, p, 0) != BW_OK) return;
    ok = bw_printf(&w, "atfork %s\n", names[which]) == BW_OK &&
         bw_len(&w) == strlen(names[which]) + 8;
    bw_release(&w);
    b = bw_pool_rent(p, 100, &cap);
    ok = ok && b != NULL && cap >= 100;
    if (b != NULL) {
        memset(b, which, cap);
        ok = bw_pool_return(p, b, cap) == BW_OK && ok;
    }
    if (ok) atomic_fetch_add(&fork_ok[which], 1);
}

static void fork_prepare(void) { fork_handler_write(0); }
static void fork_parent(void) { fork_handler_write(1); }
static void fork_child(void) { fork_handler_write(2); }

/* This must be the first thing the process does with bufwriter: the
 * handlers have to be registered before the first pool exists, which is
 * when bufwriter used to register its own. It holds because Criterion (and
 * tests/mini_criterion.h) runs each test in a process of its own, and no
 * code of the suite creates a pool before a test starts. The timeout turns
 * a deadlocked fork into a failure. */
Test(pool_defects, fork_handlers_registered_first_use_the_pool, .timeout = 30)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    pid_t pid;
    int status = 0, i;
    cr_assert_eq(pthread_atfork(fork_prepare, fork_parent, fork_child), 0);
    p = fresh_pool(&ta, 0, BW_POOL_NO_THREAD_CACHE);
    /* The pools in use: a writer on the shared pool, blocks through p. */
    cr_assert_eq(bw_init(&w, NULL, 0), BW_OK);
    cr_assert_eq(bw_printf(&w, "before fork %d", 1), BW_OK);
    bw_release(&w);
    for (i = 0; i < 4; i++) {
        size_t cap;
        void *b = bw_pool_rent(p, 64u << i, &cap);
        cr_assert_not_null(b);
        cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
    }
    fork_pool = p;
    fflush(NULL);
    pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        /* The child: its handler wrote its line; the pools work. */
        size_t cap;
        void *b = bw_pool_rent(p, 200, &cap);
        int ok = atomic_load(&fork_ok[2]) == 1 && b != NULL &&
                 bw_pool_return(p, b, cap) == BW_OK;
        _exit(ok ? 0 : 3);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the child failed (status %d)", status);
    cr_expect_eq(atomic_load(&fork_ok[0]), 1, "the prepare handler could not write");
    cr_expect_eq(atomic_load(&fork_ok[1]), 1, "the parent handler could not write");
    fork_pool = NULL;
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------ */
/* Thread exit with a free hook that writes through bufwriter           */
/* ------------------------------------------------------------------ */

#define EXIT_THREADS 200

static bw_pool *log_pool;         /* L: the hook's lines go there */
static _Atomic long log_lines;    /* lines written on L           */
static _Atomic long hook_lines;   /* of which by P's free hook    */

static int log_line(const char *what)
{
    bw_writer w;
    bw_pool *l = log_pool;
    int ok;
    if (l == NULL || bw_init(&w, l, 0) != BW_OK) return 0;
    ok = bw_printf(&w, "%s\n", what) == BW_OK && bw_len(&w) == strlen(what) + 1;
    bw_release(&w);
    if (ok) atomic_fetch_add(&log_lines, 1);
    return ok;
}

/* P's free hook: the counting allocator's free, then a line on L. */
static void logging_free(void *ctx, void *block, size_t size)
{
    ta_free(ctx, block, size);
    if (log_line("P freed a block")) atomic_fetch_add(&hook_lines, 1);
}

static bw_pool *exit_pool_p;

/* P first, then L: the thread's cache for L is the newer one, and the exit
 * cleanup gives it back before P's, whose freed blocks then call the hook. */
static void *exit_worker(void *arg)
{
    void *b[2];
    size_t cap[2];
    int i, ok = 1;
    for (i = 0; i < 2; i++) ok &= (b[i] = bw_pool_rent(exit_pool_p, 64, &cap[i])) != NULL;
    for (i = 0; i < 2; i++)
        if (b[i] != NULL) ok &= bw_pool_return(exit_pool_p, b[i], cap[i]) == BW_OK;
    ok &= log_line("thread done");
    return ok ? arg : NULL;
}

Test(pool_defects, thread_exit_with_a_free_hook_that_writes_loses_nothing, .timeout = 120)
{
    test_alloc ta_p, ta_l;
    bw_allocator hook;
    bw_pool_options o;
    bw_pool *p = NULL, *l;
    bw_pool_stats st;
    int i;
    ta_init(&ta_p, 1);
    ta_init(&ta_l, 1);
    hook = ta_p.hook;
    hook.free = logging_free;
    l = ta_pool(&ta_l, 0, 0);
    /* P keeps little: one block per class in the shared level, so of the
     * two blocks in an exiting thread's cache one is freed (the hook). */
    memset(&o, 0, sizeof o);
    o.allocator = &hook;
    o.max_blocks_per_class = 1;
    o.max_retained_bytes = 1024;
    o.decay_ms = BW_DECAY_NEVER;
    o.flags = BW_POOL_NO_LARGE_RETENTION | BW_POOL_NO_LEARNED_GROWTH;
    o.min_first_block = 1;
    p = mkpool(&o);
    log_pool = l;
    exit_pool_p = p;
    /* One thread after another: each exit frees a block of P. */
    for (i = 0; i < EXIT_THREADS; i++) {
        pthread_t th;
        void *ret = NULL;
        cr_assert_eq(pthread_create(&th, NULL, exit_worker, &ta_p), 0);
        cr_assert_eq(pthread_join(th, &ret), 0);
        cr_assert_eq(ret, (void *)&ta_p, "thread %d: the pools did not work", i);
    }
    cr_expect_geq(atomic_load(&hook_lines), EXIT_THREADS,
                  "the free hook ran %ld times", atomic_load(&hook_lines));
    ta_finish(&ta_p, p); /* the hook writes on L again (P's last block) */
    log_pool = NULL;
    /* Every line was one rent and one return of L, all counted. */
    bw_pool_get_stats(l, &st);
    cr_expect_eq(st.rents, (uint64_t)atomic_load(&log_lines), "L: %llu rents for %ld lines",
                 (unsigned long long)st.rents, atomic_load(&log_lines));
    cr_expect_eq(st.returns, st.rents, "L: %llu returns, %llu rents",
                 (unsigned long long)st.returns, (unsigned long long)st.rents);
    cr_expect_eq(st.outstanding_bytes, 0, "L: %zu bytes outstanding", st.outstanding_bytes);
    ta_finish(&ta_l, l); /* L's allocator balances: no block was lost */
}

/* ------------------------------------------------------------------ */
/* Decay when every call is served by the thread cache                  */
/* ------------------------------------------------------------------ */

static uint64_t test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

Test(pool_defects, decay_when_the_thread_cache_serves_every_call, .timeout = 60)
{
    enum { DECAY_MS = 100, MID = 64 << 10, NMID = 4, LARGE = 4 << 20 };
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p = NULL;
    bw_pool_stats st;
    void *mid[NMID], *b;
    size_t cap, mid_cap[NMID];
    uint64_t start, now, deadline;
    long pairs = 0;
    int i;
    o.decay_ms = DECAY_MS;
    p = mkpool(&o);
    /* A small block: its class is in the thread cache from now on. */
    b = bw_pool_rent(p, 100, &cap);
    cr_assert_not_null(b);
    cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
    start = test_now_ms();
    /* What a bigger job leaves: a kept large block (above the threshold)
     * and mid-size blocks in the shared level (above the thread cache). */
    b = bw_pool_rent(p, LARGE, &cap);
    cr_assert_not_null(b);
    memset(b, 1, 4096);
    cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
    for (i = 0; i < NMID; i++) cr_assert_not_null(mid[i] = bw_pool_rent(p, MID, &mid_cap[i]));
    for (i = 0; i < NMID; i++) cr_assert_eq(bw_pool_return(p, mid[i], mid_cap[i]), BW_OK);
    bw_pool_get_stats(p, &st);
    cr_assert_eq(st.large_retained_bytes, (size_t)LARGE);
    cr_assert_geq(st.retained_bytes, (size_t)LARGE + NMID * MID);
    /* From now on only small rents and returns, all served by the thread
     * cache, until the memory is back (decay_ms after the returns, give or
     * take a clock tick) or a deadline far beyond that. */
    deadline = start + 5000;
    do {
        for (i = 0; i < 1000; i++, pairs++) {
            b = bw_pool_rent(p, 100, &cap);
            cr_assert_not_null(b);
            cr_assert_eq(bw_pool_return(p, b, cap), BW_OK);
        }
        bw_pool_get_stats(p, &st); /* changes nothing: no decay here */
        now = test_now_ms();
        if (st.large_retained_bytes == 0 && st.retained_bytes < (size_t)MID) break;
    } while (now < deadline);
    cr_expect_eq(st.large_retained_bytes, 0,
                 "%zu large bytes still kept %llu ms after their return (%ld small pairs)",
                 st.large_retained_bytes, (unsigned long long)(now - start), pairs);
    cr_expect_lt(st.retained_bytes, (size_t)MID,
                 "%zu bytes still retained %llu ms after their return (%ld small pairs)",
                 st.retained_bytes, (unsigned long long)(now - start), pairs);
    cr_expect_geq(st.decayed_bytes, (uint64_t)LARGE + NMID * MID);
    /* Not before they were unused for decay_ms (half of it: clock ticks). */
    cr_expect_geq(now - start, (uint64_t)DECAY_MS / 2, "given back after %llu ms",
                  (unsigned long long)(now - start));
    ta_finish(&ta, p);
}
