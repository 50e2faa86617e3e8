#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare --metric wall: how often it catches a wall-time
regression that costs no CPU, and how often it cries wolf (issue 27).

    python3 bench/wall_power.py --build build              # 6 comparisons a cell
    python3 bench/wall_limit_power.py --help   # many drawn from pools: cheaper
    python3 bench/wall_power.py --build build --reps 20 --runs 8
    python3 bench/wall_power.py --build build --levels 0.1,0.2,0.4 --budget 10s --hog
    python3 bench/wall_power.py --help

tests/progs/wallgate.c waits in three ways a round (a random 1 to 3 ms sleep
in sleeper(), a pipe read in piper(), about 1 ms of CPU in worker()); it is
built again with sleeper() sleeping --levels milliseconds longer a round
(the regression: no CPU at all) and once more unchanged (the same source
built twice, as a CI job builds a change that changes nothing), into
BUILD/bench/. Each cell is --reps real `pcprof compare --metric wall
--runs N` of the base build against one of the others, each side
--rounds rounds. For each: how many exited 1, and how many of those named
sleeper's sleep ("[off-cpu: clock_nanosleep] from sleeper") among the
slower rows; for the unchanged build, exits 1 are false alarms; the runs
a side each comparison made, and the load average (1 minute) over the
cell. --budget B gates with the sequential design (pcprof compare
--budget B) instead of --runs; --hog runs `yes > /dev/null` on the last
CPU throughout. sleeper() sleeps 2 ms a round on average: --levels
0.1,0.2,0.4 (the default) make its wait 5, 10 and 20 % longer. Every
comparison here is made afresh; bench/wall_limit_power.py draws many
from pools of runs made once, fixed and sequential, at budgets.
Tables on stdout, progress on stderr. Python 3 standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402  (the hog, the load)
ROOT = os.path.dirname(HERE)


def note(msg):
    print("wall_power: " + msg, file=sys.stderr, flush=True)


def build(out, name, extra):
    exe = os.path.join(out, name)
    src = os.path.join(ROOT, "tests", "progs", "wallgate.c")
    subprocess.run(["cc", "-O2", "-g", "-pthread", "-Wall"] + extra + ["-o", exe, src],
                   check=True)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--levels", default="0.1,0.2,0.4",
                    help="ms added to each round's sleep (0.1,0.2,0.4: its "
                    "wait 5, 10 and 20 %% longer)")
    ap.add_argument("--reps", type=int, default=6, help="comparisons a cell (6)")
    ap.add_argument("--runs", type=int, default=8, help="runs a side (8)")
    ap.add_argument("--rounds", type=int, default=150, help="rounds a run (150)")
    ap.add_argument("--budget", help="pcprof compare --budget B (sequential) instead of "
                    "--runs (fixed)")
    ap.add_argument("--hog", action="store_true",
                    help="yes > /dev/null on the last CPU throughout")
    args = ap.parse_args()
    with machine.hog_on_last_cpu(args.hog):
        cells(args)


def cells(args):
    pcprof = os.path.abspath(os.path.join(args.build, "pcprof"))
    out = os.path.abspath(os.path.join(args.build, "bench"))
    os.makedirs(out, exist_ok=True)
    base = build(out, "wallgate-base", [])
    others = [("same source", build(out, "wallgate-same", []), 0.0)]
    for lv in args.levels.split(","):
        others.append(("+%s ms a round" % lv,
                       build(out, "wallgate-plus%s" % lv, ["-DEXTRA_MS=%s" % lv]), float(lv)))
    design = ["--budget", args.budget] if args.budget else ["--runs", str(args.runs)]
    print("pcprof compare --metric wall %s, %d rounds a run (about 2 ms of sleep, "
          "1 ms of pipe wait and 1 ms of CPU a round), %d comparisons a cell%s"
          % (" ".join(design), args.rounds, args.reps,
             ", yes > /dev/null on the last CPU" if args.hog else ""))
    print()
    print("%-16s %10s %14s %12s %10s %12s %12s" % ("new build", "exit 1", "names sleeper",
                                                  "exit 2", "s a compare", "runs a side",
                                                  "load (1 min)"))
    for label, exe, extra in others:
        ones = named = twos = 0
        t0 = time.time()
        used, loads = [], [machine.load1()]
        for r in range(args.reps):
            p = subprocess.run([pcprof, "compare", "--metric", "wall"] + design +
                               ["-q", "--format", "json", "--base", base,
                                str(args.rounds), "--new", exe, str(args.rounds)],
                               capture_output=True, text=True, timeout=900)
            loads.append(machine.load1())
            if p.returncode in (0, 1):
                used.append(json.loads(p.stdout)["experiment"]["runs"])
            if p.returncode == 1:
                ones += 1
                slow = [f["name"] for f in json.loads(p.stdout)["functions"]
                        if f["status"] == "slower"]
                named += "[off-cpu: clock_nanosleep] from sleeper" in slow
                note("%s: slower: %s" % (label, ", ".join(slow)))
            elif p.returncode != 0:
                twos += 1
                note("%s: exit %d: %s" % (label, p.returncode, p.stderr.strip()[-300:]))
            note("%s: comparison %d of %d, exit %d" % (label, r + 1, args.reps, p.returncode))
        used.sort()
        print("%-16s %6d/%-3d %10d/%-3d %8d/%-3d %10.1f %12s %12s" % (
            label, ones, args.reps, named, args.reps, twos, args.reps,
            (time.time() - t0) / args.reps,
            "%d to %d" % (used[0], used[-1]) if used else "-",
            "%.1f to %.1f" % (min(loads), max(loads))), flush=True)


if __name__ == "__main__":
    main()
