// SPDX-License-Identifier: MIT
// alloc_nocount.cpp - the stub used by bench_nocount: no malloc
// interposition at all, so that malloc+free rows can be timed without the
// wrappers' cost. Counters are not reported by that binary.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "alloc_count.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
bench_alloc_counts bench_alloc_snapshot(void) { return bench_alloc_counts{0, 0}; }
void bench_alloc_note(uint64_t, uint64_t) {}
int bench_alloc_counting(void) { return 0; }
const char *bench_alloc_provider(void)
{
    Dl_info info;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    if (m != nullptr && dladdr(m, &info) != 0 && info.dli_fname != nullptr) {
        const char *slash = strrchr(info.dli_fname, '/');
        return slash ? slash + 1 : info.dli_fname;
    }
    return "unknown";
}
}
