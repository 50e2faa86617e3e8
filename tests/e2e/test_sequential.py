# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of pcprof compare's sequential gate: after each pair of
runs from the third a side it says regressed, unchanged or undecided, and
stops at the first look that decides. tests/progs/regress.c's builds:
regress-slow's stage_transform (40 % of the work) does 20 % more;
regress-again is regress-base built a second time from the same source."""

import glob
import json
import os
import re
import tempfile

from pctest import prog
from test_cli import pcprof
from test_compare import at_20khz, compare, scale

# the tests here run pcprof compare, whose runs are timed: one worker, in order
SHARED = True


def test_sequential_decides_a_20_percent_regression_within_5_runs_a_side():
    """regress-base against regress-slow, --budget 20s (some 30 runs a side
    allowed): exit 1, "regressed" after 5 runs a side at most, stage_transform
    named first, and the runs it did not need never made."""
    # where task-clock samples at the rate asked: half of scale()'s work
    # at 20 kHz, some 4600 samples a run where 0.25 at 10 kHz had some
    # 4100, for half the CPU (3.6 to 5.0 s of CPU to 1.9 to 2.0, at a load
    # average of 4 on 2 CPUs; stage_transform +19 to +21 % at p 3e-6 to
    # 1e-5 after 3 runs a side, as at 10 kHz). Where the timer is held to
    # the kernel's tick, a run's signals are its seconds': runs as before
    hz, s = at_20khz()
    p = compare("--budget", "20s", "--format", "json", *hz, "--base", prog("regress-base"), s,
                "--new", prog("regress-slow"), s)
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    j = json.loads(p.stdout)
    q, e = j["sequential"], j["experiment"]
    assert q["verdict"] == "regressed" and 3 <= q["runs"] <= 5, q
    # the budget's runs a side, from the warm-up pair's speed: some 30 on
    # a quiet machine, 6 at load 15 (3 s a run); the gate stopped short
    # of them (it once asked for twice its runs, which load 15 failed)
    assert q["max_runs"] > q["runs"] and q["first_look_runs"] == 3, q
    # the runs made a side; compared, less any left out as disturbed
    assert e["runs"] == q["runs"] == q["runs_made"]["base"] == q["runs_made"]["new"], (e, q)
    assert q["runs_compared"] == {"base": j["base"]["runs"], "new": j["new"]["runs"]}, q
    assert q["left_out"] == 2 * q["runs"] - j["base"]["runs"] - j["new"]["runs"], q
    assert 0 < q["look_alpha"] < j["alpha"] and j["exit_status"] == 1, q
    top = j["functions"][0]
    assert top["name"] == "stage_transform" and top["status"] == "slower", top
    assert 0.1 < top["change"] < 0.3, top
    # a look after each pair from the third, each said on standard error
    looks = re.findall(r"after (\d+) runs? a side: (\w+)", p.stderr)
    assert looks and looks[-1] == (str(q["runs"]), "regressed"), p.stderr
    assert [int(n) for n, _ in looks] == list(range(3, q["runs"] + 1)), looks
    return "%d runs a side at %d Hz, %.0f and %.0f samples a run; %s %+.1f %%, p %.2g" % (
        q["runs"], j["base"]["rate_hz"], j["base"]["program_seconds"] * j["base"]["rate_hz"],
        j["new"]["program_seconds"] * j["new"]["rate_hz"], top["name"], 100 * top["change"],
        top["p_adjusted"])


def test_sequential_identical_builds_are_unchanged_at_threshold_5():
    """regress-base against regress-again at --threshold 5, --budget 15s:
    exit 0, "unchanged" before the budget's end, and the text says so in its verdict line. In
    bench/sequential_power.py 96.5 to 98.5 % of such comparisons were
    decided within 17 runs a side of 0.6 s (10 s); 40 s leaves room for a
    busy machine (at a load of 10 a run took 1.9 s, and 15 s allowed 5
    runs a side: undecided), and a decided gate stops long before it."""
    # as many samples a run as scale() at 10 kHz for half the CPU, as the
    # test above: at a load of 9 on 2 CPUs this gate made 22 s of CPU
    hz, s = at_20khz()
    p = compare("--budget", "40s", "--threshold", "5", *hz, "--base", prog("regress-base"), s,
                "--new", prog("regress-again"), s)
    assert p.returncode == 0, (p.returncode, p.stdout[-3000:], p.stderr[-2000:])
    m = re.search(r"^verdict: (\w+) after (\d+) runs a side(?:, (\d+) left out as disturbed "
                  r"\((\d+) base runs? and (\d+) new compared; | \()looks at 3 to (\d+) runs "
                  r"a side, this one at level ([0-9.e-]+) of alpha 0.01\): (.*)$", p.stdout, re.M)
    assert m, p.stdout
    assert m.group(1) == "unchanged", p.stdout
    assert 3 <= int(m.group(2)) <= int(m.group(6)), m.groups()
    assert m.group(8) == "every change of 5% or more ruled out", m.groups()
    # the verdict's runs are the runs made a side, as the runs: line says;
    # where disturbed runs were left out (diff_disturbed.c, five runs a
    # side or more) it says how many, and how many of each side's were
    # compared, as the disturbed: line and the sides' lines do
    made = re.search(r"^runs: (\d+) runs a side in turns", p.stdout, re.M)
    assert made and made.group(1) == m.group(2), p.stdout
    left = re.findall(r"\S+ left out \(", p.stdout)
    assert len(left) == int(m.group(3) or 0), (left, m.groups())
    if m.group(3):
        sides = re.findall(r"^(?:base|new) +\S+: (\d+) runs,", p.stdout, re.M)
        assert sides == [m.group(4), m.group(5)], (sides, m.groups())
        assert int(m.group(4)) + int(m.group(5)) + len(left) == 2 * int(m.group(2)), \
            m.groups()
    return "unchanged after %s runs a side (%s left out)" % (m.group(2), m.group(3) or 0)


def test_sequential_undecided_fail_exits_1_with_the_smallest_change_ruled_out():
    """A budget of one look (3 runs a side) asked to rule out 0.5 % of
    identical builds: undecided, exit 1 with --undecided fail, the smallest change the
    runs could rule out given, above 0.5 %, the functions that were open
    named with theirs, in the text and in the JSON; pcprof diff --looks 3
    on the kept runs gives the same look."""
    # scale()'s runs (about 0.5 s here), so that the 1 s budget ends at the
    # first look whatever the machine's speed: at 20 kHz on half the work,
    # a quiet machine fit a fourth run a side in it and looked again
    s = scale()
    d = os.path.join(tempfile.mkdtemp(prefix="pc-e2e-seq-"), "runs")
    p = compare("--budget", "1s", "--threshold", "0.5", "--undecided", "fail", "-o", d,
                "--base", prog("regress-base"), s, "--new", prog("regress-again"), s)
    assert p.returncode == 1, (p.returncode, p.stdout[-3000:], p.stderr[-2000:])
    m = re.search(r"^verdict: undecided after 3 runs a side \(one look, at alpha 0.01\): "
                  r"changes of ([0-9.]+)% or more ruled out, not of 0.5% \(the functions "
                  r"marked open; the whole program ([0-9.]+)%\); the budget's end$",
                  p.stdout, re.M)
    assert m and float(m.group(1)) > 0.5, p.stdout
    assert "pcprof compare: no significant regression" in p.stdout, p.stdout
    # the table's open rows, each with the smallest change it rules out
    opened = re.findall(r"  open ([0-9.]+)%\s+(\S+)$", p.stdout, re.M)
    assert any(f.startswith("stage_") for _, f in opened), p.stdout
    assert all(float(x) > 0.5 for x, _ in opened), opened
    # the verdict's figure is the largest, of every open row (the table
    # shows --top of them) and the program
    assert max([float(x) for x, _ in opened] + [float(m.group(2))]) <= float(m.group(1)), \
        p.stdout
    mins = re.search(r"changes of 0.5% and ([0-9.e-]+) s at least", p.stdout).group(1)
    q = pcprof("diff", "--looks", "3", "--threshold", "0.5", "--min-seconds", mins,
               "--undecided", "fail", "--format", "json",
               "--base", prog("regress-base"), *sorted(glob.glob(d + "/base-*")),
               "--new", prog("regress-again"), *sorted(glob.glob(d + "/new-*")))
    assert q.returncode == 1, (q.returncode, q.stderr)
    j = json.loads(q.stdout)
    assert j["sequential"]["verdict"] == "undecided" and j["exit_status"] == 1, j["sequential"]
    assert abs(j["sequential"]["ruled_out"] - float(m.group(1)) / 100) < 0.0006, \
        (j["sequential"], m.group(1))
    assert j["sequential"]["undecided_fails"] and j["sequential"]["ruled_out"] > 0.005, j
    open_rows = [f for f in j["functions"] if f.get("undecided")]
    assert open_rows and all(f["ruled_out"] > 0.005 for f in open_rows), open_rows
