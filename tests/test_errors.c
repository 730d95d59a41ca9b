/* SPDX-License-Identifier: MIT */
/* test_errors.c - bad input, NULL and zero, overflow, the sticky error.
 * Every bad input gets a clear status and changes no written byte. */
#include "harness.h"

/* A writer holding "abc" on a counting pool. */
typedef struct fixture {
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
} fixture;

static void fx_init(fixture *f)
{
    f->p = fresh_pool(&f->ta, 0, 0);
    cr_assert_eq(bw_init(&f->w, f->p, 0), BW_OK);
    cr_assert_eq(bw_puts(&f->w, "abc"), BW_OK);
}

static void fx_intact(fixture *f)
{
    cr_expect_eq(bw_len(&f->w), 3);
    /* The same 16-byte block (its field: while an error is recorded
     * bw_capacity is bw_len, as no write can take more). */
    cr_expect_eq(f->w.cap, 16);
    cr_expect_eq(bw_capacity(&f->w), bw_error(&f->w) == BW_OK ? 16 : 3);
    cr_expect(memcmp(bw_data(&f->w), "abc", 3) == 0);
}

static void fx_finish(fixture *f)
{
    bw_release(&f->w);
    ta_finish(&f->ta, f->p);
}

Test(errors, strerror_for_every_code)
{
    cr_expect_str_eq(bw_strerror(BW_OK), "success");
    cr_expect(strstr(bw_strerror(BW_ENOMEM), "memory") != NULL);
    cr_expect(strstr(bw_strerror(BW_EOVERFLOW), "overflow") != NULL);
    cr_expect(strstr(bw_strerror(BW_EINVAL), "invalid") != NULL);
    cr_expect_str_eq(bw_strerror(-77), "unknown bufwriter status");
    cr_expect_str_eq(bw_strerror(5), "unknown bufwriter status");
    cr_expect(BW_ENOMEM != BW_EOVERFLOW && BW_EOVERFLOW != BW_EINVAL && BW_ENOMEM < 0 &&
              BW_EOVERFLOW < 0 && BW_EINVAL < 0);
    cr_expect_str_eq(bw_version(), BW_VERSION_STRING);
}

Test(errors, null_writer)
{
    size_t avail = 7, len = 7, cap = 7;
    cr_expect_eq(bw_init(NULL, NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_write(NULL, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_write(NULL, NULL, 0), BW_EINVAL);
    expect_typed_puts_refuse_null();
    cr_expect_eq(bw_puts(NULL, "x"), BW_EINVAL);
    cr_expect_eq(bw_reserve(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_advance(NULL, 0), BW_EINVAL);
    cr_expect_null(bw_get_span(NULL, 1, &avail));
    cr_expect_eq(avail, 0);
    cr_expect_null(bw_data(NULL));
    cr_expect_eq(bw_len(NULL), 0);
    cr_expect_eq(bw_capacity(NULL), 0);
    cr_expect_eq(bw_free_capacity(NULL), 0);
    cr_expect_eq(bw_error(NULL), BW_EINVAL);
    cr_expect_null(bw_writer_pool(NULL));
    cr_expect_null(bw_detach(NULL, &len, &cap));
    cr_expect_eq(len, 0);
    cr_expect_eq(cap, 0);
    bw_release(NULL);
    bw_clear(NULL);
}

Test(errors, write_null_source)
{
    fixture f;
    fx_init(&f);
    cr_expect_eq(bw_write(&f.w, NULL, 0), BW_OK);
    cr_expect_eq(bw_write(&f.w, "zzz", 0), BW_OK);
    cr_expect_eq(bw_error(&f.w), BW_OK);
    cr_expect_eq(bw_write(&f.w, NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_error(&f.w), BW_EINVAL);
    fx_intact(&f);
    fx_finish(&f);
}

Test(errors, puts_null)
{
    fixture f;
    fx_init(&f);
    cr_expect_eq(bw_puts(&f.w, NULL), BW_EINVAL);
    cr_expect_eq(bw_error(&f.w), BW_EINVAL);
    fx_intact(&f);
    fx_finish(&f);
}

Test(errors, advance_beyond_free_space)
{
    fixture f;
    fx_init(&f);
    cr_expect_eq(bw_advance(&f.w, 14), BW_EINVAL);
    cr_expect_eq(bw_error(&f.w), BW_EINVAL);
    fx_intact(&f);
    bw_clear(&f.w);
    cr_expect_eq(bw_error(&f.w), BW_OK);
    cr_expect_eq(bw_advance(&f.w, 16), BW_OK, "the whole free space is fine");
    cr_expect_eq(bw_advance(&f.w, SIZE_MAX), BW_EINVAL);
    cr_expect_eq(bw_len(&f.w), 16);
    fx_finish(&f);
}

Test(errors, overflow_sizes_change_nothing)
{
    size_t bad[] = {SIZE_MAX, SIZE_MAX - 2, SIZE_MAX / 2 + 1, (size_t)PTRDIFF_MAX + 1,
                    (size_t)PTRDIFF_MAX, (size_t)PTRDIFF_MAX - 2, (size_t)PTRDIFF_MAX / 2 + 2};
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fixture f;
        long allocs;
        fx_init(&f);
        allocs = atomic_load(&f.ta.calls);
        cr_expect_eq(bw_reserve(&f.w, bad[i]), BW_EOVERFLOW, "reserve(%zu)", bad[i]);
        cr_expect_eq(atomic_load(&f.ta.calls), allocs, "no allocation attempted");
        fx_intact(&f);
        cr_expect_eq(bw_error(&f.w), BW_EOVERFLOW);
        bw_clear(&f.w);
        bw_puts(&f.w, "abc");
        cr_expect_null(bw_get_span(&f.w, bad[i], NULL));
        cr_expect_eq(bw_error(&f.w), BW_EOVERFLOW);
        fx_intact(&f);
        bw_clear(&f.w);
        bw_puts(&f.w, "abc");
        /* The source is never read: the size is refused first. */
        cr_expect_eq(bw_write(&f.w, "x", bad[i]), BW_EOVERFLOW);
        fx_intact(&f);
        fx_finish(&f);
    }
}

Test(errors, sticky_error_refuses_every_write)
{
    fixture f;
    size_t avail = 9;
    fx_init(&f);
    cr_assert_eq(bw_reserve(&f.w, SIZE_MAX), BW_EOVERFLOW);
    /* Everything that writes or makes room now returns the recorded code,
     * even when the bytes would fit. */
    cr_expect_eq(bw_put_u8(&f.w, 1), BW_EOVERFLOW);
    cr_expect_eq(bw_put_u64be(&f.w, 1), BW_EOVERFLOW);
    cr_expect_eq(bw_put_uvarint(&f.w, 1), BW_EOVERFLOW);
    cr_expect_eq(bw_write(&f.w, "x", 1), BW_EOVERFLOW);
    cr_expect_eq(bw_write(&f.w, NULL, 0), BW_EOVERFLOW);
    cr_expect_eq(bw_puts(&f.w, "x"), BW_EOVERFLOW);
    cr_expect_eq(bw_printf(&f.w, "%d", 5), BW_EOVERFLOW);
    cr_expect_eq(bw_reserve(&f.w, 1), BW_EOVERFLOW);
    cr_expect_eq(bw_reserve(&f.w, 0), BW_EOVERFLOW);
    cr_expect_null(bw_get_span(&f.w, 1, &avail));
    cr_expect_eq(avail, 0);
    cr_expect_eq(bw_advance(&f.w, 1), BW_EOVERFLOW);
    /* Only the first error is kept. */
    cr_expect_eq(bw_puts(&f.w, NULL), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&f.w), BW_EOVERFLOW);
    fx_intact(&f);
    /* No room for the next write while the error is recorded: every write
     * returns it (bw_free_capacity is the fast path's end, lim). */
    cr_expect_eq(bw_free_capacity(&f.w), 0);
    cr_expect_eq(bw_capacity(&f.w), bw_len(&f.w));
    /* clear resets it; the block is kept. */
    bw_clear(&f.w);
    cr_expect_eq(bw_error(&f.w), BW_OK);
    cr_expect_eq(bw_put_u8(&f.w, 'z'), BW_OK);
    cr_expect_eq(bw_data(&f.w)[0], 'z');
    /* release and detach reset it too. */
    bw_reserve(&f.w, SIZE_MAX);
    bw_release(&f.w);
    cr_expect_eq(bw_error(&f.w), BW_OK);
    cr_expect_eq(bw_puts(&f.w, "abc"), BW_OK);
    bw_reserve(&f.w, SIZE_MAX);
    {
        size_t len, cap;
        void *b = bw_detach(&f.w, &len, &cap);
        cr_expect_eq(bw_error(&f.w), BW_OK);
        cr_expect_eq(len, 3);
        cr_expect(memcmp(b, "abc", 3) == 0, "detach hands out the intact bytes");
        bw_pool_return(f.p, b, cap);
    }
    fx_finish(&f);
}

Test(errors, reserve_zero_allocates_nothing)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer w;
    bw_init(&w, p, 0);
    cr_expect_eq(bw_reserve(&w, 0), BW_OK);
    cr_expect_eq(bw_capacity(&w), 0);
    cr_expect_eq(atomic_load(&ta.calls), 0);
    bw_release(&w);
    ta_finish(&ta, p);
}
