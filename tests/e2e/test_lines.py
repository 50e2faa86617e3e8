# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of pcprof report --lines and pcprof annotate on loops
(tests/progs/loops.c): two hot loops in one function, a heavy one and a
light one, and a third whose body is an inlined helper, each loop timed
on its own by the program. The lines each loop's code is on are read from
the markers in its source."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

import shipped
from pctest import BUILD, need, prog, run, skip, tolerance
from test_cli import pcprof

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "progs", "loops.c")


def marked_lines():
    """{loop: (first line, last line)} from the BEGIN/END markers."""
    spans = {}
    for n, text in enumerate(open(SOURCE), 1):
        m = re.search(r"/\* (\w+) (BEGIN|END) \*/", text)
        if m:
            spans.setdefault(m.group(1).lower(), [0, 0])[m.group(2) == "END"] = n
    return {k: tuple(v) for k, v in spans.items()}


def lines_json(exe, gmon, *extra):
    p = pcprof("report", "--lines", "--format", "json", "--top", "0", *extra, exe, gmon)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def loop_samples(rep, spans):
    """Samples per loop: the lines of its span in two_loops, and for the
    mixed loop the helper's lines that were inlined into it."""
    got = {k: 0.0 for k in ("heavy", "light", "mixed")}
    for r in rep["lines"]:
        if r["file"] is None or os.path.basename(r["file"]) != "loops.c":
            continue
        for k in got:
            lo, hi = spans[k]
            if lo <= r["line"] <= hi and r["function"] == "two_loops":
                got[k] += r["self_samples"]
        lo, hi = spans["helper"]
        if lo <= r["line"] <= hi and r["inlined"] == "helper_mix":
            got["mixed"] += r["self_samples"]
    return got


def test_lines_put_each_loop_at_its_own_share():
    """Each loop's share of the three loops' samples by --lines is within
    the sampling tolerance (from the signals libpc took) of its share of
    the loops' own CPU time. The lines of one function add up to the
    function's samples in the flat profile."""
    exe = prog("loops")
    r = run([exe, "1.5"], env={"PC_TIMER": "taskclock", "PC_HZ": "2000"})
    assert r.status == 0, r.stderr
    truth, signals = r.truth(), r.summary()["signals"]
    rep = lines_json(exe, r.path())
    spans = marked_lines()
    got = loop_samples(rep, spans)
    tt, tg = sum(truth[k] for k in got), sum(got.values())
    worst = 0
    for k in got:
        want = truth[k] / tt
        tol = tolerance(want, signals)
        assert abs(got[k] / tg - want) <= tol, (k, got, truth, tol, signals)
        worst = max(worst, abs(got[k] / tg - want))
    flat = json.loads(pcprof("report", "--format", "json", "--top", "0", exe,
                             r.path()).stdout)
    two = sum(f["self_samples"] for f in flat["functions"] if f["name"] == "two_loops")
    mine = sum(x["self_samples"] for x in rep["lines"] if x["function"] == "two_loops")
    assert abs(two - mine) < 1e-6 * max(two, 1), (two, mine)
    return "%d signals; worst loop share error %.1f pts" % (signals, 100 * worst)


def gprof_lines(exe, gmon):
    """gprof -l's flat profile summed by (file, line): seconds."""
    p = subprocess.run(["gprof", "-l", "-b", "-p", exe, gmon], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = {}
    for m in re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+.*\((\S+):(\d+) @ [0-9a-f]+\)$",
                         p.stdout, re.M):
        key = (os.path.basename(m.group(2)), int(m.group(3)))
        out[key] = out.get(key, 0.0) + float(m.group(1))
    return out


def test_lines_agree_with_gprof_l_sample_for_sample():
    """Built with nothing inlined (loops-noinline), every line gprof -l
    counts has the same samples in --lines; at 100 Hz gprof's two-decimal
    seconds are whole samples."""
    need("gprof")
    exe = prog("loops-noinline")
    r = run([exe, "1"], env={"PC_HZ": "100"}, verbose=False)
    assert r.status == 0, r.stderr
    theirs = {k: round(v * 100) for k, v in gprof_lines(exe, r.path()).items() if v > 0}
    ours = {}
    for x in lines_json(exe, r.path())["lines"]:
        if x["file"]:
            key = (os.path.basename(x["file"]), x["line"])
            ours[key] = ours.get(key, 0) + x["self_samples"]
    assert theirs and sum(theirs.values()) >= 80, theirs
    assert {k: round(v, 6) for k, v in ours.items() if v > 0} == theirs, (ours, theirs)
    return "%d lines, %d samples, the same as gprof -l's" % (len(theirs),
                                                           sum(theirs.values()))


def test_inlined_helper_is_its_own_line_inside_its_caller():
    """The helper inlined into two_loops: its samples are on the helper's
    source lines, named as inlined into two_loops, and gprof -l, which
    names the innermost function, puts the same samples on those lines."""
    exe = prog("loops")
    # 200 samples: the helper's 15 % has some in every run but one in 10^13
    r = run([exe, "2"], env={"PC_HZ": "100"}, verbose=False)
    rep = lines_json(exe, r.path())
    lo, hi = marked_lines()["helper"]
    rows = [x for x in rep["lines"] if x["file"] and lo <= x["line"] <= hi]
    assert rows and all(x["inlined"] == "helper_mix" and x["function"] == "two_loops"
                        for x in rows), rows
    assert not any(x["function"] == "helper_mix" for x in rep["lines"]), rep["lines"]
    text = pcprof("report", "--lines", exe, r.path()).stdout
    assert re.search(r"loops\.c:%d\s+two_loops\s+\[inlined: helper_mix\]" % rows[0]["line"],
                     text), text
    if shutil.which("gprof"):
        theirs = gprof_lines(exe, r.path())
        for x in rows:
            assert round(theirs.get(("loops.c", x["line"]), 0) * 100) == \
                round(x["self_samples"]), (x, theirs)
    return "%d helper lines, %.0f samples, inlined into two_loops" % (
        len(rows), sum(x["self_samples"] for x in rows))


def parse_annotate(text):
    """The instruction rows of annotate's output: (samples, address, text)."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"^[* ]\s+([\d.]+)\s+[\d.]+%\s+[> ]\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), int(m.group(2), 16), m.group(3)))
    return rows


def test_annotate_asm_adds_up_and_finds_the_heavy_loop():
    """annotate --asm: every instruction of two_loops with its samples;
    they add up to the function's samples, and the hottest one lies in
    the address range of the heavy loop's lines (from the line table, as
    objdump --dwarf=decodedline lists it)."""
    need("objdump")
    exe = prog("loops")
    r = run([exe, "1"], verbose=False)
    p = pcprof("annotate", "--asm", exe, r.path(), "two_loops")
    assert p.returncode == 0, p.stderr
    rows = parse_annotate(p.stdout)
    head = re.match(r"two_loops: ([\d.]+) samples of (\d+)", p.stdout)
    assert rows and head, p.stdout
    assert abs(sum(s for s, _, _ in rows) - float(head.group(1))) < 0.05 + 1e-9, p.stdout
    flat = json.loads(pcprof("report", "--format", "json", exe, r.path()).stdout)
    two = [f["self_samples"] for f in flat["functions"] if f["name"] == "two_loops"][0]
    assert abs(float(head.group(1)) - two) < 0.05, (head.group(0), two)
    lo, hi = marked_lines()["heavy"]
    dec = subprocess.run(["objdump", "--dwarf=decodedline", exe], capture_output=True,
                         text=True, check=True).stdout
    heavy = [int(m.group(2), 16) for m in
             re.finditer(r"^loops\.c\s+(\d+)\s+(0x[0-9a-f]+)", dec, re.M)
             if lo <= int(m.group(1)) <= hi]
    hot = max(rows)
    assert heavy and min(heavy) <= hot[1] <= max(heavy) + 16, (hex(hot[1]), heavy)
    # jump targets are marked, source lines head their instructions
    assert re.search(r"^\S?\s+[\d.]+\s+[\d.]+%\s+>\s+[0-9a-f]+:", p.stdout, re.M), p.stdout
    assert re.search(r"loops\.c:%d" % lo, p.stdout), p.stdout
    both = pcprof("annotate", exe, r.path(), "two_l").stdout
    assert "x = x * 6364136223846793005ULL" in both, both
    return "%d instructions, hottest at %#x (%s), %.0f samples" % (
        len(rows), hot[1], hot[2], hot[0])


def test_annotate_source_and_a_function_named_by_prefix():
    """annotate --source: the loops' source lines with their samples, the
    heavy loop's lines marked hot; a prefix names the function, and a name
    that matches nothing is one line and status 2."""
    exe = prog("loops")
    r = run([exe, "0.5"], verbose=False)
    p = pcprof("annotate", "--source", exe, r.path(), "two_")
    assert p.returncode == 0, p.stderr
    lo, hi = marked_lines()["heavy"]
    hot = [l for l in p.stdout.splitlines() if l.startswith("*") and
           re.search(r"loops\.c:(%s)\b" % "|".join(str(n) for n in range(lo, hi + 1)), l)]
    assert hot and "HEAVY BEGIN" in p.stdout, p.stdout
    # a line's samples are the same in annotate as in --lines: one rule
    ann = {int(m.group(2)): float(m.group(1)) for m in
           re.finditer(r"^[* ]\s+([\d.]+)\s+[\d.]+%\s+loops\.c:(\d+)", p.stdout, re.M)}
    rows = {}
    for x in lines_json(exe, r.path())["lines"]:
        if x["function"] == "two_loops" and x["file"]:
            rows[x["line"]] = rows.get(x["line"], 0) + x["self_samples"]
    assert all(abs(ann.get(k, 0) - v) < 0.051 for k, v in rows.items()), (ann, rows)
    q = pcprof("annotate", exe, r.path(), "no_such_function")
    assert q.returncode == 2 and len(q.stderr.splitlines()) == 1 and \
        "no_such_function" in q.stderr, q.stderr
    return "%d hot lines in the heavy loop" % len(hot)


def test_lines_from_a_separate_debug_file_and_with_none():
    """A stripped copy with a .gnu_debuglink gets the same lines from its
    debug file; one with no line information falls back to
    function+0xOFFSET rows with a note, and is no error."""
    need("objcopy", "strip")
    d = tempfile.mkdtemp(prefix="pc-e2e-lines-")
    exe = prog("loops")
    r = run([exe, "0.5"], verbose=False)
    want = lines_json(exe, r.path())["lines"]
    copy = os.path.join(d, "loops")
    shutil.copy(exe, copy)
    subprocess.run(["objcopy", "--only-keep-debug", copy, copy + ".debug"], check=True)
    subprocess.run(["strip", "--strip-all", copy], check=True)
    subprocess.run(["objcopy", "--add-gnu-debuglink=" + copy + ".debug", copy], check=True,
                   cwd=d)
    got = lines_json(copy, r.path())["lines"]
    assert [(x["line"], x["self_samples"]) for x in got] == \
        [(x["line"], x["self_samples"]) for x in want], (got, want)
    bare = os.path.join(d, "bare")
    shutil.copy(exe, bare)
    subprocess.run(["strip", "--strip-debug", bare], check=True)
    rep = lines_json(bare, r.path())
    assert not rep["line_information"] and rep["lines"] and \
        all(x["file"] is None and x["offset"] is not None for x in rep["lines"]), rep
    text = pcprof("report", "--lines", bare, r.path())
    assert text.returncode == 0 and "two_loops+0x" in text.stdout and \
        "no line information" in text.stdout, text.stdout
    return "debuglink: %d lines as unstripped; no -g: %d function+offset rows" % (
        len(got), len(rep["lines"]))


def test_lines_of_a_clang_build_without_aranges():
    """clang writes no .debug_aranges by default: the units are found by
    their own address ranges, and the loops' lines are there."""
    need("clang")
    d = tempfile.mkdtemp(prefix="pc-e2e-clang-")
    exe = os.path.join(d, "loops-clang")
    subprocess.run(["clang", "-O2", "-g", "-pthread", "-o", exe, SOURCE], check=True)
    aranges = subprocess.run(["readelf", "-S", exe], capture_output=True, text=True).stdout
    r = run([exe, "0.5"], verbose=False)
    rep = lines_json(exe, r.path())
    lo, hi = marked_lines()["heavy"]
    heavy = sum(x["self_samples"] for x in rep["lines"] if x["file"] and
                lo <= x["line"] <= hi and x["function"] == "two_loops")
    assert rep["line_information"] and heavy > 0.3 * rep["total_samples"], rep
    return "%s; heavy loop %.0f of %d samples" % (
        "no .debug_aranges" if ".debug_aranges" not in aranges else "with .debug_aranges",
        heavy, rep["total_samples"])


def perf_lines(data, symbol):
    """perf annotate's lines of symbol on data: {(file, line): percent}, and
    the samples it counted."""
    p = subprocess.run(["perf", "annotate", "-i", data, "--stdio", "-l", "--no-source",
                        symbol], capture_output=True, text=True, errors="replace", timeout=300)
    lines = {}
    for m in re.finditer(r"^\s+([\d.]+) (\S+):(\d+)$", p.stdout, re.M):
        key = (m.group(2), int(m.group(3)))
        lines[key] = lines.get(key, 0) + float(m.group(1)) / 100
    n = re.search(r"\((\d+) samples", p.stdout)
    return lines, int(n.group(1)) if n else 0


def test_debians_sort_in_libc_by_line_against_perf_annotate():
    """Debian's sort (LC_ALL=C: its time in libc's memcmp) under pcprof run
    and perf record on the same run, libc's lines from libc6-dbg's debug
    file: the hottest line of libc's hottest function by --lines is perf
    annotate's hottest, or within the two tools' sampling error of it; and
    annotate --asm of that function adds up to its samples."""
    need("perf", "sort", "objdump")
    if not shipped.available():
        skip("perf cannot record task-clock here (install linux-perf)")
    if not os.path.isdir("/usr/lib/debug/.build-id"):
        skip("libc6-dbg is not installed")
    d = tempfile.mkdtemp(prefix="pc-e2e-sortlines-")
    words = os.path.join(d, "in.txt")
    # some 2,000,000 lines of random letters, 22 a line on average: one
    # translation of random bytes, 11 of whose 256 values end a line (a
    # loop of randint and writes took 3 s of CPU, half the test's; the
    # bytes from SHAKE128, not random's generator: 0.3 s of CPU, not 1)
    letters = bytes(10 if b < 11 else 97 + b % 26 for b in range(256))
    with open(words, "wb") as f:
        f.write(hashlib.shake_128(b"sort 7").digest(2000000 * 23).translate(letters)
                + b"\n")
    data, rdir = os.path.join(d, "perf.data"), os.path.join(d, "run")
    env = dict(os.environ, LC_ALL="C")
    for k in list(env):
        if k.startswith("PC_") or k == "LD_PRELOAD":
            del env[k]
    p = subprocess.run(shipped.record_argv(data, callgraph=False) +
                       ["--", os.path.join(os.path.abspath(BUILD), "pcprof"), "run",
                        "--no-report", "-v", "-o", rdir, "--", "sort", words],
                       # the 46 MB sorted, unread: not through a pipe to
                       # this process (1 s of its CPU)
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=300, cwd=d)
    assert p.returncode == 0, p.stderr[-2000:]
    sort = shutil.which("sort")
    flat = json.loads(pcprof("report", "--format", "json", "--top", "0", sort, rdir).stdout)
    libc = [f for f in flat["functions"] if f.get("object", "").startswith("libc.so")]
    assert libc, flat["functions"][:5]
    fn = libc[0]["name"]
    rows = [x for x in lines_json(sort, rdir)["lines"] if x["function"] == fn and x["file"]]
    assert rows, "no lines for %s: is libc6-dbg installed?" % fn
    ours = max(rows, key=lambda x: x["self_samples"])
    theirs, n_perf = perf_lines(data, fn)
    assert theirs, "perf annotate found no lines for %s" % fn
    top = max(theirs.values())
    mine = theirs.get((os.path.basename(ours["file"]), ours["line"]), 0)
    # independent samples are signals: a POSIX timer's signal carries the
    # samples of its overruns (several a kernel tick at 1000 Hz)
    # sort closes its standard error at exit (gnulib's close_stdout), before
    # libpc's line, which then goes nowhere: a program that keeps it says
    # how many samples a signal carries under the same timer
    summary = re.search(rb"libpc: wrote \S+: (\d+) samples \((\d+) signals\)", p.stderr)
    if not summary:
        probe = run([prog("regress-base"), "0.3", "1"], env={"PC_SCOPE": "all"})
        summary = re.search(r"libpc: wrote \S+: (\d+) samples \((\d+) signals\)",
                            probe.stderr)
        assert summary, probe.stderr[-2000:]
    per_signal = max(int(summary.group(1)) / max(int(summary.group(2)), 1), 1.0)
    n_ours = sum(x["self_samples"] for x in rows) / per_signal
    # both shares of the function are sampled: allow for both errors
    tol = tolerance(top, 1 / (1 / max(n_perf, 1) + 1 / max(n_ours, 1)), 0.0)
    assert mine >= top - tol, (fn, ours, sorted(theirs.items(), key=lambda x: -x[1])[:4],
                               tol)
    a = pcprof("annotate", "--asm", sort, rdir, fn)
    assert a.returncode == 0, a.stderr
    head = re.match(r"\S+ in \S+: ([\d.]+) samples", a.stdout)
    insns = parse_annotate(a.stdout)
    assert head and insns and abs(sum(s for s, _, _ in insns) - float(head.group(1))) < 0.05, \
        a.stdout[:2000]
    return "%s: hottest line %s:%d (perf %.1f %% there, its top %.1f %%, tolerance %.1f " \
        "points from %d and %d signals); %d instructions" % (
            fn, os.path.basename(ours["file"]), ours["line"], 100 * mine, 100 * top, 100 * tol,
            n_ours, n_perf, len(insns))


def test_corrupt_line_tables_are_one_line_and_status_2():
    """A copy of loops whose .debug_line, or whose .debug_info, has a unit
    of an impossible DWARF version: --lines and annotate say so on one line
    naming the file, with status 2 (the fuzz target fuzz_lines runs the
    same path on arbitrary bytes)."""
    exe = prog("loops")
    r = run([exe, "0.2"], verbose=False)
    d = tempfile.mkdtemp(prefix="pc-e2e-badline-")
    heads = subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True,
                           check=True).stdout
    seen = []
    for name in (".debug_line", ".debug_info"):
        m = re.search(r"\]\s+%s\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)" % re.escape(name), heads)
        assert m, heads
        b = bytearray(open(exe, "rb").read())
        at = int(m.group(1), 16) + 4          # the first unit's version
        b[at:at + 2] = b"\x63\x00"
        bad = os.path.join(d, "loops" + name.replace(".", "-"))
        open(bad, "wb").write(b)
        os.chmod(bad, 0o755)
        for argv in (("report", "--lines", bad, r.path()),
                     ("annotate", bad, r.path(), "two_loops")):
            p = pcprof(*argv)
            lines = p.stderr.splitlines()
            assert p.returncode == 2 and len(lines) == 1 and \
                lines[0].startswith("pcprof: '%s': corrupt DWARF" % bad), (argv, p.stderr)
        seen.append(lines[0].split(": ", 2)[2])
    return "; ".join(seen)
