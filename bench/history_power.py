#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof history: how often a step is found at its commit, false change
points, and a slow drift, on synthetic series.

    python3 bench/history_power.py --build build [--series 1000] [--seed 1]

Each series is one history file of one function, written as pcprof
history add writes it (3 runs a commit), its per-commit mean 1 s times
1 + noise (normal, --noise percent a commit) and the step; analysed with
`pcprof history --absolute --format json` (one function: no speed to take
out) at alpha 0.02, which the program's series (constant here) halves to
0.01 for the function's. For each method (ttest, edivisive) and noise:

- step: a 3 % step (--step) at a commit drawn from 3 to 27 of 30: the
  share of series where a change point is at the step's commit +-1 with
  its size within a third of the step, and where it is the only one;
- false: 200 commits of noise alone: change points found, per series;
- drift: 1 % a commit over commits 25 to 34 of 60: the share of series
  with a rising change point within the drift.

Prints a markdown table on stdout (docs/ci.md has one), progress on
stderr. Python 3 standard library only; one process at a time.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def write(path, xs, sd, rng):
    with open(path, "w") as f:
        for i, x in enumerate(xs):
            var = (1.5 * sd * x) ** 2      # 3 runs of the noise, a little wider
            f.write(json.dumps({"version": 1, "commit": "c%03d" % i, "time": i, "runs": 3,
                                "cpu": [1, 0], "functions": {"f": [x, var]}}) + "\n")


def analyse(pcprof, path, method):
    p = subprocess.run([pcprof, "history", "--absolute", "--alpha", "0.02", "--format",
                        "json", "--method", method, path], capture_output=True, text=True)
    if p.returncode:
        sys.exit("bench: pcprof history: " + p.stderr)
    return [c for c in json.loads(p.stdout)["changes"] if c["function"] == "f"]


def cell(pcprof, method, noise, args, rng, tmp):
    sd = noise / 100
    path = os.path.join(tmp, "h.jsonl")
    n = args.series if method == "ttest" else max(args.series // 5, 50)
    found = alone = 0
    for _ in range(n):
        at = rng.randint(3, 27)
        write(path, [(1 + (args.step / 100 if i >= at else 0)) * (1 + rng.gauss(0, sd))
                     for i in range(30)], sd, rng)
        ch = analyse(pcprof, path, method)
        hit = [c for c in ch if abs(c["index"] - at) <= 1 and
               abs(c["change"] - args.step / 100) < args.step / 300]
        found += bool(hit)
        alone += bool(hit) and len(ch) == 1
    falses = worst = 0
    for _ in range(n // 2):
        write(path, [1 + rng.gauss(0, sd) for i in range(200)], sd, rng)
        k = len(analyse(pcprof, path, method))
        falses += k
        worst = max(worst, k)
    drift = 0
    for _ in range(n // 2):
        write(path, [(1 + 0.01 * min(max(i - 24, 0), 10)) * (1 + rng.gauss(0, sd))
                     for i in range(60)], sd, rng)
        drift += any(25 <= c["index"] <= 35 and c["change"] > 0
                     for c in analyse(pcprof, path, method))
    return n, found, alone, falses, worst, drift


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--series", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--step", type=float, default=3.0)
    ap.add_argument("--noise", default="0.5,0.75,1,1.5")
    ap.add_argument("--methods", default="ttest,edivisive")
    args = ap.parse_args()
    pcprof = os.path.join(os.path.abspath(args.build), "pcprof")
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="pc-bench-history-")
    print("| method | noise a commit | step at its commit +-1 | and alone | "
          "false change points / 200 commits (most in one series) | drift found | "
          "ms a series |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for method in args.methods.split(","):
        for noise in (float(x) for x in args.noise.split(",")):
            t0 = time.monotonic()
            n, found, alone, falses, worst, drift = cell(pcprof, method, noise, args, rng, tmp)
            ms = 1000 * (time.monotonic() - t0) / (2 * n)
            print("| %s | %g %% | %.1f %% (%d/%d) | %.1f %% | %.3f (%d) | %.1f %% (%d/%d) | %.0f |"
                  % (method, noise, 100 * found / n, found, n, 100 * alone / n,
                     falses / (n // 2), worst, 100 * drift / (n // 2), drift, n // 2, ms),
                  flush=True)
            print("bench: %s %g %% done" % (method, noise), file=sys.stderr)


if __name__ == "__main__":
    main()
