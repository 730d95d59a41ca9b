/* SPDX-License-Identifier: MIT */
/* test_printf.c - formatting straight into the buffer. */
#include "harness.h"

#include <locale.h>
#include <wchar.h>

static bw_writer w;

static void setup(void) { bw_init(&w, NULL, 0); }
static void teardown(void) { bw_release(&w); }

TestSuite(printf, .init = setup, .fini = teardown);

static int str_is(const char *s)
{
    return bw_len(&w) == strlen(s) && memcmp(bw_data(&w), s, strlen(s)) == 0;
}

Test(printf, formats_common_conversions)
{
    cr_assert_eq(bw_printf(&w, "%d|%u|%x|%s|%c|%.3f|%5s|%-3d|%%|%lld|%zu", -42, 7u, 255u,
                           "str", 'c', 3.14159, "ab", 1, -9000000000LL, (size_t)12), BW_OK);
    cr_expect(str_is("-42|7|ff|str|c|3.142|   ab|1  |%|-9000000000|12"));
}

Test(printf, appends_after_existing_bytes)
{
    bw_puts(&w, "a=");
    bw_printf(&w, "%d", 1);
    bw_printf(&w, ", b=%s", "two");
    cr_expect(str_is("a=1, b=two"));
}

Test(printf, empty_output)
{
    cr_expect_eq(bw_printf(&w, "%s", ""), BW_OK);
    cr_expect_eq(bw_len(&w), 0);
}

Test(printf, grows_for_long_output)
{
    char big[5000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = 0;
    bw_puts(&w, "x");
    cr_assert_eq(bw_capacity(&w), 512);
    cr_assert_eq(bw_printf(&w, "<%s>", big), BW_OK);
    cr_expect_eq(bw_len(&w), 1 + 4999 + 2);
    cr_expect_eq(bw_data(&w)[0], 'x');
    cr_expect_eq(bw_data(&w)[1], '<');
    cr_expect_eq(bw_data(&w)[5000], 'q');
    cr_expect_eq(bw_data(&w)[5001], '>');
    cr_expect_geq(bw_capacity(&w), 5002 + 1);
}

Test(printf, exact_fit_boundary)
{
    /* Output formats on the stack (256 bytes with the NUL) or, longer, in a
     * second pass, and is then written: the NUL never needs room in the
     * writer. 255, 256 and 257 characters cross the stack buffer's edge;
     * 512 fill the default 512-byte first block exactly; 513 grow. */
    static const size_t lens[] = {255, 256, 257, 512, 513};
    static const size_t caps[] = {512, 512, 512, 512, 1024};
    char s[514];
    size_t i;
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        memset(s, 'a', lens[i]);
        s[lens[i]] = 0;
        cr_assert_eq(bw_printf(&w, "%s", s), BW_OK);
        cr_expect(str_is(s), "%zu characters", lens[i]);
        cr_expect_eq(bw_capacity(&w), caps[i], "%zu characters: capacity %zu", lens[i],
                     bw_capacity(&w));
        bw_release(&w);
    }
}

Test(printf, vprintf_with_growth)
{
    int i;
    for (i = 0; i < 2000; i++) cr_assert_eq(vp(&w, "%04d,", i), BW_OK);
    cr_expect_eq(bw_len(&w), 2000 * 5);
    cr_expect(memcmp(bw_data(&w) + 5 * 1234, "1234,", 5) == 0);
}

Test(printf, encoding_error_is_einval_nothing_committed)
{
    /* In the C locale a wide character above 0x7f cannot be converted:
     * vsnprintf fails with EILSEQ. */
    static const wchar_t bad[] = {0x263a, 0};
#ifdef _WIN32
    /* MinGW's vsnprintf converts it to something: no error to see. */
    return;
#endif
    setlocale(LC_ALL, "C");
    bw_puts(&w, "keep");
    cr_expect_eq(bw_printf(&w, "%ls", bad), BW_EINVAL);
    cr_expect(str_is("keep"));
    cr_expect_eq(bw_error(&w), BW_EINVAL);
    cr_expect_eq(bw_printf(&w, "%d", 1), BW_EINVAL, "sticky");
    cr_expect(str_is("keep"));
}

Test(printf, null_arguments)
{
    const char *volatile nofmt = NULL;
    cr_expect_eq(bw_printf(NULL, "%d", 1), BW_EINVAL);
    cr_expect_eq(vp(&w, nofmt), BW_EINVAL);
    cr_expect_eq(bw_error(&w), BW_EINVAL);
}

/* A fixed writer's printf fits exactly at every length around the 1 KiB
 * switch from the stack to formatting in place, after held bytes (the
 * issue's case: 2096 held, 2000 formatted, 4096 in all) and after consumed
 * room; only output that alone fills an empty buffer needs a spare byte. */
Test(printf, fixed_exact_fit_at_every_length_around_1k)
{
    static unsigned char buf[4200];
    static char want[4200];
    size_t need, held, consumed;
    for (need = 1000; need <= 1050; need++) {
        for (held = 1; held <= 2096; held = held == 1 ? 100 : held == 100 ? 2096 : 9999) {
            for (consumed = 0; consumed <= 7 && consumed <= held; consumed += 7) {
                bw_writer f;
                size_t size = held + need;
                memset(buf, '#', sizeof buf);
                cr_assert_eq(bw_init_fixed(&f, buf, size), BW_OK);
                memset(want, 'h', held);
                cr_assert_eq(bw_write(&f, want, held), BW_OK);
                if (consumed) {
                    /* consumed room ahead: the held bytes move down first */
                    cr_assert_eq(bw_consume(&f, consumed), BW_OK);
                    cr_assert_eq(bw_write(&f, want, consumed), BW_OK);
                }
                cr_expect_eq(bw_printf(&f, "%*d", (int)need, 1), BW_OK, "%zu after %zu + %zu",
                             need, held, consumed);
                memset(want + held, ' ', need - 1);
                want[held + need - 1] = '1';
                cr_expect_eq(bw_len(&f), size);
                cr_expect(memcmp(bw_data(&f), want, size) == 0, "%zu after %zu", need, held);
                cr_expect_eq(buf[size], '#', "nothing past the buffer");
                cr_expect_eq(bw_printf(&f, "x"), BW_EFULL);
            }
        }
    }
}
