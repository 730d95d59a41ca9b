/* SPDX-License-Identifier: MIT */
/* fuzz_io.h - the parts of fuzz_ops.c that drive the library rather than
 * model it: the input reader, the failing allocator and the test sink.
 * Included once, by fuzz_ops.c, where these sections stood; it uses that
 * file's CHECK, MIN and MAX. */

/* ------------------------------------------------------------ input -- */
/* The input, read front to back; zeros once it runs out. */
typedef struct in {
    const uint8_t *p;
    size_t n;
} in;

static unsigned u8(in *s)
{
    if (s->n == 0) return 0;
    s->n--;
    return *s->p++;
}
static size_t u16(in *s) { size_t a = u8(s); return a | (size_t)u8(s) << 8; }
static uint64_t u64(in *s)
{
    uint64_t v = 0;
    int i;
    for (i = 0; i < 8; i++) v |= (uint64_t)u8(s) << (8 * i);
    return v;
}
/* Sizes no call can satisfy next to any length. */
static size_t huge(in *s)
{
    static const size_t h[] = {SIZE_MAX, SIZE_MAX - 1, (size_t)PTRDIFF_MAX,
                               (size_t)PTRDIFF_MAX + 1, SIZE_MAX / 2 + 3};
    return h[u8(s) % 5];
}

/* ------------------------------------------------------- allocator -- */
/* Counting, with one scheduled failure. Requests above 1 GiB fail too (and
 * say so: big_now), where ASan would abort instead of returning NULL. */
static long calls, fail_at, live_blocks;
static int failed_now, big_now;
static void *fa_alloc(void *ctx, size_t size)
{
    (void)ctx;
    if (++calls == fail_at) { failed_now = 1; return NULL; }
    if (size > (1u << 30)) { big_now = 1; return NULL; }
    live_blocks++;
    return malloc(size);
}
static void *fa_realloc(void *ctx, void *b, size_t old, size_t size)
{
    (void)ctx;
    (void)old;
    if (++calls == fail_at) { failed_now = 1; return NULL; }
    if (size > (1u << 30)) { big_now = 1; return NULL; }
    return realloc(b, size);
}
static void fa_free(void *ctx, void *b, size_t size)
{
    (void)ctx;
    (void)size;
    live_blocks--;
    free(b);
}

/* FUZZ_TRACE=1 in the environment prints every operation (stderr). */
static int tracing = -1;
#define TRACE(...) \
    do { if (tracing) fprintf(stderr, __VA_ARGS__); } while (0)

/* ------------------------------------------------------------ sink -- */
/* Each call takes the next script byte b: < 128 take all; < 192 a short
 * count (1..n); < 224 -1/EINTR (at most 3 in a row, then take all); < 240
 * -1 with EPIPE or EAGAIN; else broken: 0, n + 1 or -2. What it took waits
 * in rcv until the harness checks it, after the operation. */
typedef struct sinkst {
    unsigned char script[SCRIPT];
    unsigned at, eintr;
    unsigned char *rcv;
    size_t n, cap;
    long calls, fails, after_fail;
    int err_no; /* the errno the failure must leave */
} sinkst;

static ptrdiff_t sink(void *ctx, const void *data, size_t n)
{
    sinkst *k = (sinkst *)ctx;
    unsigned b = k->script[k->at++ % SCRIPT];
    size_t take = n;

    CHECK(n >= 1 && n <= 4 * MAX_LEN); /* an unrepresentable size never gets here */
    CHECK(++k->calls < 100000);        /* never a loop */
    if (k->fails) k->after_fail++;
    if (b >= 192 && b < 224 && k->eintr < 3) {
        k->eintr++;
        errno = EINTR;
        return -1;
    }
    k->eintr = 0;
    if (b >= 224) TRACE("    sink(%zu) fails (script byte %u)\n", n, b);
    if (b >= 224 && b < 240) {
        k->fails++;
        errno = k->err_no = b & 1 ? EPIPE : EAGAIN;
        return -1;
    }
    if (b >= 240) {
        k->fails++;
        k->err_no = EIO;
        errno = EAGAIN; /* the library must say EIO */
        return b % 3 == 0 ? 0 : b % 3 == 1 ? (ptrdiff_t)n + 1 : -2;
    }
    if (b >= 128) take = n - (n - 1) * (b & 63) / 64;
    TRACE("    sink(%zu) takes %zu\n", n, take);
    if (k->n + take > k->cap) {
        k->cap = MAX(k->cap * 2, k->n + take);
        k->rcv = (unsigned char *)realloc(k->rcv, k->cap);
        CHECK(k->rcv != NULL);
    }
    memcpy(k->rcv + k->n, data, take);
    k->n += take;
    return (ptrdiff_t)take;
}

