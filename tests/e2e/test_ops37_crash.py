# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end test of pcprof run's crash-in-report path
(tools/commands/run_report.c): a fault while the report is made prints one
line, removes the report's temporary file and ends pcprof as its program
ended. No bug is planted in pcprof: gdb stops pcprof where the report
starts (report_run, with the fault guard on and --report FILE's temporary
file made) and sends it to address 0, a real SIGSEGV (SEGV_MAPERR), which
gdb passes on to pcprof's handler. A SIGSEGV sent with kill(2) is no
fault (si_code SI_USER), which the handler leaves alone by design."""

import os
import re
import shlex
import signal
import subprocess
import tempfile

import pctest
from pctest import clean_env, prog


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def crash_in_report(top, program_sh):
    """pcprof run --report top/rep.txt -o top/run -- sh -c program_sh under
    gdb, made to fault at report_run: (what pcprof wrote on standard error,
    the names in top when it faulted, those left after, its exit code or
    None, its signal or None)."""
    gdb = pctest.need("gdb")
    err = os.path.join(top, "err")
    at_fault = os.path.join(top, "at-fault")
    argv = [pcprof(), "run", "--report", os.path.join(top, "rep.txt"), "-o",
            os.path.join(top, "run"), "--", "sh", "-c", program_sh]
    cmd = [gdb, "-q", "-batch", "-nx",
           "-ex", "set pagination off",
           "-ex", "set startup-with-shell on",
           # every signal passed on unseen: the fault, and the program's end
           "-ex", "handle all nostop noprint pass",
           "-ex", "break report_run",
           "-ex", "run %s 2>%s" % (" ".join(shlex.quote(a) for a in argv[1:]),
                                   shlex.quote(err)),
           "-ex", "shell ls -a %s > %s" % (shlex.quote(top), shlex.quote(at_fault)),
           "-ex", "set var $pc = 0",
           "-ex", "continue",
           "-ex", "print $_exitcode",
           "-ex", "print $_exitsignal",
           argv[0]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                       env=clean_env(profiled=False), cwd=top, start_new_session=True)
    assert "Breakpoint 1, report_run" in r.stdout, (r.stdout, r.stderr)
    vals = re.findall(r"^\$\d+ = (.*)$", r.stdout, re.M)
    assert len(vals) == 2, (r.stdout, r.stderr)
    code, sig = (None if v == "void" else int(v) for v in vals)
    with open(err) as f:
        said = f.read()
    with open(at_fault) as f:
        before = sorted(f.read().split())
    after = sorted(os.listdir(top))
    return said, before, after, code, sig


def check_one(program_sh, code, sig):
    top = tempfile.mkdtemp(prefix="pc-ops37-crash-")
    said, before, after, got_code, got_sig = crash_in_report(top, program_sh)
    lines = said.splitlines()
    # one line, naming the run and the fault
    assert lines == ["pcprof: the report of '%s' failed: Segmentation fault"
                     % os.path.join(top, "run")], said
    # --report FILE's temporary file was there when it faulted, and is gone
    tmp = [n for n in before if n.startswith("rep.txt.")]
    assert len(tmp) == 1, before
    assert sorted(n for n in after if n not in ("err", "at-fault")) == ["run"], after
    # the program's own end, kept
    assert (got_code, got_sig) == (code, sig), (got_code, got_sig, code, sig)
    # and the run's profiles are whole: a report of them now works
    r = subprocess.run([pcprof(), "report", os.path.join(top, "run")], capture_output=True,
                       text=True, timeout=60, env=clean_env(profiled=False))
    assert r.returncode == 0 and "three-pie" in r.stdout, (r.returncode, r.stderr)
    return tmp[0]


def test_ops37_a_fault_in_the_report_is_one_line_no_file_and_the_programs_status():
    burn = shlex.quote(prog("three-pie"))
    # an exit status, then a death by a signal: pcprof ends the same way
    check_one("%s 0.1 >/dev/null; exit 3" % burn, 3, None)
    check_one("%s 0.1 >/dev/null; kill -TERM $$" % burn, None, int(signal.SIGTERM))
    return "exit 3 and SIGTERM kept; one line; the temporary file removed"
