#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Only tools/commands/ ends pcprof (issue 37, docs/CODING.md): below it,
an error is a value the caller passes up. Counts the calls that end the
process (pc_fatal, pc_oom, exit, _exit, _Exit, abort) in each C file of
tools/ outside commands/, and compares them with an allowlist of the
calls left from before the rule (scripts/fatal.allow: "COUNT FILE" a
line). A file with more calls than its line allows fails; so does a
line that allows more than the file has, so the list only shrinks.

    scripts/fatal.py [--root DIR] [--allow FILE] [--count]
"""
import argparse
import glob
import os
import re
import sys

CALL = re.compile(r"(?<![\w.>])(pc_fatal|pc_oom|exit|_exit|_Exit|abort)\s*\(")


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def strip(src):
    src = re.sub(r"/\*.*?\*/", blank, src, flags=re.S)
    src = re.sub(r"//[^\n]*", blank, src)
    src = re.sub(r"'(\\.|[^'\\\n])'", blank, src)
    return re.sub(r'"(\\.|[^"\\\n])*"', blank, src)


def count(root):
    n = {}
    for f in sorted(glob.glob(os.path.join(root, "tools", "*", "*.c"))):
        rel = os.path.relpath(f, root)
        if rel.startswith("tools/commands/"):
            continue
        k = 0
        for line in strip(open(f, errors="replace").read()).split("\n"):
            # a definition starts its line (the return type is on the
            # line above); a call never does
            k += sum(1 for m in CALL.finditer(line) if m.start() > 0)
        if k:
            n[rel] = k
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--allow", default="scripts/fatal.allow")
    ap.add_argument("--count", action="store_true",
                    help="print the counts in the allowlist's form")
    a = ap.parse_args()
    n = count(a.root)
    if a.count:
        for f in sorted(n):
            print("%d %s" % (n[f], f))
        print("# %d in all" % sum(n.values()))
        return 0
    allow = {}
    for line in open(a.allow):
        line = line.strip()
        if line and not line.startswith("#"):
            k, f = line.split(None, 1)
            allow[f] = int(k)
    bad = 0
    for f in sorted(set(n) | set(allow)):
        have, may = n.get(f, 0), allow.get(f, 0)
        if have > may:
            print("lint: %s ends pcprof in %d places, %d allowed (%s): return "
                  "the error to the command (pc_error, docs/CODING.md)"
                  % (f, have, may, a.allow))
            bad = 1
        elif have < may:
            print("lint: %s ends pcprof in %d places now: lower its line in %s to %d"
                  % (f, have, a.allow, have))
            bad = 1
    if not bad:
        print("lint: %d calls that end pcprof below tools/commands/, in %d files, "
              "as %s allows" % (sum(n.values()), len(n), a.allow))
    return bad


if __name__ == "__main__":
    sys.exit(main())
