# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of issue 37's errors as values: below tools/commands/
an error is returned, said once, and only a command ends pcprof. `pcprof
run`'s report fails in each way it can (a report file it cannot write, a
--process that names no process, a damaged profile), and so does the
gmon.wall of a wall-clock run, which pcprof run now makes in its own
process, and the run still exits with the program's own status and
output, as it does plain, with the one line that says what went
wrong."""

import os
import subprocess
import tempfile

from pctest import BUILD, clean_env, default_signals, prog

TIMEOUT = 60


def pcprof(*args, cwd=None):
    return subprocess.run([os.path.join(os.path.abspath(BUILD), "pcprof")] + list(args),
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          env=clean_env(None, profiled=False),
                          preexec_fn=default_signals)


def plain(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                          env=clean_env(None, profiled=False),
                          preexec_fn=default_signals)


def test_errors37_a_failed_report_keeps_the_programs_status():
    exe = prog("behave")
    p0 = plain([exe, "7"])
    assert p0.returncode == 7, p0.stderr
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    cases = [
        # the report file cannot be made
        (["--report", os.path.join(d, "no-such-dir", "r.txt")],
         "'%s': No such file or directory" % os.path.join(d, "no-such-dir", "r.txt")),
        # a --process that names no process of the run (runview.c's
        # error, passed up as a value)
        (["--process", "nosuch"], "no process nosuch in the run"),
    ]
    for i, (extra, said) in enumerate(cases):
        p = pcprof("run", "-o", "r%d" % i, *extra, "--", exe, "7", cwd=d)
        assert p.returncode == 7, (extra, p.returncode, p.stderr)
        assert p.stdout == p0.stdout, (extra, p.stdout)
        assert p.stderr.startswith(p0.stderr), (extra, p.stderr)
        mine = [l for l in p.stderr[len(p0.stderr):].splitlines() if l.startswith("pcprof:")]
        assert len([l for l in mine if said in l]) == 1, (extra, said, mine)
        assert os.path.exists(os.path.join(d, "r%d" % i, "gmon.out")), os.listdir(d)
    # a wall-clock run whose gmon.wall cannot be written (a directory
    # there): made in pcprof run's own process, its error is a value
    w = os.path.join(d, "w")
    os.makedirs(os.path.join(w, "gmon.wall"))
    p = pcprof("run", "--clock", "wall", "-o", "w", "--", exe, "7", cwd=d)
    assert p.returncode == 7, (p.returncode, p.stderr)
    assert p.stdout == p0.stdout, p.stdout
    mine = [l for l in p.stderr.splitlines() if l.startswith("pcprof: '")]
    assert mine == ["pcprof: '%s': is a directory" % os.path.join(w, "gmon.wall")], mine
    assert "Run in w: 1 process" in p.stderr, p.stderr
    # the profile itself damaged: the report says so in one line and
    # status 2, the program's run before it kept its 7
    r = os.path.join(d, "r0")
    with open(os.path.join(r, "gmon.out"), "r+b") as f:
        f.truncate(30)
    p = pcprof("report", r, cwd=d)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pcprof: '") and "gmon.out'" in lines[0], lines
