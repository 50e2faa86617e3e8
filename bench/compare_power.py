#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare: detection power and false alarms, from real runs.

    python3 bench/compare_power.py --build build --minutes 20 --out DIR
    python3 bench/compare_power.py --build build --minutes 20 --hog --out DIR2
    python3 bench/compare_power.py --build build --analyse DIR   # tables again
    python3 bench/compare_power.py --help

Builds tests/progs/regress.c with stage_transform holding --share percent
of the work: a base build, a second base build (identical source and flags,
its own file: the "same build twice" of a CI job), and builds that make
stage_transform slower by each of --levels percent, into BUILD/bench/.

1. Real comparisons, for --minutes: round after round, `pcprof compare
   --budget B` of the base build against each of the others in turn (B is
   the first of --budgets), with its exit status and the stage it names
   first. Every run it makes is kept (-o), in turns with its warm-up pair,
   as a CI job would make them. With --hog, `yes > /dev/null` runs on
   another CPU throughout.
2. Comparisons drawn from those runs: for each budget, the number of runs
   a side that pcprof compare would make (the budget over a run's wall
   time), drawn distinct from the pools of base runs and of each other
   build's runs, and gated with `pcprof diff` (the test pcprof compare
   runs), --reps times a cell and --fa-reps times for identical builds.

Runs drawn from a pool are reused across comparisons, so the rates in 2.
are those of the procedure on this machine's spread of runs, known as well
as the pools are large; 1. are independent but few. Prints tables on
stdout, progress on stderr. Python 3 standard library only.
"""

import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_power  # noqa: E402  (its build of regress.c)
import machine  # noqa: E402  (the hog)



def note(msg):
    print("compare_power: " + msg, file=sys.stderr, flush=True)


def die(msg):
    note(msg)
    sys.exit(2)


def build(out, name, flags):
    """regress.c built with flags into out/name, as diff_power.py builds it
    (again only when the command or the source changed)."""
    return diff_power.build(types.SimpleNamespace(out=out), name, flags)


def builds(a):
    out = os.path.join(a.build, "bench")
    os.makedirs(out, exist_ok=True)
    share = ["-DTARGET_PCT=%d" % a.share]
    exes = {"base": build(out, "regress-p%d" % a.share, share),
            "same": build(out, "regress-p%d-again" % a.share, share)}
    for lv in a.levels:
        exes["s%d" % lv] = build(out, "regress-p%d-s%d" % (a.share, lv),
                                 share + ["-DSLOW=1", "-DSLOW_PCT=%d" % lv])
    return exes


def scale_for(exe, seconds):
    """SCALE 1 is about a second of CPU: calibrated on the base build."""
    t = os.times()
    subprocess.run([exe, "1", "1"], capture_output=True, check=True)
    u = os.times()
    per_unit = (u.children_user - t.children_user) + \
        (u.children_system - t.children_system)
    return seconds / per_unit


def compare(a, exes, other, scale, out):
    argv = [a.pcprof, "compare", "-q", "--format", "json", "--budget",
            "%gs" % a.budgets[0], "-o", out, "--base", exes["base"],
            "%.4f" % scale, "--new", exes[other], "%.4f" % scale]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        die("pcprof compare failed (%d): %s" % (p.returncode, p.stderr))
    j = json.loads(p.stdout)
    first = j["functions"][0]["name"] if j["functions"] else None
    with open(os.path.join(out, "verdict.json"), "w") as f:
        json.dump(j, f)
    return p.returncode, first, j


def record(a, exes):
    """Phase 1: real comparisons for a.minutes, in rounds."""
    scale = scale_for(exes["base"], a.run_seconds)
    note("runs of SCALE %.4f (%.2f s of CPU unprofiled)" % (scale, a.run_seconds))
    with open(os.path.join(a.out, "setup.json"), "w") as f:
        json.dump({"hog": a.hog, "share": a.share, "levels": a.levels,
                   "scale": scale, "run_seconds": a.run_seconds,
                   "budget": a.budgets[0], "exes": exes,
                   "cpus": os.cpu_count(), "kernel": os.uname().release}, f)
    # the hog on the last CPU, the runs wherever the scheduler puts them
    end = time.time() + 60 * a.minutes
    others = ["same"] + ["s%d" % lv for lv in a.levels]
    rnd = 0
    with machine.hog_on_last_cpu(a.hog):
        while time.time() < end:
            rnd += 1
            for other in others:
                out = os.path.join(a.out, "r%03d-%s" % (rnd, other))
                rc, first, j = compare(a, exes, other, scale, out)
                e = j["experiment"]
                note("round %d, %s: exit %d, first %s; %d runs a side, %d+%d "
                     "disturbed, %.0f s" % (rnd, other, rc, first, e["runs"],
                                            e["repeated"]["base"],
                                            e["repeated"]["new"],
                                            e["elapsed_seconds"]))


def rate(k, n):
    lo, hi = diff_power.wilson(k, n)
    return "%5.1f%% (%d/%d; %.1f-%.1f)" % (100.0 * k / n if n else 0, k, n,
                                          100 * lo, 100 * hi)


def gate(a, limits, base_exe, base, new_exe, new):
    """pcprof diff with the smallest effect pcprof compare used."""
    p = subprocess.run([a.pcprof, "diff", "--format", "json", "--threshold",
                        "%g" % (100 * limits[0]), "--min-seconds", "%g" % limits[1],
                        "--base", base_exe] + base + ["--new", new_exe] + new,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        die("pcprof diff failed (%d): %s" % (p.returncode, p.stderr))
    j = json.loads(p.stdout)
    return p.returncode, j["functions"][0]["name"] if j["functions"] else None


def pools(a):
    """{other: (exe, [run dirs])} and the base pool, with the real
    verdicts and the runs' mean wall time."""
    base, news, real, walls, limits, nruns = [], {}, {}, [], [], []
    for d in sorted(glob.glob(os.path.join(a.out, "r*-*"))):
        v = os.path.join(d, "verdict.json")
        if not os.path.exists(v):
            continue
        j = json.load(open(v))
        other = d.rsplit("-", 1)[1]
        base += sorted(glob.glob(os.path.join(d, "base-*")))
        news.setdefault(other, []).extend(sorted(glob.glob(os.path.join(d, "new-*"))))
        first = j["functions"][0]["name"] if j["functions"] else None
        real.setdefault(other, []).append((j["exit_status"], first))
        walls.append(j["experiment"]["wall_seconds"]["base"])
        walls.append(j["experiment"]["wall_seconds"]["new"])
        limits.append((j["threshold"], j["min_seconds"]))
        nruns.append(j["experiment"]["runs"] / j["experiment"]["budget_seconds"])
    if not walls:
        die("%s: no comparisons recorded" % a.out)
    return base, news, real, sum(walls) / len(walls), \
        (limits[0][0], sum(m for _, m in limits) / len(limits)), sum(nruns) / len(nruns)


def analyse(a):
    setup = json.load(open(os.path.join(a.out, "setup.json")))
    exes = setup["exes"]
    base, news, real, wall, limits, per_second = pools(a)
    rng = random.Random(a.seed)
    print("pcprof compare: detection power and false alarms (bench/compare_power.py)")
    print("machine: %d CPUs, Linux %s; %s; stage_transform holds %d%% of the work; "
          "a run %.2f s of CPU unprofiled, %.2f s of wall time profiled" % (
              setup["cpus"], setup["kernel"],
              "a CPU hog (yes > /dev/null) on another CPU" if setup["hog"]
              else "no other load", setup["share"], setup["run_seconds"], wall))
    print("pools: %d base runs; %s" % (len(base), ", ".join(
        "%d %s" % (len(v), k) for k, v in sorted(news.items()))))
    print("smallest change that fails: %g%% and %.4f s a run (pcprof compare's "
          "defaults)" % (100 * limits[0], limits[1]))
    print()
    print("real pcprof compare --budget %gs, each independent:" % setup["budget"])
    for other in ["same"] + ["s%d" % lv for lv in setup["levels"]]:
        v = real.get(other, [])
        if other == "same":
            k = sum(1 for rc, _ in v if rc == 1)
            print("  identical builds: false alarms %s" % rate(k, len(v)))
        else:
            k = sum(1 for rc, f in v if rc == 1 and f == "stage_transform")
            print("  %s%% slower: detected %s" % (other[1:], rate(k, len(v))))
    print()
    print("drawn from the pools, as many runs a side as pcprof compare made for the "
          "budget (its runs a side over its budget, on average, times this one):")
    # as many runs a side as pcprof compare made for its budget, on average
    nfor = {b: max(3, int(round(b * per_second))) for b in a.budgets}
    print("%-28s" % "" + "".join("%-34s" % ("%g s a side (%d runs)" % (b, nfor[b]))
                                  for b in a.budgets))
    rows = [("same", "false alarms, regress-again", a.fa_reps),
            ("base", "false alarms, base vs base", a.fa_reps)] + \
        [("s%d" % lv, "%d%% slower: detected" % lv, a.reps) for lv in setup["levels"]]
    for other, label, reps in rows:
        cells = []
        for b in a.budgets:
            n = nfor[b]
            pool = news.get(other, []) if other != "base" else base
            if len(pool) < (2 * n if other == "base" else n) or len(base) < n:
                cells.append("pool too small (%d)" % len(pool))
                continue
            k = 0
            for _ in range(reps):
                if other == "base":
                    pick = rng.sample(base, 2 * n)
                    left, right = pick[:n], pick[n:]
                else:
                    left, right = rng.sample(base, n), rng.sample(pool, n)
                rc, first = gate(a, limits, exes["base"], left,
                                 exes[other if other != "base" else "base"], right)
                k += (rc == 1) if other in ("same", "base") else \
                    (rc == 1 and first == "stage_transform")
            cells.append(rate(k, reps))
        print("%-28s" % label + "".join("%-34s" % c for c in cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", help="where the runs go (default BUILD/bench/power-*)")
    ap.add_argument("--analyse", metavar="DIR", help="only draw the tables from DIR")
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--hog", action="store_true")
    ap.add_argument("--share", type=int, default=10)
    ap.add_argument("--levels", default="5,10,20")
    ap.add_argument("--budgets", default="20,60")
    ap.add_argument("--run-seconds", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--fa-reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.pcprof = os.path.join(a.build, "pcprof")
    if not os.path.exists(a.pcprof):
        die("%s is missing: run make first" % a.pcprof)
    a.levels = [int(x) for x in a.levels.split(",") if x]
    a.budgets = [float(x) for x in a.budgets.split(",") if x]
    if a.analyse:
        a.out = os.path.abspath(a.analyse)
    else:
        a.out = os.path.abspath(a.out or os.path.join(
            a.build, "bench", "power-%s" % time.strftime("%Y%m%d-%H%M%S")))
        if os.path.exists(a.out) and os.listdir(a.out):
            die("%s is not empty" % a.out)
        os.makedirs(a.out, exist_ok=True)
        record(a, builds(a))
    analyse(a)


if __name__ == "__main__":
    main()
