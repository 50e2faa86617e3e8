# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the commands on what `pcprof run` left: a run
directory in place of EXE and its profiles (report's every view, flame,
annotate, the exporters, diff, merge), options after the operands, EXE by
the name the run recorded, --process by name with the names listed, and
the short usage of a bare `pcprof report`."""

import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, clean_env, default_signals, gprof_flat, need, prog, read_gmon

# the cxx run and the shell's two-cxx run serve the tests that read
# them: one worker, in file order (each test writes only its own files,
# outside the run)
SHARED = True
_runs = {}


def pcprof(*args, cwd=None, env=None):
    return subprocess.run([os.path.join(os.path.abspath(BUILD), "pcprof")] + list(args),
                          cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=clean_env(env, profiled=False), preexec_fn=default_signals)


def ok(*args, **kw):
    p = pcprof(*args, **kw)
    assert p.returncode == 0, "pcprof %s: status %d: %s" % (" ".join(args), p.returncode,
                                                            p.stderr)
    return p


def run_dir(key, argv):
    """pcprof run -o DIR --stacks -- argv, once for this module: DIR."""
    if key not in _runs:
        d = os.path.join(tempfile.mkdtemp(prefix="pc-rundir-"), "run")
        ok("run", "-o", d, "--stacks", "--", *argv)
        _runs[key] = d
    return _runs[key]


def cxx_run():
    return run_dir("cxx", [prog("cxx")])


def two_cxx_run():
    """A shell that runs cxx twice: two processes of one program, one of
    another (the shell)."""
    return run_dir("two", ["sh", "-c", '"$0" >/dev/null; "$0" >/dev/null', prog("cxx")])


def folded(text):
    """{stack: samples} of collapsed stacks."""
    out = {}
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(n)
    return out


def test_rundir_commands_need_no_exe():
    d, exe = cxx_run(), prog("cxx")
    out = tempfile.mkdtemp(prefix="pc-rundir-out-")
    for view in (["--callgraph"], ["--lines"], ["--format", "folded"]):
        a = ok("report", *view, d).stdout
        b = ok("report", *view, exe, d).stdout
        assert a == b, "%s: DIR and EXE DIR differ:\n%s\n--\n%s" % (view, a, b)
        assert exe in a or view[0] == "--format", a[:300]
    stacks = folded(ok("report", "--format", "folded", d).stdout)
    assert sum(stacks.values()) > 300 and any(";" in s for s in stacks), stacks
    # flame: the same graph, its title the program's path
    ok("flame", "-o", os.path.join(out, "a.svg"), d)
    ok("flame", "-o", os.path.join(out, "b.svg"), exe, d)
    a, b = (open(os.path.join(out, n)).read() for n in ("a.svg", "b.svg"))
    assert a == b and exe in a and "shapes::Circle::area" in a
    # annotate the hottest function
    hot = json.loads(ok("report", "--format", "json", exe, d).stdout)
    fn = hot["functions"][0]["name"]
    a = ok("annotate", d, fn).stdout
    assert a == ok("annotate", exe, d, fn).stdout and a.startswith(fn), a[:300]
    # the exporters: the same profile, only the title (the run, or EXE) differs
    for fmt in ("pprof", "speedscope", "callgrind"):
        pa, pb = os.path.join(out, "a." + fmt), os.path.join(out, "b." + fmt)
        ok("report", "--format", fmt, "-o", pa, d)
        ok("report", "--format", fmt, "-o", pb, exe, d)
        a, b = open(pa, "rb").read(), open(pb, "rb").read()
        if fmt == "speedscope":
            a, b = json.loads(a), json.loads(b)
            del a["name"], b["name"]
        elif fmt == "callgrind":
            a, b = (re.sub(rb"(?m)^cmd: .*$", b"", x) for x in (a, b))
        assert a == b and len(open(pa, "rb").read()) > 200, fmt


def test_rundir_diff_of_two_runs():
    d, exe = cxx_run(), prog("cxx")
    p = pcprof("diff", "--base", d, "--new", d)
    assert p.returncode == 0, p.stderr
    assert "base  %s: 1 run" % exe in p.stdout and "new   %s: 1 run" % exe in p.stdout, \
        p.stdout
    assert p.stdout == ok("diff", "--base", exe, d, "--new", exe, d).stdout


def test_rundir_exe_by_its_recorded_name():
    d, exe = cxx_run(), prog("cxx")
    a = ok("report", "--callgraph", "cxx", d).stdout
    assert a == ok("report", "--callgraph", exe, d).stdout
    assert a.startswith("Flat profile of %s " % exe), a[:200]
    # and a name on PATH: the path is what the report names
    bindir = tempfile.mkdtemp(prefix="pc-rundir-bin-")
    os.symlink(exe, os.path.join(bindir, "cxxprog"))
    env = {"PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    p = ok("report", "--format", "folded", "cxxprog", d, env=env)
    assert p.stdout == ok("report", "--format", "folded", d).stdout


def test_rundir_options_after_operands():
    d = cxx_run()
    a = ok("report", d, "--top", "2").stdout
    assert a == ok("report", "--top", "2", d).stdout
    assert "(2 more functions)" in a or "more function" in a, a
    out = tempfile.mkdtemp(prefix="pc-rundir-out-")
    ok("flame", d, "-o", os.path.join(out, "f.svg"))
    assert os.path.getsize(os.path.join(out, "f.svg")) > 1000
    ok("merge", d, "-o", os.path.join(out, "m"))
    # "--" ends the options: what follows is an operand
    p = pcprof("report", d, "--", "--top")
    assert p.returncode == 2 and "'--top'" in p.stderr, p.stderr


def test_rundir_profile_files_among_operands():
    """A glob of a run's files takes in PROFILE+libc.so.6, PROFILE.objects
    and PROFILE.stacks: each stands for its profile."""
    d = two_cxx_run()
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("gmon.out.cxx."))
    assert any("+" in f for f in files) and any(f.endswith(".stacks") for f in files), files
    out = tempfile.mkdtemp(prefix="pc-rundir-out-")
    ok("flame", "-o", os.path.join(out, "glob.svg"), *files)
    ok("flame", "-o", os.path.join(out, "dir.svg"), "--process", "cxx", d)
    assert open(os.path.join(out, "glob.svg")).read() == \
        open(os.path.join(out, "dir.svg")).read()


def test_rundir_process_by_name_and_the_names_listed():
    d, exe = two_cxx_run(), prog("cxx")
    shell = os.path.basename(os.path.realpath(shutil.which("sh")))
    # two programs: the command names them rather than guess
    p = pcprof("report", "--format", "folded", d)
    assert p.returncode == 2 and "cxx (2)" in p.stderr and shell in p.stderr, p.stderr
    # --process NAME merges that program's processes
    both = folded(ok("report", "--format", "folded", "--process", "cxx", d).stdout)
    each = [folded(ok("report", "--format", "folded", exe, os.path.join(d, f)).stdout)
            for f in sorted(os.listdir(d)) if re.fullmatch(r"gmon\.out\.cxx\.\d+", f)]
    assert len(each) == 2
    assert sum(both.values()) == sum(sum(e.values()) for e in each) > 600
    # by the name as run (sh), which the run recorded as its file (dash)
    if shell != "sh":
        ok("report", "--process", "sh", d)
    # an unknown name: the names there are
    p = pcprof("report", "--process", "objdump", d)
    assert p.returncode == 2 and "no process objdump" in p.stderr and \
        "cxx (2)" in p.stderr and shell in p.stderr, p.stderr
    p = pcprof("flame", "-o", "/dev/null", "--process", "nosuch", d)
    assert p.returncode == 2 and "cxx (2)" in p.stderr, p.stderr


def test_rundir_merge_is_what_gprof_reads():
    need("gprof")
    d, exe = two_cxx_run(), prog("cxx")
    out = os.path.join(tempfile.mkdtemp(prefix="pc-rundir-out-"), "merged")
    ok("merge", "-o", out, d)
    names = sorted(os.listdir(out))
    assert "gmon.out.cxx" in names, names
    profiles = [os.path.join(d, f) for f in sorted(os.listdir(d))
                if re.fullmatch(r"gmon\.out\.cxx\.\d+", f)]
    sums = lambda g: sum(sum(h[5]) for h in g["hists"])
    counts = sum(sums(read_gmon(f)) for f in profiles)
    main = read_gmon(os.path.join(out, "gmon.out.cxx"))
    assert sums(main) == counts > 600, (sums(main), counts)
    # gprof reads it whole (it refuses two libpc files given together:
    # "overlapping histogram records"); its seconds are of two decimals
    funcs, total, _ = gprof_flat(exe, os.path.join(out, "gmon.out.cxx"))
    rate = main["hists"][0][3]
    assert abs(total - counts / rate) <= 0.005 * len(funcs) + 1e-9, (total, counts / rate)
    # each object's file of the processes, summed too (gprof OBJECT FILE):
    # every histogram bin the sum of the processes' (counts past 65535
    # carried in more records, which a reader adds up)
    objs = [n for n in names if n.startswith("gmon.out.cxx+")]
    assert objs, names
    for n in objs:
        parts = [read_gmon(p + "+" + n.split("+", 1)[1]) for p in profiles
                 if os.path.exists(p + "+" + n.split("+", 1)[1])]
        assert sums(read_gmon(os.path.join(out, n))) == sum(sums(g) for g in parts), n


def test_rundir_bare_report_gives_a_short_usage():
    p = pcprof("report")
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert 2 <= len(lines) <= 6 and "pcprof report --help" in lines[-1], p.stderr
    full = ok("report", "--help").stdout
    assert len(full.splitlines()) > 30
