# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests on Debian's own programs as they are shipped: stripped,
written by no one here. Their code is profiled by functions taken from the
unwind tables (one FDE, one function), checked against readelf's reading of
those tables and against perf on the same run; and `pcprof run` keeps each
program's output and exit status."""

import json
import math
import os
import re
import subprocess
import tempfile

import shipped
from pctest import BUILD, clean_env, default_signals, lib, need, run, skip, tolerance
from shipped import text_file
from test_cli import pcprof

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What a context switch may put in perf's task-clock and not in the CPU
# clocks, or the other way round (against_perf): measured at 5 to 10 us
# on average on the 2-CPU VM that CI runs on, with 4 to 8 wakeup-heavy
# programs beside the one measured
SWITCH_SKEW = 15e-6
# The CPU a process spends after libpc read its clock for the manifest
# (against_perf)
AFTER_WRITE = 5e-3


def perf_available():
    return shipped.available()


def fde_ranges(exe):
    """[(start, end)] of every FDE in exe, as binutils' readelf reads them."""
    out = subprocess.run(["readelf", "--debug-dump=frames", exe], capture_output=True,
                         text=True, timeout=60).stdout
    return sorted((int(a, 16), int(b, 16)) for a, b in
                  re.findall(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out))


def stripped(exe):
    out = subprocess.run(["readelf", "-S", "-W", exe], capture_output=True, text=True).stdout
    return ".symtab" not in out


def test_stripped_gzip_gets_its_functions_from_unwind_tables_as_perf_sees_them():
    """Debian's gzip has no symbols of its own. perf (task-clock) records
    the run that libpc profiles; perf's sampled addresses, put into the
    FDEs that readelf lists, and pcprof's functions must give the same
    distribution within sampling error, and pcprof must leave next to
    nothing unnamed."""
    gzip = need("gzip")
    if not stripped(gzip):
        skip("%s has a symbol table: not the stripped case" % gzip)
    if not perf_available():
        skip("perf cannot record task-clock here (install linux-perf)")
    fdes = fde_ranges(gzip)
    assert len(fdes) > 50, "readelf lists %d FDEs in %s" % (len(fdes), gzip)
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    data = os.path.join(d, "in.txt")
    # 10 MB (24 before): some 600 signals in 15 of gzip's functions (1,500
    # in 17), and the distance's bound below follows them
    text_file(data, 10)
    env = clean_env(profiled=False)
    with open(os.path.join(d, "out.gz"), "wb") as out:
        p = subprocess.run(["perf", "record", "-q", "-e", "task-clock", "-F", "1000", "-o",
                            os.path.join(d, "perf.data"), "--", "env", "LD_PRELOAD=" + lib(),
                            "PC_VERBOSE=1", gzip, "-9", "-c", data],
                           cwd=d, env=env, stdout=out, stderr=subprocess.PIPE, timeout=300)
    assert p.returncode == 0, p.stderr
    m = re.search(rb"\((\d+) signals\)", p.stderr)
    assert m, p.stderr
    signals = int(m.group(1))
    q = pcprof("report", "--format", "json", "--top", "0", gzip, os.path.join(d, "gmon.out"))
    assert q.returncode == 0, q.stderr
    j = json.loads(q.stdout)
    assert j["total_samples"] > 0, j
    unknown = j["unattributed_samples"] / j["total_samples"]
    assert unknown < 0.01, "%.1f %% of gzip's samples in no function" % (100 * unknown)
    starts = {a for a, _ in fdes}
    ours = {}
    for f in j["functions"]:
        m = re.match(r"^gzip\+0x([0-9a-f]+)", f["name"])
        if not m:
            assert f["name"].endswith("@plt"), f["name"]
            continue
        start = int(m.group(1), 16)
        assert start in starts, "%s starts at no FDE readelf lists" % f["name"]
        ours[start] = ours.get(start, 0) + f["self_samples"]
    # perf's addresses in gzip (a PIE: file-relative, as the FDEs are)
    r = subprocess.run(["perf", "report", "-i", os.path.join(d, "perf.data"), "--stdio",
                        "--sort", "dso,sym", "-q", "-n", "--comm", "gzip"],
                       capture_output=True, text=True, errors="replace", timeout=120)
    theirs = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+gzip\s+\[\.\]\s+0x([0-9a-f]+)", line)
        if m:
            addr = int(m.group(2), 16)
            for a, b in fdes:
                if a <= addr < b:
                    theirs[a] = theirs.get(a, 0) + int(m.group(1))
                    break
    assert ours and theirs, (ours, r.stdout[:2000])
    a, b = sum(theirs.values()), sum(ours.values())
    keys = set(ours) | set(theirs)
    tvd = 0.5 * sum(abs(theirs.get(k, 0) / a - ours.get(k, 0) / b) for k in keys)
    # each function's share differs by sampling alone with a spread of
    # sqrt(p (1/a + 1/n)), n libpc's signals (its independent samples)
    expect = 0.5 * sum(math.sqrt(2 / math.pi) *
                       math.sqrt(max(theirs.get(k, 0) / a, 1 / a) * (1 / a + 1 / signals))
                       for k in keys)
    assert tvd < 2.5 * expect + 0.02, \
        "function-level distance %.3f, expected %.3f; pcprof %s, perf %s" % (
            tvd, expect, sorted(ours.items()), sorted(theirs.items()))
    return "%d FDE functions with samples, TVD %.3f (chance %.3f) over %d signals and " \
        "%d perf samples; %.2f %% unnamed" % (len(ours), tvd, expect, signals, a, 100 * unknown)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def plain_and_run(argv, stdin=None, cwd=None, written=None):
    """argv run bare, and under `pcprof run`, in the same directory; and
    the bytes of the file written after each, when one is named."""
    cwd = cwd or tempfile.mkdtemp(prefix="pc-e2e-")
    plain = run(argv, profiled=False, cwd=cwd, stdin=stdin)
    bare = read_bytes(written) if written else None
    rep = os.path.join(cwd, "report.json")
    prof = pcprof("run", "--report", rep, "--format", "json", "--", *argv, cwd=cwd,
                  stdin=stdin)
    return plain, prof, rep, (bare, read_bytes(written) if written else None)


def test_pcprof_run_keeps_status_and_output_of_stripped_programs():
    """Each ends as it does bare, its stdout (and what gzip writes) byte for
    byte, and gets a report (exit 2 and "no symbols" was what these gave
    before)."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    data = os.path.join(d, "in.txt")
    text_file(data, 2)
    cases = [
        ([need("false")], None, 1, None),
        ([need("true")], None, 0, None),
        ([need("gzip"), "-9", "-n", "-k", "-f", data], None, 0, data + ".gz"),
        ([need("bc"), "-l"], "scale=1200; 4*a(1)\n", 0, None),
        ([need("awk"), "BEGIN { for (i = 0; i < 300000; i++) s += i % 7; print s }"],
         None, 0, None),
        ([need("sort"), "-r", data], None, 0, None),
        ([need("gzip"), "-d", "-c", os.path.join(d, "missing.gz")], None, 1, None),
    ]
    notes = []
    for argv, stdin, status, written in cases:
        plain, prof, rep, (bare, profiled) = plain_and_run(argv, stdin, d, written)
        name = os.path.basename(argv[0])
        assert plain.status == status, (name, plain.status, plain.stderr)
        assert prof.returncode == status, (name, prof.returncode, prof.stderr)
        assert prof.stdout == plain.stdout, "%s: stdout differs" % name
        assert bare == profiled, "%s: %s differs" % (name, written)
        assert "pcprof:" not in prof.stderr.replace("pcprof: warning: ", ""), prof.stderr
        j = json.load(open(rep))
        assert j["processes"][0]["program"] == os.path.basename(os.path.realpath(argv[0])), \
            j["processes"]
        j = j["profile"]
        named = sum(f["self_samples"] for f in j["functions"])
        notes.append("%s %d (%d samples)" % (name, status, j["total_samples"]))
        if j["total_samples"] > 50:
            # the program's own code gets functions, not [unknown]
            assert named >= 0.98 * j["total_samples"], (name, j["unattributed_samples"],
                                                          j["total_samples"])
    return ", ".join(notes)


def test_pcprof_run_keeps_the_status_when_the_report_fails():
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = pcprof("run", "--report", os.path.join(d, "no", "such", "dir.txt"), "--",
               need("false"), cwd=d)
    assert p.returncode == 1, (p.returncode, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("pcprof:")]
    assert len(lines) == 1 and "dir.txt" in lines[0], p.stderr
    # -o into a directory that is not there: one line, and the program runs
    p = pcprof("run", "-o", "nodir/x.gmon", "--", "sh", "-c", "echo ran; exit 3", cwd=d)
    assert p.returncode == 3 and p.stdout == "ran\n", (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "nodir/x.gmon" in lines[0] and \
        "directory does not exist" in lines[0], p.stderr
    # -o into a directory that holds an earlier run: one line, nothing
    # mixed or clobbered, and the program runs
    p = pcprof("run", "--no-report", "-o", "used", "--", "sh", "-c", "exit 0", cwd=d)
    assert p.returncode == 0 and os.path.exists(os.path.join(d, "used", "gmon.out")), p.stderr
    before = sorted(os.listdir(os.path.join(d, "used")))
    p = pcprof("run", "-o", "used", "--", "sh", "-c", "echo ran; exit 3", cwd=d)
    again = p.stderr.strip().splitlines()
    assert p.returncode == 3 and p.stdout == "ran\n", (p.returncode, p.stdout, p.stderr)
    assert len(again) == 1 and "'used'" in again[0] and "earlier run" in again[0], p.stderr
    assert sorted(os.listdir(os.path.join(d, "used"))) == before
    return "%s; %s" % (lines[0], again[0])


PY_WORK = """
import json, re
d = [{"k": i, "v": str(i) * 3} for i in range(300000)]
s = json.dumps(d)
json.loads(s)
print(len(sorted(re.findall(r"\\d+", s[:3000000]))))
"""


def debian_python():
    """Debian's own python3.11 (stripped, libpython linked in), not one
    that PATH may find first."""
    for p in ("/usr/bin/python3.11", "/usr/bin/python3"):
        if os.path.exists(p):
            return os.path.realpath(p)
    skip("Debian's python3 is not installed")


def test_pcprof_run_shows_a_screenful_and_one_line_for_the_rest():
    """Debian's python3.11 spreads its time over many functions: with
    the whole run profiled (the default) the text report has 25 function rows, then one line for
    the rest, and the rows and that line add up to all samples; --top 0
    shows every function."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    py = debian_python()
    p = pcprof("run", "-o", "run", "--", py, "-c", PY_WORK, cwd=d)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    start = [i for i, l in enumerate(lines) if l.startswith("Flat profile of the run")]
    assert start, p.stderr
    rows = [l.split() for l in lines[start[0]:] if re.match(r"^\s+[\d.]+\s+[\d.]+%", l)]
    head = lines[start[0]]
    total = float(re.search(r": (\d+) samples", head).group(1))
    more = [r for r in rows if "more" in r]
    funcs = [r for r in rows if "more" not in r]
    assert len(funcs) == 25 and len(more) == 1, p.stderr
    # each row's samples are printed rounded, and a bin split between two
    # functions gives halves
    assert abs(sum(float(r[3]) for r in funcs) + float(more[0][2]) - total) <= \
        0.5 * (len(funcs) + 1), p.stderr
    # python's own code is named from its exported symbols
    names = " ".join(" ".join(r[4:]) for r in funcs)
    assert re.search(r"\b_?Py[A-Z]\w+", names), names
    q = pcprof("report", "--top", "0", py, os.path.join(d, "run", "gmon.out"))
    assert q.returncode == 0, q.stderr
    assert "more function" not in q.stdout, q.stdout
    n = len([l for l in q.stdout.splitlines() if re.match(r"^\s+[\d.]+\s+[\d.]+%", l)])
    assert n > 25, q.stdout
    return "%s: 25 rows and %s; %d with --top 0" % (head.split(": ")[1],
                                                     " ".join(more[0][3:]), n)


def big_c(path, n=400, main=True):
    """A C file that keeps cc1 busy for about a second at -O2."""
    tag = os.path.basename(path).split(".")[0]
    with open(path, "w") as f:
        for i in range(n):
            f.write("int %s%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++)"
                    " { s += a[i] * %d; if (s > %d) s ^= a[(i * 7) %% n]; } return s; }\n"
                    % (tag, i, i + 3, 1000 + i))
        if main:
            f.write("int main(void) { return 0; }\n")


def test_a_process_tree_is_one_report_with_a_line_per_process():
    """make -j2 building two files with Debian's gcc: every process of the
    tree (make, gcc, cc1, as, collect2, ld) writes its whole-process
    profile into one directory, and `pcprof report DIR` names each one's
    program from its manifest. The per-process lines and the functions
    both add up to all the CPU sampled, which perf, recording the same
    run, sees within sampling error; --process picks one program."""
    if not perf_available():
        skip("perf cannot record task-clock here (install linux-perf)")
    make, cc = need("make"), need("cc")
    d = tempfile.mkdtemp(prefix="pc-e2e-tree-")
    # 75 and 50 functions (150 and 100 before): the tree's processes are
    # the same, and the total is checked against perf's within 4 of its
    # signals' errors, plus 2 %: some 1,100 signals in 1.1 s of the tree's
    # CPU, 14 %, where 2.8 s gave 9.5 %
    big_c(os.path.join(d, "a.c"), 75)
    big_c(os.path.join(d, "b.c"), 50, main=False)
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: a.o b.o\n\t%s -o prog a.o b.o\n%%.o: %%.c\n\t%s -O2 -c -o $@ $<\n"
                % (cc, cc))
    out = os.path.join(d, "run")
    os.mkdir(out)
    env = clean_env(profiled=False)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(k, None)
    p = subprocess.run(["perf", "record", "-q", "-e", "task-clock", "-F", "1000", "-o",
                        os.path.join(d, "perf.data"), "--", "env", "LD_PRELOAD=" + lib(),
                        "PC_SCOPE=all", "PC_VERBOSE=1", "PC_OUT=" + os.path.join(out, "gmon.out"),
                        make, "-j2"], cwd=d, env=env, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    q = pcprof("report", "--format", "json", out)
    assert q.returncode == 0, q.stderr
    j = json.loads(q.stdout)
    procs = j["processes"]
    programs = {x["program"] for x in procs}
    assert {"make", "cc1"} <= programs, programs
    assert any(x.startswith("ld") or "-ld" in x for x in programs), programs
    total = j["cpu_seconds"]
    assert abs(sum(x["cpu_seconds"] for x in procs) - total) < 1e-3, (procs, total)
    prof = j["profile"]
    funcs = sum(f["self_seconds"] for f in prof["functions"]) + \
        prof["unattributed_samples"] / prof["rate_hz"]
    assert abs(funcs - total) < 0.01 * total + 0.002, (funcs, total)
    # every pid is told, and each is a process perf saw
    assert all(x["pid"] > 0 for x in procs), procs
    r = subprocess.run(["perf", "report", "-i", os.path.join(d, "perf.data"), "--stdio",
                        "-q", "-n", "--sort", "pid"], capture_output=True, text=True, errors="replace",
                       timeout=120)
    perf_pids = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\d+):", line)
        if m:
            perf_pids[int(m.group(2))] = int(m.group(1))
    perf_total = sum(perf_pids.values()) / 1000.0
    cc1 = [x for x in procs if x["program"] == "cc1"]
    assert len(cc1) == 2 and all(x["pid"] in perf_pids for x in cc1), (cc1, perf_pids)
    # CPU-time timers and task-clock count the same CPU; a signal's share
    # of it is its own, so the spread is that of libpc's signals
    signals = sum(int(n) for n in re.findall(rb"\((\d+) signals\)", p.stderr))
    tol = 4 * math.sqrt(max(signals, 1)) / max(signals, 1) + 0.02
    assert abs(total / perf_total - 1) < tol, (total, perf_total, tol)
    q = pcprof("report", "--format", "json", "--process", "cc1", out)
    assert q.returncode == 0, q.stderr
    one = json.loads(q.stdout)
    assert {x["program"] for x in one["processes"]} == {"cc1"}, one["processes"]
    assert abs(one["cpu_seconds"] - sum(x["cpu_seconds"] for x in cc1)) < 1e-6
    t = pcprof("report", out)
    assert t.returncode == 0 and re.search(r"^\s+[\d.]+\s+[\d.]+%\s+\d+\s+\d+\s+cc1$",
                                           t.stdout, re.M), t.stdout
    assert all(x["threads"] >= 1 for x in procs), procs
    return "%d processes, %.2f s (perf %.2f s); %s" % (
        len(procs), total, perf_total,
        ", ".join("%s %.2f" % (x["program"], x["cpu_seconds"]) for x in procs[:4]))


HOT_JS = """
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function work() { let s = 0; for (let i = 0; i < 27; i++) s += fib(i); return s; }
let t = 0;
const t0 = process.cpuUsage();
while (process.cpuUsage(t0).user < 1.2e6) t += work();
console.log(t > 0 ? "ok" : "no");
"""


def test_node_jit_functions_are_named_and_their_share_matches_perf():
    """Debian's node with --perf-basic-prof writes /tmp/perf-PID.map; perf
    (task-clock, with call chains) records the run that libpc profiles
    whole. The JIT's functions are named (fib), and the JIT's share of the
    process matches perf's, counted as libpc counts (kernel time at the
    user code it returns to; libpc's own handler spread), within the
    sampling error of libpc's signals and perf's samples together and the 3 points the issue allows for what the two do not see
    alike."""
    node = need("node", "nodejs")
    if not perf_available():
        skip("perf cannot record task-clock here (install linux-perf)")
    d = tempfile.mkdtemp(prefix="pc-e2e-node-")
    js = os.path.join(d, "hot.js")
    with open(js, "w") as f:
        f.write(HOT_JS)
    env = clean_env(profiled=False)
    p = subprocess.run(["perf", "record", "-q", "-g", "-e", "task-clock", "-F", "1000", "-o",
                        os.path.join(d, "perf.data"), "--", "env", "LD_PRELOAD=" + lib(),
                        "PC_SCOPE=all", "PC_VERBOSE=1", "PC_TIMER=taskclock", "PC_HZ=4000",
                        node, "--perf-basic-prof", js],
                       cwd=d, env=env, capture_output=True, timeout=300)
    assert p.returncode == 0 and p.stdout == b"ok\n", p.stderr[-2000:]
    q = pcprof("report", "--format", "json", os.path.join(d, "gmon.out"))
    assert q.returncode == 0, q.stderr
    j = json.loads(q.stdout)
    pid = j["processes"][0]["pid"]
    try:
        prof = j["profile"]
        funcs = prof["functions"]
        jit = sum(f["self_samples"] for f in funcs
                  if f["object"] in ("[jit]", "[anonymous code]"))
        share = jit / prof["total_samples"]
        named = [f for f in funcs if f["object"] == "[jit]" and "fib" in f["name"]]
        assert named, [f for f in funcs[:10]]
        dsos = {k: round(v * 1000) for k, v in
                shipped.by_object(shipped.samples(os.path.join(d, "perf.data"))[0]).items()}
        # libpc cannot sample its own handler (libpc.so, and libgcc_s's
        # unwinder under it): that time falls to whatever it samples next
        perf_jit = sum(v for k, v in dsos.items() if k == "[jit]" or "JIT" in k or
                       k.startswith("//anon") or k == "[anonymous code]")
        perf_all = sum(v for k, v in dsos.items() if k not in ("libpc.so", "libgcc_s.so.1"))
        assert perf_all > 0, dsos
        perf_share = perf_jit / perf_all
        signals = sum(int(n) for n in re.findall(rb"\((\d+) signals\)", p.stderr))
        # the task-clock timer where it is allowed, for signals enough
        # that the sampling error is under 2 points; and the 3 points the
        # issue allows for what the two do not see alike (the task-clock
        # timer gives kernel time to the next user code): on an idle
        # machine they agreed within 1.2 points, with another process
        # busy on the second core pcprof's share came out 3.2 to 3.3
        # points lower
        # both shares are estimates: perf's ~1400 samples at 1000 Hz add
        # their own sampling error to libpc's (the two failures seen, 5.7
        # and 5.2 points, were perf's share moving, 80 and 92 %, with
        # pcprof's at 86)
        both = 1.0 / (1.0 / max(signals, 1) + 1.0 / perf_all)
        tol = tolerance(perf_share, both, 0.03)
        assert abs(share - perf_share) <= tol, (share, perf_share, tol, dsos)
    finally:
        mp = "/tmp/perf-%d.map" % pid
        if os.path.exists(mp):
            os.unlink(mp)
    return "JIT %.1f %% (perf %.1f %%, tolerance %.1f) over %d signals; %s" % (
        100 * share, 100 * perf_share, 100 * tol, signals, named[0]["name"])


# issue 26's loop: JIT code, with builtins on the way there; and work
# that V8 does in its builtins (Map, sort, strings), which node 20 runs
# from a second mapping of its own file, one for each isolate
# each about 1.5 s of CPU: at half that the tolerance from both tools'
# samples grew from 8.7 to 13 points for the loop, too wide to tell a
# share that is some 10 points off
LOOP_JS = "let s=0; for (let i=0;i<1.2e9;i++) s+=i%7\nconsole.log(s > 0 ? 'ok' : 'no')\n"
BUILTINS_JS = """const t0 = process.cpuUsage();
let sink = 0;
while (process.cpuUsage(t0).user < 1.5e6) {
  const a = [];
  for (let i = 0; i < 20000; i++) a.push(i * 7 % 1000);
  a.sort((x, y) => x - y);
  const m = new Map();
  for (let i = 0; i < 20000; i++) m.set('k' + i, a[i]);
  for (const [k, v] of m) sink += k.length + v;
}
console.log(sink > 0 ? 'ok' : 'no');
"""


def test_node_code_in_no_object_is_as_much_as_perf_finds_jit_code():
    """node under `pcprof run`, which perf (task-clock, 1000 Hz) records at
    the same time: the share pcprof leaves in [anonymous code] is perf's
    share of JIT code (in perf's /tmp/perf-PID.map object), within the sampling error of libpc's
    signals and perf's samples together and the 3 points
    test_node_jit_functions_are_named_and_their_share_matches_perf allows
    for what the two do not see alike. node 20 runs its builtins from a
    copy of its own file's code, which perf names from its mmap events and
    which were 24 % of a node program in [anonymous code] before libpc
    learned copies; Debian's node 18 makes none, and the shares match
    all the same."""
    node = need("node", "nodejs")
    if not perf_available():
        skip("perf cannot record task-clock here (install linux-perf)")
    notes = []
    for what, text in (("loop", LOOP_JS), ("builtins", BUILTINS_JS)):
        d = tempfile.mkdtemp(prefix="pc-e2e-nodecopy-")
        js = os.path.join(d, what + ".js")
        with open(js, "w") as f:
            f.write(text)
        data, rdir = os.path.join(d, "perf.data"), os.path.join(d, "run")
        p = subprocess.run(shipped.record_argv(data, callgraph=False) +
                           ["--", os.path.join(os.path.abspath(BUILD), "pcprof"), "run",
                            "--no-report", "-o", rdir, "--", node, js],
                           cwd=d, env=clean_env({"PC_VERBOSE": "1"}, profiled=False),
                           capture_output=True, timeout=300, preexec_fn=default_signals)
        assert p.returncode == 0 and p.stdout == b"ok\n", (what, p.returncode, p.stderr[-2000:])
        q = pcprof("report", "--format", "json", "--top", "0", rdir, timeout=300)
        assert q.returncode == 0, q.stderr
        ours = shipped.by_object(shipped.pcprof_table(json.loads(q.stdout))[0])
        theirs = shipped.by_object(shipped.perf_table(data)[0])
        share = ours.get("[anonymous code]", 0) / sum(ours.values())
        # perf's JIT code: its object is /tmp/perf-PID.map whether node
        # wrote one or not (shipped.obj_name: "[jit]")
        perf_share = sum(v for k, v in theirs.items() if k in ("[jit]", "[anonymous code]")) / \
            sum(theirs.values())
        signals = sum(int(n) for n in re.findall(rb"\((\d+) signals\)", p.stderr))
        n_perf = sum(theirs.values()) * 1000
        both = 1.0 / (1.0 / max(signals, 1) + 1.0 / max(n_perf, 1))
        tol = tolerance(perf_share, both, 0.03)
        assert abs(share - perf_share) <= tol, (what, share, perf_share, tol,
                                                sorted(ours.items(), key=lambda x: -x[1])[:6])
        notes.append("%s: %.1f %% (perf %.1f %%, tolerance %.1f)" % (
            what, 100 * share, 100 * perf_share, 100 * tol))
    return "[anonymous code] " + "; ".join(notes)


def heaviest_named(table, n=10):
    """The n heaviest named functions of a by-function table, as shares."""
    total = sum(table.values()) or 1
    rows = [(v / total, k) for k, v in table.items() if not shipped.unnamed(k[1])]
    return ["%s %.2f %%" % ("%s:%s" % k, 100 * v) for v, k in sorted(rows, reverse=True)[:n]]


def against_perf(name, args=None):
    """One of Debian's programs (shipped.programs) under `pcprof run`, which perf
    (task-clock, 1000 Hz, call chains) records at the same time. The
    program's exit status and stdout are those of a bare run, byte for byte.
    What the report accounts for (what was sampled, and the one line of what
    the processes' clocks measured and no sample saw) is within 2 % of the
    CPU seconds perf's samples hold, beside what really parts the two:
    perf's period under way on each of a thread's CPUs when it ends (perf
    keeps an event a CPU for each thread), which it never samples; the
    periods perf's own switch records show it skipped while a thread stayed
    on a CPU (its timer runs on the wall clock, and one that fires late, as
    when the host stops the virtual CPU, takes one sample and skips the
    periods it missed); 5 ms a process of CPU after libpc read its clock for
    the manifest (the rest of the write, the live file's removal, the exit),
    which perf counts and no report line can hold (measured by the
    processes' own clocks: 0.6 to 1.6 ms before the live file, 2.3 to 4.8 ms
    since, 6.6 ms beside wakeup-heavy programs); and 15 us for each time a
    thread left a CPU, either way. There the CPU clocks that the report adds
    up and perf's task-clock draw the line in different places: the
    scheduler does not read its clock again at a switch that a wakeup asked
    for, so the wakeup's interrupt and what ran until the switch go to the
    woken thread in the CPU clocks and to the preempted one in perf's count.
    That is 5 to 10 us a switch on average here (2-CPU VM), and a program
    beside wakeup-heavy ones is preempted thousands of times a second: perf
    counts up to 13 % more than its CPU clock. The samples miss no more than
    each thread's last tick; by object it comes within 3 points of perf
    (total variation distance) beside three times what sampling alone gives
    on average; and within each object both sampled it puts as much time
    on real function names as perf does, less 2 points and the sampling
    error (shipped.named_alike: the objects weighed by perf's samples, so
    that perf's samples of libpc's own handler, in libc, the vDSO and
    libgcc_s, which no libpc sample can hold, do not read as names lost). libpc samples as pcprof run
    does by default: POSIX CPU-time timers, which credit the kernel's time
    to the call that spent it as perf does (the task-clock timer samples in
    user mode only, so that no system call sees EINTR, and gives the
    kernel's time to the next user code). Their signals come at the kernel
    tick, so a second of CPU holds about 250 independent samples, and the
    chance distance is a few points."""
    if not perf_available():
        skip("perf cannot record task-clock here (install linux-perf)")
    d = tempfile.mkdtemp(prefix="pc-e2e-real-")
    prog = shipped.programs(d, os.path.abspath(BUILD), TOP)[name]
    if args:
        # the program's arguments for this test (bench/real.py's --small
        # keeps shipped.py's)
        prog.argv = prog.argv[:1] + args
    gone = shipped.missing(prog)
    if gone:
        skip("%s is not installed" % gone)
    # a worktree's .git is a file naming its repository, and clones as well
    if name == "git gc" and not os.path.exists(os.path.join(TOP, ".git")):
        skip("%s is not a git checkout to clone" % TOP)
    if prog.setup:
        prog.setup()
    stdin = prog.stdin.encode() if prog.stdin else None
    bare = subprocess.run(prog.argv, cwd=d, env=clean_env(profiled=False), input=stdin,
                          capture_output=True, timeout=300, preexec_fn=default_signals)
    env = clean_env({"PC_VERBOSE": "1"}, profiled=False)
    data = os.path.join(d, "perf.data")
    rdir = os.path.join(d, "run")
    p = subprocess.run(shipped.record_argv(data, switches=True) +
                       ["--", os.path.join(os.path.abspath(BUILD), "pcprof"), "run",
                        "--no-report", "-o", rdir, "--"] + prog.argv,
                       cwd=d, env=env, capture_output=True, timeout=600, input=stdin,
                       preexec_fn=default_signals)
    assert p.returncode == bare.returncode, (name, p.returncode, bare.returncode,
                                             p.stderr[-2000:])
    if prog.same_output:
        assert p.stdout == bare.stdout, "%s: stdout differs (%d bytes, bare %d)" % (
            name, len(p.stdout), len(bare.stdout))
    else:
        # its own CPU times: the same lines, other numbers
        assert re.sub(rb"[\d.]+", b"N", p.stdout) == re.sub(rb"[\d.]+", b"N", bare.stdout), \
            (p.stdout, bare.stdout)
    q = pcprof("report", "--format", "json", "--top", "0", rdir, timeout=300)
    assert q.returncode == 0, q.stderr
    j = json.loads(q.stdout)
    ours, unsampled = shipped.pcprof_table(j)
    theirs, perf_cpu = shipped.perf_table(data)
    ns = j["not_sampled"]
    sampled = j["cpu_seconds"]
    assert ns["processes_with_clocks"] == len(j["processes"]), j["processes"]
    shown = (sampled + unsampled) / perf_cpu
    threads = sum(max(x["threads"], 1) for x in j["processes"])
    # both count CPU time by clocks, which part at context switches (the
    # docstring); perf counts each process's end after libpc's last clock
    # read; perf's samples miss each thread's last period on each CPU, and
    # the periods its timer skipped
    switches, skipped = shipped.switches(data, 0.001, skip_comms=("pcprof",))
    at_switches = SWITCH_SKEW * switches
    last = 0.001 * threads * (os.cpu_count() or 1)
    low = 0.98 - (at_switches + AFTER_WRITE * len(j["processes"])) / perf_cpu
    high = 1.02 + (last + skipped + at_switches) / perf_cpu
    assert low <= shown <= high, \
        "%s: %.3f s sampled and %.3f s not, perf %.3f s (%.1f %%, allowed %.1f to %.1f %%: " \
        "%d switches, %.3f s perf skipped)" % (name, sampled, unsampled, perf_cpu, 100 * shown,
                                               100 * low, 100 * high, switches, skipped)
    # what sampling ran through and missed is each thread's last partial
    # period: with POSIX timers what it ran since the last kernel tick that
    # found it running (a few ticks of 4 ms here, when it shares a core);
    # the samples themselves cover the rest
    assert ns["while_sampling"] <= 0.012 * threads + 0.03 * perf_cpu, (name, ns, threads)
    n_perf = round(perf_cpu * 1000)
    # libpc's independent samples: a POSIX timer's signal may carry several
    signals = max(1, sum(int(n) for n in re.findall(rb"\((\d+) signals\)", p.stderr)))
    a, b = shipped.by_object(ours), shipped.by_object(theirs)
    tvd = shipped.tvd(a, b)
    chance = shipped.chance_tvd(a, signals, b, n_perf)
    # chance is the average distance that sampling alone gives; three
    # times it is beyond what one run in a hundred reaches
    assert tvd <= 0.03 + 3 * chance, "%s: TVD by object %.3f (chance %.3f); pcprof %s, " \
        "perf %s" % (name, tvd, chance, sorted(a.items(), key=lambda x: -x[1])[:8],
                     sorted(b.items(), key=lambda x: -x[1])[:8])
    named_pc, named_perf = shipped.named_alike(ours, theirs)
    tol = tolerance(named_perf, signals, 0.02)
    assert named_pc >= named_perf - tol, \
        "%s: %.1f %% named, perf %.1f %% (tolerance %.1f); named, pcprof %s, perf %s" % (
            name, 100 * named_pc, 100 * named_perf, 100 * tol, heaviest_named(ours),
            heaviest_named(theirs))
    return "%d process%s; %.3f s sampled + %.3f s not = %.1f %% of perf's %.3f s " \
        "(allowed %.1f to %.1f %%: %d switches, %.3f s perf skipped); " \
        "TVD by object %.3f (chance %.3f); named %.1f %% (perf %.1f %%)" % (
            len(j["processes"]), "" if len(j["processes"]) == 1 else "es", sampled,
            unsampled, 100 * shown, perf_cpu, 100 * low, 100 * high, switches, skipped,
            tvd, chance, 100 * named_pc, 100 * named_perf)


def test_xz_against_perf():
    return against_perf("xz")


def test_gzip_against_perf():
    return against_perf("gzip")


def test_sort_against_perf():
    return against_perf("sort")


def test_sqlite3_recursive_cte_against_perf():
    return against_perf("sqlite3")


def test_python_against_perf():
    return against_perf("python3.11")


def test_python_through_a_shim_that_execs_it_against_perf():
    return against_perf("python3.11 through a shim")


def test_git_gc_process_tree_against_perf():
    return against_perf("git gc")


def test_bc_against_perf():
    return against_perf("bc")


def test_awk_against_perf():
    return against_perf("awk")


def test_cxx_program_with_exceptions_against_perf():
    return against_perf("c++ exceptions")


def test_four_threads_against_perf():
    # threads 0.5 (1 in bench/real.py --small): the same five threads in
    # some 1.2 s of CPU, not 2.5; the bounds are the clocks' (2 % and what
    # each thread's last tick and its switches allow) and the distance's
    # from the samples
    return against_perf("4 threads", ["0.5"])
