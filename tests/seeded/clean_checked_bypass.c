/* SPDX-License-Identifier: MIT */
/* Correct code that must run clean under AddressSanitizer with
 * BW_CHECKED=1 BW_BYPASS=1: a writer on a 13-byte block (bypass blocks are
 * exactly the size asked for, so not a multiple of 8). 0.1 poisoned the
 * writer's tail as a container, which overlapped the checked-mode canary's
 * shadow granule and gave a false "unknown-crash" at release. */
#include "bufwriter.h"

#include <stdio.h>

int main(void)
{
    bw_writer w;
    if (bw_init(&w, NULL, 13) != BW_OK) return 2;
    bw_puts(&w, "hello");
    bw_release(&w);
    if (bw_init(&w, NULL, 21) != BW_OK) return 2;
    bw_puts(&w, "0123456789abcdefghij");
    bw_release(&w);
    puts("clean");
    return 0;
}
