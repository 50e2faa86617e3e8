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

import pctest
from pctest import clean_env, prog
from test_alloc39 import RATE1, TIMEOUT, both, check_exact, hooks_lib, run, sites
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


# Debian's other allocators: (-l name, the library's soname, its package)
ALLOCATORS = {
    "tcmalloc": ("tcmalloc_minimal", "libtcmalloc_minimal.so.4", "libgoogle-perftools-dev"),
    "mimalloc": ("mimalloc", "libmimalloc.so.2", "libmimalloc-dev"),
}


def allocator(name):
    """(-l name, soname) of an installed allocator, or a skip naming its
    package."""
    lib, so, pkg = ALLOCATORS[name]
    p = subprocess.run(["cc", "-print-file-name=lib%s.so" % lib], capture_output=True,
                       text=True, timeout=TIMEOUT)
    if not os.path.isabs(p.stdout.strip()):
        pctest.skip("%s not installed (apt-get install %s)" % (name, pkg))
    return lib, so


def linked_with(name):
    """alloc39 built here, linked with allocator name."""
    lib, _ = allocator(name)
    d = tempfile.mkdtemp(prefix="pc-alloc39-%s-" % name)
    exe = os.path.join(d, "alloc39" + name)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "alloc39.c")
    subprocess.run(["cc", "-O2", "-g", "-pthread", "-o", exe, src, "-l" + lib],
                   check=True, timeout=TIMEOUT)
    return exe


def check_linked(name):
    """alloc39 linked with allocator name, at rate 1: as plain, that
    allocator owns malloc's blocks under the hooks too, and every known
    site is exact, its threads' too."""
    exe = linked_with(name)
    for argv, times in (([exe], 1), ([exe, "threads"], 4)):
        r = both(argv, RATE1)
        assert "allocator: %s owns malloc's" % name in r.stdout, r.stdout
        check_exact(sites(exe, r)[0], times)


def check_preloaded(name):
    """pcprof run --alloc of alloc39 with allocator name in LD_PRELOAD
    already, at rate 1: the hooks go first (alloc39 hooks names them,
    where plain it names the allocator), the allocator owns malloc's
    blocks, output and status as plain, and every known site is exact."""
    _, so = allocator(name)
    exe = prog("alloc39")
    env = {"LD_PRELOAD": so, "PC_ALLOC_RATE": "1"}
    plain = run([exe, "hooks"], env, profiled=False, hooks=False)
    assert plain.stdout == "malloc: %s\n" % so, (plain.stdout, plain.stderr)
    r = run([pcprof(), "run", "--no-report", "--alloc", "-o", "r", exe, "hooks"], env,
            profiled=False, hooks=False)
    assert (r.status, r.stdout) == (0, "malloc: libpc-alloc.so\n"), (r.status, r.stdout, r.stderr)
    plain = run([exe], env, profiled=False, hooks=False)
    assert "allocator: %s owns malloc's" % name in plain.stdout, plain.stdout
    r = run([pcprof(), "run", "--no-report", "--alloc", "-o", "r", exe], env,
            profiled=False, hooks=False)
    same(r, plain, "pcprof run --alloc %s with %s" % (exe, so))
    check_exact(sites(exe, None, os.path.join(r.cwd, "r", "gmon.out"))[0])


def test_alloc_a_program_linked_with_tcmalloc_is_profiled_through_it():
    check_linked("tcmalloc")


def test_alloc_a_program_linked_with_mimalloc_is_profiled_through_it():
    check_linked("mimalloc")


def test_alloc_tcmalloc_preloaded_is_profiled_through_it():
    check_preloaded("tcmalloc")


def test_alloc_mimalloc_preloaded_is_profiled_through_it():
    check_preloaded("mimalloc")
