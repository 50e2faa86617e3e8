# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the live file's footprint (preload/live.c,
preload/livegrow.c): the file starts small and grows with use, so that a
program keeps its disk, its memory and its address space.

Each case watches the size the live files take (their allocated blocks,
on disk or on tmpfs) while the program runs, every 2 ms, and runs the
program plain and under libpc: the two must print the same and end the
same way, and the profile must name the right functions with the right
shares. Every run has a timeout, after which its process group is killed.

- a small program under `pcprof run`, with and without --stacks, on disk
  and on tmpfs: at most 1 MiB;
- `pcprof run --stacks` in a 200 MiB memory cgroup, its files on tmpfs;
- `make -j2` of a small project on tmpfs: within README.md's bound;
- a program under `ulimit -v` that mallocs most of what it may;
- a program that writes most of what a small file system has free;
- PC_LIVE_MAX: the file stops there, the summary says so, the profile is
  whole;
- fork children: a file each, each small, each finished into a profile."""

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pctest
from pctest import check_shares, clean_env, gprof_flat, prog

THREE = ["work_alpha", "work_beta", "work_gamma"]
MIB = 1 << 20
SMALL = 1 * MIB			# a small program's live file, at most
MAKE_BOUND = 8 * MIB		# README.md: make -j2's live files, all together
TIMEOUT = 120
RACY_RUNS = 10		# a racy case runs this many times


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def tmpfs_root():
    """A tmpfs mount point this user may write to, or a skip."""
    with open("/proc/mounts") as f:
        mounts = [l.split() for l in f]
    for m in mounts:
        if m[2] == "tmpfs" and m[1] in ("/dev/shm", "/run/shm", "/tmp") and \
                os.access(m[1], os.W_OK):
            return m[1]
    pctest.skip("no writable tmpfs (/dev/shm) to put the live files on")


class Peak:
    """The most the live files under d took at once (their blocks), and
    the most each one took, sampled every 2 ms from a thread."""

    def __init__(self, d):
        self.d, self.total, self.each = d, 0, {}
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.watch, daemon=True)

    def watch(self):
        while not self.stop.is_set():
            total = 0
            for root, _, names in os.walk(self.d):
                for n in names:
                    if not (n.startswith(".pcprof.") and ".live" in n):
                        continue
                    try:
                        b = os.stat(os.path.join(root, n)).st_blocks * 512
                    except FileNotFoundError:
                        continue
                    total += b
                    self.each[n] = max(self.each.get(n, 0), b)
            self.total = max(self.total, total)
            time.sleep(0.002)

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.t.join()

    def biggest(self):
        return max(self.each.values(), default=0)


def run(argv, cwd, env, preexec=None, timeout=TIMEOUT):
    """argv in a process group of its own: (status, stdout, stderr)."""
    def setup():
        pctest.default_signals()
        if preexec:
            preexec()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=setup)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError("%s hung: killed after %d s; stderr %r" % (
            " ".join(argv), timeout, err[-600:]))
    return p.returncode, out, err


def under_pcprof(out, cmd, *opts, env=None, preexec=None, cwd=None):
    """cmd under `pcprof run -v OPTS -o out`, its live files watched:
    (status, stdout, stderr, Peak)."""
    argv = [pcprof(), "run", "-v", "--no-report", "-o", out] + list(opts) + ["--"] + cmd
    e = clean_env(env, profiled=False)
    with Peak(out) as peak:
        status, o, e2 = run(argv, cwd or os.path.dirname(out), e, preexec)
    return status, o, e2, peak


def plain(cmd, cwd, preexec=None):
    return run(cmd, cwd, clean_env(profiled=False), preexec)


def truth(stdout):
    for line in stdout.splitlines():
        if line.startswith("truth: "):
            return json.loads(line[7:])
    raise AssertionError("no truth line: %r" % stdout[-300:])


def signals(stderr):
    m = re.search(r"libpc: wrote \S+: \d+ samples \((\d+) signals\)", stderr)
    assert m, "no libpc summary: %r" % stderr[-800:]
    return int(m.group(1))


def shares_right(out, stdout, stderr):
    """three-pie's profile in out names its three functions with their
    true shares: the worst gap."""
    funcs, _, _ = gprof_flat(prog("three-pie"), os.path.join(out, "gmon.out"))
    return check_shares(truth(stdout), funcs, signals(stderr), THREE)


def kib(n):
    return "%d KiB" % ((n + 1023) // 1024)


def small_run(base, *opts):
    d = tempfile.mkdtemp(prefix="pc-fp-", dir=base)
    try:
        out = os.path.join(d, "run")
        status, o, e, peak = under_pcprof(out, [prog("three-pie"), "0.3"], *opts)
        assert status == 0, (status, e[-800:])
        assert peak.each, "no live file seen: %s" % e[-400:]
        assert peak.biggest() <= SMALL, "%s: the live file took %s: %s" % (
            " ".join(opts), kib(peak.biggest()), e[-400:])
        gap = shares_right(out, o, e)
        return "%s%s %s (gap %.3f)" % (base, " " + " ".join(opts) if opts else "",
                                       kib(peak.biggest()), gap)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_small_programs_live_file_stays_under_1_mib():
    """three-pie for 0.3 s under `pcprof run` and `pcprof run --stacks`,
    its run directory on disk and on tmpfs (where the file is memory):
    the live file never takes more than 1 MiB (it took 27 and 63 MiB when
    it was allocated whole at start-up), and the profile is right (the
    shares' tolerance follows the run's signals: 0.3 s, it was 0.6 s)."""
    got = []
    for base in (tempfile.gettempdir(), tmpfs_root()):
        for opts in ((), ("--stacks",)):
            got.append(small_run(base, *opts))
    return "; ".join(got)


def cgroup_dir(limit):
    """A new memory cgroup under this process's own, limited to limit
    bytes: (its directory, the file to write a pid into), or a skip with
    the reason it cannot be made."""
    with open("/proc/self/cgroup") as f:
        lines = [l.rstrip("\n").split(":", 2) for l in f]
    name = "pc-footprint-%d" % os.getpid()
    for _, ctl, path in lines:
        if "memory" in ctl.split(","):		# cgroup v1
            parent = os.path.join("/sys/fs/cgroup/memory", path.lstrip("/"))
            d = os.path.join(parent, name)
            try:
                os.mkdir(d)
                with open(os.path.join(d, "memory.limit_in_bytes"), "w") as f:
                    f.write(str(limit))
            except OSError as err:
                pctest.skip("cannot make a v1 memory cgroup under %s: %s" % (parent, err))
            return d, os.path.join(d, "cgroup.procs")
    for _, ctl, path in lines:
        if ctl == "":				# cgroup v2
            parent = os.path.join("/sys/fs/cgroup", path.lstrip("/"))
            d = os.path.join(parent, name)
            try:
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write("+memory")
            except OSError:
                pass	# on already, or the parent holds processes
            try:
                os.mkdir(d)
                with open(os.path.join(d, "memory.max"), "w") as f:
                    f.write(str(limit))
                with open(os.path.join(d, "memory.swap.max"), "w") as f:
                    f.write("0")
            except OSError as err:
                if os.path.isdir(d):
                    os.rmdir(d)
                pctest.skip("cannot make a v2 memory cgroup under %s: %s" % (parent, err))
            return d, os.path.join(d, "cgroup.procs")
    pctest.skip("no memory cgroup in /proc/self/cgroup")


def test_stacks_run_as_plain_in_a_200_mib_memory_cgroup_over_tmpfs():
    """`pcprof run --stacks make -j2` of a small project on tmpfs, in a
    memory cgroup of 200 MiB: tmpfs pages are charged to the cgroup of
    the process that touches them, and live files allocated whole (63 MiB
    a process with stacks, several processes at once) got the build
    OOM-killed. It ends as plain does, with the same output; racy, so
    the whole project once, then two objects compiled at once 9 times."""
    pctest.need("make")
    pctest.need("cc")
    d, procs = cgroup_dir(200 * MIB)
    work = tempfile.mkdtemp(prefix="pc-fp-", dir=tmpfs_root())

    def join():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    try:
        src = project(work)
        want = plain(["make", "-s", "-j2"], src, join)
        assert want[0] == 0, want
        plain(["make", "-s", "clean"], src)
        most = 0
        for i in range(RACY_RUNS):		# racy: processes start and end at once
            plain(["make", "-s", "clean"], src)
            out = os.path.join(work, "run%d" % i)
            status, o, e, peak = under_pcprof(out, ["make", "-s", "-j2"] + some(i), "--stacks",
                                              preexec=join, cwd=src)
            assert (status, o) == (want[:2] if i == 0 else (0, "")), (i, status, o, e[-800:])
            assert "gmon.out" in os.listdir(out), (i, e[-400:])
            most = max(most, peak.total)
            shutil.rmtree(out, ignore_errors=True)
        return "%d runs, exit %d as plain; live files at most %s at once" % (
            RACY_RUNS, status, kib(most))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        try:
            os.rmdir(d)
        except OSError:
            pass


PROJECT = {
    "main.c": "int f1(int), f2(int), f3(int), f4(int);\n"
              "int main(void) { return (f1(1) + f2(2) + f3(3) + f4(4)) & 0; }\n",
    "Makefile": "prog: main.o f1.o f2.o f3.o f4.o\n\t$(CC) -o $@ $^\n"
                "%.o: %.c\n\t$(CC) -O2 -c $<\n"
                "clean:\n\trm -f prog *.o\n",
}
for _i in range(1, 5):
    PROJECT["f%d.c" % _i] = (
        "#include <stdio.h>\n"
        "struct s%d { int a, b; double c[8]; };\n"
        "static double sum(const struct s%d *p) { double t = p->a + p->b;\n"
        "  for (int i = 0; i < 8; i++) t += p->c[i] * i; return t; }\n"
        "int f%d(int n) { struct s%d x = { n, 2 * n, { 0 } }; printf(\"%%d\\n\", n);\n"
        "  return (int)sum(&x); }\n" % (_i, _i, _i, _i))


def some(i):
    """make's targets for the i-th of the racy runs: the whole project
    first, then two objects compiled at once (the race, at less cost)."""
    return [] if i == 0 else ["f1.o", "f2.o"]


def project(work):
    """PROJECT's files in work/src: its path."""
    src = os.path.join(work, "src")
    os.mkdir(src)
    for name, text in PROJECT.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    return src


def test_make_j2_live_files_stay_within_the_readme_bound():
    """`make -j2` of a five-file project, its run directory on tmpfs:
    make, the shells, the compiler drivers, cc1, as and ld each get a
    live file. All of them together stay within README.md's bound (they
    took some 400 MiB of memory at once when each was allocated whole).
    Racy (processes start and end at once): the whole project, then 9
    runs of two objects compiled at once."""
    pctest.need("make")
    pctest.need("cc")
    work = tempfile.mkdtemp(prefix="pc-fp-", dir=tmpfs_root())
    try:
        src = project(work)
        most = biggest = 0
        for i in range(RACY_RUNS):		# racy: processes start and end at once
            plain(["make", "-s", "clean"], src)
            out = os.path.join(work, "run%d" % i)
            status, o, e, peak = under_pcprof(out, ["make", "-s", "-j2"] + some(i), cwd=src)
            assert status == 0, (i, status, e[-800:])
            built = "prog" if i == 0 else "f2.o"
            assert os.path.exists(os.path.join(src, built)), (i, os.listdir(src))
            seen = len([n for n in peak.each if n.endswith(".live")])
            assert seen >= 5, "run %d: only %d live files seen" % (i, seen)
            assert peak.total <= MAKE_BOUND, "run %d: the live files took %s at once" % (
                i, kib(peak.total))
            most, biggest = max(most, peak.total), max(biggest, peak.biggest())
            shutil.rmtree(out, ignore_errors=True)
        return "%d runs, %d live files seen in the last, %s at once at most, the largest %s" % (
            RACY_RUNS, seen, kib(most), kib(biggest))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def vm_peak_kib(cmd):
    """The VmPeak of cmd, run plain, sampled at its end (it spins)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("VmPeak:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.01)
    return peak


def test_ulimit_v_program_mallocs_as_plain():
    """A program under `ulimit -v` that mallocs 64 MiB where its address
    space has 24 MiB to spare plain: libpc's mappings (the live file's
    among them, which counts against RLIMIT_AS, MAP_NORESERVE or not) fit
    in that. The live file took 27 MiB of it when it was mapped whole."""
    cmd = [prog("footprint"), "malloc", "64", "0.3"]
    need = vm_peak_kib(cmd)
    assert need > 64 * 1024, need
    limit = (need + 24 * 1024) * 1024

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    d = tempfile.mkdtemp(prefix="pc-fp-")
    want = plain(cmd, d, limited)
    assert want[:2] == (0, "malloc ok\n"), want
    status, o, e, peak = under_pcprof(os.path.join(d, "run"), cmd, preexec=limited)
    assert (status, o) == want[:2], (status, o, e[-800:])
    assert "gmon.out" in os.listdir(os.path.join(d, "run")), e[-400:]
    return "%r under ulimit -v %d KiB (plain peak %d KiB)" % (o.strip(), limit // 1024, need)


FULL_FS = r"""
import ctypes, os, subprocess, sys, json
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if libc.unshare(0x10000000 | 0x00020000):
    print(json.dumps({"skip": "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s" %
                      os.strerror(ctypes.get_errno())})); sys.exit(0)
for name, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid),
                   ("gid_map", "0 %d 1" % gid)):
    with open("/proc/self/" + name, "w") as f:
        f.write(text)
mnt = sys.argv[1]
if libc.mount(b"none", b"/", None, 0x40000 | 0x4000, None) or \
        libc.mount(b"tmpfs", mnt.encode(), b"tmpfs", 0, b"size=100m"):
    print(json.dumps({"skip": "mount tmpfs: %s" % os.strerror(ctypes.get_errno())}))
    sys.exit(0)
with open(os.path.join(mnt, "filler"), "wb") as f:
    f.write(b"\0" * (8 << 20))
out = {}
for how, argv in (("plain", sys.argv[3:]), ("libpc", [sys.argv[2], "run", "-v",
                  "--no-report", "--stacks", "-o", os.path.join(mnt, "run"), "--"] +
                  sys.argv[3:])):
    p = subprocess.run(argv, cwd=mnt, capture_output=True, text=True, timeout=100)
    out[how] = [p.returncode, p.stdout, p.stderr[-600:]]
    out[how + "_files"] = sorted(os.listdir(os.path.join(mnt, "run"))) \
        if how == "libpc" else []
    os.unlink(os.path.join(mnt, "big"))
print(json.dumps(out))
"""


def test_program_writes_most_of_a_small_file_system_as_plain():
    """A program that writes 48 MiB where a 100 MiB tmpfs has 92 MiB
    free, its run directory on the same file system, under `pcprof run
    --stacks`: its own write succeeds as plain (a live file allocated
    whole took 63 MiB of it, and the write failed with ENOSPC). The file
    system is a tmpfs mounted in a user and mount namespace of the
    test's own."""
    mnt = tempfile.mkdtemp(prefix="pc-fp-")
    cmd = [prog("footprint"), "write", "big", str(48 * 1024), "0.3"]
    env = clean_env(profiled=False)
    p = subprocess.run([sys.executable, "-c", FULL_FS, mnt, pcprof()] + cmd,
                       capture_output=True, text=True, timeout=TIMEOUT, env=env)
    os.rmdir(mnt)
    assert p.returncode == 0, p.stderr[-800:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    if "skip" in got:
        pctest.skip(got["skip"])
    want = [0, "wrote %d\n" % (48 * 1024)]
    assert got["plain"][:2] == want, got["plain"]
    assert got["libpc"][:2] == want, got["libpc"]
    assert "gmon.out" in got["libpc_files"], got
    return "%r plain and under pcprof run --stacks" % got["libpc"][1].strip()


def test_live_max_stops_the_file_and_the_profile_stays_whole():
    """PC_LIVE_MAX=128K: the file stops growing there (it takes some
    150 KiB otherwise), the summary line says so, the program runs as
    plain, and the samples that found no room in the file are placed at
    the last write: the profile names the same functions with the same
    shares. Racy (samples wait in the spill while the file stops, and are
    placed at the end): 10 runs of 0.15 s, the shares checked on their
    sum."""
    d = tempfile.mkdtemp(prefix="pc-fp-")
    try:
        gmons, want, n, sizes = [], {}, 0, []
        for i in range(RACY_RUNS):
            out = os.path.join(d, "run%d" % i)
            status, o, e, peak = under_pcprof(out, [prog("three-pie"), "0.15"],
                                              env={"PC_LIVE_MAX": "128K"})
            assert status == 0 and truth(o), (i, status, e[-800:])
            assert peak.biggest() <= 128 * 1024, (i, kib(peak.biggest()))
            m = re.search(r"live file (\d+) KiB, stopped growing \(PC_LIVE_MAX\)", e)
            assert m, (i, e[-800:])
            assert "not placed" not in e, (i, e[-800:])
            sizes.append(int(m.group(1)))
            for k, v in truth(o).items():
                want[k] = want.get(k, 0) + v
            n += signals(e)
            gmons.append(os.path.join(out, "gmon.out"))
        # each run's file read by gprof, the shares checked on the sum:
        # gprof refuses to sum files whose extra one-bin records (samples
        # placed at the end) differ from run to run ("overlapping
        # histogram records"), a limit docs/libpc.7 states
        funcs = {}
        for g in gmons:
            for k, v in gprof_flat(prog("three-pie"), g)[0].items():
                funcs[k] = funcs.get(k, 0.0) + v
        gap = check_shares(want, funcs, n, THREE)
        return "%d runs: file %d to %d KiB, stopped; shares within %.3f" % (
            RACY_RUNS, min(sizes), max(sizes), gap)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_fork_children_get_small_files_of_their_own():
    """Three fork children, one after the other: each gets a live file of
    its own (its counters from zero, its inventory copied), small, and
    each is a process of the run's report. Racy (a fork beside the
    file's growth, a child's exit): 10 runs of children of 0.05 s."""
    d = tempfile.mkdtemp(prefix="pc-fp-")
    try:
        biggest, cpus = 0, []
        for i in range(RACY_RUNS):
            out = os.path.join(d, "run%d" % i)
            cmd = [prog("footprint"), "fork", "3", "0.05"]
            status, o, e, peak = under_pcprof(out, cmd, "--stacks")
            assert (status, o) == (0, "forked 3\n"), (i, status, o, e[-800:])
            files = [n for n in peak.each if n.endswith(".live")]
            assert len(files) == 4, (i, sorted(peak.each))
            assert peak.biggest() <= SMALL, (i, kib(peak.biggest()))
            biggest = max(biggest, peak.biggest())
            r = subprocess.run([pcprof(), "report", "--format", "json", out],
                               capture_output=True, text=True, timeout=TIMEOUT,
                               env=clean_env(profiled=False))
            assert r.returncode == 0, (i, r.stderr)
            procs = json.loads(r.stdout)["processes"]
            assert len(procs) == 4, (i, procs)
            children = sorted(p["cpu_seconds"] for p in procs)[1:]
            assert children[0] >= 0.025, (i, procs)
            cpus.extend(children)
        return "%d runs: 4 files each, the largest %s; children's CPU %.2f to %.2f" % (
            RACY_RUNS, kib(biggest), min(cpus), max(cpus))
    finally:
        shutil.rmtree(d, ignore_errors=True)
