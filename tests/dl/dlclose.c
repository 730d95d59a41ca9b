/* SPDX-License-Identifier: MIT */
/* dlclose.c - dlopen the library, use a pool on a thread (so the thread has
 * a cache, and the library's thread-exit cleanup is armed), dlclose the
 * library while that thread is still alive, then let the thread exit.
 *
 * 0.1 crashed here: the thread-exit hook (a pthread key destructor) pointed
 * into the unloaded library. The shared library links with -z nodelete, so
 * dlclose leaves it mapped. A plugin that embeds bufwriter (the single
 * header, or libbufwriter.a) is really unmapped: there the library deletes
 * its key when it is unloaded, so no destructor into unmapped code is left.
 *
 * Usage: dlclose path/to/libbufwriter.so
 *        dlclose --plugin path/to/plugin.so    (tests/dl/plugin.c)
 * Exit status 0 when the process survives and the pool worked. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef void *(*shared_fn)(void);
typedef void *(*rent_fn)(void *pool, size_t min_size, size_t *capacity);
typedef int (*return_fn)(void *pool, void *block, size_t capacity);
typedef int (*work_fn)(void);

static shared_fn f_shared;
static rent_fn f_rent;
static return_fn f_return;
static work_fn f_work; /* the plugin's entry point, with --plugin */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int used;     /* 1: the pool worked on the thread, -1: it did not */
static int may_exit; /* the main thread has closed the library */

/* dlsym gives an object pointer; copy it into a function pointer without
 * the cast ISO C does not define. */
static int lookup(void *h, const char *name, void *fn, size_t size)
{
    void *sym = dlsym(h, name);
    if (sym == NULL || size != sizeof sym) {
        fprintf(stderr, "dlclose: %s not found: %s\n", name, dlerror());
        return 0;
    }
    memcpy(fn, &sym, size);
    return 1;
}

static void *worker(void *arg)
{
    void *pool = f_work != NULL ? NULL : f_shared();
    size_t cap = 0;
    void *b;
    int ok = 0, i;
    (void)arg;
    if (f_work != NULL) ok = f_work() == 0;
    /* A few rounds: the first rent creates this thread's cache, the
     * returns fill it, so the exit hook has blocks to give back. */
    for (i = 0; i < 4 && pool != NULL; i++) {
        b = f_rent(pool, 64, &cap);
        if (b == NULL || cap < 64) break;
        memset(b, 0x5a, cap);
        if (f_return(pool, b, cap) != 0) break;
        ok = i == 3;
    }
    pthread_mutex_lock(&mu);
    used = ok ? 1 : -1;
    pthread_cond_broadcast(&cv);
    while (!may_exit) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL; /* the library's thread-exit cleanup runs after this */
}

int main(int argc, char **argv)
{
    void *h;
    pthread_t th;
    int ok, plugin = argc == 3 && strcmp(argv[1], "--plugin") == 0;
    const char *path = argv[argc - 1];
    if (argc != 2 && !plugin) {
        fprintf(stderr, "usage: %s [--plugin] path/to/lib.so\n", argv[0]);
        return 2;
    }
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlclose: dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    if (plugin ? !lookup(h, "plugin_work", &f_work, sizeof f_work)
               : (!lookup(h, "bw_pool_shared", &f_shared, sizeof f_shared) ||
                  !lookup(h, "bw_pool_rent", &f_rent, sizeof f_rent) ||
                  !lookup(h, "bw_pool_return", &f_return, sizeof f_return)))
        return 1;
    if (pthread_create(&th, NULL, worker, NULL) != 0) {
        fprintf(stderr, "dlclose: pthread_create failed\n");
        return 1;
    }
    pthread_mutex_lock(&mu);
    while (used == 0) pthread_cond_wait(&cv, &mu);
    ok = used == 1;
    pthread_mutex_unlock(&mu);
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: dlclose: %s\n", dlerror());
        ok = 0;
    }
    pthread_mutex_lock(&mu);
    may_exit = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL); /* a crash in the thread's exit ends the process */
    if (!ok) fprintf(stderr, "dlclose: the pool did not work on the thread\n");
    return ok ? 0 : 1;
}
