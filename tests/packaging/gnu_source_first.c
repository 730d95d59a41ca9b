/* SPDX-License-Identifier: MIT */
/* gnu_source_first.c - _GNU_SOURCE defined before <stdio.h>, then the single
 * header's implementation. glibc then declares fopencookie's function table
 * itself, and the adapter's seek callback must have the type it takes
 * (glibc's __off64_t *: long * on 64-bit ABIs), or the assignment is an
 * incompatible-pointer-types error under -Werror, and by default on GCC 14
 * and clang 16. Builds, and the FILE* adapter writes and refuses to seek. */
#define _GNU_SOURCE 1
#include <stdio.h>
#define BUFWRITER_IMPLEMENTATION
#include "bufwriter.h"
#include <errno.h>
#include <string.h>

#if defined(__GLIBC__) && !BW_HAVE_FILE_ADAPTER
#error "glibc has fopencookie: the FILE* adapter must be there with _GNU_SOURCE first"
#endif

int main(void)
{
    bw_writer w;
    int ok, seek = -1, e = ESPIPE;
    bw_init_chain(&w, NULL);
#if BW_HAVE_FILE_ADAPTER
    {
        FILE *f = bw_fopen(&w);
        if (!f) return 1;
        fprintf(f, "%s=%d", "n", 7);
        fflush(f);
        errno = 0;
        seek = fseek(f, 0, SEEK_SET);
        e = errno;
        fclose(f);
    }
#else
    bw_puts(&w, "n=7");
#endif
    ok = seek == -1 && e == ESPIPE && bw_error(&w) == BW_OK && bw_len(&w) == 3 &&
         bw_pullup(&w) && memcmp(bw_data(&w), "n=7", 3) == 0;
    bw_release(&w);
    return ok ? 0 : 1;
}
