#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare's sequential gate: false alarms, power and runs used, from
real runs replayed look by look.

    python3 bench/sequential_power.py --build build --out DIR   # runs, tables
    python3 bench/sequential_power.py --build build --analyse DIR
    python3 bench/sequential_power.py --help

Builds tests/progs/regress.c as bench/compare_power.py does (stage_transform
holding --share percent of the work: a base build, the same source built a
second time, and builds that make stage_transform slower by each of
--levels percent), then records pools of real runs with `pcprof compare
--runs --pool` (a fixed design: every run kept, in turns after a warm-up
pair): the base build against each other build in turn.

Then draws comparisons from the pools, as bench/compare_power.py draws
them: for each budget, the most runs a side pcprof compare would allow it
(the budget over a run's wall time), drawn distinct and in a random
order, and replays the sequential gate on them with `pcprof diff --looks
N`, which judges the first 3, 4, ... runs a side in order up to the first
look that decides, exactly as pcprof compare does after each pair. For
each cell: the rate of each verdict, false alarms (regressed, A/A) or
power (regressed with stage_transform named first), and the runs a side
used (median and 90th percentile: "median", "90th"); beside it, the fixed
design on all the drawn runs (pcprof diff on them at once, as pcprof
compare gated before it was sequential).

Runs drawn from a pool are reused across comparisons, so the rates are
those of the procedure on this machine's spread of runs, known as well as
the pools are large. Python 3 standard library only.
"""

import argparse
import glob
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_power  # noqa: E402  (its builds and drawing)
import machine  # noqa: E402  (the hog, the load)


def note(msg):
    print("sequential_power: " + msg, file=sys.stderr, flush=True)


def record(a, exes):
    """Pools of real runs: --pool runs a side of base against each other."""
    scale = compare_power.scale_for(exes["base"], a.run_seconds)
    with open(os.path.join(a.out, "setup.json"), "w") as f:
        json.dump({"share": a.share, "levels": a.levels, "scale": scale,
                   "run_seconds": a.run_seconds, "exes": exes, "pool": a.pool,
                   "hog": a.hog, "cpus": os.cpu_count(), "kernel": os.uname().release}, f)
    # --hog: as bench/compare_power.py's, on the last CPU, the runs anywhere
    with machine.hog_on_last_cpu(a.hog):
        pools_made(a, exes, scale)


def pools_made(a, exes, scale):
    """Each pool in turn; the load average (1 minute) before and after
    each, into setup.json."""
    loads = []
    for other in ["same"] + ["s%d" % lv for lv in a.levels]:
        loads.append(machine.load1())
        out = os.path.join(a.out, "pool-%s" % other)
        t0 = time.monotonic()
        p = subprocess.run([a.pcprof, "compare", "-q", "--format", "json", "--runs",
                            str(a.pool), "-o", out, "--base", exes["base"],
                            "%.4f" % scale, "--new", exes[other], "%.4f" % scale],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1):
            compare_power.die("pcprof compare failed (%d): %s" % (p.returncode, p.stderr))
        with open(os.path.join(out, "verdict.json"), "w") as f:
            f.write(p.stdout)
        note("pool %s: %d runs a side, %.0f s" % (other, a.pool, time.monotonic() - t0))
    loads.append(machine.load1())
    path = os.path.join(a.out, "setup.json")
    setup = json.load(open(path))
    setup["load"] = loads
    with open(path, "w") as f:
        json.dump(setup, f)


def gate(a, limits, nmax, base_exe, base, new_exe, new):
    """The sequential gate replayed on the drawn runs, in order."""
    p = subprocess.run([a.pcprof, "diff", "--format", "json", "--looks", str(nmax),
                        "--threshold", "%g" % a.threshold, "--min-seconds",
                        "%g" % limits[1], "--base", base_exe] + base +
                       ["--new", new_exe] + new, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        compare_power.die("pcprof diff failed (%d): %s" % (p.returncode, p.stderr))
    j = json.loads(p.stdout)
    first = j["functions"][0]["name"] if j["functions"] else None
    return j["sequential"]["verdict"], j["sequential"]["runs"], first


def fixed(a, limits, base_exe, base, new_exe, new):
    """The fixed design on all the drawn runs (pcprof compare before the
    sequential gate, and bench/compare_power.py's): exit 1 and the
    function named first."""
    p = subprocess.run([a.pcprof, "diff", "--format", "json", "--threshold",
                        "%g" % a.threshold, "--min-seconds", "%g" % limits[1],
                        "--base", base_exe] + base + ["--new", new_exe] + new,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        compare_power.die("pcprof diff failed (%d): %s" % (p.returncode, p.stderr))
    j = json.loads(p.stdout)
    return p.returncode, j["functions"][0]["name"] if j["functions"] else None


def pools(a):
    base, news, walls, mins = [], {}, [], []
    for d in sorted(glob.glob(os.path.join(a.out, "pool-*"))):
        j = json.load(open(os.path.join(d, "verdict.json")))
        other = d.rsplit("-", 1)[1]
        base += sorted(glob.glob(os.path.join(d, "base-*")))
        news[other] = sorted(glob.glob(os.path.join(d, "new-*")))
        walls += [j["experiment"]["wall_seconds"]["base"],
                  j["experiment"]["wall_seconds"]["new"]]
        mins.append(j["min_seconds"])
    if not walls:
        compare_power.die("%s: no pools recorded" % a.out)
    return base, news, sum(walls) / len(walls), sum(mins) / len(mins)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else 0


def cell(a, rng, exes, base, pool, other, nmax, reps, limits):
    verdicts, used, hits = {"regressed": 0, "unchanged": 0, "undecided": 0}, [], 0
    fhits = 0
    for _ in range(reps):
        if other == "base":
            pick = rng.sample(base, 2 * nmax)
            left, right = pick[:nmax], pick[nmax:]
        else:
            left, right = rng.sample(base, nmax), rng.sample(pool, nmax)
        v, n, first = gate(a, limits, nmax, exes["base"], left,
                           exes["base" if other == "base" else other], right)
        verdicts[v] += 1
        used.append(n)
        hits += v == "regressed" and (other in ("base", "same") or
                                      first == "stage_transform")
        rc, ffirst = fixed(a, limits, exes["base"], left,
                           exes["base" if other == "base" else other], right)
        fhits += rc == 1 and (other in ("base", "same") or ffirst == "stage_transform")
    return verdicts, used, hits, fhits


def analyse(a):
    setup = json.load(open(os.path.join(a.out, "setup.json")))
    exes = setup["exes"]
    base, news, wall, mins = pools(a)
    rng = random.Random(a.seed)
    print("pcprof compare's sequential gate (bench/sequential_power.py)")
    print("machine: %d CPUs, Linux %s; stage_transform holds %d%% of the work; a run "
          "%.2f s of CPU unprofiled, %.2f s of wall time profiled%s" % (
              setup["cpus"], setup["kernel"], setup["share"], setup["run_seconds"], wall,
              "; a CPU hog (yes > /dev/null) on the last CPU" if setup.get("hog") else ""))
    if setup.get("load"):
        print("load average (1 min) while the pools were made: %.1f to %.1f" % (
            min(setup["load"]), max(setup["load"])))
    print("pools: %d base runs; %s; --min-seconds %.5f, alpha 0.01" % (
        len(base), ", ".join("%d %s" % (len(v), k) for k, v in sorted(news.items())),
        mins))
    rows = [("base", "A/A, base vs base", a.fa_reps),
            ("same", "A/A, regress-again", a.fa_reps)] + \
        [("s%d" % lv, "%d%% slower" % lv, a.reps) for lv in setup["levels"]]
    for a.threshold, b in [(t, b) for t in a.thresholds for b in a.budgets]:
        nmax = max(3, int(b / wall))
        print()
        print("--threshold %g, --budget %gs: at most %d runs a side" % (a.threshold, b, nmax))
        print("%-20s %-30s %-11s %-11s %-8s %-8s %s" % (
            "", "regressed (95% interval)", "unchanged", "undecided", "median",
            "90th", "fixed %d runs: exit 1" % nmax))
        for other, label, reps in rows:
            pool = base if other == "base" else news.get(other, [])
            if len(pool) < (2 * nmax if other == "base" else nmax):
                print("%-20s pool too small (%d)" % (label, len(pool)))
                continue
            v, used, hits, fhits = cell(a, rng, exes, base, pool, other, nmax, reps,
                                        (a.threshold, mins))
            print("%-20s %-30s %-11s %-11s %-8d %-8d %s" % (
                label, compare_power.rate(hits, reps),
                "%.1f%%" % (100.0 * v["unchanged"] / reps),
                "%.1f%%" % (100.0 * v["undecided"] / reps), pct(used, 0.5), pct(used, 0.9),
                compare_power.rate(fhits, reps)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", help="where the runs go (default BUILD/bench/seq-*)")
    ap.add_argument("--analyse", metavar="DIR", help="only draw the tables from DIR")
    ap.add_argument("--share", type=int, default=10)
    ap.add_argument("--levels", default="5,10,20")
    ap.add_argument("--pool", type=int, default=40, help="runs a side a pool")
    ap.add_argument("--hog", action="store_true",
                    help="yes > /dev/null on the last CPU while the pools are made")
    ap.add_argument("--budgets", default="10")
    ap.add_argument("--run-seconds", type=float, default=0.3)
    ap.add_argument("--thresholds", default="2,5", help="percents, a table each")
    ap.add_argument("--pcprof", help="the pcprof to judge with (default BUILD/pcprof)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--fa-reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.pcprof = os.path.abspath(a.pcprof or os.path.join(a.build, "pcprof"))
    a.thresholds = [float(x) for x in a.thresholds.split(",") if x]
    if not os.path.exists(a.pcprof):
        compare_power.die("%s is missing: run make first" % a.pcprof)
    a.levels = [int(x) for x in a.levels.split(",") if x]
    a.budgets = [float(x) for x in a.budgets.split(",") if x]
    if a.analyse:
        a.out = os.path.abspath(a.analyse)
    else:
        a.out = os.path.abspath(a.out or os.path.join(
            a.build, "bench", "seq-%s" % time.strftime("%Y%m%d-%H%M%S")))
        if os.path.exists(a.out) and os.listdir(a.out):
            compare_power.die("%s is not empty" % a.out)
        os.makedirs(a.out, exist_ok=True)
        record(a, compare_power.builds(a))
    analyse(a)


if __name__ == "__main__":
    main()
