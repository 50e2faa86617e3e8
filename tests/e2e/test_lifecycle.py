# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of a profiled process's life and death under libpc.so:
every way a program can end, exec, fork and the other ways of starting
children, a program with its own SIGPROF profiling, a -pg build, snapshots,
refused output files, and real multi-process workloads (make, a pipeline).
Each test compares the program's output and status with an unprofiled run
and reads the profiles with the real gprof."""

import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time

import pctest
from pctest import check_shares, clean_env, gprof_flat, prog, read_gmon, run, skip

THREE = ["work_alpha", "work_beta", "work_gamma"]
# CPU-time timers fire at most once per kernel tick: 250 signals a second
TICK_HZ = 250.0


def seconds_tolerance(expected, hz=TICK_HZ):
    """Four standard errors of a Poisson count of the signals that cover
    `expected` seconds, plus gprof's rounding to 0.01 s."""
    return 4.0 * math.sqrt(max(expected, 0.0) * hz) / hz + 0.02


def assert_seconds(funcs, name, expected, what=""):
    got = funcs.get(name, 0.0)
    tol = seconds_tolerance(expected)
    assert abs(got - expected) <= tol, \
        "%s%s: %.3f s in gprof, want %.3f +- %.3f; profile %s" % \
        (what, name, got, expected, tol, funcs)
    return got


SUMMARY = re.compile(r"^libpc: (?:wrote|not written) (\S+): (\d+) samples "
                     r"\((\d+) signals\)", re.M)


def summaries(stderr):
    """{path: signals} from every PC_VERBOSE line on stderr."""
    return {m.group(1): int(m.group(3)) for m in SUMMARY.finditer(stderr)}


def wrote_paths(stderr):
    return re.findall(r"^libpc: wrote (\S+):", stderr, re.M)


class Done:
    """What subprocess.run returns, for pctest.Run."""

    def __init__(self, stdout, stderr, returncode):
        self.stdout, self.stderr, self.returncode = stdout, stderr, returncode


def run_with_pid(argv, env=None, verbose=True):
    """pctest.run, but also tells the pid of the process it started."""
    cwd = tempfile.mkdtemp(prefix="pc-e2e-")
    e = clean_env(env)
    if verbose:
        e["PC_VERBOSE"] = "1"
    p = subprocess.Popen(argv, cwd=cwd, env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    return pctest.Run(argv, cwd, e, Done(out, err, p.returncode)), p.pid


def both(argv, env=None, **kw):
    """The same command profiled and unprofiled. One after the other: on a
    busy machine the kernel delivers CPU-time timer signals late and folds
    or loses expirations, so the tests add no load of their own."""
    prof = run(argv, env=env, **kw)
    return prof, run(argv, env=env, profiled=False)


def files(d):
    return sorted(f for f in os.listdir(d) if f.startswith("gmon.out"))


def build_id8(exe):
    """The first 8 bytes of exe's GNU build-id, as libpc puts it in the
    header's spare bytes."""
    out = subprocess.run(["readelf", "-n", exe], capture_output=True,
                         text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return bytes.fromhex(m.group(1))[:8] if m else b"\0" * 8


# ------------------------------------------------------------- endings

# How a process can end, with what the unprofiled program does: the status
# Python reports (-SIG for death by a signal). Every one must leave the
# profile of what ran before, and die the same way.
ENDINGS = [
    ("exit", 3), ("atexit", 3), ("return", 4), ("_exit", 5), ("_Exit", 6),
    ("abort", -signal.SIGABRT), ("crash", -signal.SIGSEGV),
    ("INT", -signal.SIGINT), ("TERM", -signal.SIGTERM),
    ("HUP", -signal.SIGHUP), ("QUIT", -signal.SIGQUIT),
    ("PIPE", -signal.SIGPIPE),
]


def test_every_ending_writes_the_profile_and_ends_the_same_way():
    exe = prog("endings")
    secs = 0.2
    # no core files: abort, crash and QUIT would dump one in both runs
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    seen = []
    try:
        for how, status in ENDINGS:
            prof = run([exe, how, str(secs)], verbose=False)
            # plain: the same ending after 0.01 s of work (endings prints
            # nothing of its time: its status and output are compared)
            plain = run([exe, how, "0.01"], profiled=False)
            assert plain.status == status, (how, plain.status)
            assert prof.status == plain.status, \
                "%s: status %d profiled, %d not" % (how, prof.status, plain.status)
            assert prof.stdout == plain.stdout, (how, prof.stdout, plain.stdout)
            assert files(prof.cwd) == ["gmon.out"], \
                "%s: %s; stderr %r" % (how, os.listdir(prof.cwd), prof.stderr)
            funcs, total, _ = gprof_flat(exe, prof.path())
            got = assert_seconds(funcs, "ending_work", secs, how + ": ")
            if how == "atexit":
                # the program's own atexit handler ran before the write
                assert_seconds(funcs, "atexit_work", secs, how + ": ")
            seen.append("%s %.2f" % (how, got))
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
    return "ending_work s: " + ", ".join(seen)


def test_programs_own_segv_handler_runs_and_profile_is_written():
    exe = prog("endings")
    prof = run([exe, "own-segv", "0.2"], verbose=False)
    # plain after 0.01 s of work: its status and output are compared
    plain = run([exe, "own-segv", "0.01"], profiled=False)
    assert plain.status == prof.status == 42, (plain.status, prof.status)
    assert plain.stdout == prof.stdout == "own handler ran\n", \
        (plain.stdout, prof.stdout)
    assert files(prof.cwd) == ["gmon.out"], os.listdir(prof.cwd)
    funcs, total, _ = gprof_flat(exe, prof.path())
    assert_seconds(funcs, "ending_work", 0.2)


# ------------------------------------------------------------- exec

EXEC_HOWS = ["execv", "execvp", "execve", "execl", "execlp", "execle",
             "fexecve"]


def test_exec_writes_the_old_image_and_the_new_one_takes_gmon_out():
    execer, three = prog("execer"), prog("three-pie")
    path_env = {"PATH": os.path.dirname(three) + ":" + os.environ.get("PATH", "")}
    notes = []
    all_truth, all_funcs, all_signals = {}, {}, 0
    for how in EXEC_HOWS:
        target = "three-pie" if how in ("execvp", "execlp") else three
        # each image 0.15 s (it was 0.3): the seconds' tolerances below
        # are four standard errors of their own signal counts, and the
        # shares are judged over the seven new images together (some 260
        # signals)
        argv = [execer, how, target, "0.15"]
        r, pid = run_with_pid(argv, env=dict(path_env, EXECER_SECONDS="0.15"))
        # plain: the same exec, each image's loop 0.01 s (the status and
        # the truth's names are compared, not its times)
        plain = run(argv[:-1] + ["0.01"], env=dict(path_env, EXECER_SECONDS="0.01"),
                    profiled=False)
        assert plain.status == r.status == 0, \
            "%s: status %d profiled, %d not; %s" % \
            (how, r.status, plain.status, r.stderr)
        truth = r.truth()
        assert sorted(truth) == sorted(plain.truth()), (r.stdout, plain.stdout)
        # one pid, two images: the first writes the longer name, the
        # second (a root again, by its pid) the usual one
        old = "gmon.out.execer.%d" % pid
        assert files(r.cwd) == sorted(["gmon.out", old]), \
            "%s: %s, want gmon.out and %s" % (how, files(r.cwd), old)
        sig = summaries(r.stderr)
        funcs, total, _ = gprof_flat(three, r.path())
        # shares are judged over all the exec'd images together below: one
        # 0.3 s image has ~75 ticks, and three-pie's 1 ms cycle can stay
        # in phase with a 4 ms tick for that long
        for k in THREE:
            all_truth[k] = all_truth.get(k, 0.0) + truth[k]
            all_funcs[k] = all_funcs.get(k, 0.0) + funcs.get(k, 0.0)
        all_signals += sig[r.path()]
        work = sum(truth[k] for k in THREE)
        assert abs(total - work) <= seconds_tolerance(work), \
            "%s: new image %.3f s in gprof, %.3f s of work" % (how, total, work)
        assert "before_exec_work" not in funcs, funcs
        ofuncs, ototal, _ = gprof_flat(execer, r.path(old))
        assert_seconds(ofuncs, "before_exec_work", 0.15, how + ": ")
        assert not set(ofuncs) & set(THREE), ofuncs
        notes.append("%s %.2f+%.2f" % (how, ototal, total))
    worst = check_shares(all_truth, all_funcs, all_signals, THREE)
    return "old+new image s: %s; shares over all new images within %.1f pts (%d signals)" % (
        ", ".join(notes), 100 * worst, all_signals)


def test_failed_exec_takes_its_file_back_and_runs_on():
    """With either timer: a task-clock event is stopped for the exec and,
    when it fails, replaced by a new one, whose samples go on."""
    execer, three = prog("execer"), prog("three-pie")
    argv = [execer, "fail", three, "0.3"]
    timers = [None]
    if run([prog("hostile"), "perf-ok"], profiled=False).status == 0:
        timers.append({"PC_TIMER": "taskclock"})
    # one plain run for both timers' (PC_TIMER is nothing to it without
    # libpc), its status and output compared: its loops 0.01 s; the
    # profiled runs' 0.15 s twice (it was 0.3 s), the seconds' tolerance
    # four standard errors of their signals
    plain = run(argv, env={"EXECER_SECONDS": "0.01"}, profiled=False)
    for env in timers:
        prof = run(argv, env=dict(env or {}, EXECER_SECONDS="0.15"), verbose=False)
        assert plain.status == prof.status == 7, (env, plain.status, prof.status)
        assert plain.stdout == prof.stdout
        assert files(prof.cwd) == ["gmon.out"], os.listdir(prof.cwd)
        funcs, total, _ = gprof_flat(execer, prof.path())
        assert_seconds(funcs, "before_exec_work", 0.3)
    return "timers: %s" % ", ".join(e["PC_TIMER"] if e else "default" for e in timers)


TAKE_OVER = r"""
import os, sys, threading, time

def events():
    out = []
    for n in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + n) == "anon_inode:[perf_event]":
                out.append(int(n))
        except OSError:
            pass
    return sorted(out)

def spin(t):
    end = time.process_time() + t
    while time.process_time() < end:
        pass

ev = events()
if not ev:
    print("none in /proc/self/fd")
    sys.exit(3)
n = ev[-1]
# a shell's redirection: the event saved elsewhere, a file on its number,
# read while the event's signals still carry the number
with open("in.txt", "w") as f:
    f.write("".join("line %d\n" % i for i in range(20000)))
saved = os.dup(n)
fd = os.open("in.txt", os.O_RDONLY)
os.dup2(fd, n)
got = b""
while True:
    spin(0.002)
    b = os.read(n, 997)
    if not b:
        break
    got += b
assert got == open("in.txt", "rb").read(), (len(got), "bytes read")
print("read through", n, "intact")
os.dup2(saved, n)
os.close(saved)
# a fork child: its copy of the event number is the program's file now
log = os.open("log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(log, n)
pid = os.fork()
if pid == 0:
    spin(0.05)
    os.write(n, b"child\n")
    os._exit(0)
os.waitpid(pid, 0)
# a thread that ends: its event's number is the program's file by then
def worker():
    mine = [e for e in events() if e != n]
    spin(0.05)
    if mine:
        os.dup2(log, mine[-1])
        box.append(mine[-1])
box = []
t = threading.Thread(target=worker)
t.start()
t.join()
spin(0.05)
for k in [n] + box:
    os.write(k, b"parent %d\n" % (k == n))
lines = open("log").read().split()
assert lines.count("child") == 1 and lines.count("parent") == 1 + len(box), lines
print("all kept")
"""


def test_descriptors_the_program_reuses_are_never_closed_under_it():
    """With the task-clock timer each thread holds an event descriptor.
    A program may dup2 its own files onto any number: a shell's `exec
    3>log`, or the very number libpc's event has (found in /proc/self/fd).
    Across an exec, a fork and a thread's end the program's file stays
    open and gets its output, as it does bare; a file on the event's number
    while the event lives on in a saved copy (a shell's redirection) is
    never read by libpc; and failed execs (a PATH search) neither count the
    thread again nor leave it unsampled."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    py = "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else \
        pctest.need("python3")
    taskclock = {"PC_TIMER": "taskclock", "PC_SCOPE": "all"}
    cases = [
        ("exec", ["sh", "-c", 'exec 3>log; exec sh -c "echo hi >&3"'], "hi\n"),
        ("fork", ["sh", "-c", "exec 3>log; (echo sub >&3)"], "sub\n"),
    ]
    for name, argv, want in cases:
        for env, how in ((None, "bare"), (taskclock, "libpc")):
            log = os.path.join(d, "log")
            if os.path.exists(log):
                os.unlink(log)
            r = run(argv, env=env, cwd=d, profiled=how == "libpc", verbose=False)
            assert r.status == 0, (name, how, r.stderr)
            assert open(log).read() == want, (name, how, open(log).read(), r.stderr)
    # onto the very numbers of libpc's events, found in /proc/self/fd
    r = run([py, "-c", TAKE_OVER], env=taskclock, cwd=d, verbose=False, timeout=120)
    if r.status == 3:
        skip("no task-clock event to take over: " + r.stdout.strip())
    assert r.status == 0 and r.stdout.splitlines()[-1] == "all kept", (r.stdout, r.stderr)
    # three failed execs, then work: one thread, sampled throughout, and
    # only the process's own files
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    r = run([py, "-c", "import os\nfor i in range(3):\n    try: os.execv('/no/such/%d' % i, "
             "['x'])\n    except OSError: pass\n"
             "import time\nt = time.process_time()\n"
             "while time.process_time() - t < 0.3: pass\n"], env=taskclock, cwd=d)
    assert r.status == 0, r.stderr
    # each failed exec wrote a file and took it back; the last line is
    # the process's own
    last = re.findall(r"libpc: wrote \S+: (\d+) samples .*?; (\d+) threads;", r.stderr)[-1]
    samples, threads = int(last[0]), int(last[1])
    assert threads == 1, r.stderr
    assert samples >= 0.2 * 1000, r.stderr
    assert sorted(os.listdir(d)) == ["gmon.out"] + \
        sorted(f for f in os.listdir(d) if f.startswith("gmon.out+")) + ["gmon.out.objects"], \
        os.listdir(d)
    return "%d threads, %d samples after 3 failed execs" % (threads, samples)


# ------------------------------------------------------------- children

def test_every_kind_of_child_leaves_its_own_file():
    spawner, three = prog("spawner"), prog("three-pie")
    prof = run([spawner, three, "0.2"])
    # plain: the children's loops 0.01 s (its status, its last line and
    # its count of lines are compared, not its times)
    plain = run([spawner, three, "0.01"], profiled=False)
    assert plain.status == prof.status == 0, (plain.status, prof.status, prof.stderr)
    for r in (prof, plain):
        assert r.stdout.splitlines()[-1] == "spawner: all children ok", r.stdout
    # system() and posix_spawn and vfork print their truth; popen's is read
    assert len(prof.stdout.splitlines()) == len(plain.stdout.splitlines())
    shell = os.path.basename(os.path.realpath("/bin/sh")).replace(".", "_")
    names = files(prof.cwd)
    forked = [f for f in names if re.match(r"^gmon\.out\.spawner\.\d+$", f)]
    kids = [f for f in names if re.match(r"^gmon\.out\.three-pie\.\d+$", f)]
    shells = [f for f in names if re.match(r"^gmon\.out\.%s\.\d+$" % re.escape(shell), f)]
    assert "gmon.out" in names and len(forked) == 1 and len(kids) == 4 and \
        len(shells) == 2 and len(names) == 8, \
        "files %s (shell %s); stderr %s" % (names, shell, prof.stderr)
    for f in names:
        read_gmon(prof.path(f))
    own, _, _ = gprof_flat(spawner, prof.path())
    assert_seconds(own, "spawner_work", 0.4, "spawner: ")
    assert "forked_work" not in own, own
    child, _, _ = gprof_flat(spawner, prof.path(forked[0]))
    assert_seconds(child, "forked_work", 0.2, "fork child: ")
    assert "spawner_work" not in child, child
    for f in kids:
        funcs, total, _ = gprof_flat(three, prof.path(f))
        assert funcs.get("work_alpha", 0) > 0, (f, funcs)
        assert abs(total - 0.2) <= seconds_tolerance(0.2), (f, total)
    return "%d files: %s" % (len(names), " ".join(names))


# ------------------------------------------------------------- coexisting

def test_programs_own_sigprof_profiling_keeps_working():
    """SIGPROF is the program's: by default libpc samples on a real-time
    signal of its own and never touches it. With PC_SIGNAL=SIGPROF libpc
    starts on it and moves to a real-time signal when the program installs
    its own handler, which then gets its ticks from the kernel."""
    exe = prog("coexist")
    notes = []
    # one plain run for both settings' runs (PC_SIGNAL is nothing to it
    # without libpc)
    plain = run([exe, "1"], profiled=False)
    for env in ({}, {"PC_SIGNAL": "SIGPROF"}):
        prof = run([exe, "1"], env=env)
        assert plain.status == prof.status == 0, (prof.status, prof.stderr)
        pl, pr = plain.stdout.splitlines(), prof.stdout.splitlines()
        for want in ("own handler installed: yes", "ticks while blocked: none",
                     "mask shows SIGPROF blocked: yes"):
            assert want in pl, ("unprofiled run is off", plain.stdout)
            assert want in pr, ("profiled run differs", env, prof.stdout, plain.stdout)
        assert pl[:3] == pr[:3], (pl, pr)

        def ticks(out):
            return int(re.search(r"^own ticks: (\d+)", out, re.M).group(1))
        t_prof, t_plain = ticks(prof.stdout), ticks(plain.stdout)
        assert abs(t_prof - t_plain) <= 0.25 * t_plain, (env, t_prof, t_plain)
        funcs, total, _ = gprof_flat(exe, prof.path())
        assert_seconds(funcs, "coexist_work", 1.5)
        assert prof.path() in summaries(prof.stderr), prof.stderr
        sig = int(re.search(r"; signal (\d+)", prof.stderr).group(1))
        if env:
            assert signal.SIGRTMIN <= sig <= signal.SIGRTMAX, prof.stderr
        else:
            assert signal.SIGRTMIN <= sig <= signal.SIGRTMAX, prof.stderr
            assert "foreign signals" not in prof.stderr, prof.stderr
        notes.append("%s: own ticks %d profiled, %d not" %
                     (env.get("PC_SIGNAL", "auto"), t_prof, t_plain))
    return "; ".join(notes)


def test_pg_built_program_gets_both_profiles_right():
    exe = prog("pgbuilt")
    prof = run([exe, "1.5"])
    # plain for 0.1 s: its status, its truth's names and glibc's gmon.out
    # are compared, not its times
    plain = run([exe, "0.1"], profiled=False)
    assert plain.status == prof.status == 0, (prof.status, prof.stderr)
    assert sorted(plain.truth()) == sorted(prof.truth())
    assert os.path.exists(plain.path()), "glibc's -pg wrote nothing"
    truth = prof.truth()
    names = files(prof.cwd)
    ours = [f for f in names if re.match(r"^gmon\.out\.pgbuilt\.\d+$", f)]
    assert "gmon.out" in names and len(ours) == 1 and len(names) == 2, names
    assert "built with -pg" in prof.stderr, prof.stderr
    # glibc's profil samples at 100 Hz of CPU time
    gfuncs, gtotal, _ = gprof_flat(exe, prof.path())
    gworst = check_shares(truth, gfuncs, int(100 * truth["cpu"]), THREE)
    sig = summaries(prof.stderr)[prof.path(ours[0])]
    funcs, total, _ = gprof_flat(exe, prof.path(ours[0]))
    worst = check_shares(truth, funcs, sig, THREE)
    assert abs(total - truth["cpu"]) <= 0.05 * truth["cpu"], (total, truth)
    return "glibc %.2f s (worst %.1f pts), libpc %.2f s (worst %.1f pts), cpu %.2f" % \
        (gtotal, 100 * gworst, total, 100 * worst, truth["cpu"])


# ------------------------------------------------------------- snapshots

def cpu_seconds(pid):
    """CPU time of a single-threaded process so far, from the scheduler's
    own count (ns): what its CPU-time samples can have covered."""
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9


def test_snapshot_signal_writes_the_profile_so_far():
    exe = prog("three-pie")
    # the plain run gives the status to compare (its output, times, is
    # its own): 0.1 s of the same loop, as the 3 s the profiled run needs
    # for a snapshot inside it would
    plain = run([exe, "0.1"], profiled=False)
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = subprocess.Popen([exe, "3"], cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=clean_env({"PC_SNAPSHOT_SIGNAL": "SIGUSR2"}))
    try:
        # 1.2 s into the run: of wall time on an idle machine, of CPU time
        # (which is what the profile counts) on a busy one
        t0 = time.time()
        while time.time() - t0 < 1.2 or cpu_seconds(p.pid) < 1.15:
            assert p.poll() is None, "ended before the snapshot"
            time.sleep(0.02)
        at_signal = cpu_seconds(p.pid)
        p.send_signal(signal.SIGUSR2)
        time.sleep(0.3)
        assert os.path.exists(os.path.join(d, "gmon.out")), \
            "no snapshot: %s" % os.listdir(d)
        at_copy = cpu_seconds(p.pid)
        shutil.copy(os.path.join(d, "gmon.out"), os.path.join(d, "snap"))
        running = p.poll() is None
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert running, "the program ended before the snapshot was read"
    assert p.returncode == plain.status == 0, (p.returncode, err)
    funcs, snap, _ = gprof_flat(exe, os.path.join(d, "snap"))
    assert 0.7 <= snap <= 1.6, "snapshot holds %.2f s: %s" % (snap, funcs)
    tol = seconds_tolerance(at_signal)
    assert at_signal - tol <= snap <= at_copy + tol, \
        "snapshot holds %.2f s, the program had used %.2f s at the signal " \
        "and %.2f s at the copy" % (snap, at_signal, at_copy)
    assert "work_alpha" in funcs, funcs
    funcs, final, _ = gprof_flat(exe, os.path.join(d, "gmon.out"))
    assert abs(final - 3.0) <= 0.05 * 3.0, "final profile %.2f s" % final
    assert sorted(os.listdir(d)) == ["gmon.out", "snap"], os.listdir(d)
    return "snapshot %.2f s (CPU %.2f s at the signal), final %.2f s" % \
        (snap, at_signal, final)


def test_snapshot_interval_keeps_the_file_growing():
    exe = prog("three-pie")
    # the status to compare: 0.1 s plain, as in the snapshot signal's test
    plain = run([exe, "0.1"], profiled=False)
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    gm = os.path.join(d, "gmon.out")
    p = subprocess.Popen([exe, "2"], cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=clean_env({"PC_SNAPSHOT_INTERVAL": "0.5"}))
    seen, last = [], None
    try:
        while p.poll() is None:
            try:
                with open(gm, "rb") as f:
                    b = f.read()
            except FileNotFoundError:
                b = None
            # a write in progress could have ended since: keep the copy only
            # if the program still runs, so that it is a snapshot
            if b and b != last and p.poll() is None:
                last = b
                copy = os.path.join(d, "snap%d" % len(seen))
                with open(copy, "wb") as f:
                    f.write(b)
                seen.append(copy)
            time.sleep(0.05)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == plain.status == 0, (p.returncode, err)
    totals = [gprof_flat(exe, c)[1] for c in seen]
    final = gprof_flat(exe, gm)[1]
    assert len(totals) >= 3, "saw %d snapshots while it ran: %s" % (len(totals), totals)
    grew = sum(1 for a, b in zip(totals, totals[1:]) if b > a)
    assert grew >= 2 and totals == sorted(totals), totals
    # the program's own CPU time: it runs on to the end of a block of calls
    cpu = json.loads(out.split("truth: ", 1)[1].splitlines()[0])["cpu"]
    assert totals[-1] <= final and abs(final - cpu) <= 0.05 * cpu, \
        (totals, final, cpu)
    return "snapshot totals %s, final %.2f s" % (["%.2f" % t for t in totals], final)


# ------------------------------------------------------------- refusals

def test_unwritable_sys_path_warns_once_and_keeps_the_program_as_is():
    exe = prog("behave")
    prof, plain = both([exe, "5"], env={"PC_OUT": "/sys/gmon.out"}, verbose=False)
    assert plain.status == prof.status == 5, (plain.status, prof.status)
    assert prof.stdout == plain.stdout, (prof.stdout, plain.stdout)
    lines = [l for l in prof.stderr.splitlines() if l.startswith("libpc:")]
    assert len(lines) == 1 and "/sys/gmon.out" in lines[0], prof.stderr
    rest = [l for l in prof.stderr.splitlines() if not l.startswith("libpc:")]
    assert rest == plain.stderr.splitlines(), (rest, plain.stderr)
    assert not os.path.exists("/sys/gmon.out")
    return lines[0]


def test_full_disk_leaves_no_file_and_no_temporary():
    if os.geteuid() != 0:
        skip("cannot mount a tmpfs: not root")
    d = tempfile.mkdtemp(prefix="pc-e2e-tmpfs-")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", d],
                       capture_output=True, text=True)
    if p.returncode:
        os.rmdir(d)
        skip("cannot mount a tmpfs: %s" % p.stderr.strip())
    try:
        # fill it: 14 KB, then as much more as it takes, so that less than
        # 100 bytes are free (tmpfs counts whole pages: usually none)
        fill = os.path.join(d, "fill")
        with open(fill, "wb") as f:
            f.write(b"x" * 14336)
            f.flush()
            try:
                while True:
                    st = os.statvfs(d)
                    if st.f_bavail * st.f_frsize <= 100:
                        break
                    f.write(b"x" * 64)
                    f.flush()
            except OSError:
                pass
        st = os.statvfs(d)
        free = st.f_bavail * st.f_frsize
        assert free <= 100, "%d bytes free" % free
        exe = prog("three-pie")
        # the smallest profile with a sample in it is a 20-byte header and
        # a 41-byte record header before its counts: more than is left
        env = {"PC_OUT": os.path.join(d, "gmon.out")}
        prof = run([exe, "0.5"], env=env, verbose=False)
        # plain for 0.01 s: its status and truth's names are compared
        plain = run([exe, "0.01"], env=env, profiled=False)
        assert plain.status == prof.status == 0, (prof.status, prof.stderr)
        assert sorted(plain.truth()) == sorted(prof.truth())
        lines = [l for l in prof.stderr.splitlines() if l.startswith("libpc:")]
        assert len(lines) == 1 and "no space" in lines[0] and d in lines[0], \
            prof.stderr
        assert os.listdir(d) == ["fill"], os.listdir(d)
        return "%d bytes free; %s" % (free, lines[0])
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


# ------------------------------------------------------------- workloads

PROJECT = {
    "main.c": '#include <stdio.h>\n'
              'int fib(int);\nint squares(int);\n'
              'int main(void)\n{\n'
              '\tprintf("fib %d squares %d\\n", fib(20), squares(5));\n'
              '\treturn 0;\n}\n',
    "fib.c": 'int fib(int n)\n{\n\treturn n < 2 ? n : fib(n - 1) + fib(n - 2);\n}\n',
    "squares.c": 'int squares(int n)\n{\n\tint s = 0;\n\n'
                 '\tfor (int i = 1; i <= n; i++)\n\t\ts += i * i;\n'
                 '\treturn s;\n}\n',
    "Makefile": 'prog: main.o fib.o squares.o\n'
                '\tcc -o prog main.o fib.o squares.o\n'
                '%.o: %.c\n'
                '\tcc -O2 -c -o $@ $<\n',
}


def pcprof_run(argv, cwd):
    """`pcprof run -v --no-report --main-only -o cwd -- argv` in cwd (the
    run directory is cwd), with the environment
    pctest.run gives an unprofiled program and no outer make's settings
    (make check runs these tests from a recipe)."""
    pcprof = os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))
    e = clean_env(profiled=False)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        e.pop(k, None)
    argv = [pcprof, "run", "-v", "--no-report", "--main-only", "-o", cwd, "--"] + argv
    p = subprocess.run(argv, cwd=cwd, env=e, capture_output=True, text=True,
                       timeout=120, preexec_fn=pctest.default_signals)
    return pctest.Run(argv, cwd, e, p)


def test_make_j2_every_process_writes_one_file():
    d = tempfile.mkdtemp(prefix="pc-e2e-make-")
    for name, text in PROJECT.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    r = pcprof_run(["make", "-j2"], d)
    assert r.status == 0, r.stdout + r.stderr
    out = subprocess.run([os.path.join(d, "prog")], capture_output=True,
                         text=True)
    assert out.returncode == 0 and out.stdout == "fib 6765 squares 55\n", out
    wrote = wrote_paths(r.stderr)
    distinct = set(wrote)
    assert len(wrote) == len(distinct), "a file was written twice: %s" % wrote
    inside = {p for p in distinct if os.path.dirname(p) == d}
    elsewhere = distinct - inside
    here = {os.path.join(d, f) for f in files(d)}
    assert inside == here, \
        "named on stderr, not in %s: %s; in it, not named: %s" % \
        (d, sorted(inside - here), sorted(here - inside))
    for p in elsewhere:
        assert os.path.exists(p), "%s named on stderr but missing" % p
    for p in distinct:
        read_gmon(p)
    names = [os.path.basename(p) for p in distinct]
    # the root process is make itself: gmon.out with make's build-id
    make = shutil.which("make")
    g = read_gmon(os.path.join(d, "gmon.out"))
    assert g["spare"][4:12] == build_id8(make), "gmon.out is not make's"
    assert any(re.match(r"^gmon\.out\.(cc1|cc|.*gcc.*)\.\d+$", n) for n in names), names
    progs = {}
    for n in names:
        m = re.match(r"^gmon\.out\.(.+)\.\d+$", n)
        key = m.group(1) if m else "make"
        progs[key] = progs.get(key, 0) + 1
    return "%d processes, %d files (%d elsewhere): %s" % \
        (len(wrote), len(distinct), len(elsewhere),
         ", ".join("%s %d" % kv for kv in sorted(progs.items())))


def test_shell_pipeline_every_process_writes_one_file():
    d = tempfile.mkdtemp(prefix="pc-e2e-pipe-")
    cmd = "seq 1 200000 | sort -rn | head -3"
    plain = run(["sh", "-c", cmd], cwd=tempfile.mkdtemp(prefix="pc-e2e-"),
                profiled=False)
    r = pcprof_run(["sh", "-c", cmd], d)
    assert r.status == plain.status == 0, (r.status, r.stderr)
    assert r.stdout == plain.stdout == "200000\n199999\n199998\n", r.stdout
    names = files(d)
    for f in names:
        read_gmon(os.path.join(d, f))
    sh = os.path.realpath(shutil.which("sh"))
    g = read_gmon(os.path.join(d, "gmon.out"))
    assert g["spare"][4:12] == build_id8(sh), "gmon.out is not the shell's"
    wrote = wrote_paths(r.stderr)
    missing = [p for p in ("seq", "sort", "head")
               if not any(re.match(r"^gmon\.out\.%s\.\d+$" % p, f) for f in names)]
    assert not missing, \
        "no file for %s; files %s; %d 'libpc: wrote' lines on stderr: %s" % \
        (missing, names, len(wrote), wrote)
    return "%d files: %s; %d 'libpc: wrote' lines" % (len(names), " ".join(names), len(wrote))


# ------------------------------------------------------------- small programs

def build_c(source, name):
    """Compile one C file (with tests/progs/truth.h at hand) into a temp dir."""
    d = tempfile.mkdtemp(prefix="pc-e2e-cc-")
    src = os.path.join(d, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    progs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "progs")
    exe = os.path.join(d, name)
    subprocess.run(["cc", "-O2", "-g", "-I", progs, "-o", exe, src], check=True)
    return exe


# The idiom of coreutils' sort and many others: a handler that cleans up,
# puts the default action back and raises the signal again.
RERAISE = r'''
#include <signal.h>
#include <unistd.h>
#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) void
reraise_work(void)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < 0.2)
		sink = spin(sink, SPIN_UNIT);
}

static void
cleanup_and_die(int sig)
{
	static const char msg[] = "cleaned up\n";

	write(1, msg, sizeof(msg) - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

int
main(void)
{
	signal(SIGTERM, cleanup_and_die);
	reraise_work();
	kill(getpid(), SIGTERM);
	return 99;
}
'''


def test_handler_that_restores_default_and_reraises_leaves_a_profile():
    exe = build_c(RERAISE, "reraise")
    prof, plain = both([exe], verbose=False)
    assert plain.status == prof.status == -signal.SIGTERM, (plain.status, prof.status)
    assert plain.stdout == prof.stdout == "cleaned up\n", (plain.stdout, prof.stdout)
    assert files(prof.cwd) == ["gmon.out"], \
        "no profile from a program that died of SIGTERM after its own " \
        "handler restored SIG_DFL: %s" % os.listdir(prof.cwd)
    funcs, total, _ = gprof_flat(exe, prof.path())
    assert_seconds(funcs, "reraise_work", 0.2)


# A program that closes stderr and opens a file of its own, which takes
# descriptor 2 (coreutils' close_stdout closes stderr at exit, too).
REUSE_FD2 = r'''
#include <fcntl.h>
#include <unistd.h>
#include "truth.h"

static volatile uint64_t sink;

int
main(void)
{
	double t0 = thread_cpu();
	int fd;

	close(2);
	fd = open("data.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, "program data\n", 13);
	while (thread_cpu() - t0 < 0.1)
		sink = spin(sink, SPIN_UNIT);
	return fd == 2 ? 0 : 1;
}
'''


def test_messages_never_go_into_a_file_that_took_descriptor_2():
    exe = build_c(REUSE_FD2, "reuse-fd2")
    prof, plain = both([exe])
    assert plain.status == prof.status == 0, (plain.status, prof.status)
    want = open(os.path.join(plain.cwd, "data.txt")).read()
    got = open(os.path.join(prof.cwd, "data.txt")).read()
    assert want == "program data\n", want
    assert got == want, "libpc wrote into the program's own file: %r" % got
    assert os.path.exists(prof.path())
