#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""amalgamate.py - build the single-header bufwriter (stb style).

    scripts/amalgamate.py [-o OUT] [--check] [--public H] [--prelude H]
                          [--internal H...] [--sources C...] [--license FILE]

Reads the public header, the internal headers and the library sources as
they are right now and writes ONE header:

    banner (generated - do not edit, version, licence, how to use, options)
    #if defined(BUFWRITER_IMPLEMENTATION) && !defined(BW__IMPLEMENTATION_DONE)
      the prelude                          (feature-test macros: they must
    #endif                                  come before the first libc header)
    the public header, verbatim            (always; its own include guard)
    #if defined(BUFWRITER_IMPLEMENTATION) && !defined(BW__IMPLEMENTATION_DONE)
      internal headers, then the sources   (once per translation unit)
    #endif
    the licence text

Every file is wrapped in "Begin file" / "End file" markers. Project-local
#include "..." lines are replaced by a one-line note (the file is already
amalgamated above); system #include <...> lines stay where they are, inside
whatever #if surrounds them. Private functions are made static by defining
BW__INTERNAL as `static` before the internals, and private thread-local or
global data declared `extern` in an internal header is made static too, so a
program that uses the single header gets only the public bw_ symbols.

The output depends only on the file contents and the set of files (headers
are ordered by their local includes, sources by path), never on the time,
the machine or the order of the arguments. --check compares the result with
OUT and exits 1 (with a diff) when they differ; nothing is written then.

Python 3 standard library only.
"""

import argparse
import difflib
import glob
import os
import re
import sys

LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
VERSION_STRING = re.compile(r'^#define BW_VERSION_STRING "([^"]+)"', re.M)
VERSION_PART = r'^#define BW_VERSION_%s (\d+)'
# `extern <decl> bw__name <attrs>;` in an internal header: private data.
EXTERN_DATA = re.compile(r'^extern\s+([^;(]*\b(bw__\w+)\b[^;(]*);\s*$')
WIDTH = 78


def die(msg):
    sys.stderr.write("amalgamate.py: %s\n" % msg)
    sys.exit(2)


SPDX = "/* SPDX-License-Identifier: MIT */"


def read(path):
    try:
        with open(path, "r", encoding="utf-8", newline=None) as f:
            text = f.read()
    except OSError as e:
        die("cannot read %s: %s" % (path, e.strerror))
    if not text.endswith("\n"):
        text += "\n"
    # Each file's own licence line: the output has one, at its top.
    if text.startswith(SPDX + "\n"):
        text = text[len(SPDX) + 1:]
    return text


def norm(path):
    return os.path.normpath(path).replace(os.sep, "/")


def local_includes(path, text):
    """The project files that `path` includes with #include "...", as
    normalised paths relative to the repository root."""
    out = []
    for line in text.splitlines():
        m = LOCAL_INCLUDE.match(line)
        if m:
            out.append(norm(os.path.join(os.path.dirname(path), m.group(1))))
    return out


def order_headers(headers, texts, public):
    """Internal headers, each after the internal headers it includes; ties
    broken by path, so the order never depends on the command line."""
    pending = sorted(set(headers))
    done, out = {public}, []
    while pending:
        for h in pending:
            deps = [d for d in local_includes(h, texts[h]) if d in texts]
            if all(d in done for d in deps):
                out.append(h)
                done.add(h)
                pending.remove(h)
                break
        else:
            die("include cycle among: %s" % ", ".join(pending))
    return out


def marker(kind, path):
    head = "/*%s %s file %s " % ("*" * 14, kind, path)
    return head + "*" * max(3, WIDTH - len(head) - 2) + "*/"


def emit_file(path, text, known, extern_data, made_static):
    """The body of one file with local includes replaced by a note, and the
    definitions of private extern data made static."""
    out = []
    for line in text.splitlines():
        m = LOCAL_INCLUDE.match(line)
        if m:
            target = norm(os.path.join(os.path.dirname(path), m.group(1)))
            if target not in known:
                die('%s includes "%s", which is not amalgamated (pass it with '
                    '--internal)' % (path, m.group(1)))
            out.append('/* #include "%s": amalgamated above */' % m.group(1))
            continue
        m = EXTERN_DATA.match(line)
        if m and m.group(2) in extern_data:
            out.append("static " + m.group(1) + ";")
            continue
        stripped = line.rstrip()
        for name in extern_data:
            # A file-scope definition of that data: no storage class yet
            # (on one line, or opening a braced initializer: a mode table).
            if ((stripped.endswith(";") or stripped.endswith("= {"))
                    and not line[:1].isspace()
                    and re.search(r"\b%s\b" % name, line)
                    and not re.match(r"\s*(static|extern|typedef)\b", line)
                    and "(" not in line.split(name)[0]):
                line = "static " + line
                made_static.add(name)
                break
        out.append(line)
    return "\n".join(out) + "\n"


def version_of(public_text, public):
    m = VERSION_STRING.search(public_text)
    if not m:
        die("no BW_VERSION_STRING in %s" % public)
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        pm = re.search(VERSION_PART % part, public_text, re.M)
        if not pm:
            die("no BW_VERSION_%s in %s" % (part, public))
        parts.append(pm.group(1))
    if ".".join(parts) != m.group(1):
        die("BW_VERSION_STRING %s disagrees with MAJOR/MINOR/PATCH %s"
            % (m.group(1), ".".join(parts)))
    return m.group(1)


BANNER = """\
/* SPDX-License-Identifier: MIT */
/* bufwriter.h - single-header build of bufwriter {version}
 *
 * GENERATED FILE - DO NOT EDIT. scripts/amalgamate.py made it from
{sources}
 * Change those files and run `make single`; CI fails when this copy differs
 * from a fresh generation (`make check-single`).
 *
 * bufwriter: a growable, pooled buffer writer for C. Licence: MIT, the text
 * is at the end of this file. Version {version} (BW_VERSION_STRING).
 *
 * HOW TO USE IT
 *   Copy this one file into your project. Include it wherever you use it:
 *
 *       #include "bufwriter.h"
 *
 *   and in exactly ONE C file define the implementation first:
 *
 *       #define BUFWRITER_IMPLEMENTATION
 *       #include "bufwriter.h"
 *
 *   Compile that file as C11 (or later) and link with -pthread:
 *       cc -std=c11 -O2 app.c other.c -pthread
 *   The declarations compile as C and as C++ (extern "C"); the
 *   implementation is C11 only (it uses <stdatomic.h> and _Thread_local),
 *   so define BUFWRITER_IMPLEMENTATION in a .c file, not a .cpp file.
 *   Below C11 the implementation stops with an #error that says so.
 *   Including the header again is harmless: the declarations have their
 *   include guard and the implementation is emitted once per file.
 *
 * WARNINGS
 *   The implementation compiles without a warning under gcc -Wall -Wextra
 *   -Wnull-dereference, and under clang -Weverything with two kinds left
 *   (clang 14): -Wpadded (structs laid out for their fast paths and cache
 *   lines, not to the byte) and -Wformat-nonliteral (bw_printf formats the
 *   caller's format string: vsnprintf of a parameter, checked at the
 *   caller by the format attribute). A file that only includes the header
 *   gets -Wpadded on bw_writer and bw_pool_options alone.
 *   Functions private to the library are static here: a program gets only
 *   the public bw_ symbols.
 *
 * OPTIONS (define them before the #include, or with -D on the command line;
 * "library only" means the BUFWRITER_IMPLEMENTATION file here). Copied from
 * the header's COMPILE-TIME OPTIONS section:
{options}
 */
"""

IMPL_OPEN = """\
/* ======================================================================== */
/* Implementation: only where BUFWRITER_IMPLEMENTATION is defined, and only */
/* once per translation unit.                                               */
/* ======================================================================== */
#if defined(BUFWRITER_IMPLEMENTATION) && !defined(BW__IMPLEMENTATION_DONE)
#define BW__IMPLEMENTATION_DONE

#ifdef __cplusplus
#  error "bufwriter: define BUFWRITER_IMPLEMENTATION in a C11 file, not in C++ (the implementation uses <stdatomic.h> and _Thread_local); C++ files include the header without it"
#endif
#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#  error "bufwriter: the implementation (BUFWRITER_IMPLEMENTATION) needs C11 (<stdatomic.h>, _Thread_local): compile this file with -std=c11 or later; other files may include the header as C89 or C99"
#endif

/* Private functions are static in the single header (as SQLite's
 * amalgamation does), so they stay out of the program's symbol table.
 * Some are called only in some configurations (BW_DEBUG): -Wunused-function
 * is off for the implementation, rather than each marked unused (which
 * clang's -Wused-but-marked-unused reports wherever one is called). */
#ifndef BW__INTERNAL
#  define BW__INTERNAL static
#endif
#if defined(__GNUC__) || defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wunused-function"
#endif

"""

IMPL_CLOSE = """\
#if defined(__GNUC__) || defined(__clang__)
#  pragma GCC diagnostic pop
#endif
#endif /* BUFWRITER_IMPLEMENTATION && !BW__IMPLEMENTATION_DONE */
"""

PRELUDE_OPEN = """\
/* The implementation's feature-test macros, before the declarations' own
 * #include lines: only where BUFWRITER_IMPLEMENTATION is defined. */
#if defined(BUFWRITER_IMPLEMENTATION) && !defined(BW__IMPLEMENTATION_DONE)
"""

PRELUDE_CLOSE = """\
#endif /* BUFWRITER_IMPLEMENTATION && !BW__IMPLEMENTATION_DONE */
"""


OPTIONS_TITLE = re.compile(r'^ \* \d+\. COMPILE-TIME OPTIONS$', re.M)


def options_of(public_text, public):
    """The public header's COMPILE-TIME OPTIONS section, up to the end of
    its comment, without the title: the banner's options list."""
    m = OPTIONS_TITLE.search(public_text)
    if not m:
        die("no COMPILE-TIME OPTIONS section in %s" % public)
    end = public_text.find("\n */", m.end())
    if end < 0:
        die("COMPILE-TIME OPTIONS section of %s has no end" % public)
    return public_text[m.end() + 1:end]


def licence_block(text):
    lines = [l.rstrip() for l in text.rstrip("\n").split("\n")]
    body = "\n".join((" * " + l) if l else " *" for l in lines)
    return ("\n/*\n * " + "-" * (WIDTH - 4) + "\n * LICENCE\n *\n"
            + body.replace("*/", "* /") + "\n */\n")


def amalgamate(public, internal, sources, license_path, prelude=None):
    texts = {}
    for p in [public] + internal + sources + ([prelude] if prelude else []):
        texts[p] = read(p)
    public_text = texts[public]
    version = version_of(public_text, public)
    known = set(texts)

    internal = order_headers(internal, texts, public)
    sources = sorted(set(sources), key=lambda p: (p.count("/"), p))

    # Private data declared extern in an internal header: static here.
    extern_data = []
    for h in internal:
        for line in texts[h].splitlines():
            m = EXTERN_DATA.match(line)
            if m:
                extern_data.append(m.group(2))

    listed = ([prelude] if prelude else []) + [public] + internal + sources
    src_lines, line = [], " *  "
    for i, p in enumerate(listed):
        item = " " + p + ("," if i + 1 < len(listed) else ".")
        if len(line) + len(item) > WIDTH - 2:
            src_lines.append(line)
            line = " *  "
        line += item
    src_lines.append(line)

    out = [BANNER.format(version=version, sources="\n".join(src_lines),
                         options=options_of(public_text, public))]
    if prelude:
        out.append("\n" + PRELUDE_OPEN + marker("Begin", prelude) + "\n")
        out.append(emit_file(prelude, texts[prelude], known, [], set()))
        out.append(marker("End", prelude) + "\n" + PRELUDE_CLOSE)
    out.append("\n" + marker("Begin", public) + "\n")
    out.append(emit_file(public, public_text, known, [], set()))
    out.append(marker("End", public) + "\n\n")
    out.append(IMPL_OPEN)
    made_static = set()
    for p in internal + sources:
        out.append(marker("Begin", p) + "\n")
        out.append(emit_file(p, texts[p], known, extern_data, made_static))
        out.append(marker("End", p) + "\n\n")
    out.append(IMPL_CLOSE)
    missing = [n for n in extern_data if n not in made_static]
    if missing:
        die("no file-scope definition found for extern %s" % ", ".join(missing))
    if license_path:
        out.append(licence_block(read(license_path)))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default="single_include/bufwriter.h")
    ap.add_argument("--check", action="store_true",
                    help="compare with OUTPUT instead of writing it")
    ap.add_argument("--public", default="bufwriter.h")
    ap.add_argument("--prelude", default="platform/prelude.h",
                    help="emitted before the public header in the implementation"
                         " file (empty: none)")
    ap.add_argument("--internal", nargs="*", default=None,
                    help="internal headers (default: pool/*.h)")
    ap.add_argument("--sources", nargs="*", default=None,
                    help="library sources (default: *.c pool/*.c)")
    ap.add_argument("--license", default="LICENSE")
    a = ap.parse_args()

    public = norm(a.public)
    prelude = norm(a.prelude) if a.prelude else None
    internal = [norm(p) for p in (a.internal if a.internal is not None
                                  else sorted(glob.glob("*.h") + glob.glob("pool/*.h")
                                              + glob.glob("platform/*.h")))]
    internal = [p for p in internal if p not in (public, prelude)]
    sources = [norm(p) for p in (a.sources if a.sources is not None
                                 else sorted(glob.glob("*.c") + glob.glob("pool/*.c")
                                             + glob.glob("platform/*.c")))]
    text = amalgamate(public, internal, sources, a.license, prelude)

    try:
        with open(a.output, "r", encoding="utf-8", newline="") as f:
            old = f.read()
    except OSError:
        old = None

    if a.check:
        if old == text:
            print("%s is up to date" % a.output)
            return 0
        sys.stderr.write("%s differs from a fresh generation; run `make single`"
                         " and commit it\n" % a.output)
        if old is not None:
            diff = difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                        a.output, "(fresh generation)")
            sys.stderr.writelines(list(diff)[:200])
        return 1

    if old != text:  # leave the file (and its mtime) alone when unchanged
        d = os.path.dirname(a.output)
        if d:
            os.makedirs(d, exist_ok=True)
        tmp = a.output + ".tmp"
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, a.output)
        print("wrote %s (bufwriter %s, %d lines)" % (a.output, version_of(text, a.output),
                                                       text.count("\n")))
    else:
        print("%s unchanged" % a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
