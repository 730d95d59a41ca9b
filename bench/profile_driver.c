/* profile_driver.c - small drivers for valgrind --tool=callgrind (see the
 * `profile` target): one workload per run, no google-benchmark around it.
 *   profile_driver rent N SIZE      N rent+return pairs of SIZE on the shared pool
 *   profile_driver malloc N SIZE    N malloc+free pairs
 *   profile_driver write N MIB POOL N writers of MIB MiB in 8 KiB chunks;
 *                                   POOL = shared | big (threshold 16 MiB) */
#include "../bufwriter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char src[8192];

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s rent|malloc|write N SIZE|MIB [shared|big]\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    size_t size = (size_t)atol(argv[3]);
    volatile unsigned long sink = 0;
    if (strcmp(argv[1], "rent") == 0) {
        bw_pool *p = bw_pool_shared();
        for (long i = 0; i < n; i++) {
            size_t cap;
            void *b = bw_pool_rent(p, size, &cap);
            sink += (unsigned long)(uintptr_t)b;
            bw_pool_return(p, b, cap);
        }
    } else if (strcmp(argv[1], "malloc") == 0) {
        for (long i = 0; i < n; i++) {
            void *b = malloc(size);
            sink += (unsigned long)(uintptr_t)b;
            free(b);
        }
    } else {
        bw_pool *p = NULL;
        if (argc > 4 && strcmp(argv[4], "big") == 0) {
            bw_pool_options o;
            memset(&o, 0, sizeof o);
            o.max_pooled_size = 16u << 20;
            o.max_retained_bytes = 64u << 20;
            if (bw_pool_create(&p, &o) != BW_OK) return 1;
        }
        memset(src, 7, sizeof src);
        for (long i = 0; i < n; i++) {
            bw_writer w;
            bw_init(&w, p, 0);
            for (size_t off = 0; off < (size << 20); off += sizeof src) bw_write(&w, src, sizeof src);
            sink += bw_data(&w)[bw_len(&w) - 1];
            bw_release(&w);
        }
        bw_pool_stats st;
        bw_pool_get_stats(p ? p : bw_pool_shared(), &st);
        fprintf(stderr, "backing_allocs=%llu hits=%llu rents=%llu\n",
                (unsigned long long)st.backing_allocs, (unsigned long long)st.hits,
                (unsigned long long)st.rents);
        if (p) bw_pool_destroy(p);
    }
    return (int)(sink & 0);
}
