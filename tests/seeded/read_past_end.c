/* SPDX-License-Identifier: MIT */
/* Seeded bug: read one byte past what rent handed out (past the requested
 * length in bypass mode, past the capacity when pooled). */
#include "one_block.h"

#include <stdio.h>

int main(void)
{
    bw_pool *p;
    size_t cap;
    volatile unsigned char *b = rent_one(&p, 100, &cap);
    printf("%d\n", b[cap]); /* the bug: cap is 100 in bypass mode, 128 pooled */
    bw_pool_return(p, (void *)b, cap);
    bw_pool_destroy(p);
    return 0;
}
