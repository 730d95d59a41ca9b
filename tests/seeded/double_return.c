/* SPDX-License-Identifier: MIT */
/* Seeded bug: give the same block back twice. */
#include "one_block.h"

int main(void)
{
    bw_pool *p;
    size_t cap;
    void *b = (void *)rent_one(&p, 64, &cap);
    bw_pool_return(p, b, cap);
    bw_pool_return(p, b, cap); /* the bug */
    bw_pool_destroy(p);
    return 0;
}
