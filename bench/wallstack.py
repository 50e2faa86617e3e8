#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The share of wall profiles' wait time whose stacks are whole (issue 35).

    python3 bench/wallstack.py --build build [--progs build/tests/progs] [--runs 3]
                               [--case SUBSTRING]

Each program runs under BUILD/pcprof run --clock wall; its folded stacks
(every process of the run) give the off-CPU time whose stack goes whole
to its thread's start (not "[unwind stopped]" nor "[truncated]"), and of
sqlite3's fdatasync/unlink time, that through sqlite3_step. --progs names
where tests/progs/wallstack and wallstack-fp are (another build's pcprof
can be measured on this one's programs). The figures are the runs' range.
"""
import argparse
import os
import re
import shutil
import subprocess
import tempfile


def folded(pcprof, rdir, *extra):
    p = subprocess.run([pcprof, "report", "--format", "folded"] + list(extra) + [rdir],
                       capture_output=True, text=True, timeout=300)
    for line in p.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        yield stack.split(";"), int(n)


def shares(pcprof, rdir, extra, pick):
    total = whole = 0
    for frames, n in folded(pcprof, rdir, *extra):
        if not frames[-1].startswith("[off-cpu: ") or not pick(frames):
            continue
        total += n
        whole += n * (frames[0] not in ("[unwind stopped]", "[truncated]") and
                      (not pick.__doc__ or pick.__doc__ in frames))
    return total, whole


def every(frames):
    return True


def sqlite_sync(frames):
    "sqlite3_step"
    return re.match(r"\[off-cpu: (fdatasync|unlink)", frames[-1]) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--progs", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--case", default="", help="only the programs whose name holds this")
    args = ap.parse_args()
    pcprof = os.path.abspath(os.path.join(args.build, "pcprof"))
    progs = os.path.abspath(args.progs or os.path.join(args.build, "tests", "progs"))
    d = tempfile.mkdtemp(prefix="pc-bench-wallstack-", dir=os.path.abspath(args.build))
    sql = os.path.join(d, "ins.sql")
    with open(sql, "w") as f:
        f.write("PRAGMA synchronous=FULL; CREATE TABLE t(a, b);\n")
        f.writelines("INSERT INTO t VALUES(%d, 'row %d');\n" % (i, i) for i in range(1500))
    cases = [
        ("tests/progs/wallstack (-O2)", [os.path.join(progs, "wallstack"), "0.15", d], (),
         every),
        ("tests/progs/wallstack-fp (-O2 -fno-omit-frame-pointer)",
         [os.path.join(progs, "wallstack-fp"), "0.15", d], (), every),
        ("sqlite3, 1500 inserts, synchronous=FULL: all waits",
         ["sqlite3", os.path.join(d, "db"), ".read " + sql], (), every),
        ("sqlite3, the same: fdatasync and unlink through sqlite3_step",
         ["sqlite3", os.path.join(d, "db"), ".read " + sql], (), sqlite_sync),
        ("sleep 0.3 (Debian)", ["sleep", "0.3"], (), every),
        ("python3 -c 'time.sleep(0.5)' (Debian)",
         ["/usr/bin/python3", "-c", "import time; time.sleep(0.5)"],
         ("--process", "python3.11"), every),
    ]
    print("%-62s %10s %s" % ("program", "wait ms", "whole (each run)"))
    for name, argv, extra, pick in cases:
        if args.case not in name:
            continue
        got = []
        total = 0
        for r in range(args.runs):
            rdir = os.path.join(d, "run%d" % r)
            shutil.rmtree(rdir, ignore_errors=True)
            for f in ("db", "db-journal"):
                if os.path.exists(os.path.join(d, f)):
                    os.unlink(os.path.join(d, f))
            subprocess.run([pcprof, "run", "--clock", "wall", "--no-report", "-o", rdir, "--"] +
                           argv, cwd=d, capture_output=True, timeout=300)
            t, w = shares(pcprof, rdir, extra, pick)
            total += t
            got.append(100.0 * w / t if t else float("nan"))
        print("%-62s %10d %s" % (name, total // args.runs,
                                  " ".join("%.1f%%" % g for g in got)), flush=True)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
