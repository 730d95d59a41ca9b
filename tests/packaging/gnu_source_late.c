/* SPDX-License-Identifier: MIT */
/* gnu_source_late.c - <stdio.h> first, then _GNU_SOURCE, then the single
 * header's implementation: an order real projects have (0.1 failed here with
 * "unknown type name 'cookie_io_functions_t'"). Builds, and the FILE*
 * adapter works over a segmented writer. */
#include <stdio.h>
#define _GNU_SOURCE 1
#define BUFWRITER_IMPLEMENTATION
#include "bufwriter.h"
#include <string.h>

#if defined(__GLIBC__) && !BW_HAVE_FILE_ADAPTER
#error "glibc has fopencookie: the FILE* adapter must be there in this order too"
#endif

int main(void)
{
    bw_writer w;
    FILE *f;
    int ok;
    bw_init_chain(&w, NULL);
#if BW_HAVE_FILE_ADAPTER
    f = bw_fopen(&w);
    if (!f) return 1;
    fprintf(f, "%s=%d", "n", 7);
    fclose(f);
#else
    (void)f;
    bw_puts(&w, "n=7");
#endif
    ok = bw_error(&w) == BW_OK && bw_len(&w) == 3 &&
         bw_pullup(&w) && memcmp(bw_data(&w), "n=7", 3) == 0;
    bw_release(&w);
    return ok ? 0 : 1;
}
