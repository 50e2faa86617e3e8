# SPDX-License-Identifier: BSD-2-Clause
"""pcprof reads only what it should. A FIFO, a symlink or a directory under
any name pcprof reads in a run directory (a live file, the profile, its
manifest, its stacks file, an object's file) or named on the command line
is one line and status 2, or left out with a note: never waited on, never
read through. A stale live file of an earlier killed run never replaces a
newer profile of the same name. The live file of a process that made
itself non-dumpable is not finished while it runs. Every pcprof runs with
a timeout, and its process group is killed on a hang."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pctest
from pctest import clean_env, default_signals, prog

TIMEOUT = 20
REASONS = ("not a regular file", "a symbolic link", "is a directory")


def pcprof_path():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def pcprof(*args, cwd=None, timeout=TIMEOUT, user=None, path=None):
    """pcprof ARGS (the one at path, else the build's) in a session of its
    own, as user where given, killed with its group after timeout (a
    failure: pcprof must never hang on what it reads)."""
    def setup():
        default_signals()
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)
    p = subprocess.Popen([path or pcprof_path()] + list(args), cwd=cwd, text=True,
                         env=clean_env(profiled=False), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, preexec_fn=setup)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError("pcprof %s hung: killed after %d s" % (" ".join(args), timeout))
    return subprocess.CompletedProcess(args, p.returncode, out, err)


def record(d, name="run", seconds="0.2"):
    """three-pie under pcprof run --stacks into d/name."""
    rdir = os.path.join(d, name)
    p = pcprof("run", "--stacks", "--no-report", "-o", rdir, "--", prog("three-pie"),
               seconds, timeout=120)
    assert p.returncode == 0, p.stderr
    return rdir


def plant(path, kind, target):
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        os.symlink(os.path.basename(target), path)
    else:
        os.mkdir(path)


def test_odd_files_in_a_run_directory_are_refused_or_left_out():
    # Covered, for report, merge, flame and diff of the run directory: a
    # FIFO, a symlink (to the real file, renamed) and a directory named as
    # a live file, the profile, its manifest, its stacks file and an
    # object's file. Each ends within the timeout with status 0 or 2; a
    # line that names the planted file says what it is; a status 2 ends
    # with one line naming a file of the run; a live file is always left
    # alone with a note and the run reported whole.
    top = tempfile.mkdtemp(prefix="pc-readers-")
    base = record(top)
    names = sorted(os.listdir(base))
    assert "gmon.out.stacks" in names and any("+" in n for n in names), names
    obj = [n for n in names if "+" in n][0]
    seen = 0
    for name in (".pcprof.12.live", "gmon.out", "gmon.out.objects", "gmon.out.stacks", obj):
        for kind in ("fifo", "symlink", "dir"):
            d = tempfile.mkdtemp(prefix="pc-readers-", dir=top)
            r = os.path.join(d, "run")
            shutil.copytree(base, r)
            path = os.path.join(r, name)
            target = os.path.join(r, "gmon.out")
            if os.path.exists(path):
                target = path + ".real"
                os.rename(path, target)
            plant(path, kind, target)
            for cmd in (["report", r], ["merge", "-o", os.path.join(d, "m"), r],
                        ["flame", "-o", os.path.join(d, "f.svg"), r],
                        ["diff", "--base", r, "--new", r]):
                p = pcprof(*cmd)
                what = (name, kind, cmd[0], p.returncode, p.stderr)
                lines = p.stderr.splitlines()
                assert p.returncode in (0, 2), what
                # a directory in a run's directory is a run of its own
                why = REASONS + (("no profile",) if kind == "dir" else ())
                for ln in lines:
                    if "'%s'" % path in ln:
                        assert any(w in ln for w in why), what
                if p.returncode == 2:
                    assert lines and lines[-1].startswith("pcprof: '%s" % r), what
                if name.endswith(".live"):
                    assert p.returncode == 0, what
                    assert "pcprof: note: '%s' left alone: " % path in lines[0], what
                assert os.path.lexists(path), what
                seen += 1
            shutil.rmtree(d)
    return "%d commands on odd files, none hung" % seen


def test_odd_operands_get_one_line_and_status_2():
    # a FIFO, a symlink to a good profile and a directory named on the
    # command line as profiles; the executable itself may be a symlink
    d = tempfile.mkdtemp(prefix="pc-readers-")
    r = record(d)
    exe = prog("three-pie")
    gmon = os.path.join(r, "gmon.out")
    fifo = os.path.join(d, "fifo.gmon")
    os.mkfifo(fifo)
    os.mkfifo(fifo + ".stacks")     # flame reads the stacks first
    link = os.path.join(d, "link.gmon")
    os.symlink(gmon, link)
    exe_link = os.path.join(d, "three-link")
    os.symlink(exe, exe_link)
    for cmd, path, words in ((["report", exe, fifo], fifo, "not a regular file"),
                             (["report", exe, link], link, "a symbolic link"),
                             (["merge", "-o", os.path.join(d, "m"), link], link,
                              "a symbolic link"),
                             (["flame", "-o", os.path.join(d, "f.svg"), exe, fifo],
                              fifo + ".stacks", "not a regular file"),
                             (["diff", "--base", exe, gmon, "--new", exe, link], link,
                              "a symbolic link")):
        p = pcprof(*cmd)
        lines = p.stderr.splitlines()
        assert p.returncode == 2 and len(lines) == 1, (cmd, p.returncode, p.stderr)
        assert lines[0] == "pcprof: '%s': %s" % (path, words), (cmd, lines)
    p = pcprof("report", "--format", "json", exe_link, gmon)
    assert p.returncode == 0, p.stderr
    names = {f["name"] for f in json.loads(p.stdout)["functions"]}
    assert {"work_alpha", "work_beta", "work_gamma"} <= names, names


def thread_cpu(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9


def killed(d, seconds, env):
    """three-pie under libpc in d, SIGKILLed after seconds of CPU: its pid
    and its CPU seconds at the kill."""
    p = subprocess.Popen([prog("three-pie"), "30"], cwd=d, env=clean_env(env),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.time()
        while thread_cpu(p.pid) < seconds:
            assert p.poll() is None and time.time() - t0 < 60, p.returncode
            time.sleep(0.01)
        at = thread_cpu(p.pid)
    finally:
        p.kill()
        p.wait()
    return p.pid, at


def samples(exe, gmon):
    p = pcprof("report", "--format", "json", "--top", "0", exe, gmon)
    assert p.returncode == 0, p.stderr
    return sum(f["self_samples"] for f in json.loads(p.stdout)["functions"])


def live_files(d):
    return [f for f in os.listdir(d) if f.startswith(".pcprof.") and f.endswith(".live")]


def test_stale_live_file_never_replaces_a_newer_profile():
    # A killed run leaves its live file; a later, complete run of the same
    # program writes gmon.out beside it. Reporting the directory leaves the
    # live file alone with a note, and the later run's samples are the
    # report's, with a manifest (PC_SCOPE=all, another pid) and without.
    # The other way round, a live file newer than an earlier run's
    # gmon.out is finished over it, as before.
    exe = prog("three-pie")
    notes = []
    for env in ({}, {"PC_SCOPE": "all"}):
        d = tempfile.mkdtemp(prefix="pc-readers-stale-")
        killed(d, 0.4, env)
        assert len(live_files(d)) == 1, os.listdir(d)
        time.sleep(0.05)
        p = subprocess.run([exe, "0.2"], cwd=d, env=clean_env(env), capture_output=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        gmon = os.path.join(d, "gmon.out")
        newer = samples(exe, gmon)
        p = pcprof("report", "--format", "json", "--top", "0", exe, d)
        assert p.returncode == 0, p.stderr
        got = sum(f["self_samples"] for f in json.loads(p.stdout)["functions"])
        live = live_files(d)
        assert got == newer and len(live) == 1, (env, got, newer, p.stderr)
        note = [ln for ln in p.stderr.splitlines() if "left alone" in ln]
        assert len(note) == 1 and live[0] in note[0] and "newer" in note[0], p.stderr
        notes.append((newer, got))
        # the other way round: an earlier run's gmon.out, then a killed run
        d = tempfile.mkdtemp(prefix="pc-readers-older-")
        p = subprocess.run([exe, "0.1"], cwd=d, env=clean_env(env), capture_output=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        older = samples(exe, os.path.join(d, "gmon.out"))
        time.sleep(0.05)
        killed(d, 0.4, env)
        p = pcprof("report", "--format", "json", "--top", "0", exe, d)
        assert p.returncode == 0 and "left alone" not in p.stderr, p.stderr
        got = sum(f["self_samples"] for f in json.loads(p.stdout)["functions"])
        assert got > older and not live_files(d), (env, got, older, p.stderr)
    return "newer profile kept: %s samples (plain, PC_SCOPE=all)" % notes


def test_own_snapshot_is_finished_over_when_the_process_is_killed():
    # A process that wrote snapshots (PC_SNAPSHOT_INTERVAL) and was then
    # killed: the gmon.out beside its live file is its own, older than what
    # the live file holds, and is finished over, with a manifest (its pid
    # and start) and without (the live file says it wrote a snapshot).
    exe = prog("three-pie")
    got = []
    for env in ({"PC_SNAPSHOT_INTERVAL": "0.1"},
                {"PC_SNAPSHOT_INTERVAL": "0.1", "PC_SCOPE": "all"}):
        d = tempfile.mkdtemp(prefix="pc-readers-snap-")
        pid, at = killed(d, 0.5, env)
        gmon = os.path.join(d, "gmon.out")
        assert os.path.exists(gmon) and len(live_files(d)) == 1, os.listdir(d)
        snap = samples(exe, gmon)
        p = pcprof("report", "--format", "json", "--top", "0", exe, d)
        assert p.returncode == 0 and "left alone" not in p.stderr, p.stderr
        j = json.loads(p.stdout)
        final = j["total_seconds"]
        # all that was sampled until the kill, not the last snapshot's
        assert final >= 0.95 * at and not live_files(d), (env, pid, at, snap, final, p.stderr)
        got.append((snap, j["total_samples"]))
    return "snapshot then finished: %s samples (plain, PC_SCOPE=all)" % got


def test_non_dumpable_process_live_file_is_not_finished_while_it_runs():
    # readers_nodump makes itself non-dumpable, which makes its
    # /proc/PID/maps unreadable to other processes of its user, burns CPU,
    # then waits. pcprof report of its run directory meanwhile must name it
    # as running and leave its live file alone; once it has ended, the
    # report is its own profile, ended by exit, with the samples its CPU
    # time makes, not a killed one plus its own. As root, the program and
    # pcprof run as nobody, so that /proc is as it is for a user.
    user = 65534 if os.geteuid() == 0 else None
    d = tempfile.mkdtemp(prefix="pc-readers-nodump-")
    exe, lib, pc = prog("readers_nodump"), pctest.lib(), pcprof_path()
    if user is not None:
        # copies nobody may run, wherever the build is (pcprof loads the
        # libpc.so beside it)
        os.chmod(d, 0o755)
        exe, lib, pc = [shutil.copy(f, d) for f in (exe, lib, pc)]
        d = os.path.join(d, "run")
        os.mkdir(d)
        os.chown(d, user, user)

    def demote():
        default_signals()
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)
    p = subprocess.Popen([exe, "0.6"], cwd=d,
                         env=clean_env({"PC_SCOPE": "all", "LD_PRELOAD": lib}),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=demote)
    try:
        assert p.stdout.readline() == "ready\n", p.poll()
        live = live_files(d)
        assert len(live) == 1, os.listdir(d)
        r = pcprof("report", "--format", "json", d, user=user, path=pc)
        # nothing finished yet: the running process is named
        assert "still running" in r.stderr and "pid %d" % p.pid in r.stderr, r.stderr
        assert live_files(d) == live and "gmon.out" not in os.listdir(d), os.listdir(d)
        out, err = p.communicate("", timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 0, err
    truth = json.loads(out.split("truth: ", 1)[1])
    assert truth["dumpable"] == 0, truth
    r = pcprof("report", "--format", "json", d, user=user, path=pc)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    procs = j["processes"]
    assert len(procs) == 1 and not procs[0].get("killed"), procs
    got = j["cpu_seconds"]
    tol = 0.15 * truth["cpu"] + 0.05
    assert abs(got - truth["cpu"]) <= tol, (got, truth, tol)
    return "%.3f s reported of %.3f s CPU" % (got, truth["cpu"])
