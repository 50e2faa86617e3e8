#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""libpc's timer choice: what a task-clock sample costs here, what the
start-up probe costs, and whether task-clock falls in step with a periodic
program.

    python3 bench/timer_choice.py --build build [--runs 5]

1. The probe: PC_TIMER=auto's measured cost of a task-clock sample, five
   times with the boot's cache removed first (each a fresh measurement);
   the time 100 runs of /bin/true take under libpc with the cost measured
   each time, read from the cache, and with PC_TIMER=posix (no probe), as
   the probe's cost a process.
2. Phase lock: tests/progs/periodic repeats one 1 ms cycle of work
   (5:3:2); its shares under task-clock at 1000, 4000 and 10000 Hz and
   under POSIX timers at 1000 Hz, against its own measured truth, --runs
   times each, as the worst share error over the tolerance its signals
   allow (3 standard errors): a timer in step with the cycle would be off
   by many tolerances, run after run.
3. pcprof compare's recording against perf: regress-base 2 unprofiled,
   under libpc with compare's settings (PC_TIMER=taskclock PC_HZ=10000
   PC_CALLGRAPH=0 PC_SCOPE=all) and under `perf record -e task-clock -F
   10000` (where perf is installed): each one's wall time, and the four
   stages' shares from pcprof report and perf report.
Python 3 standard library only; tables on stdout.
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

THREE = ("work_alpha", "work_beta", "work_gamma")


def env(a, **kw):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("PC_") and k not in ("LD_PRELOAD", "GMON_OUT_PREFIX")}
    e["LD_PRELOAD"] = a.lib
    e.update(kw)
    return e


def cache_files():
    return glob.glob("/dev/shm/pcprof-timer-cost.%d" % os.geteuid())


def probe(a):
    print("1. the probe (PC_TIMER=auto)")
    costs = []
    for _ in range(5):
        for f in cache_files():
            os.unlink(f)
        d = tempfile.mkdtemp(prefix="pc-timer-")
        p = subprocess.run([a.true], env=env(a, PC_VERBOSE="1", PC_OUT=d + "/g"),
                           capture_output=True, text=True)
        m = re.search(r"timer (\w+) \(chosen: a task-clock sample costs ([\d.]+) us", p.stderr)
        if not m:
            print("   no measurement: %s" % p.stderr.strip())
            return
        costs.append((float(m.group(2)), m.group(1)))
    print("   measured cost of a task-clock sample, 5 fresh probes: %s us; chosen: %s" % (
        ", ".join("%.1f" % c for c, _ in costs), ", ".join(sorted({t for _, t in costs}))))

    def many(n, fresh=False, **kw):
        d = tempfile.mkdtemp(prefix="pc-timer-")
        t0 = time.monotonic()
        for i in range(n):
            if fresh:
                for f in cache_files():
                    os.unlink(f)
            subprocess.run([a.true], env=env(a, PC_OUT="%s/g%d" % (d, i), **kw),
                           capture_output=True)
        return (time.monotonic() - t0) / n
    n = 100
    fresh = many(n, fresh=True)
    cached = many(n)
    posix = many(n, PC_TIMER="posix")
    print("   /bin/true under libpc, %d runs: %.2f ms a run measuring each time, %.2f ms "
          "with the cost kept for the boot, %.2f ms with PC_TIMER=posix (no probe)" % (
              n, 1e3 * fresh, 1e3 * cached, 1e3 * posix))
    print("   the probe: %.2f ms a process measured, %.2f ms read from the cache" % (
        1e3 * (fresh - posix), 1e3 * (cached - posix)))


def shares(a, timer, hz):
    d = tempfile.mkdtemp(prefix="pc-timer-")
    p = subprocess.run([a.periodic, "1.5"], env=env(a, PC_TIMER=timer, PC_HZ=str(hz),
                                                    PC_VERBOSE="1", PC_CALLGRAPH="0",
                                                    PC_OUT=d + "/gmon.out"),
                       capture_output=True, text=True, cwd=d)
    truth = [json.loads(l[7:]) for l in p.stdout.splitlines() if l.startswith("truth: ")][0]
    sig = int(re.search(r"\((\d+) signals\)", p.stderr).group(1))
    q = subprocess.run([a.pcprof, "report", "--format", "json", a.periodic, d + "/gmon.out"],
                       capture_output=True, text=True)
    f = {x["name"]: x["self_seconds"] for x in json.loads(q.stdout)["functions"]}
    got = sum(f.get(n, 0) for n in THREE)
    want = sum(truth[n] for n in THREE)
    worst, tol = 0.0, 0.0
    for n in THREE:
        t = truth[n] / want
        e = abs(f.get(n, 0) / got - t)
        # 3 standard errors of a share from sig independent samples
        s = 3 * math.sqrt(t * (1 - t) / sig)
        if e / s > worst:
            worst, tol = e / s, s
    return worst, sig


def phase(a):
    print("2. phase lock on tests/progs/periodic (a 1 ms cycle, 5:3:2), %d runs each" % a.runs)
    print("   %-22s %-12s %s" % ("timer", "signals", "worst share error, in tolerances "
                                 "(3 standard errors), run by run"))
    for timer, hz in (("taskclock", 1000), ("taskclock", 4000), ("taskclock", 10000),
                      ("posix", 1000)):
        res = [shares(a, timer, hz) for _ in range(a.runs)]
        print("   %-22s %-12d %s" % ("%s at %d Hz" % (timer, hz), res[0][1],
                                     " ".join("%.2f" % w for w, _ in res)))


STAGES = ("stage_transform", "stage_parse", "stage_hash", "stage_emit")


def wall(argv, **kw):
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("timer_choice: %s failed: %s" % (argv[0], p.stderr[-500:]))
    return time.monotonic() - t0, p


def against_perf(a):
    print("3. pcprof compare's recording against perf: regress-base 2")
    exe = os.path.join(os.path.dirname(a.periodic), "regress-base")
    bare, _ = wall([exe, "2"], env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
    d = tempfile.mkdtemp(prefix="pc-timer-")
    t, _ = wall([exe, "2"], env=env(a, PC_TIMER="taskclock", PC_HZ="10000", PC_CALLGRAPH="0",
                                    PC_SCOPE="all", PC_OUT=d + "/gmon.out"))
    q = subprocess.run([a.pcprof, "report", "--format", "json", d], capture_output=True,
                       text=True)
    j = json.loads(q.stdout)
    f = {x["name"]: x["share"] for x in j["profile"]["functions"]} \
        if "profile" in j else {x["name"]: x["share"] for x in j["functions"]}
    print("   unprofiled %.2f s of wall time; libpc (compare's settings) %.2f s: %s" % (
        bare, t, ", ".join("%s %.2f%%" % (n, 100 * f.get(n, 0)) for n in STAGES)))
    perf = shutil.which("perf")
    if not perf:
        print("   perf: not installed")
        return
    data = os.path.join(d, "perf.data")
    t, _ = wall([perf, "record", "-q", "-e", "task-clock", "-F", "10000", "-o", data, exe, "2"],
                env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
    r = subprocess.run([perf, "report", "-i", data, "--stdio", "--sort", "sym"],
                       capture_output=True, text=True)
    pf = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            pf[m.group(2)] = float(m.group(1))
    print("   perf record -e task-clock -F 10000 %.2f s: %s" % (
        t, ", ".join("%s %.2f%%" % (n, pf.get(n, 0)) for n in STAGES)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    a.lib, a.pcprof = os.path.join(b, "libpc.so"), os.path.join(b, "pcprof")
    a.periodic = os.path.join(b, "tests", "progs", "periodic")
    a.true = "/bin/true"
    for f in (a.lib, a.pcprof, a.periodic):
        if not os.path.exists(f):
            sys.exit("timer_choice: %s is missing: run make first" % f)
    print("timer_choice: %d CPUs, Linux %s" % (os.cpu_count(), os.uname().release))
    probe(a)
    phase(a)
    against_perf(a)


if __name__ == "__main__":
    main()
