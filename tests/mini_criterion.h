/* SPDX-License-Identifier: MIT */
/* mini_criterion.h - just enough of Criterion's test API to build the same
 * test sources without it, for ThreadSanitizer.
 *
 * Why: Criterion's inheritable arena cannot be set up under TSan ("Could
 * not initialize inheritable arena", Criterion issue #274, still open), and
 * it runs each test in a re-executed child that valgrind does not follow.
 * So the TSan and valgrind builds compile the same test sources against
 * this header instead (-DBW_MINI_CRITERION): plain fork, no exec. Each test runs in a forked child, as with
 * Criterion; a failed assertion ends that child, a failed expectation marks
 * it failed. On Windows (MinGW under wine), which has no fork, the runner
 * starts itself once per test instead (tests/mini_main.c), and .timeout
 * is not enforced. The run ends with "N passed, N failed" and a non-zero exit
 * status when anything failed. Supported: Test(suite, name, .timeout,
 * .signal), TestSuite(name, .init, .fini), cr_assert*, cr_expect* (the
 * forms the suite uses); link with tests/mini_main.c. Built
 * without -Wpedantic: like Criterion's, the macros may be called with no
 * message argument. */
#ifndef BW_MINI_CRITERION_H
#define BW_MINI_CRITERION_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#  include <process.h>
#else
#  include <sys/wait.h>
#  include <unistd.h>
#endif

struct mc_opts {
    int unused_;
    double timeout;
    int signal;
};

struct mc_test {
    const char *suite, *name;
    void (*fn)(void);
    struct mc_opts opts;
    struct mc_test *next;
};

struct mc_suite {
    const char *name;
    void (*init)(void);
    void (*fini)(void);
    struct mc_suite *next;
};

/* Registries and state, defined in mini_main.c. */
extern struct mc_test *mc_tests;
extern struct mc_suite *mc_suites;
extern int mc_failed_here;

/* TestSuite(name, .init = f, .fini = g): set-up and tear-down per test. */
#define TestSuite(s_, ...)                                                     \
    __attribute__((constructor)) static void mc_suite_##s_(void)               \
    {                                                                          \
        static struct mc_suite su = {.name = #s_, __VA_ARGS__};                \
        su.next = mc_suites;                                                   \
        mc_suites = &su;                                                       \
    }

#define Test(s_, n_, ...)                                                 \
    static void s_##_##n_(void);                                          \
    __attribute__((constructor)) static void mc_reg_##s_##_##n_(void)     \
    {                                                                          \
        static struct mc_test t;                                               \
        struct mc_opts o = {.unused_ = 0, __VA_ARGS__};                        \
        t.suite = #s_;                                                      \
        t.name = #n_;                                                        \
        t.fn = s_##_##n_;                                                 \
        t.opts = o;                                                            \
        t.next = mc_tests;                                                     \
        mc_tests = &t;                                                         \
    }                                                                          \
    static void s_##_##n_(void)

#ifdef __MINGW32__
__attribute__((format(gnu_printf, 6, 7), unused))
#else
__attribute__((format(printf, 6, 7), unused))
#endif
static void mc_check(int ok, int fatal, const char *file, int line, const char *expr,
                     const char *fmt, ...)
{
    va_list ap;
    if (ok) return;
    fprintf(stderr, "[----] %s:%d: %s failed: %s: ", file, line,
            fatal ? "assertion" : "expectation", expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    mc_failed_here = 1;
    if (fatal) _exit(1);
}

#define MC_CHECK(fatal, cond, text, ...) \
    mc_check(!!(cond), fatal, __FILE__, __LINE__, text, "" __VA_ARGS__)

#define cr_assert(c, ...)          MC_CHECK(1, (c), #c, __VA_ARGS__)
#define cr_expect(c, ...)          MC_CHECK(0, (c), #c, __VA_ARGS__)
#define cr_assert_eq(a, b, ...)    MC_CHECK(1, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...)    MC_CHECK(0, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...)   MC_CHECK(1, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...)   MC_CHECK(0, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...)    MC_CHECK(1, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...)    MC_CHECK(0, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...)   MC_CHECK(1, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...)   MC_CHECK(0, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...)    MC_CHECK(1, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...)    MC_CHECK(0, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...)   MC_CHECK(1, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...)   MC_CHECK(0, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_null(a, ...)     MC_CHECK(1, (a) == NULL, #a " == NULL", __VA_ARGS__)
#define cr_expect_null(a, ...)     MC_CHECK(0, (a) == NULL, #a " == NULL", __VA_ARGS__)
#define cr_assert_not_null(a, ...) MC_CHECK(1, (a) != NULL, #a " != NULL", __VA_ARGS__)
#define cr_expect_not_null(a, ...) MC_CHECK(0, (a) != NULL, #a " != NULL", __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) MC_CHECK(0, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)

#endif /* BW_MINI_CRITERION_H */
