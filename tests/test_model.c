/* SPDX-License-Identifier: MIT */
/* test_model.c - a random model test: every mode against a plain byte
 * array. */
#define _GNU_SOURCE 1 /* usleep, NSIG, sigtimedwait */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#ifndef _WIN32
#  include <sys/uio.h> /* struct iovec (Windows: bufwriter.h has it) */
#endif
#include <time.h>
#include <unistd.h>

/* The model: every mode against a plain byte array                         */
/* ------------------------------------------------------------------------ */

typedef struct model {
    mw m;
    bytes R;          /* the byte at every position [0, bw_tell) */
    uint64_t base;    /* position of the first held byte */
    size_t sink_seen; /* sink bytes already matched */
    unsigned seed;
    int op;
    const char *what; /* the last op, for messages */
    int pullup_moved, pullup_first; /* pullups that copied contiguous bytes */
} model;

/* Take in what the sink got since the last look, then compare everything. */
static void model_check(model *md)
{
    bw_writer *w = &md->m.w;
    char where[96];
    snprintf(where, sizeof where, "%s op %d (%s)", mode_name[md->m.mode], md->op, md->what);
    if (md->m.mode == M_SINK) {
        size_t k = md->m.s.out.len - md->sink_seen;
        cr_assert_leq(md->base + k, md->R.len, "%s: sent more than held", where);
        cr_assert(k == 0 || memcmp(md->m.s.out.d + md->sink_seen, md->R.d + md->base, k) == 0,
                  "%s: the sink got other bytes", where);
        md->sink_seen += k;
        md->base += k;
    }
    cr_assert_eq(bw_error(w), BW_OK, "%s: error %d", where, bw_error(w));
    cr_assert_eq(bw_tell(w), md->R.len, "%s: tell", where);
    held_is(w, md->R.d + md->base, (size_t)(md->R.len - md->base), where);
    if (md->m.mode != M_CHAIN && bw_len(w) > 0) cr_assert_not_null(bw_data(w), "%s", where);
}

/* An append of exp[0..n) needing `need` bytes of room: compare with the
 * reference; a fixed writer without the room must refuse it (BW_EFULL,
 * recorded, nothing written); a streaming writer with the room must not send. */
static void model_append(model *md, int rc, const void *exp, size_t n, size_t need,
                         size_t held0, size_t free0, long calls0)
{
    bw_writer *w = &md->m.w;
    if (md->m.mode == M_FIXED && held0 + need > md->m.room) {
        cr_assert_eq(rc, BW_EFULL, "%s op %d: %zu + %zu > %zu", mode_name[md->m.mode], md->op,
                     held0, need, md->m.room);
        cr_assert_eq(bw_error(w), BW_EFULL);
        bw_clear_error(w);
        return;
    }
    cr_assert_eq(rc, BW_OK, "%s op %d: rc %d", mode_name[md->m.mode], md->op, rc);
    if (md->m.mode == M_SINK && need <= free0)
        cr_assert_eq(md->m.s.calls, calls0, "%s op %d: a call that fits (%zu <= %zu) sent",
                     mode_name[md->m.mode], md->op, need, free0);
    by_add(&md->R, exp, n);
}

static void rnd_bytes(unsigned *seed, unsigned char *p, size_t n, int nonzero)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = (unsigned char)(nonzero ? 1 + rnd(seed) % 255 : rnd(seed));
}

/* A pointer to k held bytes starting at held offset `at`, all in one piece
 * (NULL if there is no such piece). */
/* The bytes bw_put_f64le (n = 8) or bw_put_f32be (n = 4, big = 1) write
 * for v / 3: the IEEE bits of the double or float, in that byte order. */
static size_t float_bytes(unsigned char *buf, uint64_t v, int n, int big)
{
    double d = (double)v / 3.0;
    float f = (float)v / 3.0f;
    uint64_t u = 0;
    uint32_t u32;
    if (n == 8) {
        memcpy(&u, &d, 8);
    } else {
        memcpy(&u32, &f, 4);
        u = u32;
    }
    if (big) st_be(buf, u, n);
    else st_le(buf, u, n);
    return (size_t)n;
}

static const unsigned char *held_piece(const bw_writer *w, size_t at, size_t *k)
{
    struct iovec iov[1];
    if (bw_iovec(w, iov, 1) == 0) return NULL;
    if (at >= iov[0].iov_len) return NULL;
    if (*k > iov[0].iov_len - at) *k = iov[0].iov_len - at;
    return (const unsigned char *)iov[0].iov_base + at;
}

static void model_run(int mode, bw_pool *p, unsigned seed, int nops)
{
    model md;
    static unsigned char buf[24000];
    static unsigned char tmp[24000];
    memset(&md, 0, sizeof md);
    md.seed = seed;
    mw_init(&md.m, mode, p, mode == M_FIXED ? 16384 : 1024);
    md.m.s.seed = seed * 3;
    for (md.op = 0; md.op < nops; md.op++) {
        bw_writer *w = &md.m.w;
        size_t held0 = bw_len(w), free0 = bw_free_capacity(w), n, k;
        long calls0 = md.m.s.calls;
        uint64_t tell = bw_tell(w), pos;
        unsigned r = rnd(&md.seed) % 100;
        int rc;
        md.what = "none";
        if (held0 > 16000) { /* keep it bounded */
            md.what = "bound";
            cr_assert_eq(bw_consume(w, held0 - 1000), BW_OK);
            md.base += held0 - 1000;
            model_check(&md);
            continue;
        }
        if (r < 20) { /* write, of every size */
            md.what = "write";
            unsigned q = rnd(&md.seed) % 20;
            n = q < 14 ? rnd(&md.seed) % 64 : q < 19 ? rnd(&md.seed) % 3000
                                                     : rnd(&md.seed) % 20000;
            rnd_bytes(&md.seed, buf, n, 0);
            rc = bw_write(w, buf, n);
            model_append(&md, rc, buf, n, n, held0, free0, calls0);
        } else if (r < 25) { /* puts */
            md.what = "puts";
            n = rnd(&md.seed) % 300;
            rnd_bytes(&md.seed, buf, n, 1);
            buf[n] = '\0';
            rc = bw_puts(w, (const char *)buf);
            model_append(&md, rc, buf, n, n, held0, free0, calls0);
        } else if (r < 32) { /* printf, short and long */
            md.what = "printf";
            int width = (int)(rnd(&md.seed) % (rnd(&md.seed) % 4 ? 40 : 5000));
            n = (size_t)snprintf((char *)tmp, sizeof tmp, "<%*d|%s|%.2f>", width, md.op, "str",
                                 md.op / 7.0);
            rc = bw_printf(w, "<%*d|%s|%.2f>", width, md.op, "str", md.op / 7.0);
            model_append(&md, rc, tmp, n, n, held0, free0, calls0);
        } else if (r < 42) { /* typed puts */
            md.what = "typed put";
            unsigned t = rnd(&md.seed) % 12;
            uint64_t v = ((uint64_t)rnd(&md.seed) << 40) ^ ((uint64_t)rnd(&md.seed) << 16) ^
                         rnd(&md.seed);
            v >>= rnd(&md.seed) % 64;
            switch (t) {
            case 0: rc = bw_put_u8(w, (uint8_t)v); buf[0] = (unsigned char)v; n = 1; break;
            case 1: rc = bw_put_u16le(w, (uint16_t)v); st_le(buf, v, 2); n = 2; break;
            case 2: rc = bw_put_u32be(w, (uint32_t)v); st_be(buf, v, 4); n = 4; break;
            case 3: rc = bw_put_u64le(w, v); st_le(buf, v, 8); n = 8; break;
            case 4: rc = bw_put_i16be(w, (int16_t)(uint16_t)v); st_be(buf, v, 2); n = 2; break;
            case 5: rc = bw_put_i64be(w, (int64_t)v); st_be(buf, v, 8); n = 8; break;
            case 6: rc = bw_put_f64le(w, (double)v / 3.0); n = float_bytes(buf, v, 8, 0); break;
            case 7: rc = bw_put_f32be(w, (float)v / 3.0f); n = float_bytes(buf, v, 4, 1); break;
            case 8: rc = bw_put_uvarint(w, v); n = uvar_enc(buf, v); break;
            case 9: {
                int64_t sv = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
                rc = bw_put_svarint(w, sv);
                n = uvar_enc(buf, ((uint64_t)sv << 1) ^ (0 - ((uint64_t)sv >> 63)));
                break;
            }
            case 10: {
                int64_t sv = (v & 1) ? -(int64_t)(v >> 1) - 1 : (int64_t)(v >> 1);
                rc = bw_put_dec_i64(w, sv);
                n = (size_t)snprintf((char *)buf, 32, "%" PRId64, sv);
                break;
            }
            default: {
                unsigned char src[8];
                k = rnd(&md.seed) % 9;
                st_le(src, v, 8);
                rc = bw_put_hex(w, src, k);
                n = hex_enc((char *)buf, src, k);
                break;
            }
            }
            model_append(&md, rc, buf, n, n, held0, free0, calls0);
        } else if (r < 50) { /* span + advance */
            md.what = "span";
            size_t hint = rnd(&md.seed) % (rnd(&md.seed) % 4 ? 100 : 9000), avail = 7;
            size_t need = hint ? hint : 1;
            unsigned char *sp = (unsigned char *)bw_get_span(w, hint, &avail);
            if (mode == M_FIXED && held0 + need > md.m.room) {
                cr_assert_null(sp, "fixed op %d: span beyond the room", md.op);
                cr_assert_eq(avail, 0);
                cr_assert_eq(bw_error(w), BW_EFULL);
                bw_clear_error(w);
            } else {
                cr_assert_not_null(sp, "%s op %d", mode_name[mode], md.op);
                cr_assert_geq(avail, need);
                cr_assert_eq(avail, bw_free_capacity(w));
                if (mode != M_CHAIN)
                    cr_assert(sp == bw_data(w) + bw_len(w), "%s op %d: span is data + len",
                              mode_name[mode], md.op);
                if (mode == M_SINK && need <= free0)
                    cr_assert_eq(md.m.s.calls, calls0, "stream op %d: a span that fits sent",
                                 md.op);
                k = rnd(&md.seed) % (need + 1);
                rnd_bytes(&md.seed, buf, k, 0);
                memcpy(sp, buf, k);
                cr_assert_eq(bw_advance(w, k), BW_OK);
                by_add(&md.R, buf, k);
            }
        } else if (r < 58) { /* consume */
            md.what = "consume";
            if (rnd(&md.seed) % 10 == 0) {
                cr_assert_eq(bw_consume(w, held0 + 1), BW_EINVAL, "consume beyond len");
                cr_assert_eq(bw_error(w), BW_EINVAL, "recorded");
                bw_clear_error(w);
            } else {
                n = held0 ? rnd(&md.seed) % (held0 + 1) : 0;
                if (rnd(&md.seed) % 2) n /= 8;
                cr_assert_eq(bw_consume(w, n), BW_OK);
                md.base += n;
            }
        } else if (r < 66) { /* patch by position */
            md.what = "patch";
            size_t pn = 1 + rnd(&md.seed) % 8;
            unsigned char src[8];
            const unsigned char *sp = src;
            int ok;
            if (rnd(&md.seed) % 3 == 0) pos = tell ? rnd(&md.seed) % (tell + 1) : 0;
            else pos = md.base + (held0 ? rnd(&md.seed) % (held0 + 1) : 0);
            ok = pos >= md.base && pos + pn <= tell;
            rnd_bytes(&md.seed, src, pn, 0);
            if (rnd(&md.seed) % 3 == 0 && held0 > 0) { /* from its own held bytes */
                size_t at = rnd(&md.seed) % held0, kk = pn;
                const unsigned char *hp = held_piece(w, at, &kk);
                if (hp != NULL && kk == pn) {
                    memcpy(src, hp, pn);
                    sp = hp;
                }
            }
            if (rnd(&md.seed) % 4 == 0 && pn >= 4) {
                uint32_t v = (uint32_t)rnd(&md.seed);
                pn = 4;
                ok = pos >= md.base && pos + 4 <= tell;
                st_be(src, v, 4);
                rc = bw_patch_u32be(w, pos, v);
            } else {
                rc = bw_patch(w, pos, sp, pn);
            }
            if (ok) {
                cr_assert_eq(rc, BW_OK, "%s op %d: patch at %" PRIu64 " base %" PRIu64,
                             mode_name[mode], md.op, pos, md.base);
                memcpy(md.R.d + pos, src, pn);
            } else {
                cr_assert_eq(rc, BW_EINVAL, "%s op %d: patch at %" PRIu64 " base %" PRIu64
                             " tell %" PRIu64, mode_name[mode], md.op, pos, md.base, tell);
                cr_assert_eq(bw_error(w), BW_EINVAL, "recorded");
                bw_clear_error(w);
            }
        } else if (r < 70) { /* truncate */
            md.what = "truncate";
            if (rnd(&md.seed) % 3 == 0) pos = rnd(&md.seed) % (tell + 2);
            else pos = tell - (held0 ? rnd(&md.seed) % (held0 + 1) / 4 : 0);
            rc = bw_truncate(w, pos);
            if (pos >= md.base && pos <= tell) {
                cr_assert_eq(rc, BW_OK, "%s op %d", mode_name[mode], md.op);
                md.R.len = (size_t)pos;
            } else {
                cr_assert_eq(rc, BW_EINVAL, "%s op %d: truncate at %" PRIu64 " base %" PRIu64,
                             mode_name[mode], md.op, pos, md.base);
                cr_assert_eq(bw_error(w), BW_EINVAL);
                bw_clear_error(w);
            }
        } else if (r < 74) { /* copy_out, in and out of range: never recorded */
            md.what = "copy_out";
            size_t off = held0 ? rnd(&md.seed) % (held0 + 1) : 0;
            n = rnd(&md.seed) % (held0 - off + 1);
            if (n > sizeof buf) n = sizeof buf;
            cr_assert_eq(bw_copy_out(w, off, buf, n), BW_OK);
            cr_assert(n == 0 || memcmp(buf, md.R.d + md.base + off, n) == 0, "copy_out");
            cr_assert_eq(bw_copy_out(w, held0, buf, 0), BW_OK);
            off = held0 - (held0 < 100 ? held0 : 100);
            cr_assert_eq(bw_copy_out(w, off, buf, held0 - off + 1), BW_EINVAL);
            cr_assert_eq(bw_copy_out(w, held0 + 1, buf, 0), BW_EINVAL);
            cr_assert_eq(bw_error(w), BW_OK, "read-outs never record");
        } else if (r < 77) { /* iovec with a small max */
            md.what = "iovec";
            struct iovec iov[3];
            size_t all = bw_iovec(w, iov, 0), got, off = 0, i, mx = 1 + rnd(&md.seed) % 3;
            got = bw_iovec(w, iov, mx);
            cr_assert_eq(got, all, "the count does not depend on max");
            for (i = 0; i < (got < mx ? got : mx); i++) {
                cr_assert_gt(iov[i].iov_len, 0);
                cr_assert(memcmp(iov[i].iov_base, md.R.d + md.base + off, iov[i].iov_len) == 0);
                off += iov[i].iov_len;
            }
        } else if (r < 80) { /* pullup */
            md.what = "pullup";
            const unsigned char *d0 = bw_data(w), *pu = bw_pullup(w);
            if (held0 > 0) {
                cr_assert_not_null(pu, "%s op %d", mode_name[mode], md.op);
                cr_assert(memcmp(pu, md.R.d + md.base, held0) == 0);
                cr_assert(pu == bw_data(w), "%s op %d: pullup returns bw_data", mode_name[mode],
                          md.op);
                if (d0 != NULL && pu != d0 && md.pullup_moved++ == 0)
                    md.pullup_first = md.op; /* reported once, at the end */
            }
        } else if (r < 86) { /* write from its own held bytes */
            md.what = "self write";
            size_t at = held0 ? rnd(&md.seed) % held0 : 0, kk = 1 + rnd(&md.seed) % 3000;
            const unsigned char *hp = held0 ? held_piece(w, at, &kk) : NULL;
            if (hp != NULL) {
                memcpy(tmp, hp, kk);
                if (rnd(&md.seed) % 2) {
                    rc = bw_write(w, hp, kk);
                    model_append(&md, rc, tmp, kk, kk, held0, free0, calls0);
                } else {
                    int len = snprintf((char *)buf, sizeof buf, "(%.*s)", (int)kk,
                                       (const char *)tmp);
                    rc = bw_printf(w, "(%.*s)", (int)kk, (const char *)hp);
                    model_append(&md, rc, buf, (size_t)len, (size_t)len, held0, free0, calls0);
                }
            }
        } else if (r < 92) { /* reserve */
            md.what = "reserve";
            n = rnd(&md.seed) % (rnd(&md.seed) % 4 ? 200 : 20000);
            rc = bw_reserve(w, n);
            if (mode == M_FIXED && held0 + n > md.m.room) {
                cr_assert_eq(rc, BW_EFULL);
                cr_assert_eq(bw_error(w), BW_EFULL);
                bw_clear_error(w);
            } else {
                cr_assert_eq(rc, BW_OK);
                cr_assert_geq(bw_free_capacity(w), n);
                if (mode == M_SINK && n <= free0) cr_assert_eq(md.m.s.calls, calls0);
            }
        } else if (r < 96) { /* flush: streaming sends everything */
            md.what = "flush";
            cr_assert_eq(bw_flush(w), BW_OK);
            if (mode == M_SINK) cr_assert_eq(bw_len(w), 0);
            else cr_assert_eq(bw_len(w), held0);
        } else if (r < 98) { /* clear: nothing held, nothing sent */
            md.what = "clear";
            bw_clear(w); /* tell goes back to the first dropped byte: base */
            md.R.len = (size_t)md.base;
            cr_assert_eq(md.m.s.calls, calls0);
        } else if (r < 99) { /* release: positions restart, nothing sent */
            md.what = "release";
            bw_release(w);
            cr_assert_eq(md.m.s.calls, calls0);
            md.R.len = 0;
            md.base = 0;
        }
        model_check(&md);
    }
    if (mode == M_SINK) {
        cr_assert_eq(bw_flush(&md.m.w), BW_OK);
        model_check(&md);
        cr_assert_eq(bw_len(&md.m.w), 0);
    }
    /* Already contiguous (bw_data not NULL) -> bw_data, no allocation. */
    cr_expect_eq(md.pullup_moved, 0, "%s seed %u: bw_pullup copied held bytes that bw_data "
                 "showed in one block, %d times (first at op %d)", mode_name[mode], seed,
                 md.pullup_moved, md.pullup_first);
    mw_done(&md.m);
    by_free(&md.R);
}

Test(model, model_every_mode_against_a_byte_array, .timeout = 120)
{
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) {
        test_alloc ta;
        bw_pool *p = fresh_pool(&ta, 16384, 0);
        unsigned seed;
        for (seed = 1; seed <= 2; seed++) model_run(mode, p, seed * 1000 + (unsigned)mode, 700);
        ta_finish(&ta, p);
    }
}

Test(model, model_every_mode_on_the_default_pool, .timeout = 120)
{
    int mode;
    for (mode = 0; mode < M_COUNT; mode++) model_run(mode, NULL, 77 + (unsigned)mode, 500);
}
