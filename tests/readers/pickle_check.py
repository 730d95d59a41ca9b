#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pickle_check.py - read examples/pickle_stream.c's output with Python's own
pickle.loads and compare it with the object the program means to write (its
header comment); then walk its opcodes (pickletools) to check the framing:
PROTO 4 first, every FRAME length exactly the bytes up to the next frame or
the next large str/bytes (which lie outside frames), no memo opcodes; and
up to 1,000 rows, the very bytes of CPython's pickler with its memo taken
out (pickletools.optimize).

Usage: pickle_check.py FILE N
Prints one line and exits 0 when everything matches, else names the first
difference and exits 1."""
import pickle
import pickletools
import sys

FRAME_TARGET = 64 * 1024
MEMO_OPS = {"MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET"}
LARGE_OPS = {"BINUNICODE", "BINUNICODE8", "BINBYTES", "BINBYTES8"}


def fail(path, msg):
    print(f"pickle_check: {path}: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        data = f.read()
    want = {
        "ints": list(range(n)),
        "floats": [row / 4 for row in range(n)],
        "strs": [f"row {row}" for row in range(n)],
        "pairs": [(row, -row) for row in range(n)],
        "blob": bytes(range(256)) * n,
    }
    got = pickle.loads(data)
    if got != want or list(got) != list(want):
        for k in want:
            if got.get(k) != want[k]:
                fail(path, f'key "{k}" differs')
        fail(path, f"keys {list(got)}, expected {list(want)}")
    if any(type(p) is not tuple for p in got["pairs"]):
        fail(path, "a pair is not a tuple")

    ops = list(pickletools.genops(data))
    if ops[0][0].name != "PROTO" or ops[0][1] != 4:
        fail(path, "does not start with PROTO 4")
    frames = 0
    frame_end = None  # where the open frame ends
    for i, (op, arg, pos) in enumerate(ops):
        if op.name in MEMO_OPS:
            fail(path, f"memo opcode {op.name} at {pos}")
        if frame_end is not None and pos >= frame_end:
            if pos != frame_end:
                fail(path, f"an opcode at {pos} runs across the frame end {frame_end}")
            frame_end = None
        if op.name == "FRAME":
            if frame_end is not None:
                fail(path, f"a frame at {pos} inside another")
            if arg < 4:
                fail(path, f"a frame of {arg} bytes at {pos} (CPython omits those)")
            frame_end = pos + 9 + arg
            frames += 1
        elif frame_end is None and op.name not in ("PROTO",) and not (
                op.name in LARGE_OPS and len(arg) >= FRAME_TARGET):
            # outside frames: only PROTO, large str/bytes and a last frame's
            # tail of under 4 bytes (CPython writes it unframed)
            if len(data) - pos >= 4:
                fail(path, f"{op.name} at {pos} outside a frame")
        elif frame_end is not None and op.name in LARGE_OPS and len(arg) >= FRAME_TARGET:
            fail(path, f"a large {op.name} at {pos} inside a frame")
    # Small enough for CPython's frames to end where ours do: the same bytes
    # as CPython's own pickler, its unused memo opcodes taken out.
    same = ""
    if n <= 1000:
        if pickletools.optimize(pickle.dumps(want, protocol=4)) != data:
            fail(path, "not the bytes of pickletools.optimize(pickle.dumps(obj, 4))")
        same = "; byte for byte CPython's, memo removed"
    print(f"pickle_check: {path}: pickle.loads gives the dict of {n} rows as meant; "
          f"{frames} frames, lengths exact, no memo{same}")


main()
