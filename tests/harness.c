/* SPDX-License-Identifier: MIT */
/* harness.c - the shared test harness, first half: the counting allocator,
 * the modes, the test sink, the per-mode writer and several writers on one
 * pool. See harness.h; harness_pool.c has the rest. */
#define _GNU_SOURCE 1 /* pthread_self in every flavour */
#include "harness.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <unistd.h>
#ifdef _WIN32
#  include <windows.h>
#endif

/* Append src[0..n) to the growable array (*d, *len, *cap), keeping at least
 * `spare` bytes free after it; it grows by doubling from 256. */
static void append_bytes(unsigned char **d, size_t *len, size_t *cap, const void *src, size_t n,
                         size_t spare)
{
    if (*len + n + spare > *cap) {
        size_t nc = *cap ? *cap : 256;
        while (nc < *len + n + spare) nc *= 2;
        *d = (unsigned char *)realloc(*d, nc);
        cr_assert_not_null(*d);
        *cap = nc;
    }
    if (n != 0) memcpy(*d + *len, src, n);
    *len += n;
}

/* ---- The counting, failure-injecting backing allocator ----------------- */

#define TA_HDR 16


static int ta_should_fail(test_alloc *ta)
{
    long n = atomic_fetch_add(&ta->calls, 1) + 1;
    long f = atomic_load(&ta->fail_at);
    if (f == 0) return 0;
    return atomic_load(&ta->fail_sticky) ? n >= f : n == f;
}

void *ta_alloc(void *ctx, size_t size)
{
    test_alloc *ta = (test_alloc *)ctx;
    unsigned char *p;
    if (ta_should_fail(ta) || size > SIZE_MAX - TA_HDR) return NULL;
    p = (unsigned char *)malloc(size + TA_HDR);
    if (p == NULL) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&ta->live_blocks, 1);
    atomic_fetch_add(&ta->live_bytes, (long long)size);
    atomic_fetch_add(&ta->allocs, 1);
    return p + TA_HDR;
}

static void ta_check_size(test_alloc *ta, void *block, size_t size)
{
    size_t had;
    memcpy(&had, (unsigned char *)block - TA_HDR, sizeof had);
    if (had != size) atomic_fetch_add(&ta->size_errors, 1);
}

void *ta_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    test_alloc *ta = (test_alloc *)ctx;
    unsigned char *p;
    ta_check_size(ta, block, old_size);
    if (ta_should_fail(ta) || new_size > SIZE_MAX - TA_HDR) return NULL;
    p = (unsigned char *)realloc((unsigned char *)block - TA_HDR, new_size + TA_HDR);
    if (p == NULL) return NULL;
    memcpy(p, &new_size, sizeof new_size);
    atomic_fetch_add(&ta->live_bytes, (long long)new_size - (long long)old_size);
    atomic_fetch_add(&ta->reallocs, 1);
    return p + TA_HDR;
}

void ta_free(void *ctx, void *block, size_t size)
{
    test_alloc *ta = (test_alloc *)ctx;
    ta_check_size(ta, block, size);
    atomic_fetch_sub(&ta->live_blocks, 1);
    atomic_fetch_sub(&ta->live_bytes, (long long)size);
    atomic_fetch_add(&ta->frees, 1);
    free((unsigned char *)block - TA_HDR);
}

void ta_fail_from_next(test_alloc *ta)
{
    atomic_store(&ta->fail_sticky, 1);
    atomic_store(&ta->fail_at, atomic_load(&ta->calls) + 1);
}
void ta_fail_never(test_alloc *ta) { atomic_store(&ta->fail_at, 0); }

/* Set up ta as a fresh counting allocator; with_realloc = 0 leaves the
 * realloc hook NULL (the pool then copies). */
void ta_init(test_alloc *ta, int with_realloc)
{
    memset(ta, 0, sizeof *ta);
    ta->hook.alloc = ta_alloc;
    ta->hook.realloc = with_realloc ? ta_realloc : NULL;
    ta->hook.free = ta_free;
    ta->hook.ctx = ta;
}

/* A pool over ta with the given threshold (0 = default) and flags, with
 * 0.1's mechanics, so tests can count exactly: first blocks are the class
 * of the first write, nothing above the threshold is kept or learned, and
 * nothing decays. ta_pool_defaults keeps every 0.2 default. */
bw_pool *ta_pool(test_alloc *ta, size_t threshold, unsigned flags)
{
    bw_pool_options o = opts_for(ta);
    o.max_pooled_size = threshold;
    o.flags = flags | BW_POOL_NO_LARGE_RETENTION | BW_POOL_NO_LEARNED_GROWTH;
    o.min_first_block = 1;
    o.decay_ms = BW_DECAY_NEVER;
    return mkpool(&o);
}

bw_pool *ta_pool_defaults(test_alloc *ta)
{
    bw_pool_options o = opts_for(ta);
    return mkpool(&o);
}

bw_pool *fresh_pool(test_alloc *ta, size_t threshold, unsigned flags)
{
    ta_init(ta, 1);
    return ta_pool(ta, threshold, flags);
}

bw_pool *fresh_pool_defaults(test_alloc *ta)
{
    ta_init(ta, 1);
    return ta_pool_defaults(ta);
}

/* Destroy the pool and check the allocator balances to zero. */
void ta_finish(test_alloc *ta, bw_pool *p)
{
    bw_pool_destroy(p);
    cr_expect_eq(atomic_load(&ta->live_blocks), 0, "blocks leaked: %ld",
                 atomic_load(&ta->live_blocks));
    cr_expect_eq(atomic_load(&ta->live_bytes), 0, "bytes leaked: %lld",
                 atomic_load(&ta->live_bytes));
    cr_expect_eq(atomic_load(&ta->size_errors), 0, "frees with a wrong size: %ld",
                 atomic_load(&ta->size_errors));
}

void wp_open(wpool *f, size_t threshold, unsigned flags)
{
    bw_writer init = BW_WRITER_INIT;
    f->p = fresh_pool(&f->ta, threshold, flags);
    f->w = init;
}

void wp_open_learn(wpool *f, unsigned flags, size_t max_learned)
{
    bw_writer init = BW_WRITER_INIT;
    f->p = fresh_learn_pool(&f->ta, flags, max_learned);
    f->w = init;
}

void wp_close(wpool *f)
{
    bw_release(&f->w);
    ta_finish(&f->ta, f->p);
}

size_t pat_mismatches(const unsigned char *b, size_t n, size_t from, unsigned seed)
{
    size_t i, bad = 0;
    for (i = 0; i < n; i++) bad += b[i] != pat(from + i, seed);
    return bad;
}

void put_pat_bytes(bw_writer *w, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) bw_put_u8(w, pat(i, seed));
}

/* ---- Modes, the test sink, the per-mode writer ------------------------ */

const char *const mode_name[M_COUNT] = {"contiguous", "buffer", "segmented",
                                               "streaming", "fixed"};


/* The test sink. */

void by_add(bytes *b, const void *src, size_t n)
{
    append_bytes(&b->d, &b->len, &b->cap, src, n, 1);
}

void by_free(bytes *b)
{
    free(b->d);
    memset(b, 0, sizeof *b);
}

/* A failing call, the way fail_kind says. */
static ptrdiff_t sink_failing(sink *s, size_t n)
{
    switch (s->fail_kind) {
    case SF_ZERO: return 0;
    case SF_TOO_MANY: return (ptrdiff_t)n + 1;
    case SF_BELOW: errno = EPERM; return -2; /* an errno the writer must not pass on */
    default: errno = s->fail_errno; return -1;
    }
}

ptrdiff_t test_sink(void *ctx, const void *data, size_t n)
{
    sink *s = (sink *)ctx;
    size_t k = n;
    s->calls++;
    if (!pthread_equal(pthread_self(), s->thread)) s->wrong_thread = 1;
    if (n == 0 || data == NULL) {
        s->bad_args++;
        errno = EINVAL;
        return -1;
    }
    if (s->eintr == EINTR_ONCE || (s->eintr == EINTR_ODD && (s->calls & 1))) {
        if (s->eintr == EINTR_ONCE) s->eintr = EINTR_NEVER;
        errno = EINTR;
        return -1;
    }
    if (s->budget == 0 ||
        (s->fail_at != 0 && (s->fail_sticky ? s->calls >= s->fail_at : s->calls == s->fail_at)))
        return sink_failing(s, n);
    if (s->take != 0 && k > s->take) k = s->take;
    if (s->random) k = 1 + rnd(&s->seed) % k;
    if (k > s->budget) k = s->budget;
    by_add(&s->out, data, k);
    if (s->budget != SIZE_MAX) s->budget -= k;
    return (ptrdiff_t)k;
}

void sink_init(sink *s)
{
    memset(s, 0, sizeof *s);
    s->budget = SIZE_MAX;
    s->fail_errno = EPIPE;
    s->thread = pthread_self();
}

void sink_init_random(sink *s, unsigned seed)
{
    sink_init(s);
    s->random = 1;
    s->seed = seed;
}

void sink_fail(sink *s, int kind, int err)
{
    s->budget = 0;
    s->fail_kind = kind;
    s->fail_errno = err;
}

void sink_heal(sink *s)
{
    s->budget = SIZE_MAX;
    s->fail_at = 0;
}

void sink_free(sink *s) { by_free(&s->out); }

static void *h_alloc(void *ctx, size_t size)
{
    test_alloc *ta = (test_alloc *)ctx;
    if (size > ALLOC_LIMIT || atomic_load(&ta->live_bytes) + (long long)size > LIVE_LIMIT) {
        atomic_fetch_add(&ta->calls, 1);
        return NULL;
    }
    return ta_alloc(ctx, size);
}

static void *h_realloc(void *ctx, void *block, size_t old_size, size_t new_size)
{
    test_alloc *ta = (test_alloc *)ctx;
    if (new_size > ALLOC_LIMIT ||
        atomic_load(&ta->live_bytes) + (long long)new_size > LIVE_LIMIT) {
        atomic_fetch_add(&ta->calls, 1);
        return NULL;
    }
    return ta_realloc(ctx, block, old_size, new_size);
}

size_t default_param(int mode)
{
    switch (mode) {
    case M_BUFFER: return IBUF_SIZE;
    case M_SINK: return SINK_BUF;
    case M_FIXED: return FIXED_SIZE;
    default: return 0;
    }
}

/* Open a writer of `mode` on a fresh counting pool. param is the contiguous
 * initial capacity, the first buffer's size, the streaming buffer_size or the
 * fixed buffer's size. The harness must not move while open. */
void h_open_ex(harness *h, int mode, size_t param, size_t threshold, unsigned flags)
{
    bw_pool_options o;
    int rc = BW_OK;
    memset(h, 0, sizeof *h); /* h->w is now BW_WRITER_INIT */
    h->mode = mode;
    ta_init(&h->ta, 1);
    h->hook.alloc = h_alloc;
    h->hook.realloc = h_realloc;
    h->hook.free = ta_free;
    h->hook.ctx = &h->ta;
    memset(&o, 0, sizeof o);
    o.max_pooled_size = threshold;
    o.flags = flags;
    o.allocator = &h->hook;
    cr_assert_eq(bw_pool_create(&h->p, &o), BW_OK);
    sink_init(&h->s);
    switch (mode) {
    case M_CONTIG: rc = bw_init(&h->w, h->p, param); break;
    case M_BUFFER:
        cr_assert_leq(param, IBUF_SIZE);
        rc = bw_init_buffer(&h->w, h->p, h->ibuf, param);
        break;
    case M_CHAIN: rc = bw_init_chain(&h->w, h->p); break;
    case M_SINK: rc = bw_init_sink(&h->w, h->p, param, test_sink, &h->s); break;
    default:
        h->fmem = (unsigned char *)malloc(param + 2 * GUARD);
        cr_assert_not_null(h->fmem);
        memset(h->fmem, GUARD_BYTE, param + 2 * GUARD);
        h->fbuf = h->fmem + GUARD;
        h->fsize = param;
        rc = bw_init_fixed(&h->w, h->fbuf, param);
        break;
    }
    cr_assert_eq(rc, BW_OK, "init %s: %s", mode_name[mode], bw_strerror(rc));
}

void h_open(harness *h, int mode) { h_open_ex(h, mode, default_param(mode), 0, 0); }

void h_open_holding(harness *h, int mode, const char *s)
{
    h_open(h, mode);
    cr_assert_eq(bw_write(&h->w, s, strlen(s)), BW_OK, "%s", mode_name[mode]);
}

void h_open_stale(harness *h, int mode, unsigned flags)
{
    h_open_ex(h, mode, mode == M_SINK || mode == M_FIXED ? STALE_BUF : default_param(mode), 0,
              flags);
    if (mode == M_FIXED) memset(h->fbuf, 'S', h->fsize);
}

char *letters(size_t n, unsigned seed)
{
    char *s = (char *)malloc(n + 1);
    size_t i;
    cr_assert_not_null(s);
    for (i = 0; i < n; i++) s[i] = (char)('a' + (i * 7 + seed + i / 26) % 26);
    s[n] = 0;
    return s;
}

/* Release, check the fixed buffer's guards, destroy the pool and check the
 * allocator balances to zero. */
void h_close(harness *h)
{
    size_t i, bad = 0;
    bw_release(&h->w);
    if (h->fmem != NULL) {
        for (i = 0; i < GUARD; i++) {
            bad += h->fmem[i] != GUARD_BYTE;
            bad += h->fmem[GUARD + h->fsize + i] != GUARD_BYTE;
        }
        cr_expect_eq(bad, 0, "the fixed writer wrote %zu bytes outside its buffer", bad);
        free(h->fmem);
    }
    sink_free(&h->s);
    ta_finish(&h->ta, h->p);
}

bw_pool_stats h_stats(harness *h)
{
    bw_pool_stats st;
    bw_pool_get_stats(h->p, &st);
    return st;
}

long h_calls(harness *h) { return atomic_load(&h->ta.calls); }

void h_fail_from_next(harness *h) { ta_fail_from_next(&h->ta); }
void h_fail_never(harness *h) { ta_fail_never(&h->ta); }

/* A position-dependent byte pattern to write from. */
const unsigned char *pattern(void)
{
    static unsigned char b[PATTERN_SIZE];
    static int ready;
    size_t i;
    if (!ready) {
        for (i = 0; i < sizeof b; i++) b[i] = pat(i, 7);
        ready = 1;
    }
    return b;
}

/* Everything the writer produced: what the sink took, then what is held. */
unsigned char *h_output(const harness *h, size_t *n)
{
    size_t held = bw_len(&h->w);
    unsigned char *out = (unsigned char *)malloc(h->s.out.len + held + 1);
    cr_assert_not_null(out);
    if (h->s.out.len != 0) memcpy(out, h->s.out.d, h->s.out.len);
    cr_assert_eq(bw_copy_out(&h->w, 0, out + h->s.out.len, held), BW_OK);
    *n = h->s.out.len + held;
    return out;
}

/* bw_iovec, bw_copy_out and bw_data agree on the held bytes: the entries
 * are non-empty, add up to bw_len, and bw_data is the first entry exactly
 * when there is one (bufwriter.h, "Reading out"). */
void expect_views_agree(const harness *h)
{
    const bw_writer *w = &h->w;
    size_t len = bw_len(w), cnt = bw_iovec(w, NULL, 0), i, off = 0, empty = 0;
    struct iovec *iov;
    unsigned char *a, *b;
    if (len == 0) {
        cr_expect_eq(cnt, 0, "%s: no held bytes, no entries", mode_name[h->mode]);
        return;
    }
    cr_assert_geq(cnt, 1);
    iov = (struct iovec *)calloc(cnt + 1, sizeof *iov);
    a = (unsigned char *)malloc(len);
    b = (unsigned char *)malloc(len);
    cr_assert(iov != NULL && a != NULL && b != NULL);
    cr_expect_eq(bw_iovec(w, iov, cnt + 1), cnt);
    for (i = 0; i < cnt; i++) {
        empty += iov[i].iov_len == 0;
        if (off + iov[i].iov_len <= len) memcpy(a + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    cr_expect_eq(empty, 0, "%s: bw_iovec gave %zu empty entries", mode_name[h->mode], empty);
    cr_expect_eq(off, len, "%s: iovec total %zu, bw_len %zu", mode_name[h->mode], off, len);
    cr_expect_eq(bw_copy_out(w, 0, b, len), BW_OK);
    cr_expect(off == len && memcmp(a, b, len) == 0, "%s: iovec and copy_out differ",
              mode_name[h->mode]);
    if (cnt == 1)
        cr_expect(bw_data(w) == iov[0].iov_base, "%s: bw_data is the first held byte",
                  mode_name[h->mode]);
    else
        cr_expect_null(bw_data(w), "%s: bw_data is NULL across blocks", mode_name[h->mode]);
    free(iov);
    free(a);
    free(b);
}

/* The writer produced exactly want[0, n). Returns 1 when it did. */
int expect_output(const harness *h, const void *want, size_t n, const char *what)
{
    size_t got_n, i;
    unsigned char *got = h_output(h, &got_n);
    const unsigned char *wb = (const unsigned char *)want;
    int ok = got_n == n && (n == 0 || memcmp(got, wb, n) == 0);
    expect_views_agree(h);
    cr_expect_eq(got_n, n, "%s (%s): output is %zu bytes, expected %zu", what,
                 mode_name[h->mode], got_n, n);
    if (got_n == n && !ok) {
        for (i = 0; got[i] == wb[i]; i++) continue;
        cr_expect(0, "%s (%s): byte %zu is 0x%02x, expected 0x%02x", what, mode_name[h->mode],
                  i, got[i], wb[i]);
    }
    free(got);
    return ok;
}


void ref_add(ref *r, const void *src, size_t n)
{
    append_bytes(&r->d, &r->len, &r->cap, src, n, 0);
}
void h_close_ref(harness *h, ref *r)
{
    ref_free(r);
    h_close(h);
}

void h_close_expecting(harness *h, ref *r, const char *what)
{
    expect_output(h, r->d, r->len, what);
    h_close_ref(h, r);
}

void h_close_expecting_str(harness *h, const char *want, const char *what)
{
    ref r = {0};
    ref_str(&r, want);
    h_close_expecting(h, &r, what);
}

void ref_str(ref *r, const char *s) { ref_add(r, s, strlen(s)); }

/* Append a second copy of everything in r. */
void ref_double(ref *r)
{
    unsigned char *t = (unsigned char *)malloc(r->len + 1);
    cr_assert_not_null(t);
    memcpy(t, r->d, r->len);
    ref_add(r, t, r->len);
    free(t);
}
/* Leaves r empty: freeing it again is harmless. */
void ref_free(ref *r)
{
    free(r->d);
    memset(r, 0, sizeof *r);
}

/* Start r as the writer's output so far. */
void ref_from(ref *r, const harness *h)
{
    size_t n;
    unsigned char *o = h_output(h, &n);
    memset(r, 0, sizeof *r);
    ref_add(r, o, n);
    free(o);
}

/* Write pattern bytes until the writer's current block holds `tail` (tn
 * bytes) at its end with exactly `slack` bytes free after it. Every mode;
 * the held bytes stay in one block and nothing is sent. */
void fill_tight(harness *h, const void *tail, size_t tn, size_t slack)
{
    bw_writer *w = &h->w;
    size_t f;
    cr_assert_eq(bw_reserve(w, tn + slack + 16), BW_OK);
    f = bw_free_capacity(w);
    cr_assert_geq(f, tn + slack + 16);
    cr_assert_leq(f, PATTERN_SIZE);
    cr_assert_eq(bw_write(w, pattern(), f - tn - slack), BW_OK);
    cr_assert_eq(bw_write(w, tail, tn), BW_OK);
    cr_assert_eq(bw_free_capacity(w), slack);
    cr_assert_eq(h->s.calls, 0);
}

/* Write n pattern bytes (from offset `from` of the pattern). */
void put_pattern(harness *h, size_t from, size_t n)
{
    cr_assert_eq(bw_write(&h->w, pattern() + from, n), BW_OK);
}

void put_pattern_ref(harness *h, ref *r, size_t from, size_t n)
{
    put_pattern(h, from, n);
    ref_add(r, pattern() + from, n);
}

void h_open_pattern(harness *h, int mode, size_t n, ref *r)
{
    h_open(h, mode);
    if (r != NULL)
        put_pattern_ref(h, r, 0, n);
    else
        put_pattern(h, 0, n);
}

void each_mode_pattern(size_t n, mode_body *body)
{
    int m;
    FOR_EACH_MODE(m) {
        harness h;
        ref r = {0};
        h_open_pattern(&h, m, n, &r);
        body(&h, &r);
        ref_free(&r); /* when body closed without it */
    }
}

/* Sizes and widths the compiler cannot see through (so -Werror does not
 * reject the deliberately impossible calls at compile time). */
size_t opaque(size_t n)
{
    volatile size_t v = n;
    return v;
}
int opaque_int(int n)
{
    volatile int v = n;
    return v;
}

int vp(bw_writer *w, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_vprintf(w, fmt, ap);
    va_end(ap);
    return rc;
}

void expect_typed_puts_refuse_null(void)
{
    cr_expect_eq(bw_put_u8(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u16le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u32le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u64le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u16be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u32be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_u64be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i16le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i32le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i64le(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i16be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i32be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_i64be(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_f32le(NULL, 1.0f), BW_EINVAL);
    cr_expect_eq(bw_put_f64le(NULL, 1.0), BW_EINVAL);
    cr_expect_eq(bw_put_f32be(NULL, 1.0f), BW_EINVAL);
    cr_expect_eq(bw_put_f64be(NULL, 1.0), BW_EINVAL);
    cr_expect_eq(bw_put_uvarint(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_svarint(NULL, -1), BW_EINVAL);
    cr_expect_eq(bw_put_dec_u64(NULL, 1), BW_EINVAL);
    cr_expect_eq(bw_put_dec_i64(NULL, -1), BW_EINVAL);
}

void expect_flush_eio(bw_writer *w, int err, const char *where)
{
    int rc, e;
    errno = 0;
    rc = bw_flush(w);
    e = errno;
    cr_expect_eq(rc, BW_EIO, "%s: flush %d", where, rc);
    cr_expect_eq(e, err, "%s: errno %d, want %d", where, e, err);
    cr_expect_eq(bw_error(w), BW_EIO, "%s: recorded", where);
}

/* Record an error (BW_EINVAL: an advance beyond the free space). */
void record_einval(harness *h)
{
    cr_assert_eq(bw_advance(&h->w, SIZE_MAX), BW_EINVAL);
    cr_assert_eq(bw_error(&h->w), BW_EINVAL);
}

/* A segmented writer holding bytes in at least `blocks` blocks. */
void chain_blocks(harness *h, size_t blocks, ref *r)
{
    size_t from = 0;
    while (bw_iovec(&h->w, NULL, 0) < blocks) {
        put_pattern(h, from, 1000);
        ref_add(r, pattern() + from, 1000);
        from += 1000;
        cr_assert_lt(from, 200000);
    }
}

void h_open_chain(harness *h, size_t blocks, ref *r)
{
    h_open(h, M_CHAIN);
    chain_blocks(h, blocks, r);
}

void h_open_two_blocks(harness *h, ref *r, struct iovec *iov)
{
    h_open_chain(h, 2, r);
    cr_assert_eq(bw_iovec(&h->w, iov, 2), 2, "two blocks");
}

void read_exact(int fd, unsigned char *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, dst + got, n - got);
        cr_assert_gt(r, 0, "read from the pipe");
        got += (size_t)r;
    }
}

void close_pair(const int fds[2])
{
    close(fds[0]);
    close(fds[1]);
}

#ifdef _WIN32
/* No O_NONBLOCK for a C runtime descriptor: ask the pipe itself. */
int pipe_is_empty(int fd)
{
    DWORD avail = 0;
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    return PeekNamedPipe(h, NULL, 0, NULL, &avail, NULL) && avail == 0;
}
#else
int pipe_is_empty(int fd)
{
    unsigned char c;
    int fl = fcntl(fd, F_GETFL);
    ssize_t r;
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    r = read(fd, &c, 1);
    fcntl(fd, F_SETFL, fl);
    return r < 0 && errno == EAGAIN;
}
#endif

/* ---- Several writers on one pool --------------------------------------- */

env *env_new(void)
{
    env *e = (env *)calloc(1, sizeof *e);
    cr_assert(e != NULL);
    ta_init(&e->ta, 1);
    e->pool = ta_pool(&e->ta, 4096, 0);
    sink_init(&e->sink);
    return e;
}

void env_free(env *e)
{
    ta_finish(&e->ta, e->pool);
    sink_free(&e->sink);
    free(e);
}

void mk(env *e, bw_writer *w, int mode)
{
    int rc = BW_OK;
    switch (mode) {
    case M_CONTIG: rc = bw_init(w, e->pool, 0); break;
    case M_BUFFER: rc = bw_init_buffer(w, e->pool, e->ibuf, sizeof e->ibuf); break;
    case M_CHAIN: rc = bw_init_chain(w, e->pool); break;
    case M_SINK: rc = bw_init_sink(w, e->pool, CLIENT_SINK_BUF, test_sink, &e->sink); break;
    default: rc = bw_init_fixed(w, e->fixed, sizeof e->fixed); break;
    }
    cr_assert_eq(rc, BW_OK);
}

/* Everything the writer produced: what the sink took, then what is held. */
size_t produced(env *e, const bw_writer *w, unsigned char *dst)
{
    size_t held = bw_len(w);
    if (e->sink.out.len != 0) memcpy(dst, e->sink.out.d, e->sink.out.len);
    cr_assert_eq(bw_copy_out(w, 0, dst + e->sink.out.len, held), BW_OK);
    return e->sink.out.len + held;
}


void on_done(void *ctx, const void *data, size_t n)
{
    donec *d = (donec *)ctx;
    d->calls++;
    d->data = data;
    d->n = n;
}

void fill(unsigned char *p, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = pat(i, seed);
}

/* The held bytes as one malloc'd copy, through bw_iovec (as many pieces
 * as there are: bw_iovec with no room counts them). */
unsigned char *held_by_iovec(const bw_writer *w, size_t *n)
{
    size_t want = bw_iovec(w, NULL, 0), k, i, off = 0;
    struct iovec *iov = (struct iovec *)malloc((want + 1) * sizeof *iov);
    unsigned char *b = (unsigned char *)malloc(bw_len(w) + 1);
    cr_assert(iov != NULL && b != NULL);
    k = bw_iovec(w, iov, want + 1);
    cr_assert_eq(k, want, "the count with no room is the count");
    for (i = 0; i < k; i++) {
        cr_assert(iov[i].iov_len != 0, "no empty iovec entry");
        memcpy(b + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    free(iov);
    *n = off;
    return b;
}

uint64_t outstanding(bw_pool *p)
{
    bw_pool_stats st;
    bw_pool_get_stats(p, &st);
    return st.outstanding_bytes;
}
