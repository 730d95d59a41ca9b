/* SPDX-License-Identifier: MIT */
/* report.c - format a text report with bw_printf and print it.
 *
 * printf-style formatting goes straight into the writer's buffer: no
 * temporary string, no size guessing. The buffer grows (doubling, from a
 * thread-safe pool) as the text gets longer, and errors are sticky, so the
 * whole report is checked once at the end.
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/report.c -pthread -o report
 * or against the installed library:
 *   cc -std=c11 examples/report.c $(pkg-config --cflags --libs bufwriter) -o report
 *
 * Run:  ./report
 */
#include "bufwriter.h"

#include <stdio.h>

struct item {
    const char *name;
    unsigned qty;
    double unit_price;
};

static const struct item items[] = {
    {"bolts, M6 x 20",      400,  0.06},
    {"nuts, M6",            400,  0.03},
    {"angle bracket",        24,  1.85},
    {"timber, 45 x 95 mm",   12, 11.40},
    {"wood glue, 750 ml",     1,  9.99},
};

/* Your own printf-like helper over the writer: bw_vprintf takes a va_list.
 * The format attribute lets the compiler check the arguments, as it does
 * for bw_printf. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static void row(bw_writer *w, int width, const char *fmt, ...)
{
    uint64_t start = bw_tell(w);
    va_list ap;
    va_start(ap, fmt);
    bw_vprintf(w, fmt, ap);
    va_end(ap);
    /* pad to a fixed width, measured on what was just written */
    while (bw_tell(w) - start < (uint64_t)width && bw_error(w) == BW_OK)
        bw_put_u8(w, ' ');
}

int main(void)
{
    bw_writer w = BW_WRITER_INIT;      /* empty, shared pool, no allocation */
    double total = 0;
    size_t i;
    int rc;

    bw_puts(&w, "Order 2026-0042\n");
    bw_printf(&w, "%-20s %6s %10s %10s\n", "item", "qty", "unit", "amount");
    bw_printf(&w, "%.49s\n", "-------------------------------------------------");
    for (i = 0; i < sizeof items / sizeof items[0]; i++) {
        double amount = items[i].qty * items[i].unit_price;
        total += amount;
        row(&w, 21, "%s", items[i].name);
        bw_printf(&w, "%6u %10.2f %10.2f\n", items[i].qty, items[i].unit_price, amount);
    }
    bw_printf(&w, "%-20s %28.2f\n", "total", total);
    bw_printf(&w, "%zu lines, %zu bytes so far\n", i + 4, bw_len(&w));

    rc = bw_error(&w);                 /* one check for the whole report */
    if (rc != BW_OK) {
        fprintf(stderr, "report: %s\n", bw_strerror(rc));
        bw_release(&w);
        return 1;
    }
    fwrite(bw_data(&w), 1, bw_len(&w), stdout);
    bw_release(&w);                    /* the block goes back to the pool */
    return fflush(stdout) == 0 ? 0 : 1;
}
