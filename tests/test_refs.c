/* SPDX-License-Identifier: MIT */
/* test_refs.c - by-reference pieces (bw_append_ref: linked, not copied, and
 * done called exactly once whichever way the bytes leave) and moves
 * between writers (bw_move: relinked between segmented writers of one pool,
 * copied otherwise). Patching over references is in test_positions.c
 * with the rest of bw_patch; the allocator failing at every backing call
 * of a workload of references and moves is in test_failinj.c. */
#define _GNU_SOURCE 1 /* pipe, sigaction, setrlimit under -std=c11 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>

/* ======================================================================== */
/* bw_append_ref                                                            */
/* ======================================================================== */

Test(ref, linked_not_copied_and_done_once_when_consumed)
{
    env *e = env_new();
    bw_writer w;
    static unsigned char r[10000];
    donec dc = {0, NULL, 0};
    struct iovec iov[8];
    size_t k;
    fill(r, sizeof r, 10);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_puts(&w, "hdr:"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, ":end"), BW_OK);
    cr_expect_eq(bw_len(&w), 10008);
    cr_expect_eq(bw_tell(&w), 10008);
    k = bw_iovec(&w, iov, 8);
    cr_assert_eq(k, 3);
    cr_expect(iov[1].iov_base == (void *)r && iov[1].iov_len == sizeof r,
              "the caller's memory itself");
    cr_expect_null(bw_data(&w), "three pieces");
    cr_expect_eq(bw_consume(&w, 4 + 5000), BW_OK);
    cr_expect_eq(dc.calls, 0, "half of it is still held");
    cr_expect_eq(bw_consume(&w, 5000), BW_OK);
    cr_expect_eq(dc.calls, 1, "the last of it left");
    cr_expect(dc.data == r && dc.n == sizeof r, "with the pointer and length given");
    cr_expect_eq(bw_len(&w), 4);
    cr_expect(memcmp(bw_data(&w), ":end", 4) == 0);
    bw_release(&w);
    cr_expect_eq(dc.calls, 1, "once");
    env_free(e);
}

Test(ref, every_way_out_calls_done)
{
    static unsigned char r[3000];
    int way;
    fill(r, sizeof r, 11);
    for (way = 0; way < 8; way++) {
        env *e = env_new();
        bw_writer w;
        donec dc = {0, NULL, 0};
        size_t len;
        mk(e, &w, M_CHAIN);
        cr_assert_eq(bw_puts(&w, "ab"), BW_OK);
        cr_assert_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK);
        cr_assert_eq(bw_puts(&w, "cd"), BW_OK);
        switch (way) {
        case 0: bw_release(&w); break;
        case 1: bw_clear(&w); break;
        case 2: cr_expect_eq(bw_truncate(&w, 1), BW_OK); break;
        case 3: {
            const unsigned char *p = bw_pullup(&w);
            cr_assert(p != NULL);
            cr_expect(memcmp(p + 2, r, sizeof r) == 0);
            break;
        }
        case 4: {
            size_t cap;
            void *b = bw_detach(&w, &len, &cap);
            cr_assert(b != NULL);
            cr_expect_eq(len, 3004);
            cr_expect(memcmp((unsigned char *)b + 2, r, sizeof r) == 0);
            cr_expect_eq(bw_pool_return(bw_writer_pool(&w), b, cap), BW_OK);
            break;
        }
        case 5: {
            int fds[2];
            unsigned char got[4000];
            ssize_t n;
            cr_assert_eq(pipe(fds), 0);
            cr_expect_eq(bw_write_fd(&w, fds[1], NULL), BW_OK);
            n = read(fds[0], got, sizeof got);
            cr_expect_eq(n, 3004);
            cr_expect(memcmp(got + 2, r, sizeof r) == 0);
            close_pair(fds);
            break;
        }
        case 6: cr_expect_eq(bw_patch(&w, 100, "XY", 2), BW_OK); break;
        default: {
            const char *s = bw_cstr(&w);
            cr_assert(s != NULL);
            cr_expect(memcmp(s + 2, r, sizeof r) == 0 && memcmp(s + 3002, "cd", 3) == 0);
            break;
        }
        }
        cr_expect_eq(dc.calls, 1, "way %d", way);
        bw_release(&w);
        cr_expect_eq(dc.calls, 1, "way %d: once", way);
        env_free(e);
    }
}

Test(ref, truncate_keeps_part_of_a_reference)
{
    env *e = env_new();
    bw_writer w;
    unsigned char r1[100], r2[100], got[400];
    donec d1 = {0, NULL, 0}, d2 = {0, NULL, 0};
    fill(r1, sizeof r1, 12);
    fill(r2, sizeof r2, 13);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_append_ref(&w, r1, sizeof r1, on_done, &d1), BW_OK);
    cr_assert_eq(bw_puts(&w, "mid"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r2, sizeof r2, on_done, &d2), BW_OK);
    cr_assert_eq(bw_puts(&w, "tail"), BW_OK);
    cr_expect_eq(bw_truncate(&w, 150), BW_OK, "into the second reference");
    cr_expect_eq(d2.calls, 0, "part of it is kept");
    cr_expect_eq(bw_len(&w), 150);
    cr_expect_eq(bw_puts(&w, "after"), BW_OK);
    cr_assert_eq(bw_copy_out(&w, 0, got, 155), BW_OK);
    cr_expect(memcmp(got, r1, 100) == 0 && memcmp(got + 100, "mid", 3) == 0 &&
              memcmp(got + 103, r2, 47) == 0 && memcmp(got + 150, "after", 5) == 0);
    cr_expect_eq(bw_truncate(&w, 50), BW_OK, "into the first");
    cr_expect_eq(d2.calls, 1);
    cr_expect_eq(d1.calls, 0);
    cr_expect_eq(bw_putc(&w, '!'), BW_OK);
    cr_assert_eq(bw_copy_out(&w, 0, got, 51), BW_OK);
    cr_expect(memcmp(got, r1, 50) == 0 && got[50] == '!');
    cr_expect_eq(bw_truncate(&w, 0), BW_OK, "all of it");
    cr_expect_eq(d1.calls, 1);
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_puts(&w, "new"), BW_OK);
    cr_expect(memcmp(bw_data(&w), "new", 3) == 0);
    bw_release(&w);
    cr_expect(d1.calls == 1 && d2.calls == 1);
    env_free(e);
}

Test(ref, other_modes_copy_and_call_done_at_once)
{
    int m;
    for (m = 0; m < M_COUNT; m++) {
        env *e;
        bw_writer w;
        unsigned char r[1000], got[3000];
        donec dc = {0, NULL, 0};
        size_t n;
        if (m == M_CHAIN) continue; /* it keeps the reference: tested above */
        e = env_new();
        fill(r, sizeof r, 15);
        mk(e, &w, m);
        cr_assert_eq(bw_putc(&w, '<'), BW_OK);
        cr_expect_eq(bw_append_ref(&w, r, sizeof r, on_done, &dc), BW_OK, "%s", mode_name[m]);
        cr_expect_eq(dc.calls, 1, "%s: at once", mode_name[m]);
        cr_expect(dc.data == r && dc.n == sizeof r);
        memset(r, 0, sizeof r); /* the caller may reuse it now */
        cr_assert_eq(bw_putc(&w, '>'), BW_OK);
        n = produced(e, &w, got);
        fill(r, sizeof r, 15);
        cr_expect_eq(n, 1002, "%s", mode_name[m]);
        cr_expect(got[0] == '<' && memcmp(got + 1, r, 1000) == 0 && got[1001] == '>', "%s",
                  mode_name[m]);
        bw_release(&w);
        env_free(e);
    }
}

Test(ref, arguments_and_errors)
{
    env *e = env_new();
    bw_writer w;
    unsigned char small[4], r[8] = "refbytes";
    donec dc = {0, NULL, 0};
    cr_expect_eq(bw_append_ref(NULL, r, 8, on_done, &dc), BW_EINVAL);
    mk(e, &w, M_CHAIN);
    cr_expect_eq(bw_append_ref(&w, NULL, 0, on_done, &dc), BW_OK, "nothing: done at once");
    cr_expect_eq(dc.calls, 1);
    cr_expect_eq(bw_append_ref(&w, r, 8, NULL, NULL), BW_OK, "done may be NULL");
    cr_expect_eq(bw_len(&w), 8);
    cr_expect_eq(bw_append_ref(&w, r, (size_t)PTRDIFF_MAX + 1, on_done, &dc), BW_EOVERFLOW);
    cr_expect_eq(dc.calls, 1, "not on failure");
    cr_expect_eq(bw_append_ref(&w, r, 8, on_done, &dc), BW_EOVERFLOW,
                 "a recorded error refuses it");
    cr_expect_eq(dc.calls, 1);
    bw_clear_error(&w);
    cr_expect_eq(bw_append_ref(&w, NULL, 1, on_done, &dc), BW_EINVAL);
    cr_expect_eq(dc.calls, 1);
    bw_release(&w);
    /* a fixed writer that is full: nothing written, no done */
    cr_assert_eq(bw_init_fixed(&w, small, sizeof small), BW_OK);
    cr_expect_eq(bw_append_ref(&w, r, 8, on_done, &dc), BW_EFULL);
    cr_expect_eq(dc.calls, 1);
    cr_expect_eq(bw_len(&w), 0);
    env_free(e);
}

Test(ref, memory_inside_the_writer_is_copied)
{
    env *e = env_new();
    bw_writer w;
    unsigned char a[3000], got[6000];
    donec dc = {0, NULL, 0};
    const unsigned char *d;
    fill(a, sizeof a, 16);
    mk(e, &w, M_CHAIN);
    cr_assert_eq(bw_write(&w, a, sizeof a), BW_OK);
    d = bw_data(&w);
    cr_expect_eq(bw_append_ref(&w, d + 1000, 2000, on_done, &dc), BW_OK);
    cr_expect_eq(dc.calls, 1, "copied, so done at once");
    cr_expect_eq(bw_consume(&w, 3000), BW_OK); /* the first block goes back */
    cr_assert_eq(bw_copy_out(&w, 0, got, 2000), BW_OK);
    cr_expect(memcmp(got, a + 1000, 2000) == 0);
    bw_release(&w);
    env_free(e);
}

/* A block made by a pullup, emptied by bw_clear, then closed behind a
 * reference: its held range must not come from whatever its link held. */
Test(ref, pulled_up_and_cleared_block_closes_with_its_own_range)
{
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
    unsigned char a[3000], r1[100], r2[50], got[200];
    donec dc = {0, NULL, 0};
    fill(a, sizeof a, 17);
    fill(r1, sizeof r1, 18);
    fill(r2, sizeof r2, 19);
    p = fresh_pool(&ta, 4096, BW_POOL_CHECKED | BW_POOL_FILL); /* rented bytes are 0xA5 */
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    cr_assert_eq(bw_write(&w, a, sizeof a), BW_OK);
    cr_assert_eq(bw_write(&w, a, sizeof a), BW_OK);
    cr_assert(bw_pullup(&w) != NULL);
    bw_clear(&w);
    cr_assert_eq(bw_append_ref(&w, r1, sizeof r1, on_done, &dc), BW_OK);
    cr_assert_eq(bw_puts(&w, "abc"), BW_OK);
    cr_assert_eq(bw_append_ref(&w, r2, sizeof r2, on_done, &dc), BW_OK);
    cr_assert_eq(bw_len(&w), 153);
    cr_assert_eq(bw_copy_out(&w, 0, got, 153), BW_OK);
    cr_expect(memcmp(got, r1, 100) == 0 && memcmp(got + 100, "abc", 3) == 0 &&
              memcmp(got + 103, r2, 50) == 0);
    cr_expect_eq(bw_consume(&w, 153), BW_OK);
    cr_expect_eq(dc.calls, 2);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(ref, many_references_between_small_writes_stay_small)
{
    env *e = env_new();
    bw_writer w;
    static unsigned char r[100][64];
    donec dc = {0, NULL, 0};
    unsigned char *all;
    size_t n, i;
    bw_pool_stats st;
    mk(e, &w, M_CHAIN);
    for (i = 0; i < 100; i++) {
        fill(r[i], 64, (unsigned)i);
        cr_assert_eq(bw_put_u16be(&w, (uint16_t)i), BW_OK);
        cr_assert_eq(bw_append_ref(&w, r[i], 64, on_done, &dc), BW_OK);
    }
    bw_pool_get_stats(e->pool, &st);
    cr_expect_leq(st.outstanding_bytes, (size_t)100 * (4096 + 128) + 4096,
                  "a first-size block after each reference, not doubling: %zu",
                  st.outstanding_bytes);
    all = held_by_iovec(&w, &n);
    cr_assert_eq(n, 100 * 66);
    for (i = 0; i < 100; i++) {
        cr_expect(all[i * 66] == 0 && all[i * 66 + 1] == (unsigned char)i);
        cr_expect(memcmp(all + i * 66 + 2, r[i], 64) == 0);
    }
    free(all);
    bw_release(&w);
    cr_expect_eq(dc.calls, 100);
    env_free(e);
}

/* ======================================================================== */
/* bw_move                                                                  */
/* ======================================================================== */

Test(move, relinks_between_segmented_writers_of_one_pool)
{
    env *e = env_new();
    bw_writer dst, src;
    unsigned char a[10000], b[20000], got[30100];
    unsigned char *all;
    struct iovec iov[32];
    bw_pool_stats before, after;
    size_t k, i, n;
    void *src_first;
    uint64_t src_tell;
    fill(a, sizeof a, 20);
    fill(b, sizeof b, 21);
    mk(e, &dst, M_CHAIN);
    mk(e, &src, M_CHAIN);
    cr_assert_eq(bw_write(&dst, a, sizeof a), BW_OK);
    cr_assert_eq(bw_write(&src, b, 3000), BW_OK);
    cr_assert_eq(bw_write(&src, b + 3000, sizeof b - 3000), BW_OK);
    cr_assert(bw_iovec(&src, iov, 32) >= 2);
    src_first = iov[0].iov_base;
    src_tell = bw_tell(&src);
    bw_pool_get_stats(e->pool, &before);
    cr_expect_eq(bw_move(&dst, &src), BW_OK);
    bw_pool_get_stats(e->pool, &after);
    cr_expect_eq(after.rents, before.rents + 1, "nothing rented but dst's piece records");
    cr_expect_eq(after.returns, before.returns, "nothing given back");
    cr_expect_eq(bw_len(&src), 0);
    cr_expect_eq(bw_tell(&src), src_tell, "src's positions go on");
    cr_expect_eq(bw_len(&dst), 30000);
    k = bw_iovec(&dst, iov, 32);
    for (i = 0; i < k && iov[i].iov_base != src_first; i++) {}
    cr_expect(i < k, "src's first block is now dst's");
    cr_expect_eq(bw_puts(&dst, "more"), BW_OK);
    all = held_by_iovec(&dst, &n);
    cr_assert_eq(n, 30004);
    cr_expect(memcmp(all, a, 10000) == 0 && memcmp(all + 10000, b, 20000) == 0 &&
              memcmp(all + 30000, "more", 4) == 0);
    free(all);
    cr_assert_eq(bw_copy_out(&dst, 9990, got, 20), BW_OK);
    cr_expect(memcmp(got, a + 9990, 10) == 0 && memcmp(got + 10, b, 10) == 0);
    /* both go on */
    cr_expect_eq(bw_puts(&src, "src again"), BW_OK);
    cr_expect_eq(bw_len(&src), 9);
    cr_expect_eq(bw_truncate(&dst, 5000), BW_OK, "back into dst's own bytes");
    cr_expect_eq(bw_len(&dst), 5000);
    bw_release(&dst);
    bw_release(&src);
    env_free(e);
}

/* The shapes a relink meets: dst empty, without storage, with an empty last
 * block; src one block (partly consumed), several blocks, references. */
/* 0.3 kept a partly consumed first block's start in its link, which the
 * relink then lost: after a truncate into that block, bw_len said 150 and
 * the read-outs gave 160 bytes, 10 of them consumed ones. */
Test(move, truncate_into_a_partly_consumed_block_after_a_relink)
{
    env *e = env_new();
    bw_writer dst, src;
    unsigned char b[6000], want[200], *all;
    size_t n;
    uint64_t at;
    fill(b, sizeof b, 30);
    mk(e, &dst, M_CHAIN);
    mk(e, &src, M_CHAIN);
    cr_assert_eq(bw_write(&dst, "head", 4), BW_OK);
    cr_assert_eq(bw_write(&src, b, 3000), BW_OK);
    cr_assert_eq(bw_write(&src, b + 3000, 3000), BW_OK); /* a second block */
    cr_assert(bw_iovec(&src, NULL, 0) >= 2);
    cr_assert_eq(bw_consume(&src, 10), BW_OK);
    cr_assert_eq(bw_move(&dst, &src), BW_OK);
    at = 4 + 150; /* into src's first block */
    cr_assert_eq(bw_truncate(&dst, at), BW_OK);
    memcpy(want, "head", 4);
    memcpy(want + 4, b + 10, 150);
    cr_expect_eq(bw_len(&dst), 154);
    all = held_by_iovec(&dst, &n);
    cr_expect_eq(n, 154, "the read-outs agree with bw_len");
    cr_expect(memcmp(all, want, 154) == 0, "no consumed byte comes back");
    free(all);
    cr_assert_eq(bw_write(&dst, "tail", 4), BW_OK);
    all = held_by_iovec(&dst, &n);
    cr_expect_eq(n, 4 + 150 + 4);
    cr_expect(memcmp(all + 154, "tail", 4) == 0);
    free(all);
    bw_release(&dst);
    bw_release(&src);
    env_free(e);
}

Test(move, relink_shapes)
{
    int shape;
    for (shape = 0; shape < 8; shape++) {
        env *e = env_new();
        bw_writer dst, src;
        unsigned char a[6000], b[9000], r[500], want[20000];
        donec dc = {0, NULL, 0};
        unsigned char *all;
        size_t wn = 0, n;
        fill(a, sizeof a, 30);
        fill(b, sizeof b, 31);
        fill(r, sizeof r, 32);
        mk(e, &dst, M_CHAIN);
        mk(e, &src, M_CHAIN);
        if (shape & 1) { /* dst holds bytes */
            cr_assert_eq(bw_write(&dst, a, 3000), BW_OK);
            memcpy(want, a, 3000);
            wn = 3000;
        } else if (shape & 4) { /* dst had bytes, all consumed */
            cr_assert_eq(bw_write(&dst, a, 100), BW_OK);
            cr_assert_eq(bw_consume(&dst, 100), BW_OK);
        }
        if ((shape & 5) == 5) { /* and an empty last block after them */
            cr_assert(bw_get_span(&dst, 4000, NULL) != NULL);
        }
        if (shape & 2) { /* src: several blocks and a reference */
            cr_assert_eq(bw_write(&src, b, 5000), BW_OK);
            cr_assert_eq(bw_append_ref(&src, r, sizeof r, on_done, &dc), BW_OK);
            cr_assert_eq(bw_write(&src, b + 5000, 4000), BW_OK);
            cr_assert_eq(bw_consume(&src, 10), BW_OK);
            memcpy(want + wn, b + 10, 4990);
            memcpy(want + wn + 4990, r, 500);
            memcpy(want + wn + 5490, b + 5000, 4000);
            wn += 9490;
        } else { /* one block, partly consumed */
            cr_assert_eq(bw_write(&src, b, 1000), BW_OK);
            cr_assert_eq(bw_consume(&src, 300), BW_OK);
            memcpy(want + wn, b + 300, 700);
            wn += 700;
        }
        cr_expect_eq(bw_move(&dst, &src), BW_OK, "shape %d", shape);
        cr_expect_eq(bw_len(&src), 0);
        cr_expect_eq(bw_puts(&dst, "end"), BW_OK);
        memcpy(want + wn, "end", 3);
        wn += 3;
        all = held_by_iovec(&dst, &n);
        cr_expect_eq(n, wn, "shape %d", shape);
        cr_expect(memcmp(all, want, wn) == 0, "shape %d", shape);
        free(all);
        cr_expect_eq(dc.calls, 0, "the reference moved along");
        cr_expect_eq(bw_consume(&dst, bw_len(&dst)), BW_OK);
        cr_expect_eq(dc.calls, (shape & 2) ? 1 : 0, "shape %d: done once dst lets go", shape);
        bw_release(&dst);
        bw_release(&src);
        env_free(e);
    }
}

Test(move, copies_between_any_other_modes)
{
    int md, ms;
    for (md = 0; md < M_COUNT; md++) {
        for (ms = 0; ms < M_COUNT; ms++) {
            env *e = env_new(), *e2;
            bw_writer dst, src;
            unsigned char a[700], b[900], got[2000];
            size_t n;
            if (ms == M_SINK || (md == M_CHAIN && ms == M_CHAIN)) {
                env_free(e);
                continue;
            }
            e2 = env_new();
            fill(a, sizeof a, 40);
            fill(b, sizeof b, 41);
            mk(e, &dst, md);
            mk(e2, &src, ms);
            cr_assert_eq(bw_write(&dst, a, sizeof a), BW_OK);
            cr_assert_eq(bw_write(&src, b, sizeof b), BW_OK);
            cr_expect_eq(bw_move(&dst, &src), BW_OK, "%s <- %s", mode_name[md], mode_name[ms]);
            cr_expect_eq(bw_len(&src), 0);
            cr_expect_eq(bw_tell(&src), sizeof b);
            n = produced(e, &dst, got);
            cr_expect_eq(n, 1600);
            cr_expect(memcmp(got, a, 700) == 0 && memcmp(got + 700, b, 900) == 0, "%s <- %s",
                      mode_name[md], mode_name[ms]);
            cr_expect_eq(bw_puts(&src, "x"), BW_OK, "src usable after");
            bw_release(&dst);
            bw_release(&src);
            env_free(e);
            env_free(e2);
        }
    }
}

/* examples/http_response.c's pattern, many times over: a message is a
 * small header written in a segmented writer of its own and moved in,
 * then a body linked. 0.4 relinked the header's block with it, so 8,000
 * messages (1.7 MB) held 8,000 blocks (33.8 MB), and each link walked
 * them all. The header's bytes are now copied into dst's current block:
 * the pool memory held stays within a small factor of the bytes, and
 * they read back exact. */
#define HTTP_MSGS 8000
#define HTTP_HDR 16
#define HTTP_BODY 200
Test(move, small_moved_headers_do_not_bring_their_blocks)
{
    static unsigned char bodies[16][HTTP_BODY];
    test_alloc ta;
    bw_pool *p = fresh_pool_defaults(&ta);
    bw_writer w, hdr;
    unsigned char *want = (unsigned char *)malloc((size_t)HTTP_MSGS * (HTTP_HDR + HTTP_BODY));
    unsigned char *all, *got;
    size_t i, n, at = 0, total = (size_t)HTTP_MSGS * (HTTP_HDR + HTTP_BODY);
    long long live;
    uint64_t out;
    cr_assert_not_null(want);
    for (i = 0; i < 16; i++) fill(bodies[i], HTTP_BODY, 50u + (unsigned)i);
    cr_assert_eq(bw_init_chain(&w, p), BW_OK);
    for (i = 0; i < HTTP_MSGS; i++) {
        char h[HTTP_HDR + 1];
        snprintf(h, sizeof h, "HTTP/1.1 %05zu\r\n", i);
        cr_assert_eq(bw_init_chain(&hdr, p), BW_OK);
        cr_assert_eq(bw_write(&hdr, h, HTTP_HDR), BW_OK);
        cr_assert_eq(bw_move(&w, &hdr), BW_OK);
        cr_assert_eq(bw_len(&hdr), 0);
        bw_release(&hdr);
        cr_assert_eq(bw_append_ref(&w, bodies[i % 16], HTTP_BODY, NULL, NULL), BW_OK);
        memcpy(want + at, h, HTTP_HDR);
        memcpy(want + at + HTTP_HDR, bodies[i % 16], HTTP_BODY);
        at += HTTP_HDR + HTTP_BODY;
    }
    cr_assert_eq(bw_len(&w), total);
    out = outstanding(p);
    live = atomic_load(&ta.live_bytes);
    cr_expect_leq(out, total + total / 2, "%llu bytes rented for %zu bytes",
                  (unsigned long long)out, total);
    cr_expect_leq(live, 2 * (long long)total, "%lld bytes allocated for %zu bytes", live, total);
    all = held_by_iovec(&w, &n);
    cr_expect_eq(n, total);
    cr_expect(n == total && memcmp(all, want, total) == 0, "bw_iovec reads back every byte");
    free(all);
    got = (unsigned char *)malloc(total);
    cr_assert_not_null(got);
    cr_assert_eq(bw_copy_out(&w, 0, got, total), BW_OK);
    cr_expect(memcmp(got, want, total) == 0, "bw_copy_out reads back every byte");
    free(got);
    free(want);
    bw_release(&w);
    ta_finish(&ta, p);
}

Test(move, segmented_writers_of_two_pools_copy)
{
    env *e = env_new(), *e2 = env_new();
    bw_writer dst, src;
    unsigned char r[100], *all;
    donec dc = {0, NULL, 0};
    size_t n;
    fill(r, sizeof r, 42);
    mk(e, &dst, M_CHAIN);
    mk(e2, &src, M_CHAIN);
    cr_assert_eq(bw_puts(&dst, "a"), BW_OK);
    cr_assert_eq(bw_append_ref(&src, r, sizeof r, on_done, &dc), BW_OK);
    cr_expect_eq(bw_move(&dst, &src), BW_OK);
    cr_expect_eq(dc.calls, 1, "copied, so src let go of it");
    all = held_by_iovec(&dst, &n);
    cr_expect(n == 101 && all[0] == 'a' && memcmp(all + 1, r, 100) == 0);
    free(all);
    bw_release(&dst);
    bw_release(&src);
    env_free(e);
    env_free(e2);
}

Test(move, errors)
{
    env *e = env_new();
    bw_writer dst, src, s2;
    unsigned char small[8];
    cr_expect_eq(bw_move(NULL, &src), BW_EINVAL);
    mk(e, &dst, M_CHAIN);
    mk(e, &src, M_CHAIN);
    cr_expect_eq(bw_move(&dst, NULL), BW_EINVAL);
    cr_expect_eq(bw_error(&dst), BW_EINVAL, "recorded in dst");
    bw_clear_error(&dst);
    cr_expect_eq(bw_move(&dst, &dst), BW_EINVAL, "dst == src");
    bw_clear_error(&dst);
    mk(e, &s2, M_SINK);
    cr_assert_eq(bw_puts(&s2, "on its way"), BW_OK);
    cr_expect_eq(bw_move(&dst, &s2), BW_EINVAL, "a streaming src");
    cr_expect_eq(bw_len(&s2), 10, "left as it was");
    bw_release(&s2);
    bw_clear_error(&dst);
    cr_assert_eq(bw_puts(&src, "src"), BW_OK);
    cr_expect_eq(bw_puts(&src, NULL), BW_EINVAL);
    cr_expect_eq(bw_move(&dst, &src), BW_EINVAL, "src's error is returned");
    cr_expect_eq(bw_error(&dst), BW_OK, "not recorded in dst");
    cr_expect_eq(bw_len(&src), 3, "nothing moved");
    bw_clear_error(&src);
    cr_expect_eq(bw_move(&dst, &src), BW_OK);
    cr_expect_eq(bw_len(&dst), 3);
    cr_expect_eq(bw_move(&dst, &src), BW_OK, "nothing held: nothing to do");
    cr_expect_eq(bw_advance(&dst, SIZE_MAX), BW_EINVAL);
    cr_assert_eq(bw_puts(&src, "x"), BW_OK);
    cr_expect_eq(bw_move(&dst, &src), BW_EINVAL, "dst's error refuses it");
    cr_expect_eq(bw_len(&src), 1);
    bw_release(&dst);
    /* a fixed dst without room: all or nothing */
    cr_assert_eq(bw_init_fixed(&dst, small, sizeof small), BW_OK);
    cr_assert_eq(bw_puts(&src, "0123456789"), BW_OK);
    cr_expect_eq(bw_move(&dst, &src), BW_EFULL);
    cr_expect_eq(bw_len(&dst), 0);
    cr_expect_eq(bw_len(&src), 11, "src keeps its bytes");
    bw_release(&src);
    env_free(e);
}

/* ======================================================================== */
/* Piece records in chunks                                                  */
/* ======================================================================== */

/* The piece records sit in chunks (the first holds 15, each next one about
 * twice the last): these jobs hold hundreds of pieces, so every call that
 * reads or changes them meets chunk boundaries. */

#define CH_RECS 600
#define CH_HDR 10
#define CH_BODY 37

/* The held bytes agree with the model, read by bw_iovec and by bw_copy_out
 * (from several offsets). */
static void expect_held(const bw_writer *w, const unsigned char *model, size_t mlen)
{
    unsigned char *all, *out = (unsigned char *)malloc(mlen + 1);
    size_t n, off;
    cr_assert_not_null(out);
    cr_assert_eq(bw_len(w), mlen);
    all = held_by_iovec(w, &n);
    cr_assert_eq(n, mlen);
    cr_expect(mlen == 0 || memcmp(all, model, mlen) == 0, "bw_iovec");
    free(all);
    for (off = 0; off < mlen; off += 1 + mlen / 7) {
        cr_assert_eq(bw_copy_out(w, off, out, mlen - off), BW_OK);
        cr_expect(memcmp(out, model + off, mlen - off) == 0, "bw_copy_out from %zu", off);
    }
    free(out);
}

/* The held bytes, sent by bw_write_fd into a pipe (and so consumed), agree
 * with the model (mlen below the pipe's 64 KiB). */
static void expect_sent(bw_writer *w, const unsigned char *model, size_t mlen)
{
    unsigned char *out = (unsigned char *)malloc(mlen + 1);
    size_t off, got = 0;
    int fds[2];
    cr_assert_not_null(out);
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(bw_write_fd(w, fds[1], &got), BW_OK);
    cr_expect_eq(got, mlen);
    for (off = 0; off < got;) {
        ssize_t r = read(fds[0], out + off, got - off);
        cr_assert(r > 0);
        off += (size_t)r;
    }
    cr_expect(memcmp(out, model, mlen) == 0, "bw_write_fd");
    close(fds[0]);
    close(fds[1]);
    free(out);
}

/* A job of CH_RECS records, each a header written and a body linked: the
 * model of the bytes in *model, the bodies in bodies. Body i has a done when
 * i % done_every == 0 (every body for 1); tag starts each header. */
static size_t refs_job(bw_writer *w, unsigned char (*bodies)[CH_BODY], donec *dc,
                       unsigned char *model, const char *tag, size_t done_every)
{
    size_t i, mlen = 0;
    for (i = 0; i < CH_RECS; i++) {
        char hdr[CH_HDR + 1];
        snprintf(hdr, sizeof hdr, "%s%06zu:", tag, i);
        cr_assert_eq(bw_write(w, hdr, CH_HDR), BW_OK);
        memcpy(model + mlen, hdr, CH_HDR);
        mlen += CH_HDR;
        cr_assert_eq(bw_append_ref(w, bodies[i], CH_BODY, i % done_every == 0 ? on_done : NULL,
                                   &dc[i]),
                     BW_OK);
        memcpy(model + mlen, bodies[i], CH_BODY);
        mlen += CH_BODY;
    }
    return mlen;
}

static size_t chunk_job(bw_writer *w, unsigned char (*bodies)[CH_BODY], donec *dc,
                        unsigned char *model)
{
    return refs_job(w, bodies, dc, model, "hdr", 1);
}

Test(chunks, walk_patch_truncate_consume_across_chunks)
{
    static unsigned char bodies[CH_RECS][CH_BODY];
    static unsigned char model[CH_RECS * (CH_HDR + CH_BODY) + 1]; /* + "x" */
    static donec dc[CH_RECS];
    env *e = env_new();
    bw_writer w;
    size_t mlen, i, cut, gone = 0;
    uint64_t at;
    memset(dc, 0, sizeof dc);
    for (i = 0; i < CH_RECS; i++) fill(bodies[i], CH_BODY, (unsigned)i);
    mk(e, &w, M_CHAIN);
    mlen = chunk_job(&w, bodies, dc, model);
    cr_expect(bw_iovec(&w, NULL, 0) >= 2 * CH_RECS, "a piece a header (or two), one a body");
    expect_held(&w, model, mlen);
    /* patches across every seventh boundary between pieces (a header's end
     * and a body's start, or a body's end and a header's start), some of
     * them at chunk boundaries (15, 46, 109, 236, 491 records) */
    for (i = 1; i < 2 * CH_RECS; i += 7) {
        size_t p = (i / 2) * (CH_HDR + CH_BODY) + (i % 2 ? CH_HDR : 0) - 3;
        cr_assert_eq(bw_patch(&w, p, "<patch>", 7), BW_OK);
        memcpy(model + p, "<patch>", 7);
    }
    expect_held(&w, model, mlen);
    /* truncate back over several chunks, into the middle of a body */
    cut = 300 * (CH_HDR + CH_BODY) + CH_HDR + 5;
    cr_assert_eq(bw_truncate(&w, cut), BW_OK);
    mlen = cut;
    expect_held(&w, model, mlen);
    cr_assert_eq(bw_puts(&w, "tail"), BW_OK);
    memcpy(model + mlen, "tail", 4);
    mlen += 4;
    expect_held(&w, model, mlen);
    /* consume from the front in steps that end inside pieces */
    while (mlen - gone > 333) {
        cr_assert_eq(bw_consume(&w, 333), BW_OK);
        gone += 333;
        expect_held(&w, model + gone, mlen - gone);
    }
    /* the chunks are kept and used again after a clear */
    bw_clear(&w);
    at = bw_tell(&w);
    memset(dc, 0, sizeof dc);
    cr_assert_eq(bw_write(&w, "x", 1), BW_OK);
    mlen = chunk_job(&w, bodies, dc, model + 1);
    model[0] = 'x';
    expect_held(&w, model, mlen + 1);
    cr_expect_eq(bw_tell(&w), at + mlen + 1);
    expect_sent(&w, model, mlen + 1);
    cr_expect_eq(bw_len(&w), 0);
    bw_release(&w);
    for (i = 0; i < CH_RECS; i++) cr_expect_eq(dc[i].calls, 1, "done %zu once", i);
    env_free(e);
}

Test(chunks, move_and_truncate_across_chunks)
{
    static unsigned char bodies[CH_RECS][CH_BODY];
    static unsigned char model[2 * CH_RECS * (CH_HDR + CH_BODY)];
    static donec dc[2][CH_RECS];
    env *e = env_new();
    bw_writer a, b;
    size_t alen, blen, i;
    memset(dc, 0, sizeof dc);
    for (i = 0; i < CH_RECS; i++) fill(bodies[i], CH_BODY, (unsigned)i + 7);
    mk(e, &a, M_CHAIN);
    mk(e, &b, M_CHAIN);
    alen = chunk_job(&a, bodies, dc[0], model);
    blen = chunk_job(&b, bodies, dc[1], model + alen);
    cr_assert_eq(bw_consume(&b, 20 * (CH_HDR + CH_BODY) + 3), BW_OK); /* b's head chunk moved on */
    memmove(model + alen, model + alen + 20 * (CH_HDR + CH_BODY) + 3,
            blen - 20 * (CH_HDR + CH_BODY) - 3);
    blen -= 20 * (CH_HDR + CH_BODY) + 3;
    cr_assert_eq(bw_move(&a, &b), BW_OK);
    cr_expect_eq(bw_len(&b), 0);
    expect_held(&a, model, alen + blen);
    /* b keeps its chunks and takes a new job */
    cr_assert_eq(bw_puts(&b, "again"), BW_OK);
    cr_expect_eq(bw_len(&b), 5);
    bw_release(&b);
    cr_assert_eq(bw_truncate(&a, alen - 1), BW_OK); /* back over b's pieces and more */
    expect_held(&a, model, alen - 1);
    cr_assert_eq(bw_consume(&a, 1000), BW_OK);
    expect_sent(&a, model + 1000, alen - 1 - 1000);
    for (i = 0; i < CH_RECS; i++) cr_expect_eq(dc[1][i].calls, 1, "b's done %zu", i);
    bw_release(&a);
    for (i = 0; i < CH_RECS; i++) cr_expect_eq(dc[0][i].calls, 1, "a's done %zu", i);
    env_free(e);
}

/* A done is kept beside its record (an aside at the record's place in its
 * chunk), and only for the references given one: these jobs mix them with
 * references without one, so that records with and without an aside meet
 * at every chunk boundary. Body i has a done when i % 3 == 0. */
static size_t mixed_job(bw_writer *w, unsigned char (*bodies)[CH_BODY], donec *dc,
                        unsigned char *model)
{
    return refs_job(w, bodies, dc, model, "mix", 3);
}

/* Each body with a done was told once, with the pointer and length it was
 * linked with (a consume or a truncate moved the record's own), and the
 * others never. */
static void expect_dones(const donec *dc, unsigned char (*bodies)[CH_BODY])
{
    size_t i;
    for (i = 0; i < CH_RECS; i++) {
        if (i % 3 != 0) {
            cr_expect_eq(dc[i].calls, 0, "body %zu has no done", i);
            continue;
        }
        cr_expect_eq(dc[i].calls, 1, "done %zu once", i);
        cr_expect(dc[i].data == bodies[i] && dc[i].n == CH_BODY, "done %zu as linked", i);
    }
}

Test(chunks, done_and_plain_references_mixed_across_chunks)
{
    static unsigned char bodies[CH_RECS][CH_BODY];
    static unsigned char model[CH_RECS * (CH_HDR + CH_BODY)];
    static donec dc[CH_RECS];
    const size_t rec = CH_HDR + CH_BODY;
    unsigned char patch[2 * (CH_HDR + CH_BODY)];
    env *e = env_new();
    bw_writer w;
    size_t mlen, i;
    memset(dc, 0, sizeof dc);
    for (i = 0; i < CH_RECS; i++) fill(bodies[i], CH_BODY, (unsigned)i + 3);
    mk(e, &w, M_CHAIN);
    mlen = mixed_job(&w, bodies, dc, model);
    cr_expect(bw_iovec(&w, NULL, 0) >= 2 * CH_RECS, "a piece a header (or two), one a body");
    expect_held(&w, model, mlen);
    /* a patch over bodies 99 (a done) to 101 owns them: 99's done is told */
    memset(patch, 'P', sizeof patch);
    cr_assert_eq(bw_patch(&w, 99 * rec + CH_HDR + 30, patch, sizeof patch), BW_OK);
    memcpy(model + 99 * rec + CH_HDR + 30, patch, sizeof patch);
    cr_expect_eq(dc[99].calls, 1, "an owned reference is told at once");
    expect_held(&w, model, mlen);
    /* truncate into the middle of body 450 (a done), consume into 30's */
    cr_assert_eq(bw_truncate(&w, 450 * rec + CH_HDR + 11), BW_OK);
    mlen = 450 * rec + CH_HDR + 11;
    for (i = 451; i < CH_RECS; i++) cr_expect_eq(dc[i].calls, i % 3 == 0, "cut %zu", i);
    cr_expect_eq(dc[450].calls, 0, "part of 450 is held");
    cr_assert_eq(bw_consume(&w, 30 * rec + CH_HDR + 5), BW_OK);
    for (i = 0; i < 30; i++) cr_expect_eq(dc[i].calls, i % 3 == 0, "consumed %zu", i);
    cr_expect_eq(dc[30].calls, 0, "part of 30 is held");
    expect_held(&w, model + 30 * rec + CH_HDR + 5, mlen - 30 * rec - CH_HDR - 5);
    bw_release(&w);
    expect_dones(dc, bodies); /* 99's not again */
    env_free(e);
}

/* A moved reference takes its done to its record's new place: the source
 * writes its chunks over again with a job of its own, and each done is
 * told once, to the one who linked it. */
Test(chunks, moved_done_references_keep_their_done)
{
    static unsigned char bodies[CH_RECS][CH_BODY];
    static unsigned char model[CH_RECS * (CH_HDR + CH_BODY) + 100];
    static unsigned char other[CH_RECS * (CH_HDR + CH_BODY)];
    static donec dc[CH_RECS], dc2[CH_RECS];
    const size_t rec = CH_HDR + CH_BODY, gone = 7 * (CH_HDR + CH_BODY) + 3;
    env *e = env_new();
    bw_writer a, b;
    size_t alen, blen, i;
    memset(dc, 0, sizeof dc);
    memset(dc2, 0, sizeof dc2);
    for (i = 0; i < CH_RECS; i++) fill(bodies[i], CH_BODY, (unsigned)i + 5);
    mk(e, &a, M_CHAIN);
    mk(e, &b, M_CHAIN);
    cr_assert_eq(bw_puts(&a, "a's own "), BW_OK); /* a's records start elsewhere than b's */
    cr_assert_eq(bw_append_ref(&a, bodies[0], 3, NULL, NULL), BW_OK);
    memcpy(model, "a's own ", 8);
    memcpy(model + 8, bodies[0], 3);
    alen = 11;
    blen = mixed_job(&b, bodies, dc, model + alen);
    cr_assert_eq(bw_consume(&b, gone), BW_OK); /* b's records from its head's 15th */
    memmove(model + alen, model + alen + gone, blen - gone);
    blen -= gone;
    cr_assert_eq(bw_move(&a, &b), BW_OK);
    cr_expect_eq(bw_len(&b), 0);
    expect_held(&a, model, alen + blen);
    /* b writes its chunks over again, asides and all */
    (void)mixed_job(&b, bodies, dc2, other);
    bw_release(&b);
    expect_dones(dc2, bodies);
    for (i = 0; i < CH_RECS; i++)
        cr_expect_eq(dc[i].calls, i < 7 && i % 3 == 0, "done %zu: only the consumed told", i);
    cr_assert_eq(bw_truncate(&a, alen + blen - 2 * rec - 20), BW_OK); /* back into body 597 */
    cr_expect_eq(dc[597].calls, 0, "part of 597 is held");
    cr_expect_eq(dc[598].calls, 0, "598 has no done");
    expect_held(&a, model, alen + blen - 2 * rec - 20);
    bw_release(&a);
    expect_dones(dc, bodies);
    env_free(e);
}
