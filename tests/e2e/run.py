#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Runs the end-to-end tests (tests/e2e/test_*.py): each test_ function is a
test; an AssertionError or any other exception fails it, and pctest.Skip
(raised by pctest.skip()) skips it with a reason. Under CI=true a skip
counts as a failure: .ci/run installs everything the tests need, so a
missing tool there is a bug in .ci/run.

Tests run in worker processes, so that at most JOBS cores' worth of tests
run at once: -j JOBS, by default one per core. Each test's wall and CPU
seconds (its own and its programs'), the cores the machine left idle
meanwhile and the seconds its threads waited for a core a CPU second
(their schedstat, looked at some 8 times a second; unknown where the
looks saw less than half its CPU, in processes too short to be seen)
are kept in
BUILD/e2e-times.json; tests/e2e/times.json holds them as a fresh tree's
first guess (a copy of an e2e-times.json). A test counts as the cores it
used last time, its CPU over its wall seconds less those waits (a test
that mostly sleeps counts as a fraction of a core, even where a CPU hog
left no core idle); one too short for its waits to be seen, as its CPU
over its wall seconds where the machine had a core to spare, and
otherwise, like a test unknown so far, as one whole core at least; so
tests that mostly wait run beside the others, up to 2 JOBS at once. The
longest start first, so that the workers end together.
A module whose tests share state (SHARED = True, for example a cache of
profiles that several tests compare) runs in one worker, in file order;
every other test runs on its own. A test that starts thousands of threads
(a module's MANY_THREADS names them) runs alone, before any other starts:
its timers count against the user's ulimit -i (10,000 threads beside
1,000 left the smaller no timers in CI) and its threads take the machine
(a wall-clock test beside 10,000 threads lost its first wait). First,
not last: at the end they left the other workers idle, where at the start
make check's Check suites and fuzzers, which start no timers, run beside
them. Each
test's line is printed when it ends, with its wall and CPU seconds (its
times are saved then, so that a run cut short keeps them), then the
failures (each with its traceback's last line: CI keeps only the tail)
and skips again, the 10 slowest tests, the tests' CPU seconds added up
(beside a CPU hog the suite's time follows them), then the closing line
'e2e: N passed, N failed, N skipped'.
--tests DIR runs DIR's test_*.py instead of tests/e2e's: make
check-release runs tests/release's so.
Usage: run.py [--build DIR] [--tests DIR] [-k SUBSTRING]... [-j JOBS]"""

import argparse
import concurrent.futures
import importlib
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
import traceback

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
# where the tests are: here, or --tests DIR
tests_dir = [here]


def modules():
    return [fn[:-3] for fn in sorted(os.listdir(tests_dir[0]))
            if fn.startswith("test_") and fn.endswith(".py")]


def units(patterns):
    """The units of work, each a (module, [test names], many threads) run
    in one worker: the tests whose name contains one of patterns (all with
    none); many threads: one of them is in the module's MANY_THREADS."""
    out = []
    for name in modules():
        mod = importlib.import_module(name)
        tests = [n for n in vars(mod) if n.startswith("test_") and
                 callable(getattr(mod, n)) and
                 (not patterns or any(p in n for p in patterns))]
        many = set(getattr(mod, "MANY_THREADS", ()))
        if not tests:
            continue
        if getattr(mod, "SHARED", False):
            out.append((name, tests, bool(many & set(tests))))
        else:
            out.extend((name, [t], t in many) for t in tests)
    return out


def tasks(limit=256):
    """{(pid, tid): (CPU seconds, seconds waited for a core)} so far of the
    threads of this worker (less the calling one) and of its descendants
    (/proc's schedstat), at most limit of them."""
    out, pids, me = {}, [os.getpid()], str(threading.get_native_id())
    while pids and len(out) < limit:
        pid = pids.pop()
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids[:limit - len(out)]:
            if tid == me:
                continue
            at = "/proc/%d/task/%s/" % (pid, tid)
            try:
                with open(at + "schedstat") as f:
                    cpu, wait = f.read().split()[:2]
                with open(at + "children") as f:
                    pids.extend(int(c) for c in f.read().split())
            except (OSError, ValueError):
                continue
            out[(pid, tid)] = (int(cpu) / 1e9, int(wait) / 1e9)
    return out


class Waits(threading.Thread):
    """Looks at tasks() some 8 times a second, at random intervals (no
    period to lock onto a test's), until stop(): the seconds the test
    waited for a core, as a share of its CPU seconds seen (a thread that
    ends between looks is seen up to the last one). A process's waits are
    the longest of its threads that ran a quarter as long as its busiest
    one at least: its threads' waits overlap, two threads that both run
    wait as long as one, and a thread that wakes often for little (libpc's
    wall-clock sampler, a thousand times a second) waits for a core
    nearly all the time on a loaded machine, beside a program that
    sleeps."""
    def __init__(self):
        super().__init__(daemon=True)
        self.done, self.first, self.last = threading.Event(), {}, {}
        self.rng = __import__("random").Random()

    def run(self):
        self.first = tasks()
        while not self.done.wait(self.rng.uniform(0.05, 0.2)):
            for k, v in tasks().items():
                self.first.setdefault(k, (0.0, 0.0))
                self.last[k] = v
        self.own = time.thread_time()

    def stop(self, cpu_all):
        """The waits a CPU second; None where the looks saw less than
        half of cpu_all, the test's CPU seconds (its processes', reaped
        or not): a process that lives less than the time between two
        looks is never seen, and beside a CPU hog a test of many short
        processes (a gate's runs, a shell loop) waits for a core in
        them mostly, where its long-lived parent sleeps: its seen waits
        would count it as a fraction of a core."""
        self.done.set()
        self.join()
        seen = {}
        for (pid, tid), v in self.last.items():
            seen.setdefault(pid, []).append((v[0] - self.first[(pid, tid)][0],
                                             v[1] - self.first[(pid, tid)][1]))
        cpu = sum(c for ts in seen.values() for c, _ in ts)
        waits = 0.0
        for ts in seen.values():
            most = max(c for c, _ in ts)
            waits += max(w for c, w in ts if c >= most / 4)
        # this thread's own CPU is in cpu_all, never in what it saw
        if cpu < 0.05 or cpu < 0.5 * (cpu_all - getattr(self, "own", 0.0)):
            return None
        return waits / cpu


def uncontended(wall, cpu, waited):
    """A test's wall seconds had it never waited for a core: its wall less
    its waits (waited seconds a CPU second), a quarter of its CPU seconds
    at least; None where its waits were not seen."""
    if waited is None or wall <= 0:
        return None
    return max(wall - waited * cpu, cpu / 4, 1e-3)


def run_unit(unit):
    """In a worker: run one unit's tests; a list of result dicts."""
    import pctest
    name, tests = unit[0], unit[1]
    mod = importlib.import_module(name)
    results = []
    for t in tests:
        # a test of thousands of threads runs alone: not looked at
        waits = None if unit[2] else Waits()
        if waits:
            waits.start()
        t0, c0, m0 = time.time(), cpu_seconds(), machine()
        r = {"name": t, "module": name}
        try:
            r["note"] = getattr(mod, t)()
            r["outcome"] = "ok"
        except pctest.Skip as e:
            r["outcome"] = "skip"
            r["note"] = str(e)
        except Exception:
            r["outcome"] = "fail"
            r["note"] = traceback.format_exc()
        r["seconds"] = time.time() - t0
        r["cpu"] = cpu_seconds() - c0
        r["idle"] = idle_between(m0, machine())
        r["waited"] = waits.stop(r["cpu"]) if waits else None
        results.append(r)
    return results


def why(tb, limit=700):
    """A failure's own words for the recap at the end (CI keeps only the
    output's tail): the traceback's last line and the test's line that
    raised it, cut to limit characters."""
    lines = [l for l in tb.rstrip("\n").split("\n") if l.strip()]
    last = lines[-1] if lines else "?"
    at = [l.strip() for l in lines if l.strip().startswith("File ")
          and not l.strip().startswith('File "%s"' % os.path.abspath(__file__))]
    where = at[-1].split(", in ")[0].rsplit("/", 1)[-1] if at else ""
    text = "%s%s" % (where.replace('", line ', ":") + ": " if where else "", last)
    return text if len(text) <= limit else text[:limit] + "..."


def cpu_seconds():
    """CPU seconds of this worker and of the children it has waited for:
    the programs a test runs, pcprof, gprof."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def machine():
    """(all, idle) jiffies of every core so far, from /proc/stat; None
    where it cannot be read."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + (v[4] if len(v) > 4 else 0)
    except (OSError, ValueError, IndexError):
        return None


def idle_between(m0, m1):
    """How many cores the machine left idle between two machine() looks,
    on average; 0 where unknown."""
    if not m0 or not m1 or m1[0] <= m0[0]:
        return 0.0
    return (m1[1] - m0[1]) / (m1[0] - m0[0]) * (os.cpu_count() or 1)


def line(r, ci):
    if r["outcome"] == "ok":
        note = "  " + r["note"] if r["note"] else ""
        return "ok    %-62s %5.1fs %5.1fs CPU%s" % (r["name"], r["seconds"],
                                                 r.get("cpu", 0), note)
    if r["outcome"] == "skip":
        return "%s  %-62s %5.1fs  %s%s" % (
            "FAIL" if ci else "skip", r["name"], r["seconds"], r["note"],
            " (CI=true: a skip is a failure)" if ci else "")
    return "FAIL  %s\n%s" % (r["name"], r["note"].rstrip("\n"))


def cores_used(wall, cpu, idle, waited=None):
    """The cores a test needs, from its last run: its CPU over its wall
    seconds less the waits of its threads for a core (waited: seconds a
    CPU second), where they were looked at, so that a test that mostly
    sleeps counts as a fraction of a core even beside a CPU hog (but no
    more than as below). Otherwise its CPU over its wall seconds where the
    machine had half a core idle meanwhile. On a machine with no core to
    spare, a test that got little CPU may have waited for one rather than
    for its own sleeps: at least one core, as if busy."""
    if wall <= 0:
        return 1.0
    alone = uncontended(wall, cpu, waited)
    if alone:
        # the waits tell a test that sleeps from one the machine starved;
        # no more than its CPU over its wall seconds, one core at least,
        # where threads that ran at once made them seem longer. Half a
        # core at least: tests that sleep are mostly wall-clock tests,
        # whose waits grow with the load; two share a core, and one never
        # joins two busy ones (at a load of 12 to 17 on 2 CPUs, beside
        # the wall gate, test_gate36's 2.5 s budget once ran out)
        return min(max(cpu / alone, 0.5), max(cpu / wall, 1.0), 4.0)
    if idle >= 0.5:
        return min(cpu / wall, 4.0)
    return min(max(cpu / wall, 1.0), 4.0)


def load_times(build):
    """{test: (wall seconds, cores)} from the last runs: this build's, over
    tests/e2e/times.json's. A file of wall seconds alone (an older run.py):
    every test busy."""
    times = {}
    for path in (os.path.join(tests_dir[0], "times.json"),
                 os.path.join(build, "e2e-times.json")):
        try:
            with open(path) as f:
                for k, v in json.load(f).items():
                    v = list(v) if isinstance(v, list) else [v, v]
                    v += [0, None][len(v) - 2:]
                    times[k] = (v[0], cores_used(*v[:4]))
        except (OSError, ValueError, TypeError, IndexError):
            pass
    return times


def estimate(todo, last):
    """{unit index: (wall seconds, cores)}: a unit's tests' last times
    added up, a test never timed counted as the median test, busy."""
    walls = sorted(w for w, _ in last.values()) or [1.0]
    median = walls[len(walls) // 2]
    est = {}
    for i, u in enumerate(todo):
        wall = core_seconds = 0.0
        for t in u[1]:
            w, c = last.get(t, (median, 1.0))
            wall, core_seconds = wall + w, core_seconds + w * c
        est[i] = (wall, core_seconds / wall if wall > 0 else 1.0)
    return est


def schedule(pool, todo, est, jobs):
    """Yields (unit, future) as units end: the longest first, each started
    when its cores fit beside the running units' within jobs (or nothing
    runs), at most 2 jobs units at once; the units of many threads first,
    each alone."""
    waiting = sorted(range(len(todo)), key=lambda i: (not todo[i][2], -est[i][0]))
    running = {}
    while waiting or running:
        used = sum(est[i][1] for i in running.values())
        for i in list(waiting):
            if len(running) >= 2 * jobs:
                break
            if any(todo[j][2] for j in running.values()):
                break
            if todo[i][2] and running:
                continue
            if not running or used + est[i][1] <= jobs + 0.25:
                try:
                    fut = pool.submit(run_unit, todo[i])
                except concurrent.futures.BrokenExecutor as e:
                    # a worker died: what is left fails as its unit did
                    fut = concurrent.futures.Future()
                    fut.set_exception(e)
                running[fut] = i
                used += est[i][1]
                waiting.remove(i)
        done, _ = concurrent.futures.wait(
            running, return_when=concurrent.futures.FIRST_COMPLETED)
        for fut in done:
            yield todo[running.pop(fut)], fut


def save_times(build, results):
    """This run's times over the last run's, in BUILD/e2e-times.json."""
    path = os.path.join(build, "e2e-times.json")
    try:
        with open(path) as f:
            times = json.load(f)
    except (OSError, ValueError):
        times = {}
    for r in results:
        times[r["name"]] = [round(r["seconds"], 1), round(r.get("cpu", 0), 1),
                            round(r.get("idle", 0), 2)]
        if r.get("waited") is not None:
            times[r["name"]].append(round(r["waited"], 2))
    try:
        with open(path, "w") as f:
            f.write("{\n%s\n}\n" % ",\n".join(
                "%s: %s" % (json.dumps(k), json.dumps(times[k])) for k in sorted(times)))
    except OSError:
        pass


def slowest(results, n=10):
    top = sorted(results, key=lambda r: -r["seconds"])[:n]
    return ["%6.1f s %6.1f s CPU  %s" % (r["seconds"], r.get("cpu", 0), r["name"])
            for r in top]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--tests", default=here,
                    help="the directory of the test_*.py to run (default: tests/e2e)")
    ap.add_argument("-k", action="append", default=[],
                    help="run tests whose name contains this (repeated: any of them)")
    ap.add_argument("-j", type=int, default=0,
                    help="cores' worth of tests at once (default: one per core)")
    a = ap.parse_args()
    tests_dir[0] = os.path.abspath(a.tests)
    sys.path.insert(0, tests_dir[0])
    build = os.path.abspath(a.build)
    os.environ["PC_BUILD"] = build
    ci = os.environ.get("CI", "") == "true"
    # every test's temporary files, and its programs' (TMPDIR), in one
    # directory that goes at the end: they were left in /tmp, 46,000 of
    # them on a machine that ran the suite for a week, and a CI container
    # whose /tmp is tmpfs pays for them in memory. Kept where a test
    # failed, for a look at its files.
    scratch = tempfile.mkdtemp(prefix="pc-e2e-run-")
    os.chmod(scratch, 0o1777)   # as /tmp: tests run programs as nobody
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch
    todo = units(a.k)
    jobs = max(1, a.j or len(os.sched_getaffinity(0)))
    est = estimate(todo, load_times(build))
    counts = {"ok": 0, "fail": 0, "skip": 0}
    notable, every = [], []
    t0 = time.time()
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(2 * jobs, mp_context=ctx) as pool:
        for u, fut in schedule(pool, todo, est, jobs):
            try:
                results = fut.result()
            except Exception:
                # a worker that died: its unit's tests are failures
                results = [{"name": t, "outcome": "fail", "seconds": 0,
                            "note": traceback.format_exc()} for t in u[1]]
            # kept as they come, so that a run cut short keeps its times
            save_times(build, results)
            for r in results:
                counts[r["outcome"]] += 1
                every.append(r)
                print(line(r, ci))
                sys.stdout.flush()
                if r["outcome"] != "ok":
                    notable.append(r)
    for r in notable:
        print("%s  %s" % ("FAIL" if r["outcome"] == "fail" or ci else "skip",
                          r["name"] + ": " + (why(r["note"]) if r["outcome"] == "fail"
                                              else r["note"])))
    if len(every) > 1:
        print("slowest:")
        for l in slowest(every):
            print("  " + l)
    failed = counts["fail"] + (counts["skip"] if ci else 0)
    skipped = 0 if ci else counts["skip"]
    print("ran %d tests in %.0f s, %d core%s' worth at once; the tests' CPU %.0f s" % (
        sum(counts.values()), time.time() - t0, jobs, "s" if jobs > 1 else "",
        sum(r.get("cpu", 0) for r in every)))
    print("e2e: %d passed, %d failed, %d skipped" % (counts["ok"], failed, skipped))
    if counts["fail"]:
        print("e2e: the tests' temporary files are kept in %s" % scratch)
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
