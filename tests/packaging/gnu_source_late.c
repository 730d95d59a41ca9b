/* SPDX-License-Identifier: MIT */
/* gnu_source_late.c - <stdio.h> first, then _GNU_SOURCE, then the single
 * header's implementation. Too late: glibc and musl fix what their headers
 * declare at the first one, so fopencookie, the signal masks and
 * clock_gettime stay hidden under -std=c11. The implementation must stop
 * with its #error naming the fix (bufwriter 0.3 declared those functions
 * itself instead), never with an implicit declaration. run.sh compiles
 * this and expects exactly that error. */
#include <stdio.h>
#define _GNU_SOURCE 1
#define BUFWRITER_IMPLEMENTATION
#include "bufwriter.h"

int main(void)
{
    bw_writer w = BW_WRITER_INIT;
    int ok = bw_puts(&w, "n=7") == BW_OK;
    bw_release(&w);
    return ok ? 0 : 1;
}
