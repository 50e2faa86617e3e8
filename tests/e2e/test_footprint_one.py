# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the live file's growth without a thread of
libpc's (preload/livegrower.c) and of a big program's first touches
(preload/livegrow.c's spill, arcs.c's segments).

- a program of one thread (tests/progs/footprint_one.c, a getc loop) has
  exactly one thread in /proc/self/task plain and under libpc, in every
  configuration that starts no thread of libpc's: a second one would make
  glibc lock its stdio and malloc in every call (a getc loop ran 6 times
  as long);
- cc1 on a generated file of 100 functions (loops and switches, as the
  2,500-function case measured in docs/benchmarks.md), with PC_SCOPE=all
  PC_STACKS=1 at 2700 Hz, alone, and on a file of 25 functions 10 times
  beside libpc's snapshot thread (then the grower thread does the
  growing, racing the handlers): the same assembly as plain, and the
  summary says no sample was left unplaced and no arc or stack sample
  dropped.

Racy cases run 10 times, short.

Every run has a timeout, after which its process group is killed."""

import os
import random
import re
import subprocess
import tempfile

import pctest
from pctest import clean_env, prog
from test_footprint import run

def summary(err, what):
    """libpc's summary line, and its sample count."""
    m = re.search(r"^libpc: wrote .*: (\d+) samples .*$", err, re.M)
    assert m, "%s: no summary line: %r" % (what, err[-600:])
    return m.group(0), int(m.group(1))


CONFIGS = (
    {},
    {"PC_SCOPE": "all", "PC_STACKS": "1"},
    {"PC_CALLGRAPH": "0"},
)


RACY_RUNS = 10		# a racy case runs this many times


def test_footprint_a_single_threaded_program_keeps_one_thread():
    # racy (a round in the handler beside one a call began, under the
    # try-lock): 10 short runs, the configurations in turn
    d = tempfile.mkdtemp(prefix="pc-fp1-")
    argv = [prog("footprint_one"), "0.12"]
    st, out, err = run(argv, d, clean_env(profiled=False))
    assert (st, out) == (0, "tasks 1 1\n"), "plain: exit %s, %r %r" % (st, out, err)
    for i in range(RACY_RUNS):
        c = CONFIGS[i % len(CONFIGS)]
        env = clean_env(dict(c, PC_VERBOSE="1", PC_OUT=os.path.join(d, "gmon.out")))
        pst, pout, perr = run(argv, d, env)
        line, n = summary(perr, "%s" % c)
        assert (pst, pout) == (st, out), \
            "run %d, %s: under libpc exit %s, %r; plain exit %s, %r" % (i, c, pst, pout, st, out)
        assert n > 50 and "live file" in line and "not placed" not in line, \
            "run %d, %s: %s" % (i, c, line)


def cc1():
    try:
        p = subprocess.run(["cc", "-print-prog-name=cc1"], capture_output=True,
                           text=True, timeout=30)
    except OSError:
        pctest.skip("no cc")
    path = p.stdout.strip()
    if not os.path.isabs(path) or not os.access(path, os.X_OK):
        pctest.skip("cc has no cc1 of its own (%r)" % path)
    return path


def generated(path, n):
    """n functions of loops and switches, each calling the one before."""
    r = random.Random(1)
    with open(path, "w") as f:
        for i in range(n):
            cases = "".join("case %d: s+=%d; break;" % (k, r.randint(0, 999))
                            for k in range(8))
            f.write("int f%d(int *a, int n){ int s=0; for(int i=0;i<n;i++){ "
                    "s += a[i]*%d ^ (s>>%d); if (s %% %d == 0) s += f%d(a, n-1); } "
                    "switch(n){%s} return s; }\n" % (
                        i, r.randint(1, 99), r.randint(1, 7), r.randint(2, 50),
                        max(i - 1, 0), cases))


def test_footprint_cc1_on_a_big_file_places_every_sample():
    # the big file once alone (the grower's work done in calls and the
    # handler), then, racy, a file of 25 functions 10 times beside the
    # snapshot thread (the grower thread's rounds beside the handlers).
    # The big file: 100 functions at 2700 Hz, some 4,500 samples in 1.7 s
    # of cc1's CPU and a live file grown to 8.4 MiB, where 250 functions
    # at the default 1000 Hz took 3.2 s plain and 3.9 s profiled for 3,000
    # samples and 6.1 MiB: the same growth and more, in half the CPU
    path = cc1()
    d = tempfile.mkdtemp(prefix="pc-fp1-")

    def compile_(src, out, env):
        st, o, e = run([path, "-quiet", "-O2", src, "-o", os.path.join(d, out)], d, env)
        with open(os.path.join(d, out)) as f:
            return st, o, e, f.read()
    for funcs, runs, extra, least in ((100, 1, {"PC_HZ": "2700"}, 200),
                                      (25, RACY_RUNS, {"PC_SNAPSHOT_INTERVAL": "0.05"}, 50)):
        src = os.path.join(d, "gen%d.c" % funcs)
        generated(src, funcs)
        st, _, err, asm = compile_(src, "plain.s", clean_env(profiled=False))
        assert st == 0, "plain cc1: exit %d: %s" % (st, err[-600:])
        for i in range(runs):
            env = clean_env(dict(extra, PC_VERBOSE="1", PC_SCOPE="all", PC_STACKS="1",
                                 PC_OUT=os.path.join(d, "cc.out")))
            pst, _, perr, pasm = compile_(src, "prof.s", env)
            what = "cc1, %d functions, run %d, %s" % (funcs, i, extra or "alone")
            assert pst == 0 and pasm == asm, "%s: exit %d, assembly %s plain's: %s" % (
                what, pst, "as" if pasm == asm else "not as", perr[-600:])
            line, n = summary(perr, what)
            assert n > least, "%s: %s" % (what, line)
            assert "not placed" not in line, "%s: %s" % (what, line)
            assert " 0 arc samples dropped" in line and " 0 stack samples dropped" in line, \
                "%s: %s" % (what, line)
