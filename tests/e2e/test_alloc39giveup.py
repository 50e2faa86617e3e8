# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of libpc-alloc.so where libpc.so records no
allocations: a program built with AddressSanitizer, whose runtime comes
first in the search order, so that its malloc is libasan's and the hooks
never see a call (one libpc line says so); and libpc.so giving up at
start-up (PC_RECOVER, a seccomp filter inherited across exec) with the
companion preloaded, whose hooks then forward on their fast path.

Every program runs plain and preloaded, in the style of test_host.py:
same stdout, same status, a bound on the time."""

import os
import subprocess
import tempfile

import pctest
from pctest import prog
from test_alloc39 import TIMEOUT, run, sites
from test_host import pcprof, same

# LeakSanitizer's scan at exit needs ptrace, which a container may refuse;
# alloc39 leaks on purpose, so the scan is off in both runs
ASAN = {"ASAN_OPTIONS": "detect_leaks=0"}


def asan_build():
    """alloc39 built here with -fsanitize=address, or a skip."""
    d = tempfile.mkdtemp(prefix="pc-alloc39-asan-")
    exe = os.path.join(d, "alloc39asan")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "alloc39.c")
    p = subprocess.run(["cc", "-O1", "-g", "-pthread", "-fsanitize=address", "-o", exe, src],
                       capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode:
        pctest.skip("cc -fsanitize=address failed (gcc's libasan): %s" % p.stderr[-200:])
    return exe


def libpc_lines(r):
    return [l for l in r.stderr.splitlines() if l.startswith("libpc:")]


def test_alloc_an_asan_program_is_told_in_one_line_why_not():
    """pcprof run --alloc of alloc39 built with AddressSanitizer: pcprof
    puts libasan first, as ASan demands, so the program's malloc is
    libasan's (alloc39 hooks names it); output and status as plain, and
    one libpc line that names libasan and says allocations are not
    profiled; the allocation profile is there, empty."""
    exe = asan_build()
    plain = run([exe, "hooks"], ASAN, profiled=False, hooks=False)
    assert plain.stdout.startswith("malloc: libasan.so"), (plain.stdout, plain.stderr)
    r = run([pcprof(), "run", "--no-report", "--alloc", "-o", "r", exe, "hooks"], ASAN,
            profiled=False, hooks=False)
    same(r, plain, "pcprof run --alloc %s hooks" % exe)
    plain = run([exe], ASAN, profiled=False, hooks=False)
    assert plain.status == 3 and "alloc39 done" in plain.stdout, (plain.status, plain.stderr)
    r = run([pcprof(), "run", "--no-report", "--alloc", "-o", "r", exe], ASAN,
            profiled=False, hooks=False)
    same(r, plain, "pcprof run --alloc %s" % exe)
    lines = libpc_lines(r)
    assert len(lines) == 1, r.stderr
    assert "libasan.so" in lines[0] and "AddressSanitizer" in lines[0] and \
        "allocations are not profiled" in lines[0], lines[0]
    s, j = sites(exe, None, os.path.join(r.cwd, "r", "gmon.out"))
    assert s == {}, sorted(s)


def test_asan_program_stderr_is_its_own_under_pcprof_run():
    """An AddressSanitizer program under pcprof run, with and without
    --alloc: its stderr is plain's but for libpc's own lines. libpc's
    writer switches to a stack of its own with swapcontext, and ASan's
    interposed swapcontext printed "ASan doesn't fully support
    makecontext/swapcontext" on the program's stderr at its end."""
    exe = asan_build()
    plain = run([exe], ASAN, profiled=False, hooks=False)
    assert plain.status == 3, (plain.status, plain.stderr)

    def theirs(err):
        return [l for l in err.splitlines() if not l.startswith("libpc:")]
    for flags in ((), ("--alloc",)):
        r = run([pcprof(), "run", "--no-report", *flags, "-o", "r", exe], ASAN,
                profiled=False, hooks=False)
        same(r, plain, "pcprof run %s %s" % (" ".join(flags), exe))
        assert theirs(r.stderr) == theirs(plain.stderr), (flags, r.stderr, plain.stderr)
        assert os.path.exists(os.path.join(r.cwd, "r", "gmon.out")), os.listdir(r.cwd)
    return "stderr as plain's, with and without --alloc"


def test_alloc_a_program_without_asan_gets_no_such_line():
    """The same check on alloc39 as built: its malloc is the hooks', and
    libpc says nothing."""
    exe = prog("alloc39")
    r = run([pcprof(), "run", "--no-report", "--alloc", "-o", "r", exe, "hooks"], None,
            profiled=False, hooks=False)
    assert (r.status, r.stdout) == (0, "malloc: libpc-alloc.so\n"), (r.status, r.stdout)
    assert libpc_lines(r) == [], r.stderr


def test_alloc_hooks_after_libpc_gives_up_keep_output_and_status():
    """PC_ALLOC=1 with the companion preloaded and libpc giving up at
    start-up (PC_RECOVER set: libpc is there to finish a live file): the
    program's output and status as plain, threads and all, nothing said,
    nothing written; the hooks forward (libpc said it will not record)."""
    exe = prog("alloc39")
    for argv in ([exe], [exe, "threads"], [prog("alloc39stress")]):
        plain = run(argv, None, profiled=False)
        r = run(argv, {"PC_ALLOC": "1", "PC_RECOVER": "1"})
        same(r, plain, " ".join(argv))
        assert libpc_lines(r) == [] and os.listdir(r.cwd) == [], (r.stderr, os.listdir(r.cwd))


def test_alloc_hooks_under_an_inherited_seccomp_filter_keep_output_and_status():
    """tests/progs/sandbox exec: a filter that kills on timer_create, then
    exec of alloc39, which loads libpc and the companion under it: libpc
    stays off, and alloc39 prints and exits as plain."""
    argv = [prog("sandbox"), "exec", prog("alloc39")]
    plain = run(argv, None, profiled=False)
    assert plain.status == 3 and "alloc39 done" in plain.stdout, (plain.status, plain.stderr)
    r = run(argv, {"PC_ALLOC": "1"})
    same(r, plain, " ".join(argv))
    assert libpc_lines(r) == [], r.stderr
