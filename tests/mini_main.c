/* SPDX-License-Identifier: MIT */
/* mini_main.c - the runner for tests built over mini_criterion.h. */
#include "mini_criterion.h"

struct mc_test *mc_tests;
struct mc_suite *mc_suites;
int mc_failed_here;

int main(void)
{
    struct mc_test *t;
    int passed = 0, failed = 0;
    for (t = mc_tests; t != NULL; t = t->next) {
        int status = 0, ok;
        pid_t pid;
        fflush(NULL);
        pid = fork();
        if (pid < 0) { perror("fork"); return 2; }
        if (pid == 0) {
            struct mc_suite *su;
            for (su = mc_suites; su != NULL; su = su->next)
                if (strcmp(su->name, t->suite) == 0) break;
            if (t->opts.timeout > 0) alarm((unsigned)t->opts.timeout);
            if (su != NULL && su->init != NULL) su->init();
            t->fn();
            if (su != NULL && su->fini != NULL) su->fini();
            exit(mc_failed_here); /* exit, not _exit: valgrind's leak check runs */
        }
        waitpid(pid, &status, 0);
        if (t->opts.signal)
            ok = WIFSIGNALED(status) && WTERMSIG(status) == t->opts.signal;
        else
            ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        printf("[%s] %s::%s\n", ok ? "PASS" : "FAIL", t->suite, t->name);
        if (ok) passed++;
        else failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

