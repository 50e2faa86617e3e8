# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of a process's life beside libpc's own threads and
shared state (tests/progs/lifecycle2.c): snapshots never make an exit wait
(forks with no live file, a main thread that calls pthread_exit, a new
user namespace), a vfork or posix_spawn child changes nothing of its
parent's, a SIGKILL in the first milliseconds leaves a live file that
pcprof finishes, and a non-dumpable process's live file is not finished
while it runs.

Every case runs plain and under libpc.so, in the style of test_host.py:
same stdout, same status, a bound on the time, and the profile where it
should be. A hang is a failure: every run has a timeout, after which its
process group is killed."""

import os
import random
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pctest
from pctest import clean_env, prog
from test_host import gmon_samples, pcprof, same, status_text, tail

TIMEOUT = 60
SNAPSHOTS = (
    {"PC_SNAPSHOT_INTERVAL": "0.01"},
    {"PC_SNAPSHOT_SIGNAL": "SIGUSR2"},
    {"PC_SNAPSHOT_SIGNAL": "SIGUSR2", "PC_SNAPSHOT_INTERVAL": "0.01"},
)


def lc2():
    return prog("lifecycle2")


class Done:
    def __init__(self, argv, cwd, env, out, err, status, seconds):
        self.argv, self.cwd, self.env = argv, cwd, env
        self.stdout, self.stderr, self.status = out, err, status
        self.seconds = seconds

    def path(self, name="gmon.out"):
        return os.path.join(self.cwd, name)


def run(args, env=None, profiled=True, fsize=None, usr2_every=None, timeout=TIMEOUT):
    """One run of lifecycle2 ARGS in a directory of its own, in a session
    of its own; fsize: RLIMIT_FSIZE in bytes; usr2_every: send SIGUSR2 (the
    snapshot signal) that often while it runs, which only a profiled run
    can take."""
    cwd = tempfile.mkdtemp(prefix="pc-lc2-")
    e = clean_env({"PC_VERBOSE": "1"} if profiled else None, profiled)
    e.update(env or {})
    argv = [lc2()] + list(args)

    def setup():
        pctest.default_signals()
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=setup)
    stop = threading.Event()

    def sender():
        # not before libpc's snapshot thread is there to take it: until
        # then SIGUSR2 has its default action
        while not stop.wait(0.002) and not snapshot_thread(p.pid):
            pass
        while not stop.wait(usr2_every):
            try:
                os.kill(p.pid, signal.SIGUSR2)
            except ProcessLookupError:
                return

    if usr2_every:
        threading.Thread(target=sender, daemon=True).start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError("%s: %s hung: killed after %d s; stdout %r; stderr %s" % (
            "under libpc" if profiled else "plain", " ".join(args), timeout,
            out[-300:], tail(err)))
    finally:
        stop.set()
    return Done(argv, cwd, e, out, err, p.returncode, time.monotonic() - t0)


def snapshot_thread(pid):
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                if f.read().strip() == "pc-snapshot":
                    return True
    except OSError:
        pass
    return False


def plain_ok(plain, status, what):
    assert plain.status == status, "%s: the plain run is off: %s; stdout %r; stderr %s" % (
        what, status_text(plain.status), plain.stdout[-300:], tail(plain.stderr))


def profile_samples(r, what):
    path = r.path()
    assert os.path.exists(path), "%s: no gmon.out under libpc: %s; %s" % (
        what, sorted(os.listdir(r.cwd)), tail(r.stderr))
    return gmon_samples(path, what + ": ")


def config_name(env):
    return " ".join("%s=%s" % kv for kv in sorted(env.items()))


# ------------------------------------------------- 1. snapshots never wait

def test_forks_with_no_live_file_never_wait_for_a_snapshot():
    """60 forks, each child exiting at once, with snapshots written all the
    while and no live file (RLIMIT_FSIZE 1 MiB, under the live file's 2 MiB):
    a child forked while the snapshot thread wrote inherited its writer lock
    and waited 30 s for it at exit (60 forks took 208 s against 0.07 s)."""
    args = ["forks", "60"]
    plain = run(args, profiled=False, fsize=1 << 20)
    plain_ok(plain, 0, "forks")
    said = []
    for env in SNAPSHOTS:
        what = "forks with " + config_name(env)
        prof = run(args, env=env, fsize=1 << 20,
                   usr2_every=0.003 if "PC_SNAPSHOT_SIGNAL" in env else None)
        same(prof, plain, what)
        assert not [f for f in os.listdir(prof.cwd) if ".live" in f], \
            "%s: a live file was made: the case needs none" % what
        assert prof.seconds < plain.seconds + 5, "%s: %.1f s under libpc, %.2f s plain" % (
            what, prof.seconds, plain.seconds)
        n = profile_samples(prof, what)
        said.append("%.2f s" % prof.seconds)
    return "60 forks: %.2f s plain, %s under libpc (interval, signal, both)" % (
        plain.seconds, ", ".join(said))


def test_pthread_exit_of_the_main_thread_ends_the_process():
    """main starts a thread and calls pthread_exit: the process ends, status
    0, when that thread does; libpc's snapshot thread (and wall sampler)
    must not keep it alive. Racy (the last thread's end against the
    snapshot thread's look): 10 runs over the configurations."""
    args = ["pthread-exit"]
    plain = run(args, profiled=False)
    plain_ok(plain, 0, "pthread-exit")
    configs = list(SNAPSHOTS) + [{"PC_CLOCK": "wall", "PC_SNAPSHOT_INTERVAL": "0.05"}]
    worst = 0.0
    for i in range(10):
        env = configs[i % len(configs)]
        what = "pthread-exit with " + config_name(env)
        prof = run(args, env=env, timeout=20)
        same(prof, plain, what)
        assert prof.seconds < plain.seconds + 3, "%s: %.1f s under libpc, %.2f s plain" % (
            what, prof.seconds, plain.seconds)
        assert profile_samples(prof, what) > 0, "%s: gmon.out holds no samples" % what
        worst = max(worst, prof.seconds)
    return "10 runs, the slowest %.2f s (plain %.2f s)" % (worst, plain.seconds)


def test_unshare_of_a_user_namespace_beside_the_snapshot_thread():
    """unshare(CLONE_NEWUSER) needs a process of one thread: libpc's threads
    (the snapshot writer, the wall sampler) end for the call and start
    again after it. Snapshots go on after the call."""
    args = ["unshare-user"]
    plain = run(args, profiled=False)
    if plain.status != 0:
        pctest.skip("unshare(CLONE_NEWUSER) fails here plain: %s" % plain.stdout.strip())
    said = []
    for env in list(SNAPSHOTS) + [{"PC_CLOCK": "wall", "PC_SNAPSHOT_INTERVAL": "0.01"}]:
        what = "unshare-user with " + config_name(env)
        prof = run(args, env=env)
        same(prof, plain, what)
        said.append("%d samples" % profile_samples(prof, what))
    return "unshare(CLONE_NEWUSER) 0 in every configuration; " + ", ".join(said)


# ------------------------------------------------- 2. vfork children

def test_a_vfork_child_changes_nothing_of_the_parents_signals():
    """The parent catches (or ignores) SIGINT and blocks SIGTERM; a vfork
    child sets SIGINT to the default and unblocks SIGTERM, then _exits or
    execs. The parent then ignores SIGINT and puts back what it had, as
    system(3) does, and raises SIGINT: it must live, as plain. Before, the
    child's call took SIGINT for libpc in the memory the two share, and
    the parent died of SIGINT."""
    said = []
    for how in ("handler", "ignore"):
        for what in ("exit", "exec"):
            args = ["vfork", how, what]
            plain = run(args, profiled=False)
            plain_ok(plain, 0, " ".join(args))
            for env in ({}, {"PC_SNAPSHOT_SIGNAL": "SIGUSR2"}):
                prof = run(args, env=env)
                same(prof, plain, " ".join(args) + " " + config_name(env))
                profile_samples(prof, " ".join(args))
            said.append("%s/%s" % (how, what))
    return "parent as plain after a vfork child's signal(SIGINT, SIG_DFL): " + \
        ", ".join(said)


def test_a_posix_spawn_child_that_resets_signals_changes_nothing():
    """posix_spawn (clone(CLONE_VM|CLONE_VFORK)) with POSIX_SPAWN_SETSIGDEF
    for SIGINT and an empty mask: the parent keeps its handler and its
    mask."""
    plain = run(["spawn"], profiled=False)
    plain_ok(plain, 0, "spawn")
    for env in ({}, {"PC_SNAPSHOT_SIGNAL": "SIGUSR2"}):
        prof = run(["spawn"], env=env)
        same(prof, plain, "spawn " + config_name(env))
    return plain.stdout.strip().splitlines()[-1]


# ------------------------------------------------- 3. early SIGKILL

def test_sigkill_in_the_first_milliseconds_leaves_what_pcprof_finishes():
    """30 runs killed after a random 0-8 ms, then `pcprof report EXE DIR`:
    the directory is empty (killed before the live file was whole, which
    has no name until then), or pcprof finishes the file into a whole
    profile and exits 0. Never a live file left, nor a damaged one."""
    exe = lc2()
    rnd = random.Random(34)
    counts = {"empty": 0, "finished": 0}
    for i in range(30):
        d = tempfile.mkdtemp(prefix="pc-lc2-kill-")
        p = subprocess.Popen([exe, "burn", "0.3"], cwd=d, env=clean_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True, preexec_fn=pctest.default_signals)
        time.sleep(rnd.uniform(0, 0.008))
        p.kill()
        p.wait()
        before = sorted(os.listdir(d))
        if not before:
            counts["empty"] += 1
            shutil.rmtree(d)
            continue
        r = subprocess.run([pcprof(), "report", exe, d], capture_output=True, text=True,
                           timeout=60)
        after = sorted(os.listdir(d))
        left = [f for f in after if ".live" in f]
        assert r.returncode == 0 and not left, \
            "run %d: %s, then pcprof report: status %d, %s; stderr %s" % (
                i, before, r.returncode, after, tail(r.stderr))
        n = gmon_samples(os.path.join(d, "gmon.out"), "run %d: " % i)
        assert n <= 1000, "run %d: %d samples in a run killed before 10 ms" % (i, n)
        counts["finished"] += 1
        shutil.rmtree(d)
    return "30 kills: %(finished)d live files finished, %(empty)d before any file" % counts


# ------------------------------------------------- 4. non-dumpable processes

def test_a_non_dumpable_process_is_not_finished_while_it_runs():
    """prctl(PR_SET_DUMPABLE, 0) makes /proc/PID/maps unreadable to its own
    user: pcprof report, run while the process runs, must leave its live
    file alone (not finish it and call it killed), and the process's own
    profile at exit holds all its samples. Run as nobody where the tests
    run as root (root reads any maps)."""
    exe = lc2()
    d = tempfile.mkdtemp(prefix="pc-lc2-nodump-")
    wrap = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pctest.skip("setpriv not found on PATH (util-linux)")
        os.chmod(d, 0o777)
        wrap = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        # a build tree nobody cannot reach (under /root): as root, then,
        # which reads any maps but still holds pcprof to the same answer
        if subprocess.run(wrap + ["test", "-x", exe, "-a", "-r", pctest.lib(), "-a",
                                  "-x", pcprof()]).returncode:
            wrap = []
    p = subprocess.Popen(wrap + [exe, "nodump", "1.0"], cwd=d, env=clean_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=pctest.default_signals)
    try:
        live = []
        for _ in range(200):
            live = [f for f in os.listdir(d) if f.endswith(".live")]
            if live:
                break
            time.sleep(0.01)
        assert live, "no live file appeared: %s" % sorted(os.listdir(d))
        time.sleep(0.2)
        r = subprocess.run(wrap + [pcprof(), "report", exe, d], capture_output=True,
                           text=True, timeout=60, env=clean_env(profiled=False))
        running = p.poll() is None
        assert not running or "still running" in r.stderr, \
            "pcprof report beside a running non-dumpable process: %s" % tail(r.stderr)
        assert not running or not os.path.exists(os.path.join(d, "gmon.out")), \
            "the running process's live file was finished: %s" % sorted(os.listdir(d))
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 0 and "nodump: done" in out, "%s; %s" % (
        status_text(p.returncode), tail(err))
    n = gmon_samples(os.path.join(d, "gmon.out"))
    assert n > 500, "gmon.out holds %d samples for 1 s of CPU" % n
    said = [l for l in r.stderr.splitlines() if "still running" in l] or ["(it had ended)"]
    return "pcprof report while it ran: %s; %d samples at its exit%s" % (
        said[0], n, " (as nobody)" if wrap else "")
