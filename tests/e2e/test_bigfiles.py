# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of bounded reads: a file pcprof reads may be huge and
still not what it should be, and pcprof finds that out from its beginning
(tools/inputs/files.c reads libpc's files no further than they show themselves to
be of their format; jitmap.c reads a perf map a chunk at a time; libelf
maps ELF files). Each input kind is replaced by a sparse file of 1 GiB,
all zeros or a valid beginning and then zeros, and pcprof report must
answer within WALL seconds and PEAK_MIB of memory, measured for that one
process with wait4: one line naming the file and what is wrong, and exit
status 2, where the file is an input; a note, or nothing, and the report,
where it is a helper (a perf map, a debug file)."""

import os
import shutil
import subprocess
import sys
import tempfile

from pctest import BUILD, clean_env, prog, run

GIB = 1 << 30
WALL = 2.0          # seconds: reading 1 GiB took 7 s here, 13 s on a busy machine
PEAK_MIB = 100      # reading 1 GiB took 1 GiB; a perf map, 256 MiB


# The run is measured by a small Python of its own, which forks and execs
# pcprof: a process's peak resident size counts the memory of what it was
# forked from until its exec (Linux keeps the larger), and this test's
# worker may by then have grown past the bound by other tests' data.
MEASURE = """
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_maxrss, time.monotonic() - t0)
"""


def bounded(args, cwd):
    """pcprof args in cwd: its exit status, standard error, wall seconds
    and peak resident memory in MiB, of that process alone."""
    p = subprocess.run([sys.executable, "-c", MEASURE,
                        os.path.join(os.path.abspath(BUILD), "pcprof")] + list(args),
                       cwd=cwd, capture_output=True, env=clean_env(profiled=False))
    assert p.returncode == 0, p.stderr
    code, kib, wall = p.stdout.split()
    return int(code), p.stderr.decode(), float(wall), int(kib) / 1024


def sparse(path, head=b""):
    """path as head, then zeros to 1 GiB, the zeros a hole."""
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "wb") as f:
        f.write(head)
    os.truncate(path, GIB)


def check(args, cwd, status, words, what):
    """One run within the bounds, its status, and where it is 2 one line
    holding every one of words; returns its figures for the note."""
    code, err, wall, mib = bounded(args, cwd)
    lines = err.strip().splitlines()
    assert wall < WALL and mib < PEAK_MIB, (what, "%.2f s, %.0f MiB" % (wall, mib), err)
    assert code == status, (what, code, err)
    if words:
        assert len(lines) == 1 and all(w in lines[0] for w in words), (what, err)
    return "%s %.2f s %.0f MiB" % (what, wall, mib)


def test_huge_files_of_each_kind_are_refused_from_their_beginning():
    """A gmon.out, its stacks, its manifest, an object's profile that the
    manifest lists, and the executable, each a 1 GiB file of zeros; and
    a gmon.out, stacks file and manifest whose beginning is valid (the
    header, the first line), then zeros: each refused in one line that
    names it and says what is wrong, in a fraction of a second."""
    d = tempfile.mkdtemp(prefix="pc-e2e-big-")
    exe = os.path.join(d, "three-pie")
    shutil.copy(prog("three-pie"), exe)
    r = run([exe, "0.2"], cwd=d, env={"PC_SCOPE": "all", "PC_STACKS": "1"}, verbose=False)
    assert r.status == 0, r.stderr
    files = sorted(os.listdir(d))
    obj = [f for f in files if f.startswith("gmon.out+")]
    assert "gmon.out.objects" in files and "gmon.out.stacks" in files and obj, files
    # the files as they were, times included: pcprof compares them
    os.mkdir(os.path.join(d, "keep"))
    for f in ["gmon.out", "gmon.out.objects", "gmon.out.stacks"] + obj:
        shutil.copy2(os.path.join(d, f), os.path.join(d, "keep", f))
    keep = {f: open(os.path.join(d, "keep", f), "rb").read() for f in os.listdir(
        os.path.join(d, "keep"))}
    notes = []

    def case(name, head, args, words, what):
        sparse(os.path.join(d, name), head)
        notes.append(check(args, d, 2, [name] + words, what))
        shutil.copy2(os.path.join(d, "keep", name), os.path.join(d, name))

    case("gmon.out", b"", ["report", exe, "gmon.out"], ["bad magic"], "gmon")
    case("gmon.out", keep["gmon.out"][:20], ["report", exe, "gmon.out"],
         ["empty histogram range at byte 20"], "gmon header")
    case("gmon.out.stacks", b"", ["report", "--format", "folded", exe, "gmon.out"],
         ["bad magic"], "stacks")
    case("gmon.out.stacks", keep["gmon.out.stacks"][:32], ["report", "--by-thread", exe,
                                                            "gmon.out"],
         ["stack of depth 0 at byte 32"], "stacks header")
    case("gmon.out.objects", b"", ["report", "gmon.out"],
         ["not a pcprof objects manifest at line 1"],
         "manifest")
    first = keep["gmon.out.objects"].split(b"\n", 1)[0] + b"\n"
    case("gmon.out.objects", first, ["report", exe, "gmon.out"], ["NUL byte at line 2"],
         "manifest line 1")
    case(obj[0], b"", ["report", exe, "gmon.out"], ["bad magic"], "object's gmon")
    # without a manifest, where an executable that is no ELF file is an
    # error, not a warning
    os.unlink(os.path.join(d, "gmon.out.objects"))
    sparse(os.path.join(d, "big-exe"))
    notes.append(check(["report", "big-exe", "gmon.out"], d, 2, ["big-exe", "not an ELF file"],
                       "executable"))
    return "; ".join(notes)


def test_a_huge_debug_file_and_perf_map_are_passed_over():
    """A 1 GiB debug file of zeros where a stripped program's debuglink
    points (read for symbols and for --lines) is passed over: the report
    names functions from the unwind tables. A 1 GiB perf map of zeros is
    no perf map: one note, and the JIT code is [anonymous code]. Both
    within the same bounds."""
    d = tempfile.mkdtemp(prefix="pc-e2e-big-")
    exe = prog("three-pie")
    r = run([exe, "0.2"], cwd=d, verbose=False)
    dbg = os.path.join(d, "three.debug")
    stripped = os.path.join(d, "three")
    subprocess.run(["objcopy", "--only-keep-debug", exe, dbg], check=True)
    subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=" + dbg, exe, stripped],
                   check=True)
    sparse(dbg)
    notes = [check(["report", stripped, r.path()], d, 0, None, "debug file"),
             check(["report", "--lines", stripped, r.path()], d, 0, None,
                   "debug file, --lines")]
    jit = prog("jit")
    r = run([jit, "0.3", "map"], env={"PC_SCOPE": "all"}, verbose=False)
    assert r.status == 0, r.stderr
    pid = int(open(r.path("gmon.out.objects")).read().split("\npid ")[1].split()[0])
    mp = "/tmp/perf-%d.map" % pid
    try:
        sparse(mp)
        os.chmod(mp, 0o644)
        notes.append(check(["report", jit, r.path()], r.cwd, 0,
                           [mp, "not a perf map (a NUL byte)"], "perf map"))
    finally:
        if os.path.lexists(mp):
            os.unlink(mp)
    return "; ".join(notes)
