#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare's --threshold: power at small slowdowns against the
test that knows only the sampling noise, and false alarms, on the same
runs, for each threshold.

    python3 bench/sequential_power.py --build build --out DIR --levels 2,3,5 --thresholds 1
    python3 bench/threshold_power.py --build build --pools DIR
    python3 bench/threshold_power.py --help

Reads the pools of real runs bench/sequential_power.py records (`pcprof
compare --runs 40` of tests/progs/regress.c's base build against the same
source built again and against builds whose stage_transform, 10 % of the
work, is 2, 3 and 5 % slower). For each budget, as many runs a side as
pcprof compare would make for it (the budget over a run's wall time),
drawn distinct from the pools as bench/compare_power.py draws them, and
judged once by `pcprof diff --threshold 0` (the fixed design, pcprof
compare's other defaults): Holm's adjusted p-values do not depend on the
threshold, so each threshold's verdict is read from that one comparison:
a regression where a row's adjusted p is at most alpha and it grew by at
least the threshold of its base seconds and --min-seconds (the gate's
rule; the speed fit's "undecided", which is rare on these runs, is left
aside). Power: a regression with stage_transform the largest slower row.

Beside it, two limits, each the same rows, means and runs tested
two-sided at alpha with Holm's correction and no threshold: the Poisson
limit, as if a function's seconds a run varied as a Poisson count of its
samples (variance m / rate a run), and the known noise, with each
function's own relative variance a run measured over every base run of
the pools at one machine speed (a test that knows the noise exactly, as
no gate of a few runs can). task-clock's samples come at a steady
period, so its counts vary less than a Poisson count's: the gate, which
weighs the runs' own spread, can pass the first limit, not the second.

Python 3 standard library only; progress on stderr.
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_power  # noqa: E402  (drawing, rates)
import sequential_power  # noqa: E402  (the pools)


def judge(a, exe_b, base, exe_n, new, mins):
    p = subprocess.run([a.pcprof, "diff", "--format", "json", "--threshold", "0",
                        "--min-seconds", "%g" % mins, "--base", exe_b] + base +
                       ["--new", exe_n] + new, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        compare_power.die("pcprof diff failed (%d): %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def at_threshold(j, t, mins):
    """The gate's verdict at threshold t (a fraction): regressed, and the
    largest slower row's name."""
    slow = [f for f in j["functions"] if f["p_adjusted"] is not None and
            f["p_adjusted"] <= j["alpha"] and f["change_seconds"] > 0 and
            f["change_seconds"] >= max(t * f["base_seconds"], mins)]
    slow.sort(key=lambda f: -f["change_seconds"])
    return bool(slow), slow[0]["name"] if slow else None


def normal_two_sided(z):
    return math.erfc(abs(z) / math.sqrt(2))


def limit(j):
    """The sampling-limit test on the family's rows: regressed, and the
    largest slower row's name."""
    rate, nb, nn = j["base"]["rate_hz"], j["base"]["runs"], j["new"]["runs"]
    rows = []
    for f in j["functions"]:
        if f["p_adjusted"] is None or f["name"] == "[elapsed]":
            continue
        mb, mn = f["base_seconds"], f["new_seconds"]
        se = math.sqrt(mb / (rate * nb) + mn / (rate * nn))
        rows.append((normal_two_sided((mn - mb) / se) if se > 0 else 1.0, mn - mb,
                     f["name"]))
    rows.sort()
    adj, run, slow = len(rows), 0.0, []
    for k, (p, d, name) in enumerate(rows):
        run = max(run, min(1.0, (adj - k) * p))
        if run <= j["alpha"] and d > 0:
            slow.append((d, name))
    slow.sort(reverse=True)
    return bool(slow), slow[0][1] if slow else None


def run_noise(a, exes, base):
    """Each function's relative variance a run, over every base run of the
    pools, its seconds scaled to the runs' mean CPU seconds as the gate
    scales them (side_normalize): the noise of its counts on this machine,
    known as well as 160 runs know it. Cached in the pools' directory."""
    path = os.path.join(a.out, "run_noise.json")
    if os.path.exists(path):
        return json.load(open(path))
    runs = []
    for r in base:
        j = judge(a, exes["base"], [r], exes["base"], [r], 0.01)
        runs.append((j["base"]["program_seconds"],
                     {f["name"]: f["base_seconds"] for f in j["functions"]}))
    mean_prog = sum(p for p, _ in runs) / len(runs)
    noise = {}
    for name in set(k for _, v in runs for k in v):
        x = [v.get(name, 0.0) * mean_prog / p for p, v in runs]
        m = sum(x) / len(x)
        if m > 0:
            noise[name] = sum((y - m) ** 2 for y in x) / (len(x) - 1) / (m * m)
    json.dump(noise, open(path, "w"))
    return noise


def known(j, noise):
    """The test that knows each row's run-to-run noise (run_noise): z with
    that variance, Holm over the family, no threshold; regressed, and the
    largest slower row's name."""
    nb, nn = j["base"]["runs"], j["new"]["runs"]
    rows = []
    for f in j["functions"]:
        if f["p_adjusted"] is None or f["name"] not in noise:
            continue
        mb, mn = f["base_seconds"], f["new_seconds"]
        se = math.sqrt(noise[f["name"]] * (mb * mb / nb + mn * mn / nn))
        rows.append((normal_two_sided((mn - mb) / se) if se > 0 else 1.0, mn - mb,
                     f["name"]))
    rows.sort()
    run, slow = 0.0, []
    for k, (p, d, name) in enumerate(rows):
        run = max(run, min(1.0, (len(rows) - k) * p))
        if run <= j["alpha"] and d > 0:
            slow.append((d, name))
    slow.sort(reverse=True)
    return bool(slow), slow[0][1] if slow else None


def cell(a, rng, exes, base, pool, other, n, reps, mins):
    """reps drawn comparisons: hits a threshold, and the limits'."""
    hits, lim, kn = {t: 0 for t in a.thresholds}, 0, 0
    for _ in range(reps):
        if other == "base":
            pick = rng.sample(base, 2 * n)
            left, right = pick[:n], pick[n:]
        else:
            left, right = rng.sample(base, n), rng.sample(pool, n)
        j = judge(a, exes["base"], left, exes["base" if other == "base" else other],
                  right, mins)
        aa = other in ("base", "same")
        for t in a.thresholds:
            reg, first = at_threshold(j, t / 100, mins)
            hits[t] += reg and (aa or first == "stage_transform")
        reg, first = limit(j)
        lim += reg and (aa or first == "stage_transform")
        reg, first = known(j, a.noise)
        kn += reg and (aa or first == "stage_transform")
    return hits, lim, kn


def wall_cpu(a, exes, base):
    """The base runs' mean CPU seconds, as run_noise read them."""
    j = judge(a, exes["base"], base[:1], exes["base"], base[:1], 0.01)
    return j["base"]["program_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--pools", required=True, help="bench/sequential_power.py's --out")
    ap.add_argument("--budgets", default="10,20")
    ap.add_argument("--runs", help="runs a side instead of --budgets: 10,20")
    ap.add_argument("--thresholds", default="0.5,1,1.5,2,3", help="percents")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--fa-reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    a.pcprof = os.path.abspath(os.path.join(a.build, "pcprof"))
    a.out = os.path.abspath(a.pools)
    a.thresholds = [float(x) for x in a.thresholds.split(",") if x]
    setup = json.load(open(os.path.join(a.out, "setup.json")))
    exes = setup["exes"]
    base, news, wall, mins = sequential_power.pools(a)
    rng = random.Random(a.seed)
    a.noise = run_noise(a, exes, base)
    print("pcprof compare's --threshold against the sampling limit "
          "(bench/threshold_power.py)")
    print("machine: %d CPUs, Linux %s; stage_transform holds %d%% of the work; a run "
          "%.2f s of CPU unprofiled, %.2f s of wall time profiled" % (
              setup["cpus"], setup["kernel"], setup["share"], setup["run_seconds"], wall))
    print("pools: %d base runs; %s; --min-seconds %.5f, alpha 0.01; the fixed design" % (
        len(base), ", ".join("%d %s" % (len(v), k) for k, v in sorted(news.items())), mins))
    print("stage_transform's seconds a run vary by %.1f %% (at one machine speed), its "
          "samples' Poisson count by %.1f %%" % (
              100 * math.sqrt(a.noise.get("stage_transform", 0)),
              100 * math.sqrt(1 / (setup["share"] / 100.0 * wall_cpu(a, exes, base) * 10000))))
    rows = [("base", "A/A, base vs base", a.fa_reps), ("same", "A/A, regress-again", a.fa_reps)] + \
        [("s%d" % lv, "%d%% slower" % lv, a.reps) for lv in setup["levels"]]
    sizes = [(int(x), int(x) * wall) for x in a.runs.split(",") if x] if a.runs else \
        [(max(3, int(float(b) / wall)), float(b)) for b in a.budgets.split(",") if b]
    for n, b in sizes:
        print()
        print("%d runs a side (--budget %.0fs at this wall time a run)" % (n, b))
        print("%-20s %s  %-16s  %s" % ("", "  ".join("%-16s" % ("--threshold %g" % t)
                                                   for t in a.thresholds),
                                       "Poisson limit", "known noise"))
        for other, label, reps in rows:
            pool = base if other == "base" else news.get(other, [])
            if len(pool) < (2 * n if other == "base" else n):
                print("%-20s pool too small (%d)" % (label, len(pool)))
                continue
            hits, lim, kn = cell(a, rng, exes, base, pool, other, n, reps, mins)
            cells = [hits[t] for t in a.thresholds] + [lim, kn]
            print("%-20s %s" % (label, "  ".join(
                "%-16s" % ("%.1f%% (%d/%d)" % (100.0 * k / reps, k, reps)) for k in cells)),
                flush=True)


if __name__ == "__main__":
    main()
