#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make lint's column rule (docs/CODING.md, Formatting): a line of C is
at most 80 columns (tabs at 8), but for a line whose overflow is inside
one string literal (a message kept whole so that grep finds it). Files
written before the rule keep at most the count scripts/columns.allow
gives them, and a file that has fewer is told to lower it; a new file
has none.

Usage: scripts/columns.py [--write] DIR...   (--write: the allowance
file from the tree as it is, for a change that shortens lines)."""

import os
import re
import sys

ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "columns.allow")
WIDTH = 80
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def over(line):
    """Whether line passes WIDTH other than inside a string literal."""
    text = line.rstrip("\n").expandtabs(8)
    if len(text) <= WIDTH:
        return False
    # a string that reaches past the width, begun within it: allowed
    for m in STRING.finditer(text):
        if m.start() < WIDTH < m.end() and len(text) - m.end() <= 3:
            return False
    return True


def counts(dirs):
    out = {}
    for d in dirs:
        if os.path.isfile(d):
            with open(d, errors="replace") as fh:
                out[d] = sum(over(ln) for ln in fh)
            continue
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    p = os.path.join(root, f)
                    with open(p, errors="replace") as fh:
                        n = sum(over(ln) for ln in fh)
                    out[p] = n
    return out


def main(argv):
    write = "--write" in argv
    dirs = [a for a in argv if a != "--write"]
    got = counts(dirs)
    if write:
        with open(ALLOW, "w") as f:
            f.write("# SPDX-License-Identifier: BSD-2-Clause\n"
                    "# Lines over 80 columns that a file written before the rule keeps at\n"
                    "# most (make lint; scripts/columns.py --write, after a change that\n"
                    "# shortens them): the list only shrinks.\n")
            for p, n in sorted(got.items()):
                if n:
                    f.write("%d %s\n" % (n, p))
        return 0
    allow = {}
    with open(ALLOW) as f:
        for ln in f:
            if ln.strip() and not ln.startswith("#"):
                n, p = ln.split(None, 1)
                allow[p.strip()] = int(n)
    bad = 0
    for p, n in sorted(got.items()):
        a = allow.get(p, 0)
        if n > a:
            print("lint: %s: %d lines over %d columns, at most %d (docs/CODING.md)" %
                  (p, n, WIDTH, a))
            bad = 1
        elif n < a:
            print("lint: %s: %d lines over %d columns, under its allowance %d: "
                  "lower it (scripts/columns.py --write)" % (p, n, WIDTH, a))
            bad = 1
    total = sum(got.values())
    lines = 0
    for p in got:
        with open(p, errors="replace") as fh:
            lines += sum(1 for _ in fh)
    print("lint: columns: %d lines of %d over %d columns (%.1f %%), none new" %
          (total, lines, WIDTH, 100.0 * total / max(lines, 1)))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
