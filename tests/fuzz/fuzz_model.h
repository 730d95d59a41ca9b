/* SPDX-License-Identifier: MIT */
/* fuzz_model.h - the reference model of fuzz_ops.c: a writer's slot (the
 * held bytes, their position, the recorded status), the references and
 * links, and the bytes each encoding and the decimal text must give.
 * Included once, by fuzz_ops.c, where these sections stood; it uses that
 * file's CHECK, MIN and MAX and what the files included before it define. */

/* ----------------------------------------------------------- model -- */
typedef struct slot {
    bw_writer w;
    int mode, nosink;     /* nosink: streaming without a (known) sink      */
    unsigned char *d;     /* the held bytes                                */
    size_t len, dcap;
    uint64_t base;        /* position of the first held byte              */
    int err;              /* recorded status                              */
    int syserr;           /* the errno recorded with BW_EIO               */
    size_t sbuf;          /* streaming: the buffer size (0: unknown)      */
    unsigned char *fbuf;  /* fixed: the buffer (or NULL) and its size     */
    size_t fsize;
    size_t isize;         /* contiguous: the caller's first buffer's size */
    size_t learned0;      /* contiguous: the learned size when its block
                             was rented as a first pooled block (0: no)   */
    uint64_t limit;       /* bw_set_limit: 0 = none                       */
    sinkst sk;
    unsigned char ibuf[256];
    unsigned char fmem[FIX_MAX + GUARD];
} slot;

static bw_pool *pool;
static size_t minblk, threshold;
static int bypass; /* BW_POOL_BYPASS: rents are exact-size below the threshold */
static int learned_jump; /* a growth past the jump floor may jump further (the learned jump) */
static int learn_size;   /* BW_POOL_LEARN_SIZE: a first block may be the learned size */
static slot *slots;
static unsigned char scratch[MAX_OP + 16];
static unsigned char expb[MAX_LEN + 2 * MAX_OP]; /* the bytes a call must append */
static unsigned char tmp[MAX_LEN + 16];
static struct iovec *iv;
static size_t ivcap;

static void m_append(slot *x, const void *src, size_t n)
{
    if (n == 0) return;
    if (x->len + n > x->dcap) {
        x->dcap = MAX(x->dcap * 2, MAX(x->len + n, 256));
        x->d = (unsigned char *)realloc(x->d, x->dcap);
        CHECK(x->d != NULL);
    }
    memcpy(x->d + x->len, src, n);
    x->len += n;
}
static void m_drop(slot *x, size_t n)
{
    if (n) memmove(x->d, x->d + n, x->len - n);
    x->len -= n;
    x->base += n;
}
static void m_reset(slot *x) { x->len = 0; x->base = 0; x->err = BW_OK; }

/* References (bw_append_ref): memory that must stay as it is until the
 * done of its last link; then it is scribbled over, so a later read of it
 * shows in the bytes compared. Caller memory may be linked more than once
 * (the writer's own held bytes that lie in a reference are such memory):
 * each link has its record, and done must come once per link. */
#define NREF 16
#define NLINK 64
static struct refst {
    unsigned char mem[MAX_OP];
    int links; /* links whose done has not come */
} refs[NREF];
static struct linkst {
    struct refst *r;           /* the memory linked, NULL: the writer's own */
    const unsigned char *data; /* what done must get */
    size_t n;
    int live;
} links[NLINK];
static void ref_done(void *ctx, const void *data, size_t n)
{
    struct linkst *l = (struct linkst *)ctx;
    CHECK(l->live && data == l->data && n == l->n);
    l->live = 0;
    if (l->r != NULL && --l->r->links == 0) memset(l->r->mem, 0xA5, sizeof l->r->mem);
}
/* The reference whose memory holds [p, p + n), or NULL. */
static struct refst *ref_of(const unsigned char *p, size_t n)
{
    int i;
    for (i = 0; i < NREF; i++)
        if (refs[i].links != 0 && p >= refs[i].mem && p + n <= refs[i].mem + MAX_OP)
            return &refs[i];
    return NULL;
}

/* memcmp that allows NULL with n == 0 */
static int same(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }
static int is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }
static size_t pow2_up(size_t n) { size_t c = 1; while (c < n) c *= 2; return c; }
/* What a rent of n gives: the class, or (bypass) n itself up to the
 * threshold; as an upper bound class_of holds in both. */
static size_t class_of(size_t n) { return pow2_up(MAX(n, minblk)); }
static size_t rent_of(size_t n) { return bypass && n <= threshold ? MAX(n, 1) : class_of(n); }
static void fill(unsigned char *b, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) b[i] = (unsigned char)(i * 31u + seed);
}
static unsigned char guard_byte(size_t i) { return (unsigned char)(0xC3 ^ i); }

/* ------------------------------------------------------ encodings -- */
#define TYPES(X)                                                                   \
    X(u8, uint8_t, 1, 0) X(u16le, uint16_t, 2, 0) X(u32le, uint32_t, 4, 0)         \
    X(u64le, uint64_t, 8, 0) X(u16be, uint16_t, 2, 1) X(u32be, uint32_t, 4, 1)     \
    X(u64be, uint64_t, 8, 1) X(i16le, int16_t, 2, 0) X(i32le, int32_t, 4, 0)       \
    X(i64le, int64_t, 8, 0) X(i16be, int16_t, 2, 1) X(i32be, int32_t, 4, 1)        \
    X(i64be, int64_t, 8, 1) X(f32le, float, 4, 0) X(f64le, double, 8, 0)           \
    X(f32be, float, 4, 1) X(f64be, double, 8, 1)
#define T_ENUM(name, type, size, be) T_##name,
enum { TYPES(T_ENUM) NTYPES };
#define T_INFO(name, type, size, be) {size, be},
static const struct { unsigned char size, be; } tinfo[] = {TYPES(T_INFO)};

/* The value of a size-byte type whose representation is bits' low bytes. */
static void from_bits(void *dst, size_t size, uint64_t bits)
{
    uint8_t a = (uint8_t)bits;
    uint16_t b = (uint16_t)bits;
    uint32_t c = (uint32_t)bits;
    memcpy(dst, size == 1 ? (void *)&a : size == 2 ? (void *)&b : size == 4 ? (void *)&c : (void *)&bits,
           size);
}
#define T_PUT(name, type, size, be) \
    case T_##name: { type v; from_bits(&v, size, bits); return bw_put_##name(w, v); }
static int put_typed(bw_writer *w, unsigned t, uint64_t bits)
{
    switch (t) { TYPES(T_PUT) }
    return BW_EINVAL;
}
#define T_PATCH(name, type, size, be) \
    case T_##name: { type v; from_bits(&v, size, bits); return bw_patch_##name(w, pos, v); }
static int patch_typed(bw_writer *w, unsigned t, uint64_t pos, uint64_t bits)
{
    switch (t) { TYPES(T_PATCH) }
    return BW_EINVAL;
}
#define T_ENC(name, type, size, be) \
    case T_##name: { type v; from_bits(&v, size, bits); return bw_enc_##name(p, v); }
static unsigned char *cursor_typed(unsigned char *p, unsigned t, uint64_t bits)
{
    switch (t) { TYPES(T_ENC) }
    return NULL;
}
static size_t enc_typed(unsigned char *b, unsigned t, uint64_t bits)
{
    size_t i, n = tinfo[t].size;
    for (i = 0; i < n; i++) b[i] = (unsigned char)(bits >> (8 * (tinfo[t].be ? n - 1 - i : i)));
    return n;
}
static size_t leb(unsigned char *b, uint64_t u)
{
    size_t k = 0;
    while (u >= 0x80) { b[k++] = (unsigned char)(u | 0x80); u >>= 7; }
    b[k++] = (unsigned char)u;
    return k;
}
static void hex(unsigned char *out, const unsigned char *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = (unsigned char)"0123456789abcdef"[src[i] >> 4];
        out[2 * i + 1] = (unsigned char)"0123456789abcdef"[src[i] & 15];
    }
}
static int vpf(bw_writer *w, const char *fmt, ...) BW__PRINTF(2, 3);
static int vpf(bw_writer *w, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = bw_vprintf(w, fmt, ap);
    va_end(ap);
    return rc;
}

/* ----------------------------------------------- floating-point text -- */
/* A double from the input: its bits, or an edge (zeros, infinities, NaNs,
 * the extremes, subnormals, where the layout changes form). */
static double pick_double(in *s)
{
    static const double edge[] = {0.0, -0.0, 1.0, 0.1, 123.456, 1e16, 1e17, 9007199254740993.0,
                                  0.0001, 0.00001, 1e-5, 5e-324, -5e-324, DBL_MIN, -DBL_MAX,
                                  DBL_MAX, 2.2250738585072009e-308, 1e23, 0.3, 100000.0};
    unsigned how = u8(s) % 8;
    uint64_t bits = u64(s);
    double d;
    if (how == 0) return edge[bits % (sizeof edge / sizeof edge[0])];
    if (how == 1) return bits & 1 ? -INFINITY : INFINITY;
    if (how == 2) {
        bits |= (uint64_t)0x7FF << 52; /* a NaN of any sign and payload (or an infinity) */
        if ((bits & (((uint64_t)1 << 52) - 1)) == 0) bits |= 1;
    }
    if (how == 3) return (double)(int64_t)bits / (double)(1 + (bits >> 40 & 0xFFFF));
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* The decimal exponent of the first digit of the plain text t ("0.00123":
 * -3, "123.4": 2), t without its sign; 0 for zero. */
static int plain_exponent(const char *t)
{
    const char *dot = strchr(t, '.'), *p;
    size_t intlen = dot != NULL ? (size_t)(dot - t) : strlen(t);
    if (!(intlen == 1 && t[0] == '0')) return (int)intlen - 1;
    if (dot == NULL) return 0;
    for (p = dot + 1; *p == '0'; p++) {}
    return *p == 0 ? 0 : -(int)(p - dot);
}

/* The text bw_enc_dec_f64 (f32: bw_enc_dec_f32 of (float)v) stores at out,
 * checked against bufwriter.h: what strtod (strtof) reads back is exactly
 * the value (and so is what snprintf's "%.17g" gives, read back), "inf",
 * "-inf" and "nan", a "-" exactly for a negative sign, digits laid out as
 * "%.17g" lays them out (plain for a first digit's exponent in -4..16,
 * else d[.ddd]e+XX with at least two exponent digits), no trailing zeros
 * or point, no more than BW_DEC_F64_MAX (BW_DEC_F32_MAX) bytes. Which
 * digits are the shortest is tested against an oracle elsewhere
 * (tests/test_float_text.c). Returns the length. */
static size_t dec_float(unsigned char *out, double v, int is32)
{
    char t[40], ref[40], *end;
    const char *m, *e;
    float f = (float)v;
    size_t n = (size_t)((is32 ? bw_enc_dec_f32(out, f) : bw_enc_dec_f64(out, v)) - out);
    int neg, x;
    CHECK(n >= 1 && n <= (is32 ? BW_DEC_F32_MAX : BW_DEC_F64_MAX));
    memcpy(t, out, n);
    t[n] = 0;
    CHECK(strspn(t, "0123456789.e+-infa") == n);
    if (is32 ? isnan(f) : isnan(v)) {
        CHECK(strcmp(t, "nan") == 0);
        return n;
    }
    neg = is32 ? signbit(f) != 0 : signbit(v) != 0;
    CHECK((t[0] == '-') == neg);
    m = t + neg;
    if (is32 ? isinf(f) : isinf(v)) {
        CHECK(strcmp(m, "inf") == 0);
        return n;
    }
    if (is32) {
        float g = strtof(t, &end);
        CHECK(*end == 0 && memcmp(&g, &f, sizeof f) == 0);
    } else {
        double g = strtod(t, &end), r;
        CHECK(*end == 0 && memcmp(&g, &v, sizeof v) == 0);
        snprintf(ref, sizeof ref, "%.17g", v);
        r = strtod(ref, NULL);
        CHECK(memcmp(&r, &g, sizeof g) == 0);
    }
    CHECK(m[0] >= '0' && m[0] <= '9');
    e = strchr(m, 'e');
    if (e != NULL) { /* d[.ddd]e+XX: one digit before the point, not 0 */
        CHECK(m[0] != '0' && (m[1] == 'e' || m[1] == '.'));
        CHECK((e[1] == '+' || e[1] == '-') && strlen(e + 2) >= 2 && strspn(e + 2, "0123456789") ==
              strlen(e + 2));
        x = atoi(e + 1);
        CHECK(x < -4 || x > 16);
        CHECK(e[-1] != '0' && e[-1] != '.');
    } else {
        CHECK(strchr(m, '+') == NULL && strchr(m, '-') == NULL);
        if (strcmp(m, "0") != 0) {
            x = plain_exponent(m);
            CHECK(x >= -4 && x <= 16);
            CHECK(!(m[0] == '0' && m[1] != '.')); /* no leading zero but "0.": */
        }
        if (strchr(m, '.') != NULL) CHECK(t[n - 1] != '0' && t[n - 1] != '.');
    }
    return n;
}

/* The text with BW_DEC_* flags, from dec_float's (checked above) the way
 * jansson post-processes printf's: "+" and the exponent's leading zeros
 * dropped (BW_DEC_EXP_SHORT), ".0" after a text with neither point nor
 * exponent (BW_DEC_POINT_ZERO). Returns its length, or 0 for a NaN or an
 * infinity under BW_DEC_JSON (no text); the text reads back as the value. */
static size_t dec_float_flags(unsigned char *out, double v, int is32, unsigned flags)
{
    char t[48], *e;
    size_t n = dec_float((unsigned char *)t, v, is32);
    int special = is32 ? !isfinite((float)v) : !isfinite(v);
    t[n] = 0;
    if (special && (flags & BW_DEC_JSON)) return 0;
    e = strchr(t, 'e');
    if (e != NULL && (flags & BW_DEC_EXP_SHORT)) {
        char *d = e + 1;
        if (*d == '+') memmove(d, d + 1, strlen(d));
        if (*d == '-') d++;
        while (d[0] == '0' && d[1] != 0) memmove(d, d + 1, strlen(d));
    }
    if (!special && e == NULL && strchr(t, '.') == NULL && (flags & BW_DEC_POINT_ZERO))
        strcat(t, ".0");
    n = strlen(t);
    CHECK(n <= BW_DEC_F64_MAX);
    if (!special) {
        char *end;
        if (is32) {
            float g = strtof(t, &end), f = (float)v;
            CHECK(*end == 0 && memcmp(&g, &f, sizeof f) == 0);
        } else {
            double g = strtod(t, &end);
            CHECK(*end == 0 && memcmp(&g, &v, sizeof v) == 0);
        }
    }
    memcpy(out, t, n);
    return n;
}

/* bw_fmt_dec_f64 / _f32 into `room` bytes of a guarded buffer: the status
 * and *len the text's length (ref, n; n 0: no text) say, the text stored
 * exactly when it fits, and nothing else stored (not even within the room). */
static void check_fmt_dec(double v, int is32, unsigned flags, size_t room, const unsigned char *ref,
                          size_t n)
{
    unsigned char b[BW_DEC_F64_MAX + 16];
    size_t got = 12345, i;
    int rc, bad = flags & ~(unsigned)BW_DEC_JSON_REAL;
    memset(b, 0xA5, sizeof b);
    rc = is32 ? bw_fmt_dec_f32(b, room, (float)v, flags, &got)
              : bw_fmt_dec_f64(b, room, v, flags, &got);
    if (bad) CHECK(rc == BW_EINVAL && got == 0);
    else if (n == 0) CHECK(rc == BW_ENONFINITE && got == 0);
    else CHECK(got == n && rc == (n <= room ? BW_OK : BW_EFULL));
    if (rc == BW_OK) CHECK(memcmp(b, ref, n) == 0);
    for (i = rc == BW_OK ? n : 0; i < sizeof b; i++) CHECK(b[i] == 0xA5);
}
