/* SPDX-License-Identifier: MIT */
/* test_pad.c - bw_pad: zeros up to a multiple of an alignment, counted in
 * positions, in every mode; bad alignments, the size limit, a full fixed
 * buffer, a failing sink and a failing allocator write nothing. */
#include "harness.h"

#include <errno.h>

TestSuite(pad);

static const size_t prefixes[] = {0, 1, 7, 8, 9, 63, 64, 65, 100, 1000, 4095, 4097};
#define NPREFIX (sizeof prefixes / sizeof prefixes[0])

/* Every power of two up to BW_PAD_MAX after prefixes around each: the pad
 * is exactly the zeros to the next multiple, the output the prefix then
 * them, whatever block moves, links and sends happen on the way. */
Test(pad, pads_to_every_alignment_in_every_mode)
{
    static const unsigned char zeros[BW_PAD_MAX];
    int m;
    FOR_EACH_MODE(m) {
        size_t align, i;
        for (align = 1; align <= BW_PAD_MAX; align *= 2) {
            for (i = 0; i < NPREFIX; i++) {
                harness h;
                ref r = {0};
                size_t want = (align - prefixes[i] % align) % align;
                h_open_pattern(&h, m, prefixes[i], &r);
                cr_expect_eq(bw_pad(&h.w, align), BW_OK, "%s, %zu after %zu", mode_name[m],
                             align, prefixes[i]);
                cr_expect_eq(bw_tell(&h.w), prefixes[i] + want, "%s, %zu after %zu",
                             mode_name[m], align, prefixes[i]);
                ref_add(&r, zeros, want);
                /* and the writer goes on after it */
                cr_expect_eq(bw_put_u8(&h.w, 0x5a), BW_OK);
                ref_add(&r, "\x5a", 1);
                h_close_expecting(&h, &r, "pad");
            }
        }
    }
}

/* Arrow's shape on a segmented writer: caller memory linked by reference,
 * then the pad, in the same block's free space as the writes after it. */
Test(pad, pads_after_a_reference_in_a_segmented_writer)
{
    static const unsigned char zeros[8];
    char body[13] = "thirteen byte";
    harness h;
    ref r = {0};
    h_open(&h, M_CHAIN);
    cr_assert_eq(bw_put_u32le(&h.w, 7), BW_OK);
    cr_assert_eq(bw_append_ref(&h.w, body, sizeof body, NULL, NULL), BW_OK);
    cr_assert_eq(bw_pad(&h.w, 8), BW_OK);
    cr_expect_eq(bw_tell(&h.w), 24);
    ref_add(&r, "\x07\0\0\0", 4);
    ref_add(&r, body, sizeof body);
    ref_add(&r, zeros, 7);
    h_close_expecting(&h, &r, "reference then pad");
}

/* The position is bw_tell's: bytes consumed or sent count. */
static void counts_consumed_and_sent_each(harness *h, ref *r)
{
    (void)r;
    if (h->mode != M_SINK) cr_assert_eq(bw_consume(&h->w, 5), BW_OK);
    else cr_assert_eq(bw_flush(&h->w), BW_OK);
    cr_expect_eq(bw_len(&h->w), 0);
    cr_expect_eq(bw_pad(&h->w, 8), BW_OK);
    cr_expect_eq(bw_tell(&h->w), 8, "%s", mode_name[h->mode]);
    cr_expect_eq(bw_len(&h->w), 3, "%s", mode_name[h->mode]);
    h_close(h);
}

Test(pad, counts_consumed_and_sent_bytes)
{
    each_mode_pattern(5, counts_consumed_and_sent_each);
}

/* Not a power of two, zero, past BW_PAD_MAX: BW_EINVAL, recorded, nothing
 * written; a NULL writer is BW_EINVAL, not recorded anywhere. */
Test(pad, refuses_bad_alignments)
{
    static const size_t bad[] = {0, 3, 6, 12, 100, BW_PAD_MAX * 2, SIZE_MAX};
    size_t i;
    int m;
    cr_expect_eq(bw_pad(NULL, 8), BW_EINVAL);
    FOR_EACH_MODE(m) {
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            harness h;
            ref r = {0};
            h_open_pattern(&h, m, 3, &r);
            cr_expect_eq(bw_pad(&h.w, opaque(bad[i])), BW_EINVAL, "%s, %zu", mode_name[m], bad[i]);
            cr_expect_eq(bw_error(&h.w), BW_EINVAL);
            cr_expect_eq(bw_tell(&h.w), 3);
            /* recorded: a good pad is refused with it */
            cr_expect_eq(bw_pad(&h.w, 8), BW_EINVAL);
            cr_expect_eq(bw_tell(&h.w), 3);
            h_close_expecting(&h, &r, "bad alignment");
        }
    }
}

/* A pad the size limit cannot take, short and long: BW_ELIMIT, nothing of
 * it written; one that ends exactly at the limit succeeds. */
Test(pad, stops_at_the_size_limit)
{
    static const size_t aligns[] = {16, 4096};
    size_t i;
    int m;
    FOR_EACH_MODE(m) {
        for (i = 0; i < 2; i++) {
            harness h;
            ref r = {0};
            h_open_pattern(&h, m, 1, &r);
            cr_assert_eq(bw_set_limit(&h.w, aligns[i] - 1), BW_OK);
            cr_expect_eq(bw_pad(&h.w, aligns[i]), BW_ELIMIT, "%s, %zu", mode_name[m], aligns[i]);
            cr_expect_eq(bw_error(&h.w), BW_ELIMIT);
            cr_expect_eq(bw_tell(&h.w), 1);
            h_close_expecting(&h, &r, "past the limit");

            h_open_pattern(&h, m, 1, NULL);
            cr_assert_eq(bw_set_limit(&h.w, aligns[i]), BW_OK);
            cr_expect_eq(bw_pad(&h.w, aligns[i]), BW_OK, "%s, %zu", mode_name[m], aligns[i]);
            cr_expect_eq(bw_tell(&h.w), aligns[i]);
            h_close(&h);
        }
    }
}

/* A fixed buffer short of room for the pad, short and long: BW_EFULL,
 * nothing of it written (the long one is not a prefix of 64-byte writes). */
Test(pad, a_full_fixed_buffer_takes_none_of_it)
{
    static const size_t aligns[] = {16, 4096};
    size_t i;
    for (i = 0; i < 2; i++) {
        harness h;
        ref r = {0};
        h_open_ex(&h, M_FIXED, aligns[i] - 1, 0, 0);
        put_pattern_ref(&h, &r, 0, 1);
        cr_expect_eq(bw_pad(&h.w, aligns[i]), BW_EFULL, "%zu", aligns[i]);
        cr_expect_eq(bw_tell(&h.w), 1);
        h_close_expecting(&h, &r, "fixed, full");
    }
}

/* A streaming writer whose sink fails when the pad needs room: BW_EIO with
 * the sink's errno, nothing of the pad written, the held bytes kept. */
Test(pad, a_failing_sink_takes_none_of_it)
{
    static const size_t aligns[] = {128, 4096}; /* pads past the buffer's 2 free bytes */
    size_t i;
    for (i = 0; i < 2; i++) {
        harness h;
        h_open(&h, M_SINK);
        put_pattern(&h, 0, SINK_BUF - 2);
        sink_fail(&h.s, SF_ERRNO, EPIPE);
        cr_expect_eq(bw_pad(&h.w, aligns[i]), BW_EIO, "%zu", aligns[i]);
        cr_expect_eq(bw_errno(&h.w), EPIPE);
        cr_expect_eq(bw_tell(&h.w), SINK_BUF - 2);
        cr_expect_eq(bw_len(&h.w), SINK_BUF - 2);
        cr_expect(memcmp(h.s.out.d ? h.s.out.d : pattern(), pattern(), h.s.out.len) == 0);
        h_close(&h);
    }
}

/* The allocator failing when the pad needs more room than the block has
 * (contiguous: a move, short pads included from a caller's first buffer;
 * segmented: a link, undone): BW_ENOMEM, nothing of the pad written. */
Test(pad, a_failing_allocator_writes_none_of_it)
{
    static const struct {
        int mode;
        size_t param, align;
    } cases[] = {{M_CONTIG, 0, 4096}, {M_BUFFER, 50, 64}, {M_BUFFER, 50, 4096},
                 {M_CHAIN, 0, 4096}};
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        harness h;
        ref r = {0};
        int m = cases[i].mode;
        h_open_ex(&h, m, cases[i].param ? cases[i].param : default_param(m), 0, 0);
        put_pattern_ref(&h, &r, 0, 1);
        cr_assert_lt(bw_free_capacity(&h.w), cases[i].align - 1); /* it needs room */
        h_fail_from_next(&h);
        cr_expect_eq(bw_pad(&h.w, cases[i].align), BW_ENOMEM, "%s, %zu", mode_name[m],
                     cases[i].align);
        cr_expect_eq(bw_tell(&h.w), 1);
        h_fail_never(&h);
        h_close_expecting(&h, &r, "allocation failed");
    }
}
