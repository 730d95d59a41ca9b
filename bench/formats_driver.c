/* SPDX-License-Identifier: MIT */
/* formats_driver.c - examples/arrow_stream.c's record batches in steady
 * state: a plain C driver (no google-benchmark: what it counts are events,
 * not times). Writes SCHEMA, then BATCHES batches of ROWS rows each to
 * /dev/null with one writev per batch (the segmented writer, columns linked
 * by reference; -c: the contiguous writer, columns copied), on a pool of
 * its own over a counting backing allocator, and prints for the batches
 * after the first (which is the longest: the last batch's rows) backing
 * allocations, minor and major page faults, bytes
 * copied into the writer per batch (every held byte that is not the
 * caller's column memory) against the body's size.
 *
 *   formats_driver [-c] ROWS BATCHES
 *
 * Instructions per batch: callgrind on two runs (bench/Makefile, formats). */
#define ARROW_STREAM_NO_MAIN
#include "../examples/arrow_stream.c"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned long backing_allocs;

static void *count_alloc(void *ctx, size_t n)
{
    (void)ctx;
    backing_allocs++;
    return malloc(n);
}

static void *count_realloc(void *ctx, void *b, size_t old, size_t n)
{
    (void)ctx;
    (void)old;
    backing_allocs++;
    return realloc(b, n);
}

static void count_free(void *ctx, void *b, size_t n)
{
    (void)ctx;
    (void)n;
    free(b);
}

/* Held bytes outside the batch's own arrays: what the writer copied. */
static size_t copied_bytes(const bw_writer *w, const arrow_batch *b, size_t *body)
{
    static struct iovec iov[64];
    size_t n = bw_iovec(w, iov, 64), i, copied = 0;
    const void *mine[] = {b->valid, b->i32, b->i64, b->f64, b->offsets, b->chars};
    const size_t len[] = {b->cap / 8 + 1, b->cap * 4, b->cap * 8, b->cap * 8,
                          (b->cap + 1) * 4, b->str_cap + 1};
    *body = 0;
    for (i = 0; i < n && i < 64; i++) {
        const char *p = (const char *)iov[i].iov_base;
        size_t k, linked = 0;
        for (k = 0; k < 6; k++)
            if (p >= (const char *)mine[k] && p < (const char *)mine[k] + len[k]) linked = 1;
        if (linked) *body += iov[i].iov_len;
        else copied += iov[i].iov_len;
    }
    return copied;
}

int main(int argc, char **argv)
{
    bw_allocator hook = {count_alloc, count_realloc, count_free, NULL};
    bw_pool_options o = {0};
    bw_pool *pool;
    bw_writer w;
    arrow_batch b;
    struct rusage r0, r1;
    unsigned long allocs0 = 0, rows, batches, k;
    size_t copied = 0, linked = 0, body_total = 0;
    int contiguous = argc > 1 && strcmp(argv[1], "-c") == 0, fd, rc;
    if (argc != 3 + contiguous) {
        fprintf(stderr, "usage: formats_driver [-c] ROWS BATCHES\n");
        return 2;
    }
    rows = strtoul(argv[1 + contiguous], NULL, 10);
    batches = strtoul(argv[2 + contiguous], NULL, 10);
    o.allocator = &hook;
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || bw_pool_create(&pool, &o) != BW_OK || arrow_batch_init(&b, rows) != 0) return 1;
    if (contiguous) bw_init(&w, pool, 0);
    else bw_init_chain(&w, pool);
    rc = arrow_write_schema(&w);
    if (rc == BW_OK) rc = bw_write_fd(&w, fd, NULL);
    for (k = 0; rc == BW_OK && k < batches; k++) {
        size_t c, l;
        if (k == 1) { /* steady state from the second batch on */
            allocs0 = backing_allocs;
            getrusage(RUSAGE_SELF, &r0);
        }
        /* The first batch, not counted, is the longest one (the last's
         * rows: the longest "row N" strings), so the counted batches touch
         * no page of the example's own arrays, nor of the writer's blocks,
         * for the first time: the faults are the steady state's, not the
         * growing strings' first touches. */
        arrow_batch_fill(&b, (k == 0 ? batches - 1 : k) * rows, rows, SHAPE_DEMO);
        rc = arrow_write_batch(&w, &b);
        c = copied_bytes(&w, &b, &l);
        if (k >= 1) {
            copied += contiguous ? bw_len(&w) : c;
            linked += contiguous ? 0 : l;
            body_total += bw_len(&w);
        }
        if (rc == BW_OK) rc = bw_write_fd(&w, fd, NULL);
    }
    getrusage(RUSAGE_SELF, &r1);
    if (rc != BW_OK || batches < 2) {
        fprintf(stderr, "formats_driver: %s\n", rc != BW_OK ? bw_strerror(rc) : "BATCHES >= 2");
        return 1;
    }
    printf("%s, %lu rows a batch, %lu batches after the first:\n",
           contiguous ? "contiguous" : "segmented", rows, batches - 1);
    printf("  backing allocations per batch  %.3f\n",
           (double)(backing_allocs - allocs0) / (double)(batches - 1));
    printf("  page faults per batch          %.3f minor, %.3f major\n",
           (double)(r1.ru_minflt - r0.ru_minflt) / (double)(batches - 1),
           (double)(r1.ru_majflt - r0.ru_majflt) / (double)(batches - 1));
    printf("  bytes per message              %.0f (linked from the columns: %.0f)\n",
           (double)body_total / (double)(batches - 1), (double)linked / (double)(batches - 1));
    printf("  bytes copied into the writer   %.0f per batch\n",
           (double)copied / (double)(batches - 1));
    bw_release(&w);
    arrow_batch_free(&b);
    bw_pool_destroy(pool);
    close(fd);
    return 0;
}
