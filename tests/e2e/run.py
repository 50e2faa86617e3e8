#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Runs the end-to-end tests (tests/e2e/test_*.py): each test_ function is a
test; an AssertionError or any other exception fails it, and pctest.Skip
(raised by pctest.skip()) skips it with a reason. Under CI=true a skip
counts as a failure: .ci/run installs everything the tests need, so a
missing tool there is a bug in .ci/run.

Tests run in a pool of worker processes, one per idle core (measured over
half a second at the start, so that a machine already busy is not
oversubscribed further: CPU-time timers sample less evenly when threads
wait for a core) unless -j says otherwise. A module whose tests share state (SHARED = True, for example a
cache of profiles that several tests compare) runs in one worker, in file
order; every other test runs on its own. Each test's line is printed when it
ends, then the failures and skips again, then the closing line
'e2e: N passed, N failed, N skipped'.
Usage: run.py [--build DIR] [-k SUBSTRING]... [-j JOBS]"""

import argparse
import concurrent.futures
import importlib
import json
import multiprocessing
import os
import sys
import time
import traceback

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)


def modules():
    return [fn[:-3] for fn in sorted(os.listdir(here))
            if fn.startswith("test_") and fn.endswith(".py")]


def units(patterns):
    """The units of work, each a (module, [test names]) run in one worker:
    the tests whose name contains one of patterns (all with none)."""
    out = []
    for name in modules():
        mod = importlib.import_module(name)
        tests = [n for n in vars(mod) if n.startswith("test_") and
                 callable(getattr(mod, n)) and
                 (not patterns or any(p in n for p in patterns))]
        if not tests:
            continue
        if getattr(mod, "SHARED", False):
            out.append((name, tests))
        else:
            out.extend((name, [t]) for t in tests)
    return out


def run_unit(unit):
    """In a worker: run one unit's tests; a list of result dicts."""
    import pctest
    name, tests = unit
    mod = importlib.import_module(name)
    results = []
    for t in tests:
        t0 = time.time()
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
        results.append(r)
    return results


def line(r, ci):
    if r["outcome"] == "ok":
        note = "  " + r["note"] if r["note"] else ""
        return "ok    %-62s %5.1fs%s" % (r["name"], r["seconds"], note)
    if r["outcome"] == "skip":
        return "%s  %-62s %5.1fs  %s%s" % (
            "FAIL" if ci else "skip", r["name"], r["seconds"], r["note"],
            " (CI=true: a skip is a failure)" if ci else "")
    return "FAIL  %s\n%s" % (r["name"], r["note"].rstrip("\n"))


def idle_cores(seconds=0.5):
    """How many of this process's cores were idle over the next seconds,
    from /proc/stat; all of them where it cannot be read."""
    cores = len(os.sched_getaffinity(0))

    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + (v[4] if len(v) > 4 else 0)

    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return cores
    if t1 <= t0:
        return cores
    # /proc/stat sums every online core; scale to the ones we may use
    online = os.cpu_count() or cores
    return min(cores, (i1 - i0) / (t1 - t0) * online)


def order(todo, build):
    """Longest first by the last run's times where there are any, so that a
    long test does not start last; otherwise in file order."""
    try:
        with open(os.path.join(build, "e2e-times.json")) as f:
            last = json.load(f)
    except (OSError, ValueError):
        return todo
    return sorted(todo, key=lambda u: -sum(last.get(t, 0) for t in u[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", action="append", default=[],
                    help="run tests whose name contains this (repeated: any of them)")
    ap.add_argument("-j", type=int, default=0,
                    help="worker processes (default: one per idle core)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    os.environ["PC_BUILD"] = build
    ci = os.environ.get("CI", "") == "true"
    todo = order(units(a.k), build)
    jobs = a.j or max(1, int(idle_cores() + 0.3))
    counts = {"ok": 0, "fail": 0, "skip": 0}
    notable, times = [], {}
    t0 = time.time()
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max(1, jobs), mp_context=ctx) as pool:
        futures = {pool.submit(run_unit, u): u for u in todo}
        for fut in concurrent.futures.as_completed(futures):
            u = futures[fut]
            try:
                results = fut.result()
            except Exception:
                # a worker that died: its unit's tests are failures
                results = [{"name": t, "outcome": "fail", "seconds": 0,
                            "note": traceback.format_exc()} for t in u[1]]
            for r in results:
                counts[r["outcome"]] += 1
                times[r["name"]] = round(r["seconds"], 1)
                print(line(r, ci))
                sys.stdout.flush()
                if r["outcome"] != "ok":
                    notable.append(r)
    if not a.k:
        try:
            with open(os.path.join(build, "e2e-times.json"), "w") as f:
                json.dump(times, f, indent=0, sort_keys=True)
        except OSError:
            pass
    for r in notable:
        print("%s  %s" % ("FAIL" if r["outcome"] == "fail" or ci else "skip",
                          r["name"] + ("" if r["outcome"] == "fail" else
                                       ": " + r["note"])))
    failed = counts["fail"] + (counts["skip"] if ci else 0)
    skipped = 0 if ci else counts["skip"]
    print("ran %d tests in %.0f s with %d worker%s" % (
        sum(counts.values()), time.time() - t0, jobs, "s" if jobs > 1 else ""))
    print("e2e: %d passed, %d failed, %d skipped" % (counts["ok"], failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
