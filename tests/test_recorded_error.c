/* SPDX-License-Identifier: MIT */
/* test_recorded_error.c - the error model, in every mode (bufwriter.h,
 * ERRORS): a NULL writer or source, a streaming writer without a sink, a
 * failed init, and a recorded error refusing every writing call.
 *
 * Every check runs in each mode the harness opens (harness.h): contiguous
 * (bw_init, and bw_init_buffer over a caller's first buffer), segmented,
 * streaming (a test-owned sink) and fixed (a buffer inside guard bytes). */
#define _GNU_SOURCE 1 /* pipe, fcntl, sigpending, fopencookie-based bw_fopen */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>

/* --- NULL, missing sink, failed init, the recorded error ----------------- */

Test(recorded_error, null_writer_every_function)
{
    unsigned char b[8];
    struct iovec iov[1];
    size_t n = 7, cap = 7;
    bw_writer ok = BW_WRITER_INIT;
    cr_expect_eq(bw_init(NULL, NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_init_buffer(NULL, NULL, b, sizeof b), BW_EINVAL);
    cr_expect_eq(bw_init_chain(NULL, NULL), BW_EINVAL);
    cr_expect_eq(bw_init_sink(NULL, NULL, 0, test_sink, NULL), BW_EINVAL);
    cr_expect_eq(bw_init_fd(NULL, NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_init_fixed(NULL, b, sizeof b), BW_EINVAL);
    cr_expect_eq(bw_flush(NULL), BW_EINVAL);
    cr_expect_eq(bw_reserve(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_advance(NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_write(NULL, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_write(NULL, NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_puts(NULL, "x"), BW_EINVAL);
    cr_expect_eq(bw_printf(NULL, "%d", 1), BW_EINVAL);
    cr_expect_eq(vp(NULL, "%d", 1), BW_EINVAL);
    expect_typed_puts_refuse_null();
    cr_expect_eq(bw_put_hex(NULL, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_patch(NULL, 0, "x", 1), BW_EINVAL);
    cr_expect_eq(bw_patch_u8(NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_patch_u32le(NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_patch_i64be(NULL, 0, 1), BW_EINVAL);
    cr_expect_eq(bw_patch_f64le(NULL, 0, 1.0), BW_EINVAL);
    cr_expect_eq(bw_truncate(NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_copy_out(NULL, 0, b, 0), BW_EINVAL);
    cr_expect_eq(bw_consume(NULL, 0), BW_EINVAL);
    cr_expect_eq(bw_append_writer(NULL, &ok), BW_EINVAL);
    cr_expect_eq(bw_append_writer(&ok, NULL), BW_EINVAL);
    cr_expect_eq(bw_write_fd(NULL, 1, &n), BW_EINVAL);
    cr_expect_null(bw_get_span(NULL, 1, &n));
    cr_expect_eq(n, 0, "avail 0");
    cr_expect_null(bw_data(NULL));
    cr_expect_null(bw_pullup(NULL));
    cr_expect_null(bw_cstr(NULL));
    cr_expect_eq(bw_iovec(NULL, iov, 1), 0);
    cr_expect_eq(bw_len(NULL), 0);
    cr_expect_eq(bw_capacity(NULL), 0);
    cr_expect_eq(bw_free_capacity(NULL), 0);
    cr_expect_eq(bw_tell(NULL), 0);
    cr_expect_eq(bw_error(NULL), BW_EINVAL);
    cr_expect_null(bw_writer_pool(NULL));
    n = 7;
    cr_expect_null(bw_detach(NULL, &n, &cap));
    cr_expect_eq(n, 0);
    cr_expect_eq(cap, 0);
    bw_release(NULL);
    bw_clear(NULL);
    bw_clear_error(NULL);
    bw_release(&ok);
}

Test(recorded_error, null_sources_are_einval_recorded)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        h_open_holding(&h, m, "abc");
        cr_expect_eq(bw_put_hex(&h.w, NULL, 2), BW_EINVAL, "%s", mode_name[m]);
        cr_expect_eq(bw_error(&h.w), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_write(&h.w, NULL, 2), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_puts(&h.w, NULL), BW_EINVAL);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_patch(&h.w, 0, NULL, 1), BW_EINVAL);
        bw_clear_error(&h.w);
        expect_output(&h, "abc", 3, "nothing changed");
        h_close(&h);
    }
}

Test(recorded_error, failed_init_leaves_a_valid_writer_of_that_mode)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    unsigned char b[16];
    h_open(&h, M_CONTIG);

    /* bw_init. */
    cr_expect_eq(bw_init(&w, h.p, opaque((size_t)PTRDIFF_MAX + 1)), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW, "recorded");
    cr_expect_eq(bw_len(&w), 0);
    cr_expect_eq(bw_puts(&w, "no"), BW_EOVERFLOW, "refused while recorded");
    bw_clear_error(&w);
    cr_expect_eq(bw_write(&w, pattern(), 5000), BW_OK);
    cr_expect_not_null(bw_data(&w), "contiguous");
    cr_expect(bw_writer_pool(&w) == h.p);
    bw_release(&w);

    h_fail_from_next(&h);
    cr_expect_eq(bw_init(&w, h.p, 100), BW_ENOMEM);
    cr_expect_eq(bw_error(&w), BW_ENOMEM);
    cr_expect_eq(bw_capacity(&w), 0);
    h_fail_never(&h);
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "ok"), BW_OK);
    bw_release(&w);

    cr_expect_eq(bw_init_buffer(&w, h.p, NULL, 10), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_release(&w);
    cr_expect_eq(bw_init_buffer(&w, h.p, b, 0), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    cr_expect_eq(bw_puts(&w, "ok"), BW_OK);
    bw_release(&w);

    cr_expect_eq(bw_init_sink(&w, h.p, opaque((size_t)PTRDIFF_MAX + 1), test_sink, &h.s), BW_EOVERFLOW);
    cr_expect_eq(bw_error(&w), BW_EOVERFLOW);
    cr_expect(bw_writer_pool(&w) == h.p);
    bw_release(&w);

    cr_expect_eq(bw_init_fixed(&w, NULL, 5), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    cr_expect_null(bw_writer_pool(&w), "fixed");
    bw_release(&w);

    h_close(&h);
}

Test(recorded_error, recorded_error_refuses_every_writing_call_and_changes_nothing)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h, other;
        size_t avail = 99, n = 99;
        long calls, sends;
        uint64_t tell;
        int e, fds[2];
        cr_assert_eq(pipe(fds), 0);
        h_open(&h, m);
        h_open(&other, M_CONTIG);
        cr_assert_eq(bw_puts(&other.w, "other"), BW_OK);
        cr_assert_eq(bw_write(&h.w, "0123456789", 10), BW_OK);
        record_einval(&h);
        e = bw_error(&h.w);
        calls = h_calls(&h);
        sends = h.s.calls;
        tell = bw_tell(&h.w);
        cr_expect_eq(bw_write(&h.w, "x", 1), e, "%s", mode_name[m]);
        cr_expect_eq(bw_write(&h.w, "x", 0), e);
        cr_expect_eq(bw_write(&h.w, pattern(), 5000), e);
        cr_expect_eq(bw_put_u8(&h.w, 1), e);
        cr_expect_eq(bw_put_u16be(&h.w, 1), e);
        cr_expect_eq(bw_put_u32le(&h.w, 1), e);
        cr_expect_eq(bw_put_i64be(&h.w, 1), e);
        cr_expect_eq(bw_put_f64le(&h.w, 1.0), e);
        cr_expect_eq(bw_put_uvarint(&h.w, 300), e);
        cr_expect_eq(bw_put_svarint(&h.w, -3), e);
        cr_expect_eq(bw_put_dec_u64(&h.w, 12), e);
        cr_expect_eq(bw_put_dec_i64(&h.w, -12), e);
        cr_expect_eq(bw_put_hex(&h.w, "ab", 2), e);
        cr_expect_eq(bw_puts(&h.w, "abc"), e);
        cr_expect_eq(bw_printf(&h.w, "%d", 5), e);
        cr_expect_eq(vp(&h.w, "%s", "abc"), e);
        cr_expect_eq(bw_reserve(&h.w, 1), e);
        cr_expect_eq(bw_reserve(&h.w, 100000), e);
        cr_expect_null(bw_get_span(&h.w, 1, &avail));
        cr_expect_eq(avail, 0);
        /* No write can take anything: the free capacity is 0 (as span's
         * avail), and the capacity is what is held. */
        cr_expect_eq(bw_free_capacity(&h.w), 0, "%s", mode_name[m]);
        cr_expect_eq(bw_capacity(&h.w), bw_len(&h.w));
        cr_expect_eq(bw_advance(&h.w, 0), e);
        cr_expect_eq(bw_flush(&h.w), e);
        cr_expect_eq(bw_write_fd(&h.w, fds[1], &n), e);
        cr_expect_eq(bw_append_writer(&h.w, &other.w), e);
        cr_expect_eq(bw_append_writer(&h.w, &h.w), e);
        cr_expect_null(bw_pullup(&h.w));
        cr_expect_null(bw_cstr(&h.w));
        cr_expect_eq(bw_error(&h.w), e, "%s: still the first error", mode_name[m]);
        cr_expect_eq(bw_tell(&h.w), tell);
        cr_expect_eq(h_calls(&h), calls, "%s: no allocation", mode_name[m]);
        cr_expect_eq(h.s.calls, sends, "nothing sent");
        cr_expect(pipe_is_empty(fds[0]), "nothing written to the fd");
        expect_output(&h, "0123456789", 10, "refused calls");
        /* What still works: patch and truncate (rolling a frame back), the
         * error staying recorded. */
        cr_expect_eq(bw_patch(&h.w, 0, "Z", 1), BW_OK, "%s: patch", mode_name[m]);
        cr_expect_eq(bw_patch_u16le(&h.w, 1, 0x3231), BW_OK);
        cr_expect_eq(bw_truncate(&h.w, tell), BW_OK, "%s: truncate", mode_name[m]);
        cr_expect_eq(bw_patch(&h.w, 0, "0", 1), BW_OK);
        expect_output(&h, "0123456789", 10, "patched back");
        cr_expect_eq(bw_truncate(&h.w, 10), BW_OK);
        cr_expect_eq(bw_error(&h.w), e);
        cr_expect_eq(bw_put_u8(&h.w, 1), e, "%s: still refused after truncate", mode_name[m]);
        cr_expect_eq(bw_consume(&h.w, 1), BW_OK, "%s: consume", mode_name[m]);
        expect_output(&h, "123456789", 9, "consume with an error");
        cr_expect_eq(bw_error(&h.w), e);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "clear_error forgets");
        cr_expect_eq(bw_puts(&h.w, "!"), BW_OK);
        expect_output(&h, "123456789!", 10, "writing again");
        record_einval(&h);
        bw_clear(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "clear forgets");
        cr_expect_eq(bw_len(&h.w), 0);
        cr_expect_eq(bw_puts(&h.w, "a"), BW_OK);
        record_einval(&h);
        bw_release(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "release forgets");
        if (m != M_FIXED) {
            size_t cap = 0;
            void *b;
            cr_expect_eq(bw_puts(&h.w, "a"), BW_OK);
            record_einval(&h);
            b = bw_detach(&h.w, NULL, &cap);
            cr_expect_not_null(b, "%s: detach works with an error", mode_name[m]);
            cr_expect_eq(bw_error(&h.w), BW_OK, "detach forgets");
            if (b) bw_pool_return(bw_writer_pool(&h.w), b, cap);
        }
        close_pair(fds);
        h_close(&other);
        h_close(&h);
    }
}

Test(recorded_error, clear_error_forgets_any_code)
{
    static const int codes[] = {BW_ENOMEM, BW_EOVERFLOW, BW_EINVAL, BW_EIO, BW_EFULL};
    size_t k;
    for (k = 0; k < 5; k++) {
        harness h;
        int m = codes[k] == BW_EFULL ? M_FIXED : codes[k] == BW_EIO ? M_SINK : M_CONTIG;
        h_open_ex(&h, m, m == M_FIXED ? 4 : default_param(m), 0, 0);
        cr_assert_eq(bw_puts(&h.w, "ab"), BW_OK);
        switch (codes[k]) {
        case BW_ENOMEM: h_fail_from_next(&h); bw_reserve(&h.w, 100000); h_fail_never(&h); break;
        case BW_EOVERFLOW: bw_reserve(&h.w, SIZE_MAX); break;
        case BW_EINVAL: record_einval(&h); break;
        case BW_EIO: h.s.budget = 0; bw_flush(&h.w); h.s.budget = SIZE_MAX; break;
        default: bw_puts(&h.w, "xyz"); break;
        }
        cr_expect_eq(bw_error(&h.w), codes[k]);
        bw_clear_error(&h.w);
        cr_expect_eq(bw_error(&h.w), BW_OK, "%s forgotten", bw_strerror(codes[k]));
        cr_expect_eq(bw_puts(&h.w, "c"), BW_OK);
        expect_output(&h, "abc", 3, "held bytes kept");
        h_close(&h);
    }
}

Test(recorded_error, streaming_without_sink_records_einval_never_calls_null)
{
    harness h;
    bw_writer w = BW_WRITER_INIT;
    int rc;
    h_open(&h, M_CONTIG);
    cr_expect_eq(bw_init_sink(&w, h.p, 64, NULL, NULL), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    rc = bw_write(&w, pattern(), 100);
    cr_expect_eq(rc, BW_EINVAL, "no sink to send to");
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    bw_clear_error(&w);
    bw_clear(&w);
    cr_expect_eq(bw_write(&w, "abc", 3), BW_OK, "what fits the buffer is held");
    cr_expect_eq(bw_flush(&w), BW_EINVAL);
    bw_release(&w);
    h_close(&h);
}
