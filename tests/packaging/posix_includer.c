/* SPDX-License-Identifier: MIT */
/* posix_includer.c - a program that asks for a POSIX level alone
 * (_POSIX_C_SOURCE 200809L, or _XOPEN_SOURCE 700 when run.sh builds it with
 * -DBW_TEST_XOPEN), includes libc headers of its own first, then the
 * single header's implementation with BW_NO_FILE_ADAPTER, which needs only
 * POSIX (bufwriter.h, "Options"). glibc then hides MAP_ANONYMOUS and the
 * GNU calls, and the prelude comes too late to ask for them: the
 * implementation must build under -Werror all the same (bufwriter 0.4 did
 * not: 'MAP_ANONYMOUS' undeclared), and work: a small write, and a 3 MiB
 * one, whose blocks of 2 MiB and up are mapped from the kernel. */
#ifdef BW_TEST_XOPEN
#define _XOPEN_SOURCE 700
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <string.h>
#define BW_NO_FILE_ADAPTER
#define BUFWRITER_IMPLEMENTATION
#include "bufwriter.h"

#if BW_HAVE_FILE_ADAPTER
#error "BW_NO_FILE_ADAPTER leaves bw_fopen out"
#endif

int main(void)
{
    static char chunk[4096];
    bw_writer w = BW_WRITER_INIT;
    size_t i, n = (size_t)3 << 20;
    int ok = bw_printf(&w, "n=%d", 7) == BW_OK && bw_len(&w) == 3 &&
             memcmp(bw_data(&w), "n=7", 3) == 0;
    bw_release(&w);
    for (i = 0; i < sizeof chunk; i++) chunk[i] = (char)('a' + i % 26);
    for (i = 0; ok && i < n; i += sizeof chunk) ok = bw_write(&w, chunk, sizeof chunk) == BW_OK;
    ok = ok && bw_len(&w) == n;
    for (i = 0; ok && i < n; i += sizeof chunk)
        ok = memcmp((const char *)bw_data(&w) + i, chunk, sizeof chunk) == 0;
    bw_release(&w);
    if (!ok) { fputs("posix includer: wrong bytes\n", stderr); return 1; }
    return 0;
}
