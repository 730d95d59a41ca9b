/* fuzz_ops.c - differential fuzzing of the writer and the pool (libFuzzer).
 *
 * The input is decoded into a stream of API operations over two writers and
 * a pool, applied both to bufwriter and to a trivially correct reference
 * written here (a realloc'd byte array and a recorded status per writer).
 * After EVERY operation the lengths, the bytes and the statuses agree, and
 * every capacity is the growth rule's (a power of two, or the caller's
 * buffer). The input also picks the pool's options and which backing
 * allocation fails; a failure must surface as BW_ENOMEM with nothing
 * changed, and everything must balance to zero at the end.
 *
 *   make fuzz            run it (FUZZ_TIME seconds, default 600)
 *   make test            replays tests/fuzz/corpus and tests/fuzz/crashes
 *
 * Sizes are clamped per operation (4 KiB) and per writer (64 KiB), and an
 * input runs at most 500 operations, so that comparing every byte after
 * every operation stays cheap; the pool's thresholds are small to match
 * (256 B, 2 KiB, 16 KiB), so every path above and below them is crossed. */
#include "bufwriter.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OP 4096
#define MAX_LEN (64u << 10)
#define NBLOCKS 8

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "fuzz_ops: check failed at %s:%d: %s\n", __FILE__, \
                    __LINE__, #c);                                            \
            abort();                                                          \
        }                                                                     \
    } while (0)

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

/* Counting allocator with one scheduled failure. */
static long calls, fail_at, live_blocks, failed_now;
static void *fa_alloc(void *ctx, size_t size)
{
    (void)ctx;
    if (++calls == fail_at) { failed_now = 1; return NULL; }
    live_blocks++;
    return malloc(size);
}
static void *fa_realloc(void *ctx, void *b, size_t old, size_t size)
{
    (void)ctx;
    (void)old;
    if (++calls == fail_at) { failed_now = 1; return NULL; }
    return realloc(b, size);
}
static void fa_free(void *ctx, void *b, size_t size)
{
    (void)ctx;
    (void)size;
    live_blocks--;
    free(b);
}

/* The reference writer. */
typedef struct model {
    unsigned char *d;
    size_t len, cap;
    int err;
} model;

static void m_append(model *m, const void *src, size_t n)
{
    if (n == 0) return;
    if (m->len + n > m->cap) { /* doubling: keeps the reference cheap under ASan */
        m->cap = m->cap ? m->cap : 256;
        while (m->cap < m->len + n) m->cap *= 2;
        m->d = (unsigned char *)realloc(m->d, m->cap);
        CHECK(m->d != NULL);
    }
    memcpy(m->d + m->len, src, n);
    m->len += n;
}

typedef struct pair {
    bw_writer w;
    model m;
    unsigned char inline_buf[256];
} pair;

/* What the call returned against what the reference expects: BW_OK means
 * the model applies the change (done by the caller); ENOMEM is accepted
 * only when the injected failure happened during the call. */
static int agree(pair *x, int rc, int expect)
{
    if (x->m.err != BW_OK) {
        CHECK(rc == x->m.err);
        return 0;
    }
    if (rc == BW_ENOMEM && expect == BW_OK) {
        CHECK(failed_now);
        x->m.err = BW_ENOMEM;
        return 0;
    }
    CHECK(rc == expect);
    if (rc != BW_OK) x->m.err = rc;
    return rc == BW_OK;
}

static int is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static void compare(pair *x)
{
    bw_writer *w = &x->w;
    CHECK(bw_len(w) == x->m.len);
    CHECK(bw_error(w) == x->m.err);
    CHECK(bw_capacity(w) >= bw_len(w));
    if (x->m.len) CHECK(memcmp(bw_data(w), x->m.d, x->m.len) == 0);
    if (bw_capacity(w) != 0 && bw_data(w) != x->inline_buf) CHECK(is_pow2(bw_capacity(w)));
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) b[i] = (unsigned char)(i * 31u + seed);
}

static unsigned char scratch[MAX_OP + 16];

/* Overflow-size candidates: always unrepresentable next to any length. */
static size_t huge(in *s)
{
    static const size_t h[] = {SIZE_MAX, SIZE_MAX - 1, (size_t)PTRDIFF_MAX,
                               (size_t)PTRDIFF_MAX + 1, SIZE_MAX / 2 + 1};
    return h[u8(s) % 5];
}

static void op_writer(in *s, pair *x, bw_pool *pool)
{
    bw_writer *w = &x->w;
    unsigned op = u8(s) % 16;
    int rc;
    size_t n, room = x->m.len < MAX_LEN ? MAX_LEN - x->m.len : 0;

    failed_now = 0;
    switch (op) {
    case 0: /* write */
        n = u16(s) % (MAX_OP + 1);
        if (n > room) n = room;
        fill(scratch, n, u8(s));
        rc = bw_write(w, scratch, n);
        if (agree(x, rc, BW_OK)) m_append(&x->m, scratch, n);
        break;
    case 1: { /* fixed-width puts */
        unsigned char b[8];
        uint64_t v = u64(s);
        unsigned k = u8(s) % 9;
        size_t i, sz = k == 0 ? 1 : k <= 2 ? 2 : k <= 4 ? 4 : 8;
        switch (k) {
        case 0: rc = bw_put_u8(w, (uint8_t)v); break;
        case 1: rc = bw_put_u16le(w, (uint16_t)v); break;
        case 2: rc = bw_put_u16be(w, (uint16_t)v); break;
        case 3: rc = bw_put_u32le(w, (uint32_t)v); break;
        case 4: rc = bw_put_u32be(w, (uint32_t)v); break;
        case 5: rc = bw_put_u64le(w, v); break;
        case 6: rc = bw_put_u64be(w, v); break;
        case 7: { double d; memcpy(&d, &v, 8); rc = bw_put_f64le(w, d); break; }
        default: { double d; memcpy(&d, &v, 8); rc = bw_put_f64be(w, d); break; }
        }
        for (i = 0; i < sz; i++) {
            int le = k == 1 || k == 3 || k == 5 || k == 7;
            b[i] = (unsigned char)(v >> (8 * (le ? i : sz - 1 - i)));
        }
        if (agree(x, rc, BW_OK)) m_append(&x->m, b, sz);
        break;
    }
    case 2: { /* varints */
        unsigned char b[10];
        uint64_t v = u64(s) >> (u8(s) % 64), u;
        size_t k = 0;
        int sgn = (int)(u8(s) & 1);
        rc = sgn ? bw_put_svarint(w, (int64_t)v) : bw_put_uvarint(w, v);
        u = sgn ? ((v << 1) ^ (0 - (v >> 63))) : v;
        while (u >= 0x80) { b[k++] = (unsigned char)(u | 0x80); u >>= 7; }
        b[k++] = (unsigned char)u;
        if (agree(x, rc, BW_OK)) m_append(&x->m, b, k);
        break;
    }
    case 3: { /* puts, and NULL */
        static const char *const strs[] = {"", "a", "hello, world", NULL};
        const char *str = strs[u8(s) % 4];
        rc = bw_puts(w, str);
        if (agree(x, rc, str ? BW_OK : BW_EINVAL)) m_append(&x->m, str, strlen(str));
        break;
    }
    case 4: { /* printf with safe formats */
        char b[128];
        int i = (int)u64(s), len;
        unsigned width = u8(s) % 100;
        len = snprintf(b, sizeof b, "[%*d|%x|%s]", (int)width, i, (unsigned)i, "str");
        rc = bw_printf(w, "[%*d|%x|%s]", (int)width, i, (unsigned)i, "str");
        if (agree(x, rc, BW_OK)) m_append(&x->m, b, (size_t)len);
        break;
    }
    case 5: { /* get_span + fill + advance (sometimes too far) */
        size_t hint = u16(s) % (MAX_OP + 1), avail = 0, k;
        unsigned char *sp;
        if (hint > room) hint = room;
        sp = (unsigned char *)bw_get_span(w, hint, &avail);
        if (!agree(x, sp ? BW_OK : bw_error(w), BW_OK)) {
            CHECK(sp == NULL && avail == 0);
            break;
        }
        CHECK(avail >= (hint ? hint : 1) && avail == bw_free_capacity(w));
        CHECK(sp == bw_data(w) + bw_len(w));
        k = u16(s);
        if ((u8(s) & 3) == 0) k = avail + 1 + k % 4; /* past the free space */
        else k %= avail + 1;
        if (k <= avail) fill(sp, k, 7);
        rc = bw_advance(w, k);
        if (agree(x, rc, k <= avail ? BW_OK : BW_EINVAL)) m_append(&x->m, sp, k);
        break;
    }
    case 6: /* reserve: fitting, growing, or unrepresentable */
        if (u8(s) & 1) {
            n = huge(s);
            rc = bw_reserve(w, n);
            agree(x, rc, BW_EOVERFLOW);
        } else {
            n = u16(s) * 16;
            if (n > room) n = room;
            rc = bw_reserve(w, n);
            if (agree(x, rc, BW_OK)) CHECK(bw_free_capacity(w) >= n);
        }
        break;
    case 7: /* clear */
        bw_clear(w);
        x->m.len = 0;
        x->m.err = BW_OK;
        break;
    case 8: { /* detach + return */
        size_t len, cap;
        void *b = bw_detach(w, &len, &cap);
        if (b == NULL && x->m.len != 0) { /* an inline writer's copy failed */
            CHECK(failed_now && len == 0 && bw_len(w) == x->m.len);
            if (x->m.err == BW_OK) x->m.err = BW_ENOMEM;
            break;
        }
        CHECK(len == x->m.len);
        if (len) CHECK(memcmp(b, x->m.d, len) == 0);
        CHECK(bw_pool_return(bw_writer_pool(w), b, cap) == BW_OK);
        x->m.len = 0;
        x->m.err = BW_OK;
        break;
    }
    case 9: /* release */
        bw_release(w);
        x->m.len = 0;
        x->m.err = BW_OK;
        break;
    case 10: { /* back-patch, in range or not */
        size_t off = u16(s), k = u8(s) % 9;
        int ok = off <= x->m.len && k <= x->m.len - off;
        fill(scratch, k, u8(s));
        rc = bw_patch(w, off, scratch, k);
        if (agree(x, rc, ok || k == 0 ? BW_OK : BW_EINVAL) && k) memcpy(x->m.d + off, scratch, k);
        break;
    }
    case 11: /* write from the writer's own bytes (aliasing, maybe growing) */
        if (x->m.len == 0) break;
        {
            size_t off = u16(s) % x->m.len, k = u16(s) % (x->m.len - off + 1);
            if (k > room) k = room;
            if (k > MAX_OP) k = MAX_OP;
            memcpy(scratch, x->m.d + off, k);
            rc = bw_write(w, bw_data(w) + off, k);
            if (agree(x, rc, BW_OK)) m_append(&x->m, scratch, k);
        }
        break;
    case 12: /* a write of an unrepresentable size */
        rc = bw_write(w, scratch, huge(s));
        agree(x, rc, BW_EOVERFLOW);
        break;
    case 13: /* restart in the inline buffer */
        bw_release(w);
        CHECK(bw_init_buffer(w, pool, x->inline_buf, 1 + u8(s) % sizeof x->inline_buf) == BW_OK);
        x->m.len = 0;
        x->m.err = BW_OK;
        break;
    case 14: /* restart with an initial capacity */
        bw_release(w);
        n = u16(s);
        rc = bw_init(w, pool, n);
        CHECK(rc == BW_OK || (rc == BW_ENOMEM && failed_now));
        if (rc == BW_OK && n) CHECK(bw_capacity(w) >= n);
        x->m.len = 0;
        x->m.err = BW_OK;
        break;
    default: /* write from NULL: fine for 0 bytes, EINVAL for more */
        n = u8(s) & 1;
        rc = bw_write(w, NULL, n);
        agree(x, rc, n ? BW_EINVAL : BW_OK);
        break;
    }
    compare(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t thresholds[] = {256, 2048, 16384};
    bw_allocator hook = {fa_alloc, fa_realloc, fa_free, NULL};
    struct { void *b; size_t cap; unsigned seed; } blocks[NBLOCKS];
    bw_pool_options o;
    bw_pool *pool = NULL;
    pair *x;
    in s = {data, size};
    unsigned cfg, i;
    int steps = 0;

    calls = 0;
    live_blocks = 0;
    memset(&o, 0, sizeof o);
    cfg = u8(&s);
    o.max_pooled_size = thresholds[cfg % 3];
    o.flags = (cfg & 0x08 ? BW_POOL_NO_THREAD_CACHE : 0) | (cfg & 0x10 ? BW_POOL_ZERO_ON_RETURN : 0) |
              (cfg & 0x20 ? BW_POOL_LEARN_SIZE : 0) | (cfg & 0x80 ? BW_POOL_CHECKED : 0);
    if (cfg & 0x40) o.max_large_bytes = 256u << 10;
    if (u8(&s) & 1) hook.realloc = NULL;
    o.allocator = &hook;
    fail_at = (long)u8(&s); /* 0: never */
    CHECK(bw_pool_create(&pool, &o) == BW_OK);

    x = (pair *)calloc(2, sizeof *x);
    CHECK(x != NULL);
    bw_init(&x[0].w, pool, 0);
    bw_init(&x[1].w, pool, 0);
    memset(blocks, 0, sizeof blocks);

    while (s.n > 0 && steps++ < 500) {
        unsigned what = u8(&s);
        if (what < 200) {
            op_writer(&s, &x[what & 1], pool);
        } else if (what < 230) { /* raw rent / return with a byte pattern */
            unsigned k = what % NBLOCKS;
            if (blocks[k].b == NULL) {
                size_t want = u16(&s) << (u8(&s) % 8);
                if (want > MAX_LEN) want = MAX_LEN;
                failed_now = 0;
                blocks[k].b = bw_pool_rent(pool, want, &blocks[k].cap);
                if (blocks[k].b == NULL) {
                    CHECK(failed_now);
                    continue;
                }
                CHECK(blocks[k].cap >= want && blocks[k].cap == bw_pool_class_size(pool, want));
                blocks[k].seed = u8(&s);
                fill((unsigned char *)blocks[k].b, blocks[k].cap < 4096 ? blocks[k].cap : 4096,
                     blocks[k].seed);
            } else {
                size_t n = blocks[k].cap < 4096 ? blocks[k].cap : 4096, j;
                for (j = 0; j < n; j++)
                    CHECK(((unsigned char *)blocks[k].b)[j] == (unsigned char)(j * 31u + blocks[k].seed));
                CHECK(bw_pool_return(pool, blocks[k].b, blocks[k].cap) == BW_OK);
                blocks[k].b = NULL;
            }
        } else if (what < 240) {
            bw_pool_trim(pool);
        } else {
            bw_pool_stats st;
            bw_pool_get_stats(pool, &st);
            CHECK(st.returns <= st.rents);
            CHECK(st.hits <= st.rents);
        }
    }

    for (i = 0; i < NBLOCKS; i++)
        if (blocks[i].b) CHECK(bw_pool_return(pool, blocks[i].b, blocks[i].cap) == BW_OK);
    for (i = 0; i < 2; i++) {
        bw_release(&x[i].w);
        free(x[i].m.d);
    }
    free(x);
    {
        bw_pool_stats st;
        bw_pool_get_stats(pool, &st);
        CHECK(st.outstanding_bytes == 0);
        CHECK(st.rents == st.returns);
    }
    bw_pool_destroy(pool);
    CHECK(live_blocks == 0);
    return 0;
}
