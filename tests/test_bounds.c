/* SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE 1 /* nanosleep */
/* test_bounds.c - how much fresh memory a contiguous writer may take,
 * whatever other jobs taught the pool: past the jump floor never a block
 * of more than 16 x the bytes it needs from the backing allocator (bw_init's
 * growth rule; a block of the learned size the pool holds idle costs no
 * fresh memory and is taken whatever its size), under every pool flag and
 * with many threads at once; a segmented
 * writer used as a queue, within 16 x the most it held; the learned
 * jump ages out after decay_ms; BW_POOL_LEARN_SIZE's statistic (the second
 * largest of the last 16 lengths) at every sample count. */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>

/* A job of `len` bytes on p that writes nothing: only its length teaches
 * the pool (a 64 MiB block is reserved, and touched only where the pool
 * zeroes it). */
static void length_job(bw_pool *p, size_t len)
{
    bw_writer w;
    size_t got;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_not_null(bw_get_span(&w, len, &got));
    cr_assert_eq(bw_advance(&w, len), BW_OK);
    bw_release(&w);
}

/* The bytes ta's allocator has handed out and not had back. */
static size_t live(test_alloc *ta) { return (size_t)ta->live_bytes; }

/* A job of `total` bytes in 8 KiB writes (the last one shorter) on p, whose
 * backing allocator is ta, checking after each write that a writer past
 * the floor holding more than 16 x its bytes got that block with no fresh
 * memory (an idle block of the pool's). Returns the fresh memory the job
 * took at its peak (checked mode's canaries aside); *top, when not NULL,
 * gets the largest capacity it had. */
static size_t bounded_job(bw_pool *p, test_alloc *ta, size_t total, const char *what,
                          size_t *top)
{
    bw_writer w;
    size_t floor = 16 * KiB, start = live(ta), fresh = 0, most = 0;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    while (bw_len(&w) < total) {
        size_t n = total - bw_len(&w) < sizeof chunk ? total - bw_len(&w) : sizeof chunk;
        long calls = ta->calls;
        cr_assert_eq(bw_write(&w, chunk, n), BW_OK);
        if (bw_capacity(&w) > most) most = bw_capacity(&w);
        if (live(ta) > start && live(ta) - start > fresh) fresh = live(ta) - start;
        if (bw_capacity(&w) > floor && bw_capacity(&w) > 16 * bw_len(&w))
            cr_expect_eq(ta->calls, calls, "%s: %zu bytes in a fresh %zu block", what,
                         bw_len(&w), bw_capacity(&w));
    }
    bw_release(&w);
    if (top != NULL) *top = most;
    return fresh;
}

/* Checked mode's canary after each backing block, at most one per block
 * of a 20 KiB job's climb. */
#define CANARIES 256

static const unsigned every_flag[] = {
    0, BW_POOL_ZERO_ON_RETURN, BW_POOL_NO_THREAD_CACHE, BW_POOL_CHECKED,
    BW_POOL_NO_LARGE_RETENTION, BW_POOL_BYPASS, BW_POOL_NO_LEARNED_GROWTH,
    BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_THREAD_CACHE,
};

Test(bounds, a_20_kib_job_after_64_mib_jobs_takes_at_most_320_kib_of_fresh_memory)
{
    size_t f, k, top;
    fill_chunk(11);
    for (f = 0; f < sizeof every_flag / sizeof every_flag[0]; f++) {
        test_alloc ta;
        bw_pool *p = fresh_flags_pool(&ta, every_flag[f], BW_DECAY_NEVER);
        char what[64];
        snprintf(what, sizeof what, "flags %#x", every_flag[f]);
        /* Alone: after two 64 MiB jobs, fifteen 20 KiB ones. */
        length_job(p, 64 * MiB);
        length_job(p, 64 * MiB);
        for (k = 0; k < 15; k++) {
            cr_expect_leq(bounded_job(p, &ta, 20 * KiB, what, &top), 320 * KiB + CANARIES,
                          "%s, job %zu", what, k);
            cr_expect(top <= 320 * KiB || top == 64 * MiB, "%s: a %zu block", what, top);
        }
        /* Interleaved with more 64 MiB jobs. */
        for (k = 0; k < 8; k++) {
            length_job(p, 64 * MiB);
            cr_expect_leq(bounded_job(p, &ta, 20 * KiB, what, NULL), 320 * KiB + CANARIES,
                          "%s, interleaved %zu", what, k);
        }
        /* And every size from the floor to 4 MiB keeps the bound. */
        for (k = 17 * KiB; k <= 4 * MiB; k = k * 3 / 2) bounded_job(p, &ta, k, what, NULL);
        ta_finish(&ta, p);
    }
}

/* Sixteen threads each hold a 20 KiB job at once on a zeroing pool that
 * has seen 64 MiB jobs: the fresh memory they take is bounded (0.3 handed
 * each a 64 MiB block, zeroed: 1 GiB). Fresh memory is what the pool holds
 * more, out or kept: an idle block taken moves from kept to out. */
#define THREADS 16
static bw_pool *g_pool;
static pthread_barrier_t g_all_hold;

static void *hold_20_kib(void *arg)
{
    bw_writer w;
    size_t *cap = (size_t *)arg;
    cr_assert_eq(bw_init(&w, g_pool, 0), BW_OK);
    cr_assert_eq(bw_write(&w, chunk, 8 * KiB), BW_OK);
    cr_assert_eq(bw_write(&w, chunk, 8 * KiB), BW_OK);
    cr_assert_eq(bw_write(&w, chunk, 4 * KiB), BW_OK);
    *cap = bw_capacity(&w);
    pthread_barrier_wait(&g_all_hold); /* all hold theirs */
    pthread_barrier_wait(&g_all_hold); /* the main thread has counted */
    bw_release(&w);
    return NULL;
}

Test(bounds, sixteen_threads_of_20_kib_on_a_zeroing_pool_hold_at_most_16_mib)
{
    pthread_t t[THREADS];
    size_t cap[THREADS], i;
    uint64_t before, held;
    bw_pool_options o;
    memset(&o, 0, sizeof o);
    o.flags = BW_POOL_ZERO_ON_RETURN;
    cr_assert_eq(bw_pool_create(&g_pool, &o), BW_OK);
    fill_chunk(12);
    length_job(g_pool, 64 * MiB);
    length_job(g_pool, 64 * MiB);
    cr_assert_eq(stats_of(g_pool).learned_large_size, 64 * MiB);
    before = outstanding(g_pool) + stats_of(g_pool).retained_bytes;
    cr_assert_eq(pthread_barrier_init(&g_all_hold, NULL, THREADS + 1), 0);
    for (i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, hold_20_kib, &cap[i]), 0);
    pthread_barrier_wait(&g_all_hold);
    held = outstanding(g_pool) + stats_of(g_pool).retained_bytes - before;
    cr_expect_leq(held, 16 * MiB, "%llu bytes fresh", (unsigned long long)held);
    for (i = 0; i < THREADS; i++)
        cr_expect(cap[i] <= 320 * KiB || cap[i] == 64 * MiB, "thread %zu: %zu", i, cap[i]);
    pthread_barrier_wait(&g_all_hold);
    for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_all_hold);
    bw_pool_destroy(g_pool);
}

/* The same burst under every pool flag, all threads moving at once: the
 * 64 MiB block the jobs before left idle goes to one of them (the pool
 * hands it out under its lock), the others climb within the bound. 0.4
 * gave none of them the idle block; a take that was not atomic would give
 * it to two. */
static pthread_barrier_t g_start;

static void *race_20_kib(void *arg)
{
    bw_writer w;
    size_t *cap = (size_t *)arg;
    cr_assert_eq(bw_init(&w, g_pool, 0), BW_OK);
    pthread_barrier_wait(&g_start);
    cr_assert_eq(bw_write(&w, chunk, 8 * KiB), BW_OK);
    cr_assert_eq(bw_write(&w, chunk, 8 * KiB), BW_OK);
    cr_assert_eq(bw_write(&w, chunk, 4 * KiB), BW_OK);
    *cap = bw_capacity(&w);
    pthread_barrier_wait(&g_all_hold);
    pthread_barrier_wait(&g_all_hold);
    bw_release(&w);
    return NULL;
}

Test(bounds, sixteen_threads_of_20_kib_take_one_idle_block_and_320_kib_fresh_each, .timeout = 60)
{
    size_t f, i;
    fill_chunk(12);
    for (f = 0; f < sizeof every_flag / sizeof every_flag[0]; f++) {
        unsigned flags = every_flag[f];
        int idle = !(flags & (BW_POOL_NO_LARGE_RETENTION | BW_POOL_BYPASS |
                               BW_POOL_NO_LEARNED_GROWTH));
        test_alloc ta;
        pthread_t t[THREADS];
        size_t cap[THREADS], taken = 0, before, fresh;
        uint64_t hits;
        g_pool = fresh_flags_pool(&ta, flags, BW_DECAY_NEVER);
        length_job(g_pool, 64 * MiB);
        length_job(g_pool, 64 * MiB);
        if (!(flags & BW_POOL_NO_LEARNED_GROWTH))
            cr_assert_eq(stats_of(g_pool).learned_large_size, 64 * MiB);
        before = live(&ta);
        hits = stats_of(g_pool).large_hits;
        cr_assert_eq(pthread_barrier_init(&g_start, NULL, THREADS), 0);
        cr_assert_eq(pthread_barrier_init(&g_all_hold, NULL, THREADS + 1), 0);
        for (i = 0; i < THREADS; i++)
            cr_assert_eq(pthread_create(&t[i], NULL, race_20_kib, &cap[i]), 0);
        pthread_barrier_wait(&g_all_hold);
        fresh = live(&ta) - before;
        /* The takes of a kept large block (a zeroing pool's writer shows
         * only a window of it as its capacity). */
        taken = (size_t)(stats_of(g_pool).large_hits - hits);
        cr_expect_eq(taken, idle ? 1 : 0, "flags %#x: %zu threads took the idle block", flags,
                     taken);
        for (i = 0; i < THREADS; i++) {
            if (cap[i] == 64 * MiB) taken--;
            else cr_expect_leq(cap[i], 320 * KiB, "flags %#x, thread %zu: %zu", flags, i, cap[i]);
        }
        cr_expect_leq(taken, 1, "flags %#x: more 64 MiB blocks than takes", flags);
        cr_expect_leq(fresh, THREADS * (320 * KiB + CANARIES), "flags %#x: %zu bytes fresh",
                      flags, fresh);
        pthread_barrier_wait(&g_all_hold);
        for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&g_all_hold);
        pthread_barrier_destroy(&g_start);
        ta_finish(&ta, g_pool);
    }
}

/* A segmented writer used as a queue: 1,000 bytes written, all but 100
 * consumed, again and again, so it never holds more than 1,100 bytes. 0.4
 * made every new block twice the last whatever the writer held: after
 * 100,000 rounds it held a 32 MiB block and the pool 64 MiB. A new block
 * is now sized from the bytes held, so the blocks the writer holds (and
 * its piece records) stay within 16 x the most it held; a writer that
 * grows still doubles, so 10 MiB take few blocks. */
Test(bounds, a_segmented_queue_holds_blocks_within_16_x_its_bytes)
{
    test_alloc ta;
    bw_pool_options o = fresh_opts(&ta);
    bw_pool *p = mkpool(&o);
    bw_writer w;
    size_t most = 0, top = 0, k;
    uint64_t out, sum = 0;
    unsigned char got[1100];
    fill_chunk(13);
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    for (k = 0; k < 20000; k++) {
        cr_assert_eq(bw_write(&w, chunk + k % 1000, 1000), BW_OK);
        if (bw_len(&w) > most) most = bw_len(&w);
        out = outstanding(p);
        if (out > top) top = (size_t)out;
        cr_assert_eq(bw_copy_out(&w, bw_len(&w) - 1000, got, 1000), BW_OK);
        cr_assert(memcmp(got, chunk + k % 1000, 1000) == 0, "round %zu", k);
        sum += bw_len(&w) - 100;
        cr_assert_eq(bw_consume(&w, bw_len(&w) - 100), BW_OK);
    }
    cr_expect_eq(most, 1100);
    cr_expect_leq(top, 16 * most, "%zu bytes of pool memory for at most %zu held", top, most);
    cr_expect_eq(bw_tell(&w), sum + 100);
    bw_release(&w);
    /* Growing: 10 MiB in 8 KiB writes, every block full but the last. */
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    for (k = 0; k < 1280; k++) cr_assert_eq(bw_write(&w, chunk, sizeof chunk), BW_OK);
    cr_expect_leq(bw_iovec(&w, NULL, 0), 16, "%zu blocks for 10 MiB", bw_iovec(&w, NULL, 0));
    cr_expect_leq(outstanding(p), 20 * MiB, "%llu bytes for 10 MiB",
                  (unsigned long long)outstanding(p));
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(bounds, the_learned_jump_ages_out_after_decay_ms)
{
    test_alloc ta;
    bw_pool *p = fresh_flags_pool(&ta, 0, 300);
    fill_chunk(13);
    length_job(p, MiB);
    length_job(p, MiB);
    cr_expect_eq(stats_of(p).learned_large_size, MiB);
    sleep_ms(350);
    /* Nobody needed it for decay_ms: forgotten, and a job climbs as in a
     * fresh pool (16 KiB -> 256 KiB). */
    cr_expect_eq(stats_of(p).learned_large_size, 0);
    {
        size_t top, fresh = bounded_job(p, &ta, 100 * KiB, "aged", &top);
        /* A fresh 256 KiB block, of which 100 KiB reach the 128 KiB
         * window; the learned 1 MiB would have meant a 1 MiB block. */
        cr_expect_eq(top, 128 * KiB);
        cr_expect_leq(fresh, 256 * KiB + 16 * KiB + CANARIES, "%zu fresh bytes", fresh);
    }
    /* New jobs teach it again. */
    length_job(p, MiB);
    length_job(p, MiB);
    cr_expect_eq(stats_of(p).learned_large_size, MiB);
    bw_pool_destroy(p); /* decay may have freed blocks: ta's count is the pool's */
}

/* The same ageing without bw_pool_get_stats, which reads the clock itself:
 * a move reads none (bufwriter.h, jump_floor), so the jump is forgotten at
 * the pool's next clock read, here a slow call (a 4 MiB rent, which no
 * cache serves) or the end of the first job after the pause, which may
 * still go towards it. Either way the job after climbs as in a fresh
 * pool. */
Test(bounds, a_forgotten_jump_goes_at_the_next_slow_call_or_job_end)
{
    int way;
    fill_chunk(14);
    for (way = 0; way < 2; way++) {
        test_alloc ta;
        bw_pool *p = fresh_flags_pool(&ta, 0, 300);
        size_t top, cap, fresh;
        length_job(p, MiB);
        length_job(p, MiB);
        sleep_ms(350);
        if (way == 0) {
            void *b = rent_ok(p, 4 * MiB, &cap);
            cr_expect_eq(bw_pool_return(p, b, cap), BW_OK);
        } else {
            (void)bounded_job(p, &ta, 100 * KiB, "the first job after the pause", NULL);
        }
        fresh = bounded_job(p, &ta, 100 * KiB, "the next job", &top);
        /* A fresh 256 KiB block, of which 100 KiB reach the 128 KiB
         * window; the learned 1 MiB would have meant a 1 MiB block. */
        cr_expect_eq(top, 128 * KiB, "way %d: the next job's window", way);
        cr_expect_leq(fresh, 8 * KiB + 16 * KiB + 256 * KiB + CANARIES, "way %d: %zu fresh", way,
                      fresh);
        bw_pool_destroy(p); /* decay may have freed blocks: ta's count is the pool's */
    }
}

/* BW_POOL_LEARN_SIZE at every sample count: the second largest of the
 * last 16 lengths; nothing with one. The header's example: after one
 * 1 MiB job and eight of 100 bytes, writers start at the first block, not
 * at 1 MiB. */
Test(bounds, learned_size_is_the_second_largest_at_every_sample_count)
{
    size_t k, i, order;
    for (order = 0; order < 2; order++) {
        for (k = 1; k <= 16; k++) {
            test_alloc ta;
            bw_pool *p = fresh_flags_pool(&ta, BW_POOL_LEARN_SIZE, BW_DECAY_NEVER);
            bw_writer w;
            size_t want;
            /* One 1 MiB length and k - 1 of 100 + i bytes, the big one
             * first or last. */
            for (i = 0; i < k; i++) {
                if (order == 0 ? i == 0 : i == k - 1) {
                    length_job(p, MiB);
                    continue;
                }
                cr_assert_eq(bw_init(&w, p, 0), BW_OK);
                cr_assert_eq(bw_write(&w, chunk, 100 + i), BW_OK);
                bw_release(&w);
            }
            /* Second largest: the largest of the small ones (100 + k - 2
             * bytes, or 100 + k - 1 with the big one last). */
            want = k == 1 ? 0 : bw_pool_class_size(p, 100 + k - (order == 0 ? 1 : 2));
            cr_expect_eq(stats_of(p).learned_size, want, "%zu samples, order %zu", k, order);
            cr_expect_eq(first_block(p), 512, "%zu samples: the first block", k);
            ta_finish(&ta, p);
        }
    }
    /* Two large ones are the stream's size: writers start there. */
    {
        test_alloc ta;
        bw_pool *p = fresh_flags_pool(&ta, BW_POOL_LEARN_SIZE, BW_DECAY_NEVER);
        length_job(p, 300 * KiB);
        length_job(p, 200 * KiB);
        cr_expect_eq(stats_of(p).learned_size, 256 * KiB);
        cr_expect_eq(first_block(p), 256 * KiB);
        ta_finish(&ta, p);
    }
}

#if defined(__linux__)
#  include <sys/mman.h>



/* Whether madvise(MADV_POPULATE_WRITE) faults pages in here (Linux >= 5.14;
 * not under an emulator that takes advice as a no-op). */
static int kernel_populates(void)
{
    unsigned char *m = (unsigned char *)map_alloc(NULL, 16384);
    size_t in;
    cr_assert_not_null(m);
    (void)madvise(m, 16384, 23);
    in = resident_pages(m, 16384);
    map_free(NULL, m, 16384);
    return in == 4;
}

/* A block fresh from the backing allocator has the bytes the writer is
 * about to fill faulted in at once (one call, not a fault per page): on a
 * move, the growth rule's size (room for the held bytes and the write, at
 * least twice the old block: more than half of it written), and never the
 * rest of a block the climb made 16x larger. The climb here (no huge-page
 * reservation with a custom allocator): 8 KiB, 16 KiB, then 256 KiB for
 * 24 KiB, of which 32 KiB (the rule's size) is in memory at once where the
 * kernel populates; 24 KiB of written pages where it does not. */
Test(bounds, a_fresh_block_is_populated_up_to_the_growth_rule_only)
{
    bw_allocator a = {map_alloc, NULL, map_free, NULL};
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    unsigned char buf[8192];
    int populates = kernel_populates();
    memset(&o, 0, sizeof o);
    o.allocator = &a;
    p = mkpool(&o);
    memset(buf, 0x5a, sizeof buf);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_capacity(&w), 16384);
    cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
    /* A 256 KiB block, of which the writer has the growth rule's 32 KiB
     * (the next test widens it). */
    cr_assert_eq(bw_capacity(&w), 32768);
    cr_assert_eq((uintptr_t)bw_data(&w) % 4096, 0);
    cr_expect_eq(resident_pages(bw_data(&w), 24576), 6, "the written pages");
    cr_expect_eq(resident_pages(bw_data(&w) + 24576, 8192), populates ? 2 : 0,
                 "the rest of the growth rule's 32 KiB");
    cr_expect_eq(resident_pages(bw_data(&w) + 32768, 229376), 0,
                 "the climb's rest: not populated");
    bw_release(&w);
    bw_pool_destroy(p);
}

/* Write 8 KiB writes until w holds `to` bytes, then check its window
 * (cap) and which pages of its block (256 KiB, page-aligned) are in
 * memory: all below the window where the kernel populates, else the
 * written ones, and none past the window. */
static void fill_and_check(bw_writer *w, const unsigned char *buf, size_t to, size_t cap,
                           int populates)
{
    while (bw_len(w) < to) cr_assert_eq(bw_write(w, buf, 8192), BW_OK);
    cr_expect_eq(bw_capacity(w), cap, "%zu bytes: window %zu, expected %zu", to,
                 bw_capacity(w), cap);
    cr_expect_eq(resident_pages(bw_data(w), cap), (populates ? cap : to) / 4096,
                 "%zu bytes: the window", to);
    cr_expect_eq(resident_pages(bw_data(w) + cap, 262144 - cap), 0,
                 "%zu bytes: past the window", to);
}

/* The rest of that block comes in windows of the growth rule's size as
 * the writer fills it, each faulted in with one call (a page written one
 * at a time costs a fault each: 10 us on the VM of bench/BENCHMARKS.md,
 * against about 1 us populated), so still never a page the writer has
 * not come within the growth rule of. The block goes back whole. */
Test(bounds, a_fresh_block_is_faulted_in_window_by_window_as_it_fills)
{
    bw_allocator a = {map_alloc, NULL, map_free, NULL};
    bw_pool_options o;
    bw_pool_stats st;
    bw_pool *p;
    bw_writer w;
    unsigned char buf[8192];
    void *block;
    size_t len, cap, i, bad = 0;
    int populates = kernel_populates();
    memset(&o, 0, sizeof o);
    o.allocator = &a;
    p = mkpool(&o);
    memset(buf, 0x3c, sizeof buf);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    fill_and_check(&w, buf, 24576, 32768, populates);
    cr_assert_eq((uintptr_t)bw_data(&w) % 4096, 0);
    fill_and_check(&w, buf, 40960, 65536, populates);
    fill_and_check(&w, buf, 73728, 131072, populates);
    fill_and_check(&w, buf, 139264, 262144, populates);
    for (i = 0; i < bw_len(&w); i++) bad += bw_data(&w)[i] != 0x3c;
    cr_expect_eq(bad, 0);
    block = bw_detach(&w, &len, &cap);
    cr_assert_not_null(block);
    cr_expect_eq(len, 139264);
    cr_expect_eq(cap, 262144, "handed out whole");
    cr_expect_eq(bw_pool_return(p, block, cap), BW_OK);
    bw_pool_destroy(p);
    /* Released inside a window: the block goes back whole, and the next
     * job's climb takes it idle (no fresh memory, so no window). */
    p = mkpool(&o);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    fill_and_check(&w, buf, 40960, 65536, populates);
    bw_release(&w);
    st = stats_of(p);
    cr_expect_eq(st.outstanding_bytes, 0);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    while (bw_len(&w) < 24576) cr_assert_eq(bw_write(&w, buf, 8192), BW_OK);
    cr_expect_eq(bw_capacity(&w), 262144, "an idle block: all of it");
    cr_expect_eq(stats_of(p).backing_allocs, st.backing_allocs, "no fresh memory");
    bw_release(&w);
    bw_pool_destroy(p);
}

/* On the libc allocator (where large blocks are reservations, cut to
 * their window on the way back) a window being faulted in is no
 * reservation: released inside it, the block goes back whole, and the
 * next job takes it idle. */
Test(bounds, a_window_released_inside_goes_back_whole_on_the_libc_allocator)
{
    const size_t block = maps_large() ? 131072 : 262144;
    bw_pool_options o;
    bw_pool_stats st;
    bw_pool *p;
    bw_writer w;
    unsigned char buf[8192];
    memset(&o, 0, sizeof o);
    p = mkpool(&o);
    memset(buf, 0x7e, sizeof buf);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    while (bw_len(&w) < 40960) cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_capacity(&w), 65536);
    bw_release(&w);
    st = stats_of(p);
    cr_expect_eq(st.outstanding_bytes, 0);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    while (bw_len(&w) < 40960) cr_assert_eq(bw_write(&w, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_capacity(&w), block, "the idle block, whole");
    cr_expect_eq(stats_of(p).backing_allocs, st.backing_allocs, "no fresh memory");
    cr_expect_eq(bw_data(&w)[40959], 0x7e);
    bw_release(&w);
    bw_pool_destroy(p);
}
#endif
