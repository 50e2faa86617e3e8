#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""PC_ALLOC's overhead (docs/benchmarks.md): bench/alloc.c's malloc/free
churn and its fast path alone, python3 and sqlite3, each plain, under
libpc without PC_ALLOC, with PC_ALLOC at the default rate and at rate 1,
under heaptrack where it is installed, and under the allocators' own
profilers where Debian's packages are installed (--peers): jemalloc
preloaded with and without its sampling (MALLOC_CONF's prof, 512 KiB),
gperftools' tcmalloc preloaded alone, with TCMALLOC_SAMPLE_PARAMETER
(sampled, but kept in memory: only a program's own call to
MallocExtension::GetHeapSample reads it) and with HEAPPROFILE (every
allocation). Each figure is the least CPU
time (user + system, the program and its children) of --runs runs, and
the most resident memory of that run; ratios are to plain.

The malloc hooks are libpc-alloc.so's, preloaded beside libpc.so with
PC_ALLOC (as pcprof run --alloc does); libpc.so alone has none.

Usage: bench/alloc.py [--build DIR] [--base-lib LIBPC] [--base DIR] [--runs N]
                      [--programs churn,fast,python3,sqlite3] [--quick]
                      [--peers] [--split] [--instructions]
(--quick: neither heaptrack nor PC_ALLOC_RATE=1, the slow ones;
--peers: the allocators' own profilers too; HEAPPROFILE, about 28 us a
malloc/free pair, runs once and on python3 and sqlite3 only;
--base-lib: another libpc.so to compare with, with and without PC_ALLOC,
e.g. an older build whose libpc.so held the malloc hooks itself;
--base: another build directory (its libpc.so and libpc-alloc.so), the
before of a change to the hooks, with PC_ALLOC=1 and PC_ALLOC=only (and
PC_ALLOC_RATE=1 without --quick);
--split: where the time goes, PC_ALLOC=only (no CPU timer: the CPU
sampler's share out), PC_ALLOC_RATE=4294967295 (next to no sample: the
fast path alone) and bench/alloc_hop.c preloaded (an interposer that only
jumps: the hop's own cost);
--instructions: each configuration's instructions instead, counted once
under cachegrind (`valgrind --tool=cachegrind --cache-sim=no`, its I
refs), which no load moves: the churn at 1M pairs and the fast path at
2M, their figures more than plain's a pair; python3 is this
interpreter's binary (a pyenv shim is a script valgrind does not follow)
with PYTHONHASHSEED=0. A
program's runs are made in turns, one of each configuration a round, so
that a busy machine's drift falls on all of them alike.)"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SQL = ("create table t(a integer primary key, b text, c real);"
       "with recursive n(i) as (select 1 union all select i + 1 from n where i < 200000) "
       "insert into t select i, printf('row %d', i), i * 0.5 from n;"
       "select count(*), sum(length(b)) from t where c > 1000;")
PY = ("d = {}\nfor i in range(300000):\n    d[str(i)] = [i] * (i % 7)\n"
      "print(sum(len(v) for v in d.values()))")


JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"
JE_PROF = "prof:true,lg_prof_sample:19,prof_final:true"
TIME = "/usr/bin/time"


def peers():
    """The allocators' own profilers, as configurations: (name, extra
    environment, wrapper argv or None, the profile file a run must leave
    in its directory or None, whether it runs once)."""
    out = []
    if os.path.exists(JEMALLOC):
        out += [("jemalloc, no profiling", {"LD_PRELOAD": JEMALLOC}, None, None, False),
                ("jemalloc prof (512 KiB)", {"LD_PRELOAD": JEMALLOC, "MALLOC_CONF": JE_PROF},
                 None, "jeprof.*.f.heap", False),
                ("jemalloc prof + prof_accum", {"LD_PRELOAD": JEMALLOC,
                                                "MALLOC_CONF": JE_PROF + ",prof_accum:true"},
                 None, "jeprof.*.f.heap", False)]
    if os.path.exists(TCMALLOC):
        out += [("tcmalloc, no profiling", {"LD_PRELOAD": TCMALLOC}, None, None, False),
                ("tcmalloc SAMPLE_PARAMETER=512 KiB", {"LD_PRELOAD": TCMALLOC,
                                                       "TCMALLOC_SAMPLE_PARAMETER": "524288"},
                 None, None, False),
                ("tcmalloc HEAPPROFILE (all)", {"LD_PRELOAD": TCMALLOC, "HEAPPROFILE": "hp"},
                 None, "hp.*.heap", True)]
    return out


def measure(argv, env, cwd):
    """CPU seconds and max RSS (KiB) of one run of argv. The RSS is GNU
    time's report of its child where /usr/bin/time is installed: the
    rusage of a child of this process would count this interpreter's own
    RSS (about 15 MiB), which the child shares until it execs; time itself
    runs without the LD_PRELOAD that env sets for argv."""
    rssf = None
    if os.access(TIME, os.X_OK):
        rssf = tempfile.NamedTemporaryFile("r", prefix="pc-allocbench-")
        pre = ["LD_PRELOAD=" + env["LD_PRELOAD"]] if "LD_PRELOAD" in env else []
        argv = [TIME, "-f", "%M", "-o", rssf.name, "env"] + pre + argv
        env = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit("%s failed: %s" % (argv, err.read()[-300:]))
        rss = ru.ru_maxrss
        if rssf:
            rss = int(rssf.read().split()[-1])
            rssf.close()
        # the program's own CPU (heaptrack's children included; time's
        # and env's, about 1 ms, too)
        return ru.ru_utime + ru.ru_stime, rss, out.read()


def instructions(argv, env):
    """The instructions one run of argv executes (cachegrind's I refs),
    or None where it failed under valgrind."""
    vg = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
          "--cachegrind-out-file=/dev/null"]
    p = subprocess.run(vg + argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
    if p.returncode != 0 or not m:
        return None
    return int(m.group(1).replace(",", ""))


def count_all(programs, configs, env):
    """--instructions: each configuration of each program once."""
    print("| program | run | instructions | more than plain |")
    print("|---|---|---|---|")
    for pname, argv, pairs in programs:
        base = None
        for name, extra, wrap, _, _ in configs:
            if wrap or (name.endswith("PC_ALLOC_RATE=1") and pname.startswith("fast")):
                continue
            n = instructions(argv, dict(env, PYTHONHASHSEED="0", **extra))
            if n is None:
                print("| %s | %s | failed under valgrind | |" % (pname, name))
                continue
            base = base or n	# plain's, the first
            more = ("%+.2f a pair" % ((n - base) / pairs) if pairs
                    else "%.5f" % (n / base))
            print("| %s | %s | %.1fM | %s |" % (pname, name, n / 1e6, more),
                  flush=True)


def best(runs, jobs):
    """The least CPU time of runs runs of each (argv, env, profile) of
    jobs, made in turns, and that run's max RSS and output; a run whose
    profile (a glob) is not left in its directory is an error."""
    out = [None] * len(jobs)
    for _ in range(runs):
        for i, (argv, env, prof) in enumerate(jobs):
            cwd = tempfile.mkdtemp(prefix="pc-allocbench-")
            cpu, rss, stdout = measure(argv, env, cwd)
            if prof and not glob.glob(os.path.join(cwd, prof)):
                raise SystemExit("%s left no %s" % (argv, prof))
            shutil.rmtree(cwd, ignore_errors=True)
            if out[i] is None or cpu < out[i][0]:
                out[i] = (cpu, rss, stdout)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--base-lib")
    ap.add_argument("--base")
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--programs", default="churn,fast,python3,sqlite3")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--peers", action="store_true")
    ap.add_argument("--instructions", action="store_true")
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
    if a.base:
        bd = os.path.abspath(a.base)
        bh = os.path.join(bd, "libpc-alloc.so") + ":" + os.path.join(bd, "libpc.so")
        configs += [("before: PC_ALLOC=1", {"LD_PRELOAD": bh, "PC_ALLOC": "1"}, None),
                    ("before: PC_ALLOC=only", {"LD_PRELOAD": bh, "PC_ALLOC": "only"}, None)]
    configs += [("libpc, PC_ALLOC off", {"LD_PRELOAD": lib}, None),
                ("PC_ALLOC=1 (512 KiB)", {"LD_PRELOAD": hooked, "PC_ALLOC": "1"}, None)]
    if a.split:
        hop = os.path.join(os.path.dirname(exe), "alloc_hop.so")
        subprocess.run(["cc", "-O2", "-fPIC", "-shared", "-o", hop,
                        os.path.join(os.path.dirname(__file__), "alloc_hop.c"), "-ldl"],
                       check=True)
        configs += [("PC_ALLOC=only (no CPU timer)", {"LD_PRELOAD": hooked,
                                                      "PC_ALLOC": "only"}, None),
                    ("PC_ALLOC=1, no samples", {"LD_PRELOAD": hooked, "PC_ALLOC": "1",
                                                "PC_ALLOC_RATE": "4294967295"}, None),
                    ("a bare hop (alloc_hop.c)", {"LD_PRELOAD": hop}, None)]
    configs += [("PC_ALLOC_RATE=1", {"LD_PRELOAD": hooked, "PC_ALLOC": "1",
                                     "PC_ALLOC_RATE": "1"}, None)]
    if a.base:	# the before's samples, every allocation one
        configs += [("before: PC_ALLOC_RATE=1", {"LD_PRELOAD": bh, "PC_ALLOC": "1",
                                                 "PC_ALLOC_RATE": "1"}, None)]
    if a.quick:
        configs = [c for c in configs if not c[0].endswith("PC_ALLOC_RATE=1")]
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
    if a.instructions:
        sizes = {"churn 10M": ("churn 1M", [exe, "1000000"], 1e6),
                 "fast path 50M": ("fast path 2M", [exe, "2000000", "small"], 2e6),
                 "python3": ("python3", [os.path.realpath(sys.executable), "-c", PY], 0)}
        count_all([sizes.get(p, (p, argv, 0)) for p, argv in programs],
                  [c + (None, False) for c in configs], env)
        return
    # (name, extra env, wrapper, profile it must leave, once)
    configs = [c + (None, c[2] is not None) for c in configs]
    if a.peers:
        configs += peers()
    print("load average %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    print("| program | run | CPU s | ratio | max RSS MiB | ratio |")
    print("|---|---|---|---|---|---|")
    for pname, argv in programs:
        todo = [c for c in configs
                if not (c[0].endswith("PC_ALLOC_RATE=1") and pname.startswith("fast"))
                and not (c[0].startswith("tcmalloc HEAPPROFILE")
                         and pname.startswith(("churn", "fast")))]
        # heaptrack and HEAPPROFILE once, apart: tens of times slower
        todo = [c for c in todo if not c[4]] + [c for c in todo if c[4]]
        got = best(a.runs, [((wrap or []) + argv, dict(env, **extra), prof)
                            for _, extra, wrap, prof, once in todo if not once])
        got += [best(1, [((wrap or []) + argv, dict(env, **extra), prof)])[0]
                for _, extra, wrap, prof, once in todo if once]
        base = got[0]
        for c, (cpu, rss, _) in zip(todo, got):
            print("| %s | %s | %.3f | %.2f | %.1f | %.2f |" % (
                pname, c[0], cpu, cpu / base[0], rss / 1024, rss / base[1]), flush=True)
    print("load average %s" % " ".join(open("/proc/loadavg").read().split()[:3]))

if __name__ == "__main__":
    main()
