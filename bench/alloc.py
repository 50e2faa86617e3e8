#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""PC_ALLOC's overhead (docs/benchmarks.md): bench/alloc.c's malloc/free
churn and its fast path alone, python3 and sqlite3, each plain, under
libpc without PC_ALLOC, with PC_ALLOC at the default rate and at rate 1,
and under heaptrack where it is installed. Each figure is the least CPU
time (user + system, the program and its children) of --runs runs, and
the most resident memory of that run; ratios are to plain.

The malloc hooks are libpc-alloc.so's, preloaded beside libpc.so with
PC_ALLOC (as pcprof run --alloc does); libpc.so alone has none.

Usage: bench/alloc.py [--build DIR] [--base-lib LIBPC] [--runs N]
                      [--programs churn,fast,python3,sqlite3] [--quick]
(--quick: neither heaptrack nor PC_ALLOC_RATE=1, the slow ones;
--base-lib: another libpc.so to compare with, with and without PC_ALLOC,
e.g. an older build whose libpc.so held the malloc hooks itself. A
program's runs are made in turns, one of each configuration a round, so
that a busy machine's drift falls on all of them alike.)"""

import argparse
import os
import shutil
import subprocess
import tempfile

SQL = ("create table t(a integer primary key, b text, c real);"
       "with recursive n(i) as (select 1 union all select i + 1 from n where i < 200000) "
       "insert into t select i, printf('row %d', i), i * 0.5 from n;"
       "select count(*), sum(length(b)) from t where c > 1000;")
PY = ("d = {}\nfor i in range(300000):\n    d[str(i)] = [i] * (i % 7)\n"
      "print(sum(len(v) for v in d.values()))")


def measure(argv, env, cwd):
    """CPU seconds and max RSS (KiB) of one run of argv."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit("%s failed: %s" % (argv, err.read()[-300:]))
        # the program's own figures (heaptrack's children included)
        return ru.ru_utime + ru.ru_stime, ru.ru_maxrss, out.read()


def best(runs, jobs):
    """The least CPU time of runs runs of each (argv, env) of jobs, made
    in turns, and that run's max RSS and output."""
    out = [None] * len(jobs)
    for _ in range(runs):
        for i, (argv, env) in enumerate(jobs):
            cwd = tempfile.mkdtemp(prefix="pc-allocbench-")
            cpu, rss, stdout = measure(argv, env, cwd)
            shutil.rmtree(cwd, ignore_errors=True)
            if out[i] is None or cpu < out[i][0]:
                out[i] = (cpu, rss, stdout)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--base-lib")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--programs", default="churn,fast,python3,sqlite3")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    lib = os.path.abspath(os.path.join(a.build, "libpc.so"))
    hooked = os.path.abspath(os.path.join(a.build, "libpc-alloc.so")) + ":" + lib
    exe = os.path.join(tempfile.mkdtemp(prefix="pc-allocbench-"), "alloc")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(os.path.dirname(__file__), "alloc.c")],
                   check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PC_")}
    configs = [("plain", {}, None)]
    if a.base_lib:
        base = os.path.abspath(a.base_lib)
        configs += [("base libpc, PC_ALLOC off", {"LD_PRELOAD": base}, None),
                    ("base PC_ALLOC=1 (512 KiB)", {"LD_PRELOAD": base, "PC_ALLOC": "1"}, None)]
    configs += [("libpc, PC_ALLOC off", {"LD_PRELOAD": lib}, None),
                ("PC_ALLOC=1 (512 KiB)", {"LD_PRELOAD": hooked, "PC_ALLOC": "1"}, None),
                ("PC_ALLOC_RATE=1", {"LD_PRELOAD": hooked, "PC_ALLOC": "1",
                                     "PC_ALLOC_RATE": "1"}, None)]
    if a.quick:
        configs = configs[:-1]
    elif shutil.which("heaptrack"):
        configs.append(("heaptrack", {}, ["heaptrack", "-o", "ht"]))
    rates = os.environ.get("ALLOC_RATES")
    if rates:	# the default rate's choice: PC_ALLOC_RATE=R for each R
        configs = configs[:1] + [("PC_ALLOC_RATE=" + r, {"LD_PRELOAD": hooked, "PC_ALLOC": "1",
                                                         "PC_ALLOC_RATE": r}, None)
                                 for r in rates.split(",")]
    programs = [("churn", "churn 10M", [exe, "10000000"]),
                ("fast", "fast path 50M", [exe, "50000000", "small"]),
                ("python3", "python3", ["python3", "-c", PY])]
    if shutil.which("sqlite3"):
        programs.append(("sqlite3", "sqlite3", ["sqlite3", ":memory:", SQL]))
    programs = [p[1:] for p in programs if p[0] in a.programs.split(",")]
    print("| program | run | CPU s | ratio | max RSS MiB | ratio |")
    print("|---|---|---|---|---|---|")
    for pname, argv in programs:
        todo = [c for c in configs
                if not (c[0] == "PC_ALLOC_RATE=1" and pname.startswith("fast"))]
        # heaptrack once, apart: tens of times slower
        got = best(a.runs, [(argv, dict(env, **extra)) for _, extra, wrap in todo if not wrap])
        got += [best(1, [(wrap + argv, dict(env, **extra))])[0]
                for _, extra, wrap in todo if wrap]
        base = got[0]
        for (cname, _, _), (cpu, rss, _) in zip(todo, got):
            print("| %s | %s | %.3f | %.2f | %.1f | %.2f |" % (
                pname, cname, cpu, cpu / base[0], rss / 1024, rss / base[1]), flush=True)


if __name__ == "__main__":
    main()
