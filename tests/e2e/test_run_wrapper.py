# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of pcprof run as a command wrapper: the signals that
stop it reach the command (its process group) once, and it reports before
it dies of them; -o DIR is one run's; a command that cannot run gets the
status and the one line a shell gives it; an AddressSanitizer program
runs, with its status."""

import fcntl
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import termios
import time

from pctest import BUILD, clean_env, default_signals, need, prog

DEADLINE = 60	# seconds for anything a busy machine may be slow to do


def pcprof_path():
    return os.path.join(os.path.abspath(BUILD), "pcprof")


def start(args, cwd, env=None, **kw):
    """pcprof ARGS... started, its output piped; with no controlling
    terminal (a session of its own) unless kw says otherwise."""
    kw.setdefault("start_new_session", True)
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("preexec_fn", default_signals)
    return subprocess.Popen([pcprof_path()] + list(args), cwd=cwd,
                            env=clean_env(env, profiled=False),
                            stderr=subprocess.PIPE, **kw)


class Lines:
    """The lines written to fd (a pipe or a terminal's master side), read
    as they come, each awaited with a deadline."""

    def __init__(self, fd):
        self.fd, self.buf, self.seen = fd, b"", []

    def _more(self, deadline):
        r, _, _ = select.select([self.fd], [], [], max(0, deadline - time.monotonic()))
        if not r:
            return False
        try:
            b = os.read(self.fd, 4096)
        except OSError:		# EIO: the terminal's last user is gone
            b = b""
        if not b:
            return False
        self.buf += b
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.seen.append(line.decode().rstrip("\r"))
        return True

    def wait_for(self, pattern):
        """The first line seen that matches pattern: its match."""
        deadline = time.monotonic() + DEADLINE
        while True:
            for line in self.seen:
                m = re.fullmatch(pattern, line)
                if m:
                    return m
            if time.monotonic() > deadline or not self._more(deadline):
                raise AssertionError("no line like %r; saw %r" % (pattern, self.seen))


def cpu_seconds(pid):
    """User and system CPU seconds of process pid so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_cpu(pid, seconds):
    deadline = time.monotonic() + DEADLINE
    while cpu_seconds(pid) < seconds:
        assert time.monotonic() < deadline, "pid %d: under %.1f s of CPU" % (pid, seconds)
        time.sleep(0.02)


def pending(pid, sig):
    """Whether sig waits for delivery to process pid."""
    with open("/proc/%d/status" % pid) as f:
        masks = [int(l.split()[1], 16) for l in f if l.startswith(("SigPnd:", "ShdPnd:"))]
    return any(m & (1 << (sig - 1)) for m in masks)


def alive(pid):
    return os.path.exists("/proc/%d" % pid)


def leave_nothing(p, pids=()):
    """Kill what is left of p and of pids, so that a failed test leaves no
    CPU burning."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    if p.poll() is None:
        p.kill()
        p.wait()


def finish(p, pids=()):
    """p's status and standard error, once it has ended; then
    leave_nothing."""
    try:
        _, err = p.communicate(timeout=DEADLINE)
        return p.returncode, err.decode()
    finally:
        leave_nothing(p, pids)


def reported(err, dirname, program):
    """The report on standard error: the run's line and program's share
    of the samples (percent)."""
    assert re.search(r"^Run in %s: \d+ process" % re.escape(dirname), err, re.M), err
    m = re.search(r"^\s+[\d.]+\s+([\d.]+)%\s+[\d.]+%\s+\d+\s+\S+\s+" + program + "$",
                  err, re.M)
    assert m, err
    return float(m.group(1))


def test_run_passes_a_stop_signal_on_and_dies_of_it_after_the_report():
    """SIGTERM, SIGINT or SIGHUP sent to pcprof run alone (kill PID, not
    the terminal), after 1 s of the command's CPU time: the command, in a
    process group of its own as pcprof has no terminal, gets it and ends;
    pcprof reports its profile, then dies of the same signal. No orphan."""
    notes = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        d = tempfile.mkdtemp(prefix="pc-e2e-")
        p = start(["run", "-o", "run", "--", prog("burn"), "60"], cwd=d)
        pids = []
        try:
            pid = int(Lines(p.stdout.fileno()).wait_for(r"pid (\d+)").group(1))
            pids.append(pid)
            assert os.getpgid(pid) == pid, "the command is not in a group of its own"
            wait_cpu(pid, 1.0)
            p.send_signal(sig)
        finally:
            rc, err = finish(p, pids)
        assert rc == -sig, (sig.name, rc, err)
        assert not alive(pid), "%s: the command outlived pcprof run" % sig.name
        share = reported(err, "run", "burn_work")
        sampled = float(re.search(r"^Run in run: 1 process, ([\d.]+) s of CPU", err,
                                  re.M).group(1))
        assert share > 95 and sampled >= 0.9, (sig.name, share, sampled, err)
        notes.append("%s %.2f s" % (sig.name, sampled))
    return ", ".join(notes)


def test_run_passes_a_stop_on_to_the_commands_whole_group():
    """kill -TERM of pcprof run reaches every process of the command's
    group: sh, and the burn and cat of its pipeline, which a signal to sh
    alone would leave running. pcprof waits for sh, its command; burn
    ends of the signal (libpc writes its profile) in its own time."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = start(["run", "-o", "run", "--", "sh", "-c", "'%s' 60 | cat" % prog("burn")], cwd=d)
    pids = []
    try:
        pid = int(Lines(p.stdout.fileno()).wait_for(r"pid (\d+)").group(1))
        pids.append(pid)
        wait_cpu(pid, 0.5)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=DEADLINE)
        deadline = time.monotonic() + DEADLINE
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        leave_nothing(p, pids)
    rc, err = p.returncode, err.decode()
    assert rc == -signal.SIGTERM, (rc, err)
    assert not alive(pid), "burn, started by sh, outlived pcprof run"
    assert re.search(r"^Run in run: \d+ process", err, re.M), err
    again = subprocess.run([pcprof_path(), "report", "run"], cwd=d, capture_output=True,
                           text=True, timeout=DEADLINE)
    assert reported(again.stderr + again.stdout, "run", "burn_work") > 50, again


def test_run_keeps_the_report_through_a_second_signal():
    """Two SIGHUPs to pcprof run, then SIGTERM: each reaches the command
    once (it counts them, and ends at SIGTERM with status 0); pcprof stays
    for the report, then dies of the first signal it passed on."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = start(["run", "-o", "run", "--", prog("burn"), "60", "count"], cwd=d)
    out = Lines(p.stdout.fileno())
    pids = []
    try:
        pids.append(int(out.wait_for(r"pid (\d+)").group(1)))
        wait_cpu(pids[0], 0.3)	# enough samples for a report to judge
        p.send_signal(signal.SIGHUP)
        out.wait_for(r"INT 0 HUP 1")
        p.send_signal(signal.SIGHUP)
        out.wait_for(r"INT 0 HUP 2")
        p.send_signal(signal.SIGTERM)
        out.wait_for(r"end INT 0 HUP 2")
    finally:
        rc, err = finish(p, pids)
    assert rc == -signal.SIGHUP, (rc, err)
    assert "INT 0 HUP 3" not in out.seen, out.seen
    assert reported(err, "run", "burn_work") > 50, err


def in_front_of_a_terminal():
    """preexec_fn: a session of its own whose controlling terminal is its
    standard input, a pseudo-terminal, with its group at the front, as a
    shell starts a command typed at a terminal."""
    default_signals()
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_run_at_a_terminal_leaves_its_ctrl_c_to_the_command():
    """pcprof run at the front of a terminal keeps the command in its own
    process group, which the terminal's ^C reaches whole. A command that
    catches ^C gets it once, not again from pcprof, and runs on, and so
    does pcprof; kill -TERM of pcprof then reaches the command once. A
    command that does not catch ^C dies of it, and pcprof, after the
    report, of the same signal."""
    notes = []
    for argv in ([prog("burn"), "60", "count"], [prog("burn"), "60"]):
        master, slave = os.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO	# no "^C" echoed into the command's lines
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        d = tempfile.mkdtemp(prefix="pc-e2e-")
        p = start(["run", "-o", "run", "--"] + argv, cwd=d, stdin=slave, stdout=slave,
                  start_new_session=False, preexec_fn=in_front_of_a_terminal)
        os.close(slave)
        out, pids = Lines(master), []
        try:
            pid = int(out.wait_for(r"pid (\d+)").group(1))
            pids.append(pid)
            assert os.getpgid(pid) == p.pid, "the command left the terminal's group"
            wait_cpu(pid, 0.2)
            os.write(master, b"\x03")
            if "count" in argv:
                out.wait_for(r"INT \d+ HUP 0")
                # the terminal sent pcprof its ^C with the command's:
                # once pcprof has taken it, a second copy it passed on
                # would reach the command before the SIGTERM below
                deadline = time.monotonic() + DEADLINE
                while pending(p.pid, signal.SIGINT):
                    assert time.monotonic() < deadline, "pcprof never took its ^C"
                    time.sleep(0.01)
                p.send_signal(signal.SIGTERM)
                out.wait_for(r"end INT (\d+) HUP 0")
        finally:
            rc, err = finish(p, pids)
            os.close(master)
        assert not alive(pid), "the command outlived pcprof run"
        if "count" in argv:
            assert "end INT 1 HUP 0" in out.seen, out.seen
            assert rc == -signal.SIGTERM, (rc, err)
        else:
            assert rc == -signal.SIGINT, (rc, err)
        assert reported(err, "run", "burn_work") > 80, err
        notes.append("%s: %s" % (" ".join(os.path.basename(a) for a in argv),
                                 signal.Signals(-rc).name))
    return ", ".join(notes)


def test_run_gives_one_directory_to_one_of_five_runs_started_at_once():
    """Five pcprof run -o DIR started together, their commands held until
    all five run: one run has DIR and reports its command alone; each of
    the other four says so in one line naming DIR and runs its command
    unprofiled, with its status, as a run into a directory that an earlier
    run filled does."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    os.mkdir(os.path.join(d, "started"))
    # each command notes its pid, then waits for all five (a deadline
    # of 60 s, as the test's), so that every run claims DIR while the
    # others' commands still run
    cmd = ('echo > started/$$; n=0; until [ "$(ls started | wc -l)" -ge 5 ]; do '
           'n=$((n + 1)); [ $n -lt 1200 ] || exit 99; sleep 0.05; done; '
           "exec '%s' 0.2" % prog("three-pie"))
    procs = [start(["run", "--report", "r%d.json" % i, "--format", "json", "-o", "DIR",
                    "--", "sh", "-c", cmd], cwd=d, stdout=subprocess.DEVNULL)
             for i in range(5)]
    ends = [finish(p) for p in procs]
    assert [rc for rc, _ in ends] == [0] * 5, ends
    started = sorted(int(n) for n in os.listdir(os.path.join(d, "started")))
    assert len(started) == 5, started
    reports = [i for i in range(5) if os.path.exists(os.path.join(d, "r%d.json" % i))]
    assert len(reports) == 1, (reports, ends)
    said = []
    for i, (rc, err) in enumerate(ends):
        if i == reports[0]:
            assert err.strip() == "", err
            continue
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pcprof: 'DIR': ") and \
            lines[0].endswith("running 'sh' unprofiled"), err
        said.append(lines[0])
    # the report and DIR hold the winner's processes only
    with open(os.path.join(d, "r%d.json" % reports[0])) as f:
        j = json.load(f)
    pids = [x["pid"] for x in j["processes"]]
    assert len(set(pids) & set(started)) == 1, (pids, started)
    assert "work_alpha" in [f["name"] for f in j["profile"]["functions"]], j
    assert os.listdir(os.path.join(d, "DIR")) and not \
        [n for n in os.listdir(os.path.join(d, "DIR")) if n.startswith(".")]
    assert len(set(said)) == 1, said
    return said[0]


def bash_run(cmd, cwd, env):
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=DEADLINE, preexec_fn=default_signals)


def test_run_gives_a_shells_statuses_to_commands_that_cannot_run():
    """Compared with bash -c CMD: an executable script with no #! line runs
    under /bin/sh (with its arguments, $0 its path) and is profiled; a file
    that is not executable, a directory, a #! interpreter that is not
    there: 126 or 127 as bash gives them; a missing command 127, from PATH
    too, where a directory is passed over and a file that is not
    executable is refused. One line each, and no run directory left."""
    need("bash")
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    bindir = os.path.join(d, "bin")
    os.mkdir(bindir)
    os.mkdir(os.path.join(bindir, "adir"))
    os.mkdir(os.path.join(d, "adir"))

    def script(path, text, mode):
        with open(os.path.join(d, path), "w") as f:
            f.write(text)
        os.chmod(os.path.join(d, path), mode)

    body = 'echo "no #! line: $0 $# $1"; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 5\n'
    script("plain", body, 0o755)
    script("bin/inpath", body, 0o755)
    script("unexec", "#!/bin/sh\necho ran\n", 0o644)
    script("bin/unexec2", "#!/bin/sh\necho ran\n", 0o644)
    script("badint", "#!/no/such/shell -e\necho ran\n", 0o755)
    env = clean_env({"PATH": bindir + ":" + os.environ["PATH"]}, profiled=False)
    cases = [("./plain a1", 5), ("inpath a1", 5), ("./unexec", 126), ("unexec2", 126),
             ("./adir", 126), ("adir", 127), ("./badint", 127), ("./missing", 127),
             ("no-such-command-here", 127)]
    said = []
    for cmd, want in cases:
        b = bash_run(cmd, d, env)
        p = subprocess.run([pcprof_path(), "run", "-o", "run", "--"] + cmd.split(), cwd=d,
                           env=env, capture_output=True, text=True, timeout=DEADLINE,
                           preexec_fn=default_signals)
        assert b.returncode == want, (cmd, "bash", b.returncode, b.stderr)
        assert p.returncode == want, (cmd, p.returncode, p.stderr)
        assert p.stdout == b.stdout, (cmd, p.stdout, b.stdout)
        if want == 5:
            assert re.search(r"^Run in run: 1 process", p.stderr, re.M), p.stderr
            assert os.path.exists(os.path.join(d, "run", "gmon.out")), cmd
            shutil.rmtree(os.path.join(d, "run"))
            continue
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pcprof: '"), (cmd, p.stderr)
        assert not os.path.exists(os.path.join(d, "run")), cmd
        said.append(lines[0])
    # what each says, as bash says it
    assert "Permission denied" in said[0] and "'%s/bin/unexec2'" % d in said[1], said
    assert "Is a directory" in said[2] and "command not found" in said[3], said
    assert "'/no/such/shell'" in said[4] and "No such file" in said[5], said
    assert "'no-such-command-here': command not found" in said[6], said
    return "; ".join(s.replace(d, "D") for s in said)


def test_run_starts_an_asan_program_with_its_runtime_first():
    """An AddressSanitizer program exits 3 alone and under pcprof run, which
    preloads its runtime (the soname it links) before libpc.so and reports
    it. Started by a shell, where pcprof cannot know, ASan refuses to start
    behind libpc.so: one line after its own says what to do, and doing it
    works. LeakSanitizer runs as it does by default, and finds nothing of
    libpc's."""
    exe = prog("asanexit")
    asan = {"ASAN_OPTIONS": "detect_leaks=1"}
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    plain = subprocess.run([exe, "0.3"], env=clean_env(asan, profiled=False),
                           capture_output=True, text=True, timeout=DEADLINE)
    assert plain.returncode == 3, plain.stderr
    p = subprocess.run([pcprof_path(), "run", "-o", "run", "--", exe, "0.3"], cwd=d,
                       env=clean_env(asan, profiled=False), capture_output=True,
                       text=True, timeout=DEADLINE, preexec_fn=default_signals)
    assert p.returncode == 3 and p.stdout == plain.stdout, (p.returncode, p.stderr)
    assert "does not come first" not in p.stderr, p.stderr
    share = reported(p.stderr, "run", "asan_work")
    assert share > 50, p.stderr
    # through a shell: ASan's line, then pcprof's, which says what to do
    p = subprocess.run([pcprof_path(), "run", "-o", "sh", "--", "sh", "-c", "exec " + exe],
                       cwd=d, env=clean_env(asan, profiled=False), capture_output=True,
                       text=True, timeout=DEADLINE, preexec_fn=default_signals)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 2, (p.returncode, p.stderr)
    assert "does not come first" in lines[0], p.stderr
    assert lines[1].startswith("pcprof: ") and \
        "ASAN_OPTIONS=verify_asan_link_order=0" in lines[1], p.stderr
    p = subprocess.run([pcprof_path(), "run", "-o", "sh2", "--", "sh", "-c", "exec " + exe],
                       cwd=d, env=clean_env({"ASAN_OPTIONS": "detect_leaks=1:"
                                             "verify_asan_link_order=0"}, profiled=False),
                       capture_output=True, text=True, timeout=DEADLINE,
                       preexec_fn=default_signals)
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert reported(p.stderr, "sh2", "asan_work") > 50, p.stderr
    return "asan_work %.1f %%; %s" % (share, lines[1])
