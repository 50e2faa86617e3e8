#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The known-waits table (issue 35): each wait's share of the workers'
wall time, as pcprof's wall profile and perf see it, against the truth.

    python3 bench/wallattr.py --build build [--progs build/tests/progs]
                              [--threads 1,16] [--runs 3] [--scale 0.1]
                              [--perf] [--env PC_WALL_BUDGET=2 ...]

tests/progs/wallattr N SCALE runs N worker threads, each waiting in turn
in nine known waits, each in its own function (wa_*), and prints each
function's seconds from its own clock. pcprof run --clock wall runs it;
its folded stacks (the program's own process) give each function's time:
every stack whose innermost wa_* frame is it, on and off the CPU, its
run-queue time included. Each figure is in points of the workers' summed
lives (the truth's "life"): the function's share, pcprof's or perf's,
minus the truth's. --perf runs the same program under `perf record -e
-a -e sched:sched_switch -g` too (a separate run, as root, of the
-fno-omit-frame-pointer build, wallattr-fp) and gives perf's view: each
switch out of a worker to its switch in, under the wait its stack's libc
leaf names (time off the CPU alone; perf's stacks skip the wa_* frame).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WAITS = ("wa_sleep", "wa_pipe", "wa_poll", "wa_epoll", "wa_mutex", "wa_cond", "wa_fsync",
         "wa_accept", "wa_waitpid")


def main_pid(rdir):
    text = open(os.path.join(rdir, "gmon.out.objects")).read()
    return int(text.split("\npid ")[1].split()[0])


def pcprof_view(pcprof, rdir):
    """{function: seconds} of the run's main process, and its rate."""
    j = json.loads(subprocess.run([pcprof, "report", "--format", "json", rdir],
                                  capture_output=True, text=True, timeout=300).stdout)
    rate = j["profile"]["rate_hz"]
    p = subprocess.run([pcprof, "report", "--format", "folded", "--process",
                        str(main_pid(rdir)), rdir], capture_output=True, text=True, timeout=300)
    out = dict.fromkeys(WAITS, 0.0)
    for line in p.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        sites = [f for f in stack.split(";") if f in out]
        if sites:
            out[sites[-1]] += int(n) / rate
    return out


def run_pcprof(pcprof, exe, n, scale, d, env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PC_") and k != "LD_PRELOAD"}
    e.update(env)
    rdir = os.path.join(d, "run")
    shutil.rmtree(rdir, ignore_errors=True)
    p = subprocess.run([pcprof, "run", "--clock", "wall", "-v", "--no-report", "-o", rdir, "--",
                        exe, str(n), str(scale), d], cwd=d, env=e, capture_output=True,
                       text=True, timeout=300)
    if p.returncode:
        sys.exit("pcprof run: status %d: %s" % (p.returncode, p.stderr[-2000:]))
    truth = json.loads(p.stdout.split("truth: ", 1)[1])
    m = re.search(r"wall clock: .*", [l for l in p.stderr.splitlines()
                                       if re.search(r"wrote \S*/gmon\.out: ", l)][0])
    return truth, pcprof_view(pcprof, rdir), m.group(0) if m else ""


# the wait each libc function at the leaf of a worker's switch out is
# (perf's frame-pointer stacks skip the wa_* frame: the libc function at
# the leaf pushes no frame record, so the walk goes from it to work)
LEAF = [(r"nanosleep", "wa_sleep"), (r"read", "wa_pipe"), (r"^_*poll", "wa_poll"),
        (r"epoll_wait", "wa_epoll"), (r"lll_lock_wait", "wa_mutex"),
        (r"futex_abstimed_wait", "wa_cond"), (r"fsync", "wa_fsync"),
        (r"accept", "wa_accept"), (r"wait4", "wa_waitpid")]


def perf_view(exe, n, scale, d):
    """(truth, {function: seconds off the CPU}) from perf's sched:sched_switch,
    recorded on every CPU (a switch in is the other task's event), with
    frame-pointer stacks of the -fno-omit-frame-pointer build."""
    data = os.path.join(d, "perf.data")
    p = subprocess.run(["perf", "record", "-q", "-a", "-e", "sched:sched_switch", "-g",
                        "-o", data, "--", exe, str(n), str(scale), d], cwd=d,
                       capture_output=True, text=True, errors="replace", timeout=300)
    if p.returncode:
        return None, None
    truth = json.loads(p.stdout.split("truth: ", 1)[1])

    def script(*extra):
        return subprocess.run(["perf", "script", "-i", data] + list(extra),
                              capture_output=True, text=True, errors="replace", timeout=600).stdout

    pid = [l.split()[1] for l in script("-F", "comm,pid").splitlines()
           if l.split()[:1] and l.split()[0].startswith("wallattr")][0]
    # where each of the program's workers was when it left the CPU (a
    # worker: a thread with work in some stack; a chain that stops at the
    # leaf, as the condition variable's does, is named by the leaf)
    chains, workers = [], set()
    for block in script("--pid", pid, "-F", "tid,time,ip,sym").split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        head = lines[0].split()
        user = [l.split()[1] for l in lines[1:]
                if len(l.split()) > 1 and not l.split()[0].startswith("ffff")]
        chains.append((int(head[0]), head[1].rstrip(":"), user))
        if "work" in user:
            workers.add(int(head[0]))
    where = {}
    for tid, t, user in chains:
        fn = next((f for f in user if f in WAITS), None)
        if not fn and tid in workers and user and user[0] != "work":
            fn = next((w for r, w in LEAF if re.search(r, user[0])), None)
        where[(tid, t)] = fn
    out = dict.fromkeys(WAITS, 0.0)
    out_at = {}
    for line in script("-F", "tid,time,trace").splitlines():
        m = re.match(r"\s*(\d+)\s+([\d.]+):.*prev_pid=(\d+) .*next_pid=(\d+)", line)
        if not m:
            continue
        t, prev, nxt = m.group(2), int(m.group(3)), int(m.group(4))
        if (prev, t) in where:
            out_at[prev] = (float(t), where[(prev, t)])
        if nxt in out_at:
            t0, fn = out_at.pop(nxt)
            if fn:
                out[fn] += float(t) - t0
    return truth, out


def points(view, truth):
    return {f: 100.0 * (view[f] - truth[f]) / truth["life"] for f in WAITS}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--progs", default=None)
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--env", action="append", default=[])
    args = ap.parse_args()
    pcprof = os.path.abspath(os.path.join(args.build, "pcprof"))
    progs = os.path.abspath(args.progs or os.path.join(args.build, "tests", "progs"))
    env = dict(e.split("=", 1) for e in args.env)
    d = tempfile.mkdtemp(prefix="pc-bench-wallattr-", dir=os.path.abspath(args.build))
    try:
        for n in [int(x) for x in args.threads.split(",")]:
            rows = {f: [] for f in WAITS}
            prow = {f: [] for f in WAITS}
            notes = []
            for _ in range(args.runs):
                truth, view, line = run_pcprof(pcprof, os.path.join(progs, "wallattr"), n,
                                               args.scale, d, env)
                for f, v in points(view, truth).items():
                    rows[f].append((100.0 * truth[f] / truth["life"], v))
                notes.append(line)
                if args.perf:
                    ptruth, pview = perf_view(os.path.join(progs, "wallattr-fp"), n, args.scale,
                                              d)
                    if ptruth:
                        for f, v in points(pview, ptruth).items():
                            prow[f].append(v)
            print("\n%d thread%s, %d runs (truth: the share of the workers' lives; pcprof's "
                  "and perf's error in points, each run's)\n" % (n, "s" * (n > 1), args.runs))
            print("| wait | truth | pcprof | perf |\n|---|---|---|---|")
            for f in WAITS:
                print("| %s | %s | %s | %s |" % (
                    f, ", ".join("%.1f %%" % t for t, _ in rows[f]),
                    ", ".join("%+.2f" % v for _, v in rows[f]),
                    ", ".join("%+.2f" % v for v in prow[f]) or "-"))
            worst = max(abs(v) for f in WAITS for _, v in rows[f])
            print("\nworst pcprof error: %.2f points" % worst)
            for line in notes:
                print("  " + line)
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
