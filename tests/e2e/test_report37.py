# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of `pcprof run`'s report made in pcprof's own process
(issue 37): the report's own refusals (cmd_report.c's and
alloc_report.c's, which ended a child of their own before) are one line
each, the run keeps the program's status and output as it has them
plain, and a report file that was not made whole is not left behind,
whole or in part."""

import os
import subprocess
import tempfile

from pctest import BUILD, clean_env, default_signals, prog

TIMEOUT = 60


def run(argv, cwd=None):
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          env=clean_env(None, profiled=False),
                          preexec_fn=default_signals, start_new_session=True)


def test_report37_refusals_of_the_report_keep_the_programs_status():
    exe = prog("behave")
    p0 = run([exe, "7"])
    assert p0.returncode == 7, p0.stderr
    pcprof = os.path.join(os.path.abspath(BUILD), "pcprof")
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    cases = [
        # cmd_report.c: views that do not go together
        (["--lines", "--callgraph"], "--lines: a profile of lines, not with --callgraph"),
        (["--main-only", "--by-object"], "no objects manifest beside it"),
        (["--clock", "wall", "--lines"],
         "--lines: a view of CPU samples (--clock cpu); the wall view is by function"),
        # alloc_report.c
        (["--alloc", "--format", "csv"], "--alloc: a table in text or json"),
        (["--metric", "alloc", "--by-object"], "--by-object: not of an allocation profile"),
        # a report file begun, then refused (no stacks for folded stacks):
        # neither it nor its temporary is left
        (["--main-only", "--format", "folded", "--report", "f.txt"],
         "gmon.out.stacks': No such file or directory"),
    ]
    for i, (extra, said) in enumerate(cases):
        p = run([pcprof, "run", "-o", "r%d" % i] + extra + ["--", exe, "7"], cwd=d)
        assert p.returncode == 7, (extra, p.returncode, p.stderr)
        assert p.stdout == p0.stdout, (extra, p.stdout)
        assert p.stderr.startswith(p0.stderr), (extra, p.stderr)
        mine = p.stderr[len(p0.stderr):].splitlines()
        assert len(mine) == 1 and mine[0].startswith("pcprof: ") and said in mine[0], \
            (extra, said, mine)
        assert "gmon.out" in os.listdir(os.path.join(d, "r%d" % i)), extra
    assert sorted(f for f in os.listdir(d) if not f.startswith("r")) == [], os.listdir(d)
