# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of libpc's address space (preload/live.c's chunk 0,
mapped block by block as it is backed, preload/livegrow.c): a program
that locks its memory or limits its address space keeps the room it has
plain.

- mlockall(MCL_CURRENT | MCL_FUTURE) as a user that is not root (uid
  65534), whose RLIMIT_MEMLOCK (8 MiB, Debian's default) weighs every
  mapping of the process: plain and under libpc in each configuration,
  the call succeeds, and a malloc that leaves libpc(7)'s bound (2.5 MiB)
  spare succeeds too, every sample placed; a plugin loaded after the
  lock finds the live file stopped (the summary says the program locked
  its memory), and its samples are placed at the end; with a limit of 64 KiB the call fails alike; the profile
  names the program's function. (mlockall failed with ENOMEM under
  --stacks and pcprof run when libpc mapped its whole live file at
  start-up.)
- `ulimit -v`: a program that mallocs 64 MiB with 24 MiB to spare plain,
  under --stacks, the wall clock and both (the 32 MiB stack arena was
  mapped at start-up, and the malloc failed), and with 2.5 MiB to spare
  under pcprof run, with and without --stacks.
- The wall clock (PC_CLOCK=wall, pcprof run --clock wall, with and
  without --stacks) under both, with libpc(7)'s bound for it (5 MiB) to
  spare: its sampler's thread never calls malloc (a malloc watcher,
  tests/progs/wallmem_count.c, preloaded first, sees none: glibc gave the
  thread an arena of 64 MiB, and mlockall failed with ENOMEM), and its
  tables grow with the threads, but not after mlockall(MCL_FUTURE): the
  threads past their room are not followed, and the summary says so.

Every run has a timeout, after which its process group is killed."""

import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time

import pctest
from pctest import clean_env, gprof_flat, prog
from test_footprint import pcprof, plain, run, under_pcprof, vm_peak_kib

NOBODY = 65534
LIMIT_KIB = 8192	# RLIMIT_MEMLOCK: Debian 12's default
BOUND_KIB = 2560	# libpc(7): what libpc maps for a small program, at most
SLACK_KIB = 256		# the program's stdio buffer, malloc's own pages
WALL_BOUND_KIB = 5120	# libpc(7): the same under the wall clock

# (name, environment of the program, options of pcprof run or None).
# The wall clock's are apart (WALL_CONFIGS): it maps more.
CONFIGS = (
    ("cpu", {}, None),
    ("stacks", {"PC_STACKS": "1"}, None),
    ("pcprof run", None, ()),
    ("pcprof run --stacks", None, ("--stacks",)),
)

WALL_CONFIGS = (
    ("wall", {"PC_CLOCK": "wall"}, None),
    ("pcprof run --clock wall", None, ("--clock", "wall")),
    ("pcprof run --stacks --clock wall", None, ("--stacks", "--clock", "wall")),
)


def as_nobody(limit_kib):
    """preexec: RLIMIT_MEMLOCK's hard limit at limit_kib, then uid and gid
    65534 with no groups (as root; another user is not root already)."""
    def drop():
        lim = limit_kib * 1024
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (lim, lim))
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
    return drop


def lock_run(d, name, env, opts, argv, limit_kib):
    """argv as nobody under configuration name: (status, stdout, stderr,
    the profile's path, a new one each run)."""
    d = tempfile.mkdtemp(prefix="run-", dir=d)
    os.chmod(d, 0o777)
    if opts is None:
        out = os.path.join(d, name.replace(" ", "_") + ".out")
        e = clean_env(dict(env, PC_VERBOSE="1", PC_OUT=out))
        st, o, err = run(argv, d, e, as_nobody(limit_kib))
        return st, o, err, out
    out = os.path.join(d, name.replace(" ", "_"))
    st, o, err, _ = under_pcprof(out, argv, *opts, preexec=as_nobody(limit_kib))
    return st, o, err, os.path.join(out, "gmon.out")


def samples(err, what):
    m = re.search(r"libpc: wrote \S+: (\d+) samples", err)
    assert m, "%s: no summary line: %r" % (what, err[-600:])
    return int(m.group(1))


def briefly(argv):
    """A lock program's argv with its spin (argv[4]) at 0.01 s: its plain
    run is compared by status and output, which do not change with it."""
    return argv[:4] + ["0.01"] + argv[5:]


def test_mem34_mlockall_as_nobody_runs_as_plain():
    d = tempfile.mkdtemp(prefix="pc-m34-")
    os.chmod(d, 0o777)
    try:
        st, o, _ = plain([prog("mem34_lock"), "need"], d)
        need = int(o.split()[1])
        size = LIMIT_KIB - need - BOUND_KIB - SLACK_KIB
        assert st == 0 and size >= 1024, (st, o)
        got = []
        for flags in ("cur+fut", "cur+fut+onfault"):
            argv = [prog("mem34_lock"), str(LIMIT_KIB), flags, str(size), "0.3"]
            want = plain(briefly(argv), d, as_nobody(LIMIT_KIB))
            assert want[:2] == (0, "mlockall: ok\nmalloc %d KiB: ok\nspun\n" % size), want
            for name, env, opts in CONFIGS if flags == "cur+fut" else CONFIGS[:1]:
                st, o, err, gmon = lock_run(d, name, env, opts, argv, LIMIT_KIB)
                what = "%s %s" % (name, flags)
                assert (st, o) == want[:2], "%s: exit %s, %r; plain exit %s, %r: %s" % (
                    what, st, o, want[0], want[1], err[-600:])
                n = samples(err, what)
                # blocks the file would map after the lock are not mapped
                stop = re.search(r"stopped growing \(([^)]*)\)", err)
                assert not stop or "mlockall" in stop.group(1), "%s: %s" % (what, err[-600:])
                assert "not placed" not in err, "%s: %s" % (what, err[-600:])
                funcs, total, _ = gprof_flat(prog("mem34_lock"), gmon)
                assert n > 100 and funcs.get("lock_work", 0) > 0.6 * total, \
                    "%s: %d samples, %r" % (what, n, funcs)
            got.append("%s: malloc %d KiB as plain" % (flags, size))
        # code loaded after the lock (a plugin, PC_SCOPE=all): its counters'
        # blocks are not mapped, the summary says why, and its samples are
        # placed at the end
        argv = [prog("mem34_lock"), str(LIMIT_KIB), "cur+fut", str(size), "0.6",
                prog("plugspin.so")]
        want = plain(briefly(argv), d, as_nobody(LIMIT_KIB))
        assert want[:2] == (0, "mlockall: ok\nmalloc %d KiB: ok\nplugin: ok\nspun\n" % size), \
            want
        for name, env, opts in CONFIGS[2:]:
            st, o, err, gmon = lock_run(d, name, env, opts, argv, LIMIT_KIB)
            assert (st, o) == want[:2], (name, st, o, err[-600:])
            assert "stopped growing (the program locked its memory: mlockall)" in err and \
                "not placed" not in err, (name, err[-600:])
            r = subprocess.run([pcprof(), "report", os.path.dirname(gmon)], capture_output=True,
                               text=True, timeout=60, env=clean_env(profiled=False))
            m = re.search(r"^\s*([\d.]+)\s.*\splugin_spin$", r.stdout, re.M)
            assert r.returncode == 0 and m and float(m.group(1)) >= 0.2, (name, r.stdout[-800:])
        got.append("a plugin loaded after the lock: %s s of plugin_spin" % m.group(1))
        # a limit under what plain needs: the call fails alike
        argv = [prog("mem34_lock"), "64", "cur+fut", "64", "0.1"]
        want = plain(briefly(argv), d, as_nobody(LIMIT_KIB))
        assert want[:2] == (1, "mlockall: Cannot allocate memory\n"), want
        for name, env, opts in CONFIGS:
            st, o, err, _ = lock_run(d, name, env, opts, argv, LIMIT_KIB)
            assert (st, o) == want[:2], (name, st, o, err[-400:])
        return "plain needs %d KiB; %s; 64 KiB fails alike" % (need, "; ".join(got))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_mem34_ulimit_v_with_stacks_and_the_wall_clock():
    """24 MiB to spare with --stacks and the wall clock (as
    test_ulimit_v_program_mallocs_as_plain without them), and libpc(7)'s
    bound, 2.5 MiB, with and without --stacks (the wall sampler needs
    more: libpc(7), BUGS)."""
    cmd = [prog("footprint"), "malloc", "64", "0.3"]
    need = vm_peak_kib(cmd)
    assert need > 64 * 1024, need
    d = tempfile.mkdtemp(prefix="pc-m34-")
    try:
        for spare, configs in ((24 * 1024, (("--stacks",), ("--clock", "wall"),
                                            ("--stacks", "--clock", "wall"))),
                               (BOUND_KIB, ((), ("--stacks",)))):
            limit = (need + spare) * 1024

            def limited():
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            # plain spins 0.01 s: its status and output are compared
            want = plain(cmd[:-1] + ["0.01"], d, limited)
            assert want[:2] == (0, "malloc ok\n"), want
            for opts in configs:
                what = "%s, %d KiB spare" % (" ".join(opts) or "pcprof run", spare)
                out = os.path.join(d, "run%d%s" % (spare, "".join(opts)))
                st, o, e, _ = under_pcprof(out, cmd, *opts, preexec=limited)
                assert (st, o) == want[:2], (what, st, o, e[-800:])
                assert samples(e, what) > 100, e[-600:]
                funcs, total, _ = gprof_flat(prog("footprint"), os.path.join(out, "gmon.out"))
                # 0.3 s of spin_work, after main's touches of 64 MiB
                assert funcs.get("spin_work", 0) >= 0.2, (what, funcs)
        return "malloc ok under ulimit -v of plain's peak (%d KiB) + 24 MiB and + %d KiB" % (
            need, BOUND_KIB)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_mem34_growth_never_takes_a_descriptor_number():
    """tests/progs/blockers for 0.3 s under pcprof run --stacks: while its
    threads wait and burn, and the live file maps its blocks (the grower
    opens the file by its name to map one), a thread closes descriptor 0
    and opens /dev/null again and again: the number it gets is always 0,
    as plain. Racy: 10 runs. (The grower took 0 for a moment, in the
    program's table, before it had a table of its own.)"""
    exe = prog("blockers")
    d = tempfile.mkdtemp(prefix="pc-m34-")
    try:
        st, o, _ = plain([exe, "0.3"], d)
        assert st == 0 and re.search(r"reopen of 0: \d+ calls 0 wrong", o), (st, o)
        calls = taken = 0
        for i in range(10):
            out = os.path.join(d, "run%d" % i)
            st, o, e, _ = under_pcprof(out, [exe, "0.3"], "--stacks")
            m = re.search(r"reopen of 0: (\d+) calls (\d+) wrong", o)
            assert st == 0 and m and m.group(2) == "0", (i, st, o, e[-600:])
            # sampled, so the live file grew while it reopened (0.3 s of
            # wall time is 0.1 s of CPU, 90 samples, on a busy machine)
            n = samples(e, "run %d" % i)
            assert n > 20, (i, e[-600:])
            calls += int(m.group(1))
            taken += n
            shutil.rmtree(out, ignore_errors=True)
        assert taken > 500, taken
        return "10 runs: %d reopens, 0 wrong; %d samples" % (calls, taken)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_mem34_snapshots_never_take_a_descriptor_number():
    """The same reopen of descriptor 0 in tests/progs/blockers for 0.3 s,
    with a snapshot written every 10 ms from libpc's snapshot thread
    (PC_SNAPSHOT_INTERVAL=0.01): the number is always 0, as plain, and
    the snapshots are written. Racy: 10 runs. (The snapshot thread opened
    its files in the program's table: 1 to 3 reopens in 25,000 got
    another number, in 4 runs of 5.)"""
    exe = prog("blockers")
    d = tempfile.mkdtemp(prefix="pc-m34-")
    try:
        calls = shots = 0
        for i in range(10):
            env = clean_env({"PC_SNAPSHOT_INTERVAL": "0.01", "PC_VERBOSE": "1",
                             "PC_OUT": os.path.join(d, "gmon.out")})
            st, o, e = run([exe, "0.3"], d, env)
            m = re.search(r"reopen of 0: (\d+) calls (\d+) wrong", o)
            assert st == 0 and m and m.group(2) == "0", (i, st, o, e[-600:])
            n = re.search(r"(\d+) snapshots?", e)
            assert n and int(n.group(1)) >= 5, (i, e[-600:])
            calls += int(m.group(1))
            shots += int(n.group(1))
        return "10 runs: %d reopens, 0 wrong; %d snapshots" % (calls, shots)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_mem34_wall_clock_under_mlockall_as_nobody():
    """mlockall(MCL_CURRENT | MCL_FUTURE) as uid 65534 under an 8 MiB
    RLIMIT_MEMLOCK, then a malloc with libpc(7)'s wall bound spare, under
    each wall configuration: as plain, the profile names lock_work. Then
    70 threads started after mlockall(MCL_FUTURE) (alone: libpc's
    alternate stacks of small-stack threads would not fit beside
    MCL_CURRENT): as plain, and the threads past the first tables' room
    (58) are not followed, said in the summary. (mlockall failed with
    ENOMEM: the sampler's malloc arena and its tables mapped whole.)"""
    d = tempfile.mkdtemp(prefix="pc-m34-")
    os.chmod(d, 0o777)
    try:
        st, o, _ = plain([prog("mem34_lock"), "need"], d)
        need = int(o.split()[1])
        size = LIMIT_KIB - need - WALL_BOUND_KIB - SLACK_KIB
        assert st == 0 and size >= 256, (st, o)
        argv = [prog("mem34_lock"), str(LIMIT_KIB), "cur+fut", str(size), "0.3"]
        want = plain(briefly(argv), d, as_nobody(LIMIT_KIB))
        assert want[:2] == (0, "mlockall: ok\nmalloc %d KiB: ok\nspun\n" % size), want
        for name, env, opts in WALL_CONFIGS:
            st, o, err, gmon = lock_run(d, name, env, opts, argv, LIMIT_KIB)
            assert (st, o) == want[:2], "%s: exit %s, %r; plain exit %s, %r: %s" % (
                name, st, o, want[0], want[1], err[-600:])
            n = samples(err, name)
            assert "not placed" not in err and "not followed" not in err, (name, err[-600:])
            funcs, total, _ = gprof_flat(prog("mem34_lock"), gmon)
            assert n > 100 and funcs.get("lock_work", 0) > 0.6 * total, \
                "%s: %d samples, %r" % (name, n, funcs)
        argv = [prog("wallmem_lock"), str(LIMIT_KIB), "fut", "70", "0.3"]
        want = plain(briefly(argv), d, as_nobody(LIMIT_KIB))
        assert want[:2] == (0, "mlockall: ok\nthreads 70: ok\nspun\n"), want
        # rounds at 100 Hz whatever the load (the budget, 1 % of a CPU,
        # spaced them out to 4 in a run under a load average of 24)
        st, o, err, gmon = lock_run(d, "wall", {"PC_CLOCK": "wall", "PC_WALL_BUDGET": "50"},
                                    None, argv, LIMIT_KIB)
        assert (st, o) == want[:2], (st, o, err[-600:])
        # the threads libpc saw, and those it did not follow (the summary's
        # look rate, with its thread count, is said only where the budget
        # held the rounds back: at 50 % and cheap looks it is not)
        m = re.search(r"; (\d+) threads; .*; (\d+) threads not followed \(the program "
                      r"locked its memory: mlockall\)", err)
        # 71 threads, the sampler's tables' first room (16 KiB: 58) never more
        followed = int(m.group(1)) - int(m.group(2)) if m else 0
        assert m and 32 <= followed <= 64 and int(m.group(1)) == 71, err[-600:]
        assert samples(err, "wallmem_lock") > 100, err[-600:]
        funcs, total, _ = gprof_flat(prog("wallmem_lock"), gmon)
        assert funcs.get("lock_work", 0) > 0.6 * total, funcs
        return "plain needs %d KiB; malloc %d KiB as plain; 71 threads: %d followed, %s not" % (
            need, size, followed, m.group(2))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_mem34_wall_clock_under_ulimit_v():
    """footprint's malloc of 64 MiB under ulimit -v of plain's peak and
    libpc(7)'s bound for the wall clock, 5 MiB, with and without --stacks:
    as plain (the sampler's arena took 64 MiB, and its tables 18 MiB)."""
    cmd = [prog("footprint"), "malloc", "64", "0.3"]
    need = vm_peak_kib(cmd)
    assert need > 64 * 1024, need
    d = tempfile.mkdtemp(prefix="pc-m34-")
    limit = (need + WALL_BOUND_KIB) * 1024

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        # plain spins 0.01 s: its status and output are compared
        want = plain(cmd[:-1] + ["0.01"], d, limited)
        assert want[:2] == (0, "malloc ok\n"), want
        for opts in (("--clock", "wall"), ("--stacks", "--clock", "wall")):
            what = " ".join(opts)
            out = os.path.join(d, "run" + "".join(opts))
            st, o, e, _ = under_pcprof(out, cmd, *opts, preexec=limited)
            assert (st, o) == want[:2], (what, st, o, e[-800:])
            assert samples(e, what) > 100 and "not followed" not in e, e[-600:]
            funcs, total, _ = gprof_flat(prog("footprint"), os.path.join(out, "gmon.out"))
            assert funcs.get("spin_work", 0) >= 0.2, (what, funcs)
        return "malloc ok under ulimit -v of plain's peak (%d KiB) + %d KiB" % (
            need, WALL_BOUND_KIB)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def peak_run(argv, d, env, timeout=60):
    """argv in a process group of its own, its VmPeak read every 10 ms:
    (status, stderr, the last VmPeak read in KiB)."""
    with tempfile.TemporaryFile(mode="w+", dir=d) as errf:
        p = subprocess.Popen(argv, cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=errf,
                             start_new_session=True)
        peak, t0 = 0, time.monotonic()
        while p.poll() is None:
            if time.monotonic() - t0 > timeout:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                raise AssertionError("%s hung: killed after %d s" % (" ".join(argv), timeout))
            try:
                with open("/proc/%d/status" % p.pid) as f:
                    for line in f:
                        if line.startswith("VmPeak:"):
                            peak = max(peak, int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.01)
        errf.seek(0)
        return p.returncode, errf.read(), peak


def test_mem34_wall_sampler_never_mallocs():
    """200 threads that sleep and end under PC_CLOCK=wall (wallacct: the
    sampler's tables grow, its walks run, starts and ends are told), with
    a malloc watcher preloaded before libpc: no allocation in the
    sampler's thread, whose first one made it glibc's arena of 64 MiB
    (30 of them here before), and the process's VmPeak stays within 32
    MiB of plain's (libpc's alternate stacks of the threads among it; 150
    MiB more before: the arena, 128 MiB while it is made, and the
    tables)."""
    d = tempfile.mkdtemp(prefix="pc-m34-")
    log = os.path.join(d, "mallocs")
    argv = [prog("wallacct"), "sleepers", "200", "0.5", "0"]
    try:
        peak = {}
        for name, env in (("plain", clean_env(profiled=False)),
                          ("wall", clean_env({"PC_CLOCK": "wall", "PC_WALL_BUDGET": "50",
                                              "PC_VERBOSE": "1",
                                              "PC_OUT": os.path.join(d, "w.out"),
                                              "WALLMEM_COUNT_LOG": log}))):
            if name == "wall":
                env["LD_PRELOAD"] = prog("wallmem_count.so") + " " + env["LD_PRELOAD"]
            status, err, peak[name] = peak_run(argv, d, env)
            assert status == 0, (name, status, err[-600:])
        got = open(log).read() if os.path.exists(log) else ""
        assert got == "", "allocations in the sampler's thread: %r" % got[:600]
        # the threads at once: the summary says them where the budget cut
        # the looks (rounds at 100 Hz whatever the load: PC_WALL_BUDGET);
        # where it did not, the sleepers all lived at once, as many as the
        # process had
        m = re.search(r"(?:at (\d+) threads\))?, off-CPU stacks: (\d+) whole", err)
        every = re.search(r"; (\d+) threads; ", err)
        at_once = int(m.group(1) or every.group(1)) if m and every else 0
        # more at once than the tables' first room, 49
        assert at_once > 49 and int(m.group(2)) > 0, err[-800:]
        assert peak["wall"] - peak["plain"] < 32768, peak
        return "no malloc in pc-wall; VmPeak %d KiB, plain %d KiB; %s threads at once, " \
            "%s off-CPU stacks whole" % (peak["wall"], peak["plain"], at_once, m.group(2))
    finally:
        shutil.rmtree(d, ignore_errors=True)
