/* SPDX-License-Identifier: MIT */
/* alloc_count.h - per-thread allocation counters of the bench process (see
 * alloc_count.cpp, which interposes malloc and friends). */
#ifndef BENCH_ALLOC_COUNT_H
#define BENCH_ALLOC_COUNT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_alloc_counts {
    uint64_t allocs; /* successful allocation calls on this thread */
    uint64_t bytes;  /* bytes asked for by them                    */
} bench_alloc_counts;

/* This thread's counters so far. */
bench_alloc_counts bench_alloc_snapshot(void);
/* Count allocations the interposer cannot see (mmap called directly). */
void bench_alloc_note(uint64_t allocs, uint64_t bytes);
/* The file name of the library that really serves malloc
 * ("libc.so.6", "libjemalloc.so.2", "libmimalloc.so.2"). */
const char *bench_alloc_provider(void);
/* 1 in the counting binary, 0 in the stub build (bench_nocount). */
int bench_alloc_counting(void);

#ifdef __cplusplus
}
#endif

#endif
