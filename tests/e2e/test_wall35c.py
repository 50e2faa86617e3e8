# SPDX-License-Identifier: BSD-2-Clause
"""Wall time that adds up (issue 35), at a thread's end and at the last
look: a thread that stays on after libpc's thread-exit hook (preempted
there on a busy machine, or in a destructor of the program's that runs
after libpc's) keeps that time in its life; and the time of threads the
last round reads from their counters alone, no wait seen, is named
[off-cpu: unknown], not a page fault's [off-cpu: fault]."""

import json
import os
import re
import shutil
import tempfile

from pctest import prog, run
from test_cli import pcprof
from test_offcpu import slowest_round, threads_of, truth_of
from test_wallacct import wall_run

# it starts thousands of threads: run.py runs it alone
MANY_THREADS = ("test_wall35c_counters_only_look_is_named_unknown",)


def test_wall35c_thread_after_its_exit_hook_keeps_its_time():
    """tests/progs/wall35c: 2 threads nap 0.1 s, return, and nap 0.4 s
    more in a destructor of the program's, after libpc's hook: each
    thread's wall seconds are its life by its own clock (0.5 s; the hook's
    time alone gave 0.1 to 0.2), within the sampler's look interval at the
    end (a thread gone between two looks ends halfway, and rounds come
    half as often, 50 ms apart at most at a few threads, while all
    threads sleep) and 30 ms; plain and profiled alike. Its CPU, none to
    speak of, plus its off-CPU time is its wall time."""
    exe = prog("wall35c")
    argv = [exe, "2", "0.1", "0.4"]
    plain = run(argv, profiled=False, timeout=60)
    assert plain.status == 0, plain.stderr
    d = tempfile.mkdtemp(prefix="pc-e2e-wall35c-")
    try:
        p, _ = wall_run(argv, d, timeout=60)
        assert p.returncode == 0, p.stderr[-1500:]
        assert p.stdout.startswith("truth: ") and plain.stdout.startswith("truth: ")
        truth = truth_of(p.stdout)
        threads = threads_of(os.path.join(d, "run"))
        pid = [t for t in threads if t["tid"] == t["pid"]][0]["pid"]
        slow = slowest_round(p.stderr, pid)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    tol = max(2 * slow, 0.05) + 0.03
    rows = []
    for name, life in sorted(truth.items()):
        got = [t for t in threads if t["name"] == name]
        assert len(got) == 1, (name, [t["name"] for t in threads])
        t = got[0]
        assert abs(t["wall_seconds"] - life) <= tol, \
            "%s: %.3f s wall, its life %.3f (+- %.3f)" % (name, t["wall_seconds"], life, tol)
        assert abs(t["off_cpu_seconds"] + t.get("cpu_seconds", 0.0) -
                   t["wall_seconds"]) <= 0.01, t
        rows.append("%s %.3f/%.3f" % (name, t["wall_seconds"], life))
    return "pcprof/own clock s: " + ", ".join(rows) + " (+- %.3f)" % tol


def leaf_seconds(folded, rate):
    """Seconds under each leaf of the folded stacks."""
    by = {}
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        leaf = stack.split(";")[-1]
        by[leaf] = by.get(leaf, 0.0) + int(n) / rate
    return by


def test_wall35c_counters_only_look_is_named_unknown():
    """bench/sleepers 3000 1: 3,000 threads started just before the
    program ends, asleep in pause(); the last round looks at most of them
    from their counters alone (its budget holds full looks, 40 to 60 us
    each, for a few hundred), so no wait is seen for them: their time is
    [off-cpu: unknown], most of the threads' off-CPU time (95 to 100 %
    here in 10 runs; a quarter at least asked: a machine whose full
    looks cost a third of this one's affords some 900 of them), and more
    than [off-cpu: fault] (a thread really blocked outside any call),
    which held it all before."""
    exe = prog("sleepers")
    plain = run([exe, "3000", "1"], profiled=False, timeout=60)
    assert plain.status == 0, plain.stderr
    d = tempfile.mkdtemp(prefix="pc-e2e-wall35c-")
    try:
        p, _ = wall_run([exe, "3000", "1"], d, timeout=60)
        assert p.returncode == 0, p.stderr[-1500:]
        rdir = os.path.join(d, "run")
        rate = json.loads(pcprof("report", "--format", "json", rdir).stdout)["profile"]["rate_hz"]
        f = pcprof("report", "--format", "folded", rdir)
        assert f.returncode == 0, f.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)
    by = leaf_seconds(f.stdout, rate)
    off = sum(s for leaf, s in by.items() if leaf.startswith("[off-cpu: "))
    unknown, fault = by.get("[off-cpu: unknown]", 0.0), by.get("[off-cpu: fault]", 0.0)
    looked = re.search(r"wall clock: [^;]*", p.stderr)
    assert unknown >= 0.25 * off and unknown > fault, (unknown, fault, off, looked and looked.group(0))
    return "unknown %.1f s, fault %.2f s of %.1f s off the CPU" % (unknown, fault, off)
