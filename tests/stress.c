/* SPDX-License-Identifier: MIT */
/* stress.c - many threads over one pool, torn down and recreated.
 *
 *   stress [ROUNDS [THREADS [OPS]]]     rounds of THREADS threads (default
 *                                       50 rounds, max(2 x cores, 32)
 *                                       threads, 20000 ops each)
 *   stress --short-lived N              N threads that only rent, then N
 *                                       that only return those blocks
 *
 * Each thread rents random sizes from 1 B to 4 MiB, fills each block with a
 * pattern made from its address and size and checks it before the block
 * goes back; a quarter of the blocks are returned by another thread through
 * an exchange array; now and then a writer grows over the same pool and its
 * bytes are checked. At the end every class's shared level holds no more
 * than its cap, retention stays within its bound, and once the pool is
 * destroyed the counting allocator balances to zero. Prints ops/s and the
 * closing line "N passed, N failed". Reads the pool's internals (it is a
 * test of them), so it is built from the library sources. */
#define _GNU_SOURCE 1 /* sysconf */
#include "bufwriter.h"
#include "pool/pool_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic long live_blocks, failures;
static _Atomic long long live_bytes, total_ops;

static void *c_alloc(void *ctx, size_t n)
{
    void *b = malloc(n);
    (void)ctx;
    if (b) { live_blocks++; live_bytes += (long long)n; }
    return b;
}
static void *c_realloc(void *ctx, void *b, size_t old, size_t n)
{
    void *nb = realloc(b, n);
    (void)ctx;
    if (nb) live_bytes += (long long)n - (long long)old;
    return nb;
}
static void c_free(void *ctx, void *b, size_t n)
{
    (void)ctx;
    live_blocks--;
    live_bytes -= (long long)n;
    free(b);
}
static const bw_allocator counting = {c_alloc, c_realloc, c_free, NULL};

static void fail(const char *what)
{
    failures++;
    fprintf(stderr, "stress: %s\n", what);
}

/* The pattern depends on the block's address and size, so a block handed
 * to two holders, or returned with another's size, shows. */
static unsigned char pat(const void *b, size_t cap, size_t i)
{
    uintptr_t a = (uintptr_t)b;
    return (unsigned char)((a >> 4) ^ (cap >> 3) ^ (i * 131u));
}
static void fill(unsigned char *b, size_t cap)
{
    size_t i;
    for (i = 0; i < cap; i += 4096) b[i] = pat(b, cap, i);
    for (i = cap > 64 ? cap - 64 : 0; i < cap; i++) b[i] = pat(b, cap, i);
}
static int ok(const unsigned char *b, size_t cap)
{
    size_t i;
    for (i = 0; i < cap; i += 4096) if (b[i] != pat(b, cap, i)) return 0;
    for (i = cap > 64 ? cap - 64 : 0; i < cap; i++) if (b[i] != pat(b, cap, i)) return 0;
    return 1;
}

#define XCHG 256
static struct {
    pthread_mutex_t lock;
    void *b[XCHG];
    size_t cap[XCHG];
    int n;
} xchg = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}, 0};

static bw_pool *pool;
static long ops_per_thread = 20000;

static unsigned rnd(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void give_back(void *b, size_t cap)
{
    if (!ok((const unsigned char *)b, cap)) fail("pattern changed while rented");
    if (bw_pool_return(pool, b, cap) != BW_OK) fail("return refused");
}

static void *worker(void *arg)
{
    unsigned s = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    void *held[8] = {0};
    size_t cap[8];
    long i;
    int k;
    for (i = 0; i < ops_per_thread; i++) {
        int slot = (int)(rnd(&s) % 8);
        if (held[slot] == NULL) {
            /* 1 B .. 4 MiB, log-uniform */
            size_t size = ((size_t)1 << (rnd(&s) % 22)) + rnd(&s) % 4096;
            held[slot] = bw_pool_rent(pool, size, &cap[slot]);
            if (held[slot] == NULL) { fail("rent failed"); continue; }
            fill((unsigned char *)held[slot], cap[slot]);
        } else if (rnd(&s) % 4 == 0) { /* hand it to another thread */
            int put = 0;
            pthread_mutex_lock(&xchg.lock);
            if (xchg.n < XCHG) {
                xchg.b[xchg.n] = held[slot];
                xchg.cap[xchg.n++] = cap[slot];
                put = 1;
            }
            pthread_mutex_unlock(&xchg.lock);
            if (!put) give_back(held[slot], cap[slot]);
            held[slot] = NULL;
        } else {
            give_back(held[slot], cap[slot]);
            held[slot] = NULL;
        }
        if (i % 3 == 0) { /* return someone else's */
            void *b = NULL;
            size_t c = 0;
            pthread_mutex_lock(&xchg.lock);
            if (xchg.n > 0) { b = xchg.b[--xchg.n]; c = xchg.cap[xchg.n]; }
            pthread_mutex_unlock(&xchg.lock);
            if (b) give_back(b, c);
        }
        if (i % 500 == 0) { /* a writer growing over the same pool */
            bw_writer w;
            size_t n = rnd(&s) % (3u << 20), j;
            bw_init(&w, pool, 0);
            for (j = 0; j < n; j += 4) bw_put_u32le(&w, (uint32_t)j);
            for (j = 0; j + 4 <= n; j += 4096)
                if (bw_data(&w)[j] != (unsigned char)j) { fail("writer bytes"); break; }
            if (bw_error(&w) != BW_OK) fail("writer error");
            bw_release(&w);
        }
    }
    for (k = 0; k < 8; k++) if (held[k]) give_back(held[k], cap[k]);
    total_ops += ops_per_thread;
    return NULL;
}

static void *only_rent(void *arg)
{
    void **slot = (void **)arg;
    size_t cap;
    *slot = bw_pool_rent(pool, 1000, &cap);
    if (*slot == NULL) fail("rent failed");
    else fill((unsigned char *)*slot, cap);
    return NULL;
}
static void *only_return(void *arg)
{
    void *b = *(void **)arg;
    if (b) give_back(b, 1024);
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    bw_pool_options o;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int rounds = 50, threads = (int)(2 * ncpu > 32 ? 2 * ncpu : 32), r, i, checks = 0;
    long short_lived = 0;
    double t0;

    if (argc > 2 && strcmp(argv[1], "--short-lived") == 0) short_lived = atol(argv[2]);
    else {
        if (argc > 1) rounds = atoi(argv[1]);
        if (argc > 2) threads = atoi(argv[2]);
        if (argc > 3) ops_per_thread = atol(argv[3]);
    }
    memset(&o, 0, sizeof o);
    o.allocator = &counting;
    if (bw_pool_create(&pool, &o) != BW_OK) return 2;
    t0 = now();

    if (short_lived > 0) {
        void **blocks = (void **)calloc((size_t)short_lived, sizeof *blocks);
        long done;
        for (done = 0; done < short_lived; done += 100) { /* 100 at a time */
            pthread_t t[100];
            long n = short_lived - done < 100 ? short_lived - done : 100, j;
            for (j = 0; j < n; j++) pthread_create(&t[j], NULL, only_rent, &blocks[done + j]);
            for (j = 0; j < n; j++) pthread_join(t[j], NULL);
        }
        for (done = 0; done < short_lived; done += 100) {
            pthread_t t[100];
            long n = short_lived - done < 100 ? short_lived - done : 100, j;
            for (j = 0; j < n; j++) pthread_create(&t[j], NULL, only_return, &blocks[done + j]);
            for (j = 0; j < n; j++) pthread_join(t[j], NULL);
        }
        free(blocks);
        total_ops = 2 * short_lived;
        printf("stress: %ld threads rented, %ld other threads returned\n", short_lived, short_lived);
    } else {
        printf("stress: %d rounds of %d threads, %ld ops each\n", rounds, threads, ops_per_thread);
        for (r = 0; r < rounds; r++) {
            pthread_t *t = (pthread_t *)calloc((size_t)threads, sizeof *t);
            for (i = 0; i < threads; i++)
                pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(r * threads + i + 1));
            for (i = 0; i < threads; i++) pthread_join(t[i], NULL);
            free(t);
        }
    }
    while (xchg.n > 0) { xchg.n--; give_back(xchg.b[xchg.n], xchg.cap[xchg.n]); }
    {
        double dt = now() - t0;
        printf("stress: %lld ops in %.2f s: %.0f ops/s\n", (long long)total_ops, dt,
               (double)total_ops / dt);
    }

    /* Bounds: every shared class within its cap, retention within its
     * budget; nothing outstanding. */
    {
        bw_pool_stats st;
        unsigned ci;
        for (ci = 0; ci < pool->nclasses; ci++)
            if (pool->cls[ci].count > pool->opt.max_blocks_per_class) fail("a class holds more than its cap");
        checks++;
        bw_pool_get_stats(pool, &st);
        if (st.retained_bytes > pool->opt.max_retained_bytes) fail("retained bytes above the bound");
        if (st.outstanding_bytes != 0) fail("bytes still outstanding");
        if (st.rents != st.returns) fail("rents and returns differ");
        checks += 3;
        printf("stress: %llu rents, %llu hits (%.1f%%), %llu backing allocations\n",
               (unsigned long long)st.rents, (unsigned long long)st.hits,
               st.rents ? 100.0 * (double)st.hits / (double)st.rents : 0.0,
               (unsigned long long)st.backing_allocs);
    }
    bw_pool_destroy(pool);
    if (live_blocks != 0 || live_bytes != 0) fail("the counting allocator does not balance");
    checks++;
    printf("stress: allocator balance %ld blocks, %lld bytes\n", (long)live_blocks,
           (long long)live_bytes);
    /* One verdict for the whole run (each failure was printed above). */
    printf("stress: %ld problems in %d end checks and every block check\n", (long)failures, checks);
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
