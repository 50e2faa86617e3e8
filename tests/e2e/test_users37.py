# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of what a new user found, each with real programs
(tests/progs/users37.c, users37_omp.c) run plain and under `pcprof run`:
one program run through hard links of itself (as git runs its
subcommands) beside another program of the same file name, for merge and
--process; gcc's OpenMP regions kept apart; the run report's one JSON
shape; CSV's rest row; recursion kept in folded stacks and the flame
graph; `pcprof report DIR` of a --main-only run; and a process that the
command leaves in the background before it loads libpc.so, named when
the command ends and waited for with --wait."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from pctest import BUILD, clean_env, default_signals, gprof_flat, prog, tolerance

TIMEOUT = 60
HERE = os.path.dirname(os.path.abspath(__file__))
# links_run's run (two builds, a hard link, a plain run and pcprof run)
# serves the four tests that read it: one worker, in file order (each
# writes its own files beside the run: m, f.svg, cg)
SHARED = True
_runs = {}


def pcprof(*args, cwd=None, env=None):
    return subprocess.run([os.path.join(os.path.abspath(BUILD), "pcprof")] + list(args),
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          env=clean_env(env, profiled=False), preexec_fn=default_signals)


def ok(*args, **kw):
    p = pcprof(*args, **kw)
    assert p.returncode == 0, "pcprof %s: status %d: %s" % (" ".join(args), p.returncode,
                                                            p.stderr[-2000:])
    return p


def plain(argv, cwd, env=None):
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          env=clean_env(env, profiled=False), preexec_fn=default_signals)


SCRIPT = "a/users37 burn 0.25; b/users37 burn 0.25; c/users37 recurse 0.15"


def links_run():
    """a/users37 and its hard link b/users37, and c/users37, another
    program (users37 built again, as another build: another build-id),
    each run once by one shell under pcprof run --stacks: (cwd, run dir,
    the run's JSON report)."""
    if "links" not in _runs:
        d = tempfile.mkdtemp(prefix="pc-users37-")
        for sub in ("a", "b", "c"):
            os.mkdir(os.path.join(d, sub))
        shutil.copy(prog("users37"), os.path.join(d, "a", "users37"))
        os.link(os.path.join(d, "a", "users37"), os.path.join(d, "b", "users37"))
        # another program of the same name: the same code, another build-id
        subprocess.run(["cc", "-O1", "-g", "-Wl,--build-id=sha1",
                        "-o", os.path.join(d, "c", "users37"),
                        os.path.join(HERE, "..", "progs", "users37.c")],
                       check=True, timeout=TIMEOUT)
        want = plain(["sh", "-c", SCRIPT], d)
        assert want.returncode == 0 and want.stdout == "done\n" * 3, want
        got = ok("run", "--stacks", "--format", "json", "--report", "r.json", "-o", "r",
                 "--", "sh", "-c", SCRIPT, cwd=d)
        assert got.stdout == want.stdout, got.stdout
        with open(os.path.join(d, "r.json")) as f:
            _runs["links"] = (d, os.path.join(d, "r"), json.load(f))
    return _runs["links"]


def pids_of(report, path):
    return sorted(p["pid"] for p in report["processes"] if p["path"] == path)


def test_users37_merge_keeps_every_process_of_a_hard_linked_program():
    d, r, rep = links_run()
    a, b, c = (os.path.join(d, s, "users37") for s in "abc")
    samples = {p["pid"]: p["samples"] for p in rep["processes"]}

    def own(exe, pid):     # one process's samples in exe (not the vDSO, no file)
        profile = [p["profile"] for p in rep["processes"] if p["pid"] == pid][0]
        objects = json.loads(ok("report", "--format", "json", exe, profile,
                                cwd=d).stdout)["objects"]
        return sum(o["self_samples"] for o in objects if o["name"] == "users37")

    ab = sum(own(a, p) for p in pids_of(rep, a) + pids_of(rep, b))
    assert ab >= 0.95 * sum(samples[p] for p in pids_of(rep, a) + pids_of(rep, b))
    m = os.path.join(d, "m")
    out = ok("merge", "-o", m, r, cwd=d).stdout
    lines = out.splitlines()
    assert len(lines) == len(set(l.split(":")[0] for l in lines)), \
        "a file written twice:\n" + out
    assert "m/gmon.out.users37: 2 profiles" in out, out
    assert "m/gmon.out.users37-2: 1 profile of %s" % c in out, out
    # every sample of a and b in one file, c's in the other, for gprof too
    one = json.loads(ok("report", "--format", "json", a,
                        os.path.join(m, "gmon.out.users37")).stdout)
    two = json.loads(ok("report", "--format", "json", c,
                        os.path.join(m, "gmon.out.users37-2")).stdout)
    assert one["total_samples"] == ab, (one["total_samples"], ab, samples)
    assert two["total_samples"] == own(c, pids_of(rep, c)[0])
    g, total, _ = gprof_flat(a, os.path.join(m, "gmon.out.users37"))
    assert abs(g.get("burn_work", 0) - one["total_seconds"]) <= 0.02 + 0.02 * total, g
    return "a+b: %d samples in gmon.out.users37 (gprof burn_work %.2f s); c: %d in -2" % (
        ab, g.get("burn_work", 0), two["total_samples"])


def test_users37_process_names_one_program_or_lists_them_by_path_and_pid():
    d, r, rep = links_run()
    a, b, c = (os.path.join(d, s, "users37") for s in "abc")
    # a path names the program, its hard link's processes too
    for view in (["report", "--lines"], ["report", "--format", "folded"],
                 ["annotate", "--asm"], ["flame", "-o", os.path.join(d, "f.svg")]):
        args = view + ["--process", "a/users37", r] + \
            (["burn_work"] if view[0] == "annotate" else [])
        p = ok(*args, cwd=d)
        if view[0] == "report" and "folded" not in view:
            assert p.stdout.startswith("Lines of %s" % a), p.stdout[:300]
    svg = open(os.path.join(d, "f.svg")).read()
    assert "burn_work" in svg and "rec_work" not in svg
    # a name of two programs: each by its path and pids
    p = pcprof("report", "--lines", "--process", "users37", r, cwd=d)
    assert p.returncode == 2, p
    ab = ", ".join(str(x) for x in sorted(pids_of(rep, a) + pids_of(rep, b)))
    want = "%s (pid %s); %s (pid %d)" % (a, ab, c, pids_of(rep, c)[0])
    assert "--process users37 is several programs" in p.stderr and want in p.stderr, \
        (want, p.stderr)
    return p.stderr.strip()


def test_users37_run_json_keeps_its_shape_with_callgraph_and_lines():
    d, r, _ = links_run()
    pids = None
    for extra in ([], ["--callgraph"], ["--lines"]):
        rep = json.loads(ok("report", "--format", "json", "--process", "a/users37",
                            *extra, r, cwd=d).stdout)
        assert sorted(rep) == ["cpu_seconds", "not_sampled", "processes", "profile"], \
            (extra, sorted(rep))
        got = sorted(p["pid"] for p in rep["processes"])
        assert pids is None or got == pids, (extra, got, pids)
        pids = got
        if extra == ["--callgraph"]:
            assert any(x["callee"] == "burn_work" for x in rep["profile"]["arcs"])
        if extra == ["--lines"]:
            assert rep["profile"]["lines"][0]["function"] == "burn_work"
    assert len(pids) == 2
    # pcprof run --callgraph: the same shape, its one program
    j = os.path.join(d, "cg.json")
    ok("run", "--callgraph", "--format", "json", "--report", j, "-o", "cg", "--",
       "a/users37", "burn", "0.1", cwd=d)
    with open(j) as f:
        rep = json.load(f)
    assert len(rep["processes"]) == 1 and rep["profile"]["arcs"], rep.keys()
    return "processes %s, profile with arcs and lines" % pids


def test_users37_csv_top_ends_with_the_rest():
    d, r, rep = links_run()
    rows = ok("report", "--format", "csv", "--top", "1", r, cwd=d).stdout.splitlines()
    assert rows[0].startswith("object,function,"), rows
    assert len(rows) == 3, rows
    m = re.match(r"^,\((\d+) more functions?\),([\d.]+),(\d+),([\d.]+),([\d.]+)$", rows[2])
    assert m, rows
    first = rows[1].split(",")
    total = rep["profile"]["total_samples"]
    assert int(first[3]) + int(m.group(3)) == total, (rows, total)
    assert abs(float(m.group(5)) - 1) < 1e-5, rows
    return rows[2]


def levels(stack):
    """The longest run of rec_work frames, one after another."""
    return max((len(x.split(";")) for x in re.findall(r"rec_work(?:;rec_work)*", stack)),
               default=0)


def test_users37_folded_and_flame_keep_every_level_of_recursion():
    d, r, rep = links_run()
    c = os.path.join(d, "c", "users37")
    text = ok("report", "--format", "folded", "--process", "c/users37", r, cwd=d).stdout
    stacks = {}
    for line in text.splitlines():
        s, n = line.rsplit(" ", 1)
        stacks[s] = stacks.get(s, 0) + int(n)
    # of the samples in rec_work (start-up's, in ld.so and libc, grow with
    # the machine's load and are no recursion)
    total = sum(n for s, n in stacks.items() if "rec_work" in s)
    deep = sum(n for s, n in stacks.items() if "rec_work" in s and levels(s) == 6)
    # rec_work calls itself 5 deep: 6 frames, the work at the bottom
    assert total >= 50 and deep >= 0.9 * total, sorted(stacks.items(), key=lambda kv: -kv[1])[:5]
    assert any(s.endswith("main;rec_work;rec_work;rec_work;rec_work;rec_work;rec_work")
               for s in stacks), list(stacks)[:5]
    # speedscope too (pprof keeps each frame as its own location)
    sp = os.path.join(d, "rec.speedscope.json")
    ok("report", "--format", "speedscope", "-o", sp, "--process", c, r, cwd=d)
    with open(sp) as f:
        doc = json.load(f)
    names = [x["name"] for x in doc["shared"]["frames"]]
    deepest = max(levels(";".join(names[i] for i in smp))
                  for prof in doc["profiles"] for smp in prof["samples"])
    assert deepest == 6, (deepest, names)
    svg = os.path.join(d, "rec.svg")
    ok("flame", "-o", svg, "--process", c, r, cwd=d)
    ET.parse(svg)       # well-formed
    depth = {int(x) for x in re.findall(r'fg:l="(\d+)"><title>rec_work \(', open(svg).read())}
    assert len(depth) >= 6, (depth, text[:2000])
    return "%d of %d samples 6 rec_work frames deep; flame levels %s" % (
        deep, total, sorted(depth))


def test_users37_omp_regions_are_two_functions():
    exe = prog("users37_omp")
    env = {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive"}
    d = tempfile.mkdtemp(prefix="pc-users37-omp-")
    want = plain([exe, "0.5"], d, env)
    assert want.returncode == 0 and want.stdout.startswith("truth: "), want
    # libpc's line gives the signals: at 1000 Hz on CPU-time POSIX timers
    # held to the 250 Hz tick a signal carries some 4 samples, and the
    # signals are the independent observations
    got = pcprof("run", "--format", "json", "--report", "r.json", "-o", "r", "--",
                 exe, "0.5", cwd=d, env=dict(env, PC_VERBOSE="1"))
    assert got.returncode == 0, got.stderr
    signals = re.search(r"(\d+) samples \((\d+) signals\)", got.stderr)
    assert signals, got.stderr
    truth = json.loads(got.stdout.split("truth: ", 1)[1])
    assert sorted(truth) == sorted(json.loads(want.stdout.split("truth: ", 1)[1]))
    with open(os.path.join(d, "r.json")) as f:
        rep = json.load(f)
    funcs = {f["name"]: f["self_samples"] for f in rep["profile"]["functions"]}
    names = ["work._omp_fn.0", "work._omp_fn.1"]
    assert all(n in funcs for n in names) and "work._omp_fn" not in funcs, funcs
    n = funcs[names[0]] + funcs[names[1]]
    share = funcs[names[0]] / n
    true = truth[names[0]] / (truth[names[0]] + truth[names[1]])
    # the regions' share of the signals, as their share of the samples
    k = n * int(signals.group(2)) / int(signals.group(1))
    assert abs(share - true) <= tolerance(true, k, 0.03), (share, true, n, k, funcs)
    return "work._omp_fn.0 %.1f %% of the regions' samples (truth %.1f %%), %d samples, " \
        "%d signals" % (100 * share, 100 * true, n, k)


def test_users37_report_of_a_main_only_run_directory():
    d = tempfile.mkdtemp(prefix="pc-users37-main-")
    exe = os.path.join(d, "bin", "users37")
    os.mkdir(os.path.dirname(exe))
    shutil.copy(prog("users37"), exe)
    want = plain([exe, "burn", "0.2"], d)
    got = ok("run", "--main-only", "--no-report", "-o", "mo", "--", exe, "burn", "0.2",
             cwd=d)
    assert got.stdout == want.stdout == "done\n"
    assert os.readlink(os.path.join(d, "mo", "users37")) == exe
    p = ok("report", "mo", cwd=d)
    assert "burn_work" in p.stdout and "left out" not in p.stderr, (p.stdout, p.stderr)
    g, total, _ = gprof_flat(os.path.join(d, "mo", "users37"),
                             os.path.join(d, "mo", "gmon.out"))
    assert g.get("burn_work", 0) >= 0.8 * total, g
    return p.stdout.splitlines()[0]


def background(extra, d, status=0):
    """pcprof run [extra] -- sh -c 'users37 burn 0.3 & echo started $!':
    the shell ends at once, its background process (its pid printed) not
    yet under libpc. (pcprof's result, the background pid.)"""
    # its output elsewhere: the pipe would be open until it ends
    cmd = '"$0" burn 0.3 >/dev/null 2>&1 & echo started $!; exit %d' % status
    os.makedirs(d, exist_ok=True)
    p = subprocess.Popen([os.path.join(os.path.abspath(BUILD), "pcprof"), "run"] + extra +
                         ["-o", "bg", "--", "sh", "-c", cmd, prog("users37")], cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env(None, profiled=False), start_new_session=True,
                         preexec_fn=default_signals)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    m = re.match(r"^started (\d+)\n", out)
    assert m, (out, err)
    return p.returncode, out, err, int(m.group(1))


def test_users37_background_process_started_late_is_named_and_waited_for():
    names = []
    d = tempfile.mkdtemp(prefix="pc-users37-bg-")
    for i in range(10):
        # named, by pid and program (the shell's fork before its exec, or
        # users37), though it has no profile yet; racy: 10 times
        rc, out, err, pid = background(["--no-report"], os.path.join(d, str(i)))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        assert rc == 0, err
        m = re.search(r"^pcprof: 1 process that 'sh' started still running \(pid (\d+), "
                      r"([\w.-]+)\); `pcprof report bg` when it ends", err, re.M)
        assert m and int(m.group(1)) == pid, (pid, err)
        names.append(m.group(2))
    for i in range(1):
        # --wait: its profile is in the report, its time too
        # (and the exit status is the command's, its orphan reaped)
        rc, out, err, pid = background(["--wait", "--format", "json", "--report", "w.json"],
                                       os.path.join(d, "w%d" % i), status=3)
        assert rc == 3, (rc, out, err)
        with open(os.path.join(d, "w%d" % i, "w.json")) as f:
            rep = json.load(f)
        # (the shell's fork before its exec is a process of that pid too)
        procs = [p for p in rep["processes"] if p["pid"] == pid and p["program"] == "users37"]
        assert len(procs) == 1, (rep["processes"], err)
        assert abs(procs[0]["cpu_seconds"] - 0.3) < 0.1, procs
    return "named as %s" % ", ".join("%s %d" % (n, names.count(n)) for n in sorted(set(names)))
