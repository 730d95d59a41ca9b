/* SPDX-License-Identifier: MIT */
/* Seeded bug: give the same block back twice. */
#include "bufwriter.h"

int main(void)
{
    bw_pool *p;
    size_t cap;
    void *b;
    if (bw_pool_create(&p, NULL) != BW_OK) return 2;
    b = bw_pool_rent(p, 64, &cap);
    bw_pool_return(p, b, cap);
    bw_pool_return(p, b, cap); /* the bug */
    bw_pool_destroy(p);
    return 0;
}
