#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Call-graph overhead on deep stacks (bench/deep.c, 100 frames under every
sample): CPU time (user+sys) of alternating runs, unprofiled, under libpc
with the call graph off and on (POSIX and task-clock timers), and under
gperftools' libprofiler at the same rate where it is installed. Runs are
pinned to the last CPU. Usage: deepstack.py [--build DIR] [--rounds N]"""

import argparse
import os
import statistics
import subprocess

PROFILER = "/usr/lib/x86_64-linux-gnu/libprofiler.so.0"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", default="60000")
    a = ap.parse_args()
    d = os.path.join(a.build, "bench")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "deep")
    subprocess.run(["cc", "-O2", "-o", exe, "bench/deep.c"], check=True)
    lib = os.path.abspath(os.path.join(a.build, "libpc.so"))
    out = os.path.join(d, "deep.gmon")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("PC_") and k != "LD_PRELOAD"}
    cfgs = [("unprofiled", {}),
            ("libpc posix, call graph off", {"LD_PRELOAD": lib, "PC_CALLGRAPH": "0", "PC_OUT": out}),
            ("libpc posix, call graph on", {"LD_PRELOAD": lib, "PC_OUT": out}),
            ("libpc taskclock, call graph on", {"LD_PRELOAD": lib, "PC_TIMER": "taskclock", "PC_OUT": out})]
    if os.path.exists(PROFILER):
        cfgs.append(("gperftools 1000 Hz", {"LD_PRELOAD": PROFILER, "CPUPROFILE": out + ".prof",
                                            "CPUPROFILE_FREQUENCY": "1000"}))
    else:
        print("gperftools: %s not installed, skipped" % PROFILER)
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})
    res = {n: [] for n, _ in cfgs}
    for _ in range(a.rounds):
        for n, e in cfgs:
            pid = os.fork()
            if pid == 0:
                fd = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.execve(exe, [exe, a.reps], dict(base, **e))
            _, st, ru = os.wait4(pid, 0)
            res[n].append(ru.ru_utime + ru.ru_stime)
    p = statistics.median(res["unprofiled"])
    print("deep stacks (bench/deep.c %s, 100 frames), median of %d alternating rounds"
          % (a.reps, a.rounds))
    for n, _ in cfgs:
        m = statistics.median(res[n])
        print("  %-32s CPU %.3f s  overhead %+5.1f %%  [%.3f .. %.3f]" %
              (n, m, 100 * (m / p - 1), min(res[n]), max(res[n])))


if __name__ == "__main__":
    main()
