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
 * Unloading a plugin that embeds bufwriter (the single header, or
 * libbufwriter.a) while threads that used it live is tested by
 * tests/dl/run.sh (make test-dlclose): it needs a separately built plugin
 * that dlclose really unmaps. */
#include "helpers.h"

#include <pthread.h>
#include <sys/types.h>
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
    ta_init(&ta, 1);
    p = ta_pool(&ta, 0, BW_POOL_NO_THREAD_CACHE);
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
