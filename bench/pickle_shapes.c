/* SPDX-License-Identifier: MIT */
/* pickle_shapes.c - examples/pickle_stream.c's writer on the Pyrolite
 * benchmark's shapes, as a shared object for bench/pickle_bench.py
 * (ctypes), which times it against CPython's own C pickler on the same
 * objects. Shapes (each a list of `count` items, protocol 4, framed):
 *   0  [1.0, 2.0]
 *   1  ["hello", "world"]
 *   2  [obj, obj], obj = {"id": 7, "name": "hello", "score": 2.5}
 * pk_shape_bench writes the pickle `reps` times into one contiguous writer
 * (released to the pool between them, as a server would per response) and
 * copies the last one into out (up to cap bytes); returns its length, or
 * -1 on an error. */
#define PICKLE_STREAM_NO_MAIN
#include "../examples/pickle_stream.c"

long pk_shape_bench(int shape, long count, long reps, unsigned char *out, size_t cap);

static void item(pickler *pk, int shape)
{
    int k;
    pk_list_begin(pk);
    pk_batch_begin(pk, 2);
    for (k = 0; k < 2; k++) {
        if (shape == 0) {
            pk_float(pk, k ? 2.0 : 1.0);
        } else if (shape == 1) {
            pk_str(pk, k ? "world" : "hello", 5);
        } else {
            pk_dict_begin(pk);
            pk_batch_begin(pk, 3);
            pk_str(pk, "id", 2);
            pk_int(pk, 7);
            pk_str(pk, "name", 4);
            pk_str(pk, "hello", 5);
            pk_str(pk, "score", 5);
            pk_float(pk, 2.5);
            pk_batch_end(pk, 3, 1);
        }
    }
    pk_batch_end(pk, 2, 0);
}

long pk_shape_bench(int shape, long count, long reps, unsigned char *out, size_t cap)
{
    bw_writer w;
    long r, i, len = -1;
    bw_init(&w, NULL, 0);
    for (r = 0; r < reps; r++) {
        pickler pk;
        bw_release(&w);
        pk_begin(&pk, &w);
        pk_list_begin(&pk);
        for (i = 0; i < count; i += PK_BATCH) {
            long k, b = count - i < PK_BATCH ? count - i : PK_BATCH;
            pk_batch_begin(&pk, (size_t)b);
            for (k = 0; k < b; k++) item(&pk, shape);
            pk_batch_end(&pk, (size_t)b, 0);
        }
        if (pk_end(&pk) != BW_OK) break;
        len = (long)bw_len(&w);
    }
    if (len >= 0 && (size_t)len <= cap) memcpy(out, bw_data(&w), (size_t)len);
    bw_release(&w);
    return len;
}
