/* SPDX-License-Identifier: MIT */
/* main.c - a consumer built by CMake against the staged install (through
 * find_package(bufwriter) in cmake/, pkg_check_modules in cmake-pkgconfig/):
 * the header and the library it links are the installed ones, of one
 * version, and they work. Exits non-zero on failure. */
#include <bufwriter.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    static const unsigned char want[] = {0x01, 0x00, 0x00, 0x00, 'v', '=', '4', '2', 0xac, 0x02};
    bw_writer w = BW_WRITER_INIT;
    int ok;

    bw_put_u32le(&w, 1);
    bw_printf(&w, "v=%d", 42);
    bw_put_uvarint(&w, 300);
    ok = bw_error(&w) == BW_OK && bw_len(&w) == sizeof want &&
         memcmp(bw_data(&w), want, sizeof want) == 0 &&
         strcmp(bw_version(), BW_VERSION_STRING) == 0;
    bw_release(&w);
    printf("bufwriter %s (header %s): %s\n", bw_version(), BW_VERSION_STRING,
           ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
