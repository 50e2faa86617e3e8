#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The wall-clock sampler's cost (issue 27): N threads asleep for the whole
run beside one busy thread (bench/sleepers.c), unprofiled, under libpc's
CPU profile (PC_CLOCK=cpu, the default) and under its wall-clock profile
(PC_CLOCK=wall), the three alternating within each round.

    python3 bench/wall.py --build build                   # 1, 200, 1000, 10000
    python3 bench/wall.py --build build --threads 200 --runs 9
    python3 bench/wall.py --help

For each thread count: the median process CPU seconds (user + system, from
wait4's rusage) of each variant, the wall variant's CPU over the unprofiled
one and over the CPU profile's, and the wall sampler's rounds a second as
its summary line says (its rounds, and the lowest rate at which a thread
was looked at, to keep its own cost under 1 % of a CPU) with its own CPU
milliseconds (median). Runs are pinned to --cpu.

    python3 bench/wall.py --build build --completeness

How complete the stacks of blocked threads are, on real programs under
PC_CLOCK=wall: the walks that reached the thread's first frame, those cut
short at a frame whose return needs a register that a blocked thread's
saved pc and sp do not give (frame-pointer code), and those that are the
wait alone (no unwind tables: Go), from each program's PC_VERBOSE lines.

Tables go to stdout, progress to stderr. Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def run_one(argv, env, cpu):
    """CPU seconds (user + system) of one run, and its stderr."""
    with tempfile.TemporaryDirectory(prefix="pc-bench-wall-") as d:
        p = subprocess.Popen(["taskset", "-c", str(cpu)] + argv, env=env, cwd=d,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read().decode(errors="replace")
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode:
            sys.exit("bench/wall.py: %s exited %d: %s" % (argv[0], p.returncode, err[-500:]))
        return ru.ru_utime + ru.ru_stime, err


COMPLETENESS_PY = """
import http.server, threading, urllib.request
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=s.serve_forever, daemon=True).start()
for i in range(100):
    urllib.request.urlopen("http://127.0.0.1:%d/" % s.server_address[1]).read()
s.shutdown()
"""


def completeness(args, lib):
    """The off-CPU walks of real programs: whole, cut short, the wait alone."""
    root = os.path.dirname(HERE)
    progs = os.path.abspath(os.path.join(args.build, "tests", "progs"))
    out = os.path.abspath(os.path.join(args.build, "bench"))
    os.makedirs(out, exist_ok=True)
    fp = os.path.join(out, "waits-fp")
    subprocess.run(["cc", "-O2", "-g", "-pthread", "-fno-omit-frame-pointer", "-o", fp,
                    os.path.join(root, "tests", "progs", "waits.c")], check=True)
    d = tempfile.mkdtemp(prefix="pc-bench-wall-")
    db = os.path.join(d, "t.db")
    cases = [
        ("tests/progs/waits (-O2)", [os.path.join(progs, "waits"), "0.3"]),
        ("tests/progs/waits (-O2 -fno-omit-frame-pointer)", [fp, "0.3"]),
        ("python3 http.server, 100 requests", ["python3", "-c", COMPLETENESS_PY]),
        ("node, a 0.5 s timer", ["node", "-e", "setTimeout(() => 0, 500)"]),
        ("sqlite3, 200 inserts, synchronous=FULL",
         ["sqlite3", db, "PRAGMA synchronous=FULL; CREATE TABLE t(x);" +
          "".join("INSERT INTO t VALUES(%d);" % i for i in range(200))]),
        ("tests/progs/gocgo (Go)", [os.path.join(progs, "gocgo")]),
    ]
    print("Off-CPU stacks of real programs under PC_CLOCK=wall (walks, all processes)")
    print()
    print("%-50s %7s %7s %7s %7s" % ("program", "whole", "cut", "wait", "dropped"))
    for name, argv in cases:
        if not os.path.exists(argv[0]) and not shutil.which(argv[0]):
            print("%-50s %s" % (name, "(not here)"))
            continue
        env = dict(os.environ, LD_PRELOAD=lib, PC_VERBOSE="1", PC_CLOCK="wall",
                   PC_OUT=os.path.join(d, "gmon.out"))
        p = subprocess.run(argv, env=env, cwd=d, capture_output=True, text=True, timeout=300)
        tot = [0, 0, 0, 0]
        for m in re.finditer(r"off-CPU stacks: (\d+) whole, (\d+) cut short, (\d+) the wait "
                             r"alone(?:; (\d+) dropped)?", p.stderr):
            for i in range(4):
                tot[i] += int(m.group(i + 1) or 0)
        # Go ends with a raw exit_group: no summary line; pcprof run finishes it
        if not any(tot):
            print("%-50s %s" % (name, "(no summary: the process ended without exit)"))
            continue
        print("%-50s %7d %7d %7d %7d" % ((name,) + tuple(tot)), flush=True)
    shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", default="1,200,1000,10000",
                    help="comma-separated thread counts (1,200,1000,10000)")
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="the busy thread's work, in CPU seconds unprofiled (3)")
    ap.add_argument("--runs", type=int, default=5, help="rounds (5)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU to pin to (0)")
    ap.add_argument("--completeness", action="store_true",
                    help="the off-CPU stacks of real programs instead")
    args = ap.parse_args()
    lib = os.path.abspath(os.path.join(args.build, "libpc.so"))
    if not os.path.exists(lib):
        sys.exit("bench/wall.py: %s is missing: run make first" % lib)
    if args.completeness:
        completeness(args, lib)
        return
    exe = os.path.abspath(os.path.join(args.build, "bench", "sleepers"))
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    subprocess.run(["cc", "-O2", "-pthread", "-o", exe,
                    os.path.join(HERE, "sleepers.c")], check=True)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("PC_") and k != "LD_PRELOAD"}
    variants = [("plain", base),
                ("cpu", dict(base, LD_PRELOAD=lib, PC_VERBOSE="1")),
                ("wall", dict(base, LD_PRELOAD=lib, PC_VERBOSE="1", PC_CLOCK="wall"))]
    # the work that takes --seconds unprofiled, from a short run
    probe, _ = run_one([exe, "0", "1000"], base, args.cpu)
    loops = max(int(1000 * args.seconds / max(probe, 1e-3)), 1)
    print("Wall-clock sampler cost: N sleeping threads beside one busy thread "
          "doing %.1f CPU s of work, %d rounds, pinned to CPU %d (median process CPU s)"
          % (args.seconds, args.runs, args.cpu))
    print()
    print("%8s %9s %9s %9s %11s %11s %9s  %s" % ("threads", "plain", "cpu", "wall",
                                                 "wall/plain", "wall/cpu", "own ms",
                                                 "the wall sampler"))
    for n in [int(x) for x in args.threads.split(",")]:
        cpu = {k: [] for k, _ in variants}
        rate, own = "", []
        for r in range(args.runs):
            for name, env in variants:
                secs, err = run_one([exe, str(n), str(loops)], env, args.cpu)
                cpu[name].append(secs)
                m = re.search(r"wall clock: (\d+) rounds at (\d+) Hz(?: \(each thread "
                              r"looked at (\d+|under 1) Hz)?.*its own CPU ([\d.]+) ms", err)
                if name == "wall" and m:
                    own.append(float(m.group(4)))
                    rate = "%s rounds at %s Hz, each thread looked at %s Hz on average" % (
                        m.group(1), m.group(2), m.group(3) or m.group(2))
            note("  %d threads, round %d of %d" % (n, r + 1, args.runs))
        med = {k: statistics.median(v) for k, v in cpu.items()}
        print("%8d %9.3f %9.3f %9.3f %+10.1f%% %+10.1f%% %9.1f  %s" % (
            n, med["plain"], med["cpu"], med["wall"],
            100 * (med["wall"] / med["plain"] - 1), 100 * (med["wall"] / med["cpu"] - 1),
            statistics.median(own) if own else float("nan"), rate), flush=True)


if __name__ == "__main__":
    main()
