#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pickle_bench.py - examples/pickle_stream.c's writer (through ctypes, from
the shared object bench/pickle_shapes.c builds) against CPython's own C
pickler (_pickle.dumps, protocol 4) on the Pyrolite benchmark's shapes, a
list of 1,000 items each:
    floats  [1.0, 2.0]
    strs    ["hello", "world"]
    objs    [obj, obj], obj = {"id": 7, "name": "hello", "score": 2.5}
           (two distinct dicts per item; CPython's memo still shares the
           key strings, which our writer, memo off, writes every time)
Both are checked to load to the same object; each is timed in the same run,
interleaved, best of REPEAT rounds; time per item (one [x, x] list).

Usage: pickle_bench.py SHARED_OBJECT [REPEAT]"""
import _pickle
import ctypes
import pickle
import sys
import time

COUNT = 1000
lib = ctypes.CDLL(sys.argv[1])
lib.pk_shape_bench.restype = ctypes.c_long
lib.pk_shape_bench.argtypes = [ctypes.c_int, ctypes.c_long, ctypes.c_long,
                               ctypes.c_char_p, ctypes.c_size_t]
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 7


def obj():
    return {"id": 7, "name": "hello", "score": 2.5}


shapes = [("floats", [[1.0, 2.0] for _ in range(COUNT)]),
          ("strs", [["hello", "world"] for _ in range(COUNT)]),
          ("objs", [[obj(), obj()] for _ in range(COUNT)])]
buf = ctypes.create_string_buffer(1 << 20)
print(f"{'shape':8} {'bufwriter ns/item':>18} {'_pickle ns/item':>16} {'ratio':>6}"
      f" {'bytes (ours / CPython)':>24}")
for i, (name, value) in enumerate(shapes):
    n = lib.pk_shape_bench(i, COUNT, 1, buf, len(buf))
    ours = buf.raw[:n]
    if pickle.loads(ours) != value:
        sys.exit(f"{name}: our pickle does not load to the object")
    theirs = _pickle.dumps(value, protocol=4)
    reps = 200
    best_c = best_py = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        lib.pk_shape_bench(i, COUNT, reps, buf, len(buf))
        t1 = time.perf_counter_ns()
        for _ in range(reps):
            _pickle.dumps(value, protocol=4)
        t2 = time.perf_counter_ns()
        best_c = min(best_c, (t1 - t0) / reps / COUNT)
        best_py = min(best_py, (t2 - t1) / reps / COUNT)
    print(f"{name:8} {best_c:18.1f} {best_py:16.1f} {best_py / best_c:6.2f}"
          f" {len(ours):>11} / {len(theirs):<10}")
