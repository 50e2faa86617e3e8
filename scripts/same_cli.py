#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Does pcprof still say the same? Records a set of profiles once, then runs
every command line of CASES (each command, format and error case) with two
builds of pcprof on the same files, and compares standard output, standard
error, the exit status and every file a command writes, byte for byte.

For a change that should not change behaviour (a refactor):

    git worktree add /tmp/before HEAD && make -C /tmp/before
    make && python3 scripts/same_cli.py --before /tmp/before/build --after build

Prints one line per command line that differs, and a count; exits 1 if any
differs. The profiles are recorded with the test programs (`make check`
builds them) and the --before build's libpc.so and pcprof run, so that both
builds read the same files, and files as the build before wrote them (what
a newer pcprof must go on reading).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

# Profiles recorded once: (name, argv, environment)
RECORD = [
    ("run1", ["pcprof", "run", "-o", "run1", "--no-report", "--stacks", "--",
              "P/forker", "0.3"], {}),
    ("run2", ["pcprof", "run", "-o", "run2", "--no-report", "--stacks", "--",
              "P/cxx"], {}),
    ("threads", ["pcprof", "run", "-o", "threads", "--no-report", "--stacks",
                 "--", "P/namedthreads"], {}),
]
SINGLE = [
    # (directory, argv) for profiles written by libpc directly
    ("three", ["P/three-pie"], {"PC_STACKS": "1"}),
    ("base1", ["P/regress-base", "0.2", "2"], {"PC_STACKS": "1"}),
    ("base2", ["P/regress-base", "0.2", "2"], {"PC_STACKS": "1"}),
    ("slow1", ["P/regress-slow", "0.2", "2"], {"PC_STACKS": "1"}),
    ("slow2", ["P/regress-slow", "0.2", "2"], {"PC_STACKS": "1"}),
]

T = "P/three-pie"
G = "three/gmon.out"
CASES = [
    # usage and help
    [], ["--help"], ["--version"], ["nosuch"], ["report"], ["report", "--help"],
    ["run", "--help"], ["merge", "--help"], ["flame", "--help"], ["diff", "--help"],
    ["compare", "--help"], ["annotate", "--help"],
    # report of one profile, every format and view
    ["report", T, G], ["report", "--top", "2", T, G],
    ["report", "--format", "json", T, G], ["report", "--format", "csv", T, G],
    ["report", "--format", "folded", T, G], ["report", "--callgraph", T, G],
    ["report", "--by-object", T, G], ["report", "--lines", T, G],
    ["report", "--keep-pieces", T, G], ["report", "--no-demangle", T, G],
    ["report", "-o", "out.txt", T, G], ["report", "--by-thread", T, G],
    # report of whole runs
    ["report", "run1"], ["report", "run2"], ["report", "threads"],
    ["report", "--format", "json", "run1"], ["report", "--format", "csv", "run2"],
    ["report", "--by-object", "run2"], ["report", "--full-names", "run2"],
    ["report", "--by-thread", "threads"], ["report", "--thread", "pc-two", "threads"],
    ["report", "--process", "1", "run1"], ["report", "--process", "forker", "run1"],
    ["report", "--format", "json", "--by-thread", "threads"],
    # exports
    ["report", "--format", "pprof", "-o", "p.pb.gz", T, G],
    ["report", "--format", "speedscope", "-o", "s.json", T, G],
    ["report", "--format", "callgrind", "-o", "cg.out", T, G],
    ["report", "--format", "pprof", "-o", "p2.pb.gz", "run2"],
    # flame graphs
    ["flame", "-o", "f.svg", T, G], ["flame", "-o", "f2.svg", "P/cxx", "run2/gmon.out"], ["report", "--format", "folded", "run2"],
    # merge
    ["merge", "-o", "m.out", "base1/gmon.out", "base2/gmon.out"],
    ["report", "P/regress-base", "m.out"],
    # annotate
    ["annotate", T, G, "work_alpha"], ["annotate", "--asm", T, G, "work_beta"],
    ["annotate", "--source", T, G, "work_gamma"], ["annotate", T, G, "nosuchfn"],
    # diff, every format, and both verdicts
    ["diff", "--base", "P/regress-base", "base1/gmon.out", "base2/gmon.out",
     "--new", "P/regress-slow", "slow1/gmon.out", "slow2/gmon.out"],
    ["diff", "--format", "json", "--base", "P/regress-base", "base1/gmon.out",
     "base2/gmon.out", "--new", "P/regress-slow", "slow1/gmon.out", "slow2/gmon.out"],
    ["diff", "--format", "markdown", "--base", "P/regress-base", "base1/gmon.out",
     "base2/gmon.out", "--new", "P/regress-slow", "slow1/gmon.out", "slow2/gmon.out"],
    ["diff", "--metric", "total", "--base", "P/regress-base", "base1/gmon.out",
     "base2/gmon.out", "--new", "P/regress-base", "base1/gmon.out", "base2/gmon.out"],
    ["diff", "--flame", "d.svg", "--base", "P/regress-base", "base1/gmon.out",
     "base2/gmon.out", "--new", "P/regress-slow", "slow1/gmon.out", "slow2/gmon.out"],
    # errors: missing, corrupt, foreign, wrong options
    ["report", T, "nosuch.out"], ["report", T, "bad.out"], ["report", T, "empty.out"],
    ["report", "/etc/passwd", G], ["report", "--format", "xml", T, G],
    ["report", "--top", "x", T, G], ["report", "--frob", T, G],
    ["report", T, "bad.out.objects"], ["flame", T, G], ["merge", "m2.out"],
    ["diff", "--base", T], ["annotate", T, G], ["report", "nosuchdir/"],
    ["report", "--process", "nosuch", "run1"], ["report", "--thread", "nosuch", "threads"],
    ["report", "--stacks-file", "nosuch.stacks", "--format", "folded", T, G],
    # how a run's files are found and its manifests read (runfiles.c)
    ["report", "run2/gmon.out"], ["report", "P/cxx", "run2"],
    ["report", "P/cxx", "run2/gmon.out"], ["report", "--format", "folded", "P/cxx", "run2"],
    ["report", "--format", "pprof", "-o", "p3.pb.gz", "P/cxx", "run2/gmon.out"],
    ["report", "--format", "speedscope", "-o", "s2.json", "run1"],
    ["report", "P/three-pie", "three"], ["report", "three"], ["report", "three/gmon.out"],
    ["report", "run1", "three/gmon.out"], ["report", "--process", "cxx", "run2"],
    # a killed run: its live file finished by pcprof, then read
    ["report", "killed"], ["report", "--format", "json", "killed"],
    ["report", "P/three-pie", "killed"],
]


def sh(argv, cwd, env, bindir):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    e.update(env)
    e["PATH"] = bindir + ":" + e["PATH"]
    return subprocess.run(argv, cwd=cwd, env=e, capture_output=True, timeout=120)


def record_killed(d, fix, after):
    """A run SIGKILLed under PC_SCOPE=all: it leaves its live file, which
    each command finishes in its own copy."""
    os.makedirs(d)
    e = dict(os.environ, LD_PRELOAD=os.path.abspath(os.path.join(after, "libpc.so")),
             PC_SCOPE="all")
    p = subprocess.Popen(fix(["P/three-pie", "30"]), cwd=d, env=e,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    p.kill()
    p.wait()
    if not any(n.endswith(".live") for n in os.listdir(d)):
        sys.exit("same_cli: the killed run left no live file")


def prepare(work, before, progs):
    """The inputs, recorded once with the --before build's libpc."""
    bindir = os.path.join(work, "bin-record")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(os.path.join(before, "pcprof")),
               os.path.join(bindir, "pcprof"))
    fix = lambda argv: [a.replace("P/", progs + "/", 1) if a.startswith("P/") else a
                        for a in argv]
    for name, argv, env in RECORD:
        r = sh(fix(argv), work, env, bindir)
        if r.returncode != 0:
            sys.exit("same_cli: recording %s failed: %s" % (name, r.stderr.decode()))
    for name, argv, env in SINGLE:
        d = os.path.join(work, name)
        os.makedirs(d)
        e = dict(env, LD_PRELOAD=os.path.abspath(os.path.join(before, "libpc.so")))
        r = sh(fix(argv), d, e, bindir)
        if r.returncode != 0:
            sys.exit("same_cli: recording %s failed: %s" % (name, r.stderr.decode()))
    record_killed(os.path.join(work, "killed"), fix, before)
    with open(os.path.join(work, "three/gmon.out"), "rb") as f:
        good = f.read()
    with open(os.path.join(work, "bad.out"), "wb") as f:
        f.write(good[:40] + b"\xff" * 16 + good[56:200])
    open(os.path.join(work, "empty.out"), "wb").close()
    with open(os.path.join(work, "bad.out.objects"), "wb") as f:
        f.write(b"pcprof objects 9\ngarbage\n")
    # the programs by a path that is the same for both builds
    os.symlink(progs, os.path.join(work, "P"))
    return fix


def outputs(d):
    """Every file a command wrote in d, by name."""
    got = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                got[n] = f.read()
    return got


def one(work, build, argv, tag):
    """argv run in a copy of the inputs, as `pcprof`, with build's binary."""
    d = os.path.join(work, tag)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(work, "in"), d, symlinks=True)
    bindir = os.path.join(work, "bin-" + tag)
    if not os.path.exists(bindir):
        os.makedirs(bindir)
        os.symlink(os.path.abspath(os.path.join(build, "pcprof")),
                   os.path.join(bindir, "pcprof"))
    before = set(os.listdir(d))
    r = sh(["pcprof"] + argv, d, {}, bindir)
    files = {k: v for k, v in outputs(d).items() if k not in before}
    return r.returncode, r.stdout, r.stderr, files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="the build before (its folder)")
    ap.add_argument("--after", default="build", help="the build after")
    ap.add_argument("--progs", default="build/tests/progs")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="same-cli-")
    inputs = os.path.join(work, "in")
    os.makedirs(inputs)
    fix = prepare(inputs, a.before, os.path.abspath(a.progs))
    differ = 0
    for argv in CASES:
        argv = fix(argv)
        b = one(work, a.before, argv, "before")
        n = one(work, a.after, argv, "after")
        if b != n:
            differ += 1
            what = [w for w, x, y in zip(("status", "stdout", "stderr", "files"), b, n)
                    if x != y]
            print("differs (%s): pcprof %s" % (", ".join(what), " ".join(argv)))
            if "stderr" in what:
                print("  before: %r\n  after:  %r" % (b[2][-300:], n[2][-300:]))
    print("same_cli: %d command lines, %d the same, %d differ" %
          (len(CASES), len(CASES) - differ, differ))
    if a.keep:
        print("same_cli: kept %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
