/* SPDX-License-Identifier: MIT */
/* c89_includer.c - a C89 or C99 project (cJSON builds with -std=c89
 * -pedantic) includes bufwriter.h: the declarations and the inline writes
 * compile warning-free and give the right bytes. Linked with the
 * implementation built as C11 (impl.c). */
#include <stdio.h>
#include <string.h>
#include "bufwriter.h"

int main(void)
{
    bw_writer w = BW_WRITER_INIT;
    unsigned char fixed[8];
    int ok;
    bw_put_u32le(&w, 0x64636261u);
    bw_put_uvarint(&w, 300u);
    bw_printf(&w, "%d", 42);
    ok = bw_error(&w) == BW_OK && bw_len(&w) == 8 &&
         memcmp(bw_data(&w), "abcd\xac\x02" "42", 8) == 0;
    bw_release(&w);
    bw_init_fixed(&w, fixed, sizeof fixed);
    ok = ok && bw_write(&w, "123456789", 9) == BW_EFULL && bw_len(&w) == 0;
    bw_release(&w);
    if (!ok) { fputs("c89 includer: wrong bytes\n", stderr); return 1; }
    return 0;
}
