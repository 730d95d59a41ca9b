/* SPDX-License-Identifier: MIT */
/* test_segmented.c - segmented storage in every state it can reach: held
 * bytes as pieces over the writer's blocks and over caller memory linked by
 * reference. bw_move of every source state into every destination state,
 * then a truncate, patch, consume or write at every position, each checked
 * byte for byte against a model through bw_copy_out and bw_iovec, with
 * every done counted and no memory taken where none is needed. */
#include "harness.h"

#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif

/* Blocks of 64 bytes (32 usable, the trailer after them), so that a few
 * hundred bytes span many blocks. */
#define SMALL_BLOCK 64
/* Valgrind runs the same cases at every 5th position. */
#ifdef BW_VALGRIND
#  define STEP 5
#else
#  define STEP 1
#endif

#define MAXB 1024
#define NREFS 8

/* A writer and what it must hold. */
typedef struct model {
    bw_writer w;
    unsigned char d[MAXB];
    size_t len;
    uint64_t base;
} model;

/* Caller memory to link: each done must come once, with what was given. */
static unsigned char refmem[2][NREFS][64];
static struct {
    const void *data;
    size_t n;
    int linked, done;
} dones[2][NREFS];

static void seg_done(void *ctx, const void *data, size_t n)
{
    int *k = (int *)ctx;
    int side = k[0], i = k[1];
    cr_assert(dones[side][i].linked, "done of a reference never linked");
    cr_assert(data == dones[side][i].data && n == dones[side][i].n, "done gets what was given");
    dones[side][i].done++;
}
static int done_ctx[2][NREFS][2];

static void m_write(model *m, unsigned seed, size_t n)
{
    unsigned char b[MAXB];
    size_t i;
    for (i = 0; i < n; i++) b[i] = pat(m->len + i, seed);
    cr_assert_eq(bw_write(&m->w, b, n), BW_OK);
    memcpy(m->d + m->len, b, n);
    m->len += n;
}

static void m_ref(model *m, int side, int i, size_t n)
{
    unsigned char *r = refmem[side][i];
    size_t k;
    for (k = 0; k < n; k++) r[k] = (unsigned char)(0x80 + side * 32 + i * 4 + k);
    dones[side][i].data = r;
    dones[side][i].n = n;
    dones[side][i].linked = 1;
    dones[side][i].done = 0;
    done_ctx[side][i][0] = side;
    done_ctx[side][i][1] = i;
    cr_assert_eq(bw_append_ref(&m->w, r, n, seg_done, done_ctx[side][i]), BW_OK);
    memcpy(m->d + m->len, r, n);
    m->len += n;
}

static void m_consume(model *m, size_t n)
{
    cr_assert_eq(bw_consume(&m->w, n), BW_OK);
    memmove(m->d, m->d + n, m->len - n);
    m->len -= n;
    m->base += n;
}

static void m_truncate(model *m, uint64_t pos)
{
    cr_assert_eq(bw_truncate(&m->w, pos), BW_OK);
    m->len = (size_t)(pos - m->base);
}

/* The writer holds exactly the model's bytes, by every read-out. */
static void m_check(const model *m, const char *what, int st_src, int st_dst, uint64_t pos)
{
    unsigned char got[MAXB];
    struct iovec iov[MAXB];
    size_t k, i, at = 0;
    cr_assert_eq(bw_len(&m->w), m->len, "%s (src %d, dst %d, at %llu): bw_len", what, st_src,
                 st_dst, (unsigned long long)pos);
    cr_assert_eq(bw_tell(&m->w), m->base + m->len, "%s (src %d, dst %d): bw_tell %llu", what,
                 st_src, st_dst, (unsigned long long)bw_tell(&m->w));
    cr_assert_eq(bw_copy_out(&m->w, 0, got, m->len), BW_OK);
    cr_assert(m->len == 0 || memcmp(got, m->d, m->len) == 0,
              "%s (src %d, dst %d, at %llu): bytes", what, st_src, st_dst,
              (unsigned long long)pos);
    k = bw_iovec(&m->w, iov, MAXB);
    cr_assert_eq(bw_iovec(&m->w, NULL, 0), k, "the count without a walk");
    for (i = 0; i < k; i++) {
        cr_assert(iov[i].iov_len > 0, "never an empty entry");
        cr_assert(memcmp(iov[i].iov_base, m->d + at, iov[i].iov_len) == 0,
                  "%s (src %d, dst %d, at %llu): iovec %zu", what, st_src, st_dst,
                  (unsigned long long)pos, i);
        at += iov[i].iov_len;
    }
    cr_assert_eq(at, m->len);
}

/* The states a segmented writer's storage can be in. */
enum {
    S_EMPTY,          /* no storage                                   */
    S_ONE,            /* one block                                    */
    S_ONE_CONSUMED,   /* one block, its front consumed                */
    S_MANY,           /* several blocks                               */
    S_MANY_CONSUMED,  /* several, the first block partly consumed     */
    S_MANY_PAST,      /* several, consumed past the first block       */
    S_REF_MIDDLE,     /* bytes, a reference, bytes in the same block  */
    S_REF_ONLY,       /* a reference and no block                     */
    S_REF_CONSUMED,   /* a reference partly consumed, bytes after it  */
    S_TRUNCATED,      /* truncated back into an earlier block         */
    S_MOVED,          /* holding another writer's pieces              */
    S_CLEARED,        /* cleared, then written again                  */
    S_CONTIG,         /* (source only) contiguous: copied             */
    S_OTHER_POOL,     /* (source only) segmented on another pool      */
    NSTATES
};
#define NDST S_CONTIG

static void build(model *m, int state, int side, bw_pool *pool, bw_pool *other)
{
    model t;
    unsigned seed = (unsigned)(side * 50 + state);
    memset(m->d, 0, sizeof m->d);
    m->len = 0;
    m->base = 0;
    if (state == S_CONTIG) cr_assert_eq(bw_init(&m->w, pool, 0), BW_OK);
    else cr_assert_eq(bw_init_chain(&m->w, state == S_OTHER_POOL ? other : pool), BW_OK);
    switch (state) {
    case S_EMPTY: break;
    case S_ONE: m_write(m, seed, 20); break;
    case S_ONE_CONSUMED: m_write(m, seed, 20); m_consume(m, 7); break;
    case S_MANY: m_write(m, seed, 100); break;
    case S_MANY_CONSUMED: m_write(m, seed, 100); m_consume(m, 10); break;
    case S_MANY_PAST: m_write(m, seed, 100); m_consume(m, 40); break;
    case S_REF_MIDDLE: m_write(m, seed, 10); m_ref(m, side, 0, 15); m_write(m, seed, 10); break;
    case S_REF_ONLY: m_ref(m, side, 0, 25); break;
    case S_REF_CONSUMED:
        m_ref(m, side, 0, 25);
        m_write(m, seed, 5);
        m_consume(m, 8);
        break;
    case S_TRUNCATED: m_write(m, seed, 100); m_truncate(m, 20); m_write(m, seed + 1, 5); break;
    case S_MOVED:
        m_write(m, seed, 10);
        cr_assert_eq(bw_init_chain(&t.w, pool), BW_OK);
        t.len = 0;
        t.base = 0;
        m_write(&t, seed + 2, 40);
        m_ref(&t, side, 1, 10);
        cr_assert_eq(bw_move(&m->w, &t.w), BW_OK);
        memcpy(m->d + m->len, t.d, t.len);
        m->len += t.len;
        bw_release(&t.w);
        m_write(m, seed + 3, 5);
        break;
    case S_CLEARED:
        m_write(m, seed, 50);
        bw_clear(&m->w); /* bw_tell goes back to the first byte dropped */
        m->len = 0;
        m_write(m, seed + 4, 10);
        break;
    case S_CONTIG: m_write(m, seed, 30); m_consume(m, 4); break;
    case S_OTHER_POOL: m_write(m, seed, 70); m_ref(m, side, 0, 12); m_consume(m, 3); break;
    default: cr_assert(0, "no such state");
    }
}

static int has_ref(int state)
{
    return state == S_REF_MIDDLE || state == S_REF_ONLY || state == S_REF_CONSUMED ||
           state == S_MOVED || state == S_OTHER_POOL;
}

static void reset_dones(void) { memset(dones, 0, sizeof dones); }

/* Every reference linked got its done exactly once. */
static void check_dones(void)
{
    int s, i;
    for (s = 0; s < 2; s++)
        for (i = 0; i < NREFS; i++)
            cr_assert_eq(dones[s][i].done, dones[s][i].linked, "done %d/%d ran %d times", s, i,
                         dones[s][i].done);
}

static bw_pool *small_pool(test_alloc *ta)
{
    bw_pool_options o;
    bw_pool *p;
    memset(&o, 0, sizeof o);
    o.allocator = &ta->hook;
    o.chain_block_size = SMALL_BLOCK;
    o.decay_ms = BW_DECAY_NEVER;
    cr_assert_eq(bw_pool_create(&p, &o), BW_OK);
    return p;
}

enum { OP_TRUNCATE, OP_PATCH, OP_PATCH_OWN, OP_CONSUME, OP_WRITE, NOPS };

/* dst and src built, src moved into dst: dst holds both, src nothing. */
static void build_moved(model *dst, int ss, int ds, bw_pool *pool, bw_pool *other)
{
    model src;
    reset_dones();
    build(dst, ds, 0, pool, other);
    build(&src, ss, 1, pool, other);
    cr_assert_eq(bw_move(&dst->w, &src.w), BW_OK);
    memcpy(dst->d + dst->len, src.d, src.len);
    dst->len += src.len;
    src.base += src.len;
    src.len = 0;
    m_check(&src, "src after the move", ss, ds, 0);
    m_check(dst, "dst after the move", ss, ds, 0);
    bw_release(&src.w);
}

/* One case: the moved pair built anew for each position (a writer cannot
 * be copied), then op at pos. */
static void one_case(bw_pool *pool, bw_pool *other, int ss, int ds, int op, uint64_t *npos)
{
    model dst;
    uint64_t pos, tell;
    int refs = has_ref(ss) || has_ref(ds);
    build_moved(&dst, ss, ds, pool, other);
    tell = dst.base + dst.len;
    *npos = tell - dst.base + 1;
    for (pos = dst.base; pos <= tell; pos += STEP) {
        model m;
        bw_pool_stats st0, st1;
        if (pos != dst.base) {
            bw_release(&dst.w);
            check_dones();
            build_moved(&dst, ss, ds, pool, other);
        }
        m = dst;
        bw_pool_get_stats(pool, &st0);
        switch (op) {
        case OP_TRUNCATE:
            m_truncate(&m, pos);
            break;
        case OP_PATCH: {
            size_t n = (size_t)(tell - pos) < 6 ? (size_t)(tell - pos) : 6;
            cr_assert_eq(bw_patch(&m.w, pos, "PATCH!", n), BW_OK);
            memcpy(m.d + (pos - m.base), "PATCH!", n);
            break;
        }
        case OP_PATCH_OWN: { /* from the writer's own first held bytes */
            struct iovec v;
            size_t n = (size_t)(tell - pos) < 6 ? (size_t)(tell - pos) : 6;
            if (bw_iovec(&m.w, &v, 1) == 0) break;
            if (n > v.iov_len) n = v.iov_len;
            memmove(m.d + (pos - m.base), m.d, n);
            cr_assert_eq(bw_patch(&m.w, pos, v.iov_base, n), BW_OK);
            break;
        }
        case OP_CONSUME:
            m_consume(&m, (size_t)(pos - m.base));
            break;
        case OP_WRITE:
            m_truncate(&m, pos);
            m_write(&m, 77, (size_t)(pos % 50));
            break;
        }
        bw_pool_get_stats(pool, &st1);
        m_check(&m, op == OP_TRUNCATE ? "truncate" : op == OP_CONSUME ? "consume"
                    : op == OP_WRITE ? "truncate+write" : "patch", ss, ds, pos);
        if (op == OP_TRUNCATE || op == OP_CONSUME || (op != OP_WRITE && !refs))
            cr_assert_eq(st1.rents, st0.rents, "a truncate, consume or patch of the writer's "
                         "own bytes takes no memory");
        /* and writing goes on after it, in every state */
        m_write(&m, 99, 45);
        m_check(&m, "a write after", ss, ds, pos);
        dst = m;
    }
    bw_release(&dst.w);
    check_dones();
}

static void every_state(int op)
{
    test_alloc ta, tb;
    bw_pool *pool, *other;
    bw_pool_stats st;
    uint64_t cases = 0, n;
    int ss, ds;
    ta_init(&ta, 1);
    ta_init(&tb, 1);
    pool = small_pool(&ta);
    other = small_pool(&tb);
    for (ss = 0; ss < NSTATES; ss++) {
        for (ds = 0; ds < NDST; ds++) {
            one_case(pool, other, ss, ds, op, &n);
            cases += n;
            bw_pool_get_stats(pool, &st);
            cr_assert_eq(st.outstanding_bytes, 0, "src %d dst %d: everything back", ss, ds);
        }
    }
    cr_assert_gt(cases, 10000 / STEP, "positions tried: %llu", (unsigned long long)cases);
    ta_finish(&ta, pool);
    ta_finish(&tb, other);
}

Test(segmented, move_then_truncate_at_every_position_in_every_state) { every_state(OP_TRUNCATE); }
Test(segmented, move_then_patch_at_every_position_in_every_state) { every_state(OP_PATCH); }
Test(segmented, move_then_patch_from_own_bytes_in_every_state) { every_state(OP_PATCH_OWN); }
Test(segmented, move_then_consume_at_every_position_in_every_state) { every_state(OP_CONSUME); }
Test(segmented, move_then_write_at_every_position_in_every_state) { every_state(OP_WRITE); }

/* A msgpack vrefbuffer-like job: 1,000 records of 10 bytes written and a
 * 4 KiB body linked. References cost a piece record each, no block: at
 * most 256 bytes of pool memory per reference and at most 100 rents, for
 * distinct bodies and for the same body each time; and a stream of such
 * jobs makes no backing allocation after the first. */
static void vref_jobs(int same)
{
    static unsigned char bodies[16][4096];
    test_alloc ta;
    bw_pool *p;
    bw_pool_stats a, b;
    bw_writer w;
    int job, i;
    ta_init(&ta, 1);
    p = ta_pool_defaults(&ta);
    for (i = 0; i < 16; i++) memset(bodies[i], 'a' + i, sizeof bodies[i]);
    for (job = 0; job < 4; job++) {
        bw_pool_get_stats(p, &a);
        cr_assert_eq(bw_init_chain(&w, p), BW_OK);
        for (i = 0; i < 1000; i++) {
            cr_assert_eq(bw_write(&w, "0123456789", 10), BW_OK);
            cr_assert_eq(bw_append_ref(&w, bodies[same ? 0 : i % 16], 4096, NULL, NULL), BW_OK);
        }
        bw_pool_get_stats(p, &b);
        cr_assert_eq(bw_len(&w), 1000 * 4106);
        /* a header and a body each, and a header split where a block fills */
        cr_assert(bw_iovec(&w, NULL, 0) >= 2000 && bw_iovec(&w, NULL, 0) <= 2010, "%zu pieces",
                  bw_iovec(&w, NULL, 0));
        cr_expect_leq(b.outstanding_bytes, 256 * 1000, "%zu bytes of pool memory for 1,000 "
                      "references", b.outstanding_bytes);
        cr_expect_leq(b.rents - a.rents, 100, "%" PRIu64 " rents", b.rents - a.rents);
        if (job > 0)
            cr_expect_eq(b.backing_allocs, a.backing_allocs, "job %d: steady state", job);
        bw_release(&w);
    }
    ta_finish(&ta, p);
}

Test(segmented, references_take_a_record_each_not_a_block) { vref_jobs(0); }
Test(segmented, the_same_body_linked_again_is_linked) { vref_jobs(1); }

/* On an exact-size pool a segmented block is as big as asked; its link sits
 * in its last bytes and must stay aligned (UBSan's alignment check fails on
 * 0.2; SIGBUS on strict-alignment machines). A block's capacity a multiple
 * of 16 is what keeps it so. */
Test(segmented, segmented_writer_on_a_bypass_pool_keeps_its_links_aligned)
{
    /* writes larger than twice the last block: blocks of exactly their size */
    static const size_t steps[] = {10001, 3, 77777, 5, 200001, 1};
    harness e;
    char *s = letters(300000, 9);
    size_t i, at = 0, len, cap;
    void *b;
    h_open_stale(&e, M_CHAIN, BW_POOL_BYPASS);
    for (i = 0; i < 6; i++) {
        cr_assert_eq(bw_write(&e.w, s + at, steps[i]), BW_OK);
        at += steps[i];
        cr_assert_eq(bw_put_u64le(&e.w, 0x7878787878787878u), BW_OK); /* into the link's block */
        memset(s + at, 'x', 8);
        at += 8;
        cr_assert_eq(bw_reserve(&e.w, 3 * at + 1), BW_OK);
    }
    expect_output(&e, s, at, "segmented on bypass");
    cr_assert_eq(bw_truncate(&e.w, 1000), BW_OK);
    cr_assert_eq(bw_reserve(&e.w, 333), BW_OK);
    cr_assert_not_null(bw_pullup(&e.w));
    b = bw_detach(&e.w, &len, &cap);
    cr_assert_not_null(b);
    cr_expect_eq(len, 1000);
    cr_expect_eq(cap % 16, 0, "a segmented block's capacity %zu is a multiple of 16", cap);
    cr_expect(memcmp(b, s, 1000) == 0);
    cr_expect_eq(bw_pool_return(e.p, b, cap), BW_OK);
    free(s);
    h_close(&e);
}

/* ======================================================================== */
/* bw_set_block_size: a segmented writer's own block size                   */
/* ======================================================================== */

/* Two segmented writers on one pool: the one given 64 KiB blocks rents
 * 64 KiB, the other the pool's chain_block_size; each next block doubles
 * from there, and 0 goes back to the pool's. */
Test(block_size, per_writer_on_one_pool)
{
    test_alloc ta;
    bw_pool *p = fresh_pool(&ta, 0, 0);
    bw_writer a, b;
    size_t want;
    bw_pool_options o;
    bw_pool_get_options(p, &o);
    cr_assert_eq(bw_init_chain(&a, p), BW_OK);
    cr_assert_eq(bw_init_chain(&b, p), BW_OK);
    cr_assert_eq(bw_set_block_size(&a, 65536), BW_OK);
    cr_assert_eq(bw_put_u8(&a, 1), BW_OK);
    cr_assert_eq(bw_put_u8(&b, 1), BW_OK);
    cr_expect_eq(bw_len(&a) + bw_free_capacity(&a) + 32, 65536, "a's first block: 64 KiB");
    cr_expect_eq(bw_len(&b) + bw_free_capacity(&b) + 32, o.chain_block_size,
                 "b's: the pool's chain_block_size");
    /* the size set after the first block: the next one follows it */
    cr_assert_eq(bw_set_block_size(&b, 20000), BW_OK); /* rounded up: 32 KiB */
    want = bw_free_capacity(&b) + 1;
    cr_assert_eq(bw_reserve(&b, want), BW_OK);
    cr_expect_eq(bw_free_capacity(&b) + 32, 32768, "b's next block: 32 KiB");
    cr_assert_eq(bw_set_block_size(&a, 0), BW_OK); /* back to the pool's, 2x the last */
    want = bw_free_capacity(&a) + 1;
    cr_assert_eq(bw_reserve(&a, want), BW_OK);
    cr_expect_eq(bw_free_capacity(&a) + 32, 131072, "a's next block doubles its last");
    bw_release(&a);
    bw_release(&b);
    ta_finish(&ta, p);
}

Test(block_size, range_and_other_modes)
{
    bw_writer w;
    unsigned char buf[16];
    cr_assert_eq(bw_init_chain(&w, NULL), BW_OK);
    cr_expect_eq(bw_set_block_size(NULL, 4096), BW_EINVAL);
    cr_expect_eq(bw_set_block_size(&w, 63), BW_OK, "below 64: 64");
    cr_assert_eq(bw_put_u8(&w, 1), BW_OK);
    cr_expect_eq(bw_len(&w) + bw_free_capacity(&w) + 32, 64);
    cr_expect_eq(bw_set_block_size(&w, ((size_t)1 << 30) + 1), BW_EINVAL, "above 1 GiB");
    cr_expect_eq(bw_set_block_size(&w, (size_t)1 << 30), BW_OK);
    cr_expect_eq(bw_error(&w), BW_OK, "nothing recorded");
    bw_release(&w);
    cr_assert_eq(bw_init(&w, NULL, 0), BW_OK);
    cr_expect_eq(bw_set_block_size(&w, 4096), BW_EINVAL, "contiguous");
    cr_expect_eq(bw_error(&w), BW_OK, "nothing recorded");
    bw_release(&w);
    cr_assert_eq(bw_init_fixed(&w, buf, sizeof buf), BW_OK);
    cr_expect_eq(bw_set_block_size(&w, 4096), BW_EINVAL, "fixed");
    bw_release(&w);
    cr_assert_eq(bw_init_fd(&w, NULL, 0, 1), BW_OK); /* nothing is written */
    cr_expect_eq(bw_set_block_size(&w, 4096), BW_EINVAL, "streaming");
    bw_release(&w);
}
