# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of names as data: a program's thread, function and file
names reach pcprof's text and CSV escaped (label.c's text_escape), never
as bytes a terminal acts on. oddnames (tests/progs/oddnames.c) runs a
thread that names itself ESC "]0;owned" BEL, a newline, a backslash and
"x", in a function whose symbol holds ESC "[2J", BEL and DEL; it is run
from a file whose name holds a newline, a backslash and ESC "[31m"."""

import csv
import io
import json
import os
import re
import shutil
import tempfile

from pctest import prog
from test_cli import pcprof

THREAD = "\x1b]0;owned\a\n\\x"
FUNC = "odd\x1b[2J\awork\x7f"
EXE = "odd\nprog\\\x1b[31m"
# as text_escape writes them
ESCAPED = {
    THREAD: r"\x1b]0;owned\x07\n\\x",
    FUNC: r"odd\x1b[2J\x07work\x7f",
    EXE: r"odd\nprog\\\x1b[31m",
}


def controls(text):
    """The characters of text that a terminal acts on: C0 controls but the
    table's own newlines and tabs, DEL, and C1 controls."""
    return sorted({"%#x" % ord(c) for c in text
                   if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f})


def recorded():
    """oddnames run by pcprof run --stacks from its odd file name: the
    directory, the executable, its profile, and run's own report."""
    d = tempfile.mkdtemp(prefix="pc-e2e-names-")
    exe = os.path.join(d, EXE)
    shutil.copy(prog("oddnames"), exe)
    rdir = os.path.join(d, "run")
    p = pcprof("run", "--stacks", "-o", rdir, "--", exe, "0.3", cwd=d, timeout=120)
    assert p.returncode == 0, p.stderr
    j = json.loads(pcprof("report", "--format", "json", rdir).stdout)
    assert [x["path"] for x in j["processes"]] == [exe], j["processes"]
    return d, exe, j["processes"][0]["profile"], p.stderr


def test_names_in_text_and_csv_are_escaped():
    """Every text and CSV output of the run (pcprof run's own report,
    report of the run and of the executable, --by-thread, --callgraph,
    --lines, folded, diff as text and markdown, annotate) holds no control
    character but newlines and tabs, and shows the three names escaped:
    each table row stays one line, its columns where they belong, and CSV
    has as many fields in every row as in its header. JSON keeps the
    names as they are."""
    d, exe, gmon, run_report = recorded()
    assert not controls(run_report), (controls(run_report), run_report)
    outs = {"run": run_report}
    for key, args in (
            ("text", ("report", os.path.dirname(gmon))),
            ("csv", ("report", "--format", "csv", os.path.dirname(gmon))),
            ("threads", ("report", "--by-thread", os.path.dirname(gmon))),
            ("threads-csv", ("report", "--by-thread", "--format", "csv", exe, gmon)),
            ("callgraph", ("report", "--callgraph", exe, gmon)),
            ("lines", ("report", "--lines", exe, gmon)),
            ("lines-csv", ("report", "--lines", "--format", "csv", exe, gmon)),
            ("folded", ("report", "--format", "folded", exe, gmon)),
            ("diff", ("diff", "--base", exe, gmon, "--new", exe, gmon)),
            ("markdown", ("diff", "--format", "markdown", "--base", exe, gmon,
                          "--new", exe, gmon)),
            ("annotate", ("annotate", "--asm", exe, gmon, FUNC))):
        p = pcprof(*args, cwd=d)
        assert p.returncode in (0, 1) and not (p.returncode and key != "diff"), \
            (key, p.returncode, p.stderr)
        assert not controls(p.stdout + p.stderr), (key, controls(p.stdout + p.stderr),
                                                   p.stdout + p.stderr)
        outs[key] = p.stdout
    f, x, t = ESCAPED[FUNC], ESCAPED[EXE], ESCAPED[THREAD]
    # the function's row: its samples, the program's file name as its object
    row = r"^\s+[\d.]+\s+[\d.]+%\s+[\d.]+%\s+\d+\s+" + re.escape(x) + r"\s+" + \
        re.escape(f) + "$"
    for key in ("run", "text"):
        assert re.search(row, outs[key], re.M), (key, outs[key])
        assert re.search(r"^\s+[\d.]+\s+[\d.]+%\s+\d+\s+2\s+" + re.escape(x) + "$",
                         outs[key], re.M), (key, outs[key])
    threads = [l for l in outs["threads"].splitlines() if t in l]
    assert len(threads) == 1 and threads[0].endswith("  " + x) and \
        re.match(r"^\s+[\d.]+\s+[\d.]+%\s+\d+\s+\d+\s+", threads[0]), outs["threads"]
    for key in ("csv", "threads-csv", "lines-csv"):
        rows = list(csv.reader(io.StringIO(outs[key])))
        assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), (key, rows)
        named = [dict(zip(rows[0], r)) for r in rows[1:]]
        if key == "csv":
            assert {"object": x, "function": f} in \
                [{"object": r["object"], "function": r["function"]} for r in named], named
        elif key == "threads-csv":
            assert [(r["thread"], r["program"]) for r in named] == [(t, x)], named
        else:
            assert f in [r["function"] for r in named], named
    assert re.search(r"^\[\d+\] " + re.escape(f) + "$", outs["callgraph"], re.M), \
        outs["callgraph"]
    assert re.search(re.escape(f) + r" \(" + re.escape(x) + r"\)", outs["lines"]), \
        outs["lines"]
    assert re.search(r"(^|;)" + re.escape(f) + r" \d+$", outs["folded"], re.M), outs["folded"]
    assert re.search(r"\s" + re.escape(f) + "$", outs["diff"], re.M), outs["diff"]
    assert outs["annotate"].startswith(f + " in " + x + ": "), outs["annotate"][:300]
    # JSON: the names themselves, JSON's escapes undone
    j = json.loads(pcprof("report", "--by-thread", "--format", "json", exe, gmon).stdout)
    assert [th["name"] for th in j["threads"]] == [THREAD], j
    j = json.loads(pcprof("report", "--format", "json", exe, gmon).stdout)
    assert FUNC in [fn["name"] for fn in j["functions"]], j["functions"]
    return "%d outputs; thread %s, function %s, program %s" % (len(outs), t, f, x)


def test_file_names_in_messages_are_escaped():
    """A message that quotes a file name is one line, its name escaped:
    a profile, a stacks file, an output and a command that are not there,
    and a file that is not a profile."""
    d = tempfile.mkdtemp(prefix="pc-e2e-names-")
    exe = os.path.join(d, EXE)
    shutil.copy(prog("oddnames"), exe)
    gone = os.path.join(d, "gone\x1b]0;owned\a\n")
    junk = os.path.join(d, "junk\x1b[2J\n")
    open(junk, "w").write("not a profile\n")
    seen = 0
    for args, name in ((("report", exe, gone), gone),
                       (("report", exe, junk), junk),
                       (("flame", "-o", os.path.join(d, "f.svg"), exe, junk), junk),
                       (("merge", "-o", os.path.join(d, "m.out"), junk), junk),
                       (("annotate", exe, junk, FUNC), junk),
                       (("compare", "--runs", "2", "--base", gone, "--new", exe), gone)):
        p = pcprof(*args, cwd=d)
        lines = p.stderr.splitlines()
        assert p.returncode == 2 and len(lines) == 1, (args, p.returncode, p.stderr)
        assert not controls(p.stderr), (args, p.stderr)
        want = name.replace("\\", "\\\\").replace("\n", "\\n").replace("\x1b", "\\x1b") \
            .replace("\a", "\\x07")
        assert want in lines[0], (args, want, lines[0])
        seen += 1
    return "%d messages" % seen


def test_names_on_the_paths_issue_26_added_are_escaped():
    """What issue 26 added prints names too: the commands on a run
    directory with no EXE, an unknown --process (which lists the programs
    there are), --processes, the table of many processes summed by
    program, and the line that names a process still running. None lets a
    control character through; each shows the program's name escaped."""
    d, exe, gmon, _ = recorded()
    rdir = os.path.dirname(gmon)
    base = ESCAPED[EXE]
    f = ESCAPED[FUNC]
    outs = {}
    for key, args, status in (
            ("callgraph", ("report", "--callgraph", rdir), 0),
            ("lines", ("report", "--lines", rdir), 0),
            ("folded", ("report", "--format", "folded", rdir), 0),
            ("annotate", ("annotate", "--asm", rdir, FUNC), 0),
            ("processes", ("report", "--processes", rdir), 0),
            ("unknown", ("report", "--process", "nosuch", rdir), 2)):
        p = pcprof(*args, cwd=d)
        assert p.returncode == status, (key, p.returncode, p.stderr)
        assert not controls(p.stdout + p.stderr), (key, controls(p.stdout + p.stderr),
                                                   p.stdout + p.stderr)
        outs[key] = p.stdout + p.stderr
    assert re.search(r"^\[\d+\] " + re.escape(f) + "$", outs["callgraph"], re.M), \
        outs["callgraph"]
    assert re.search(r"(^|;)" + re.escape(f) + r" \d+$", outs["folded"], re.M), outs["folded"]
    assert outs["annotate"].startswith(f + " in " + base + ": "), outs["annotate"][:300]
    assert base in outs["unknown"] and len(outs["unknown"].splitlines()) == 1, outs["unknown"]
    # 12 processes: summed by program, the name once, escaped
    many = os.path.join(d, "many")
    p = pcprof("run", "-o", many, "--", "sh", "-c",
               'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do "$0" 0.02; done', exe,
               cwd=d, timeout=120)
    assert p.returncode == 0, p.stderr
    assert not controls(p.stderr), (controls(p.stderr), p.stderr)
    assert re.search(r"\b12\s+" + re.escape(base) + "$", p.stderr, re.M), p.stderr
    # a process left running: named on one line, escaped
    bg = os.path.join(d, "bg")
    # the shell ends once the child's libpc has made its live file
    p = pcprof("run", "-o", bg, "--", "sh", "-c",
               '"$0" 1 & until [ -e "$1/.pcprof.$!.live" ]; do sleep 0.05; done',
               exe, bg, cwd=d, timeout=120)
    assert p.returncode == 0, p.stderr
    assert not controls(p.stderr), (controls(p.stderr), p.stderr)
    running = [l for l in p.stderr.splitlines() if "still running" in l]
    assert len(running) == 1 and base in running[0], p.stderr
    return "%d outputs and the run tables; program %s" % (len(outs) + 2, base)
