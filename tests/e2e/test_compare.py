# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of pcprof compare, the CI gate in one command: it runs
tests/progs/regress.c's builds in turns under libpc.so and gates on them.
regress-slow's stage_transform (40 % of the work) does 20 % more;
regress-again is regress-base built a second time from the same source."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from pctest import BUILD, clean_env, flame_fills, prog, tick_factor
from test_cli import pcprof

# the tests here run pcprof compare, whose runs are timed: one worker, in order
SHARED = True

# A run: one thread, SCALE s of CPU or so (about 0.4 s of wall time at the
# 10 kHz pcprof compare samples at here). With 4 s a side, 10 runs: the 20 %
# slowdown is about 10 standard errors, where Holm's threshold over the
# functions is 3.2.
SCALE = 0.25


def scale():
    """SCALE, 3 times as long where task-clock is refused and the timer is
    held to the kernel tick (a third of the independent samples)."""
    return "%g" % (SCALE * tick_factor({"PC_TIMER": "taskclock"}))


def at_20khz():
    """pcprof compare's rate and a run's work for as many samples a run as
    scale() at the default 10 kHz, for half the CPU: --hz 20000 and half of
    SCALE, where task-clock samples at the rate asked (0.125 at 20 kHz,
    some 4000 samples a run, as 0.25 at 10 kHz). Where the timer is held
    to the kernel's tick, a run's signals are its seconds': the default
    rate and scale(), as before."""
    if tick_factor({"PC_TIMER": "taskclock"}) != 1:
        return [], scale()
    return ["--hz", "20000"], "%g" % (SCALE / 2)


def compare(*args, tmp=None, timeout=180):
    """pcprof compare with TMPDIR a fresh directory (returned), to see what
    it leaves behind there."""
    tmp = tmp or tempfile.mkdtemp(prefix="pc-e2e-compare-tmp-")
    t0 = time.monotonic()
    p = pcprof("compare", *args, env={"TMPDIR": tmp}, timeout=timeout)
    p.wall = time.monotonic() - t0
    p.tmp = tmp
    return p


def budget_kept(p, e, budget):
    """compare --budget BUDGET kept to its budget: it made
    floor(BUDGET / the warm-up pair's longer run) runs a side at most, 3
    at least; and where the warm-up pair ran at this machine's usual speed
    (a run of 0.25 s of CPU at 10 kHz: 0.4 s alone; of 0.125 at 20 kHz,
    at_20khz(): 0.23 s; under 0.6 either way), it ended
    within 30 s. On a machine busy enough to stretch the runs (41 to 72 s
    at a load average of 15 to 20, beside the whole suite, where runs
    judged disturbed were made again) the time is the load's: the runs'
    count is asked alone. The bound asked, or None."""
    m = re.search(r"warm-up pair ([\d.]+) s and ([\d.]+) s: up to (\d+) runs", p.stderr)
    assert m, p.stderr
    longer = max(float(m.group(1)), float(m.group(2)))
    # the pair's times are rounded to 10 ms: one run more or less
    assert abs(int(m.group(3)) - max(3, int(budget // longer))) <= 1, (m.group(0), budget)
    assert e["runs"] <= int(m.group(3)), (e, m.group(0))
    if longer >= 0.6:
        return None
    assert p.wall < 30, (p.wall, m.group(0))
    return 30


def test_compare_flags_the_slower_stage_first_with_exit_1_in_under_30_s():
    """regress-base against regress-slow with a 4 s budget a side: exit 1,
    stage_transform first, in under 30 s of wall time (budget_kept(): on
    a machine too busy for that, the runs the budget allows); the runs were made in turns after a warm-up pair, the speed
    allowance is its own figure, no function shows a change of exactly 0,
    the differential flame graph has stage_transform red, and the
    temporary runs are gone."""
    d = tempfile.mkdtemp(prefix="pc-e2e-compare-")
    svg = os.path.join(d, "diff.svg")
    # the same samples a run as scale() at 10 kHz, for half the CPU: the
    # gate stops at its first look (3 runs a side) either way
    hz, s = at_20khz()
    p = compare("--budget", "4s", "--format", "json", "--flame", svg, *hz,
                "--base", prog("regress-base"), s, "--new", prog("regress-slow"), s)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    j = json.loads(p.stdout)
    bound = budget_kept(p, j["experiment"], 4)
    top = j["functions"][0]
    assert top["name"] == "stage_transform" and top["status"] == "slower", top
    assert 0.1 < top["change"] < 0.3 and j["regressions"] >= 1, j["functions"][:3]
    e = j["experiment"]
    assert e["warmup_pairs"] == 1 and e["runs"] >= 3 and e["budget_seconds"] == 4, e
    assert j["base"]["runs"] == j["new"]["runs"] == e["runs"], (j["base"], j["new"])
    assert e["timer"] in ("taskclock", "posix") and e["directory"] is None, e
    assert j["speed_judged"] and j["speed_functions"] >= 3, j
    # no function is the speed's reference, pinned at exactly 0
    for f in j["functions"]:
        if f["p_adjusted"] is not None:
            assert f["change"] != 0, f
    # red where the verdict is slower, grey where it found no change
    fills = flame_fills(svg)
    assert all(r >= 225 and g < 80 and b < 80 for r, g, b in fills["stage_transform"]), fills
    same = [f["name"] for f in j["functions"] if not f["significant"] and f["name"] in fills]
    assert same, fills
    for n in same:
        assert all(r == g == b for r, g, b in fills[n]), (n, fills[n])
    assert os.listdir(p.tmp) == [], os.listdir(p.tmp)
    return "stage_transform %+.1f%% (p %.2g) in %d runs a side of %.0f and %.0f samples; " \
        "%.1f s of wall time%s" % (
            100 * top["change"], top["p_adjusted"], e["runs"],
            j["base"]["program_seconds"] * j["base"]["rate_hz"],
            j["new"]["program_seconds"] * j["new"]["rate_hz"], p.wall,
            " (under 30 s)" if bound else " (runs stretched by the load: not timed)")


def test_compare_of_two_builds_of_one_source_stays_quiet_and_keeps_its_runs():
    """regress-base against regress-again (the same source, built twice):
    exit 0; the markdown verdict for a pull request, with the runs, the
    timer and the speed allowance on lines of their own; -o keeps every
    run, in turns, with the program's output beside each. At --alpha
    0.001, a false alarm here is one in a thousand or rarer."""
    d = os.path.join(tempfile.mkdtemp(prefix="pc-e2e-compare-"), "runs")
    # the same samples a run as scale() at 10 kHz, for half the CPU
    hz, s = at_20khz()
    p = compare("--runs", "6", "--alpha", "0.001", "--format", "markdown", "-o", d, *hz,
                "--base", prog("regress-base"), s, "--new", prog("regress-again"), s)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    assert lines[0] == "**pcprof compare: no significant regression**", lines
    runs = [l for l in lines if l.startswith("- runs: ")]
    assert runs and runs[0].startswith("- runs: 6 runs a side in turns after a warm-up pair"), lines
    assert any(l.startswith("- timer: ") for l in lines), lines
    speed = [l for l in lines if l.startswith("- speed: ")]
    assert speed and re.match(r"- speed: new runs [\d.]+% (slower|faster) than base \(a "
                              r"robust mean over \d+ functions\), allowed for$", speed[0]), lines
    assert "No significant change." in p.stdout
    names = sorted(os.listdir(d))
    assert names == sorted(["warmup-base", "warmup-new"] +
                           ["%s-%03d" % (side, i) for side in ("base", "new")
                            for i in range(1, 7)]), names
    for n in names:
        assert os.path.exists(os.path.join(d, n, "gmon.out")), n
        out = open(os.path.join(d, n, "output")).read()
        assert out.startswith("regress: "), (n, out)
    # in turns, one after the other: each run's output was last written
    # (when it ended) after the run before it in the order
    # warm-up pair, base-001, new-001, base-002, ...
    ends = {n: os.stat(os.path.join(d, n, "output")).st_mtime_ns for n in names}
    order = ["warmup-base", "warmup-new"] + ["%s-%03d" % (side, i) for i in range(1, 7)
                                             for side in ("base", "new")]
    assert all(ends[x] <= ends[y] for x, y in zip(order, order[1:])), \
        sorted(ends, key=ends.get)
    assert p.stderr.startswith("pcprof: compare: warm-up pair "), p.stderr
    # a second comparison into the same directory is refused: its runs
    # would mix with these
    again = compare("--runs", "2", "-o", d, "--base", prog("regress-base"), "0.01",
                    "--new", prog("regress-again"), "0.01")
    assert again.returncode == 2 and "not empty" in again.stderr, again.stderr
    samples = [json.loads(pcprof("report", "--format", "json", prog(exe),
                                 os.path.join(d, n, "gmon.out")).stdout)["total_samples"]
               for exe, n in (("regress-base", "base-001"), ("regress-again", "new-001"))]
    return "%s; %d runs kept; %d and %d samples in the first run a side" % (
        speed[0][9:], len(names), samples[0], samples[1])


def test_compare_text_output_names_the_experiment():
    s = "0.05"
    p = compare("--runs", "2", "-q", "--base", prog("regress-base"), s,
                "--new", prog("regress-again"), s)
    assert p.returncode in (0, 1), p.stderr
    assert p.stderr == "", p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("pcprof compare: "), lines
    assert lines[1].startswith("runs: 2 runs a side in turns after a warm-up pair, "), lines
    assert re.match(r"timer: (taskclock|posix) at \d+ Hz", lines[2]), lines
    assert lines[3].startswith("took: ") and "the runs are in" not in lines[3], lines
    assert any(l.startswith("speed: ") for l in lines), lines


def test_compare_program_run_by_a_script():
    """--program: the commands are shell scripts that run the benchmark, a
    build of it in each of two directories; the gate compares the
    benchmark's processes, named from each side's runs, and not the
    shell's."""
    d = tempfile.mkdtemp(prefix="pc-e2e-compare-")
    for side in ("old", "new"):
        os.mkdir(os.path.join(d, side))
        shutil.copy(prog("regress-base" if side == "old" else "regress-again"),
                    os.path.join(d, side, "bench"))
    p = compare("--runs", "2", "-q", "--format", "json", "--program", "bench",
                "--base", "sh", "-c", "%s/old/bench 0.1 && true" % d,
                "--new", "sh", "-c", "%s/new/bench 0.1 && true" % d)
    assert p.returncode in (0, 1), p.stderr
    j = json.loads(p.stdout)
    assert j["base"]["executable"] == os.path.join(d, "old", "bench"), j["base"]
    assert j["new"]["executable"] == os.path.join(d, "new", "bench"), j["new"]
    names = [f["name"] for f in j["functions"]]
    assert "stage_transform" in names, names
    # each run's profiles are the benchmark's, not the shell's gmon.out
    for side in ("base", "new"):
        for files in j[side]["profiles"]:
            assert files and all(os.path.basename(f).startswith("gmon.out.bench.")
                                 for f in files), files
    p = compare("--runs", "2", "--program", "nothing-of-the-kind",
                "--base", "sh", "-c", "%s/old/bench 0.01" % d,
                "--new", "sh", "-c", "%s/new/bench 0.01" % d)
    failed(p, "--program 'nothing-of-the-kind': the base command ran no such program")


def running(marker, but=None):
    """The pids of processes whose command line holds marker, but pid but."""
    pids = []
    for d in os.listdir("/proc"):
        if d == str(but):
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if marker.encode() in f.read().split(b"\0"):
                    pids.append(int(d))
        except (OSError, ValueError):
            pass
    return pids


def test_compare_stopped_by_a_signal_stops_its_command_and_leaves_nothing():
    """SIGTERM to pcprof compare in the middle of a run: the command (its
    whole process group) is stopped, the runs are removed, and compare
    ends by the same signal."""
    tmp = tempfile.mkdtemp(prefix="pc-e2e-compare-tmp-")
    marker = "29.0625"	# a scale no other test runs, to find the command by
    p = subprocess.Popen([os.path.join(os.path.abspath(BUILD), "pcprof"), "compare",
                          "--runs", "2", "--base", prog("regress-base"), marker,
                          "--new", prog("regress-base"), marker],
                         env=clean_env({"TMPDIR": tmp}, profiled=False),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    # compare's own command line holds the marker too: the command's is
    # another process's
    while not running(marker, p.pid) and time.monotonic() - t0 < 20:
        time.sleep(0.05)
    assert running(marker, p.pid), "the command never started"
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=30)
    took = time.monotonic() - t0
    assert rc == -signal.SIGTERM, (rc, p.stderr.read())
    t1 = time.monotonic()
    while running(marker) and time.monotonic() - t1 < 5:
        time.sleep(0.05)
    assert not running(marker), "the command outlived compare"
    assert os.listdir(tmp) == [], os.listdir(tmp)
    # a stop at any moment of compare's start, before or after its
    # directory is made (it once came between, and the directory stayed)
    left = []
    for i in range(10):
        q = subprocess.Popen([os.path.join(os.path.abspath(BUILD), "pcprof"), "compare",
                              "--runs", "2", "--base", prog("regress-base"), marker,
                              "--new", prog("regress-base"), marker],
                             env=clean_env({"TMPDIR": tmp}, profiled=False),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.002 * i)
        q.send_signal(signal.SIGTERM)
        assert q.wait(timeout=30) == -signal.SIGTERM
        left += os.listdir(tmp)
    assert not left, left
    return "stopped in %.1f s of a 29 s run; 10 stops at start, nothing left" % took


def failed(p, *want):
    """One line on standard error holding each of want, exit 2, nothing
    on standard output, and nothing left in TMPDIR."""
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1, (p.returncode, p.stderr)
    for w in want:
        assert w in err[0], (w, err[0])
    assert p.stdout == "", p.stdout
    assert os.listdir(p.tmp) == [], os.listdir(p.tmp)
    return err[0]


def test_compare_failures_get_one_line_exit_2_and_leave_nothing():
    """A command that exits non-zero, one killed by a signal, a missing
    command, a static program, a command that exits without writing a
    profile, bad usage: one line naming the command and what went wrong,
    exit 2, and neither the runs' directory (-o) nor the flame graph nor
    anything in TMPDIR left behind."""
    d = tempfile.mkdtemp(prefix="pc-e2e-compare-")
    runs, svg = os.path.join(d, "runs"), os.path.join(d, "g.svg")
    base = ["--base", prog("regress-base"), "0.02"]
    keep = ["-o", runs, "--flame", svg]
    said = []
    p = compare(*keep, *base, "--new", "sh", "-c", "echo nope >&2; exit 3")
    said.append(failed(p, "the new command (warmup-new) exited with status 3",
                       "sh -c 'echo nope >&2; exit 3'", '"nope"'))
    p = compare(*keep, *base, "--new", "sh", "-c", "kill -TERM $$")
    said.append(failed(p, "was killed by signal 15 (Terminated)"))
    p = compare(*keep, *base, "--new", "/nonexistent/regress")
    said.append(failed(p, "the new command '/nonexistent/regress': command not found"))
    p = compare(*keep, "--base", prog("three-static"), "0.01", "--new", prog("regress-base"))
    said.append(failed(p, "cannot be profiled: it is statically linked"))
    # exits 0 by the exit_group system call: no atexit, no _exit, no profile
    p = compare(*keep, *base, "--new", sys.executable, "-c",
                "import ctypes; ctypes.CDLL(None).syscall(231, 0)")
    said.append(failed(p, "the new command (warmup-new) wrote no profile"))
    assert not os.path.exists(runs) and not os.path.exists(svg), os.listdir(d)
    # an empty -o directory is kept, and left empty
    os.mkdir(runs)
    p = compare("-o", runs, *base, "--new", "sh", "-c", "exit 1")
    failed(p, "exited with status 1")
    assert os.listdir(runs) == [], os.listdir(runs)
    for args, want in ((base, "no --new command after --base"),
                       (["--new", "true"], "no --base command"),
                       (["--budget", "soon", *base, "--new", "true"], "--budget 'soon'"),
                       (["--runs", "1", *base, "--new", "true"], "--runs '1'"),
                       (["--timer", "hrtimer", *base, "--new", "true"], "--timer 'hrtimer'"),
                       (["--runs", "3", "--budget", "5s", *base, "--new", "true"],
                        "--budget and --runs"),
                       ([*base, "--new"], "--new names no command")):
        p = compare(*args)
        assert p.returncode == 2 and p.stdout == "", (args, p.returncode, p.stdout)
        assert want in p.stderr.splitlines()[0], (args, p.stderr)
        assert os.listdir(p.tmp) == [], (args, os.listdir(p.tmp))
    return "; ".join(s[s.index("compare: ") + 9:][:60] for s in said)
