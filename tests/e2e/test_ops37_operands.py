# SPDX-License-Identifier: BSD-2-Clause
"""How often pcprof report's walk of its operands enters each file, counted
with strace: every lookup by name (open, stat, lstat, readlink, access) and
every listing of a directory, per file of the run. The walk asks after a
profile's manifest once (runfiles.c), lists a run's directory once for
every stage (cmd_report.c), and opens profiles whose manifests are read
without looking for them again (INPUTS_WHOLE). Figures (2026-12-07, a
forker run of 2 processes), the most-entered file before and after:
report DIR 12 and 4; report --process forker DIR 12 and 4; report EXE
gmon.out 6 and 6; report PROFILE PROFILE 8 and 5; report --format json
--callgraph DIR 24 and 8. The goal is 2 (issue 37); the ceilings below
are what the walk does now, so that it does not grow again. Since, the
first operand is peeked at by one open (runfiles_peek) whose answer the
walk keeps: report EXE gmon.out enters EXE twice (that peek and the
symbol table's open), not 6 times, and gmon.out 5 times, not 6; report
PROFILE PROFILE 4. A stacks file that may be absent is opened, not
asked after with access(2) first (pc_read_stacks_if). A profile's mtime,
which tells a stale manifest, is the one its read took (pc_run's mtimes),
not a stat of it again: report EXE gmon.out 4. A run's directory is
walked by readdir's types, with no lstat of each name where the type is
given, and is not stat'ed again once peeked at: report DIR 3, report
--process forker DIR 3, report --format json --callgraph DIR 6. inputs_open
tells its first operand's kind once for runfiles_open (runfiles_seen):
report EXE gmon.out 3. A manifest that may be absent is read, not stat'ed
first (runfiles_read_manifest_if): report PROFILE PROFILE 3, report
--format json --callgraph DIR 5. Whether a run's directory holds a
plain DIR/gmon.out is told from its listing (readdir's types), not by a
stat of its manifest: report DIR 2, report --process forker DIR 2 (the
goal), report --format json --callgraph DIR 4."""

import collections
import os
import re
import shutil
import subprocess
import tempfile

import pctest
from pctest import clean_env, prog

TRACED = ("open,openat,stat,lstat,newfstatat,statx,readlink,readlinkat,access,"
          "faccessat,faccessat2,getdents64")


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def entries(strace, top, argv):
    """{path under top: lookups} for pcprof report argv run in top, and
    what pcprof printed."""
    log = os.path.join(top, "strace.log")
    r = subprocess.run([strace, "-f", "-qq", "-y", "-o", log, "-e", "trace=" + TRACED,
                        pcprof(), "report"] + argv, capture_output=True, text=True,
                       timeout=60, cwd=top, env=clean_env(profiled=False))
    assert r.returncode == 0, (argv, r.returncode, r.stderr)
    count = collections.Counter()
    with open(log) as f:
        for line in f:
            m = re.match(r"\d+\s+(\w+)\((.*)", line)
            if not m:
                continue
            call, rest = m.groups()
            if call == "getdents64":
                # a listing: its first getdents64 of a descriptor is counted
                # by the open that made the descriptor
                continue
            p = re.search(r'"((?:[^"\\]|\\.)*)"', rest)
            if not p or not p.group(1):
                continue        # fstat of a descriptor: no lookup
            path = p.group(1)
            at = re.match(r"(\d+)<([^>]*)>", rest)
            if not path.startswith("/"):
                path = os.path.join(at.group(2) if at else top, path)
            path = os.path.normpath(path)
            if path.startswith(top + "/") and not path.endswith("strace.log"):
                count[os.path.relpath(path, top)] += 1
    os.unlink(log)
    return count, r.stdout


def test_ops37_report_walk_enters_each_file_a_bounded_number_of_times():
    strace = pctest.need("strace")
    top = tempfile.mkdtemp(prefix="pc-ops37-walk-")
    r = subprocess.run([pcprof(), "run", "-o", "r", "--no-report", "--stacks", "--",
                        prog("forker"), "0.2"], cwd=top, capture_output=True, text=True,
                       timeout=60, env=clean_env(profiled=False))
    assert r.returncode == 0, r.stderr
    child = sorted(n for n in os.listdir(os.path.join(top, "r"))
                   if re.fullmatch(r"gmon\.out\.forker\.\d+", n))
    assert len(child) == 1, os.listdir(os.path.join(top, "r"))
    # the executable beside the run, so that its lookups are counted
    shutil.copy(prog("forker"), os.path.join(top, "forker"))
    cases = [
        (["r"], 2),
        (["--process", "forker", "r"], 2),
        (["r/gmon.out", "r/" + child[0]], 3),
        (["--format", "json", "--callgraph", "r"], 4),
        (["./forker", "r/gmon.out"], 3),
    ]
    said = []
    for argv, ceiling in cases:
        count, out = entries(strace, top, argv)
        # the walk read the run: every process's profile and manifest
        # (the parent's alone where EXE names the one profile)
        read = ["r/gmon.out", "r/gmon.out.objects"]
        if argv[0] != "./forker":
            read.append("r/" + child[0])
        for f in read:
            assert count[f] >= 1, (argv, f, count)
        if argv[0] == "./forker":
            assert 1 <= count["forker"] <= 2, (argv, count)
        path, most = count.most_common(1)[0]
        assert most <= ceiling, (argv, path, most, sorted(count.items()))
        said.append("%s %d (%s)" % (" ".join(argv), most, os.path.basename(path)))
        assert "forker" in out, (argv, out)
    return "; ".join(said)
