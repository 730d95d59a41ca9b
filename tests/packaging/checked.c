/* SPDX-License-Identifier: MIT */
/* checked.c - linked against a library built with `make CFLAGS=-DBW_DEBUG`
 * (tests/packaging/run.sh): a pool created with no option and no
 * BW_CHECKED in the environment is checked all the same, so a block given
 * back twice is reported (here to the hook, which counts it) and refused.
 * Exits 0 when it was reported once, naming bw_pool_return. */
#include "bufwriter.h"

#include <stdio.h>
#include <string.h>

static int reports;
static int named;

static void on_report(void *ctx, const char *what, const void *block, size_t size)
{
    (void)ctx;
    (void)block;
    (void)size;
    reports++;
    if (strstr(what, "bw_pool_return") != NULL) named++;
}

int main(void)
{
    bw_pool *p;
    size_t cap;
    void *b;
    bw_set_report_hook(on_report, NULL);
    if (bw_pool_create(&p, NULL) != BW_OK) return 2;
    b = bw_pool_rent(p, 64, &cap);
    if (b == NULL) return 2;
    bw_pool_return(p, b, cap);
    bw_pool_return(p, b, cap); /* reported and refused in checked mode */
    bw_pool_destroy(p);
    printf("%d report(s), %d naming bw_pool_return\n", reports, named);
    return reports == 1 && named == 1 ? 0 : 1;
}
