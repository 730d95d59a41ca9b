/* SPDX-License-Identifier: MIT */
/* one_block.h - the set-up the pool's seeded bugs share: a default pool and
 * one block of n bytes rented from it. Exits 2 when either fails, which
 * run.sh counts as a bug not caught. */
#ifndef BW_SEEDED_ONE_BLOCK_H
#define BW_SEEDED_ONE_BLOCK_H

#include "bufwriter.h"

#include <stdlib.h>

static volatile unsigned char *rent_one(bw_pool **p, size_t n, size_t *cap)
{
    void *b;
    if (bw_pool_create(p, NULL) != BW_OK) exit(2);
    b = bw_pool_rent(*p, n, cap);
    if (b == NULL) exit(2);
    return (volatile unsigned char *)b;
}

#endif /* BW_SEEDED_ONE_BLOCK_H */
