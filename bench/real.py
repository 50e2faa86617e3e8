#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof on Debian's own programs, against perf on the same runs.

    python3 bench/real.py --build build            # every program
    python3 bench/real.py --build build xz sqlite  # some of them
    python3 bench/real.py --hz 4000 --small        # as the tests record them

For each program (tests/e2e/shipped.py lists them), one run of `pcprof run
--no-report` is recorded by perf (task-clock, 1000 Hz, with call chains)
at the same time, so that both see the same run; separate runs time the
bare command and `pcprof run`. Printed per program:

    sampled   libpc's sampled CPU seconds over perf's
    shown     the same with the report's "not sampled" line (the CPU that
              the processes' clocks measured before libpc started, after
              threads' last samples, and while writing): what the report
              accounts for
    named     the share of samples on real function names, libpc's and perf's
              (not an address, OBJ+0xOFFSET, or [something])
    tvd obj   total variation distance between the two by object, and in
              brackets what sampling alone gives on average
    tvd fn    the same by (object, function), for names both can give;
              what one side cannot name is lumped per object
    wall      pcprof run's wall time over the bare command's (median of 3)

perf counts kernel time where it is spent ([kernel.kallsyms]); libpc
credits it to the user code the system call or page fault returns to. So
a perf sample in the kernel is counted at the first user-space frame of
its call chain; each side is normalised to its own total. perf's samples
in libpc's own handler (libpc.so, libgcc_s's unwinder), which libpc cannot
see, are left out; so are pcprof's own processes.
Needs perf, the programs, and build/libpc.so and build/pcprof. Python 3
standard library only. Tables go to stdout, progress to stderr.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
import shipped  # noqa: E402  (the programs and perf's reading, shared with the tests)


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def measure(prog, build, d, reps, hz):
    """One program: perf and libpc on the same run (pcprof run under perf
    record), then timed runs of the bare command and of pcprof run."""
    pcprof = os.path.join(build, "pcprof")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PC_") and k != "LD_PRELOAD"}
    stdin = prog.stdin.encode() if prog.stdin else None
    rdir = os.path.join(d, "run-" + re.sub(r"\W", "_", prog.name))
    shutil.rmtree(rdir, ignore_errors=True)
    pdata = os.path.join(d, "perf.data")
    penv = dict(env, PC_VERBOSE="1")
    if hz:
        penv.update(PC_TIMER="taskclock", PC_HZ=str(hz))
    p = subprocess.run(shipped.record_argv(pdata) + ["--", pcprof, "run", "--no-report",
                                                    "-o", rdir, "--"] + prog.argv,
                       input=stdin, env=penv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=900)
    if p.returncode:
        note("%s: exit %d: %s" % (prog.name, p.returncode,
                                  p.stderr[-500:].decode(errors="replace")))
    q = subprocess.run([pcprof, "report", "--format", "json", "--top", "0", rdir],
                       capture_output=True, text=True, timeout=600)
    if q.returncode:
        note("%s: pcprof report: %s" % (prog.name, q.stderr))
        return None
    j = json.loads(q.stdout)
    ours, unsampled = shipped.pcprof_table(j)
    theirs, perf_cpu = shipped.perf_table(pdata)
    pc_cpu = j["cpu_seconds"]
    signals = sum(int(n) for n in re.findall(rb"\((\d+) signals\)", p.stderr))
    named = lambda t: sum(c for (_, n), c in t.items() if not shipped.unnamed(n)) / \
        max(sum(t.values()), 1e-12)

    def lumped(t):
        out = {}
        for (o, n), c in t.items():
            k = (o, "[unnamed]") if shipped.unnamed(n) else (o, n)
            out[k] = out.get(k, 0) + c
        return out

    walls = {"bare": [], "pcprof": []}
    for _ in range(reps):
        for how in ("bare", "pcprof"):
            cmd = prog.argv if how == "bare" else \
                [pcprof, "run", "--no-report", "-o", os.path.join(d, "wall-run")] + prog.argv
            t0 = time.time()
            subprocess.run(cmd, input=stdin, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=900)
            walls[how].append(time.time() - t0)
            shutil.rmtree(os.path.join(d, "wall-run"), ignore_errors=True)
    a, b = shipped.by_object(ours), shipped.by_object(theirs)
    return {
        "program": prog.name, "processes": len(j["processes"]), "signals": signals,
        "perf_cpu": perf_cpu, "pcprof_cpu": pc_cpu, "unsampled": unsampled,
        "sampled": pc_cpu / perf_cpu if perf_cpu else float("nan"),
        "shown": (pc_cpu + unsampled) / perf_cpu if perf_cpu else float("nan"),
        "named": named(ours), "named_perf": named(theirs),
        "tvd_obj": shipped.tvd(a, b),
        "chance_obj": shipped.chance_tvd(a, max(signals, 1), b, round(perf_cpu * 1000)),
        "tvd_fn": shipped.tvd(lumped(ours), lumped(theirs)),
        "wall": statistics.median(walls["pcprof"]) / statistics.median(walls["bare"]),
        "bare_s": statistics.median(walls["bare"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of each side")
    ap.add_argument("--hz", type=int, default=0,
                    help="record with PC_TIMER=taskclock PC_HZ=HZ (default: pcprof run's own)")
    ap.add_argument("--small", action="store_true", help="the tests' shorter runs")
    ap.add_argument("only", nargs="*", help="programs whose name contains one of these")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if not shipped.available():
        note("bench: perf cannot record task-clock here (apt-get install linux-perf)")
        return 2
    d = tempfile.mkdtemp(prefix="pc-real-")
    rows = []
    for name, prog in shipped.programs(d, build, TOP, big=not a.small).items():
        if a.only and not any(o in name for o in a.only):
            continue
        gone = shipped.missing(prog)
        if gone:
            note("%s: %s not installed; skipped" % (name, gone))
            continue
        if prog.setup:
            prog.setup()
        note("%s ..." % name)
        r = measure(prog, build, d, a.reps, a.hz)
        if r:
            rows.append(r)
    print("| program | processes | CPU s (perf) | sampled | shown | named (perf) "
          "| TVD by object (chance) | TVD by function | wall, pcprof run / bare |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %.2f | %.1f %% | %.1f %% | %.1f %% (%.1f %%) | %.3f (%.3f) | %.3f "
              "| %.2f (%.2f s) |" % (
                  r["program"], r["processes"], r["perf_cpu"], 100 * r["sampled"],
                  100 * r["shown"], 100 * r["named"], 100 * r["named_perf"], r["tvd_obj"],
                  r["chance_obj"], r["tvd_fn"], r["wall"], r["bare_s"]))
    shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
