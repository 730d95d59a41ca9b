/* SPDX-License-Identifier: MIT */
/* Correct code that must run clean under AddressSanitizer however the
 * program and the library were built: both instrumented, only the program,
 * or only the library. (0.1 annotated the writer's tail from the inline
 * puts, so a program built with ASan over an uninstrumented library got a
 * false container-overflow at the first bw_printf after an inline put.) */
#include "bufwriter.h"

#include <stdio.h>

int main(void)
{
    bw_writer w = BW_WRITER_INIT;
    unsigned char big[5000];
    size_t room;
    char *span;
    int i;
    memset(big, 'x', sizeof big);
    for (i = 0; i < 3; i++) {
        bw_put_u32le(&w, 7);                   /* inline */
        bw_printf(&w, "line %d: %s\n", i, "ok"); /* library */
        bw_put_uvarint(&w, 300);               /* inline */
        span = (char *)bw_get_span(&w, 16, &room);
        if (span == NULL) return 2;
        memcpy(span, "spanned", 7);
        bw_advance(&w, 7);
        bw_write(&w, big, sizeof big);         /* inline, then the cold path */
        bw_put_u64be(&w, 1);
    }
    if (bw_error(&w) != BW_OK || bw_len(&w) != 3 * (4 + 11 + 2 + 7 + 5000 + 8)) return 3;
    bw_release(&w);
    puts("clean");
    return 0;
}
