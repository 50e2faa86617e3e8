#!/usr/bin/env python3
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
its summary line says (the rate it asked for, and the lowest it slowed to
to keep its own cost under 1 % of a CPU). Runs are pinned to --cpu.
Tables go to stdout, progress to stderr. Python 3 standard library only.
"""

import argparse
import os
import re
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", default="1,200,1000,10000",
                    help="comma-separated thread counts (1,200,1000,10000)")
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="the busy thread's work, in CPU seconds unprofiled (3)")
    ap.add_argument("--runs", type=int, default=5, help="rounds (5)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU to pin to (0)")
    args = ap.parse_args()
    lib = os.path.abspath(os.path.join(args.build, "libpc.so"))
    if not os.path.exists(lib):
        sys.exit("bench/wall.py: %s is missing: run make first" % lib)
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
    print("%8s %9s %9s %9s %11s %11s  %s" % ("threads", "plain", "cpu", "wall",
                                             "wall/plain", "wall/cpu", "wall sampler"))
    for n in [int(x) for x in args.threads.split(",")]:
        cpu = {k: [] for k, _ in variants}
        rate = ""
        for r in range(args.runs):
            for name, env in variants:
                secs, err = run_one([exe, str(n), str(loops)], env, args.cpu)
                cpu[name].append(secs)
                m = re.search(r"wall clock: (\d+) rounds at (\d+) Hz(?: \(slowed to (\d+) Hz)?",
                              err)
                if name == "wall" and m:
                    rate = "%s Hz asked, lowest %s Hz, %s rounds" % (
                        m.group(2), m.group(3) or m.group(2), m.group(1))
            note("  %d threads, round %d of %d" % (n, r + 1, args.runs))
        med = {k: statistics.median(v) for k, v in cpu.items()}
        print("%8d %9.3f %9.3f %9.3f %+10.1f%% %+10.1f%%  %s" % (
            n, med["plain"], med["cpu"], med["wall"],
            100 * (med["wall"] / med["plain"] - 1), 100 * (med["wall"] / med["cpu"] - 1),
            rate), flush=True)


if __name__ == "__main__":
    main()
