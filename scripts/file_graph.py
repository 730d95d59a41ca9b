#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""file_graph.py - which of the library's files depend on which, and where
they go round in a circle.

    python3 scripts/file_graph.py build/*.o build/pool/*.o build/platform/*.o
    python3 scripts/file_graph.py --includes *.c *.h pool/*.[ch] platform/*.[ch]

With object files (after make): A -> B when A.o uses a symbol B.o defines
(nm), a call or a table's address. With sources (--includes): A -> B when A
has #include "B". Prints every edge with the symbols behind it, then each
group of files that reach one another (a cycle), so that a change that
makes one shows. A report, not a test: it always exits 0.
"""
import os
import re
import subprocess
import sys


def symbol_edges(objs):
    defs, undefs = {}, {}
    for o in objs:
        out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
        d, u = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == 'U':
                u.add(parts[1])
            elif len(parts) == 3 and parts[1] in 'TDBRCVW':
                d.add(parts[2])
        defs[o], undefs[o] = d, u
    edges = {}
    for a in objs:
        for b in objs:
            syms = sorted(undefs[a] & defs[b]) if a != b else []
            if syms:
                edges.setdefault(a, {})[b] = syms
    return edges


def include_edges(files):
    edges = {}
    for f in files:
        for line in open(f, encoding='utf-8'):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            b = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            if not os.path.exists(b):
                b = os.path.normpath(m.group(1))
            edges.setdefault(f, {})[b] = [m.group(1)]
    return edges


def cycles(nodes, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main(argv):
    includes = '--includes' in argv
    files = [a for a in argv if a != '--includes']
    edges = include_edges(files) if includes else symbol_edges(files)
    name = (lambda f: f) if includes else \
        (lambda f: re.sub(r'^build/', '', f).replace('.o', '.c'))
    for a in sorted(edges):
        for b, syms in sorted(edges[a].items()):
            more = ' ...' if len(syms) > 6 else ''
            print(f"{name(a)} -> {name(b)}: {' '.join(syms[:6])}{more}")
    found = cycles(files + [b for a in edges for b in edges[a]], edges)
    print(f"cycles: {len(found)}")
    for group in found:
        print('  among: ' + ' '.join(name(f) for f in group))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
