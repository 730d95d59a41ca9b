/* SPDX-License-Identifier: MIT */
/* harness_pool.c - the shared test harness, second half: pools (options,
 * stats, renting, time, big jobs), failing the Nth backing call, and the
 * scripted stream of writes with its checks. See harness.h; harness.c has
 * the allocator, the modes, the test sink and the writers. */
#define _GNU_SOURCE 1 /* clock_gettime and nanosleep in every flavour */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <time.h>
#include <unistd.h>
#ifndef _WIN32
#  include <sys/mman.h>
#endif

/* ---- Pools: options, stats, renting, time, big jobs -------------------- */

uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sleep_ms(uint64_t ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void sleep_until(uint64_t t)
{
    uint64_t n;
    while ((n = mono_ms()) < t) sleep_ms(t - n);
}

bw_pool_options opts_for(test_alloc *ta)
{
    bw_pool_options o;
    memset(&o, 0, sizeof o);
    o.allocator = ta != NULL ? &ta->hook : NULL;
    return o;
}

bw_pool_options fresh_opts(test_alloc *ta)
{
    ta_init(ta, 1);
    return opts_for(ta);
}

bw_pool *mkpool(const bw_pool_options *o)
{
    bw_pool *p = NULL;
    cr_assert_eq(bw_pool_create(&p, o), BW_OK);
    cr_assert_not_null(p);
    return p;
}

bw_pool *fresh_flags_pool(test_alloc *ta, unsigned flags, uint32_t decay_ms)
{
    bw_pool_options o = fresh_opts(ta);
    o.flags = flags;
    o.decay_ms = decay_ms;
    return mkpool(&o);
}

size_t first_block(bw_pool *p)
{
    bw_writer w;
    size_t cap;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_put_u32le(&w, 7), BW_OK);
    cap = bw_capacity(&w);
    bw_release(&w);
    return cap;
}

size_t first_write_block(bw_pool *p, const void *src, size_t n)
{
    bw_writer w;
    size_t cap;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    cr_assert_eq(bw_write(&w, src, n), BW_OK);
    cap = bw_capacity(&w);
    bw_release(&w);
    return cap;
}

int env_set(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, "1") == 0;
}

int plain_env(void) { return !env_set("BW_CHECKED") && !env_set("BW_BYPASS"); }

int maps_large(void)
{
#ifdef __linux__
    return plain_env();
#else
    return 0;
#endif
}

#ifndef _WIN32
void *map_alloc(void *ctx, size_t size)
{
    void *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) return NULL;
    if (ctx != NULL) *(void **)ctx = b;
    return b;
}

void map_free(void *ctx, void *block, size_t size)
{
    (void)ctx;
    if (munmap(block, size) != 0) abort();
}

size_t resident_pages(const void *b, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), i, count = 0;
    unsigned char *v = (unsigned char *)malloc((n + page - 1) / page);
    cr_assert_not_null(v);
    cr_assert_eq(mincore((void *)b, n, v), 0);
    for (i = 0; i < (n + page - 1) / page; i++) count += v[i] & 1;
    free(v);
    return count;
}
#endif

bw_pool_stats stats_of(bw_pool *p)
{
    bw_pool_stats s;
    bw_pool_get_stats(p, &s);
    return s;
}

void *rent_ok(bw_pool *p, size_t n, size_t *cap)
{
    void *b = bw_pool_rent(p, n, cap);
    cr_assert_not_null(b, "rent of %zu failed", n);
    return b;
}

void rent_each(bw_pool *p, size_t n, const size_t *sizes, size_t size, void **b, size_t *cap)
{
    size_t i;
    for (i = 0; i < n; i++) b[i] = rent_ok(p, sizes != NULL ? sizes[i] : size, &cap[i]);
}

void return_each(bw_pool *p, size_t n, void *const *b, const size_t *cap)
{
    size_t i;
    for (i = 0; i < n; i++)
        cr_expect_eq(bw_pool_return(p, b[i], cap[i]), BW_OK, "return of block %zu", i);
}

int all_bytes(const void *b, size_t n, unsigned char v)
{
    const unsigned char *c = (const unsigned char *)b;
    size_t i;
    for (i = 0; i < n; i++)
        if (c[i] != v) return 0;
    return 1;
}


static void *garbage_alloc(void *ctx, size_t size)
{
    void *b = ta_alloc(ctx, size);
    if (b != NULL) memset(b, 0xAB, size);
    return b;
}

void garbage_init(test_alloc *ta)
{
    ta_init(ta, 0);
    ta->hook.alloc = garbage_alloc;
}

ptrdiff_t discard_sink(void *ctx, const void *data, size_t n)
{
    (void)ctx;
    (void)data;
    return (ptrdiff_t)n;
}

bw_pool *learn_pool(test_alloc *ta, unsigned flags, size_t max_learned)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = TH;
    o.jump_floor = TH;
    o.decay_ms = BW_DECAY_NEVER;
    o.flags = flags;
    o.max_learned_size = max_learned;
    return mkpool(&o);
}

bw_pool *fresh_learn_pool(test_alloc *ta, unsigned flags, size_t max_learned)
{
    ta_init(ta, 1);
    return learn_pool(ta, flags, max_learned);
}

unsigned char chunk[8192];

void fill_chunk(unsigned seed)
{
    size_t i;
    for (i = 0; i < sizeof chunk; i++) chunk[i] = pat(i, seed);
}

void write_chunks(bw_writer *w, size_t n)
{
    size_t i;
    for (i = 0; i < n; i += sizeof chunk) cr_assert_eq(bw_write(w, chunk, sizeof chunk), BW_OK);
}

void small_jobs(bw_pool *p, int jobs, size_t n)
{
    bw_writer w;
    int i;
    for (i = 0; i < jobs; i++) {
        cr_assert_eq(bw_init(&w, p, 0), BW_OK);
        cr_assert_eq(bw_write(&w, chunk, n), BW_OK, "job %d", i);
        bw_release(&w);
    }
}

size_t write_job(bw_pool *p, size_t total, size_t *caps, size_t *ncaps)
{
    bw_writer w;
    size_t last = 0, n = 0, i, bad = 0;
    cr_assert_eq(bw_init(&w, p, 0), BW_OK);
    while (bw_len(&w) < total) {
        size_t k = total - bw_len(&w) < sizeof chunk ? total - bw_len(&w) : sizeof chunk;
        cr_assert_eq(bw_write(&w, chunk, k), BW_OK);
        if (bw_capacity(&w) != last) {
            last = bw_capacity(&w);
            if (caps != NULL && n < 32) caps[n++] = last;
        }
    }
    cr_assert_eq(bw_len(&w), total);
    for (i = 0; i < total; i++) bad += bw_data(&w)[i] != chunk[i % sizeof chunk];
    cr_expect_eq(bad, 0, "the bytes survived every move");
    bw_release(&w);
    if (ncaps != NULL) *ncaps = n;
    return last;
}

/* ---- Fail the Nth backing call ----------------------------------------- */

long fail_each_call(int (*run)(void *ctx, long n, int sticky), void *ctx, int sticky, long limit)
{
    long n;
    for (n = 1; n < limit; n++)
        if (!run(ctx, n, sticky)) break;
    return n;
}

/* ---- Scripted output ---------------------------------------------------- */

unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffffu;
}

void st_le(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

void st_be(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

size_t uvar_enc(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

size_t hex_enc(char *out, const unsigned char *src, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = digits[src[i] >> 4];
        out[2 * i + 1] = digits[src[i] & 15];
    }
    return 2 * n;
}

#ifndef _WIN32 /* fcntl: no such calls for a C runtime descriptor */
void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    cr_assert_geq(fl, 0);
    cr_assert_eq(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

/* A descriptor number that is not open (for EBADF and "no system call"). */
int closed_fd(void)
{
    int fd = 700;
    while (fcntl(fd, F_GETFD) != -1) fd++;
    return fd;
}

/* Read everything available from a non-blocking fd into b. */
void drain(int fd, bytes *b)
{
    unsigned char tmp[65536];
    for (;;) {
        ssize_t k = read(fd, tmp, sizeof tmp);
        if (k <= 0) break;
        by_add(b, tmp, (size_t)k);
    }
}
#endif

/* The held bytes are exactly exp[0..n), seen through bw_copy_out, bw_iovec
 * and (when not NULL) bw_data. */
void held_is(const bw_writer *w, const unsigned char *exp, size_t n, const char *where)
{
    unsigned char *out = (unsigned char *)malloc(n + 1);
    struct iovec one[1];
    struct iovec *iov;
    size_t cnt, i, off = 0;
    const unsigned char *d;
    cr_assert_eq(bw_len(w), n, "%s: bw_len %zu, expected %zu", where, bw_len(w), n);
    cr_assert_eq(bw_copy_out(w, 0, out, n), BW_OK, "%s", where);
    cr_assert(n == 0 || memcmp(out, exp, n) == 0, "%s: copy_out differs", where);
    cnt = bw_iovec(w, one, 0);
    if (n == 0) cr_assert_eq(cnt, 0, "%s: iovec of nothing", where);
    else cr_assert_geq(cnt, 1, "%s", where);
    iov = (struct iovec *)malloc((cnt + 1) * sizeof *iov);
    cr_assert_eq(bw_iovec(w, iov, cnt + 1), cnt, "%s", where);
    for (i = 0; i < cnt; i++) {
        cr_assert_gt(iov[i].iov_len, 0, "%s: empty iovec entry %zu", where, i);
        cr_assert_leq(off + iov[i].iov_len, n, "%s", where);
        cr_assert(memcmp(iov[i].iov_base, exp + off, iov[i].iov_len) == 0,
                  "%s: iovec entry %zu differs", where, i);
        off += iov[i].iov_len;
    }
    cr_assert_eq(off, n, "%s: iovec covers %zu of %zu", where, off, n);
    d = bw_data(w);
    if (d != NULL && n > 0)
        cr_assert(memcmp(d, exp, n) == 0, "%s: bw_data differs", where);
    free(iov);
    free(out);
}

/* For a streaming writer that never consumed: what the sink got, then what
 * is held, is exactly exp[0..bw_tell). */
void sent_then_held(const bw_writer *w, const sink *s, const unsigned char *exp,
                           const char *where)
{
    cr_assert_eq((uint64_t)s->out.len + bw_len(w), bw_tell(w),
                 "%s: sent %zu + held %zu != tell %" PRIu64, where, s->out.len, bw_len(w),
                 bw_tell(w));
    cr_assert(s->out.len == 0 || memcmp(s->out.d, exp, s->out.len) == 0,
              "%s: the sink got other bytes", where);
    held_is(w, exp + s->out.len, bw_len(w), where);
}

/* A scripted stream of writes: every op writes exactly s[off, off + len)  */




void work_make(work *wk, unsigned seed, size_t target, const size_t *sizes, size_t nsizes)
{
    memset(wk, 0, sizeof *wk);
    while (wk->s.len < target) {
        op o;
        unsigned char tmp[64];
        size_t n, i;
        memset(&o, 0, sizeof o);
        o.kind = (int)(rnd(&seed) % K_NKINDS);
        o.off = wk->s.len;
        switch (o.kind) {
        case K_WRITE: case K_PUTS: case K_PRINTF_S: case K_SPAN:
            n = sizes[rnd(&seed) % nsizes];
            for (i = 0; i < n; i++) {
                unsigned char c = (unsigned char)(1 + rnd(&seed) % 255); /* no NUL */
                by_add(&wk->s, &c, 1);
            }
            o.hint = n + rnd(&seed) % 50;
            break;
        case K_PRINTF_N:
            o.v = ((uint64_t)rnd(&seed) << 24) | rnd(&seed);
            o.width = (int)(rnd(&seed) % 40);
            n = (size_t)snprintf((char *)tmp, sizeof tmp, "<%0*" PRIu64 ">", o.width, o.v);
            by_add(&wk->s, tmp, n);
            break;
        case K_U32LE:
            o.v = rnd(&seed) * 257u;
            st_le(tmp, o.v, 4);
            by_add(&wk->s, tmp, 4);
            break;
        case K_U64BE:
            o.v = ((uint64_t)rnd(&seed) << 40) ^ ((uint64_t)rnd(&seed) << 20) ^ rnd(&seed);
            st_be(tmp, o.v, 8);
            by_add(&wk->s, tmp, 8);
            break;
        case K_UVAR:
            o.v = (((uint64_t)rnd(&seed) << 40) ^ ((uint64_t)rnd(&seed) << 20) ^ rnd(&seed)) >>
                  (rnd(&seed) % 64);
            by_add(&wk->s, tmp, uvar_enc(tmp, o.v));
            break;
        case K_DEC:
            o.v = (((uint64_t)rnd(&seed) << 40) ^ rnd(&seed)) >> (rnd(&seed) % 64);
            n = (size_t)snprintf((char *)tmp, sizeof tmp, "%" PRIu64, o.v);
            by_add(&wk->s, tmp, n);
            break;
        case K_HEX: {
            unsigned char src[8];
            o.v = ((uint64_t)rnd(&seed) << 40) ^ ((uint64_t)rnd(&seed) << 20) ^ rnd(&seed);
            st_le(src, o.v, 8);
            n = 1 + rnd(&seed) % 8;
            by_add(&wk->s, tmp, hex_enc((char *)tmp, src, n));
            break;
        }
        default: /* K_RESERVE: no bytes */
            o.hint = sizes[rnd(&seed) % nsizes] * (1 + rnd(&seed) % 3);
            break;
        }
        o.len = wk->s.len - o.off;
        if (wk->nops == wk->cap) {
            wk->cap = wk->cap ? wk->cap * 2 : 64;
            wk->ops = (op *)realloc(wk->ops, wk->cap * sizeof *wk->ops);
            cr_assert_not_null(wk->ops);
        }
        wk->ops[wk->nops++] = o;
    }
}

void work_free(work *wk)
{
    by_free(&wk->s);
    free(wk->ops);
    memset(wk, 0, sizeof *wk);
}

/* Perform one op on w: BW_OK and exactly its bytes, or an error. */
int do_op(bw_writer *w, const work *wk, const op *o)
{
    const unsigned char *src = wk->s.d + o->off;
    unsigned char b[8];
    int rc;
    switch (o->kind) {
    case K_WRITE: return bw_write(w, src, o->len);
    case K_PUTS: {
        char *t = (char *)malloc(o->len + 1);
        memcpy(t, src, o->len);
        t[o->len] = '\0';
        rc = bw_puts(w, t);
        free(t);
        return rc;
    }
    case K_PRINTF_S: return bw_printf(w, "%.*s", (int)o->len, (const char *)src);
    case K_PRINTF_N: return bw_printf(w, "<%0*" PRIu64 ">", o->width, o->v);
    case K_U32LE: return bw_put_u32le(w, (uint32_t)o->v);
    case K_U64BE: return bw_put_u64be(w, o->v);
    case K_UVAR: return bw_put_uvarint(w, o->v);
    case K_DEC: return bw_put_dec_u64(w, o->v);
    case K_HEX:
        st_le(b, o->v, 8);
        return bw_put_hex(w, b, o->len / 2);
    case K_SPAN: {
        size_t avail = 12345;
        unsigned char *p = (unsigned char *)bw_get_span(w, o->hint, &avail);
        if (p == NULL) {
            cr_assert_eq(avail, 0, "a failed get_span gives avail 0");
            cr_assert_neq(bw_error(w), BW_OK, "a failed get_span records its error");
            return bw_error(w);
        }
        cr_assert_geq(avail, o->hint);
        cr_assert_eq(avail, bw_free_capacity(w));
        memcpy(p, src, o->len);
        return bw_advance(w, o->len);
    }
    default:
        rc = bw_reserve(w, o->hint);
        if (rc == BW_OK) cr_assert_geq(bw_free_capacity(w), o->hint);
        return rc;
    }
}

const size_t small_sizes[10] = {1, 2, 7, 31, 100, 255, 256, 257, 700, 3000};


/* room: the streaming buffer size or the fixed buffer size. */
void mw_init(mw *m, int mode, bw_pool *p, size_t room)
{
    memset(m, 0, sizeof *m);
    m->mode = mode;
    m->room = room;
    sink_init_random(&m->s, 1234);
    switch (mode) {
    case M_CONTIG: cr_assert_eq(bw_init(&m->w, p, 0), BW_OK); break;
    case M_BUFFER:
        m->buf = (unsigned char *)malloc(256);
        cr_assert_eq(bw_init_buffer(&m->w, p, m->buf, 256), BW_OK);
        break;
    case M_CHAIN: cr_assert_eq(bw_init_chain(&m->w, p), BW_OK); break;
    case M_SINK: cr_assert_eq(bw_init_sink(&m->w, p, room, test_sink, &m->s), BW_OK); break;
    default:
        m->buf = (unsigned char *)malloc(room);
        cr_assert_eq(bw_init_fixed(&m->w, m->buf, room), BW_OK);
        break;
    }
}

void mw_done(mw *m)
{
    bw_release(&m->w);
    free(m->buf);
    sink_free(&m->s);
}

void fill_pattern(bw_writer *w, unsigned char *exp, size_t n, unsigned seed)
{
    size_t i, k;
    for (i = 0; i < n; i++) exp[i] = pat(i, seed);
    for (i = 0; i < n; i += k) {
        k = 1 + (i * 31) % 3000;
        if (k > n - i) k = n - i;
        cr_assert_eq(bw_write(w, exp + i, k), BW_OK);
    }
}
