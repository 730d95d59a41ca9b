/* SPDX-License-Identifier: MIT */
/* test_promises.c - promises of 0.2 that an adversarial review broke, each
 * test written to fail on 0.2:
 *
 *   - printf arguments may point into the writer's own held bytes, the
 *     string bw_cstr() returns included (its NUL lies just past the held
 *     bytes, where printf's output begins), in every mode;
 *   - fprintf/fputs/fwrite through bw_fopen(w) may take arguments inside w's
 *     held bytes in a contiguous or segmented writer (the FILE hands its
 *     bytes over in pieces, in the middle of the call);
 *   - a segmented writer on a pool whose rents are exact-size (BW_POOL_BYPASS)
 *     keeps its block links aligned;
 *   - BW_POOL_ZERO_ON_RETURN: no bytes reach the backing allocator unzeroed,
 *     not even through a realloc when a block above the threshold grows;
 *   - a fixed writer never allocates (printf, put_hex and append_writer of
 *     its own bytes included);
 *   - a streaming writer's memory stays bounded by its buffer for printf
 *     too, whatever the output's length. */
#define _GNU_SOURCE 1 /* bw_fopen is fopencookie-based */
#include "harness.h"

#include <errno.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* A writer of every mode over a counting pool                              */
/* ------------------------------------------------------------------------ */

#define FIXED_CAP 4096 /* the streaming and the fixed writers' buffer here */

/* The harness's writer of mode m on a fresh pool with flags; a fixed
 * buffer starts with stale bytes ("SSSS..."), which bw_cstr must not show. */
static void env_open(harness *h, int m, unsigned flags)
{
    h_open_ex(h, m, m == M_SINK || m == M_FIXED ? FIXED_CAP : default_param(m), 0, flags);
    if (m == M_FIXED) memset(h->fbuf, 'S', h->fsize);
}

/* A string of n letters that depend on the position (no NUL). */
static char *letters(size_t n, unsigned seed)
{
    char *s = (char *)malloc(n + 1);
    size_t i;
    cr_assert_not_null(s);
    for (i = 0; i < n; i++) s[i] = (char)('a' + (i * 7 + seed + i / 26) % 26);
    s[n] = 0;
    return s;
}

/* ------------------------------------------------------------------------ */
/* printf with bw_cstr arguments                                            */
/* ------------------------------------------------------------------------ */

/* Held: `held` letters, then bw_cstr; then printf(fmt) with that string as
 * both arguments. pad widens the output (past the free space: growth,
 * linking, sending). */
static void cstr_printf_case(int m, unsigned flags, size_t held, int pad)
{
    harness e;
    char *s = letters(held, (unsigned)m), *want;
    const char *c;
    int n;
    env_open(&e, m, flags);
    if (m == M_CONTIG) {
        /* The block's previous user left a secret in it: it must not show. */
        static const char secret[] = "token=SECRET-0123456789abcdef0123456789";
        size_t k;
        for (k = 0; k < 30; k++) cr_assert_eq(bw_write(&e.w, secret, sizeof secret - 1), BW_OK);
        bw_release(&e.w);
    }
    cr_assert_eq(bw_write(&e.w, s, held), BW_OK);
    c = bw_cstr(&e.w);
    cr_assert_not_null(c, "%s: cstr", mode_name[m]);
    cr_assert(strcmp(c, s) == 0);
    want = (char *)malloc(3 * held + (size_t)pad + 8);
    cr_assert_not_null(want);
    memcpy(want, s, held);
    n = sprintf(want + held, "<%s|%*s>", s, pad, s);
    cr_expect_eq(bw_printf(&e.w, "<%s|%*s>", c, pad, c), BW_OK, "%s, %zu held, pad %d", mode_name[m],
                 held, pad);
    expect_output(&e, want, held + (size_t)n, "printf of bw_cstr");
    free(want);
    free(s);
    h_close(&e);
}

Test(promises, printf_arguments_from_bw_cstr_in_every_mode)
{
    static const size_t helds[] = {3, 40, 300};
    static const int pads[] = {0, 600, 5000};
    int m;
    size_t h, p;
    for (m = 0; m < M_COUNT; m++)
        for (h = 0; h < 3; h++)
            for (p = 0; p < 3; p++) {
                /* a fixed writer's long output must not alias (header) */
                if (m == M_FIXED && pads[p] >= 1000) continue;
                cstr_printf_case(m, 0, helds[h], pads[p]);
                cstr_printf_case(m, BW_POOL_ZERO_ON_RETURN, helds[h], pads[p]);
            }
}

/* The exact case of the report: "abc" held, its NUL just past it, in a
 * block a previous job filled. */
Test(promises, printf_of_cstr_on_a_reused_block_prints_no_other_jobs_bytes)
{
    bw_writer w = BW_WRITER_INIT;
    const char *c;
    int i;
    for (i = 0; i < 20; i++) cr_assert_eq(bw_puts(&w, "token=SECRET-DEADBEEF;"), BW_OK);
    bw_release(&w); /* the block goes to the thread cache, bytes and all */
    cr_assert_eq(bw_puts(&w, "abc"), BW_OK);
    c = bw_cstr(&w);
    cr_assert_eq(bw_printf(&w, "[%s]", c), BW_OK);
    cr_expect_eq(bw_len(&w), 8);
    cr_expect(memcmp(bw_data(&w), "abc[abc]", 8) == 0, "got %.*s", (int)bw_len(&w),
              (const char *)bw_data(&w));
    bw_release(&w);
}

/* ------------------------------------------------------------------------ */
/* bw_fopen with arguments inside the writer                                */
/* ------------------------------------------------------------------------ */

#ifdef BW_HAVE_FILE_ADAPTER
/* fputs(bw_cstr(w)) and fwrite(bw_data(w)) into bw_fopen(w): the FILE
 * flushes into w (which grows) and goes on reading the argument. */
Test(promises, fopen_writes_of_the_writers_own_bytes_contiguous_and_segmented)
{
    static const int modes[] = {M_CONTIG, M_BUFFER, M_CHAIN};
    static const unsigned flagsets[] = {0, BW_POOL_ZERO_ON_RETURN, BW_POOL_NO_LARGE_RETENTION};
    static const size_t sizes[] = {3000, 20000, 300000};
    size_t mi, fi, si;
    for (mi = 0; mi < 3; mi++)
        for (fi = 0; fi < 3; fi++)
            for (si = 0; si < 3; si++) {
                harness e;
                size_t n = sizes[si];
                char *s = letters(n, 3), *want = (char *)malloc(4 * n);
                FILE *f;
                const char *c;
                cr_assert_not_null(want);
                env_open(&e, modes[mi], flagsets[fi]);
                cr_assert_eq(bw_write(&e.w, s, n), BW_OK);
                c = bw_cstr(&e.w);
                cr_assert_not_null(c);
                f = bw_fopen(&e.w);
                cr_assert_not_null(f);
                cr_expect_geq(fputs(c, f), 0, "%s: fputs", mode_name[modes[mi]]);
                cr_expect_eq(fflush(f), 0);
                /* two copies are held now: fwrite both again */
                cr_assert_not_null(bw_pullup(&e.w));
                cr_expect_eq(fwrite(bw_pullup(&e.w), 1, 2 * n, f), 2 * n);
                cr_expect_eq(fclose(f), 0);
                memcpy(want, s, n);
                memcpy(want + n, s, n);
                memcpy(want + 2 * n, want, 2 * n);
                expect_output(&e, want, 4 * n, "fputs and fwrite of own bytes");
                cr_expect_eq(bw_error(&e.w), BW_OK);
                free(want);
                free(s);
                h_close(&e);
            }
}
#endif

/* ------------------------------------------------------------------------ */
/* Exact-size rents and segmented links                                     */
/* ------------------------------------------------------------------------ */

/* On an exact-size pool a segmented block is as big as asked; its link sits
 * in its last bytes and must stay aligned (UBSan's alignment check fails on
 * 0.2; SIGBUS on strict-alignment machines). A block's capacity a multiple
 * of 16 is what keeps it so. */
Test(promises, segmented_writer_on_a_bypass_pool_keeps_its_links_aligned)
{
    /* writes larger than twice the last block: blocks of exactly their size */
    static const size_t steps[] = {10001, 3, 77777, 5, 200001, 1};
    harness e;
    char *s = letters(300000, 9);
    size_t i, at = 0, len, cap;
    void *b;
    env_open(&e, M_CHAIN, BW_POOL_BYPASS);
    for (i = 0; i < 6; i++) {
        cr_assert_eq(bw_write(&e.w, s + at, steps[i]), BW_OK);
        at += steps[i];
        cr_assert_eq(bw_put_u64le(&e.w, 0x7878787878787878u), BW_OK); /* into the link's block */
        memset(s + at, 'x', 8);
        at += 8;
        cr_assert_eq(bw_reserve(&e.w, 3 * at + 1), BW_OK);
    }
    expect_output(&e, s, at, "segmented on bypass");
    cr_assert_eq(bw_truncate(&e.w, 1000), BW_OK);
    cr_assert_eq(bw_reserve(&e.w, 333), BW_OK);
    cr_assert_not_null(bw_pullup(&e.w));
    b = bw_detach(&e.w, &len, &cap);
    cr_assert_not_null(b);
    cr_expect_eq(len, 1000);
    cr_expect_eq(cap % 16, 0, "a segmented block's capacity %zu is a multiple of 16", cap);
    cr_expect(memcmp(b, s, 1000) == 0);
    cr_expect_eq(bw_pool_return(e.p, b, cap), BW_OK);
    free(s);
    h_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Zeroing reaches the allocator too                                        */
/* ------------------------------------------------------------------------ */

static _Atomic long dirty_frees, zero_reallocs;

static void zero_check_free(void *ctx, void *block, size_t size)
{
    const unsigned char *b = (const unsigned char *)block;
    size_t i;
    for (i = 0; i < size; i++)
        if (b[i] != 0) {
            atomic_fetch_add(&dirty_frees, 1);
            break;
        }
    ta_free(ctx, block, size);
}

static void *zero_check_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    atomic_fetch_add(&zero_reallocs, 1); /* hands old_size bytes over unzeroed */
    return ta_realloc(ctx, block, old_size, new_size);
}

Test(promises, zero_on_return_growth_above_the_threshold_never_hands_over_bytes)
{
    test_alloc ta;
    bw_pool_options o;
    bw_pool *p;
    bw_writer w;
    char *s = letters(8192, 1);
    int i;
    ta_init(&ta, 1);
    ta.hook.free = zero_check_free;
    ta.hook.realloc = zero_check_realloc;
    memset(&o, 0, sizeof o);
    o.max_pooled_size = 64 << 10;
    o.flags = BW_POOL_ZERO_ON_RETURN | BW_POOL_NO_LARGE_RETENTION;
    o.allocator = &ta.hook;
    p = mkpool(&o);
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    for (i = 0; i < 128; i++) cr_assert_eq(bw_write(&w, s, 8192), BW_OK); /* 1 MiB */
    cr_expect_eq(bw_len(&w), 1u << 20);
    bw_release(&w);
    bw_pool_trim(p);
    cr_expect_eq(atomic_load(&zero_reallocs), 0, "realloc gives the old block's bytes away");
    cr_expect_eq(atomic_load(&dirty_frees), 0, "%ld blocks reached the allocator unzeroed",
                 atomic_load(&dirty_frees));
    free(s);
    ta_finish(&ta, p);
}

/* ------------------------------------------------------------------------ */
/* A fixed writer never allocates                                           */
/* ------------------------------------------------------------------------ */

static uint64_t shared_rents(void)
{
    bw_pool_stats st;
    bw_pool_get_stats(bw_pool_shared(), &st);
    return st.rents;
}

Test(promises, fixed_writer_allocates_nothing_for_printf_hex_and_self_append)
{
    unsigned char buf[2048];
    char want[2048 * 2];
    bw_writer w;
    uint64_t before = shared_rents();
    char *s = letters(700, 5);
    int n;
    size_t i;

    /* printf whose output is exactly the free space, past the stack buffer
     * of pass one */
    cr_assert_eq(bw_init_fixed(&w, buf, 3 + 300), BW_OK);
    cr_assert_eq(bw_write(&w, "abc", 3), BW_OK);
    n = snprintf(want, sizeof want, "%0300d", 42);
    cr_expect_eq(bw_printf(&w, "%0300d", 42), BW_OK, "300 bytes into 300 free");
    cr_expect_eq(bw_len(&w), 303);
    cr_expect(memcmp(bw_data(&w) + 3, want, (size_t)n) == 0);

    /* put_hex of its own 400 held bytes, which must move down over 1,000
     * consumed ones to make room */
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, s, 700), BW_OK);
    cr_assert_eq(bw_write(&w, s, 700), BW_OK);
    cr_assert_eq(bw_consume(&w, 1000), BW_OK); /* 400 held at 1000..1400 */
    cr_expect_eq(bw_put_hex(&w, bw_data(&w), 400), BW_OK);
    cr_expect_eq(bw_len(&w), 1200);
    for (i = 0; i < 400; i++) sprintf(want + 2 * i, "%02x", (unsigned char)s[300 + i]);
    cr_expect(memcmp(bw_data(&w), s + 300, 400) == 0, "held bytes moved down intact");
    cr_expect(memcmp(bw_data(&w) + 400, want, 800) == 0, "hex of the held bytes");

    /* a second copy of 700 held bytes */
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_assert_eq(bw_write(&w, s, 700), BW_OK);
    cr_expect_eq(bw_append_writer(&w, &w), BW_OK);
    cr_expect_eq(bw_len(&w), 1400);
    cr_expect(memcmp(bw_data(&w), s, 700) == 0 && memcmp(bw_data(&w) + 700, s, 700) == 0);
    cr_expect_eq(bw_append_writer(&w, &w), BW_EFULL, "2800 bytes do not fit 2048");
    cr_expect_eq(bw_len(&w), 1400, "nothing of the failed call");

    cr_expect_eq(shared_rents(), before, "a fixed writer rented %llu blocks",
                 (unsigned long long)(shared_rents() - before));
    free(s);
}

/* ------------------------------------------------------------------------ */
/* A streaming writer's memory stays bounded for printf                     */
/* ------------------------------------------------------------------------ */

static _Atomic size_t largest_alloc;

static void *track_alloc(void *ctx, size_t size)
{
    size_t cur = atomic_load(&largest_alloc);
    while (size > cur && !atomic_compare_exchange_weak(&largest_alloc, &cur, size)) {}
    return ta_alloc(ctx, size);
}

Test(promises, streaming_printf_of_any_length_stays_within_the_buffer)
{
    harness e;
    const size_t big = 4u << 20;
    char *s = letters(big, 2), *want;
    const char *c;
    size_t n;
    env_open(&e, M_SINK, BW_POOL_NO_THREAD_CACHE);
    e.ta.hook.alloc = track_alloc;
    bw_release(&e.w); /* re-init on the hooked allocator */
    bw_pool_destroy(e.p);
    {
        bw_pool_options o;
        memset(&o, 0, sizeof o);
        o.allocator = &e.ta.hook;
        cr_assert_eq(bw_pool_create(&e.p, &o), BW_OK);
    }
    cr_assert_eq(bw_init_sink(&e.w, e.p, 64 << 10, test_sink, &e.s), BW_OK);
    atomic_store(&largest_alloc, 0);
    cr_assert_eq(bw_puts(&e.w, "head:"), BW_OK);
    c = bw_cstr(&e.w); /* an argument inside the buffer */
    cr_assert_not_null(c);
    cr_expect_eq(bw_printf(&e.w, "[%s|%s|%s]", c, s, c), BW_OK);
    cr_expect_eq(bw_flush(&e.w), BW_OK);
#ifdef BW_HAVE_FILE_ADAPTER /* without it the output is formatted apart */
    cr_expect_leq(atomic_load(&largest_alloc), (size_t)64 << 10,
                  "largest block %zu for a 4 MiB printf into a 64 KiB buffer",
                  atomic_load(&largest_alloc));
#endif
    want = (char *)malloc(big + 64);
    cr_assert_not_null(want);
    n = (size_t)sprintf(want, "head:[head:|%s|head:]", s);
    expect_output(&e, want, n, "4 MiB printf through a 64 KiB buffer");
    cr_expect_eq(bw_tell(&e.w), n);
    free(want);
    free(s);
    h_close(&e);
}
