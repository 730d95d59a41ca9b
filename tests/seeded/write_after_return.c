/* SPDX-License-Identifier: MIT */
/* Seeded bug: write into a block after giving it back to the pool. */
#include "one_block.h"

int main(void)
{
    bw_pool *p;
    size_t cap;
    volatile unsigned char *b = rent_one(&p, 64, &cap);
    bw_pool_return(p, (void *)b, cap);
    b[3] = 1; /* the bug */
    bw_pool_destroy(p);
    return 0;
}
