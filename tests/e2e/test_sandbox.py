# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests that a program's resources and sandboxes stay the
program's (DESIGN.md, "Contracts that tests must hold"): libpc holds no
descriptor of the program's (no copy of stderr: a daemon's shell returns
at once), its writes never raise SIGXFSZ under a lowered RLIMIT_FSIZE,
and where it has nowhere to write at exit (RLIMIT_NOFILE, a full
descriptor table, setuid, chroot) or is stopped by a seccomp sandbox
(a filter, strict mode), the program ends as plain and the live file is
the profile, which pcprof report finishes.

Every case runs tests/progs/sandbox plain and under libpc.so, with each
timer and clock: the same output and status, and the profile holds
sandbox_burn's samples."""

import os
import re
import shlex
import subprocess
import tempfile
import time

import pctest
from pctest import clean_env, prog
from test_host import both, host, libpc_said, plain_ok, same, status_text, tail, \
    finish_live_files, gmon_samples, kill_group

CONFIGS = [
    ("posix", {"PC_TIMER": "posix"}),
    ("taskclock", {"PC_TIMER": "taskclock"}),
    ("stacks", {"PC_STACKS": "1"}),
    ("wall", {"PC_CLOCK": "wall"}),
]


def sandbox():
    return prog("sandbox")


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def burn_samples(r, what):
    """sandbox_burn's samples in r's profile, as pcprof report counts them
    from the directory (which finishes the live files left there)."""
    p = subprocess.run([pcprof(), "report", sandbox(), r.cwd], capture_output=True,
                       text=True, timeout=60)
    # a wall-clock report has an object column before the function
    m = re.search(r"^\s*[\d.]+\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+(?:\S+\s+)?sandbox_burn$",
                  p.stdout, re.M)
    assert p.returncode == 0 and m, \
        "%s: pcprof report has no sandbox_burn: status %d, %s; directory %s" % (
            what, p.returncode, tail(p.stdout + p.stderr),
            sorted(os.listdir(r.cwd)))
    left = [f for f in os.listdir(r.cwd) if f.endswith((".live", ".tmp"))]
    assert not left, "%s: left in the directory: %s" % (what, left)
    return int(m.group(1))


def libpc_lines(r):
    return [l for l in r.stderr.splitlines() if l.startswith("libpc:")]


def each_config(argv, check, configs=CONFIGS, **kw):
    """argv plain once, then under libpc with each configuration; check(prof,
    plain, what) for each. The figures, one line."""
    plain = host(argv, profiled=False, **kw)
    said = []
    for name, env in configs:
        prof = host(argv, env=env, **kw)
        what = "%s under %s" % (" ".join(argv[1:]), name)
        said.append("%s: %s" % (name, check(prof, plain, what)))
    return "; ".join(said)


# ------------------------------------------------------------- descriptors

def fd_lines(out, who):
    return {l.split(" ", 1)[1] for l in out.splitlines() if l.startswith(who + " fd ")}


def extra_events(prof, plain, who, what):
    """The descriptors the libpc run has that the plain one has not: only
    task-clock events above 600, one for the thread that lists them."""
    got, want = fd_lines(prof.stdout, who), fd_lines(plain.stdout, who)
    assert want, "%s: the plain run listed nothing: %r" % (what, plain.stdout)
    missing, extra = want - got, got - want
    events = {e for e in extra if re.match(r"fd (\d+) anon_inode$", e) and
              int(e.split()[1]) >= 600}
    assert not missing and extra == events and len(events) <= 1, \
        "%s: the %s's descriptors under libpc differ from plain: %s more, %s fewer; %s" % (
            what, who, sorted(extra), sorted(missing), libpc_said(prof))
    return len(events)


def test_libpc_holds_no_descriptor_of_the_programs():
    """/proc/self/fd of the program, and of a fork child made while a
    second thread lives: the same as plain, but for one task-clock event
    of the listing thread's own (PC_TIMER=taskclock). No copy of stderr,
    no libunwind pipe (PC_CLOCK=wall), no event of another thread in the
    child, nothing of the snapshot thread's between snapshots (its
    interval is longer than the run: a snapshot's files are open in the
    program's table while it is written)."""
    def check(prof, plain, what):
        plain_ok(plain, 0, what)
        same(prof, plain, what, ignore=("parent fd", "child fd"))
        return "%d + %d events" % (extra_events(prof, plain, "parent", what),
                                   extra_events(prof, plain, "child", what))
    return each_config([sandbox(), "fds"], check,
                       CONFIGS + [("snapshots", {"PC_SNAPSHOT_INTERVAL": "60000"}),
                                  ("scope all", {"PC_SCOPE": "all"})])


def test_a_daemon_child_does_not_hold_the_shells_output():
    """x=$(prog 2>&1) where prog forks a child that closes 0-2 and sleeps
    3 s: the shell returns when prog exits, as plain (libpc's copy of
    stderr at descriptor 200 made it wait the 3 s)."""
    said = []
    for name, env in [("plain", None)] + CONFIGS:
        e = clean_env(None, profiled=False)
        pre = "" if env is None else " ".join(
            "%s=%s" % kv for kv in [("LD_PRELOAD", pctest.lib())] + sorted(env.items()))
        cmd = 'x=$(%s %s daemon 2>&1); echo "$x"' % (pre, shlex.quote(sandbox()))
        cwd = tempfile.mkdtemp(prefix="pc-sandbox-")
        t0 = time.monotonic()
        p = subprocess.Popen(["sh", "-c", cmd], cwd=cwd, env=e, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(p)
            raise AssertionError("%s: the shell hung" % name)
        took = time.monotonic() - t0
        m = re.match(r"daemon (\d+)$", out.strip())
        if m:
            try:
                os.kill(int(m.group(1)), 9)
            except ProcessLookupError:
                pass
        assert p.returncode == 0 and m, "%s: status %d, stdout %r, stderr %s" % (
            name, p.returncode, out, tail(err))
        assert took < 2.0, "%s: $(...) took %.2f s: the daemon (which sleeps 3 s) " \
            "holds the shell's pipe" % (name, took)
        said.append("%s %.2f s" % (name, took))
    return ", ".join(said)


# ------------------------------------------------------------- limits

def test_rlimit_fsize_lowered_before_exit_raises_no_sigxfsz():
    """The program prints 2000 lines to a pipe, lowers RLIMIT_FSIZE to 0
    or 100 bytes and exits: it exits 0 with all its output, as plain (it
    died of SIGXFSZ, exit 153, with a partial temporary file); the write
    of the profile fails cleanly and the live file is the profile."""
    said = []
    for limit in ("0", "100"):
        def check(prof, plain, what):
            plain_ok(plain, 0, what)
            same(prof, plain, what)
            assert len(libpc_lines(prof)) <= 1, "%s: %s" % (what, libpc_said(prof))
            return "%d samples" % burn_samples(prof, what)
        said.append("limit %s: %s" % (limit, each_config(
            [sandbox(), "fsize", limit], check, CONFIGS[:3], verbose=False)))
    return "; ".join(said)


def nowhere(argv, what_for):
    def check(prof, plain, what):
        plain_ok(plain, 0, what)
        same(prof, plain, what)
        lines = libpc_lines(prof)
        assert len(lines) == 1 and what_for in lines[0], \
            "%s: want one libpc line saying %r: %s" % (what, what_for, lines)
        return "%d samples" % burn_samples(prof, what)
    return each_config(argv, check, CONFIGS[:3], verbose=False)


def test_rlimit_nofile_of_3_leaves_the_live_file_as_the_profile():
    return nowhere([sandbox(), "nofile"], "too many open files")


def test_a_full_descriptor_table_leaves_the_live_file_as_the_profile():
    return nowhere([sandbox(), "fulltable"], "too many open files")


def need_root():
    if os.geteuid() != 0:
        pctest.skip("setuid and chroot need root")


def test_setuid_to_nobody_leaves_the_live_file_as_the_profile():
    need_root()
    return nowhere([sandbox(), "setuid"], "permission denied")


def test_chroot_leaves_the_live_file_as_the_profile():
    need_root()
    return nowhere([sandbox(), "chroot", tempfile.mkdtemp(prefix="pc-root-")],
                   "no such directory")


# ------------------------------------------------------------- seccomp

def sandboxed(argv):
    """Exits as plain, libpc says nothing (it writes nothing once
    sandboxed), and the live file is the profile."""
    def check(prof, plain, what):
        plain_ok(plain, 0, what)
        same(prof, plain, what)
        assert not libpc_lines(prof), "%s: %s" % (what, libpc_said(prof))
        return "%d samples" % burn_samples(prof, what)
    return each_config(argv, check, verbose=False)


def test_seccomp_filter_set_with_prctl_that_kills_on_openat():
    return sandboxed([sandbox(), "openat", "prctl"])


def test_seccomp_filter_set_with_syscall_that_kills_on_openat():
    return sandboxed([sandbox(), "openat", "syscall"])


def test_seccomp_filter_with_tsync_beside_a_running_thread():
    return sandboxed([sandbox(), "openat", "tsync"])


def test_a_seccomp_probe_with_no_filter_leaves_libpc_running():
    """libseccomp's and systemd's probes (a filter of NULL, EFAULT) enter
    no sandbox: libpc samples on and writes gmon.out at exit."""
    def check(prof, plain, what):
        plain_ok(plain, 0, what)
        same(prof, plain, what)
        assert "probes: EFAULT EFAULT, seccomp mode 0" in plain.stdout, plain.stdout
        assert re.search(r"^libpc: wrote \S+gmon\.out: ", prof.stderr, re.M), \
            "%s: %s" % (what, libpc_said(prof))
        return "%d samples" % burn_samples(prof, what)
    return each_config([sandbox(), "probe"], check, CONFIGS[:2])


def test_an_image_started_under_a_filter_leaves_libpc_off():
    """A filter that kills on timer_create and perf_event_open (which
    libpc's start-up makes), then exec of echo: the new image loads libpc,
    which sees the filter and stays off, and echo prints as plain; the
    first image's samples are in its live file."""
    return sandboxed([sandbox(), "exec", "echo"])


def test_strict_mode_worker_thread_finishes_as_plain():
    return sandboxed([sandbox(), "strict", "thread"])


def test_strict_mode_worker_process_finishes_as_plain():
    return sandboxed([sandbox(), "strict", "process"])
