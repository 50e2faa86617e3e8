#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The live file, the real-time signal and libpc's stacks (issue 24): the
build before (d92fbaa) against the build now, side by side.

    python3 bench/live.py --build build                 # all five
    python3 bench/live.py --build build stacks killed   # some of them
    python3 bench/live.py --before OLD/build --runs 3   # a build before at hand
    python3 bench/live.py --help                        # options

Without --before, the build before is made here: a temporary `git worktree`
of this repository at --before-rev (d92fbaa), `make`, removed at the end.
The benchmark programs (bench/cpuloop.c, bench/calls.c, bench/stackuse.c,
tests/progs/three.c) are compiled with `cc` into BUILD/bench/.

1. overhead: CPU overhead on bench/run.py's overhead programs, unprofiled
   and profiled runs alternating as run.py makes them (B v1 B v2 B ...),
   at the default settings and with PC_SCOPE=all PC_STACKS=1 (what
   `pcprof run --stacks` records).
2. fixed: the cost of a profiled process that does almost no work
   (`cpuloop 1000`): CPU and wall time, its write_bytes; and what
   fallocate and unlink of a file of the live file's size cost here.
3. written: the live file's size and the disk it reserves; the profiled
   process's write_bytes and cancelled_write_bytes from /proc/PID/io, read
   after it ended and before it is reaped (waitid WNOWAIT); and, over a
   --long-seconds run, how much of the live file the kernel wrote back
   (the extents FIEMAP no longer reports unwritten, read through a
   descriptor held from the file's creation).
4. killed: `pcprof run -o DIR -- three-pie`, the program SIGKILLed after
   --kill-cpu seconds of its CPU time (its threads' schedstat), against
   the seconds `pcprof report --format json DIR` shows.
5. stacks: the bytes below a thread's stack pointer that the sampling
   signal writes (the kernel's frame and the handler's), that exit() and
   fork() take from the thread that calls them, and that a fatal signal
   takes of an alternate signal stack, with bench/stackuse.c.

Every run is pinned to one CPU (--cpu) and the variants alternate within
each round, so that other load on the machine falls on all of them alike.
Tables go to stdout, progress to stderr. Python 3 standard library only.
"""

import argparse
import copy
import ctypes
import fcntl
import glob
import json
import mmap
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (run.py's runs, calibration, tables and machine)
from run import median, note, die, table, base_env  # noqa: E402

BEFORE_REV = "d92fbaa"
ALL_STACKS = {"PC_SCOPE": "all", "PC_STACKS": "1"}
SETTINGS = [("default", {}), ("PC_SCOPE=all PC_STACKS=1", ALL_STACKS)]


# ----------------------------------------------------------------- builds

class Side:
    """One build: its label, directory, a copy of its libpc.so (so that a
    rebuild while this runs cannot mix two libraries) and its pcprof."""

    def __init__(self, ctx, name, build, tmp):
        self.name = name
        self.build = os.path.abspath(build)
        for f in ("libpc.so", "pcprof"):
            if not os.path.exists(os.path.join(self.build, f)):
                die("%s is missing in %s: build it first (make)" % (f, self.build))
        self.ctx = copy.copy(ctx)
        self.ctx.lib = os.path.join(tmp, name + "-libpc.so")
        shutil.copy2(os.path.join(self.build, "libpc.so"), self.ctx.lib)
        self.pcprof = os.path.join(self.build, "pcprof")

    def env(self, out, extra):
        return run.libpc_env(self.ctx, out, "default", extra)


def git(*argv, check=True):
    p = subprocess.run(["git", "-C", HERE] + list(argv), capture_output=True,
                       text=True)
    if check and p.returncode:
        die("git %s failed:\n%s" % (" ".join(argv), p.stderr))
    return p.stdout.strip()


def build_before(rev, tmp):
    """REV built in a temporary worktree under tmp; (build dir, worktree)."""
    wt = os.path.join(tmp, "before-src")
    full = git("rev-parse", "--verify", rev + "^{commit}", check=False)
    if not full:
        die("%s is not a commit of this repository: give a build with --before"
            % rev)
    note("live: building %s in a temporary worktree %s" % (rev, wt))
    git("worktree", "add", "--detach", wt, full)
    p = subprocess.run(["make", "-C", wt, "-j%d" % len(run.USABLE)],
                       capture_output=True, text=True,
                       preexec_fn=lambda: os.sched_setaffinity(0, run.USABLE))
    if p.returncode:
        die("building %s failed:\n%s" % (rev, (p.stdout + p.stderr)[-3000:]))
    return os.path.join(wt, "build"), wt


# ----------------------------------------------------------------- runs

def read_io(pid):
    io = {}
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            io[k.strip()] = int(v)
    return io


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_io(argv, env, cwd=None, while_running=None, expect=0):
    """Run argv to its end. /proc/PID/io is read when the process has ended
    but is not yet reaped (waitid WNOWAIT leaves a zombie whose counters are
    final), then wait4 reaps it. while_running(pid), if given, is called
    once it has started; expect is the exit status expected (a negative
    signal number for a death; no core dump then). Returns a dict: cpu
    (user+sys s), wall (s),
    write_bytes, cancelled_write_bytes, out, err, and what while_running
    returned as "seen"."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=fo, stderr=fe,
                             stdin=subprocess.DEVNULL,
                             preexec_fn=no_core if expect < 0 else None)
        seen = while_running(p.pid) if while_running else None
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
        wall = time.monotonic() - t0
        io = read_io(p.pid)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode(errors="replace")
        err = fe.read().decode(errors="replace")
    if p.returncode != expect:
        die("%s exited with %d:\n%s" % (" ".join(argv), p.returncode, err))
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall,
            "write_bytes": io["write_bytes"],
            "cancelled": io["cancelled_write_bytes"], "out": out, "err": err,
            "minflt": ru.ru_minflt, "majflt": ru.ru_majflt,
            "seen": seen}


def fresh(d):
    """An empty output directory at d: no earlier run's files to replace
    (whose dirty pages, truncated, would count as cancelled writes)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return os.path.join(d, "gmon.out")


def summary(err):
    """(signals/s, timer) from a PC_VERBOSE line of either build."""
    s = re.search(r"(\d+) signals/s", err)
    t = re.search(r"; timer (\w+)", err)
    return (int(s.group(1)) if s else None), (t.group(1) if t else "?")


def unwinder(err):
    """The unwinder a PC_VERBOSE line names."""
    m = re.search(r"frames a stack \((\w+)\)", err)
    return m.group(1) if m else "-"


def fs_of(path):
    """The file system type holding path, from /proc/mounts."""
    path = os.path.realpath(path)
    best, kind = "", "?"
    with open("/proc/mounts") as f:
        for line in f:
            t = line.split()
            mnt = t[1].replace("\\040", " ")
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and \
                    len(mnt) >= len(best):
                best, kind = mnt, "%s on %s (%s)" % (t[2], mnt, t[0])
    return kind


def wait_for_live(d, pid, timeout=5.0):
    """The path of pid's live file in d, once it is there (None if it never
    comes: a build without one, or it ended first)."""
    path = os.path.join(d, ".pcprof.%d.live" % pid)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if os.path.exists(path):
            return path
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return None
        except OSError:
            return None
        time.sleep(0.001)
    return None


def mb(n):
    return "%.2f MB" % (n / 1e6)


def kb(n):
    if n < 1024:
        return "%d B" % n
    if n < 10240:
        return "%.1f KiB" % (n / 1024.0)
    if n < 10 * 1048576:
        return "%.0f KiB" % (n / 1024.0)
    return "%.1f MiB" % (n / 1048576.0)


def span(xs, fmt):
    return "%s .. %s" % (fmt(min(xs)), fmt(max(xs)))


# ----------------------------------------------------------------- 1. overhead

def bench_overhead(a, now_ctx, sides, tmp):
    variants = [(side, label, extra) for label, extra in SETTINGS
                for side in sides]
    for name, what, n0 in run.OVERHEAD_PROGS:
        exe, _ = run.compile_c(now_ctx, os.path.join(HERE, name + ".c"), name,
                               ["-O2", "-Wall"])
        plain = base_env()
        n = run.calibrate(exe, n0, a.seconds, plain)
        note("overhead: %s, argument %d, %d rounds of %d runs"
             % (name, n, a.runs, 2 * len(variants) + 1))
        measure = run.Measure()
        base, ratios = [], [[] for _ in variants]
        sigs = [[] for _ in variants]
        timers = ["?"] * len(variants)
        d = os.path.join(tmp, "overhead")
        for r in range(a.runs):
            # B v1 B v2 B ... vk B, as run.py: each profiled run against
            # the mean of the unprofiled runs either side of it
            b_prev, _, _ = measure([exe, str(n)], plain)
            base.append(b_prev)
            for i, (side, _, extra) in enumerate(variants):
                out = fresh(d)
                cpu, _, err = measure([exe, str(n)], side.env(out, extra))
                b_next, _, _ = measure([exe, str(n)], plain)
                base.append(b_next)
                ratios[i].append(cpu / ((b_prev + b_next) / 2))
                s, timers[i] = summary(err)
                if s is not None:
                    sigs[i].append(s)
                b_prev = b_next
            note("  round %d/%d done" % (r + 1, a.runs))
        rows = []
        for i, (side, label, _) in enumerate(variants):
            ov = [(x - 1) * 100 for x in ratios[i]]
            rows.append([side.name, label, timers[i], run.pct(median(ov)),
                         span(ov, run.pct),
                         "%d" % median(sigs[i]) if sigs[i] else "-"])
        print()
        print("overhead: %s (bench/%s.c, argument %d), %d alternating rounds"
              % (what, name, n, a.runs))
        print("unprofiled CPU time: median %.3f s [%.3f .. %.3f] over %d runs"
              % (median(base), min(base), max(base), len(base)))
        print(table(["build", "settings", "timer", "CPU overhead",
                     "min .. max", "signals/s"], rows,
                    ["<", "<", "<", ">", ">", ">"]))
        print("runs repeated once because another process shared the CPU "
              "(wall > 1.1 x CPU): %d of %d" % (measure.retried, measure.runs))
        sys.stdout.flush()


# ----------------------------------------------------------------- 2. fixed

def live_sizes(a, now, tmp):
    """{setting: (st_size, allocated bytes)} of the build now's live file,
    seen while a short run of cpuloop is under way."""
    exe, _ = run.compile_c(now.ctx, os.path.join(HERE, "cpuloop.c"), "cpuloop",
                           ["-O2", "-Wall"])
    n = run.calibrate(exe, 100000000, 0.3, base_env())
    sizes = {}
    for label, extra in SETTINGS:
        d = os.path.join(tmp, "size")
        out = fresh(d)

        def stat_live(pid):
            path = wait_for_live(d, pid)
            if not path:
                return None
            try:
                st = os.stat(path)
            except OSError:
                return None
            return st.st_size, st.st_blocks * 512
        r = run_io([exe, str(n)], now.env(out, extra), while_running=stat_live)
        if r["seen"] is None:
            die("no live file seen in %s under the build now (%s)" % (d, label))
        sizes[label] = r["seen"]
    return sizes


def time_fallocate(d, size, reps):
    """Median ms of ftruncate+fallocate (as live.c makes the file) and of
    the unlink and last close that free it, for a file of size bytes in d."""
    alloc, free = [], []
    path = os.path.join(d, ".bench-fallocate")
    for _ in range(reps):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        t0 = time.perf_counter()
        os.ftruncate(fd, size)
        os.posix_fallocate(fd, 0, size)
        t1 = time.perf_counter()
        os.unlink(path)
        os.close(fd)
        t2 = time.perf_counter()
        alloc.append(t1 - t0)
        free.append(t2 - t1)
    return 1000 * median(alloc), 1000 * median(free)


def bench_fixed(a, now_ctx, sides, tmp):
    exe, _ = run.compile_c(now_ctx, os.path.join(HERE, "cpuloop.c"), "cpuloop",
                           ["-O2", "-Wall"])
    plain = base_env()
    variants = [(None, "unprofiled", None)] + \
        [(side, label, extra) for label, extra in SETTINGS for side in sides]
    res = [{"cpu": [], "wall": [], "wb": [], "cx": [], "flt": []}
           for _ in variants]
    reps = 4 * a.runs
    note("fixed: %d rounds of %d runs of cpuloop 1000" % (reps, len(variants)))
    d = os.path.join(tmp, "fixed")
    for _ in range(reps):
        for i, (side, _, extra) in enumerate(variants):
            out = fresh(d)
            env = plain if side is None else side.env(out, extra)
            r = run_io([exe, "1000"], env)
            res[i]["cpu"].append(r["cpu"])
            res[i]["wall"].append(r["wall"])
            res[i]["wb"].append(r["write_bytes"])
            res[i]["cx"].append(r["cancelled"])
            res[i]["flt"].append((r["minflt"], r["majflt"]))
    cpu0, wall0 = median(res[0]["cpu"]), median(res[0]["wall"])
    rows = []
    for i, (side, label, _) in enumerate(variants):
        c, w = median(res[i]["cpu"]), median(res[i]["wall"])
        rows.append(["-" if side is None else side.name, label,
                     "%.1f ms" % (1000 * c),
                     "-" if side is None else "%+.1f ms" % (1000 * (c - cpu0)),
                     "%.1f ms" % (1000 * w),
                     "-" if side is None else "%+.1f ms" % (1000 * (w - wall0)),
                     "%d / %d" % (median([f[0] for f in res[i]["flt"]]),
                                  median([f[1] for f in res[i]["flt"]])),
                     kb(median(res[i]["wb"])), kb(median(res[i]["cx"]))])
    print()
    print("fixed cost of a process: bench/cpuloop.c 1000 (almost no work), "
          "median of %d runs each, variants alternating" % reps)
    print("CPU: user+sys from wait4; wall: from the start to the exit, "
          "including the fork and exec that the unprofiled run has too")
    print("written: write_bytes (pages the process dirtied or wrote), "
          "cancelled: cancelled_write_bytes (dirty pages dropped before "
          "writeback: the live file's, when it is removed), from /proc/PID/io;")
    print("faults: minor / major page faults (wait4); a major one read "
          "pages in, which for the live file means zero-filled pages")
    print(table(["build", "settings", "CPU", "added", "wall", "added",
                 "faults min/maj", "written", "cancelled"], rows,
                ["<", "<", ">", ">", ">", ">", ">", ">", ">"]))
    now = sides[-1]
    sizes = live_sizes(a, now, tmp)
    rows = []
    for label, _ in SETTINGS:
        size, _ = sizes[label]
        fa, ul = time_fallocate(d, size, reps)
        rows.append([label, "%s (%s)" % (mb(size), kb(size)),
                     "%.2f ms" % fa, "%.2f ms" % ul])
    print()
    print("the live file alone: ftruncate + fallocate of a file of its size, "
          "then unlink + close, in the runs' directory (%s), median of %d"
          % (fs_of(d), reps))
    print(table(["settings", "live file", "fallocate", "unlink"], rows,
                ["<", ">", ">", ">"]))
    sys.stdout.flush()


# ----------------------------------------------------------------- 3. written

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNWRITTEN = 0x800


def written_back(fd):
    """Bytes of fd's file in extents that are no longer unwritten: on a
    file made with fallocate, what writeback has put on the disk at least
    once. FIEMAP without FIEMAP_FLAG_SYNC, so that nothing is written for
    the asking."""
    start, total, n = 0, 0, 256
    while True:
        buf = bytearray(struct.pack("<QQIIII", start, (1 << 64) - 1 - start,
                                    0, 0, n, 0) + bytes(56 * n))
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf, True)
        mapped = struct.unpack_from("<I", buf, 20)[0]
        if not mapped:
            return total
        for i in range(mapped):
            logical, _, length, _, _, flags = struct.unpack_from(
                "<QQQQQI", buf, 32 + 56 * i)
            if not flags & FIEMAP_EXTENT_UNWRITTEN:
                total += length
            start = logical + length
            if flags & FIEMAP_EXTENT_LAST:
                return total


def vmstat(key):
    with open("/proc/vmstat") as f:
        for line in f:
            k, v = line.split()
            if k == key:
                return int(v)
    return 0


def page_cache(fd):
    """Bytes of fd's file in the page cache (mincore on a mapping of it,
    which faults nothing in), or None."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.fstat(fd).st_size
    page = os.sysconf("SC_PAGE_SIZE")
    addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        return None
    vec = (ctypes.c_ubyte * ((size + page - 1) // page))()
    r = libc.mincore(addr, size, vec)
    libc.munmap(addr, size)
    return None if r else sum(v & 1 for v in vec) * page


def held_run(exe, n, side, out, extra):
    """A run whose live file is opened as soon as it is there: the
    descriptor keeps it after libpc removes it, for a look after the end
    (it also moves the dropping of its dirty pages to our close, so the
    process's cancelled_write_bytes mean nothing here). Returns run_io's
    dict with "live": (size, allocated, page cache, written back) or None,
    and "machine": the whole machine's nr_written meanwhile, in bytes."""
    d, held = os.path.dirname(out), {}

    def hold(pid):
        path = wait_for_live(d, pid)
        if path:
            try:
                held["fd"] = os.open(path, os.O_RDONLY)
            except OSError:
                pass
    w0 = vmstat("nr_written")
    r = run_io([exe, str(n)], side.env(out, extra), while_running=hold)
    r["machine"] = 4096 * (vmstat("nr_written") - w0)
    r["live"] = None
    if "fd" in held:
        st = os.fstat(held["fd"])
        r["live"] = (st.st_size, st.st_blocks * 512, page_cache(held["fd"]),
                     written_back(held["fd"]))
        os.close(held["fd"])
    r["files"] = sum(os.path.getsize(f) for f in glob.glob(out + "*"))
    return r


def bench_written(a, now_ctx, sides, tmp):
    exe, _ = run.compile_c(now_ctx, os.path.join(HERE, "cpuloop.c"), "cpuloop",
                           ["-O2", "-Wall"])
    d = os.path.join(tmp, "written")
    n = run.calibrate(exe, 100000000, a.seconds, base_env())
    runs = [(n, side, label, extra) for label, extra in SETTINGS
            for side in sides]
    if a.long_seconds > 0:
        runs += [(int(n * a.long_seconds / a.seconds), side, SETTINGS[1][0],
                  ALL_STACKS) for side in sides]
    note("written: %d runs of %g s%s" % (
        2 * len(SETTINGS), a.seconds, ", then 2 of %g s" % a.long_seconds
        if a.long_seconds > 0 else ""))
    rows = []
    for arg, side, label, extra in runs:
        r = held_run(exe, arg, side, fresh(d), extra)
        live = r["live"]
        rows.append([side.name, label, "%.1f s" % r["cpu"],
                     "%s / %s" % (mb(live[0]), mb(live[1])) if live else "none",
                     kb(r["write_bytes"]), kb(live[2]) if live else "-",
                     kb(live[3]) if live else "-", kb(r["files"]),
                     kb(r["machine"])])
    note("  done")
    print()
    print("pages written: bench/cpuloop.c, one run per row; the live file "
          "held open from its start and looked at after the end")
    print("live file: its size / the disk it holds (st_blocks); written: the "
          "process's write_bytes (/proc/PID/io, pages dirtied or written)")
    print("cached: the live file's bytes in the page cache at the end "
          "(mincore); written back: its bytes in extents no longer unwritten "
          "(FIEMAP),")
    print("what writeback put on the disk at least once; profile: the files "
          "written; machine: the whole machine's writeback meanwhile "
          "(/proc/vmstat nr_written)")
    print("dirty_expire_centisecs %s, dirty_writeback_centisecs %s, "
          "dirty_background_ratio %s" % (sysctl("dirty_expire_centisecs"),
                                         sysctl("dirty_writeback_centisecs"),
                                         sysctl("dirty_background_ratio")))
    print(table(["build", "settings", "CPU", "live file", "written", "cached",
                 "written back", "profile", "machine"], rows,
                ["<", "<", ">", ">", ">", ">", ">", ">", ">"]))
    sys.stdout.flush()


def sysctl(name):
    try:
        with open("/proc/sys/vm/" + name) as f:
            return f.read().strip()
    except OSError:
        return "?"


# ----------------------------------------------------------------- 4. killed

def proc_cpu(pid):
    """CPU seconds of pid's threads now, from their schedstat (ns)."""
    total = 0
    for t in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            with open(t) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def find_child(ppid, comm, timeout=10.0):
    """The pid of ppid's child that runs comm, once it has exec'ed."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            with open("/proc/%d/task/%d/children" % (ppid, ppid)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            return None
        for k in kids:
            try:
                with open("/proc/%d/comm" % k) as f:
                    if f.read().strip() == comm:
                        return k
            except OSError:
                pass
        time.sleep(0.001)
    return None


def killed_run(side, exe, d, at):
    """pcprof run of exe, SIGKILLed after `at` CPU seconds: (CPU seconds at
    the kill, seconds of the report or None, what pcprof said last)."""
    shutil.rmtree(d, ignore_errors=True)
    with tempfile.TemporaryFile() as fe:
        p = subprocess.Popen([side.pcprof, "run", "-o", d, "--", exe, "600"],
                             env=base_env(), stdout=subprocess.DEVNULL,
                             stderr=fe, stdin=subprocess.DEVNULL)
        pid = find_child(p.pid, os.path.basename(exe)[:15])
        if pid is None:
            p.kill()
            p.wait()
            die("%s: pcprof run started no %s" % (side.name, exe))
        while proc_cpu(pid) < at:
            time.sleep(0.002)
        cpu = proc_cpu(pid)
        os.kill(pid, signal.SIGKILL)
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        fe.seek(0)
        said = [ln for ln in fe.read().decode(errors="replace").splitlines()
                if ln.startswith("pcprof:")]
    r = subprocess.run([side.pcprof, "report", "--format", "json", d],
                       capture_output=True, text=True)
    if r.returncode:
        # the message without its path, which is a temporary directory's
        msg = said[-1] if said else r.stderr.strip()
        return cpu, None, msg.split("': ", 1)[-1]
    return cpu, json.loads(r.stdout)["cpu_seconds"], ""


def bench_killed(a, now_ctx, sides, tmp):
    exe, _ = run.compile_c(now_ctx, os.path.join(HERE, "..", "tests", "progs",
                                                  "three.c"), "three-pie",
                           ["-O2", "-g", "-pthread", "-Wall", "-fPIE", "-pie"])
    note("killed: %d runs of pcprof run, each build, killed at %g s CPU"
         % (a.runs, a.kill_cpu))
    rows, ratios = [], {s.name: [] for s in sides}
    said = {}
    for i in range(a.runs):
        for side in sides:
            cpu, got, msg = killed_run(side, exe, os.path.join(tmp, "killed"),
                                       a.kill_cpu)
            if got is None:
                said[side.name] = msg
                rows.append(["%d" % (i + 1), side.name, "%.3f s" % cpu,
                             "nothing", "-"])
            else:
                ratios[side.name].append(got / cpu)
                rows.append(["%d" % (i + 1), side.name, "%.3f s" % cpu,
                             "%.3f s" % got, "%.3f" % (got / cpu)])
        note("  round %d/%d done" % (i + 1, a.runs))
    print()
    print("killed runs: pcprof run -o DIR -- three-pie 600 (tests/progs/three.c),"
          " the program SIGKILLed once its threads' schedstat passes %g s;"
          % a.kill_cpu)
    print("report: the cpu_seconds of pcprof report --format json DIR; "
          "ratio: report / CPU at the kill")
    print(table(["run", "build", "CPU at kill", "report", "ratio"], rows,
                ["<", "<", ">", ">", ">"]))
    for side in sides:
        r = ratios[side.name]
        if r:
            print("%s: median ratio %.3f (%s) over %d runs"
                  % (side.name, median(r), span(r, lambda x: "%.3f" % x),
                     len(r)))
        else:
            print("%s: nothing recovered in %d runs (%s)"
                  % (side.name, a.runs, said.get(side.name, "")))
    sys.stdout.flush()


# ----------------------------------------------------------------- 5. stacks

def stack_depth(path):
    """(bytes below the mark that are no longer the pattern, signals the
    empty handler caught) of a stackuse FILE."""
    with open(path, "rb") as f:
        data = f.read()
    magic, off, length, mark, caught = struct.unpack_from("<5Q", data, 0)
    pat = struct.pack("<Q", magic)
    if not off <= mark <= off + length:
        die("%s: the mark %d is outside the stack" % (path, mark))
    for p in range(off, mark - mark % 8, 8):
        if data[p:p + 8] != pat:
            return mark - p, caught
    return 0, caught


HANDLER_CONFIGS = [
    ("PC_CALLGRAPH=0", {"PC_CALLGRAPH": "0"}),
    ("PC_CALLGRAPH=1 (dwarf, the default)", {}),
    ("PC_CALLGRAPH=1 PC_UNWIND=fp", {"PC_UNWIND": "fp"}),
    ("PC_CALLGRAPH=1 PC_UNWIND=libunwind", {"PC_UNWIND": "libunwind"}),
    ("PC_SCOPE=all PC_STACKS=1 (dwarf)", ALL_STACKS),
]
END_CONFIGS = SETTINGS
ENDS = {"exit": "exit()", "fork": "fork()",
        "fatal": "SIGSEGV on an alternate stack"}


def bench_stacks(a, now_ctx, sides, tmp):
    exe, _ = run.compile_c(now_ctx, os.path.join(HERE, "stackuse.c"), "stackuse",
                           ["-O2", "-Wall", "-pthread"])
    stk = os.path.join(tmp, "stack")
    d = os.path.join(tmp, "stacks")
    plain = base_env()
    secs = "%g" % a.stack_seconds
    note("stacks: %d rounds" % a.runs)
    h_plain, h_kernel, caught = [], [], []
    h = {(s.name, c): [] for s in sides for c, _ in HANDLER_CONFIGS}
    unw = {}
    # exit and fork: (mode, None) unprofiled, (mode, side, config) profiled
    e = {(m, None): [] for m in ENDS}
    e.update({(m, s.name, c): [] for m in ENDS for s in sides
              for c, _ in END_CONFIGS})
    for r in range(a.runs):
        run_io([exe, "handler", stk, secs], plain)
        h_plain.append(stack_depth(stk)[0])
        run_io([exe, "handler", stk, secs, "signal"], plain)
        depth, n = stack_depth(stk)
        h_kernel.append(depth)
        caught.append(n)
        for c, extra in HANDLER_CONFIGS:
            for side in sides:
                res = run_io([exe, "handler", stk, secs],
                             side.env(fresh(d), extra))
                h[side.name, c].append(stack_depth(stk)[0])
                unw[side.name, c] = unwinder(res["err"])
        for m in ENDS:
            expect = -signal.SIGSEGV if m == "fatal" else 0
            run_io([exe, m, stk, secs], plain, expect=expect)
            e[m, None].append(stack_depth(stk)[0])
            for c, extra in END_CONFIGS:
                for side in sides:
                    run_io([exe, m, stk, secs], side.env(fresh(d), extra),
                           expect=expect)
                    e[m, side.name, c].append(stack_depth(stk)[0])
        note("  round %d/%d done" % (r + 1, a.runs))

    def cell(xs, minus):
        # the deepest of the rounds, and the shallowest where they differ
        s = "%d" % max(xs) if min(xs) == max(xs) else \
            "%d (%d)" % (max(xs), min(xs))
        return s, "%+d" % (max(xs) - minus)
    kernel = max(h_kernel)
    rows = [["unprofiled", "-", cell(h_plain, 0)[0], "-"],
            ["unprofiled, an empty SIGUSR1 handler (%d caught)" % min(caught),
             "-", cell(h_kernel, 0)[0], "0"]]
    for c, _ in HANDLER_CONFIGS:
        for side in sides:
            depth, more = cell(h[side.name, c], kernel)
            rows.append([c + ", " + side.name, unw[side.name, c], depth, more])
    print()
    print("signal handler's stack use: bench/stackuse.c handler, a thread on "
          "a stack of its own (pthread_attr_setstack) filled with a pattern,")
    print("spinning %s s of CPU in a leaf; bytes below the leaf's stack "
          "pointer no longer the pattern, the deepest of %d runs (the "
          "shallowest in brackets where they differ)" % (secs, a.runs))
    print("beyond the kernel's: minus the deepest with an empty handler (the "
          "kernel's signal frame, and a handler that needs no frame)")
    print(table(["settings, build", "unwinder", "bytes", "beyond the kernel's"],
                rows, ["<", "<", ">", ">"]))
    rows = []
    for m, what in ENDS.items():
        base = max(e[m, None])
        rows.append([what, "unprofiled", cell(e[m, None], 0)[0], "0"])
        for c, _ in END_CONFIGS:
            for side in sides:
                depth, more = cell(e[m, side.name, c], base)
                rows.append(["", c + ", " + side.name, depth, more])
    print()
    print("exit(), fork() and a fatal signal: bench/stackuse.c exit, fork "
          "and fatal; the main thread spins %s s of CPU, then a thread on a"
          % secs)
    print("pattern-filled stack calls exit() (the exit handlers, and libpc's "
          "writer where it runs there) or fork() (the fork handlers of the "
          "parent")
    print("and the child, whose copy of the stack is read), or the main "
          "thread takes that stack as its sigaltstack and writes through a "
          "null pointer,")
    print("SIGSEGV's default action kept (only a profiler's handler runs "
          "there, the kernel's frame included); bytes below the thread "
          "function's stack")
    print("pointer, or the alternate stack's top, no longer the pattern, "
          "deepest of %d runs" % a.runs)
    print(table(["call", "settings, build", "bytes", "beyond unprofiled"],
                rows, ["<", "<", ">", ">"]))
    sys.stdout.flush()


# ----------------------------------------------------------------- main

BENCHES = {"overhead": bench_overhead, "fixed": bench_fixed,
           "written": bench_written, "killed": bench_killed,
           "stacks": bench_stacks}


def main():
    ap = argparse.ArgumentParser(
        description="The live file, signals and stacks: the build before "
        "issue 24 (%s) against the build now." % BEFORE_REV)
    ap.add_argument("bench", nargs="*", metavar="BENCH",
                    help="benchmarks to run (default: all, in this order: "
                    + ", ".join(BENCHES) + ")")
    ap.add_argument("--build", default="build",
                    help="the build now: a directory with libpc.so and "
                    "pcprof (default: build)")
    ap.add_argument("--before", metavar="DIR",
                    help="the build before, already made (default: build "
                    "--before-rev in a temporary git worktree)")
    ap.add_argument("--before-rev", default=BEFORE_REV,
                    help="the commit built as the build before (default %s)"
                    % BEFORE_REV)
    ap.add_argument("--runs", type=int, default=5,
                    help="repetitions: overhead rounds, killed runs and "
                    "stack rounds; 4 x this many fixed-cost rounds (default 5)")
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="CPU seconds of an unprofiled overhead run, and of "
                    "the pages-written runs (default 1)")
    ap.add_argument("--long-seconds", type=float, default=10.0,
                    help="CPU seconds of the writeback run (default 10; 0 "
                    "leaves it out)")
    ap.add_argument("--kill-cpu", type=float, default=2.0,
                    help="killed: CPU seconds at which the program is "
                    "killed (default 2)")
    ap.add_argument("--stack-seconds", type=float, default=0.3,
                    help="stacks: CPU seconds of each run (default 0.3)")
    ap.add_argument("--dir", default=None,
                    help="where the runs write their profiles and live files "
                    "(default: a new directory in $TMPDIR or /tmp)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="pin every run to this CPU (default: the highest "
                    "numbered usable CPU; -1: do not pin)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory and worktree")
    a = ap.parse_args()
    for name in a.bench:
        if name not in BENCHES:
            ap.error("unknown benchmark %r: choose from %s"
                     % (name, ", ".join(BENCHES)))
    if a.runs < 1:
        ap.error("--runs must be 1 or more")
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    tmp = tempfile.mkdtemp(prefix="pc-live-", dir=a.dir)
    worktree, now_ctx = None, None
    t0 = time.monotonic()
    try:
        if a.before:
            before_dir = a.before
        else:
            before_dir, worktree = build_before(a.before_rev, tmp)
        now_ctx = run.Ctx(argparse.Namespace(build=a.build, env=[]))
        sides = [Side(now_ctx, "before", before_dir, tmp),
                 Side(now_ctx, "now", a.build, tmp)]
        if a.cpu is None:
            a.cpu = run.USABLE[-1]
        if a.cpu >= 0:
            if a.cpu not in run.USABLE:
                ap.error("--cpu %d: not one of the usable CPUs %s"
                         % (a.cpu, run.USABLE))
            os.sched_setaffinity(0, {a.cpu})
        head = git("log", "-1", "--format=%h %s", check=False)
        print("pcprof live file, signals and stacks, %s"
              % time.strftime("%Y-%m-%d %H:%M %Z"))
        for k, v in run.machine()[:3]:
            print("  %-10s %s" % (k, v))
        print("  %-10s %s" % ("pinned", "CPU %d" % a.cpu if a.cpu >= 0
                                else "no"))
        print("  %-10s %s" % ("source", head[:72] or "?"))
        print("  %-10s %s" % ("before", "%s, built here from %s" % (
            sides[0].build, a.before_rev) if worktree else sides[0].build))
        print("  %-10s %s" % ("now", now_ctx.lib_id or sides[1].build))
        print("  %-10s %s" % ("runs in", fs_of(tmp)))
        sys.stdout.flush()
        for name in a.bench or list(BENCHES):
            BENCHES[name](a, now_ctx, sides, tmp)
    finally:
        if a.keep:
            note("live: temporary files kept in " + tmp)
        else:
            if worktree:
                git("worktree", "remove", "--force", worktree, check=False)
            shutil.rmtree(tmp, ignore_errors=True)
        if now_ctx:
            shutil.rmtree(now_ctx.tmp, ignore_errors=True)
    note("live: done in %.0f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
