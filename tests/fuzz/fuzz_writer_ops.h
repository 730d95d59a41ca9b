/* SPDX-License-Identifier: MIT */
/* fuzz_writer_ops.h - the writer operations of fuzz_ops.c: one function per
 * operation, each applying one call to the library and to the model, and
 * op_writer, which runs one by its number (the numbers and their order are
 * the corpus's: new operations go at the end).
 * Included once, by fuzz_ops.c, where these sections stood; it uses that
 * file's CHECK, MIN and MAX and what the files included before it define. */

/* ------------------------------------------------------- operations -- */
enum {
    OP_WRITE, OP_ALIAS, OP_PUT, OP_VARINT, OP_DEC, OP_HEX, OP_PUTS, OP_PRINTF, OP_RESERVE,
    OP_SPAN, OP_PATCH, OP_TRUNCATE, OP_CONSUME, OP_CLEAR, OP_CLEAR_ERROR, OP_RELEASE, OP_DETACH,
    OP_PULLUP, OP_CSTR, OP_READ, OP_APPEND, OP_FLUSH, OP_ODD_WRITE, OP_REINIT, OP_SCRIPT,
    OP_FILE, OP_CURSOR, OP_PUTC, OP_DETACH_MALLOC, OP_APPEND_REF, OP_MOVE, OP_LIMIT,
    OP_DEC_FLOAT, OP_TRY_SPAN, OP_FIRST_BUFFER, OP_PAD, OP_BLOCK_SIZE, NOPS
};

static const char *const op_names[] = {
    "write", "write-alias", "put", "varint", "dec", "hex", "puts", "printf", "reserve",
    "span+advance", "patch", "truncate", "consume", "clear", "clear_error", "release", "detach",
    "pullup", "cstr", "read", "append_writer", "flush", "odd-write", "reinit", "script",
    "fopen-write", "cursor", "putc", "detach_malloc", "append_ref", "move", "set_limit",
    "dec_float", "try_span", "set_first_buffer", "pad", "set_block_size"};
static const char *const mode_names[] = {"contig", "chain", "stream", "fixed"};

/* bw_cstr when the rules say it succeeds (NULL held bytes are fine: the
 * caller's printf stops at the first NUL); on the ways it may fail instead
 * (an allocation, a streaming or fixed buffer without a byte to spare) the
 * outcome is checked and false returned. */
/* Set when an operation has run post() itself (cstr_first, when the string
 * cannot be had), so that op_writer does not check again. */
static int posted;

static int cstr_first(slot *x, const char **c)
{
    bw_writer *w = &x->w;
    int ok = x->err == BW_OK && (x->mode == CONTIG || x->mode == CHAIN ||
                                 (x->mode == STREAM && x->len < w->cap) ||
                                 (x->mode == FIXED && x->len < x->fsize));
    oc.kind = GROW;
    oc.req = 1;
    oc.moves = 1;
    if (!ok) {
        post(x);
        posted = 1;
        return 0;
    }
    *c = bw_cstr(w);
    if (*c == NULL) {
        CHECK(failed_now && (x->mode == CONTIG || x->mode == CHAIN));
        none(x, bw_error(w), BW_OK);
        post(x);
        posted = 1;
        return 0;
    }
    CHECK(same(*c, x->d, x->len) && (*c)[x->len] == 0);
    compare(x);
    return 1;
}

#ifdef BW_HAVE_FILE_ADAPTER
/* fwrite, fputs or fprintf through bw_fopen, of the writer's own held bytes
 * in a contiguous or segmented writer (the FILE writes into the writer in
 * pieces while it reads them), of scratch bytes otherwise (bufwriter.h: a
 * streaming or fixed writer sends or moves them in place). The FILE hands
 * its bytes over in pieces, so a failure may leave any prefix. */
static void op_file(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, avail = 0, got;
    unsigned how = u8(s) % 3;
    const unsigned char *src = scratch;
    FILE *f;
    int ok = 1;
    if (x->mode == CONTIG || x->mode == CHAIN) {
        const char *c;
        if (how == 1) { /* fputs(bw_cstr(w)) */
            if (x->len == 0 || memchr(x->d, 0, x->len) != NULL || x->len > left) return;
            if (!cstr_first(x, &c)) return;
            pre(x);
            src = (const unsigned char *)c;
            n = x->len;
        } else if ((src = alias(s, x, &avail)) != NULL) {
            n = MIN(u16(s) % (avail + 1), MIN(left, 4 * MAX_OP));
        } else {
            src = scratch;
        }
    }
    if (src == scratch) {
        n = MIN(u16(s) % (MAX_OP + 1), left);
        fill(scratch, n, u8(s));
        scratch[n] = 0;
        if (how == 1) n = strlen((const char *)scratch);
    }
    if (how == 2) { /* "%.*s" stops at a NUL */
        const unsigned char *z = (const unsigned char *)memchr(src, 0, n);
        if (z != NULL) n = (size_t)(z - src);
    }
    memcpy(expb, src, n);
    oc.req = n;
    oc.moves = 1;
    errno = 0;
    f = bw_fopen(w);
    CHECK(f != NULL);
    if (how == 1) ok = fputs((const char *)src, f) >= 0;
    else if (how == 2) ok = fprintf(f, "%.*s", (int)n, (const char *)src) == (int)n;
    else ok = fwrite(src, 1, n, f) == n;
    TRACE("    fopen: how %u, %zu bytes%s\n", how, n, src == scratch ? "" : " (own)");
    ok = fclose(f) == 0 && ok;
    got = (size_t)(bw_tell(w) - oc.tell0);
    CHECK(got <= n);
    if (ok) CHECK(got == n);
    else CHECK(bw_error(w) != BW_OK);
    {
        /* In pieces: a piece may meet a fixed buffer's end before the
         * limit that the whole call would pass. */
        int want = ok ? BW_OK : room(x, n);
        if (!ok && x->err == BW_OK && want == BW_ELIMIT && bw_error(w) == BW_EFULL &&
            x->mode == FIXED)
            want = BW_EFULL;
        expect(x, bw_error(w), want);
    }
    m_append(x, expb, got); /* what was accepted is checked against the writer */
    if (x->sk.fails) { /* the FILE reports a failed sink as EIO (bufwriter.h) */
        CHECK(errno == EIO);
        errno = x->sk.err_no;
    }
    post(x);
}
#endif

/* dec_float's other half: the flags' put, and the room form at a room,
 * against dec_float's text made JSON's by hand (dec_float_flags). Unknown
 * flag bits 1 time in 4; neither they nor BW_ENONFINITE are recorded. */
static void dec_flags(in *s, slot *x, int is32)
{
    bw_writer *w = &x->w;
    unsigned flags = u8(s), k = flags >> 4 & 3;
    double d = pick_double(s);
    size_t fr = u8(s) % (BW_DEC_F64_MAX + 2), n;
    int rc, bad;
    flags = k == 0 ? flags : flags & BW_DEC_JSON_REAL;
    bad = (flags & ~(unsigned)BW_DEC_JSON_REAL) != 0;
    n = dec_float_flags(expb, d, is32, flags & BW_DEC_JSON_REAL);
    check_fmt_dec(d, is32, flags, fr, expb, n);
    if (n > MAX_LEN - x->len) return;
    oc.req = n;
    rc = is32 ? bw_put_dec_f32_flags(w, (float)d, flags) : bw_put_dec_f64_flags(w, d, flags);
    if (x->err != BW_OK) {
        none(x, rc, x->err);
    } else if (bad || n == 0) { /* the writer as it was */
        CHECK(rc == (bad ? BW_EINVAL : BW_ENONFINITE));
        CHECK(bw_error(w) == BW_OK && bw_tell(w) == oc.tell0);
    } else {
        wrote(x, rc, n, room(x, n));
    }
}

/* bw_write of src[0, n), checked: the bytes expected are copied first, as
 * src may be the writer's own held bytes. */
static void write_checked(slot *x, const unsigned char *src, size_t n)
{
    memcpy(expb, src, n);
    oc.req = n;
    oc.zero = n == 0;
    wrote(x, bw_write(&x->w, src, n), n, room(x, n));
}

static void op_write(in *s, slot *x)
{
    size_t n = pick_size(s, x, MAX_OP, MAX_LEN - x->len);
    fill(scratch, n, u8(s));
    write_checked(x, scratch, n);
}

/* from the writer's own held bytes, maybe growing past them */
static void op_alias(in *s, slot *x)
{
    size_t left = MAX_LEN - x->len, n, avail = 0;
    const unsigned char *ap;
    if ((ap = alias(s, x, &avail)) == NULL) return;
    n = MIN(MIN(u16(s) % (avail + 1), left), 4 * MAX_OP);
    write_checked(x, ap, n);
}

static void op_put(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    uint64_t v;
    unsigned t = u8(s) % NTYPES;
    v = u64(s);
    n = enc_typed(expb, t, v);
    oc.req = n;
    wrote(x, put_typed(w, t, v), n, room(x, n));
}

static void op_varint(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    uint64_t v;
    int rc;
    int sgn = (int)(u8(s) & 1);
    v = u64(s);
    v >>= u8(s) % 64;
    n = leb(expb, sgn ? (v << 1) ^ (0 - (v >> 63)) : v);
    oc.req = 10; /* a put may ask for room for the longest */
    rc = sgn ? bw_put_svarint(w, (int64_t)v) : bw_put_uvarint(w, v);
    wrote(x, rc, n, room(x, n));
}

static void op_dec(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    uint64_t v;
    int rc;
    static const uint64_t edge[] = {0, 9, 10, UINT64_MAX, (uint64_t)INT64_MAX,
                                    (uint64_t)INT64_MAX + 1, 99999, 100000};
    int sgn = (int)(u8(s) & 1);
    if (u8(s) & 1) {
        v = edge[u8(s) % 8];
    } else {
        v = u64(s);
        v >>= u8(s) % 64;
    }
    n = (size_t)(sgn ? snprintf((char *)expb, 32, "%" PRId64, (int64_t)v)
                     : snprintf((char *)expb, 32, "%" PRIu64, v));
    oc.req = 20;
    rc = sgn ? bw_put_dec_i64(w, (int64_t)v) : bw_put_dec_u64(w, v);
    wrote(x, rc, n, room(x, n));
}

static void op_hex(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, avail = 0;
    const unsigned char *ap;
    unsigned how = u8(s) % 8;
    const unsigned char *src = scratch;
    if (how == 0) { /* 2n is not representable: nothing is read */
        static const size_t h[] = {SIZE_MAX, SIZE_MAX / 2 + 1, (size_t)PTRDIFF_MAX / 2 + 1};
        oc.kind = KEEP;
        none(x, bw_put_hex(w, scratch, h[u8(s) % 3]), too_big(x));
        return;
    }
    if (how == 1) {
        oc.kind = KEEP;
        none(x, bw_put_hex(w, NULL, 1 + u8(s) % 4), BW_EINVAL);
        return;
    }
    if (how < 5 && (ap = alias(s, x, &avail)) != NULL) {
        src = ap;
        n = MIN(u16(s) % (avail + 1), MIN(MAX_OP / 2, left / 2));
    } else {
        n = MIN(u16(s) % (MAX_OP / 2 + 1), left / 2);
        fill(scratch, n, u8(s));
    }
    hex(expb, src, n);
    oc.req = 2 * n;
    oc.zero = n == 0;
    wrote(x, bw_put_hex(w, src, n), 2 * n, room(x, 2 * n));
}

static void op_puts(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, avail = 0;
    const unsigned char *ap;
    static const char *const strs[] = {"", "a", "hello, world", "%s%d\\n"};
    unsigned how = u8(s) % 8;
    const char *str = strs[u8(s) % 4];
    if (how == 0) {
        oc.kind = KEEP;
        none(x, bw_puts(w, NULL), BW_EINVAL);
        return;
    }
    if (how < 4 && (ap = alias(s, x, &avail)) != NULL && memchr(ap, 0, avail) != NULL)
        str = (const char *)ap; /* a NUL-terminated run of held bytes */
    n = strlen(str);
    if (n > left) return;
    memcpy(expb, str, n);
    oc.req = n;
    oc.zero = n == 0;
    wrote(x, bw_puts(w, str), n, room(x, n));
}

static void op_printf(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, avail = 0;
    const unsigned char *ap;
    int rc;
    char *e = (char *)expb;
    unsigned f = u8(s) % 8;
    int len = 0, i = (int)u64(s);
    if (left < 9000) return; /* every format below writes less */
    switch (f) {
    case 0: {
        int width = (int)(u8(s) % 100);
        len = snprintf(e, 256, "[%*d|%x|%s]", width, i, (unsigned)i, "str");
        rc = bw_printf(w, "[%*d|%x|%s]", width, i, (unsigned)i, "str");
        break;
    }
    case 1: case 2: { /* an argument in the held bytes, long output */
        int pad = (int)(u16(s) % 4001), prec = 3, first = f == 1;
        const char *arg = "abc";
        if ((ap = alias(s, x, &avail)) != NULL) {
            prec = (int)MIN(u16(s) % (avail + 1), 512);
            arg = (const char *)ap;
        }
        memcpy(scratch, arg, (size_t)prec);
        if (first) {
            len = snprintf(e, 8192, "%.*s%*s", prec, (const char *)scratch, pad, "");
            rc = bw_printf(w, "%.*s%*s", prec, arg, pad, "");
        } else {
            len = snprintf(e, 8192, "%*s%.*s", pad, "", prec, (const char *)scratch);
            rc = bw_printf(w, "%*s%.*s", pad, "", prec, arg);
        }
        break;
    }
    case 3:
        rc = bw_printf(w, "%s", "");
        break;
    case 4: { /* an encoding error */
        wchar_t ws[2] = {(wchar_t)0xD800, 0};
        len = snprintf(e, 16, "%ls", ws);
        rc = bw_printf(w, "%ls", ws);
        break;
    }
    case 5:
        len = snprintf(e, 256, "%d-%s-%u", i, "v", (unsigned)i >> 3);
        rc = vpf(w, "%d-%s-%u", i, "v", (unsigned)i >> 3);
        break;
    case 6: /* NUL bytes in the output */
        len = snprintf(e, 256, "%c%s%c%c", 0, "nul", 0, (char)i);
        rc = bw_printf(w, "%c%s%c%c", 0, "nul", 0, (char)i);
        break;
    default: { /* bw_cstr's string as the arguments: its NUL is where the
                  output starts */
        int pad = (int)(u16(s) % 3001);
        const char *c;
        if (!cstr_first(x, &c)) return;
        pre(x); /* the printf alone from here */
        memcpy(scratch, c, MIN(x->len, 512));
        scratch[MIN(x->len, 512)] = 0;
        len = snprintf(e, 8192, "%.512s|%*s|%.3s", (const char *)scratch, pad, "",
                       (const char *)scratch);
        rc = bw_printf(w, "%.512s|%*s|%.3s", c, pad, "", c);
        break;
    }
    }
    if (len < 0) {
        oc.kind = KEEP;
        none(x, rc, BW_EINVAL);
        return;
    }
    n = (size_t)len;
    oc.req = n;
    oc.zero = n == 0;
    wrote(x, rc, n, room(x, n));
}

static void op_reserve(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    int rc;
    if ((u8(s) & 7) == 0) {
        n = huge(s);
        big_size(x, n);
        none(x, bw_reserve(w, n), too_big_limited(x));
        return;
    }
    n = pick_size(s, x, MAX_LEN, MAX_LEN);
    oc.req = n;
    oc.zero = n == 0;
    rc = bw_reserve(w, n);
    none(x, rc, room(x, n));
    if (rc == BW_OK) CHECK(bw_free_capacity(w) >= n);
}

static void op_span(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, k, avail = 0;
    int rc;
    unsigned char *sp;
    size_t hint;
    if ((u8(s) & 7) == 0) {
        hint = huge(s);
        big_size(x, hint);
        avail = 12345;
        sp = (unsigned char *)bw_get_span(w, hint, &avail);
        CHECK(sp == NULL && avail == 0);
        none(x, bw_error(w), too_big_limited(x));
        return;
    }
    hint = pick_size(s, x, MAX_OP, left);
    oc.req = MAX(hint, 1);
    avail = 12345;
    sp = (unsigned char *)bw_get_span(w, hint, &avail);
    k = u16(s);
    if (sp == NULL) {
        CHECK(avail == 0 && bw_error(w) != BW_OK);
        none(x, bw_error(w), room(x, oc.req));
        CHECK(bw_advance(w, k % 4) == x->err);
        return;
    }
    span_granted(x, sp, avail);
    if ((u8(s) & 3) == 0) k = avail + 1 + k % 4; /* past the free space */
    else k = MIN(k % (avail + 1), left);
    if (k <= avail) {
        fill(sp, k, u8(s));
        memcpy(expb, sp, k);
    }
    rc = k <= avail ? BW_OK : past_free(x, k); /* before the advance */
    wrote(x, bw_advance(w, k), k <= avail ? k : 0, rc);
}

/* a span, the bw_enc_* encoders into it, bw_advance_to */
static void op_cursor(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, k, avail = 0;
    uint64_t v;
    int rc;
    unsigned char *sp, *p, *q, enc[64];
    const void *end;
    size_t hint = u8(s) % 80, cnt = u8(s) % 16, i, room_left, en;
    unsigned how = u8(s) % 8;
    oc.req = MAX(hint, 1);
    avail = 12345;
    sp = (unsigned char *)bw_get_span(w, hint, &avail);
    if (sp == NULL) {
        CHECK(avail == 0 && bw_error(w) != BW_OK);
        none(x, bw_error(w), room(x, oc.req));
        CHECK(bw_advance_to(w, NULL) == x->err);
        return;
    }
    span_granted(x, sp, avail);
    room_left = MIN(avail, left);
    p = sp;
    for (i = 0; i < cnt; i++) {
        unsigned kind = u8(s) % (NTYPES + 5);
        v = u64(s);
        if (kind >= NTYPES + 3) { /* decimal text: room for the longest first */
            int is32 = kind == NTYPES + 4;
            double d;
            if (room_left < (is32 ? BW_DEC_F32_MAX : BW_DEC_F64_MAX)) break;
            memcpy(&d, &v, sizeof d);
            if (u8(s) & 1) d = pick_double(s);
            en = dec_float(enc, d, is32);
            q = is32 ? bw_enc_dec_f32(p, (float)d) : bw_enc_dec_f64(p, d);
        } else if (kind < NTYPES) {
            en = enc_typed(enc, kind, v);
            if (en > room_left) break;
            q = cursor_typed(p, kind, v);
        } else if (kind == NTYPES) {
            v >>= u8(s) % 64;
            en = leb(enc, v);
            if (en > room_left) break;
            q = bw_enc_uvarint(p, v);
        } else if (kind == NTYPES + 1) {
            v >>= u8(s) % 64;
            en = leb(enc, (v << 1) ^ (0 - (v >> 63)));
            if (en > room_left) break;
            q = bw_enc_svarint(p, (int64_t)v);
        } else {
            en = MIN((size_t)(v % 65), room_left);
            fill(enc, en, (unsigned)(v >> 8));
            q = bw_enc_bytes(p, en != 0 ? enc : NULL, en);
        }
        CHECK(q == p + en && memcmp(p, enc, en) == 0);
        p = q;
        room_left -= en;
    }
    k = (size_t)(p - sp);
    memcpy(expb, sp, k);
    /* The end: NULL, before the span's start, past its room, the start
     * itself, or where the encoders stopped (addresses computed as
     * integers: they may lie outside the block). */
    switch (how) {
    case 0: end = NULL; break;
    case 1: end = (const void *)((uintptr_t)sp - 1 - u8(s) % 8); break;
    case 2: end = (const void *)((uintptr_t)sp + avail + 1 + u8(s) % 8); break;
    case 3: end = sp; k = 0; break;
    default: end = p; break;
    }
    TRACE("    cursor: %zu encoded, end %u, avail %zu\n", (size_t)(p - sp), how, avail);
    rc = how <= 1 ? BW_EINVAL : how == 2 ? past_free(x, (size_t)((uintptr_t)end - (uintptr_t)sp))
                                         : BW_OK;
    wrote(x, bw_advance_to(w, end), how <= 2 ? 0 : k, rc);
}

static void op_patch(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0, avail = 0;
    const unsigned char *ap;
    uint64_t v, pos;
    int rc;
    int typed = (int)(u8(s) & 1);
    const void *src = scratch;
    int valid;
    oc.kind = KEEP;
    oc.moves = x->mode == CHAIN; /* a reference patched becomes a block */
    pos = pick_pos(s, x);
    if (typed) {
        unsigned t = u8(s) % NTYPES;
        v = u64(s);
        n = enc_typed(expb, t, v);
        rc = patch_typed(w, t, pos, v);
    } else {
        n = u8(s) % 17;
        if ((u8(s) & 1) && (ap = alias(s, x, &avail)) != NULL) {
            src = ap; /* may overlap the bytes it replaces */
            n = MIN(n, avail);
        } else {
            fill(scratch, n, u8(s));
        }
        memcpy(expb, src, n);
        oc.zero = n == 0;
        rc = bw_patch(w, pos, src, n);
    }
    valid = pos >= x->base && pos <= oc.tell0 && n <= oc.tell0 - pos;
    TRACE("    patch at %" PRIu64 ", %zu bytes%s\n", pos, n,
          typed ? " (typed)" : src == scratch ? "" : " (own)");
    if (expect_always(x, rc, n == 0 || valid ? BW_OK : BW_EINVAL) && n)
        memcpy(x->d + (pos - x->base), expb, n);
    CHECK(bw_tell(w) == oc.tell0);
}

static void op_truncate(in *s, slot *x)
{
    bw_writer *w = &x->w;
    uint64_t pos;
    oc.kind = KEEP;
    pos = pick_pos(s, x);
    oc.zero = pos == oc.tell0;
    if (expect_always(x, bw_truncate(w, pos), pos >= x->base && pos <= oc.tell0 ? BW_OK : BW_EINVAL))
        x->len = (size_t)(pos - x->base);
}

/* works while an error is recorded */
static void op_consume(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    int rc;
    oc.kind = KEEP;
    n = (u8(s) & 3) == 0 ? x->len + 1 + u8(s) % 4 : u16(s) % (x->len + 1);
    oc.zero = n == 0;
    rc = bw_consume(w, n);
    if (n <= x->len) {
        CHECK(rc == BW_OK);
        m_drop(x, n);
        oc.consumed = n > 0;
    } else {
        CHECK(rc == BW_EINVAL || (x->err != BW_OK && rc == x->err));
        if (x->err == BW_OK) x->err = BW_EINVAL;
    }
}

static void op_clear(in *s, slot *x)
{
    bw_writer *w = &x->w;
    (void)s;
    oc.kind = KEEP;
    bw_clear(w); /* bw_tell goes back to the first dropped byte */
    x->len = 0;
    x->err = BW_OK;
}

static void op_flush(in *s, slot *x);

/* and often retry the output: clear_error + flush */
static void op_clear_error(in *s, slot *x)
{
    bw_writer *w = &x->w;
    oc.kind = KEEP;
    bw_clear_error(w);
    x->err = oc.err0 = BW_OK;
    if (u8(s) & 1) return;
    op_flush(s, x);
}

static void op_flush(in *s, slot *x)
{
    bw_writer *w = &x->w;
    int rc;
    (void)s;
    oc.kind = x->mode == STREAM ? GROW : KEEP;
    oc.req = SIZE_MAX;
    oc.zero = x->len == 0;
    rc = bw_flush(w);
    if (x->mode != STREAM) CHECK(rc == x->err);
    else if (expect(x, rc, BW_OK)) CHECK(bw_len(w) == 0);
}

static void op_release(in *s, slot *x)
{
    bw_writer *w = &x->w;
    (void)s;
    oc.kind = RESET;
    oc.fresh = 1;
    bw_release(w);
    m_reset(x);
    if (x->mode == CONTIG) CHECK(w->data != x->ibuf || x->isize == 0);
}

static void op_detach(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t len = 7, cap = 7;
    void *b;
    (void)s;
    oc.kind = RESET;
    b = bw_detach(w, &len, &cap);
    if (x->mode == FIXED) {
        CHECK(b == NULL);
        if (x->err == BW_OK) x->err = BW_EINVAL;
    } else if (b == NULL && bw_error(w) != BW_OK) { /* a needed copy failed: nothing changed */
        CHECK(failed_now);
        if (x->err == BW_OK) x->err = BW_ENOMEM;
    } else if (b == NULL) { /* no storage */
        CHECK(x->len == 0 && len == 0 && cap == 0);
        m_reset(x);
    } else {
        CHECK(len == x->len && cap >= len && same(b, x->d, len));
        CHECK(b != x->ibuf && b != x->fmem);
        if (x->mode == CONTIG && !bypass) CHECK(is_pow2(cap));
        if (x->mode == CHAIN) CHECK(cap % 16 == 0); /* its link stays aligned */
        CHECK(bw_pool_return(bw_writer_pool(w), b, cap) == BW_OK);
        m_reset(x);
    }
}

static void op_pullup(in *s, slot *x)
{
    bw_writer *w = &x->w;
    const unsigned char *p;
    (void)s;
    oc.kind = x->mode == CHAIN ? GROW : KEEP;
    oc.zero = x->mode != CHAIN; /* already contiguous: no allocation */
    oc.moves = 1;
    p = bw_pullup(w);
    if (oc.err0 != BW_OK) {
        CHECK(p == NULL);
    } else if (p != NULL) {
        CHECK(same(p, x->d, x->len) && p == bw_data(w));
    } else if (bw_error(w) == BW_OK) {
        CHECK(x->len == 0);
    } else {
        none(x, bw_error(w), BW_OK);
    }
}

static void op_cstr(in *s, slot *x)
{
    bw_writer *w = &x->w;
    const char *c;
    int ok; /* the rules' outcome; -1: either ("" or BW_EFULL) */
    (void)s;
    oc.kind = x->mode == CONTIG || x->mode == CHAIN ? GROW : KEEP;
    oc.req = 1;
    oc.moves = 1;
    /* no storage: a static ""; streaming and fixed never allocate here */
    oc.zero = (x->mode == CONTIG && oc.blk0 == NULL) || x->mode == STREAM || x->mode == FIXED;
    if (x->mode == FIXED) ok = x->len < x->fsize ? 1 : x->fsize == 0 ? -1 : 0;
    else if (x->mode == STREAM) ok = x->len < w->cap || (w->cap == 0 && x->len == 0);
    else ok = 1;
    c = bw_cstr(w);
    if (oc.err0 != BW_OK) {
        CHECK(c == NULL);
    } else if (c != NULL) {
        CHECK(ok != 0 && same(c, x->d, x->len) && c[x->len] == 0);
        if (x->len) CHECK((const unsigned char *)c == bw_data(w));
    } else if (ok == 1) { /* an allocation failed */
        CHECK(x->mode == CONTIG || x->mode == CHAIN);
        none(x, bw_error(w), BW_OK);
    } else { /* no byte for the NUL: nothing recorded */
        CHECK(bw_error(w) == BW_OK);
    }
}

/* copy_out of a range, in or out; iovec into a short array */
static void op_read(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    int rc;
    size_t off = u16(s) % (x->len + 3), m, total, i, at = 0;
    oc.kind = KEEP;
    n = u16(s) % (x->len + 3);
    rc = bw_copy_out(w, off, tmp, n);
    if (off <= x->len && n <= x->len - off) {
        CHECK(rc == BW_OK && same(tmp, x->d + off, n));
    } else {
        CHECK(rc == BW_EINVAL);
    }
    total = pieces(x);
    m = u8(s) % (total + 1);
    if (total) memset(iv, 0, total * sizeof *iv);
    CHECK(bw_iovec(w, iv, m) == total);
    for (i = 0; i < total; i++) {
        if (i >= m) {
            CHECK(iv[i].iov_base == NULL && iv[i].iov_len == 0);
            continue;
        }
        CHECK(iv[i].iov_len > 0 && same(iv[i].iov_base, x->d + at, iv[i].iov_len));
        at += iv[i].iov_len;
    }
}

/* src's held bytes, any modes, src == dst too */
static void op_append(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0;
    slot *y = &slots[u8(s) % NW];
    n = y->len;
    if (n > left) return;
    memcpy(expb, y->d, n);
    oc.req = n;
    oc.zero = n == 0;
    wrote(x, bw_append_writer(w, &y->w), n, room(x, n));
    if (y != x) compare(y);
}

static void op_odd_write(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    oc.kind = KEEP;
    if (u8(s) & 1) { /* NULL: fine for 0 bytes, BW_EINVAL for more */
        n = u8(s) & 1;
        oc.zero = n == 0;
        none(x, bw_write(w, NULL, n), n ? BW_EINVAL : BW_OK);
    } else { /* a size no writer can take: refused before anything is read */
        n = huge(s);
        if (x->mode == STREAM && n <= (size_t)PTRDIFF_MAX) n = SIZE_MAX;
        oc.big_ok = n == (size_t)PTRDIFF_MAX && x->mode == CHAIN && !x->limit;
        none(x, bw_write(w, scratch, n), too_big_limited(x));
    }
}

static void op_putc(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len;
    int c = (int)u16(s) - 600;
    if (left == 0) return;
    expb[0] = (unsigned char)c;
    oc.req = 1;
    wrote(x, bw_putc(w, c), 1, room(x, 1));
}

static void op_detach_malloc(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t len = 7;
    unsigned char *b;
    (void)s;
    oc.kind = RESET;
    oc.fresh = 1;
    b = (unsigned char *)bw_detach_malloc(w, &len);
    CHECK(b != NULL); /* malloc, not the hook: it does not fail here */
    CHECK(len == x->len && same(b, x->d, len) && b[len] == 0);
    CHECK(b != x->ibuf && b != x->fmem && b != x->w.data);
    free(b);
    m_reset(x);
}

static void op_append_ref(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, k, avail = 0;
    const unsigned char *ap;
    int rc;
    struct refst *r = NULL;
    struct linkst *l;
    const unsigned char *src;
    int i, own = u8(s) & 1, caller;
    for (i = 0; i < NLINK && links[i].live; i++) {}
    if (i == NLINK) return;
    l = &links[i];
    if (own && (ap = alias(s, x, &avail)) != NULL) {
        /* the writer's own bytes: copied when they lie in its blocks,
         * linked again when they lie in a reference */
        src = ap;
        n = MIN(MIN(u16(s) % (avail + 1), left), 4 * MAX_OP);
        r = ref_of(src, n);
    } else {
        for (i = 0; i < NREF && refs[i].links != 0; i++) {}
        if (i == NREF) return;
        r = &refs[i];
        k = u16(s) % MAX_OP;
        n = MIN(u16(s) % (MAX_OP - k + 1), left);
        fill(r->mem, MAX_OP, u8(s));
        src = r->mem + k;
    }
    caller = r != NULL;
    if (r != NULL) r->links++; /* done may come at once */
    l->r = r;
    l->data = src;
    l->n = n;
    l->live = 1;
    memcpy(expb, src, n);
    oc.req = n;
    oc.zero = n == 0;
    rc = bw_append_ref(w, src, n, ref_done, l);
    /* linked only in a segmented writer, caller memory, not empty, and
     * not on failure (done then never comes) */
    if (rc != BW_OK) {
        CHECK(l->live);
        l->live = 0;
        if (r != NULL) r->links--;
    } else {
        CHECK(l->live == (x->mode == CHAIN && n != 0 && caller));
    }
    wrote(x, rc, n, room(x, n));
}

/* src's held bytes, then src empty */
static void op_move(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0;
    int rc;
    slot *y = &slots[u8(s) % NW];
    uint64_t ytell = y->base + y->len;
    long calls1 = calls;
    n = y->len;
    if (y == x || y->mode == STREAM) {
        none(x, bw_move(w, &y->w), BW_EINVAL);
        if (y != x) compare(y);
        return;
    }
    if (n > left) return;
    if (x->err == BW_OK && y->err != BW_OK) { /* returned, not recorded in dst */
        CHECK(bw_move(w, &y->w) == y->err);
        CHECK(bw_tell(w) == oc.tell0);
        compare(y);
        return;
    }
    memcpy(expb, y->d, n);
    oc.req = n;
    oc.zero = n == 0;
    rc = bw_move(w, &y->w);
    if (rc == BW_OK && x->err == BW_OK) {
        /* relinked: nothing copied, nothing rented but dst's piece records */
        if (x->mode == CHAIN && y->mode == CHAIN) CHECK(calls <= calls1 + 1);
        m_drop(y, n);
    }
    CHECK(y->base + y->len == ytell); /* src's positions go on */
    wrote(x, rc, n, room(x, n));
    compare(y);
}

/* none, near bw_tell (below it too), or anywhere */
static void op_limit(in *s, slot *x)
{
    bw_writer *w = &x->w;
    uint64_t tell = x->base + x->len, lim;
    unsigned how = u8(s) % 4;
    oc.kind = KEEP;
    oc.zero = 1;
    if (how == 0) lim = 0;
    else if (how == 1) lim = tell + u8(s) % 64;
    else if (how == 2) lim = tell > 16 ? tell - u8(s) % 16 : 1;
    else lim = 2 * (uint64_t)u16(s);
    CHECK(bw_set_limit(w, lim) == BW_OK);
    x->limit = lim;
    CHECK(bw_error(w) == x->err && bw_tell(w) == tell);
}

/* the same bytes as the cursor form, checked there */
static void op_dec_float(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0;
    int rc;
    unsigned sel = u8(s);
    int is32 = (int)(sel & 1);
    double d;
    if (sel & 2) { /* with BW_DEC_* flags (a bit of this byte: the ops keep their numbers) */
        dec_flags(s, x, is32);
        return;
    }
    d = pick_double(s);
    n = dec_float(expb, d, is32);
    if (n > left) return;
    oc.req = n; /* stored in place when the longest fits, else bw_write */
    rc = is32 ? bw_put_dec_f32(w, (float)d) : bw_put_dec_f64(w, d);
    wrote(x, rc, n, room(x, n));
}

/* n free bytes now, or NULL and nothing at all */
static void op_try_span(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0, k;
    unsigned char *sp;
    size_t want;
    unsigned seed;
    oc.kind = KEEP;
    oc.zero = 1; /* never allocates, sends or moves */
    n = pick_size(s, x, MAX_OP, SIZE_MAX);
    want = MAX(n, 1);
    k = u16(s);
    seed = u8(s);
    sp = (unsigned char *)bw_try_span(w, n);
    TRACE("    try_span %zu: %s (free %zu)\n", n, sp ? "granted" : "NULL", oc.free0);
    CHECK(bw_error(w) == x->err && bw_tell(w) == oc.tell0 && bw_free_capacity(w) == oc.free0);
    if (x->err != BW_OK || want > oc.free0) {
        CHECK(sp == NULL);
        return;
    }
    CHECK(sp != NULL);
    if (x->mode != CHAIN) CHECK(sp == bw_data(w) + bw_len(w));
    k = MIN(k % (n + 1), left);
    fill(sp, k, seed);
    memcpy(expb, sp, k);
    wrote(x, bw_advance_to(w, sp + k), k, BW_OK);
}

/* a storage-less contiguous writer takes ibuf */
static void op_first_buffer(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t n = 0;
    int rc;
    unsigned how = u8(s) % 8;
    void *buf = how == 0 ? NULL : x->ibuf;
    int want;
    oc.kind = RESET; /* its block may change to the buffer */
    oc.zero = 1;
    n = how == 1 ? 0 : 1 + u8(s) % sizeof x->ibuf;
    want = buf == NULL || n == 0 || x->mode != CONTIG || w->data != NULL ? BW_EINVAL : BW_OK;
    rc = bw_set_first_buffer(w, buf, n);
    if (expect(x, rc, want)) {
        x->isize = n;
        CHECK(w->data == x->ibuf && bw_len(w) == 0);
        CHECK(bw_free_capacity(w) == MIN(n, lim_room(x)));
    }
    CHECK(bw_tell(w) == oc.tell0);
}

/* zeros to a power of two up to BW_PAD_MAX, or a bad one */
static void op_pad(in *s, slot *x)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len, n = 0;
    unsigned sh = u8(s) % 16;
    size_t align = sh <= 12 ? (size_t)1 << sh : sh == 13 ? 0 : sh == 14 ? 24 : BW_PAD_MAX * 2;
    if (sh > 12) {
        oc.kind = KEEP;
        oc.zero = 1;
        none(x, bw_pad(w, align), BW_EINVAL);
        return;
    }
    n = (size_t)((0 - oc.tell0) & (uint64_t)(align - 1));
    if (n > left) return;
    memset(expb, 0, n);
    oc.req = n;
    oc.zero = n == 0;
    wrote(x, bw_pad(w, align), n, room(x, n));
}

/* 0, 1 B to 1 MiB (larger blocks would only slow the fuzzer down), or
 * past 1 GiB */
static void op_block_size(in *s, slot *x)
{
    bw_writer *w = &x->w;
    unsigned how = u8(s) % 4;
    size_t bs = how == 0 ? 0 : how == 1 ? (size_t)u16(s) : how == 2 ? (size_t)1 << (u8(s) % 21)
                                                                    : ((size_t)1 << 30) + 1;
    int ok = x->mode == CHAIN && bs <= ((size_t)1 << 30);
    oc.kind = KEEP;
    oc.zero = 1;
    CHECK(bw_set_block_size(w, bs) == (ok ? BW_OK : BW_EINVAL));
    CHECK(bw_error(w) == x->err);
}

static void op_script(in *s, slot *x)
{
    int i;
    oc.kind = KEEP;
    for (i = 0; i < SCRIPT; i++) x->sk.script[i] = (unsigned char)u8(s);
    x->sk.at = 0;
}

/* Each operation, by its number (the input picks it: the order is fixed). */
static void (*const op_fn[NOPS])(in *s, slot *x) = {
    [OP_WRITE] = op_write,
    [OP_ALIAS] = op_alias,
    [OP_PUT] = op_put,
    [OP_VARINT] = op_varint,
    [OP_DEC] = op_dec,
    [OP_HEX] = op_hex,
    [OP_PUTS] = op_puts,
    [OP_PRINTF] = op_printf,
    [OP_RESERVE] = op_reserve,
    [OP_SPAN] = op_span,
    [OP_CURSOR] = op_cursor,
    [OP_PATCH] = op_patch,
    [OP_TRUNCATE] = op_truncate,
    [OP_CONSUME] = op_consume,
    [OP_CLEAR] = op_clear,
    [OP_CLEAR_ERROR] = op_clear_error,
    [OP_FLUSH] = op_flush,
    [OP_RELEASE] = op_release,
    [OP_DETACH] = op_detach,
    [OP_PULLUP] = op_pullup,
    [OP_CSTR] = op_cstr,
    [OP_READ] = op_read,
    [OP_APPEND] = op_append,
    [OP_ODD_WRITE] = op_odd_write,
    [OP_PUTC] = op_putc,
    [OP_DETACH_MALLOC] = op_detach_malloc,
    [OP_APPEND_REF] = op_append_ref,
    [OP_MOVE] = op_move,
    [OP_LIMIT] = op_limit,
    [OP_DEC_FLOAT] = op_dec_float,
    [OP_TRY_SPAN] = op_try_span,
    [OP_FIRST_BUFFER] = op_first_buffer,
    [OP_PAD] = op_pad,
    [OP_BLOCK_SIZE] = op_block_size,
    [OP_SCRIPT] = op_script,
};

static void op_writer(in *s, slot *x, unsigned op)
{
    bw_writer *w = &x->w;
    size_t left = MAX_LEN - x->len;

    TRACE("w%d (%s) %s: len %zu base %" PRIu64 " err %d free %zu\n", (int)(x - slots),
          mode_names[x->mode], op_names[op], x->len, x->base, x->err, bw_free_capacity(w));

    if (op == OP_REINIT) {
        reinit(s, x);
        return;
    }
#ifdef BW_HAVE_FILE_ADAPTER
    if (op == OP_FILE) {
        pre(x);
        op_file(s, x);
        return;
    }
#endif
    pre(x);
    if ((op == OP_PUT || op == OP_VARINT || op == OP_DEC) && left < 32) op = NOPS; /* size clamp */
    posted = 0;
    if (op < NOPS && op_fn[op] != NULL) op_fn[op](s, x);
    if (!posted) post(x);
}
