#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The wall gate against the tests that know only its noise, on the same
runs (issue 36): bench/threshold_power.py's "Poisson limit" and "known
noise", for a wait.

    python3 bench/wall_limit_power.py --build build --out DIR      # pools, tables
    python3 bench/wall_limit_power.py --build build --analyse DIR
    python3 bench/wall_limit_power.py --build build --analyse DIR --runs '' \
        --budgets 10,20
    python3 bench/wall_limit_power.py --help

Builds tests/progs/wallgate.c as bench/wall_power.py does (sleeper()
sleeps 2 ms a round on average; --levels ms more a round: 0.1, 0.2 and
0.4 make its wait 5, 10 and 20 % longer; and the same source built
again), then records pools of real runs with `pcprof compare --metric
wall --runs POOL -o` (every run kept), the base build against each other
build in turn, at --rounds rounds a run.

Then draws comparisons from the pools (--runs a side, distinct: a base
and a new run of one pool with the same number, made in turns as pcprof
compare makes them; for base against base, base runs of one pool) and
judges each by `pcprof diff --metric wall` at pcprof compare's defaults
(the --threshold and --min-seconds the pools' comparisons used), or
--gate's options: exit 1 with sleeper's wait among the slower rows
("names"), exit 1 naming a row other than it, filler's pipe read (which
waits for the main thread's next round) and [elapsed] ("other": a false
naming); and beside it, on the same runs, tests of sleeper's wait alone,
two-sided at alpha (a test of one row needs no correction; the gate's
Holm over its family costs it a little):

- split limit: its seconds a run varying only by the wall sampler's
  split of the side's off-CPU time between the calls (m (1 - p) / hz a
  run, p its share; a thread's time off the CPU is exact), the least
  noise the sampler allows;
- known noise: varying as much as they did over the base runs of each
  pool, pooled (the program's own random sleeps, the sleep's overshoot under
  load, and the split): a test that knows the noise exactly, as no gate
  of a few runs can; and the same without the runs whose wait lost its
  name ("its name kept": libpc's walk of the wait, reused for its later
  rounds, lost sleeper's frame in a few runs, and all of the run's wait
  went to a row of no function), at those runs' noise.

--budgets 10,20 draws, for each budget, as many runs a side as it fits
a pool's run (its mean wall time, as bench/sequential_power.py turns a
budget into runs) and judges each drawn comparison twice: the fixed
design (`pcprof diff --metric wall` on all the runs, as above) and the
sequential one (the same with `--looks N`, which replays pcprof compare's
looks after each pair up to the first that decides: its verdict, and the
runs a side it used, median and 90th percentile). Runs drawn from a pool
are reused across comparisons, so the rates are rough where a budget's
runs are most of a pool.

Python 3 standard library only; progress on stderr.
"""

import argparse
import glob
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402  (the hog, the load)
import wall_power  # noqa: E402  (the builds)

SLEEP = "[off-cpu: clock_nanosleep] from sleeper"
RUNQ = "[off-cpu: runqueue]"
# filler's wait for the main thread's next round grows with the sleep, as
# does the whole run's elapsed time: neither is a false naming
FILLER = "[off-cpu: read pipe] from filler"


def note(msg):
    print("wall_limit_power: " + msg, file=sys.stderr, flush=True)


def die(msg):
    note(msg)
    sys.exit(2)


def record(a):
    out = os.path.join(a.build, "bench")
    os.makedirs(out, exist_ok=True)
    exes = {"base": wall_power.build(out, "wallgate-base", []),
            "same": wall_power.build(out, "wallgate-same", [])}
    for lv in a.levels:
        exes["plus%s" % lv] = wall_power.build(out, "wallgate-plus%s" % lv,
                                               ["-DEXTRA_MS=%s" % lv])
    setup = {"exes": exes, "levels": a.levels, "pool": a.pool, "rounds": a.rounds,
             "hog": a.hog, "cpus": os.cpu_count(), "kernel": os.uname().release,
             "load": []}
    with machine.hog_on_last_cpu(a.hog):
        for other in ["same"] + ["plus%s" % lv for lv in a.levels]:
            setup["load"].append(machine.load1())
            d = os.path.join(a.out, "pool-%s" % other)
            t0 = time.monotonic()
            p = subprocess.run([a.pcprof, "compare", "--metric", "wall", "-q", "--format",
                                "json", "--runs", str(a.pool), "-o", d, "--base",
                                exes["base"], str(a.rounds), "--new", exes[other],
                                str(a.rounds)], capture_output=True, text=True)
            if p.returncode not in (0, 1):
                die("pcprof compare failed (%d): %s" % (p.returncode, p.stderr))
            with open(os.path.join(d, "verdict.json"), "w") as f:
                f.write(p.stdout)
            note("pool %s: %d runs a side, %.0f s, load %.1f" % (
                other, a.pool, time.monotonic() - t0, machine.load1()))
    setup["load"].append(machine.load1())
    with open(os.path.join(a.out, "setup.json"), "w") as f:
        json.dump(setup, f)


def diff(a, exe_b, base, exe_n, new, more=()):
    p = subprocess.run([a.pcprof, "diff", "--metric", "wall", "--format", "json"] +
                       list(more) + ["--base", exe_b] + base + ["--new", exe_n] + new,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        die("pcprof diff failed (%d): %s" % (p.returncode, p.stderr))
    return p.returncode, json.loads(p.stdout)


def per_run(a, exe, run, cache):
    """Run's seconds in each row, and the sampler's rate (cached)."""
    if run in cache:
        return cache[run]
    _, j = diff(a, exe, [run], exe, [run], ["--threshold", "0", "--min-seconds", "0"])
    rows = {f["name"]: f["base_seconds"] for f in j["functions"]}
    off = sum(v for k, v in rows.items() if k.startswith("[off-cpu: ") and k != RUNQ
              and not k.startswith(RUNQ))
    cache[run] = {"rows": rows, "off": off, "hz": a.wall_hz,
                  "runq": sum(v for k, v in rows.items() if k.startswith(RUNQ))}
    return cache[run]


def pools(a):
    setup = json.load(open(os.path.join(a.out, "setup.json")))
    base, news = [], {}
    for d in sorted(glob.glob(os.path.join(a.out, "pool-*"))):
        other = os.path.basename(d)[len("pool-"):]
        base += sorted(glob.glob(os.path.join(d, "base-[0-9]*")))
        news[other] = sorted(glob.glob(os.path.join(d, "new-[0-9]*")))
    return setup, base, news


def draw(rng, setup, base, news, other, n):
    """n runs a side as pcprof compare makes them, in turns: the base and
    new runs of one pool with the same numbers (made a few seconds
    apart), n of them drawn; for base against base, 2n base runs of one
    pool. Runs of different pools, minutes apart, would differ by the
    machine's load then, as no comparison's do."""
    if other == "base":
        pool = rng.choice(sorted(news))
        pick = rng.sample([r for r in base if "/pool-%s/" % pool in r], 2 * n)
        return pick[:n], pick[n:]
    idx = rng.sample(range(len(news[other])), n)
    mine = [r for r in base if "/pool-%s/" % other in r]
    return [mine[i] for i in idx], [news[other][i] for i in idx]


def z_p(d, var):
    return math.erfc(abs(d) / math.sqrt(2 * var)) if var > 0 else (0.0 if d else 1.0)


def limits(a, exes, other, left, right, cache, known_rel):
    """The split limit's and the known noise's p for sleeper's wait."""
    b = [per_run(a, exes["base"], r, cache) for r in left]
    n = [per_run(a, exes[other], r, cache) for r in right]
    mb = sum(x["rows"].get(SLEEP, 0) for x in b) / len(b)
    mn = sum(x["rows"].get(SLEEP, 0) for x in n) / len(n)

    def split(side, m):
        off = sum(x["off"] for x in side) / len(side)
        hz = side[0]["hz"] or 100
        p = min(1.0, m / off) if off > 0 else 0
        return max(1e-6, m * (1 - p) / hz) / len(side)

    # the runs whose wait kept its name (libpc's walk of a wait, kept for
    # its later rounds, lost sleeper's frame in some runs: its seconds
    # went to "[off-cpu: clock_nanosleep]" from nowhere), at the noise
    # of such runs
    kb = [x["rows"].get(SLEEP, 0) for x in b if x["rows"].get(SLEEP, 0) >= mb / 2]
    kn = [x["rows"].get(SLEEP, 0) for x in n if x["rows"].get(SLEEP, 0) >= mn / 2]
    kb_m, kn_m = sum(kb) / max(1, len(kb)), sum(kn) / max(1, len(kn))
    return (z_p(mn - mb, split(b, mb) + split(n, mn)) if mn > mb else 1.0,
            z_p(mn - mb, known_rel[0] * (mb * mb / len(b) + mn * mn / len(n)))
            if mn > mb else 1.0,
            z_p(kn_m - kb_m, known_rel[1] * (kb_m ** 2 / max(1, len(kb)) +
                                             kn_m ** 2 / max(1, len(kn))))
            if kn_m > kb_m else 1.0)


def analyse(a):
    setup, base, news = pools(a)
    exes = setup["exes"]
    exes["base"] = exes["base"]
    cache = {}
    note("reading %d base runs one by one" % len(base))
    sl = [per_run(a, exes["base"], r, cache)["rows"].get(SLEEP, 0) for r in base]
    m = sum(sl) / len(sl)
    # within each pool (the runs a comparison draws), pooled
    known_rel = []
    for kept in (False, True):
        ss = df = 0
        for other in news:
            x = [cache[r]["rows"].get(SLEEP, 0) for r in base if "/pool-%s/" % other in r]
            if kept:
                x = [y for y in x if y >= sorted(x)[len(x) // 2] / 2]
            ss += sum((y - sum(x) / len(x)) ** 2 for y in x)
            df += len(x) - 1
        known_rel.append(ss / df / (m * m))
    lost = sum(1 for r in base if cache[r]["rows"].get(SLEEP, 0) < m / 2)
    rq = sorted(cache[r]["runq"] for r in base)
    hz = cache[base[0]]["hz"]
    print("pcprof compare --metric wall against the tests that know its noise "
          "(bench/wall_limit_power.py)")
    print("machine: %d CPUs, Linux %s; load (1 min) while the pools were made: "
          "%.1f to %.1f%s" % (setup["cpus"], setup["kernel"], min(setup["load"]),
                             max(setup["load"]),
                             "; yes > /dev/null on the last CPU" if setup["hog"] else ""))
    print("pools: %d base runs; %s; %d rounds a run; wall sampler %s Hz" % (
        len(base), ", ".join("%d %s" % (len(v), k) for k, v in sorted(news.items())),
        setup["rounds"], hz))
    print("sleeper's wait: %.4f s a run (base), run to run %.1f %% (%.1f %% without "
          "the %d of %d base runs whose wait lost its name); its split limit "
          "%.1f %% a run; run queue a run: median %.3f s, 90th %.3f s, most %.3f s" % (
              m, 100 * math.sqrt(known_rel[0]), 100 * math.sqrt(known_rel[1]), lost,
              len(base),
              100 * math.sqrt(max(1e-6, m * (1 - m / (sum(cache[r]["off"] for r in base)
                                                       / len(base))) / (hz or 100))) / m,
              rq[len(rq) // 2], rq[int(0.9 * len(rq))], rq[-1]))
    gate_opts = a.gate.split() if a.gate else compare_defaults(a)
    rng = random.Random(a.seed)
    wall = run_wall(a)
    sizes = [(n, "%d runs a side" % n) for n in a.runs]
    sizes += [(max(3, int(b / wall)), "%g s a side (%d runs of %.2f s)" % (
        b, max(3, int(b / wall)), wall)) for b in a.budgets]
    for n, what in sizes:
        print()
        print("%s; pcprof diff --metric wall %s; sequential: the same with "
              "--looks %d" % (what, " ".join(gate_opts), n))
        print("%-20s %-8s %-8s %-8s | %-8s %-8s %-8s %-6s %-6s | %-8s %-8s %s" % (
            "new build", "exit 1", "names", "other", "regr.", "names", "unch.",
            "median", "90th", "split", "known", "name kept"))
        rows = [("base", "A/A, base vs base", a.fa_reps),
                ("same", "A/A, same source", a.fa_reps)]
        rows += [("plus%s" % lv, "+%s ms (%+.0f %%)" % (lv, 100 * float(lv) / 2),
                  a.reps) for lv in setup["levels"]]
        for other, label, reps in rows:
            if setup["pool"] < (2 * n if other == "base" else n):
                print("%-20s pool too small (%d)" % (label, setup["pool"]))
                continue
            print(cell(a, rng, (setup, base, news, exes), other, label, reps, n,
                       gate_opts, cache, known_rel), flush=True)


def compare_defaults(a):
    """pcprof compare's --threshold and --min-seconds as the pools' own
    comparisons used them (pcprof diff's defaults are 5 % and 0.01 s);
    with --min-seconds-of wall, --min-seconds as pcprof compare takes it
    now for --metric wall: 0.1 % of a run's wall time (of the warm-up's;
    here the base runs' mean), not of its CPU time as the pools' did."""
    t, m = [], []
    for d in glob.glob(os.path.join(a.out, "pool-*")):
        j = json.load(open(os.path.join(d, "verdict.json")))
        t.append(j["threshold"])
        m.append(j["min_seconds"] if a.min_seconds_of == "cpu" else
                 0.001 * j["experiment"]["wall_seconds"]["base"])
    return ["--threshold", "%g" % (100 * max(t)), "--min-seconds",
            "%.6f" % (sum(m) / len(m))]


def run_wall(a):
    """A run's wall time in the pools (pcprof compare's mean), as
    bench/sequential_power.py turns a budget into runs a side."""
    w = []
    for d in glob.glob(os.path.join(a.out, "pool-*")):
        e = json.load(open(os.path.join(d, "verdict.json")))["experiment"]
        w += [e["wall_seconds"]["base"], e["wall_seconds"]["new"]]
    return sum(w) / len(w)


def slower(j):
    return [f["name"] for f in j["functions"] if f["status"] == "slower"]


def cell(a, rng, pools_, other, label, reps, n, gate_opts, cache, known_rel):
    """One row: the fixed design (pcprof diff on all n runs a side), the
    sequential one (--looks n: verdict, runs used), and the limits."""
    setup, base, news, exes = pools_
    k = dict.fromkeys(("ones", "named", "wrong", "sreg", "snamed", "sunch",
                       "lim", "kn", "kept"), 0)
    used = []
    for _ in range(reps):
        left, right = draw(rng, setup, base, news, other, n)
        exe_n = exes["base" if other == "base" else other]
        rc, j = diff(a, exes["base"], left, exe_n, right, gate_opts)
        slow = slower(j)
        others = [s for s in slow if s not in (SLEEP, FILLER, "[elapsed]")]
        k["ones"] += rc == 1
        k["named"] += rc == 1 and SLEEP in slow
        k["wrong"] += rc == 1 and bool(others)
        if rc == 1 and others and a.verbose:
            note("%s, fixed: slower: %s" % (label, ", ".join(slow)))
        _, j = diff(a, exes["base"], left, exe_n, right,
                    gate_opts + ["--looks", str(n)])
        v = j["sequential"]["verdict"]
        used.append(j["sequential"]["runs"])
        k["sreg"] += v == "regressed"
        k["sunch"] += v == "unchanged"
        k["snamed"] += v == "regressed" and SLEEP in slower(j)
        if v == "regressed" and a.verbose:
            note("%s, sequential at %d: slower: %s" % (
                label, used[-1], ", ".join(slower(j))))
        p1, p2, p3 = limits(a, exes, "base" if other == "base" else other, left,
                            right, cache, known_rel)
        k["lim"] += p1 <= a.alpha
        k["kn"] += p2 <= a.alpha
        k["kept"] += p3 <= a.alpha
    used.sort()
    f = ["%d/%d" % (k[x], reps) for x in ("ones", "named", "wrong", "sreg",
                                           "snamed", "sunch")]
    return "%-20s %-8s %-8s %-8s | %-8s %-8s %-8s %-6d %-6d | %-8s %-8s %s" % (
        label, *f, used[len(used) // 2], used[min(len(used) - 1, int(0.9 * len(used)))],
        *["%d/%d" % (k[x], reps) for x in ("lim", "kn", "kept")])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", help="where the pools go")
    ap.add_argument("--analyse", metavar="DIR", help="only draw the tables from DIR")
    ap.add_argument("--levels", default="0.1,0.2,0.4")
    ap.add_argument("--pool", type=int, default=16, help="runs a side a pool (16)")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--hog", action="store_true")
    ap.add_argument("--runs", default="8", help="runs a side drawn: 8,12")
    ap.add_argument("--budgets", default="",
                    help="seconds a side, 10,20: as many runs a side as a "
                    "pool's run fits in each (with --runs '' for these alone)")
    ap.add_argument("--gate", default="", help="pcprof diff's options, one string")
    ap.add_argument("--min-seconds-of", choices=("wall", "cpu"), default="wall",
                    help="pcprof compare's default --min-seconds, 0.1 %% of a "
                    "run's wall time (wall, as now) or of its CPU time (cpu, "
                    "as before 1.8.0 and as the pools were made)")
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--wall-hz", type=float, default=1000,
                    help="the wall sampler's rate (pcprof compare's: 1000)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--fa-reps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pcprof", help="the pcprof to judge with (BUILD/pcprof)")
    ap.add_argument("--verbose", action="store_true", help="say the rows other than "
                    "sleeper's wait that an exit 1 named")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.pcprof = os.path.abspath(a.pcprof or os.path.join(a.build, "pcprof"))
    a.levels = [x for x in a.levels.split(",") if x]
    a.runs = [int(x) for x in a.runs.split(",") if x]
    a.budgets = [float(x) for x in a.budgets.split(",") if x]
    if a.analyse:
        a.out = os.path.abspath(a.analyse)
    else:
        if not a.out:
            die("--out DIR or --analyse DIR")
        a.out = os.path.abspath(a.out)
        os.makedirs(a.out, exist_ok=True)
        record(a)
    analyse(a)


if __name__ == "__main__":
    main()
