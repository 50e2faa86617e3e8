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

Every run has a timeout, after which its process group is killed."""

import os
import re
import resource
import shutil
import subprocess
import tempfile

import pctest
from pctest import clean_env, gprof_flat, prog
from test_footprint import pcprof, plain, run, under_pcprof, vm_peak_kib

NOBODY = 65534
LIMIT_KIB = 8192	# RLIMIT_MEMLOCK: Debian 12's default
BOUND_KIB = 2560	# libpc(7): what libpc maps for a small program, at most
SLACK_KIB = 256		# the program's stdio buffer, malloc's own pages

# (name, environment of the program, options of pcprof run or None).
# Not PC_CLOCK=wall: its thread's malloc arena reserves 64 MiB (libpc(7),
# BUGS), past any RLIMIT_MEMLOCK a user is given.
CONFIGS = (
    ("cpu", {}, None),
    ("stacks", {"PC_STACKS": "1"}, None),
    ("pcprof run", None, ()),
    ("pcprof run --stacks", None, ("--stacks",)),
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
            want = plain(argv, d, as_nobody(LIMIT_KIB))
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
        want = plain(argv, d, as_nobody(LIMIT_KIB))
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
        want = plain(argv, d, as_nobody(LIMIT_KIB))
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
            want = plain(cmd, d, limited)
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
        calls = 0
        for i in range(10):
            out = os.path.join(d, "run%d" % i)
            st, o, e, _ = under_pcprof(out, [exe, "0.3"], "--stacks")
            m = re.search(r"reopen of 0: (\d+) calls (\d+) wrong", o)
            assert st == 0 and m and m.group(2) == "0", (i, st, o, e[-600:])
            assert samples(e, "run %d" % i) > 100, (i, e[-600:])
            calls += int(m.group(1))
            shutil.rmtree(out, ignore_errors=True)
        return "10 runs: %d reopens, 0 wrong" % calls
    finally:
        shutil.rmtree(d, ignore_errors=True)
