/* SPDX-License-Identifier: MIT */
/* pickle_stream.c - a Python pickle writer, protocol 4, on bufwriter: ints,
 * floats, str, bytes, lists, tuples and dicts, framed as CPython frames
 * them, without memoization (each object is written in full wherever it
 * appears, as a pickler with an empty memo that never stores does).
 *
 * Framing (protocol 4): after PROTO 4, the opcodes go in frames, each a
 * FRAME opcode with the frame's length as 8 bytes little-endian, which is
 * known only when the frame ends: the writer puts a placeholder and patches
 * it (bw_patch_u64le). A frame ends at the first object boundary past 64
 * KiB (CPython's _FRAME_SIZE_TARGET); a str or bytes of 64 KiB or more goes
 * between frames, outside any (CPython's write_large_bytes), and a frame
 * under 4 bytes loses its FRAME opcode (CPython's _FRAME_SIZE_MIN). A
 * contiguous or segmented writer keeps every byte until sent, so the patch
 * is always in reach; a streaming writer would need a buffer larger than
 * a frame.
 *
 * The demo: pickle_stream N writes to standard output the pickle of
 *   {"ints": list(range(N)), "floats": [row / 4 for each row],
 *    "strs": ["row <row>" ...], "pairs": [(row, -row) ...],
 *    "blob": bytes(range(256)) * N}
 * Check it: pickle_stream 1000 | python3 -c \
 *   'import pickle, sys; print(len(pickle.load(sys.stdin.buffer)["ints"]))'
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/pickle_stream.c -pthread -o pickle_stream
 * or against the installed library:
 *   cc -std=c11 examples/pickle_stream.c $(pkg-config --cflags --libs bufwriter) \
 *      -o pickle_stream
 * Defining PICKLE_STREAM_NO_MAIN leaves main out (the benchmark includes
 * the file for its functions). */
#include "bufwriter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opcodes (Lib/pickle.py). */
enum {
    PK_PROTO = 0x80, PK_FRAME = 0x95, PK_STOP = '.', PK_MARK = '(',
    PK_BININT1 = 'K', PK_BININT2 = 'M', PK_BININT = 'J', PK_LONG1 = 0x8a,
    PK_BINFLOAT = 'G', PK_SHORT_BINUNICODE = 0x8c, PK_BINUNICODE = 'X',
    PK_BINUNICODE8 = 0x8d, PK_SHORT_BINBYTES = 'C', PK_BINBYTES = 'B', PK_BINBYTES8 = 0x8e,
    PK_EMPTY_LIST = ']', PK_APPEND = 'a', PK_APPENDS = 'e', PK_EMPTY_DICT = '}',
    PK_SETITEM = 's', PK_SETITEMS = 'u', PK_EMPTY_TUPLE = ')', PK_TUPLE1 = 0x85,
    PK_TUPLE2 = 0x86, PK_TUPLE3 = 0x87, PK_TUPLE = 't'
};

#define PK_FRAME_TARGET (64 * 1024) /* CPython's _FRAME_SIZE_TARGET */
#define PK_FRAME_MIN 4              /* CPython's _FRAME_SIZE_MIN */
#define PK_BATCH 1000               /* items per APPENDS / SETITEMS (_BATCHSIZE) */

typedef struct pickler {
    bw_writer *w;
    uint64_t frame; /* where the open frame's opcode is; UINT64_MAX: none */
} pickler;

/* A frame from here: FRAME and a length to patch. */
static void pk_frame_open(pickler *pk)
{
    pk->frame = bw_tell(pk->w);
    bw_put_u8(pk->w, PK_FRAME);
    bw_put_u64le(pk->w, 0);
}

/* Close the open frame: patch its length, or, when it holds fewer than
 * PK_FRAME_MIN bytes, take its 9-byte header back out (truncate to it and
 * put the bytes back: at most 3). */
static void pk_frame_close(pickler *pk)
{
    uint64_t len;
    if (pk->frame == UINT64_MAX) return;
    len = bw_tell(pk->w) - pk->frame - 9;
    if (len >= PK_FRAME_MIN) {
        bw_patch_u64le(pk->w, pk->frame + 1, len);
    } else {
        unsigned char tail[PK_FRAME_MIN];
        bw_copy_out(pk->w, bw_len(pk->w) - (size_t)len, tail, (size_t)len);
        bw_truncate(pk->w, pk->frame);
        bw_write(pk->w, tail, (size_t)len);
    }
    pk->frame = UINT64_MAX;
}

/* At an object's start: a frame past the target ends, the next opens
 * (CPython's commit_frame, called from save). */
static void pk_boundary(pickler *pk)
{
    if (pk->frame != UINT64_MAX && bw_tell(pk->w) - pk->frame - 9 >= PK_FRAME_TARGET) {
        pk_frame_close(pk);
        pk_frame_open(pk);
    }
}

void pk_begin(pickler *pk, bw_writer *w)
{
    pk->w = w;
    pk->frame = UINT64_MAX;
    bw_put_u8(w, PK_PROTO);
    bw_put_u8(w, 4);
    pk_frame_open(pk);
}

/* STOP goes in the last frame; returns the writer's status. */
int pk_end(pickler *pk)
{
    bw_put_u8(pk->w, PK_STOP);
    pk_frame_close(pk);
    return bw_error(pk->w);
}

/* An int as CPython writes it: the shortest of BININT1, BININT2, BININT,
 * else LONG1 with the two's complement bytes (at most 8 here). */
void pk_int(pickler *pk, int64_t v)
{
    unsigned char *p;
    pk_boundary(pk);
    p = (unsigned char *)bw_get_span(pk->w, 10, NULL);
    if (p == NULL) return;
    if (v >= 0 && v <= 0xff) {
        p = bw_enc_u8(bw_enc_u8(p, PK_BININT1), (uint8_t)v);
    } else if (v >= 0 && v <= 0xffff) {
        p = bw_enc_u16le(bw_enc_u8(p, PK_BININT2), (uint16_t)v);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        p = bw_enc_i32le(bw_enc_u8(p, PK_BININT), (int32_t)v);
    } else { /* LONG1: the fewest little-endian bytes whose top bit is the sign */
        unsigned n = 8, i;
        while (n > 1 && (v >> (8 * n - 9)) >= -1 && (v >> (8 * n - 9)) <= 0) n--;
        p = bw_enc_u8(bw_enc_u8(p, PK_LONG1), (uint8_t)n);
        for (i = 0; i < n; i++) p = bw_enc_u8(p, (uint8_t)((uint64_t)v >> (8 * i)));
    }
    bw_advance_to(pk->w, p);
}

void pk_float(pickler *pk, double v)
{
    unsigned char *p;
    pk_boundary(pk);
    p = (unsigned char *)bw_get_span(pk->w, 9, NULL);
    if (p != NULL) bw_advance_to(pk->w, bw_enc_f64be(bw_enc_u8(p, PK_BINFLOAT), v));
}

/* A str (UTF-8 bytes) or bytes: short, 4-byte or 8-byte length; from 64
 * KiB on, outside the frames (the frame closes before it and a new one
 * opens after), linked by reference where the writer links. */
static void pk_blob(pickler *pk, const void *s, size_t n, int op1, int op4, int op8)
{
    int large = n >= PK_FRAME_TARGET;
    pk_boundary(pk);
    if (large) pk_frame_close(pk);
    if (n < 256) {
        bw_put_u8(pk->w, (uint8_t)op1);
        bw_put_u8(pk->w, (uint8_t)n);
    } else if (n <= UINT32_MAX) {
        bw_put_u8(pk->w, (uint8_t)op4);
        bw_put_u32le(pk->w, (uint32_t)n);
    } else {
        bw_put_u8(pk->w, (uint8_t)op8);
        bw_put_u64le(pk->w, n);
    }
    if (large) bw_append_ref(pk->w, s, n, NULL, NULL);
    else bw_write(pk->w, s, n);
    if (large) pk_frame_open(pk);
}

void pk_str(pickler *pk, const char *s, size_t n)
{
    pk_blob(pk, s, n, PK_SHORT_BINUNICODE, PK_BINUNICODE, PK_BINUNICODE8);
}

void pk_bytes(pickler *pk, const void *b, size_t n)
{
    pk_blob(pk, b, n, PK_SHORT_BINBYTES, PK_BINBYTES, PK_BINBYTES8);
}

/* Containers: the caller writes the items between begin and end, and says
 * when a batch of items (PK_BATCH) is done, as CPython's _batch_appends
 * and _batch_setitems do: MARK items APPENDS, or one item and APPEND. */
void pk_list_begin(pickler *pk)
{
    pk_boundary(pk);
    bw_put_u8(pk->w, PK_EMPTY_LIST);
}

void pk_dict_begin(pickler *pk)
{
    pk_boundary(pk);
    bw_put_u8(pk->w, PK_EMPTY_DICT);
}

/* Before a batch of n items (n >= 1; one item: no MARK). */
void pk_batch_begin(pickler *pk, size_t n)
{
    pk_boundary(pk);
    if (n > 1) bw_put_u8(pk->w, PK_MARK);
}

/* After it: APPENDS or APPEND for a list, SETITEMS or SETITEM for a dict. */
void pk_batch_end(pickler *pk, size_t n, int dict)
{
    bw_put_u8(pk->w, (uint8_t)(dict ? (n > 1 ? PK_SETITEMS : PK_SETITEM)
                                     : (n > 1 ? PK_APPENDS : PK_APPEND)));
}

/* A tuple of n items: the caller writes them after this, then
 * pk_tuple_end. Up to 3 items need no MARK (TUPLE1..3). */
void pk_tuple_begin(pickler *pk, size_t n)
{
    pk_boundary(pk);
    if (n == 0 || n > 3) bw_put_u8(pk->w, n == 0 ? PK_EMPTY_TUPLE : PK_MARK);
}

void pk_tuple_end(pickler *pk, size_t n)
{
    static const unsigned char ops[] = {0, PK_TUPLE1, PK_TUPLE2, PK_TUPLE3};
    if (n > 0) bw_put_u8(pk->w, n <= 3 ? ops[n] : PK_TUPLE);
}

#ifndef PICKLE_STREAM_NO_MAIN
/* A list of n items written by item(pk, row), in batches. */
static void demo_list(pickler *pk, size_t n, void (*item)(pickler *, size_t))
{
    size_t row = 0;
    pk_list_begin(pk);
    while (row < n) {
        size_t k, b = n - row < PK_BATCH ? n - row : PK_BATCH;
        pk_batch_begin(pk, b);
        for (k = 0; k < b; k++) item(pk, row++);
        pk_batch_end(pk, b, 0);
    }
}

static void item_int(pickler *pk, size_t row) { pk_int(pk, (int64_t)row); }
static void item_float(pickler *pk, size_t row) { pk_float(pk, (double)row / 4); }

static void item_str(pickler *pk, size_t row)
{
    char s[32];
    int n = snprintf(s, sizeof s, "row %zu", row);
    pk_str(pk, s, (size_t)n);
}

static void item_pair(pickler *pk, size_t row)
{
    pk_tuple_begin(pk, 2);
    pk_int(pk, (int64_t)row);
    pk_int(pk, -(int64_t)row);
    pk_tuple_end(pk, 2);
}

static void demo_key(pickler *pk, const char *k) { pk_str(pk, k, strlen(k)); }

/* The demo dict, into a segmented writer, sent with one writev. */
int main(int argc, char **argv)
{
    bw_writer w;
    pickler pk;
    unsigned char *blob;
    size_t n, i;
    int rc;
    if (argc != 2) {
        fprintf(stderr, "usage: pickle_stream N > out.pickle\n");
        return 2;
    }
    n = (size_t)strtoull(argv[1], NULL, 10);
    blob = (unsigned char *)malloc(256 * n + 1);
    if (blob == NULL) return 1;
    for (i = 0; i < 256 * n; i++) blob[i] = (unsigned char)i;
    bw_init_chain(&w, NULL);
    pk_begin(&pk, &w);
    pk_dict_begin(&pk);
    pk_batch_begin(&pk, 5);
    demo_key(&pk, "ints");
    demo_list(&pk, n, item_int);
    demo_key(&pk, "floats");
    demo_list(&pk, n, item_float);
    demo_key(&pk, "strs");
    demo_list(&pk, n, item_str);
    demo_key(&pk, "pairs");
    demo_list(&pk, n, item_pair);
    demo_key(&pk, "blob");
    pk_bytes(&pk, blob, 256 * n);
    pk_batch_end(&pk, 5, 1);
    rc = pk_end(&pk);
    if (rc == BW_OK) rc = bw_write_fd(&w, 1, NULL);
    if (rc != BW_OK) fprintf(stderr, "pickle_stream: %s\n", bw_strerror(rc));
    bw_release(&w);
    free(blob);
    return rc == BW_OK ? 0 : 1;
}
#endif
