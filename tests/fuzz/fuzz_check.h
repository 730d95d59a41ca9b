/* SPDX-License-Identifier: MIT */
/* fuzz_check.h - what fuzz_ops.c checks around every operation: the
 * state before it (pre), the status and bytes it must give (expect, wrote,
 * none), the writer against the model after it (post, compare), and the
 * choice of sizes, positions and a writer's mode (reinit).
 * Included once, by fuzz_ops.c, where these sections stood; it uses that
 * file's CHECK, MIN and MAX and what the files included before it define. */

/* --------------------------------------------------------- checking -- */
/* What held what before the operation, and what the operation may do. */
enum { GROW, KEEP, RESET }; /* may make room (grow, link, send) / may not / starts over */
static struct {
    int err0;
    uint64_t tell0;
    size_t free0, held0, req, cap0;
    const unsigned char *blk0, *p0; /* contiguous block; segmented: first held byte */
    uint64_t pos0, rents0;
    long calls0;
    int kind, zero, moves, big_ok;
    int made_room; /* a span succeeded: what failed after it was the advance */
    int consumed;  /* a consume emptied the writer */
    int fresh;     /* release or init */
} oc;

static size_t pieces(slot *x)
{
    size_t n = bw_iovec(&x->w, NULL, 0);
    if (n > ivcap) {
        ivcap = 2 * n;
        iv = (struct iovec *)realloc(iv, ivcap * sizeof *iv);
        CHECK(iv != NULL);
    }
    CHECK(bw_iovec(&x->w, iv, n) == n);
    return n;
}

/* A pointer into the writer's own held bytes (from bw_data, or from one
 * bw_iovec entry) and how many held bytes follow it in that block. */
static const unsigned char *alias(in *s, slot *x, size_t *avail)
{
    const unsigned char *d = bw_data(&x->w);
    size_t i, at;
    if (x->len == 0) return NULL;
    if (d != NULL && (u8(s) & 1)) {
        at = u16(s) % x->len;
        *avail = x->len - at;
        return d + at;
    }
    i = u8(s) % pieces(x);
    at = u16(s) % iv[i].iov_len;
    *avail = iv[i].iov_len - at;
    return (const unsigned char *)iv[i].iov_base + at;
}

static void pre(slot *x)
{
    bw_pool_stats st;
    int i;
    memset(&oc, 0, sizeof oc);
    failed_now = big_now = 0;
    for (i = 0; i < NW; i++) {
        sinkst *k = &slots[i].sk;
        k->calls = k->fails = k->after_fail = 0;
        k->eintr = 0;
        CHECK(k->n == 0);
    }
    oc.err0 = x->err;
    oc.tell0 = x->base + x->len;
    oc.held0 = x->len;
    oc.free0 = bw_free_capacity(&x->w);
    oc.blk0 = x->w.data;
    oc.cap0 = x->w.cap;
    oc.pos0 = x->base;
    if (x->mode == CHAIN && x->len) {
        pieces(x);
        oc.p0 = (const unsigned char *)iv[0].iov_base;
    }
    bw_pool_get_stats(pool, &st);
    oc.rents0 = st.rents;
    oc.calls0 = calls;
    oc.kind = GROW;
    errno = 0;
}

/* A status against the rules' `want`. Besides it a call may fail with
 * BW_ENOMEM when an allocation failed inside it, BW_EIO when its sink
 * failed, BW_EINVAL on a streaming writer without a sink. While an error is
 * recorded, the call returns it. Records failures; true on success. */
static int expect(slot *x, int rc, int want)
{
    if (x->err != BW_OK) {
        CHECK(rc == x->err);
        return 0;
    }
    if (rc != want) {
        CHECK(rc != BW_OK);
        CHECK((rc == BW_ENOMEM && (failed_now || (big_now && oc.big_ok))) ||
              (rc == BW_EIO && x->sk.fails) || (rc == BW_EINVAL && x->nosink));
    }
    if (rc != BW_OK) x->err = rc;
    return rc == BW_OK;
}

/* A call that works while an error is recorded (patch, truncate): then it
 * does what it would do without one, and the first error stays. */
static int expect_always(slot *x, int rc, int want)
{
    if (x->err == BW_OK) return expect(x, rc, want);
    if (want != BW_OK || rc != BW_OK)
        CHECK(rc == want || (rc == BW_ENOMEM && failed_now));
    return rc == BW_OK;
}

/* A call that appends the n bytes expb[0..n). Failed, it accepted nothing;
 * only a streaming call larger than the buffer may have accepted a prefix. */
static void wrote(slot *x, int rc, size_t n, int want)
{
    uint64_t got = bw_tell(&x->w) - oc.tell0;
    int refused = x->err != BW_OK;
    if (expect(x, rc, want)) {
        CHECK(got == n);
        m_append(x, expb, n);
        return;
    }
    if (got) CHECK(!refused && rc != want && x->mode == STREAM && got < n && n > x->sbuf);
    m_append(x, expb, (size_t)got);
}
/* A call that appends nothing (failing ones included). */
static void none(slot *x, int rc, int want)
{
    expect(x, rc, want);
    CHECK(bw_tell(&x->w) == oc.tell0);
}
/* The bytes the size limit leaves (SIZE_MAX: no limit). */
static size_t lim_room(const slot *x)
{
    uint64_t tell = x->base + x->len;
    if (x->limit == 0) return SIZE_MAX;
    return x->limit > tell ? (size_t)(x->limit - tell) : 0;
}
/* What a call asking for n more bytes must return when nothing fails: the
 * size limit is asked first, in every mode. */
static int room(slot *x, size_t n)
{
    if (n != 0 && n > lim_room(x)) return BW_ELIMIT;
    return x->mode == FIXED && n > x->fsize - x->len ? BW_EFULL : BW_OK;
}
/* A size no writer can take (reserve, span, write): past any limit first. */
static int too_big_limited(slot *x)
{
    return x->limit != 0 ? BW_ELIMIT : x->mode == FIXED ? BW_EFULL : BW_EOVERFLOW;
}
/* An advance of n past the free space: BW_EINVAL past the block, BW_ELIMIT
 * when only the limit ends the space (white-box: the block's free bytes). */
static int past_free(slot *x, size_t n)
{
    return n > x->w.cap - x->w.len ? BW_EINVAL : BW_ELIMIT;
}
/* A reserve or span of an unrepresentable size fails at once, before any
 * send; PTRDIFF_MAX itself is representable: segmented and streaming
 * writers may try to rent it (BW_ENOMEM), and streaming ones send what they
 * hold first (bufwriter.h, the streaming writer). */
static void big_size(slot *x, size_t n)
{
    int maybe = n == (size_t)PTRDIFF_MAX && x->mode != CONTIG && x->mode != FIXED;
    oc.big_ok = maybe;
    oc.kind = maybe && x->mode == STREAM ? GROW : KEEP;
    oc.req = n;
}
/* A span of avail bytes at sp was handed out for oc.req: no error was
 * recorded, the call had room to make, avail is the free space and covers
 * the request, and a contiguous block's span starts right after the held
 * bytes. */
static void span_granted(slot *x, const unsigned char *sp, size_t avail)
{
    const bw_writer *w = &x->w;
    CHECK(oc.err0 == BW_OK);
    expect(x, BW_OK, room(x, oc.req));
    oc.made_room = 1;
    CHECK(avail == bw_free_capacity(w) && avail >= oc.req);
    if (x->mode != CHAIN) CHECK(sp == bw_data(w) + bw_len(w));
}
static int too_big(slot *x) { return x->mode == FIXED ? BW_EFULL : BW_EOVERFLOW; }

static void compare(slot *x)
{
    bw_writer *w = &x->w;
    const unsigned char *p = bw_data(w);
    size_t n, i, at = 0;

    CHECK(bw_error(w) == x->err);
    CHECK(bw_errno(w) == (x->err == BW_EIO ? x->syserr : 0));
    CHECK(bw_len(w) == x->len);
    CHECK(bw_tell(w) == x->base + x->len);
    CHECK(bw_capacity(w) == bw_len(w) + bw_free_capacity(w));
    CHECK(bw_writer_pool(w) == (x->mode == FIXED ? NULL : pool));
    CHECK(bw_copy_out(w, 0, tmp, x->len) == BW_OK);
    CHECK(same(tmp, x->d, x->len));
    CHECK(bw_copy_out(w, x->len, tmp, 0) == BW_OK);
    CHECK(bw_copy_out(w, x->len + 1, tmp, 0) == BW_EINVAL);
    CHECK(bw_copy_out(w, 0, tmp, x->len + 1) == BW_EINVAL);
    n = pieces(x);
    for (i = 0; i < n; i++) {
        CHECK(iv[i].iov_len > 0 && iv[i].iov_len <= x->len - at);
        CHECK(same(iv[i].iov_base, x->d + at, iv[i].iov_len));
        at += iv[i].iov_len;
    }
    CHECK(at == x->len);
    if (n > 1) CHECK(x->mode == CHAIN && p == NULL);
    if (n == 1) CHECK(p == iv[0].iov_base);
    if (x->mode != CHAIN && bw_capacity(w) > 0) CHECK(p != NULL);
    CHECK(bw_error(w) == x->err); /* read-outs never record */
    CHECK(bw_strerror(x->err) != NULL && bw_strerror(x->err)[0] != 0);
}

static void check_guards(void)
{
    int i;
    size_t j;
    for (i = 0; i < NW; i++) {
        slot *x = &slots[i];
        if (x->mode != FIXED || x->fbuf == NULL) continue;
        for (j = x->fsize; j < sizeof x->fmem; j++) CHECK(x->fmem[j] == guard_byte(j));
    }
}

static void post(slot *x)
{
    bw_writer *w = &x->w;
    sinkst *k = &x->sk;
    int e = errno, i;
    bw_pool_stats st;

    TRACE("    -> req %zu kind %d sink calls %ld | model len %zu base %" PRIu64 " err %d | lib len %zu tell %" PRIu64
          " err %d free %zu\n", oc.req, oc.kind, k->calls, x->len, x->base, x->err, bw_len(w), bw_tell(w), bw_error(w),
          bw_free_capacity(w));

    for (i = 0; i < NW; i++)
        if (&slots[i] != x) CHECK(slots[i].sk.calls == 0);
    if (x->mode == STREAM) { /* what left the buffer went to the sink, in order */
        uint64_t lb = bw_tell(w) - bw_len(w);
        size_t sent;
        CHECK(lb >= x->base && lb - x->base <= x->len);
        sent = (size_t)(lb - x->base);
        CHECK(k->n == sent && same(k->rcv, x->d, sent));
        m_drop(x, sent);
        k->n = 0;
    }
    CHECK(k->n == 0);
    if (k->calls) CHECK(oc.err0 == BW_OK && oc.kind == GROW && oc.req > oc.free0);
    if (k->fails) CHECK(x->err == BW_EIO && k->after_fail == 0 && e == k->err_no);
    if (oc.err0 == BW_OK && x->err == BW_EIO) x->syserr = k->err_no;
    bw_pool_get_stats(pool, &st);
    if (oc.zero || x->mode == FIXED) CHECK(st.rents == oc.rents0 && calls == oc.calls0);

    /* Blocks (white-box: w.data, w.cap are the block and its size). */
    if (x->mode == CONTIG && oc.kind != RESET) {
        int moved = w->data != oc.blk0 || w->cap != oc.cap0;
        int failed = oc.err0 == BW_OK && x->err != BW_OK && !oc.made_room;
        if (oc.kind == KEEP || oc.err0 != BW_OK || failed || oc.req <= oc.free0) CHECK(!moved);
        else if (moved && oc.cap0 != 0 && oc.req <= 4 * MAX_LEN) {
            CHECK(w->cap >= 2 * oc.cap0);
            /* out of the caller's buffer, the learned size if larger */
            size_t first = learn_size && x->isize && oc.blk0 == x->ibuf ? st.learned_size : 0;
            /* the growth rule's size, or towards the learned jump within
             * the bound: at most 16 x the bytes needed from the allocator;
             * or the learned jump's size itself, a block the pool held
             * idle (no allocator call) */
            size_t bound = learned_jump ? 16 * (oc.held0 + oc.req) : 0;
            size_t idle = learned_jump && calls == oc.calls0 ? st.learned_large_size : 0;
            /* or, widened in place, the whole of a learned first block:
             * a zeroing pool's window (at least 4 KiB) in an exact-size
             * block (BW_POOL_BYPASS) is the block whole once the doubled
             * window passes half of it, memory the writer already held */
            size_t whole = w->data == oc.blk0 ? x->learned0 : 0;
            CHECK(w->cap == whole ||
                  w->cap <= MAX(MAX(class_of(MAX(2 * oc.cap0, oc.held0 + oc.req)), first),
                                MAX(bound, idle)));
        }
    }
    /* A new first pooled block (none before, the caller's buffer, or a new
     * init) is the learned size when that is larger (bw_init, min_first_block). */
    if (x->mode == CONTIG && w->data != oc.blk0)
        x->learned0 = learn_size && (oc.kind == RESET || oc.cap0 == 0 || oc.blk0 == x->ibuf)
                          ? st.learned_size
                          : 0;
    if (x->mode == CONTIG) {
        if (x->isize && w->data == x->ibuf) CHECK(w->cap == x->isize);
        else if (w->cap && !bypass) CHECK(is_pow2(w->cap) && w->cap >= minblk);
    }
    if (x->mode == STREAM && w->cap) CHECK(w->cap >= x->sbuf);
    if (x->mode == FIXED) {
        CHECK(bw_capacity(w) <= x->fsize);
        if (x->len == 0 && (oc.consumed || oc.fresh) && x->err == BW_OK)
            CHECK(bw_free_capacity(w) == MIN(x->fsize, lim_room(x)));
    }
    /* When everything held was consumed the start is back at the block's
     * beginning (bw_consume). */
    if (oc.consumed && x->mode != CHAIN && x->len == 0 && x->err == BW_OK)
        CHECK(bw_free_capacity(w) == MIN(w->cap, lim_room(x)));
    CHECK(bw_free_capacity(w) <= lim_room(x)); /* no span past the limit */
    if (x->err != BW_OK) CHECK(bw_free_capacity(w) == 0); /* every write fails */

    compare(x);
    /* Segmented blocks never move: the first byte held before, if still
     * held, is where it was (iv is x's, from compare). */
    if (x->mode == CHAIN && oc.p0 && oc.kind != RESET && !oc.moves && oc.pos0 >= x->base &&
        oc.pos0 < x->base + x->len) {
        size_t off = (size_t)(oc.pos0 - x->base), j = 0;
        while (off >= iv[j].iov_len) off -= iv[j++].iov_len;
        CHECK((const unsigned char *)iv[j].iov_base + off == oc.p0);
    }
    check_guards();
}

/* A size for a call: often at an edge (the free capacity, or a fixed
 * writer's room over consumed bytes, minus 1, exactly, plus 1), else
 * 0..max. At most left. */
static size_t pick_size(in *s, slot *x, size_t max, size_t left)
{
    unsigned how = u8(s);
    size_t n;
    if (how < 80) {
        n = x->mode == FIXED && (how & 4) ? x->fsize - x->len : bw_free_capacity(&x->w);
        n = n + (how & 3) - 1;   /* -1, 0, +1, +2 (wraps to SIZE_MAX for 0 - 1) */
        if (n > max) n = u16(s) % (max + 1);
    } else {
        n = u16(s) % (max + 1);
    }
    return MIN(n, left);
}

/* A position near the held range: inside, before it (consumed or sent),
 * past bw_tell, or where pos + n wraps. */
static uint64_t pick_pos(in *s, slot *x)
{
    uint64_t tell = x->base + x->len;
    size_t d = u16(s);
    switch (u8(s) % 8) {
    case 0: case 1: case 2: return x->base + d % (x->len + 1);
    case 3: return tell - d % 16;
    case 4: return x->base - 1 - d % 8;
    case 5: return tell + 1 + d % 8;
    case 6: return UINT64_MAX - d % 8;
    default: return u64(s);
    }
}

/* ------------------------------------------------------------- init -- */
static void reinit(in *s, slot *x)
{
    bw_writer *w = &x->w;
    unsigned how = u8(s) % 12, bad = u8(s) % 8 == 0;
    size_t n;
    int rc, i;

    pre(x);
    TRACE("w%d init how %u bad %u\n", (int)(x - slots), how, bad);
    oc.kind = RESET;
    oc.zero = oc.fresh = 1;
    bw_release(w);
    m_reset(x);
    x->limit = 0; /* every init's */
    x->nosink = 0;
    x->sbuf = x->fsize = x->isize = 0;
    x->fbuf = NULL;
    if (how < 3) { /* contiguous, maybe with an initial capacity */
        x->mode = CONTIG;
        bw_pool_stats st;
        n = bad ? huge(s) : (u8(s) & 1) ? u16(s) : 0;
        oc.zero = n == 0;
        bw_pool_get_stats(pool, &st);
        rc = bw_init(w, pool, n);
        expect(x, rc, bad ? BW_EOVERFLOW : BW_OK);
        if (rc == BW_OK && n && !learn_size) CHECK(w->cap == rent_of(n));
        if (rc == BW_OK && n && learn_size) /* the larger of n and the learned size */
            CHECK(w->cap >= rent_of(n) && w->cap <= MAX(class_of(n), st.learned_size));
    } else if (how < 5) { /* contiguous in a caller's buffer */
        x->mode = CONTIG;
        n = 1 + u8(s) % sizeof x->ibuf;
        if (bad && (u8(s) & 1)) rc = bw_init_buffer(w, pool, NULL, n);
        else rc = bw_init_buffer(w, pool, x->ibuf, bad ? 0 : n);
        if (expect(x, rc, bad ? BW_EINVAL : BW_OK)) x->isize = n;
    } else if (how < 7) {
        x->mode = CHAIN;
        expect(x, bw_init_chain(w, pool), BW_OK);
    } else if (how < 10) { /* streaming into the scripted sink, or none */
        unsigned sz = u8(s) % 8;
        x->mode = STREAM;
        n = sz == 0 ? 0 : sz == 1 ? huge(s) : 1 + u16(s) % 4096;
        for (i = 0; i < SCRIPT; i++) x->sk.script[i] = (unsigned char)u8(s);
        x->sk.at = 0;
        if (bad) { /* no sink; with a huge size either error may come first */
            rc = bw_init_sink(w, pool, n, NULL, NULL);
            CHECK(rc == BW_EINVAL || (sz == 1 && rc == BW_EOVERFLOW));
            x->err = rc;
            x->nosink = 1;
        } else {
            rc = bw_init_sink(w, pool, n, sink, &x->sk);
            if (expect(x, rc, sz == 1 ? BW_EOVERFLOW : BW_OK))
                x->sbuf = n ? (bypass && n <= threshold ? n : class_of(n)) : 64u << 10;
            else x->nosink = 1; /* a failed init: whether it kept the sink is not said */
        }
    } else { /* fixed, with guard bytes after it */
        x->mode = FIXED;
        for (n = 0; n < sizeof x->fmem; n++) x->fmem[n] = guard_byte(n);
        n = u16(s) % (FIX_MAX + 1);
        if (bad) {
            rc = bw_init_fixed(w, NULL, n);
            if (n) expect(x, rc, BW_EINVAL);
            else expect(x, rc, BW_OK);
        } else {
            rc = bw_init_fixed(w, x->fmem, n);
            if (expect(x, rc, BW_OK)) {
                x->fbuf = x->fmem;
                x->fsize = n;
            }
        }
    }
    post(x);
}
