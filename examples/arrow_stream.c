/* SPDX-License-Identifier: MIT */
/* arrow_stream.c - an Apache Arrow IPC stream writer (the format of Arrow's
 * RecordBatchStreamWriter) on bufwriter, with no Arrow or FlatBuffers
 * library: the FlatBuffers metadata is written front to back with the
 * cursor and back-patched (bw_patch) once the objects it points to are
 * placed, and the column buffers are linked by reference (bw_append_ref),
 * never copied, then sent with one writev per batch (bw_write_fd).
 *
 * The stream: a Schema message, one RecordBatch message per batch, then the
 * end-of-stream marker. Each message is the continuation marker 0xFFFFFFFF,
 * the metadata's length (int32, little-endian; padded so that the body
 * starts at a multiple of 8), a FlatBuffers Message (MetadataVersion V5),
 * then the body: every buffer padded to 8 bytes (bw_pad). End of stream:
 * 0xFFFFFFFF then a length of 0.
 *
 * The demo: arrow_stream [-c] [-e] [-n] ROWS [BATCH] writes to standard
 * output a table of ROWS rows in batches of BATCH rows (default 1024):
 *   i  int32   = row
 *   l  int64   = row * 1000000007
 *   f  float64 = row / 4
 *   s  utf8    = "row <row>"
 * every column null where row % 7 == 3 (each column has a validity bitmap).
 * -c writes through a contiguous writer (every byte copied once) instead of
 * a segmented one; -e makes every string empty; -n makes every value null.
 * Read it with any Arrow reader, e.g. in Node.js with the apache-arrow
 * package: tableFromIPC(fs.readFileSync(0)); in Python: pyarrow.ipc.open_stream.
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/arrow_stream.c -pthread -o arrow_stream
 * or against the installed library:
 *   cc -std=c11 examples/arrow_stream.c $(pkg-config --cflags --libs bufwriter) \
 *      -o arrow_stream
 * Defining ARROW_STREAM_NO_MAIN leaves main out (the benchmark includes the
 * file for its functions). */
#include "bufwriter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- FlatBuffers, front to back -------------------------------------- */
/* A FlatBuffer is read from its root offset at its start; a table starts
 * with a signed offset back to its vtable (which lists where each field
 * lies in the table), and a reference to a string, vector or table is an
 * unsigned offset forward from the reference itself. So a writer that goes
 * front to back places a table (with zeros for its references), then what
 * they point to, and patches each reference when its target's position is
 * known. Positions are bw_tell's: the message starts at a multiple of 8,
 * so alignment in the stream is alignment in the FlatBuffer. */

/* Room for the longest run of inline bytes written through the cursor. */
#define FB_SPAN 64

/* Zeros until bw_tell(w) % 8 == 4: a vector's 4-byte length goes just
 * before its 8-aligned elements (bw_pad knows no phase: pad to 4, then
 * 4 more when that landed on a multiple of 8). */
static void fb_align_4_of_8(bw_writer *w)
{
    bw_pad(w, 4);
    if (bw_tell(w) % 8 == 0) bw_put_u32le(w, 0);
}

/* A vtable for n fields at the given table offsets (0: absent), then the
 * table's start aligned to talign, its offset to the vtable written:
 * returns the table's position (where field offsets count from). */
static uint64_t fb_table(bw_writer *w, const uint16_t *field, int n, uint16_t size,
                         size_t talign)
{
    uint64_t vt, t;
    int i;
    bw_pad(w, 2);
    vt = bw_tell(w);
    bw_put_u16le(w, (uint16_t)(4 + 2 * n));
    bw_put_u16le(w, size);
    for (i = 0; i < n; i++) bw_put_u16le(w, field[i]);
    bw_pad(w, talign);
    t = bw_tell(w);
    bw_put_i32le(w, (int32_t)(t - vt)); /* the vtable is at t minus this */
    return t;
}

/* A reference's target is here: patch it (an offset from the reference). */
static void fb_here(bw_writer *w, uint64_t ref)
{
    bw_patch_u32le(w, ref, (uint32_t)(bw_tell(w) - ref));
}

static void fb_string(bw_writer *w, uint64_t ref, const char *s)
{
    size_t n = strlen(s);
    bw_pad(w, 4);
    fb_here(w, ref);
    bw_put_u32le(w, (uint32_t)n);
    bw_write(w, s, n + 1); /* and its NUL */
}

/* ---- The schema -------------------------------------------------------- */
enum { T_INT = 2, T_FLOAT = 3, T_UTF8 = 5 };      /* Schema.fbs, union Type */
enum { H_SCHEMA = 1, H_RECORD_BATCH = 3 };         /* Message.fbs, MessageHeader */
#define METADATA_V5 4                              /* MetadataVersion.V5 */
#define NCOLS 4
#define NBUFS 9 /* validity + data, three times; validity + offsets + data */

static const struct column {
    const char *name;
    unsigned char type;
    int bits; /* Int's bitWidth, or 64 for the double */
} columns[NCOLS] = {{"i", T_INT, 32}, {"l", T_INT, 64}, {"f", T_FLOAT, 64}, {"s", T_UTF8, 0}};

/* The start of a message: marker, length placeholder; returns where the
 * length goes. Then the Message table, its body length patched later. */
static uint64_t message_begin(bw_writer *w, unsigned char header_type, uint64_t *header_ref,
                              uint64_t *body_len_at)
{
    /* version, header_type, header, bodyLength: at t + 8, 10, 4, 16 */
    static const uint16_t fields[] = {8, 10, 4, 16};
    uint64_t len_at, root, t;
    bw_put_u32le(w, 0xFFFFFFFFu);
    len_at = bw_tell(w);
    bw_put_u32le(w, 0);
    root = bw_tell(w);
    bw_put_u32le(w, 0);
    t = fb_table(w, fields, 4, 24, 8);
    bw_patch_u32le(w, root, (uint32_t)(t - root));
    *header_ref = bw_tell(w);
    bw_put_u32le(w, 0);                            /* t + 4: header */
    bw_put_i16le(w, METADATA_V5);                  /* t + 8: version */
    bw_put_u8(w, header_type);                     /* t + 10 */
    bw_pad(w, 8);
    *body_len_at = bw_tell(w);
    bw_put_i64le(w, 0);                            /* t + 16: bodyLength */
    return len_at;
}

/* The metadata ends: pad so the body starts at a multiple of 8, and patch
 * the metadata's length (everything after the length field). */
static void message_metadata_end(bw_writer *w, uint64_t len_at)
{
    bw_pad(w, 8);
    bw_patch_u32le(w, len_at, (uint32_t)(bw_tell(w) - len_at - 4));
}

/* One Field table: name, nullable, its type's union tag and table, and an
 * empty children vector (readers expect one). */
static void write_field(bw_writer *w, uint64_t ref, const struct column *c)
{
    /* name, nullable, type_type, type, dictionary, children */
    static const uint16_t fields[] = {4, 16, 17, 8, 0, 12};
    uint64_t t, name_ref, type_ref, kids_ref;
    static const uint16_t int_fields[] = {4, 8};   /* bitWidth, is_signed */
    static const uint16_t float_fields[] = {4};    /* precision */
    t = fb_table(w, fields, 6, 20, 4);
    bw_patch_u32le(w, ref, (uint32_t)(t - ref));
    name_ref = t + 4;
    type_ref = t + 8;
    kids_ref = t + 12;
    bw_put_u32le(w, 0);
    bw_put_u32le(w, 0);
    bw_put_u32le(w, 0);
    bw_put_u8(w, 1);                               /* nullable */
    bw_put_u8(w, c->type);
    bw_put_u16le(w, 0);
    fb_string(w, name_ref, c->name);
    if (c->type == T_INT) {
        t = fb_table(w, int_fields, 2, 12, 4);
        bw_put_i32le(w, c->bits);
        bw_put_u32le(w, 1);                        /* is_signed, padding */
    } else if (c->type == T_FLOAT) {
        t = fb_table(w, float_fields, 1, 8, 4);
        bw_put_u32le(w, 2);                        /* Precision.DOUBLE, padding */
    } else {
        t = fb_table(w, NULL, 0, 4, 4);            /* Utf8: no fields */
    }
    bw_patch_u32le(w, type_ref, (uint32_t)(t - type_ref));
    fb_here(w, kids_ref);
    bw_put_u32le(w, 0);                            /* no children */
}

/* The Schema message: Little endian, the four fields; no body. */
int arrow_write_schema(bw_writer *w)
{
    static const uint16_t fields[] = {8, 4};       /* endianness, fields */
    uint64_t header_ref, body_len_at, len_at, t, vec;
    int i;
    len_at = message_begin(w, H_SCHEMA, &header_ref, &body_len_at);
    t = fb_table(w, fields, 2, 12, 4);
    bw_patch_u32le(w, header_ref, (uint32_t)(t - header_ref));
    bw_put_u32le(w, 0);                            /* fields */
    bw_put_u32le(w, 0);                            /* Endianness.Little, padding */
    fb_here(w, t + 4);
    bw_put_u32le(w, NCOLS);
    vec = bw_tell(w);
    for (i = 0; i < NCOLS; i++) bw_put_u32le(w, 0);
    for (i = 0; i < NCOLS; i++) write_field(w, vec + 4 * (uint64_t)i, &columns[i]);
    message_metadata_end(w, len_at);
    return bw_error(w);
}

/* ---- Record batches ---------------------------------------------------- */
/* A batch's columns, in the caller's memory: the writer links them. */
typedef struct arrow_batch {
    size_t rows, cap, str_cap;
    int64_t nulls;
    unsigned char *valid;     /* one bitmap, shared by the four columns */
    int32_t *i32;
    int64_t *i64;
    double *f64;
    int32_t *offsets;         /* rows + 1 */
    char *chars;
    size_t chars_len;
} arrow_batch;

enum { SHAPE_DEMO = 0, SHAPE_EMPTY_STRINGS = 1, SHAPE_ALL_NULL = 2 };

/* Room for `cap` rows (strings up to 24 bytes each); NULL on failure. */
int arrow_batch_init(arrow_batch *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->str_cap = cap * 24;
    b->valid = (unsigned char *)calloc(cap / 8 + 1, 1);
    b->i32 = (int32_t *)malloc(cap * sizeof *b->i32);
    b->i64 = (int64_t *)malloc(cap * sizeof *b->i64);
    b->f64 = (double *)malloc(cap * sizeof *b->f64);
    b->offsets = (int32_t *)malloc((cap + 1) * sizeof *b->offsets);
    b->chars = (char *)malloc(b->str_cap + 1);
    return b->valid && b->i32 && b->i64 && b->f64 && b->offsets && b->chars ? 0 : -1;
}

void arrow_batch_free(arrow_batch *b)
{
    free(b->valid);
    free(b->i32);
    free(b->i64);
    free(b->f64);
    free(b->offsets);
    free(b->chars);
}

/* Rows [first, first + n) of the demo table (n <= cap). A null row's values
 * are zeros and its string empty, as Arrow writers leave them. */
void arrow_batch_fill(arrow_batch *b, uint64_t first, size_t n, int shape)
{
    size_t k;
    int32_t off = 0;
    b->rows = n;
    b->nulls = 0;
    memset(b->valid, 0, n / 8 + 1);
    b->offsets[0] = 0;
    for (k = 0; k < n; k++) {
        uint64_t row = first + k;
        int null = shape == SHAPE_ALL_NULL || row % 7 == 3;
        if (null) {
            b->nulls++;
            b->i32[k] = 0;
            b->i64[k] = 0;
            b->f64[k] = 0;
        } else {
            b->valid[k / 8] = (unsigned char)(b->valid[k / 8] | 1u << (k % 8));
            b->i32[k] = (int32_t)row;
            b->i64[k] = (int64_t)row * 1000000007;
            b->f64[k] = (double)row / 4;
            if (shape != SHAPE_EMPTY_STRINGS)
                off += snprintf(b->chars + off, 25, "row %llu", (unsigned long long)row);
        }
        b->offsets[k + 1] = off;
    }
    b->chars_len = (size_t)off;
}

/* One body buffer: linked, padded to 8; its offset (from the body's start)
 * and length patched into its Buffer struct. */
static void body_buffer(bw_writer *w, uint64_t body, uint64_t *slot, const void *p, size_t n)
{
    uint64_t at = bw_tell(w);
    bw_append_ref(w, p, n, NULL, NULL);
    bw_pad(w, 8);
    bw_patch_u64le(w, *slot, at - body);
    bw_patch_u64le(w, *slot + 8, n);
    *slot += 16;
}

/* A vector of 16-byte structs: its length, then 8-aligned elements; returns
 * where the first is. */
static uint64_t struct_vector(bw_writer *w, uint64_t ref, uint32_t n)
{
    fb_align_4_of_8(w);
    fb_here(w, ref);
    bw_put_u32le(w, n);
    return bw_tell(w);
}

/* One RecordBatch message: metadata with every FieldNode, the Buffer
 * structs as placeholders, then the body, linked, patched in. */
int arrow_write_batch(bw_writer *w, const arrow_batch *b)
{
    static const uint16_t fields[] = {8, 4, 16}; /* length, nodes, buffers */
    uint64_t header_ref, body_len_at, len_at, t, bufs, body;
    size_t bitmap = (b->rows + 7) / 8;
    int i;
    unsigned char *p;
    len_at = message_begin(w, H_RECORD_BATCH, &header_ref, &body_len_at);
    t = fb_table(w, fields, 3, 20, 8);             /* length at t + 8 */
    bw_patch_u32le(w, header_ref, (uint32_t)(t - header_ref));
    bw_put_u32le(w, 0);                            /* nodes */
    bw_put_i64le(w, (int64_t)b->rows);             /* length */
    bw_put_u32le(w, 0);                            /* buffers */
    struct_vector(w, t + 4, NCOLS);
    p = (unsigned char *)bw_get_span(w, NCOLS * 16, NULL);
    if (p == NULL) return bw_error(w);
    for (i = 0; i < NCOLS; i++) p = bw_enc_i64le(bw_enc_i64le(p, (int64_t)b->rows), b->nulls);
    bw_advance_to(w, p);
    bufs = struct_vector(w, t + 16, NBUFS);
    for (i = 0; i < 2 * NBUFS; i++) bw_put_u64le(w, 0); /* offset, length: patched */
    message_metadata_end(w, len_at);

    body = bw_tell(w);
    body_buffer(w, body, &bufs, b->valid, bitmap);
    body_buffer(w, body, &bufs, b->i32, b->rows * 4);
    body_buffer(w, body, &bufs, b->valid, bitmap);
    body_buffer(w, body, &bufs, b->i64, b->rows * 8);
    body_buffer(w, body, &bufs, b->valid, bitmap);
    body_buffer(w, body, &bufs, b->f64, b->rows * 8);
    body_buffer(w, body, &bufs, b->valid, bitmap);
    body_buffer(w, body, &bufs, b->offsets, (b->rows + 1) * 4);
    body_buffer(w, body, &bufs, b->chars, b->chars_len);
    bw_patch_i64le(w, body_len_at, (int64_t)(bw_tell(w) - body));
    return bw_error(w);
}

int arrow_write_end(bw_writer *w)
{
    bw_put_u32le(w, 0xFFFFFFFFu);
    return bw_put_u32le(w, 0);
}

#ifndef ARROW_STREAM_NO_MAIN
/* The demo: schema, batches, end; each message sent as soon as it is
 * written, with one writev (the batch's columns are reused for the next). */
int main(int argc, char **argv)
{
    bw_writer w;
    arrow_batch b;
    unsigned long long rows, batch = 1024, first;
    int contiguous = 0, shape = SHAPE_DEMO, rc, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "-c") == 0) contiguous = 1;
        else if (strcmp(argv[a], "-e") == 0) shape = SHAPE_EMPTY_STRINGS;
        else if (strcmp(argv[a], "-n") == 0) shape = SHAPE_ALL_NULL;
        else break;
    }
    if (a >= argc || a + 2 < argc) {
        fprintf(stderr, "usage: arrow_stream [-c] [-e] [-n] ROWS [BATCH] > out.arrows\n");
        return 2;
    }
    rows = strtoull(argv[a], NULL, 10);
    if (a + 1 < argc) batch = strtoull(argv[a + 1], NULL, 10);
    if (batch == 0 || batch > (1u << 24) || arrow_batch_init(&b, (size_t)batch) != 0) {
        fprintf(stderr, "arrow_stream: BATCH must be 1 .. 16777216 (and fit in memory)\n");
        return 2;
    }
    if (contiguous) bw_init(&w, NULL, 0);
    else bw_init_chain(&w, NULL);
    rc = arrow_write_schema(&w);
    if (rc == BW_OK) rc = bw_write_fd(&w, 1, NULL);
    for (first = 0; rc == BW_OK && first < rows; first += batch) {
        size_t n = (size_t)(rows - first < batch ? rows - first : batch);
        arrow_batch_fill(&b, first, n, shape);
        rc = arrow_write_batch(&w, &b);
        if (rc == BW_OK) rc = bw_write_fd(&w, 1, NULL); /* sends and unlinks */
    }
    if (rc == BW_OK) rc = arrow_write_end(&w);
    if (rc == BW_OK) rc = bw_write_fd(&w, 1, NULL);
    if (rc != BW_OK) fprintf(stderr, "arrow_stream: %s\n", bw_strerror(rc));
    bw_release(&w);
    arrow_batch_free(&b);
    return rc == BW_OK ? 0 : 1;
}
#endif
