/* SPDX-License-Identifier: MIT */
/* Seeded bug: a segmented writer's block counts one piece more than it
 * holds (what a missed decrement in the library would leave: the block
 * would never go back). Built with BW_DEBUG, bw__seg_check must name it
 * at the next segmented operation. */
#include "writer_internal.h"

int main(void)
{
    static const unsigned char body[256];
    bw_writer w;
    bw__blk *cur;
    if (bw_init_chain(&w, NULL) != BW_OK) return 2;
    bw_write(&w, "header 1: ", 10);
    bw_append_ref(&w, body, sizeof body, NULL, NULL); /* closes "header 1" */
    bw_write(&w, "header 2: ", 10);
    cur = (bw__blk *)(void *)(w.data + w.cap); /* the current block's trailer */
    cur->pieces++;                             /* the bug */
    bw_append_ref(&w, body, sizeof body, NULL, NULL);
    bw_release(&w);
    return 0;
}
