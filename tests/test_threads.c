/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE 1 /* pthread barriers under -std=c11 */
/* test_threads.c - the pool from many threads: random sizes with a
 * per-thread byte pattern checked before each return, blocks returned by
 * another thread than rented them, caches flushed at thread exit, destroy
 * with live threads' caches, the shared pool created from many threads. */
#include "harness.h"

#include <pthread.h>

#define NTHREADS 8
/* Under a sanitizer or valgrind a round costs 3-30 times as much (TSan:
 * 85 s for the three rent_return cases, ASan 24 s): a quarter of the rounds
 * still crosses every path thousands of times there, and the other
 * flavours run all. */
#if defined(BW_VALGRIND)
/* valgrind runs one thread at a time: 750 rounds took 3.7-4.3 s of CPU
 * and 66-85 s on a loaded machine per case; 250 rounds still return blocks
 * across threads hundreds of times. */
#  define ROUNDS 250
#elif defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#  define ROUNDS 750
#else
#  define ROUNDS 3000
#endif

typedef struct handoff {
    pthread_mutex_t lock;
    void *block[64];
    size_t cap[64];
    unsigned seed[64];
    int count;
} handoff;

typedef struct worker {
    bw_pool *pool;
    handoff *box;
    unsigned id;
    long errors;
} worker;

static unsigned thread_rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void fill_block(unsigned char *b, size_t cap, unsigned seed)
{
    size_t i;
    for (i = 0; i < cap; i += 61) b[i] = pat(i, seed);
    b[cap - 1] = pat(cap - 1, seed);
}

static long check_block(const unsigned char *b, size_t cap, unsigned seed)
{
    size_t i;
    long bad = 0;
    for (i = 0; i < cap; i += 61) bad += b[i] != pat(i, seed);
    bad += b[cap - 1] != pat(cap - 1, seed);
    return bad;
}

static void *rent_return_worker(void *arg)
{
    worker *wk = (worker *)arg;
    unsigned s = wk->id * 7919u + 1;
    void *held[16] = {0};
    size_t caps[16];
    unsigned seeds[16];
    int r, i;
    for (r = 0; r < ROUNDS; r++) {
        int slot = (int)(thread_rnd(&s) % 16);
        if (held[slot] != NULL) {
            wk->errors += check_block((unsigned char *)held[slot], caps[slot], seeds[slot]);
            /* A quarter of the blocks go to another thread to return. */
            pthread_mutex_lock(&wk->box->lock);
            if (thread_rnd(&s) % 4 == 0 && wk->box->count < 64) {
                int k = wk->box->count++;
                wk->box->block[k] = held[slot];
                wk->box->cap[k] = caps[slot];
                wk->box->seed[k] = seeds[slot];
                held[slot] = NULL;
            }
            pthread_mutex_unlock(&wk->box->lock);
            if (held[slot] != NULL) {
                if (bw_pool_return(wk->pool, held[slot], caps[slot]) != BW_OK) wk->errors++;
                held[slot] = NULL;
            }
        } else {
            size_t size = (size_t)1 << (thread_rnd(&s) % 22); /* 1 B .. 2 MiB */
            size += thread_rnd(&s) % size;
            held[slot] = bw_pool_rent(wk->pool, size, &caps[slot]);
            if (held[slot] == NULL || caps[slot] < size) { wk->errors++; continue; }
            seeds[slot] = thread_rnd(&s);
            fill_block((unsigned char *)held[slot], caps[slot], seeds[slot]);
        }
        /* Return someone else's block now and then. */
        if (r % 7 == 0) {
            void *b = NULL;
            size_t cap = 0;
            unsigned seed = 0;
            pthread_mutex_lock(&wk->box->lock);
            if (wk->box->count > 0) {
                int k = --wk->box->count;
                b = wk->box->block[k];
                cap = wk->box->cap[k];
                seed = wk->box->seed[k];
            }
            pthread_mutex_unlock(&wk->box->lock);
            if (b != NULL) {
                wk->errors += check_block((unsigned char *)b, cap, seed);
                if (bw_pool_return(wk->pool, b, cap) != BW_OK) wk->errors++;
            }
        }
    }
    for (i = 0; i < 16; i++)
        if (held[i] != NULL) {
            wk->errors += check_block((unsigned char *)held[i], caps[i], seeds[i]);
            bw_pool_return(wk->pool, held[i], caps[i]);
        }
    return NULL;
}

static void run_workers(bw_pool *p)
{
    pthread_t t[NTHREADS];
    worker wk[NTHREADS];
    handoff box;
    int i;
    memset(&box, 0, sizeof box);
    pthread_mutex_init(&box.lock, NULL);
    for (i = 0; i < NTHREADS; i++) {
        wk[i].pool = p;
        wk[i].box = &box;
        wk[i].id = (unsigned)i;
        wk[i].errors = 0;
        cr_assert_eq(pthread_create(&t[i], NULL, rent_return_worker, &wk[i]), 0);
    }
    for (i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    for (i = 0; i < NTHREADS; i++) cr_expect_eq(wk[i].errors, 0, "thread %d: %ld errors", i, wk[i].errors);
    /* Blocks still in the exchange box go back from this thread. */
    for (i = 0; i < box.count; i++) {
        cr_expect_eq(check_block((unsigned char *)box.block[i], box.cap[i], box.seed[i]), 0);
        cr_expect_eq(bw_pool_return(p, box.block[i], box.cap[i]), BW_OK);
    }
    pthread_mutex_destroy(&box.lock);
}

static void threads_case(unsigned flags)
{
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats st;
    p = fresh_pool(&ta, 0, flags);
    run_workers(p);
    /* Every worker has exited: its cache went back to the pool. */
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.outstanding_bytes, 0);
    cr_expect_eq(st.rents, st.returns);
    cr_expect_eq((long)(st.backing_allocs - st.backing_frees), atomic_load(&ta.live_blocks));
    /* Checked mode puts a 16-byte canary after every backing block. */
    cr_expect_eq((long long)st.retained_bytes +
                     ((flags & BW_POOL_CHECKED) ? 16 * atomic_load(&ta.live_blocks) : 0),
                 atomic_load(&ta.live_bytes), "every live backing byte is retained, none lost");
    cr_expect_leq(st.retained_bytes, (size_t)64 << 20);
    bw_pool_trim(p);
    cr_expect_eq(atomic_load(&ta.live_blocks), 0, "trim after the threads exited frees all");
    ta_finish(&ta, p);
}

Test(threads, rent_return_cross_thread, .timeout = 120) { threads_case(0); }
Test(threads, rent_return_no_thread_cache, .timeout = 120) { threads_case(BW_POOL_NO_THREAD_CACHE); }
Test(threads, rent_return_checked, .timeout = 120) { threads_case(BW_POOL_CHECKED); }

/* Destroy while the threads that used the pool are still alive, their
 * caches full; then they exit and must not touch the destroyed pool. */
typedef struct parked {
    bw_pool *pool;
    pthread_barrier_t *used, *destroyed;
} parked;

static void *use_then_wait(void *arg)
{
    parked *pk = (parked *)arg;
    size_t cap;
    int i;
    for (i = 0; i < 20; i++) {
        void *b = bw_pool_rent(pk->pool, (size_t)16 << (i % 10), &cap);
        bw_pool_return(pk->pool, b, cap);
    }
    pthread_barrier_wait(pk->used);
    pthread_barrier_wait(pk->destroyed);
    return NULL; /* thread exit after the pool is gone */
}

Test(threads, destroy_with_live_thread_caches, .timeout = 60)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    pthread_t t[4];
    pthread_barrier_t used, destroyed;
    parked pk;
    int i;
    pthread_barrier_init(&used, NULL, 5);
    pthread_barrier_init(&destroyed, NULL, 5);
    pk.pool = p;
    pk.used = &used;
    pk.destroyed = &destroyed;
    for (i = 0; i < 4; i++) pthread_create(&t[i], NULL, use_then_wait, &pk);
    pthread_barrier_wait(&used);
    cr_expect_gt(atomic_load(&ta.live_blocks), 0, "blocks sit in the threads' caches");
    ta_finish(&ta, p); /* destroy frees them all */
    /* A new pool, maybe at the same address, must not be confused with it. */
    p = fresh_pool(&ta, 0, 0);
    pthread_barrier_wait(&destroyed);
    for (i = 0; i < 4; i++) pthread_join(t[i], NULL);
    ta_finish(&ta, p);
    pthread_barrier_destroy(&used);
    pthread_barrier_destroy(&destroyed);
}

/* Many short-lived threads that only rent, or only return. */
typedef struct one_shot {
    bw_pool *pool;
    void *block;
    size_t cap;
    int rent;
} one_shot;

static void *one_op(void *arg)
{
    one_shot *o = (one_shot *)arg;
    if (o->rent) o->block = bw_pool_rent(o->pool, o->cap, &o->cap);
    else bw_pool_return(o->pool, o->block, o->cap);
    return NULL;
}

/* 50 threads a round, each a rent or a return. Under valgrind, which runs
 * threads one at a time, 20 rounds took up to the whole timeout on a busy
 * machine, and 5 rounds still 6.8 s of CPU and 142 s on a loaded one: 2
 * rounds there check the same (the second rents what the first's threads
 * left retained, and returns across threads again). */
#ifdef BW_VALGRIND
#  define THREAD_ROUNDS 2
#else
#  define THREAD_ROUNDS 20
#endif
Test(threads, short_lived_threads_lose_nothing, .timeout = 120)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_pool_stats st;
    one_shot o[50];
    pthread_t t[50];
    int round, i;
    for (round = 0; round < THREAD_ROUNDS; round++) {
        for (i = 0; i < 50; i++) {
            o[i].pool = p;
            o[i].cap = (size_t)(i * 1000 + round);
            o[i].rent = 1;
            pthread_create(&t[i], NULL, one_op, &o[i]);
        }
        for (i = 0; i < 50; i++) pthread_join(t[i], NULL);
        for (i = 0; i < 50; i++) {
            cr_assert_not_null(o[i].block);
            o[i].rent = 0;
            pthread_create(&t[i], NULL, one_op, &o[i]);
        }
        for (i = 0; i < 50; i++) pthread_join(t[i], NULL);
    }
    bw_pool_get_stats(p, &st);
    cr_expect_eq(st.outstanding_bytes, 0);
    cr_expect_eq(st.rents, 50 * THREAD_ROUNDS);
    cr_expect_eq(st.returns, 50 * THREAD_ROUNDS);
    cr_expect_eq((long long)st.retained_bytes, atomic_load(&ta.live_bytes));
    ta_finish(&ta, p);
}

static void *get_shared(void *arg)
{
    *(bw_pool **)arg = bw_pool_shared();
    return NULL;
}

Test(threads, shared_pool_created_once)
{
    pthread_t t[8];
    bw_pool *got[8];
    int i;
    for (i = 0; i < 8; i++) pthread_create(&t[i], NULL, get_shared, &got[i]);
    for (i = 0; i < 8; i++) pthread_join(t[i], NULL);
    for (i = 1; i < 8; i++) cr_expect_eq(got[i], got[0]);
    cr_expect_not_null(got[0]);
}

/* Writers on several threads over one pool. */
static void *writer_thread(void *arg)
{
    bw_pool *p = (bw_pool *)arg;
    bw_writer w;
    long bad = 0;
    int job, i;
    bw_init(&w, p, 0);
    for (job = 0; job < 20; job++) {
        for (i = 0; i < 20000; i++) bw_put_u32le(&w, (uint32_t)(i ^ job));
        for (i = 0; i < 20000; i++) {
            const unsigned char *q = bw_data(&w) + 4 * i;
            uint32_t v = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
            bad += v != (uint32_t)(i ^ job);
        }
        if (job % 2) bw_clear(&w);
        else bw_release(&w);
    }
    bw_release(&w);
    return (void *)(intptr_t)bad;
}

Test(threads, writers_share_a_pool, .timeout = 120)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    pthread_t t[4];
    int i;
    for (i = 0; i < 4; i++) pthread_create(&t[i], NULL, writer_thread, p);
    for (i = 0; i < 4; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        cr_expect_null(bad, "corrupt bytes in thread %d", i);
    }
    ta_finish(&ta, p);
}

/* Pieces built on one thread end on another: a segmented writer's blocks
 * and a reference are relinked by bw_move into a writer of another thread
 * and given back there, and a detached block is returned there. Every
 * block goes back to the pool it came from, whichever thread's cache
 * takes it (TSan checks the hand-over; checked mode the capacities). */
typedef struct handover {
    bw_pool *pool;
    bw_writer chain;
    void *detached;
    size_t detached_len, detached_cap;
    donec done;
} handover;

static const char ref_bytes[] = "a static reference";

static void *build_pieces(void *arg)
{
    handover *h = (handover *)arg;
    bw_writer c;
    uint32_t i;
    bw_init_chain(&h->chain, h->pool);
    for (i = 0; i < 30000; i++) bw_put_u32le(&h->chain, i);
    bw_append_ref(&h->chain, ref_bytes, sizeof ref_bytes, on_done, &h->done);
    bw_puts(&h->chain, "end");
    bw_init(&c, h->pool, 0);
    for (i = 0; i < 5000; i++) bw_put_u32be(&c, i);
    h->detached = bw_detach(&c, &h->detached_len, &h->detached_cap);
    return NULL;
}

Test(threads, pieces_built_on_one_thread_end_on_another, .timeout = 60)
{
    test_alloc ta;
    handover h;
    bw_writer dst;
    pthread_t t;
    const unsigned char *d;
    uint32_t i;
    size_t n = 4 * 30000 + sizeof ref_bytes + 3;
    ta_init(&ta, 1);
    memset(&h, 0, sizeof h);
    h.pool = ta_pool(&ta, 0, BW_POOL_CHECKED);
    pthread_create(&t, NULL, build_pieces, &h);
    pthread_join(t, NULL);
    bw_init_chain(&dst, h.pool);
    bw_puts(&dst, "head");
    cr_assert_eq(bw_move(&dst, &h.chain), BW_OK);
    cr_assert_eq(bw_len(&dst), 4 + n);
    cr_assert_eq(bw_len(&h.chain), 0);
    d = bw_pullup(&dst);
    cr_assert_not_null(d);
    cr_expect_eq(memcmp(d, "head", 4), 0);
    for (i = 0; i < 30000; i++)
        cr_assert_eq(d[4 + 4 * i] | d[4 + 4 * i + 1] << 8 | d[4 + 4 * i + 2] << 16 |
                         (uint32_t)d[4 + 4 * i + 3] << 24, i);
    cr_expect_eq(memcmp(d + 4 + 4 * 30000, ref_bytes, sizeof ref_bytes), 0);
    cr_expect_eq(memcmp(d + 4 + n - 3, "end", 3), 0);
    cr_expect_eq(h.done.calls, 1, "the reference's done ran once, when pullup copied it");
    cr_assert_eq(h.detached_len, 4 * 5000);
    cr_expect_eq(((unsigned char *)h.detached)[4 * 4999 + 3], (unsigned char)4999);
    cr_expect_eq(bw_pool_return(h.pool, h.detached, h.detached_cap), BW_OK);
    bw_release(&dst);
    bw_release(&h.chain);
    cr_expect_eq(outstanding(h.pool), 0);
    ta_finish(&ta, h.pool);
}
