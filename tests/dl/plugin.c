/* SPDX-License-Identifier: MIT */
/* plugin.c - a plugin that embeds bufwriter instead of linking the shared
 * library, built two ways by run.sh:
 *   -DPLUGIN_SINGLE  the single header, with BUFWRITER_IMPLEMENTATION here;
 *   otherwise        bufwriter.h, linked with libbufwriter.a (-fPIC objects).
 * Neither is -z nodelete: dlclose unmaps the plugin and the bufwriter copy
 * in it. plugin_work writes a line through a writer and rents and returns
 * blocks on the calling thread, so that thread gets a cache and the
 * library's thread-exit cleanup is armed. Returns 0 when all of it worked. */
#ifdef PLUGIN_SINGLE
#  define BUFWRITER_IMPLEMENTATION
#endif
#include "bufwriter.h"

#include <string.h>

__attribute__((visibility("default"))) int plugin_work(void);

int plugin_work(void)
{
    bw_pool *pool = bw_pool_shared();
    bw_writer w;
    size_t cap = 0;
    int i, ok = pool != NULL;
    if (ok && bw_init(&w, pool, 0) == BW_OK) {
        ok = bw_printf(&w, "plugin line %d\n", 1) == BW_OK && bw_len(&w) == 14 &&
             memcmp(bw_data(&w), "plugin line 1\n", 14) == 0;
        bw_release(&w);
    } else {
        ok = 0;
    }
    /* The returns fill the thread's cache: the exit cleanup has blocks. */
    for (i = 0; i < 4 && ok; i++) {
        void *b = bw_pool_rent(pool, 64, &cap);
        if (b == NULL || cap < 64) return 1;
        memset(b, 0x5a, cap);
        ok = bw_pool_return(pool, b, cap) == BW_OK;
    }
    return ok ? 0 : 1;
}
