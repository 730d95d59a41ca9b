#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summarize.py - BenchmarkDotNet-like tables from google-benchmark JSON.

Usage: summarize.py [--out DIR] [--markdown] [--scenarios FILE.csv] FILE.json...

For every JSON file (one process, one allocator) and every workload in it,
prints a table: Method | Size | Chunk | Median | Min-Max | Ratio | Bytes/op |
Allocs/op (| Pool allocs/op) | Faults/op (G also Throughput, Peak RSS, RSS
growth; H Throughput). Median, min and max are over the repetitions
(individual runs, not google-benchmark's aggregates). Ratio is the row's
median over the median of its workload's baseline row in the SAME file:
  A: limit_warm    B: limit_warm of the same size and chunk
  C: raw_store     D: malloc_free of the same size and thread count
  E: raw_store of the same message size
  F: writer_write_fd  G: fwrite_setvbuf of the same size  H: bw_printf
  I: pools_1 of the same size
  J: limit_warm of the same size (the 0.3 sweep, 8 KiB chunks)
and, for A, B and J, also "Ratio huge": over limit_warm_huge of the same
size and chunk (warm memory backed by transparent huge pages, the honest
limit for bufwriter's huge-page backed large blocks), so every ratio is
quoted against both limits.
Times: real time for A, B, C, E, F, G, H, J; for D and I, CPU time per
operation per thread.

Then the 0.2 targets (TARGETS below): met / MISSED per row and allocator,
from the same files; and the scenarios' rows (--scenarios: the CSV that
build/scenarios wrote), printed as they are. summary.csv gets the columns
value, unit, target and verdict: filled on the rows that have a target, and
on one row per scenario measurement (workload S, method "scenario: metric").

Writes DIR/summary.csv (every row of every file) and, when gnuplot is
installed, DIR/workload_b.png (the J rows: each row's time over
limit_warm_huge of the same size against job size, log axes, one panel per
allocator, the same y range in every panel) and DIR/workload_b_chunks.png
(time vs chunk size from the B rows).
Standard library only.
"""
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

MFB = [1, 64, 128, 256, 512]  # the min_first_block values of the E/mfb rows
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
BASELINE = {"A": "limit_warm", "B": "limit_warm", "C": "raw_store", "D": "malloc_free",
            "E": "raw_store", "F": "writer_write_fd", "G": "fwrite_setvbuf", "H": "bw_printf",
            "I": "pools_1", "J": "limit_warm", "L": "dst_page", "R": "hand", "T": "snprintf_17g"}
# The second limit of the append workloads (same size and chunk).
HUGE = "limit_warm_huge"
# Display order of the methods (registration order of the bench).
ORDER = ["limit_warm", "limit_warm_huge", "limit_cold", "limit_mmap", "limit_fresh_huge",
         "exact_size", "realloc_double", "realloc_exact", "open_memstream", "std_string",
         "g_byte_array", "sds_style", "bufwriter", "bufwriter_steady",
         "bufwriter_fresh_pool", "bufwriter_big_pool", "bufwriter_reserved",
         "bw_chain", "bw_chain_flatten", "writer_write_fd", "chain_writev",
         "fopen_writer",
         "raw_store", "raw_store_scalar", "bw_put_u32le", "bw_put_u32le_clear", "bw_put_u32le_chain",
         "bw_put_u32le_fd", "bw_put_u32le_fixed", "bw_patch", "bw_patch_records",
         "open_memstream_unlocked", "bw_inline", "bw_inline_init"] + \
        ["mfb%d" % m for m in MFB] + ["mfb%d_fields" % m for m in MFB] + [
         "pools_1", "pools_16", "pools_10000_use16", "pools_10000",
         "malloc_free", "pool_rent_return", "fwrite_setvbuf", "bw_fd", "bw_printf",
         "bw_put_dec", "snprintf_17g", "print_check_reprint", "bw_put_dec_f64", "bw_enc_dec_f64",
         "dst_page", "dst_src_plus_16", "dst_src_plus_256", "dst_src_plus_400", "dst_src_plus_1024", "dst_src_plus_2048",
         "pool_block"]
# Fixed colours, so that a method looks the same in every plot and panel.
COLORS = {"limit_warm": "#000000", "limit_warm_huge": "#444444", "limit_cold": "#888888", "limit_mmap": "#bbbbbb",
          "exact_size": "#d62728", "realloc_double": "#1f77b4", "realloc_exact": "#17becf",
          "open_memstream": "#8c564b", "std_string": "#ff7f0e", "g_byte_array": "#e6ab02",
          "sds_style": "#66a61e", "limit_fresh_huge": "#a6761d", "bufwriter": "#9467bd",
          "bufwriter_steady": "#2ca02c", "bufwriter_fresh_pool": "#e377c2",
          "bufwriter_big_pool": "#bcbd22", "bufwriter_reserved": "#7f7f00"}
NAME_RE = re.compile(r"^(?P<wl>[A-Z])/(?P<method>[^/]+)(?P<rest>(/.*)?)$")


def parse_name(name):
    m = NAME_RE.match(name)
    if not m:
        return None
    params = {}
    for part in m.group("rest").split("/"):
        if ":" in part:
            k, v = part.split(":", 1)
            params[k] = v
    return {
        "workload": m.group("wl"),
        "method": m.group("method"),
        "size": int(params.get("size", params.get("count", params.get("set", 0))) or 0),
        "chunk": int(params.get("chunk", 0) or 0),
        "threads": int(params.get("threads", 1)),
    }


def fmt_bytes(n):
    if n is None:
        return "-"
    n = float(n)
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= div:
            v = n / div
            return ("%.0f %s" % (v, unit)) if v >= 100 else ("%.3g %s" % (v, unit))
    return "%.0f B" % n


def fmt_size(n, workload):
    if workload == "C":
        return "%dM u32" % (n >> 20) if n >= 1 << 20 else str(n)
    if workload == "H":
        return "%dM lines" % (n >> 20) if n >= 1 << 20 else str(n)
    if workload == "T":
        return ("random", "prices")[n] if n in (0, 1) else str(n)
    return fmt_bytes(n).replace(" ", "") if n else "-"


def fmt_time(ns):
    if ns is None:
        return "-"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            v = ns / div
            return "%.4g %s" % (v, unit)
    return "%.3g ns" % ns


def fmt_count(x):
    if x is None:
        return "-"
    if x == 0:
        return "0"
    if x >= 100:
        return "%.0f" % x
    return "%.3g" % x


def load(path):
    with open(path) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    label = ctx.get("allocator_label") or "glibc"
    provider = ctx.get("allocator", "?")
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") != "iteration":
            continue
        name = b.get("run_name") or b["name"]
        info = parse_name(name)
        if info is None:
            continue
        r = rows.setdefault(name, dict(info, name=name, times=[], allocs=[], bytes=[], pool=[], faults=[],
                                       bps=[], peak_rss=[], rss_growth=[],
                                       error=None,
                                       order=-1 if info["method"] == BASELINE.get(info["workload"])
                                       else ORDER.index(info["method"]) if info["method"] in ORDER
                                       else len(ORDER)))
        if b.get("error_occurred"):
            r["error"] = b.get("error_message", "error")
            continue
        unit = UNIT_NS[b.get("time_unit", "ns")]
        t = b["cpu_time"] if info["workload"] in ("D", "I") else b["real_time"]
        r["times"].append(t * unit)
        if "allocs_per_op" in b:
            r["allocs"].append(b["allocs_per_op"])
            r["bytes"].append(b["bytes_per_op"])
        if "faults_per_op" in b:
            r["faults"].append(b["faults_per_op"])
        if "pool_backing_allocs" in b:
            r["pool"].append(b["pool_backing_allocs"])
        if "bytes_per_second" in b:
            r["bps"].append(b["bytes_per_second"])
        if "peak_rss" in b:
            r["peak_rss"].append(b["peak_rss"])
        if "rss_growth" in b:
            r["rss_growth"].append(b["rss_growth"])
    for r in rows.values():
        ts = r["times"]
        r["median"] = statistics.median(ts) if ts else None
        r["min"] = min(ts) if ts else None
        r["max"] = max(ts) if ts else None
        r["reps"] = len(ts)
        r["allocs_med"] = statistics.median(r["allocs"]) if r["allocs"] else None
        r["bytes_med"] = statistics.median(r["bytes"]) if r["bytes"] else None
        r["pool_med"] = statistics.median(r["pool"]) if r["pool"] else None
        r["faults_med"] = statistics.median(r["faults"]) if r["faults"] else None
        r["bps_med"] = statistics.median(r["bps"]) if r["bps"] else None
        # Peak RSS: the highest repetition (a high-water mark), not the median.
        r["peak_rss_max"] = max(r["peak_rss"]) if r["peak_rss"] else None
        r["rss_growth_max"] = max(r["rss_growth"]) if r["rss_growth"] else None
    # Ratios against the baseline of the same workload, same file.
    for r in rows.values():
        base_method = BASELINE.get(r["workload"])
        base = None
        for o in rows.values():
            if o["workload"] != r["workload"] or o["method"] != base_method:
                continue
            if r["workload"] in ("B", "J") and (o["size"], o["chunk"]) != (r["size"], r["chunk"]):
                continue
            if r["workload"] == "D" and (o["size"], o["threads"]) != (r["size"], r["threads"]):
                continue
            if r["workload"] in ("E", "G", "I") and o["size"] != r["size"]:
                continue
            base = o
            break
        r["ratio"] = (r["median"] / base["median"]) if (base and base["median"] and r["median"]) else None
    # Ratios against the huge-page limit (A, B, J), and J's against
    # realloc doubling (a target: never slower than it).
    for r in rows.values():
        r["ratio_huge"] = r["ratio_realloc"] = None
        if r["workload"] not in ("A", "B", "J"):
            continue
        for o in rows.values():
            if o["workload"] != r["workload"] or (o["size"], o["chunk"]) != (r["size"], r["chunk"]):
                continue
            if not (o["median"] and r["median"]):
                continue
            if o["method"] == HUGE:
                r["ratio_huge"] = r["median"] / o["median"]
            elif o["method"] == "realloc_double":
                r["ratio_realloc"] = r["median"] / o["median"]
    return {
        "path": path,
        "label": label,
        "provider": provider,
        "counting": ctx.get("alloc_counting", "?"),
        "date": ctx.get("date", "?"),
        "host": ctx.get("host_name", "?"),
        "rows": sorted(rows.values(), key=lambda r: (r["workload"], r["threads"], r["chunk"] != 8192,
                                                      r["size"], r["chunk"], r["order"], r["method"])),
    }


def table(run, workload, markdown):
    rows = [r for r in run["rows"] if r["workload"] == workload]
    if not rows:
        return ""
    if workload in ("A", "B", "J"):
        rows.sort(key=lambda r: (r["chunk"] != 8192, r["size"], r["chunk"], r["order"]))
    elif workload in ("D", "E", "I"):
        rows.sort(key=lambda r: (r["threads"], r["size"], r["order"]))
    has_pool = any(r["pool_med"] is not None for r in rows)
    has_huge = any(r.get("ratio_huge") is not None for r in rows)
    head = ["Method", "Size", "Chunk", "Threads", "Median", "Min-Max", "Ratio"] + \
           (["Ratio huge"] if has_huge else []) + [
            "Bytes/op", "Allocs/op"] + (["Pool allocs/op"] if has_pool else []) + ["Faults/op"]
    if workload in ("G", "H"):
        head.append("Throughput")
    if workload == "G":
        head += ["Peak RSS", "RSS growth"]
    if workload != "D":
        head.remove("Threads")
    if workload in ("C", "E", "H", "I", "T"):
        head.remove("Chunk")
    out = []
    for r in rows:
        if r["error"] and not r["times"]:
            cells = {"Median": "ERROR: " + r["error"]}
        else:
            def fmt_ratio(x):
                return "-" if x is None else ("%.0fx" % x) if x >= 100 \
                    else ("%.2fx" % x) if x >= 0.1 else ("%.2gx" % x)
            cells = {
                "Ratio huge": fmt_ratio(r.get("ratio_huge")),
                "Median": fmt_time(r["median"]),
                "Min-Max": "%s - %s" % (fmt_time(r["min"]), fmt_time(r["max"])),
                "Ratio": "-" if r["ratio"] is None
                else ("%.0fx" % r["ratio"]) if r["ratio"] >= 100
                else ("%.2fx" % r["ratio"]) if r["ratio"] >= 0.1
                else ("%.2gx" % r["ratio"]),
                "Bytes/op": fmt_bytes(r["bytes_med"]),
                "Allocs/op": fmt_count(r["allocs_med"]),
                "Pool allocs/op": fmt_count(r["pool_med"]),
                "Faults/op": fmt_count(r["faults_med"]),
                "Throughput": (fmt_bytes(r["bps_med"]) + "/s") if r["bps_med"] is not None else "-",
                "Peak RSS": fmt_bytes(r["peak_rss_max"]),
                "RSS growth": fmt_bytes(r["rss_growth_max"]),
            }
        cells.update({
            "Method": r["method"],
            "Size": fmt_size(r["size"], workload),
            "Chunk": fmt_bytes(r["chunk"]).replace(" ", "") if r["chunk"] else "-",
            "Threads": str(r["threads"]),
        })
        out.append([cells.get(h, "") for h in head])
    widths = [max(len(h), *(len(row[i]) for row in out)) for i, h in enumerate(head)]
    right = {"Ratio huge", "Throughput", "Peak RSS", "RSS growth", "Faults/op", "Median", "Min-Max", "Ratio", "Bytes/op", "Allocs/op", "Pool allocs/op", "Size", "Chunk", "Threads"}

    def line(cells):
        parts = [(c.rjust(w) if h in right else c.ljust(w)) for c, w, h in zip(cells, widths, head)]
        return "| " + " | ".join(parts) + " |"
    lines = [line(head)]
    if markdown:
        lines.append("|" + "|".join((("-" * (w + 1)) + ":") if h in right else ("-" * (w + 2))
                                    for w, h in zip(widths, head)) + "|")
    else:
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += [line(c) for c in out]
    return "\n".join(lines)


TITLES = {
    "A": "Workload A: 10 MiB in 8 KiB chunks (baseline limit_warm; real time)",
    "B": "Workload B: sizes and chunk sizes (baseline limit_warm of the same size/chunk; real time)",
    "C": "Workload C: 1M u32 little-endian writes (baseline raw_store; real time)",
    "D": "Workload D: rent+return vs malloc+free (baseline malloc_free, same size/threads; CPU time per op per thread)",
    "E": "Workload E: small messages, u32 length + payload (baseline raw_store, same size; real time per message)",
    "F": "Workload F: 10 MiB out to /dev/null or through a FILE* (baseline writer_write_fd: a contiguous writer built, then write(); real time)",
    "G": "Workload G: streaming to /dev/null in 8 KiB writes, 64 KiB buffer (baseline fwrite_setvbuf; real time; peak RSS: the highest repetition)",
    "H": "Workload H: 1M CSV lines \"%d,%d,%d\\n\" into a contiguous writer (baseline bw_printf; real time)",
    "I": "Workload I: rent+return, one thread, pools in a shuffled order (baseline pools_1, same size; CPU time per op)",
    "R": "Workload R: 1M records of u32 + uvarint + u64 + f64 (baseline hand: the stores written out; real time)",
    "T": "Workload T: 64K doubles as text, set 0 random, 1 prices (baseline snprintf_17g; real time)",
    "J": "Workload J: the 0.3 sweep, repeated jobs of one size in 8 KiB chunks (Ratio: over limit_warm, Ratio huge: over limit_warm_huge, same size; real time)",
}

# The 0.2 targets on benchmark rows: (workload, method, sizes or None, max
# ratio, zero counters required, label). Ratios against the workload's
# baseline in the same file, as in the tables.
# J's rows (the 0.3 targets) are against the huge-page limit instead, and
# the defaults' also against realloc doubling (never slower).
J_SIZES = {256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20}
TARGETS = [
    ("A", "bufwriter", None, 1.25, True, "defaults (BW_WRITER_INIT), 10 MiB"),
    ("J", "bufwriter", J_SIZES, 1.15, True, "0.3 defaults vs huge-page limit"),
    ("J", "bw_chain", J_SIZES, 1.15, True, "0.3 segmented vs huge-page limit"),
    ("B", "bufwriter", {1 << 20, 4 << 20, 16 << 20, 64 << 20}, 1.3, False, "defaults, 1..64 MiB"),
    ("A", "bufwriter_steady", None, 1.1, False, "BW_POOL_LEARN_SIZE pool, 10 MiB"),
    ("E", "bufwriter", {16, 64, 256}, 2.0, False, "small messages, shared pool"),
    ("I", "pools_10000", None, 2.0, False, "10,000 pools vs 1"),
]


def check_targets(runs):
    """One result per (file, row) with a target: a dict that main() prints
    and write_csv() stores."""
    out = {}
    for run in runs:
        for r in run["rows"]:
            for wl, method, sizes, maxr, zero, what in TARGETS:
                if r["workload"] != wl or r["method"] != method:
                    continue
                if wl == "B" and r["chunk"] != 8192:
                    continue
                if sizes is not None and r["size"] not in sizes:
                    continue
                ratio = r["ratio_huge"] if wl == "J" else r["ratio"]
                target = ("ratio huge <= %gx" if wl == "J" else "ratio <= %gx") % maxr
                met = ratio is not None and ratio <= maxr
                notes = []
                if wl == "J":
                    notes.append("vs limit_warm %s" % ("-" if r["ratio"] is None else "%.2fx" % r["ratio"]))
                if wl == "J" and method == "bufwriter":
                    target += "; <= realloc_double"
                    rr = r["ratio_realloc"]
                    notes.append("vs realloc_double %s" % ("-" if rr is None else "%.2fx" % rr))
                    if rr is None or rr > 1.0:
                        met = False
                if zero:
                    # "0 per op after the first jobs": the median over the
                    # repetitions, each an average over its iterations
                    # (one fault in a repetition of ~300 jobs reads 0.003).
                    target += "; 0 faults, 0 backing allocs per op"
                    for key, name in (("faults_med", "faults/op"), ("pool_med", "backing allocs/op")):
                        v = r[key]
                        notes.append("%s %s" % (name, fmt_count(v)))
                        if v is None or v >= 0.005:
                            met = False
                elif r["faults_med"] is not None:
                    notes.append("faults/op %s" % fmt_count(r["faults_med"]))
                    if r["pool_med"] is not None:
                        notes.append("backing allocs/op %s" % fmt_count(r["pool_med"]))
                out[(run["path"], r["name"])] = {
                    "what": what, "value": ratio, "unit": "x", "target": target,
                    "verdict": "met" if met else "missed", "note": ", ".join(notes)}
    return out


def load_scenarios(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(runs, path, verdicts, scen, scen_path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "allocator", "provider", "workload", "method", "size", "chunk",
                    "threads", "reps", "median_ns", "min_ns", "max_ns", "ratio", "ratio_huge",
                    "bytes_per_op", "allocs_per_op", "pool_backing_allocs_per_op", "minor_faults_per_op",
                    "error", "bytes_per_second", "peak_rss_bytes", "rss_growth_bytes",
                    "value", "unit", "target", "verdict"])
        for run in runs:
            for r in run["rows"]:
                v = verdicts.get((run["path"], r["name"]))
                w.writerow([os.path.basename(run["path"]), run["label"], run["provider"],
                            r["workload"], r["method"], r["size"], r["chunk"], r["threads"],
                            r["reps"],
                            "" if r["median"] is None else "%.1f" % r["median"],
                            "" if r["min"] is None else "%.1f" % r["min"],
                            "" if r["max"] is None else "%.1f" % r["max"],
                            "" if r["ratio"] is None else "%.4f" % r["ratio"],
                            "" if r["ratio_huge"] is None else "%.4f" % r["ratio_huge"],
                            "" if r["bytes_med"] is None else "%.0f" % r["bytes_med"],
                            "" if r["allocs_med"] is None else "%.3f" % r["allocs_med"],
                            "" if r["pool_med"] is None else "%.3f" % r["pool_med"],
                            "" if r["faults_med"] is None else "%.2f" % r["faults_med"],
                            r["error"] or "",
                            "" if r["bps_med"] is None else "%.0f" % r["bps_med"],
                            "" if r["peak_rss_max"] is None else "%.0f" % r["peak_rss_max"],
                            "" if r["rss_growth_max"] is None else "%.0f" % r["rss_growth_max"]] +
                           (["" if v["value"] is None else "%.4f" % v["value"], v["unit"], v["target"],
                             v["verdict"]] if v else ["", "", "", ""]))
        # The scenarios: one row per measurement, workload S.
        for x in scen:
            w.writerow([os.path.basename(scen_path), x["allocator"], "", "S",
                        "%s: %s" % (x["scenario"], x["metric"])] + [""] * 17 +
                       [x["value"], x["unit"], x["target"], x["verdict"]])


def plot(runs, outdir, workload, xkey, fixed, png, xlabel, title):
    """One panel per run with rows of the workload; x = size (MiB) or chunk
    (bytes)."""
    panels = []
    for run in runs:
        series = {}
        for r in run["rows"]:
            if r["workload"] != workload or r["median"] is None:
                continue
            if xkey == "size" and r["chunk"] != fixed:
                continue
            if xkey == "chunk" and r["size"] != fixed:
                continue
            x = r["size"] / (1 << 20) if xkey == "size" else r["chunk"]
            series.setdefault(r["method"], []).append((x, r["median"] / 1e6))
        series = {m: sorted(p) for m, p in series.items() if len(p) >= 2}
        if series:
            panels.append((run, series))
    if not panels:
        return None
    gp = shutil.which("gnuplot")
    if gp is None:
        print("gnuplot not found: no %s (apt-get install gnuplot-nox)" % png)
        return None
    script = []
    n = len(panels)
    script.append("set terminal pngcairo size %d,560 font 'sans,10'" % (620 * n))
    script.append("set output '%s'" % os.path.join(outdir, png))
    script.append("set multiplot layout 1,%d title '%s'" % (n, title))
    script.append("set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'")
    script.append("set key top left font ',9'")
    script.append("set xlabel '%s'; set ylabel 'median time per op (ms)'" % xlabel)
    for i, (run, series) in enumerate(panels):
        blocks = []
        plots = []
        for j, (m, pts) in enumerate(sorted(series.items())):
            blocks.append("$d%d_%d << EOD\n%s\nEOD" % (i, j, "\n".join("%g %g" % p for p in pts)))
            k = ORDER.index(m) if m in ORDER else len(ORDER) + j  # same style for a method in every plot
            color = COLORS.get(m, "#777777")
            plots.append("$d%d_%d with linespoints lw 2 pt %d lc rgb '%s' title '%s'" % (i, j, (k % 13) + 1, color, m.replace("_", "\\_")))
        script.extend(blocks)
        script.append(("set title '%s (%s)'" % (run["label"], os.path.basename(run["path"]))).replace("_", "\\_"))
        script.append("plot " + ", ".join(plots))
    script.append("unset multiplot")
    gpfile = os.path.join(outdir, png.replace(".png", ".gp"))
    with open(gpfile, "w") as f:
        f.write("\n".join(script) + "\n")
    res = subprocess.run([gp, gpfile], capture_output=True, text=True)
    if res.returncode != 0:
        print("gnuplot failed: %s" % res.stderr.strip())
        return None
    return os.path.join(outdir, png)


# The sweep's plot: what a reader deciding on the library compares, each
# row as a ratio to the huge-page limit of the same size. Plain words in
# the key; rows not listed here are not drawn.
SWEEP_ROWS = [("bufwriter", "bufwriter defaults (BW_WRITER_INIT)"),
              ("bw_chain", "bufwriter segmented (bw_init_chain)"),
              ("realloc_double", "realloc doubling"),
              ("sds_style", "sds-style (x2 below 1 MiB, then +1 MiB)"),
              ("g_byte_array", "GLib GByteArray"),
              ("std_string", "std::string append"),
              ("open_memstream", "open_memstream + fwrite"),
              ("limit_warm", "memcpy into warm 4 KiB pages"),
              ("limit_fresh_huge", "memcpy into a fresh huge-page mapping")]


def plot_sweep_ratio(runs, outdir, png):
    """One panel per run (allocator) with J rows: each row's median over
    limit_warm_huge's of the same size, against job size (log x, log y).
    The script is written next to the PNG, so the plot is reproducible from
    the same JSON files."""
    panels = []
    ymin, ymax = 1.0, 1.0
    for run in runs:
        series = {}
        for r in run["rows"]:
            if r["workload"] != "J" or r["chunk"] != 8192 or r["ratio_huge"] is None:
                continue
            series.setdefault(r["method"], []).append((r["size"] / 1024.0, r["ratio_huge"]))
        series = {m: sorted(p) for m, p in series.items() if len(p) >= 2}
        if series:
            panels.append((run, series))
            for pts in series.values():
                ymin = min(ymin, min(y for _, y in pts))
                ymax = max(ymax, max(y for _, y in pts))
    if not panels:
        return None
    gp = shutil.which("gnuplot")
    if gp is None:
        print("gnuplot not found: no %s (apt-get install gnuplot-nox)" % png)
        return None
    # Every panel on the same y range, so that panels compare at a glance.
    lo = 2 ** math.floor(math.log2(ymin * 0.95))
    hi = 2 ** math.ceil(math.log2(ymax * 1.05))
    n = len(panels)
    script = [
        "set terminal pngcairo size %d,760 font 'sans,10'" % (560 * n),
        "set output '%s'" % os.path.join(outdir, png),
        "set multiplot layout 1,%d title 'Repeated jobs in 8 KiB chunks: time over the huge-page "
        "limit (1x = memcpy into warm huge pages; dotted: 1.15x), one run' font ',12'" % n,
        "set logscale xy 2",
        "set xrange [48:360000]; set yrange [%g:%g]" % (lo, hi),
        "set xtics ('64K' 64, '256K' 256, '1M' 1024, '4M' 4096, '16M' 16384, '64M' 65536, "
        "'256M' 262144)",
        "set ytics ('0.25x' 0.25, '0.5x' 0.5, '1x' 1, '1.5x' 1.5, '2x' 2, '4x' 4, '8x' 8, "
        "'16x' 16, '32x' 32, '64x' 64, '128x' 128, '256x' 256, '512x' 512, '1024x' 1024)",
        "set grid xtics ytics lc rgb '#dddddd'",
        "set key outside below maxrows 5 font ',8'",
        "set xlabel 'job size'; set ylabel 'median time / limit\\_warm\\_huge median'",
    ]
    for i, (run, series) in enumerate(panels):
        blocks, plots = [], []
        for j, (m, label) in enumerate(SWEEP_ROWS):
            if m not in series:
                continue
            blocks.append("$r%d_%d << EOD\n%s\nEOD" % (i, j, "\n".join(
                "%g %.4f" % p for p in series[m])))
            color = COLORS.get(m, "#777777")
            dash = " dt 2" if m.startswith("limit_") else ""
            plots.append("$r%d_%d with linespoints lw 2 pt %d%s lc rgb '%s' title '%s'" % (
                i, j, j + 1, dash, color, label.replace("_", "\\_")))
        script.extend(blocks)
        script.append("set title '%s'" % run["label"])
        # 1.15x: the 0.3 target line for the defaults and the segmented writer.
        script.append("plot 1 with lines lc rgb '#000000' lw 1 notitle, "
                      "1.15 with lines lc rgb '#999999' dt 3 notitle, " + ", ".join(plots))
    script.append("unset multiplot")
    gpfile = os.path.join(outdir, png.replace(".png", ".gp"))
    with open(gpfile, "w") as f:
        f.write("\n".join(script) + "\n")
    res = subprocess.run([gp, gpfile], capture_output=True, text=True)
    if res.returncode != 0:
        print("gnuplot failed: %s" % res.stderr.strip())
        return None
    return os.path.join(outdir, png)


def sweep_tables(runs):
    """The record's tables, in Markdown, from the J rows of the given runs:
    every drawn row (SWEEP_ROWS) against each allocator at each size, as
    the ratio to limit_warm_huge of the same size and run, with the page
    faults per job where there were any (>= 0.5 per job)."""
    jruns = [run for run in runs if any(r["workload"] == "J" for r in run["rows"])]
    if not jruns:
        return ""
    sizes = sorted({r["size"] for run in jruns for r in run["rows"] if r["workload"] == "J"})
    cell = {}
    for run in jruns:
        for r in run["rows"]:
            if r["workload"] == "J" and r["chunk"] == 8192:
                cell[(run["label"], r["method"], r["size"])] = r
    out = []
    for size in sizes:
        out.append("Repeated jobs of %s in 8 KiB chunks, time over limit_warm_huge "
                   "(faults per job):" % fmt_bytes(size))
        out.append("")
        out.append("| Row | " + " | ".join(run["label"] for run in jruns) + " |")
        out.append("|---|" + "---:|" * len(jruns))
        for m, label in SWEEP_ROWS:
            vals = []
            for run in jruns:
                r = cell.get((run["label"], m, size))
                if r is None or r["ratio_huge"] is None:
                    vals.append("-")
                    continue
                v = "%.2fx" % r["ratio_huge"] if r["ratio_huge"] < 100 else "%.0fx" % r["ratio_huge"]
                if r["faults_med"] is not None and r["faults_med"] >= 0.5:
                    v += " (%s)" % fmt_count(r["faults_med"])
                vals.append(v)
            if any(v != "-" for v in vals):
                out.append("| %s | %s |" % (label, " | ".join(vals)))
        out.append("")
    return "\n".join(out)


def main(argv):
    outdir = "results"
    markdown = False
    scen_path = None
    files = []
    it = iter(argv)
    for a in it:
        if a == "--out":
            outdir = next(it)
        elif a == "--scenarios":
            scen_path = next(it)
        elif a == "--markdown":
            markdown = True
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    os.makedirs(outdir, exist_ok=True)
    runs = [load(p) for p in files]
    for run in runs:
        for wl in "ABCDEFGHIRJ":
            t = table(run, wl, markdown)
            if not t:
                continue
            hdr = "%s -- allocator: %s (malloc from %s; counting: %s) -- %s" % (
                TITLES[wl], run["label"], run["provider"], run["counting"], os.path.basename(run["path"]))
            print(("### " if markdown else "") + hdr)
            print()
            print(t)
            print()
    verdicts = check_targets(runs)
    scen = load_scenarios(scen_path)
    print(("### " if markdown else "") + "Targets (0.2 defaults; J: 0.3): benchmark rows, ratio to the baseline of the same file")
    print()
    nmet = nmiss = 0
    for run in runs:
        for r in run["rows"]:
            v = verdicts.get((run["path"], r["name"]))
            if not v:
                continue
            nmet += v["verdict"] == "met"
            nmiss += v["verdict"] != "met"
            print("  %-8s %-18s %-8s %-34s %8s  %-44s %s%s" % (
                run["label"], r["workload"] + "/" + r["method"], fmt_size(r["size"], r["workload"]),
                v["what"], "-" if v["value"] is None else "%.2fx" % v["value"], v["target"],
                "met" if v["verdict"] == "met" else "MISSED", ("  (" + v["note"] + ")") if v["note"] else ""))
    if scen:
        print()
        print(("### " if markdown else "") + "Scenarios (%s): build/scenarios, verdict rows" % scen_path)
        print()
        for x in scen:
            if x["verdict"] == "info":
                continue
            nmet += x["verdict"] == "met"
            nmiss += x["verdict"] != "met"
            print("  %-8s %-6s %-42s %10s %-4s %-20s %s%s" % (
                x["allocator"], x["scenario"], x["metric"], x["value"], x["unit"], x["target"],
                "met" if x["verdict"] == "met" else "MISSED", ("  (" + x["note"] + ")") if x["note"] else ""))
    print()
    print("targets: %d met, %d missed" % (nmet, nmiss))
    print()
    t = sweep_tables(runs)
    if t:
        print(("### " if markdown else "") +
              "The sweep (J), for the record: ratio to the huge-page limit")
        print()
        print(t)
    print()
    write_csv(runs, os.path.join(outdir, "summary.csv"), verdicts, scen, scen_path)
    print("wrote %s" % os.path.join(outdir, "summary.csv"))
    # The J sweep (the peers and both limits under every allocator, 64 KiB
    # .. 256 MiB) as ratios to the huge-page limit; the name stays
    # workload_b.png, which the README and BENCHMARKS.md link.
    p = plot_sweep_ratio(runs, outdir, "workload_b.png")
    if p:
        print("wrote %s" % p)
    p = plot(runs, outdir, "B", "chunk", 10 << 20, "workload_b_chunks.png",
             "chunk size (bytes), 10 MiB total", "Workload B: time vs chunk size (log-log), 10 MiB")
    if p:
        print("wrote %s" % p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
