#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""How many times pcprof report's walk of its operands enters each source
file of tools/: a call from a function of one file into a function of
another, from cmd_report's start to the first report's start (the first
call that reads a profile's samples or an executable's symbols: one of
STOP). Issue 37's goal: no file entered more than twice. tools/base/
(memory, messages, the output file: the floor every folder calls) is
shown apart, in brackets, and not held to that goal.

It builds pcprof once more, in BUILD/argvwalk, with -O0
-finstrument-functions and the tracer scripts/argv_walk_trace.c, which
writes each function's entry and exit; function addresses are told to
files by nm -l. It records a run of the test program forker with BUILD's
pcprof and libpc.so (make check's programs), then traces each case of
CASES and prints one line per case: the files entered, most first.

    make && make build/tests/progs/forker && python3 scripts/argv_walk.py
    python3 scripts/argv_walk.py --max 2     # exit 1 where a file is over 2
    python3 scripts/argv_walk.py --data      # on to the first data read
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the first report's start: what reads samples or symbols, or a report
# of the run that reads the operands resolved (tools/inputs/operands.h)
STOP = ["symbols_load_whole", "symtab_load", "profiles_load_at",
        "profiles_load", "runview_report_resolved", "runview_json_resolved"]

CASES = [
    ("report DIR", ["r"]),
    ("report --process NAME DIR", ["--process", "forker", "r"]),
    ("report PROFILE PROFILE", ["r/gmon.out", "r/CHILD"]),
    ("report --format json --callgraph DIR",
     ["--format", "json", "--callgraph", "r"]),
    ("report --format json --process NAME DIR",
     ["--format", "json", "--process", "forker", "r"]),
    ("report EXE gmon.out", ["./forker", "r/gmon.out"]),
]


def build(b):
    """The traced pcprof in b/argvwalk, made (or brought up to date)."""
    out = os.path.join(b, "argvwalk")
    os.makedirs(out, exist_ok=True)
    trace = os.path.join(out, "trace.o")
    subprocess.run(["cc", "-O2", "-c", "-o", trace,
                    os.path.join(ROOT, "scripts", "argv_walk_trace.c")],
                   check=True)
    subprocess.run(["make", "-s", "-j2", "B=" + os.path.relpath(out, ROOT),
                    "CFLAGS=-O0 -finstrument-functions "
                    "-finstrument-functions-exclude-file-list=.h",
                    "LDFLAGS=" + trace + " -ldl",
                    os.path.join(os.path.relpath(out, ROOT), "pcprof")],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out, "pcprof")


def symbols(exe):
    """{offset: (name, source file under tools/ or None)}"""
    r = subprocess.run(["nm", "-l", "--defined-only", exe],
                       capture_output=True, text=True, check=True)
    syms = {}
    for line in r.stdout.splitlines():
        m = re.match(r"([0-9a-f]+) [tTwW] (\S+)(?:\t(\S+):\d+)?$", line)
        if not m:
            continue
        addr, name, path = m.groups()
        src = None
        if path:
            k = path.rfind("/tools/")
            if k >= 0 and path.endswith(".c"):
                src = path[k + 1:]
        syms[int(addr, 16)] = (name, src)
    return syms


def count(trace, syms):
    """{source file: entries} from cmd_report's start to STOP's first,
    and the function that stopped the walk."""
    stack, seen = [], collections.Counter()
    walking, stopped = False, None
    with open(trace) as f:
        for line in f:
            what, off = line.split()
            name, src = syms.get(int(off, 16), ("?", None))
            if what == "X":
                if stack:
                    stack.pop()
                continue
            if name == "cmd_report":
                walking = True
            if walking and name in STOP:
                stopped = name
                break
            caller = stack[-1] if stack else None
            if walking and src and caller != src:
                seen[src] += 1
            # a function of no tools/ file (gmon/) is its caller's
            stack.append(src or caller)
    return seen, stopped


def record(b, top):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PC_") or k == "LD_PRELOAD":
            del env[k]
    pcprof = os.path.abspath(os.path.join(b, "pcprof"))
    forker = os.path.abspath(os.path.join(b, "tests", "progs", "forker"))
    subprocess.run([pcprof, "run", "-o", "r", "--no-report", "--stacks",
                    "--", forker, "0.2"], cwd=top, env=env, check=True,
                   timeout=60, capture_output=True)
    shutil.copy(forker, os.path.join(top, "forker"))
    child = [n for n in os.listdir(os.path.join(top, "r"))
             if re.fullmatch(r"gmon\.out\.forker\.\d+", n)]
    assert len(child) == 1, os.listdir(os.path.join(top, "r"))
    return env, child[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", action="store_true", help="stop at the "
                    "first read of symbols or samples alone, not at a "
                    "report's start")
    ap.add_argument("--max", type=int, help="exit 1 where a file is "
                    "entered more often than this")
    a = ap.parse_args()
    if a.data:
        STOP[:] = STOP[:4]
    traced = build(a.build)
    syms = symbols(traced)
    stops = ",".join("%x" % off for off, (name, _) in syms.items()
                     if name in STOP)
    top = tempfile.mkdtemp(prefix="pc-argvwalk-")
    worst = 0
    try:
        env, child = record(a.build, top)
        for said, argv in CASES:
            argv = [x.replace("CHILD", child) for x in argv]
            log = os.path.join(top, "trace")
            e = dict(env, ARGVWALK_OUT=log, ARGVWALK_STOP=stops)
            r = subprocess.run([traced, "report"] + argv, cwd=top, env=e,
                               capture_output=True, text=True, timeout=120)
            if r.returncode:
                print("%s: exit %d: %s" % (said, r.returncode, r.stderr),
                      file=sys.stderr)
                return 2
            seen, stopped = count(log, syms)
            order = sorted(seen.items(), key=lambda x: (-x[1], x[0]))
            top3 = ", ".join("%s %d" % (os.path.basename(f), k)
                             for f, k in order
                             if not f.startswith("tools/base/"))
            top3 += " [base: %s]" % ", ".join(
                "%s %d" % (os.path.basename(f), k) for f, k in order
                if f.startswith("tools/base/"))
            most = max([k for f, k in order
                        if not f.startswith("tools/base/")] or [0])
            worst = max(worst, most)
            print("%-40s most %2d | %s | stop: %s" % (said, most, top3,
                                                     stopped))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if a.max is not None and worst > a.max:
        print("a file entered %d times: over %d" % (worst, a.max))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
