/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* fork, waitpid, pthread_atfork, nanosleep, MAP_ANONYMOUS */
/* test_pool_fork.c - pools across fork: the child can use every pool,
 * whatever other threads were doing at the fork, and a program's own
 * pthread_atfork handlers may use bufwriter. */
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Fork handlers registered before the first pool                       */
/* ------------------------------------------------------------------ */

/* What broke (after 0.2): a program (a logging library, say) registers
 * pthread_atfork handlers that write through bufwriter before it creates
 * its first pool. bufwriter registered its own handlers lazily, at the
 * first pool, so its prepare handler ran first and held every pool lock
 * when the program's prepare handler rented: fork deadlocked. bufwriter
 * now registers them when it is loaded, so handlers registered after that
 * may use it in prepare, parent and child. */

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
Test(pool_fork, handlers_registered_first_use_the_pool, .timeout = 30)
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
/* Fork while other threads churn the pools                             */
/* ------------------------------------------------------------------ */

/* Fork while other threads are inside the pool: the child must be able to
 * use every pool. What broke (0.1): a child could hang on a lock another
 * thread held at the fork.
 *
 * Under AddressSanitizer the churning threads use pools over an mmap-backed
 * allocator instead of the shared pool (over malloc): gcc 12's libasan does
 * not hold its allocator lock across fork, so a child forked while another
 * thread is inside ASan's malloc hangs in malloc, whatever the library
 * does. */
#if defined(__SANITIZE_ADDRESS__)
#  define TEST_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TEST_ASAN 1
#  endif
#endif


static const bw_allocator map_allocator = { map_alloc, NULL, map_free, NULL };

/* Under valgrind a child's leak report would fail it (the -DBW_VALGRIND
 * build runs with --leak-check=full): the blocks the other threads held, and
 * their caches (which the library leaves alone in the child on purpose: an
 * owner may have been mid-update), are unreachable there. The child's work
 * is still checked; only its exit skips the leak check. Valgrind also makes
 * each child cost about 0.4 s: fewer forks, a longer deadline. */
#if defined(__has_include)
#  if __has_include(<valgrind/valgrind.h>)
#    include <valgrind/valgrind.h>
#    define UNDER_VALGRIND()   (RUNNING_ON_VALGRIND != 0)
#    define CHILD_QUIET_EXIT() VALGRIND_CLO_CHANGE("--leak-check=no")
#  endif
#endif
#ifndef UNDER_VALGRIND
#  define UNDER_VALGRIND()   0
#  define CHILD_QUIET_EXIT() ((void)0)
#endif
#if defined(TEST_ASAN)
#  define FORKS 30 /* a sanitized child costs about 50 ms */
#elif defined(__SANITIZE_THREAD__)
#  define FORKS 50
#  define TEST_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define FORKS 50
#    define TEST_TSAN 1
#  endif
#endif
/* TSan's runtime, like gcc 12's libasan, does not hold its allocator locks
 * across fork: under either, the churning threads use an mmap allocator. */
#if defined(TEST_TSAN) && !defined(TEST_ASAN)
#  define TEST_FORK_MAP 1
#elif defined(TEST_ASAN)
#  define TEST_FORK_MAP 1
#endif
/* qemu-user (aarch64, s390x) emulates every instruction of the churning
 * threads and the children: 100 forks took 9-11 s there. The same loop
 * runs its full 100 forks natively (normal, clang, -O0, musl, m32). */
#if !defined(FORKS) && defined(BW_TEST_EMULATED)
#  define FORKS 20
#endif
#ifndef FORKS
#  define FORKS 100
#endif

struct churn {
    bw_pool *p;
    _Atomic int stop;
    _Atomic long rounds;
};

static void *churn_main(void *arg)
{
    struct churn *c = (struct churn *)arg;
    static const size_t sizes[] = { 16, 100, 256, 4096, 40 * 1024, 300 * 1024, 1536 * 1024 };
    void *held[4] = { NULL, NULL, NULL, NULL };
    size_t caps[4] = { 0, 0, 0, 0 };
    unsigned i = 0;
    while (!atomic_load(&c->stop)) {
        size_t sz = sizes[i % (sizeof sizes / sizeof sizes[0])];
        unsigned slot = i % 4;
        if (held[slot] != NULL) (void)bw_pool_return(c->p, held[slot], caps[slot]);
        held[slot] = bw_pool_rent(c->p, sz, &caps[slot]);
        if (held[slot] != NULL)
            memset(held[slot], (int)(i & 0xff), caps[slot] < 64 ? caps[slot] : 64);
        if (i % 8 == 0) {
            bw_writer w;
            if (bw_init(&w, c->p, 0) == BW_OK) {
                (void)bw_printf(&w, "churn %u %s", i, "x");
                bw_release(&w);
            }
        }
        if (i % 64 == 0) bw_pool_trim(c->p);
        i++;
        atomic_fetch_add(&c->rounds, 1);
    }
    for (i = 0; i < 4; i++)
        if (held[i] != NULL) (void)bw_pool_return(c->p, held[i], caps[i]);
    return NULL;
}

static int child_cycle(bw_pool *p, size_t sz)
{
    size_t cap;
    unsigned char *b = (unsigned char *)bw_pool_rent(p, sz, &cap);
    if (b == NULL || cap < sz) return 0;
    memset(b, 0x42, sz < 256 ? sz : 256); /* (touching all of it is slow in a fork child) */
    return bw_pool_return(p, b, cap) == BW_OK;
}

static void child_work(bw_pool *a, bw_pool *b)
{
    bw_writer w = BW_WRITER_INIT;
    static const size_t sizes[] = { 16, 256, 4096, 40 * 1024, 300 * 1024, 1536 * 1024 };
    size_t i;
    int ok = 1;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ok &= child_cycle(bw_pool_shared(), sizes[i]);
        ok &= child_cycle(a, sizes[i]);
        ok &= child_cycle(b, sizes[i]);
    }
    ok &= bw_printf(&w, "child %d says %s", 7, "hello") == BW_OK;
    ok &= bw_len(&w) == 18 && memcmp(bw_data(&w), "child 7 says hello", 18) == 0;
    bw_release(&w);
    if (ok) CHILD_QUIET_EXIT();
    _exit(ok ? 0 : 3);
}

Test(pool_fork, while_other_threads_churn_the_pools, .timeout = 300)
{
    struct churn a, b;
    pthread_t ta_, tb_;
    bw_pool_options o;
    bw_pool *own = NULL;
    /* valgrind runs one thread at a time, and a child there took 70-80 s on
     * a 2-core VM while the parent's two threads churned (measured; 30 s
     * deadlines failed it): one fork with a deadline three times that. The
     * full count runs in the other flavours. */
    int i, hung = 0, bad = 0, forks = UNDER_VALGRIND() ? 1 : FORKS;
    uint64_t wait_ms = UNDER_VALGRIND() ? 240000 : 1000;
    memset(&o, 0, sizeof o);
#ifdef TEST_FORK_MAP
    o.allocator = &map_allocator;
    own = mkpool(&o); /* stands in for the shared pool */
    a.p = own;
#else
    (void)map_allocator;
    a.p = bw_pool_shared();
#endif
    o.flags = BW_POOL_NO_THREAD_CACHE;
    b.p = mkpool(&o);
    atomic_init(&a.stop, 0);
    atomic_init(&b.stop, 0);
    atomic_init(&a.rounds, 0);
    atomic_init(&b.rounds, 0);
    cr_assert_eq(pthread_create(&ta_, NULL, churn_main, &a), 0);
    cr_assert_eq(pthread_create(&tb_, NULL, churn_main, &b), 0);
    while (atomic_load(&a.rounds) < 100 || atomic_load(&b.rounds) < 100) sleep_ms(1);
    for (i = 0; i < forks; i++) {
        int status = 0;
        uint64_t deadline;
        pid_t pid, r;
        fflush(NULL);
        pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) child_work(a.p, b.p);
        deadline = mono_ms() + wait_ms;
        while ((r = waitpid(pid, &status, WNOHANG)) == 0 && mono_ms() < deadline) sleep_ms(1);
        if (r == 0) {
            kill(pid, SIGKILL);
            (void)waitpid(pid, &status, 0);
            hung++;
        } else if (r != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad++;
        }
    }
    atomic_store(&a.stop, 1);
    atomic_store(&b.stop, 1);
    pthread_join(ta_, NULL);
    pthread_join(tb_, NULL);
    cr_expect_eq(hung, 0, "%d of %d children hung", hung, forks);
    cr_expect_eq(bad, 0, "%d of %d children failed", bad, forks);
    bw_pool_destroy(b.p);
    bw_pool_destroy(own);
}
