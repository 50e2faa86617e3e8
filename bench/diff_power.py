#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof diff: detection power and false-alarm rate, on real profiles.

    python3 bench/diff_power.py --build build            # the figures
    python3 bench/diff_power.py --build build --timer posix
    python3 bench/diff_power.py --help                   # options

Builds tests/progs/regress.c with one function (stage_transform) holding
--share percent of the work, unchanged and made slower by each of --levels
percent, into BUILD/bench/. Profiles a pool of runs of each build under
libpc.so, each run --seconds of CPU, then draws comparisons from the pools:
--runs base runs against --runs new runs, all distinct, --reps times.
The runs of all builds are made in turns, as docs/ci.md advises.

- false alarms: base against base (identical builds); the rate of exit 1,
  also without the minimum effect (--threshold 0 --min-seconds 0).
- power: base against each slower build; the rate of exit 1 with
  stage_transform named first.

Runs drawn from a pool are reused across comparisons, so the rates are
those of the procedure on this machine's run-to-run spread, known as well as
the pools are large (--pool). Needs build/pcprof and build/libpc.so.
Python 3 standard library only; prints tables on stdout, progress on stderr.
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "tests", "progs", "regress.c")
CC = os.environ.get("CC", "cc")


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    note("diff_power: " + msg)
    sys.exit(2)


def env_for(a, out):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("PC_") or k in ("LD_PRELOAD", "GMON_OUT_PREFIX"):
            del e[k]
    e.update({"LD_PRELOAD": a.lib, "PC_OUT": out, "PC_VERBOSE": "1"})
    if a.hz:
        e["PC_HZ"] = str(a.hz)
    if a.timer:
        e["PC_TIMER"] = a.timer
    return e


def build(a, name, flags):
    exe = os.path.join(a.out, name)
    cmd = [CC, "-O2", "-g", "-pthread"] + flags + ["-o", exe, SRC]
    stamp = exe + ".cmd"
    if os.path.exists(exe) and os.path.exists(stamp) and \
            open(stamp).read() == " ".join(cmd) and \
            os.path.getmtime(exe) >= os.path.getmtime(SRC):
        return exe
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        die("compiling failed:\n" + p.stderr)
    with open(stamp, "w") as f:
        f.write(" ".join(cmd))
    return exe


def profile(a, exe, scale, out):
    p = subprocess.run([exe, "%.4f" % scale, "1"], env=env_for(a, out),
                       capture_output=True, text=True)
    if p.returncode or not os.path.exists(out):
        die("%s failed (%d):\n%s" % (exe, p.returncode, p.stderr))
    m = re.search(r"(\d+) samples \((\d+) signals\) in ([\d.]+) s CPU", p.stderr)
    timer = re.search(r"timer (\w+)", p.stderr)
    return (int(m.group(1)), int(m.group(2)), float(m.group(3)),
            timer.group(1) if timer else "posix") if m else None


def pools(a, builds, scale):
    """Profile each build's pool, {name: (exe, runs)}, in turns (a run of
    each build, then the next round), so that a machine that drifts in speed
    meanwhile weighs on every build alike. Returns {name: [gmon paths]} and
    the base runs' (samples, signals, cpu, timer)."""
    files = {name: [] for name in builds}
    info = []
    for i in range(max(n for _, n in builds.values())):
        for name, (exe, n) in builds.items():
            if i >= n:
                continue
            out = os.path.join(a.tmp, "%s.%d.gmon" % (name, i))
            got = profile(a, exe, scale, out)
            if name == "base":
                info.append(got)
            files[name].append(out)
        note("diff_power: round %d of runs done" % (i + 1))
    return files, info


def diff(a, base_exe, base, new_exe, new, extra=()):
    p = subprocess.run([a.pcprof, "diff", "--format", "json", "--alpha",
                        str(a.alpha), "--metric", a.metric] + list(extra) +
                       ["--base", base_exe] + base + ["--new", new_exe] + new,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        die("pcprof diff failed (%d): %s" % (p.returncode, p.stderr))
    j = json.loads(p.stdout)
    first = j["functions"][0]["name"] if j["functions"] else None
    return p.returncode, first, j


def wilson(k, n, z=1.96):
    """95 % Wilson interval of a rate k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--share", type=int, default=10,
                    help="the slowed function's share of the work, percent")
    ap.add_argument("--levels", default="5,10,15,20,25,30,40",
                    help="slowdowns to measure, percent")
    ap.add_argument("--seconds", type=float, default=2.0,
                    help="CPU seconds of a base run")
    ap.add_argument("--runs", type=int, default=3, help="runs a side")
    ap.add_argument("--pool", type=int, default=16,
                    help="base runs profiled (false alarms draw both sides "
                    "from them)")
    ap.add_argument("--level-pool", type=int, default=6,
                    help="runs profiled of each slower build")
    ap.add_argument("--reps", type=int, default=400,
                    help="comparisons drawn for each rate")
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--metric", default="self")
    ap.add_argument("--hz", type=int, default=0, help="PC_HZ (default: libpc's)")
    ap.add_argument("--timer", default="",
                    help="PC_TIMER for libpc (e.g. posix: the tick-limited timer)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.pool < 2 * a.runs or a.level_pool < a.runs:
        die("pools too small for --runs %d" % a.runs)
    b = os.path.abspath(a.build)
    a.pcprof = os.path.join(b, "pcprof")
    a.lib = os.path.join(b, "libpc.so")
    for f in (a.pcprof, a.lib):
        if not os.path.exists(f):
            die("%s is missing: run make first" % f)
    a.out = os.path.join(b, "bench")
    os.makedirs(a.out, exist_ok=True)
    a.tmp = tempfile.mkdtemp(prefix="pc-diff-power-")
    rng = random.Random(a.seed)
    levels = [int(x) for x in a.levels.split(",") if x]
    t0 = time.time()

    base_exe = build(a, "regress-p%d" % a.share, ["-DTARGET_PCT=%d" % a.share])
    slow = {lv: build(a, "regress-p%d-s%d" % (a.share, lv),
                      ["-DTARGET_PCT=%d" % a.share, "-DSLOW=1",
                       "-DSLOW_PCT=%d" % lv]) for lv in levels}
    # SCALE 1 is about a second of CPU: calibrate on the base build
    p = subprocess.run(["/usr/bin/env", "python3", "-c",
                        "import os,subprocess,sys; subprocess.run(sys.argv[1:]);"
                        "t=os.times(); print(t.children_user+t.children_system)",
                        base_exe, "1", "1"], capture_output=True, text=True)
    per_unit = float(p.stdout.split()[-1])
    scale = a.seconds / per_unit
    note("diff_power: %.3f s of CPU for SCALE 1; runs of SCALE %.3f" %
         (per_unit, scale))

    note("diff_power: profiling %d base runs and %d of each slower build" %
         (a.pool, a.level_pool))
    builds = {"base": (base_exe, a.pool)}
    for lv in levels:
        builds["s%d" % lv] = (slow[lv], a.level_pool)
    files, info = pools(a, builds, scale)
    base = files["base"]
    levels_files = {lv: files["s%d" % lv] for lv in levels}
    samples = sum(i[0] for i in info) / len(info)
    signals = sum(i[1] for i in info) / len(info)
    cpu = sum(i[2] for i in info) / len(info)
    timer = info[0][3]

    # false alarms: identical builds, both sides drawn from the base pool
    fa = fa_raw = 0
    for _ in range(a.reps):
        pick = rng.sample(base, 2 * a.runs)
        rc, _, _ = diff(a, base_exe, pick[:a.runs], base_exe, pick[a.runs:])
        fa += rc == 1
        rc, _, _ = diff(a, base_exe, pick[:a.runs], base_exe, pick[a.runs:],
                        ("--threshold", "0", "--min-seconds", "0"))
        fa_raw += rc == 1
    # power: base against each slower build
    power = {}
    model = None
    for lv in levels:
        hit = 0
        for _ in range(a.reps):
            rc, first, j = diff(a, base_exe, rng.sample(base, a.runs), slow[lv],
                                rng.sample(levels_files[lv], a.runs))
            hit += rc == 1 and first == "stage_transform"
            model = j["model"]
        power[lv] = hit

    print("pcprof diff: detection power and false alarms (bench/diff_power.py)")
    print("machine: %d CPUs, %s; libpc timer %s; %.0f samples a CPU "
          "second, %.0f samples (%.0f signals) in %.2f s CPU a base run" % (
              os.cpu_count(), os.uname().release, timer,
              samples / cpu, samples, signals, cpu))
    print("stage_transform holds %d%% of the work; %d runs a side; alpha %g; "
          "metric %s; pools: %d base runs, %d of each slower build; %d "
          "comparisons a rate" % (a.share, a.runs, a.alpha, a.metric, a.pool,
                                  a.level_pool, a.reps))
    print()
    for what, k in (("", fa), (" (no minimum effect)", fa_raw)):
        lo, hi = wilson(k, a.reps)
        print("false alarms on identical builds%s: %d of %d = %.2f%% "
              "(95%% interval %.2f%% to %.2f%%)" % (what, k, a.reps,
                                                 100.0 * k / a.reps, 100 * lo,
                                                 100 * hi))
    print()
    print("%9s  %9s  %s" % ("slowdown", "detected", "95% interval"))
    smallest = {}
    for lv in levels:
        lo, hi = wilson(power[lv], a.reps)
        rate = power[lv] / a.reps
        print("%8d%%  %8.1f%%  %5.1f%% to %5.1f%%" % (lv, 100 * rate, 100 * lo,
                                                   100 * hi))
        for want in (0.5, 0.9):
            if rate >= want and want not in smallest:
                smallest[want] = lv
    print()
    for want in (0.5, 0.9):
        print("smallest slowdown detected in %d%% of comparisons: %s" % (
            100 * want, "%d%%" % smallest[want] if want in smallest
            else "none of those measured"))
    if model:
        print("last fit: %.2f ms an independent observation, %.1f%% relative "
              "run-to-run noise, prior df %s" % (
                  1e3 * model["seconds_per_observation"],
                  100 * model["relative_run_noise"], model["prior_df"]))
    note("diff_power: %.0f s" % (time.time() - t0))
    shutil.rmtree(a.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
