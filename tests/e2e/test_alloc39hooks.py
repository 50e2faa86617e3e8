# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of libpc-alloc.so, the malloc hooks that pcprof run
--alloc preloads beside libpc.so: a program profiled without allocations
calls glibc's malloc itself (alloc39 hooks says which object defines the
malloc its calls reach); PC_ALLOC with libpc.so alone says in one line
that the hooks are missing; the hooks without libpc.so only forward.

Every program runs plain and preloaded, in the style of test_host.py:
same stdout, same status, a bound on the time."""

import os
import subprocess
import tempfile

from pctest import clean_env, prog
from test_alloc39 import RATE1, TIMEOUT, both, hooks_lib, run
from test_host import pcprof, same


def test_alloc_hooks_only_where_allocations_are_asked_for():
    """Under libpc.so without PC_ALLOC the program's malloc is glibc's, as
    plain; with PC_ALLOC=1 (libpc-alloc.so preloaded, as run --alloc
    does) it is the hooks'."""
    exe = prog("alloc39")
    r = both([exe, "hooks"], None)
    assert r.stdout == "malloc: libc.so.6\n", r.stdout
    r = run([exe, "hooks"], {"PC_ALLOC": "1"})
    assert (r.status, r.stdout) == (0, "malloc: libpc-alloc.so\n"), (r.status, r.stdout)
    assert "libpc:" not in r.stderr, r.stderr


def test_alloc_pcprof_run_preloads_the_hooks_with_alloc_only():
    """pcprof run --alloc preloads libpc-alloc.so; pcprof run without it
    does not."""
    exe = prog("alloc39")
    d = tempfile.mkdtemp(prefix="pc-alloc39-hooks-")
    for args, want in ((["--alloc"], "libpc-alloc.so"), ([], "libc.so.6")):
        p = subprocess.run([pcprof(), "run", "--no-report"] + args +
                           ["-o", os.path.join(d, want), exe, "hooks"],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env=clean_env(None, False))
        assert (p.returncode, p.stdout) == (0, "malloc: %s\n" % want), \
            (args, p.returncode, p.stdout, p.stderr)


def test_alloc_pc_alloc_without_the_hooks_says_so_in_one_line():
    """PC_ALLOC=1 with libpc.so alone in LD_PRELOAD: the program as plain,
    its CPU profile written, no allocation profile, and one libpc line
    that names libpc-alloc.so."""
    exe = prog("alloc39")
    plain = run([exe], None, profiled=False)
    p = run([exe], RATE1, hooks=False)
    same(p, plain, exe)
    lines = [l for l in p.stderr.splitlines() if l.startswith("libpc:")]
    assert len(lines) == 1 and "libpc-alloc.so" in lines[0], p.stderr
    assert sorted(os.listdir(p.cwd)) == ["gmon.out"], os.listdir(p.cwd)


def test_alloc_hooks_without_libpc_only_forward():
    """libpc-alloc.so preloaded alone, with PC_ALLOC=1 at rate 1: output
    and status as plain (threads and all), nothing on standard error, no
    file written."""
    exe = prog("alloc39")
    for argv in ([exe], [exe, "threads"], [prog("alloc39stress")]):
        plain = run(argv, None, profiled=False)
        p = run(argv, dict(RATE1, LD_PRELOAD=hooks_lib()), profiled=False, hooks=False)
        same(p, plain, " ".join(argv))
        assert p.stderr == "" and os.listdir(p.cwd) == [], (p.stderr, os.listdir(p.cwd))
