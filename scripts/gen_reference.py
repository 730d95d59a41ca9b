#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen_reference.py - the API reference, docs/reference.md, from bufwriter.h.

    scripts/gen_reference.py [-o OUT] [--check] [HEADER]

bufwriter.h is the manual: every public function, type and macro has its
contract in the comment just above it. This script turns the header into one
Markdown page without adding any words of its own, so the page cannot say
something the header does not:

    the header's opening comment (using it, threads, invalidation, options)
    an index of every public name, each linking to its entry
    per numbered section of the header: the section's introduction, then
    each entry: the names it declares, the declarations, the comment

An entry is a comment followed directly (no blank line) by declarations.
Section 11 (implementation details) is left out except the public macros it
defines (BW_WRITER_INIT). Lines of a comment indented by two spaces or more
(examples, tables) are kept as preformatted blocks; the rest is prose.

It fails (exit 1) when a public function or macro of the header is missing
from the page, so a declaration the parser does not understand cannot drop
out silently. --check compares the result with OUT and exits 1 with a diff
when they differ (`make check-reference`, run by `make test`).

Python 3 standard library only.
"""

import argparse
import difflib
import re
import sys

SECTION = re.compile(r"^/\* (\d+)\. (.*?)\s*\*/$")
RULE = re.compile(r"^/\* =+ \*/$")
FUNC = re.compile(r"\b((?:bw|BW)_[A-Za-z0-9_]*)\s*\(")
FNPTR = re.compile(r"\(\*\s*(bw_[A-Za-z0-9_]+)\)")
MACRO = re.compile(r"^#\s*define\s+(BW_[A-Za-z0-9_]+)")
TYPEDEF = re.compile(r"^typedef\b.*?\b(bw_[A-Za-z0-9_]+)\s*;")
STRUCT_END = re.compile(r"^}\s*(bw_[A-Za-z0-9_]+)\s*;")


def public(name):
    return not name.startswith(("bw__", "BW__")) and name not in ("BW_API",)


def names_of(decl):
    """The public names one block of declaration lines declares, in order."""
    out = []
    for line in decl:
        found = []
        s = line.strip()
        m = MACRO.match(s)
        if m:
            found.append(m.group(1))
        elif s.startswith("typedef"):
            m = FNPTR.search(s) or TYPEDEF.match(s)
            if m:
                found.append(m.group(1))
        elif s.startswith(("BW_API", "BW__INLINE")):
            m = FUNC.search(s.split("(", 1)[0] + "(")
            if m:
                found.append(m.group(1))
        m = STRUCT_END.match(s)
        if m:
            found.append(m.group(1))
        for n in found:
            if public(n) and n not in out:
                out.append(n)
    return out


def uncomment(lines):
    """The text of a /* ... */ comment, one string per line."""
    text = "\n".join(lines)
    text = re.sub(r"^\s*/\*+ ?", "", text)
    text = re.sub(r"\s*\*+/\s*$", "", text)
    out = []
    for line in text.split("\n"):
        line = re.sub(r"^\s*\* ?", "", line) if line.lstrip().startswith("*") else line
        out.append(line.rstrip())
    return out


def markdown(lines):
    """Comment text as Markdown: prose joined, indented runs preformatted."""
    out, block, para = [], [], []

    def flush_para():
        if para:
            out.append(" ".join(para))
            out.append("")
            para.clear()

    def flush_block():
        if block:
            while block and not block[-1].strip():
                block.pop()
            out.append("```")
            out.extend(block)
            out.append("```")
            out.append("")
            block.clear()

    for line in lines:
        if line.startswith("  ") and line.strip():
            flush_para()
            block.append(line)
        elif not line.strip():
            if block:
                block.append("")
            else:
                flush_para()
        else:
            flush_block()
            para.append(line.strip().replace("<", "&lt;"))
    flush_para()
    flush_block()
    return out


def declaration(lines, i):
    """The declaration lines from i: up to a blank line or a comment that
    starts a line, except inside braces (a struct's commented fields)."""
    decl, depth = [], 0
    while i < len(lines) and lines[i].strip() and \
            (depth > 0 or not lines[i].lstrip().startswith("/*")):
        code = re.sub(r"/\*.*?(\*/|$)", "", lines[i])
        depth += code.count("{") - code.count("}")
        decl.append(lines[i])
        i += 1
    return decl, i


def parse(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    # The opening comment (after the licence line): up to its closing */.
    while not lines[i].lstrip().startswith("/*") or "SPDX-License-Identifier" in lines[i]:
        i += 1
    start = i
    while "*/" not in lines[i]:
        i += 1
    overview = uncomment(lines[start:i + 1])
    i += 1
    sections = [("", "Before the sections", [])]
    entries = sections[0][2]
    n = len(lines)
    while i < n:
        line = lines[i]
        m = SECTION.match(line.strip())
        if m and i > 0 and RULE.match(lines[i - 1].strip()):
            sections.append((m.group(1), m.group(2), []))
            entries = sections[-1][2]
            i += 2 if i + 1 < n and RULE.match(lines[i + 1].strip()) else 1
            continue
        if RULE.match(line.strip()):
            i += 1
            continue
        if line.lstrip().startswith("/*") and not line.rstrip().endswith("*/") or \
                (line.lstrip().startswith("/*") and line.rstrip().endswith("*/")):
            c0 = i
            while "*/" not in lines[i]:
                i += 1
            comment = uncomment(lines[c0:i + 1])
            i += 1
            decl, i = declaration(lines, i)
            entries.append((comment, decl))
            continue
        if line.strip():
            decl, i = declaration(lines, i)
            entries.append((None, decl))
            continue
        i += 1
    return overview, sections


def render(header, version):
    overview, sections = parse(header)
    out = ["<!-- SPDX-License-Identifier: MIT -->",
           "<!-- GENERATED by scripts/gen_reference.py from bufwriter.h: do not edit;",
           "     `make reference` regenerates it, `make check-reference` (make test) fails",
           "     when it differs from a fresh generation. -->",
           "# bufwriter %s API reference" % version, "",
           "Generated from the comments of `bufwriter.h`, which is the manual: "
           "every entry below is the declaration and the contract comment written "
           "above it there.", ""]
    body, index = [], []
    for num, title, entries in sections:
        if num == "11":
            # private, except the public macros it defines
            entries = [(c, d) for c, d in entries
                       if any(public(x) for x in names_of(d) if x.startswith("BW_"))]
            entries = [(c, [l for l in d if not MACRO.match(l.strip())
                            or public(MACRO.match(l.strip()).group(1))]) for c, d in entries]
        kept = []
        for comment, decl in entries:
            names = names_of(decl)
            if not names and comment is not None and not decl:
                kept.append((comment, [], []))  # the section's introduction
            elif names:
                kept.append((comment, names, decl))
        if not kept:
            continue
        anchor = "s%s" % (num or "0")
        heading = "%s. %s" % (num, title) if num else title
        body += ['<a id="%s"></a>' % anchor, "## " + heading, ""]
        for comment, names, decl in kept:
            if not names:
                body += markdown(comment)
                continue
            body += ['<a id="%s"></a>' % names[0]]
            body += ["### " + ", ".join("`%s`" % x for x in names), ""]
            body += ["```c"] + decl + ["```", ""]
            if comment:
                body += markdown(comment)
            for x in names:
                index.append((x, names[0], heading))
    out += ["## Contents", ""]
    out += ["- [Overview](#overview)"]
    for num, title, entries in sections:
        anchor = "s%s" % (num or "0")
        if any('<a id="%s"></a>' % anchor == b for b in body):
            out.append("- [%s](#%s)" % ("%s. %s" % (num, title) if num else title, anchor))
    out += ["- [Index](#index)", ""]
    out += ['<a id="overview"></a>', "## Overview", "", "```"] + \
        [l for l in overview] + ["```", ""]
    out += body
    out += ['<a id="index"></a>', "## Index", ""]
    for name, anchor, heading in sorted(index, key=lambda t: t[0].lower()):
        out.append("- [`%s`](#%s) (%s)" % (name, anchor, heading))
    out.append("")
    return "\n".join(out), {x for x, _, _ in index}


def declared(header):
    """Every public function and macro the header declares (the check)."""
    text = open(header, encoding="utf-8").read()
    text = text.split("/* 11. Implementation details", 1)
    names = set(re.findall(r"^(?:BW_API|BW__INLINE)[^(;]*?\b(bw_[a-z0-9_]+)\s*\(",
                           text[0], re.M))
    names |= {n for n in re.findall(r"^#\s*define\s+(BW_[A-Z0-9_]+)", text[0], re.M)
              if public(n) and n not in ("BW_API",)}
    if len(text) > 1:
        names |= {n for n in re.findall(r"^#\s*define\s+(BW_[A-Z0-9_]+)", text[1], re.M)
                  if public(n)}
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("header", nargs="?", default="bufwriter.h")
    ap.add_argument("-o", "--output", default="docs/reference.md")
    ap.add_argument("--check", action="store_true",
                    help="compare with OUTPUT instead of writing it")
    a = ap.parse_args()
    text = open(a.header, encoding="utf-8").read()
    m = re.search(r'^#define BW_VERSION_STRING "([^"]+)"', text, re.M)
    if not m:
        sys.exit("gen_reference.py: no BW_VERSION_STRING in %s" % a.header)
    page, listed = render(a.header, m.group(1))
    missing = sorted(declared(a.header) - listed)
    if missing:
        sys.exit("gen_reference.py: not in the reference (unparsed declarations?): "
                 + ", ".join(missing))
    if a.check:
        try:
            old = open(a.output, encoding="utf-8").read()
        except OSError:
            old = ""
        if old != page:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), page.splitlines(True), a.output, "fresh"))
            sys.exit("%s is stale: run `make reference` and commit it" % a.output)
        return
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(page)
    print("wrote %s (bufwriter %s, %d names)" % (a.output, m.group(1), len(listed)))


if __name__ == "__main__":
    main()
