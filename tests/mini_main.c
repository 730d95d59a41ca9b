/* SPDX-License-Identifier: MIT */
/* mini_main.c - the runner for tests built over mini_criterion.h: each
 * test in a child process (fork; on Windows the runner itself, started
 * with --run SUITE::NAME), then "N passed, N failed". */
#include "mini_criterion.h"

#include <time.h>
#ifndef _WIN32
#  include <sys/resource.h>
#endif

struct mc_test *mc_tests;
struct mc_suite *mc_suites;
int mc_failed_here;

/* Run one test in this process, with its suite's set-up and tear-down. */
static void mc_run_here(const struct mc_test *t)
{
    struct mc_suite *su;
    for (su = mc_suites; su != NULL; su = su->next)
        if (strcmp(su->name, t->suite) == 0) break;
#ifndef _WIN32
    if (t->opts.timeout > 0) alarm((unsigned)t->opts.timeout);
#endif
    if (su != NULL && su->init != NULL) su->init();
    t->fn();
    if (su != NULL && su->fini != NULL) su->fini();
    exit(mc_failed_here); /* exit, not _exit: valgrind's leak check runs */
}

#ifndef _WIN32
/* user + sys of the children waited for, in seconds. */
static double mc_seconds(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}
#endif

#ifdef _WIN32
/* The exit code a test expecting a signal ends with on Windows: abort()
 * exits with 3; a fault ends the process with its exception code. */
static int mc_signal_code(int sig)
{
    if (sig == SIGABRT) return 3;
    if (sig == SIGSEGV) return (int)0xC0000005u;
    return -1;
}
#endif

int main(int argc, char **argv)
{
    struct mc_test *t;
    int passed = 0, failed = 0;
#ifdef _WIN32
    if (argc == 3 && strcmp(argv[1], "--run") == 0) {
        for (t = mc_tests; t != NULL; t = t->next) {
            size_t n = strlen(t->suite);
            if (strncmp(argv[2], t->suite, n) == 0 && strncmp(argv[2] + n, "::", 2) == 0 &&
                strcmp(argv[2] + n + 2, t->name) == 0)
                mc_run_here(t);
        }
        fprintf(stderr, "no test %s\n", argv[2]);
        return 2;
    }
#else
    (void)argc;
    (void)argv;
#endif
    for (t = mc_tests; t != NULL; t = t->next) {
        int ok;
        double cpu = 0;
        time_t start = time(NULL);
#ifdef _WIN32
        char id[256];
        intptr_t rc;
        snprintf(id, sizeof id, "%s::%s", t->suite, t->name);
        fflush(NULL);
        rc = _spawnl(_P_WAIT, argv[0], argv[0], "--run", id, (char *)NULL);
        if (rc == -1) { perror("spawn"); return 2; }
        if (t->opts.signal)
            ok = (int)rc == mc_signal_code(t->opts.signal);
        else
            ok = rc == 0;
#else
        int status = 0;
        pid_t pid;
        struct rusage ru0, ru1;
        getrusage(RUSAGE_CHILDREN, &ru0);
        fflush(NULL);
        pid = fork();
        if (pid < 0) { perror("fork"); return 2; }
        if (pid == 0) mc_run_here(t);
        waitpid(pid, &status, 0);
        getrusage(RUSAGE_CHILDREN, &ru1);
        cpu = mc_seconds(&ru1) - mc_seconds(&ru0);
        if (t->opts.signal)
            ok = WIFSIGNALED(status) && WTERMSIG(status) == t->opts.signal;
        else
            ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
#endif
        /* The wall and CPU time (the child's user + sys, where there is
         * fork) of a test that took a second or more of either: what to
         * look at when a flavour is slow (Criterion's --verbose gives it
         * too). */
        if (time(NULL) - start >= 1 || cpu >= 1.0)
            printf("[%s] %s::%s (%ld s, %.1f s CPU)\n", ok ? "PASS" : "FAIL", t->suite,
                   t->name, (long)(time(NULL) - start), cpu);
        else
            printf("[%s] %s::%s\n", ok ? "PASS" : "FAIL", t->suite, t->name);
        if (ok) passed++;
        else failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
