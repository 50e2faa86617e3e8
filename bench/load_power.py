#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare's CPU gate under load: does it ever blame the wrong
function (issue 36)?

    python3 bench/load_power.py --build build                  # 10 comparisons
    python3 bench/load_power.py --build build --hogs 0 --reps 5
    python3 bench/load_power.py --help

Builds tests/progs/regress.c with stage_transform holding --share percent
of the work, and again with it --slow percent slower (as
bench/compare_power.py builds them, into BUILD/bench/), starts --hogs busy
loops (`sh -c 'while :; do :; done'`, not pinned: the scheduler moves them
and the runs alike; two on 2 CPUs make a load of about 4 with the
comparison's own runs), and runs --reps `pcprof compare --budget B` of the
base build against the slower one. For each: the exit status, the
sequential verdict and its runs a side, the functions found slower and
faster, and the load average (1 minute) before and after. It holds when
every comparison either names stage_transform slower and no other
function slower, or says undecided (or unchanged) with no function slower:
never another function blamed. One line a comparison and a summary on
stdout. Python 3 standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_power  # noqa: E402  (its builds of regress.c)
import machine  # noqa: E402  (the load)

TARGET = "stage_transform"


def one(a, base, slow, scale):
    argv = [a.pcprof, "compare", "-q", "--format", "json", "--budget", a.budget,
            "--base", base, "%.4f" % scale, "--new", slow, "%.4f" % scale]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if p.returncode not in (0, 1):
        sys.exit("load_power: pcprof compare failed (%d): %s" % (p.returncode,
                                                               p.stderr[-2000:]))
    j = json.loads(p.stdout)
    fn = lambda st: ["%s %+.1f%%" % (f["name"], 100 * f["change"])
                     for f in j["functions"] if f["status"] == st]
    return p.returncode, j, fn("slower"), fn("faster")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--hogs", type=int, default=2, help="busy loops, not pinned (2)")
    ap.add_argument("--reps", type=int, default=10, help="comparisons (10)")
    ap.add_argument("--budget", default="10s", help="pcprof compare --budget (10s)")
    ap.add_argument("--share", type=int, default=10,
                    help="stage_transform's share of the work, percent (10)")
    ap.add_argument("--slow", type=int, default=10,
                    help="how much slower stage_transform is, percent (10)")
    ap.add_argument("--run-seconds", type=float, default=0.3,
                    help="CPU seconds a run, unprofiled (0.3)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.pcprof = os.path.join(a.build, "pcprof")
    exes = compare_power.builds(types.SimpleNamespace(build=a.build, share=a.share,
                                                      levels=[a.slow]))
    base, slow = exes["base"], exes["s%d" % a.slow]
    scale = compare_power.scale_for(base, a.run_seconds)
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.hogs)]
    print("pcprof compare --budget %s, stage_transform %d%% of the work and %d%% slower, "
          "runs of %.2f s of CPU unprofiled, beside %d unpinned busy loops on %d CPUs"
          % (a.budget, a.share, a.slow, a.run_seconds, a.hogs, os.cpu_count()), flush=True)
    right = wrong = undecided = 0
    loads = []
    try:
        time.sleep(5 if a.hogs else 0)      # the load average's first climb
        for r in range(a.reps):
            l0 = machine.load1()
            t0 = time.time()
            rc, j, slower, faster = one(a, base, slow, scale)
            l1 = machine.load1()
            loads += [l0, l1]
            q = j.get("sequential", {})
            names = [s.split()[0] for s in slower]
            bad = [n for n in names if n != TARGET]
            if bad or (rc == 1 and TARGET not in names):
                wrong += 1
                tag = "WRONG"
            elif rc == 1:
                right += 1
                tag = "right"
            else:
                undecided += 1
                tag = "not named"
            print("%2d: exit %d, %s after %s runs a side, %.0f s, load %.1f to %.1f; slower: "
                  "%s; faster: %s; %s" % (r + 1, rc, q.get("verdict"), q.get("runs"),
                                          time.time() - t0, l0, l1,
                                          ", ".join(slower) or "none",
                                          ", ".join(faster) or "none", tag), flush=True)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    print("%d of %d named %s alone, %d decided nothing (undecided or unchanged), %d blamed "
          "another function; load (1 min) %.1f to %.1f" % (
              right, a.reps, TARGET, undecided, wrong, min(loads), max(loads)))
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
