# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of pcprof diff, the CI regression gate: real profiles of
tests/progs/regress.c built three ways (regress-base; regress-slow, whose
stage_transform does 20 % more work, 40 % of the whole; regress-fast, where
it does 40 % less), compared as a CI job would."""

import itertools
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

from pctest import flame_fills, prog, run
from test_cli import pcprof

# Each run: 2 threads doing SCALE units of work (about SCALE s of CPU each),
# sampled at HZ. What limits the tests is each function's sampling noise:
# at 1000 samples a unit of work the 20 % slowdown is about 7.5 standard
# errors, where Holm's threshold over the 4 functions is t = 4 on 8 degrees
# of freedom. But the machine's speed is what the other three functions
# agree on, each one's change known to about +-4 % at 1000 samples a
# thread and run, and beside a CPU hog their noise once moved it by
# +14 %, taking most of the slowdown for the machine's (make check, 1 run
# in 13: docs/ci.md, "Few functions"). At 4000 each is known to about
# +-3 %, and the speed must be off by over 10 % to hide the slowdown.
# Those 4000 samples a thread and run were 2 units at 1000 Hz (48 s of CPU
# for the 12 runs), then 0.5 units at 4000 Hz, a task-clock rate (12 s);
# they are 0.25 units at 8000 Hz (6 s), the same counts and the same
# statistics.
HZ = 8000
SCALE = 0.25
# the tests here share RUNS: run.py runs them in one worker, in order
SHARED = True
RUNS = {}


# as docs/ci.md advises: the task-clock timer where perf events are allowed
TIMER = {"PC_TIMER": "taskclock", "PC_HZ": str(HZ)}


def samples_a_signal(env):
    """How much longer runs under env must be to hold as many independent
    samples: 1 where the timer samples at the rate asked, and the samples
    a signal carries where it is held to the kernel's tick (perf events
    refused: POSIX timers at 250 Hz, 16 samples a signal at 4000 Hz, 32 at
    8000)."""
    r = run([prog("regress-base"), "0.1", "1"], env=env)
    m = re.search(r"(\d+) samples \((\d+) signals\)", r.stderr)
    assert m, r.stderr
    ratio = int(m.group(1)) / max(1, int(m.group(2)))
    return 1 if ratio < 1.5 else ratio


def runs(variant, n):
    """n profiles of regress-VARIANT, made once for all the tests here. The
    three builds' runs are made in turns, as docs/ci.md advises, so that a
    machine that slows down or speeds up meanwhile weighs on each alike."""
    if not RUNS.get("base"):
        scale = "%g" % (SCALE * samples_a_signal(TIMER))
        for v in ["base", "slow", "fast", "base"] * 3:
            # with stacks, for the differential flame graph
            r = run([prog("regress-" + v), scale, "2"], verbose=False,
                    env=dict(TIMER, PC_STACKS="1"))
            assert r.status == 0, r.stderr
            RUNS.setdefault(v, []).append(r.path())
    assert len(RUNS[variant]) >= n
    return RUNS[variant][:n]


def diff(*args):
    return pcprof("diff", *args)


def diff_json(*args):
    p = diff("--format", "json", *args)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def sides(base, new, base_exe="regress-base", new_exe="regress-base"):
    return ["--base", prog(base_exe)] + list(base) + \
        ["--new", prog(new_exe)] + list(new)


# ------------------------------------------------------------ the gate

def test_diff_flags_a_20_percent_slowdown_first_and_exits_1():
    base, slow = runs("base", 3), runs("slow", 3)
    p = diff(*sides(base, slow, new_exe="regress-slow"))
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    first = p.stdout.splitlines()[0]
    assert first.startswith("pcprof diff: regression: stage_transform "), first
    rc, j = diff_json(*sides(base, slow, new_exe="regress-slow"))
    assert rc == 1 and j["verdict"] == "regression" and j["exit_status"] == 1
    top = j["functions"][0]
    assert top["name"] == "stage_transform" and top["status"] == "slower", top
    assert 0.1 < top["change"] < 0.3, top
    assert j["regressions"] == 1, [f for f in j["functions"] if f["significant"]]
    n = [json.loads(pcprof("report", "--format", "json", prog("regress-base"),
                           f).stdout)["total_samples"] for f in base]
    return "stage_transform %+.1f%%, p %.2g (Holm, %d functions); base runs of %s " \
        "samples" % (100 * top["change"], top["p_adjusted"], j["family_size"],
                     ", ".join("%d" % x for x in n))


def test_diff_false_alarms_on_identical_builds_stay_under_alpha():
    # Same build profiled 6 times: each of the 20 ways to split the runs
    # into 3 base and 3 new is one repetition of "profile twice, compare".
    pool = runs("base", 6)
    alarms = alarms_raw = 0
    smallest = 1.0
    splits = list(itertools.combinations(range(6), 3))
    assert len(splits) == 20
    for left in splits:
        base = [pool[i] for i in left]
        new = [pool[i] for i in range(6) if i not in left]
        rc, j = diff_json("--alpha", "0.01", *sides(base, new))
        alarms += rc == 1
        # the statistics alone, without the minimum effect
        rc, j = diff_json("--alpha", "0.01", "--threshold", "0",
                          "--min-seconds", "0", *sides(base, new))
        alarms_raw += rc == 1
        smallest = min([smallest] + [f["p_adjusted"] for f in j["functions"]
                                     if f["p_adjusted"] is not None])
    # expected at most 0.2 of 20 at alpha 0.01: one is already 5 %
    assert alarms <= 1 and alarms_raw <= 1, (alarms, alarms_raw)
    return "%d of 20 false alarms (%d without the minimum effect); smallest " \
        "adjusted p %.2g" % (alarms, alarms_raw, smallest)


def test_diff_reports_an_improvement_and_exits_0():
    base, fast = runs("base", 3), runs("fast", 3)
    rc, j = diff_json(*sides(base, fast, new_exe="regress-fast"))
    assert rc == 0 and j["verdict"] == "pass" and j["regressions"] == 0, j
    top = j["functions"][0]
    assert top["name"] == "stage_transform" and top["status"] == "faster", top
    assert -0.5 < top["change"] < -0.3, top
    p = diff(*sides(base, fast, new_exe="regress-fast"))
    assert p.returncode == 0
    assert p.stdout.startswith("pcprof diff: no significant regression: "
                               "1 function significantly faster"), p.stdout
    # reversed, the same change is a regression
    p = diff(*sides(fast, base, "regress-fast", "regress-base"))
    assert p.returncode == 1, p.stdout
    return "stage_transform %+.1f%%" % (100 * top["change"])


def test_diff_metrics_total_and_program():
    base, slow = runs("base", 3), runs("slow", 3)
    args = sides(base, slow, new_exe="regress-slow")
    _, self_ = diff_json(*args)
    rc, total = diff_json("--metric", "total", *args)
    assert rc == 1 and total["metric"] == "total", (
        rc, {k: v for k, v in total.items() if k != "functions"}, total["functions"][:6])
    # the function where the time went comes first, not its callers
    assert total["functions"][0]["name"] == "stage_transform", total["functions"][0]
    by = {f["name"]: f for f in total["functions"]}
    own = {f["name"]: f for f in self_["functions"]}
    # a leaf's total is its self time; worker, under all the work of both
    # threads, has no time of its own and the whole program's below it
    assert abs(by["stage_transform"]["new_seconds"] -
               own["stage_transform"]["new_seconds"]) < 1e-6
    assert abs(by["worker"]["base_seconds"] - total["base"]["program_seconds"]) < 0.01
    _, prog_ = diff_json("--metric", "program", *args)
    assert [f["name"] for f in prog_["functions"]] == ["[program]"]
    p = prog_["functions"][0]
    # the program's change is its functions' changes, added up, as measured
    _, raw = diff_json("--absolute", *args)
    assert raw["absolute"] and raw["speed_ratio"] == 1
    parts = sum(f["change_seconds"] for f in raw["functions"])
    assert abs(p["change_seconds"] - parts) < 0.01, (p, parts)
    assert p["p_value"] is not None and p["df"] > 0
    return "program %+.1f%% (%s)" % (100 * p["change"], p["status"])


def test_diff_lists_functions_that_appear_or_go():
    base, new = runs("base", 6)[:3], runs("base", 6)[3:]
    d = tempfile.mkdtemp(prefix="pc-diff-")
    renamed = os.path.join(d, "regress-renamed")
    # the same code with stage_emit renamed, as a refactoring would
    subprocess.run(["objcopy", "--redefine-sym", "stage_emit=stage_write",
                    prog("regress-base"), renamed], check=True)
    p = diff("--format", "json", "--base", prog("regress-base"), *base,
             "--new", renamed, *new)
    assert p.returncode == 0, p.stderr
    st = {f["name"]: f for f in json.loads(p.stdout)["functions"]}
    assert st["stage_emit"]["status"] == "gone", st["stage_emit"]
    assert st["stage_write"]["status"] == "appeared", st["stage_write"]
    assert st["stage_write"]["change"] is None
    p = diff("--format", "markdown", "--base", prog("regress-base"), *base,
             "--new", renamed, *new)
    assert "Appeared: `stage_write`" in p.stdout, p.stdout
    assert "Gone: `stage_emit`" in p.stdout, p.stdout
    # one run a side, in the short form: sampling noise only, said so
    p = diff(prog("regress-base"), base[0], new[0])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "One run a side" in p.stdout, p.stdout


def with_rate(path, rate, out):
    """A copy of the profile at path that claims another sampling rate: its
    every second longer or shorter alike, as on a slower or faster machine."""
    b = bytearray(open(path, "rb").read())
    off = 20
    while off < len(b):
        tag = b[off]
        if tag == 0:
            n, = struct.unpack_from("<I", b, off + 17)
            struct.pack_into("<I", b, off + 21, rate)
            off += 1 + 40 + 2 * n
        elif tag == 1:
            off += 1 + 20
        else:
            raise AssertionError("%s: tag %d" % (path, tag))
    open(out, "wb").write(b)
    return out


def test_diff_allows_for_a_slower_machine():
    base, new = runs("base", 6)[:3], runs("base", 6)[3:]
    d = tempfile.mkdtemp(prefix="pc-diff-")
    # the same runs on a machine 15 % slower throughout: HZ read as 0.87 HZ
    slow_hz = int(0.87 * HZ)
    slower = [with_rate(f, slow_hz, os.path.join(d, "slow%d" % i))
              for i, f in enumerate(new)]
    _, same = diff_json(*sides(base, new))
    rc, j = diff_json(*sides(base, slower))
    assert rc == 0 and j["regressions"] == 0, [f for f in j["functions"]
                                               if f["significant"]]
    assert j["speed_judged"], j
    assert abs(j["speed_ratio"] / same["speed_ratio"] - HZ / slow_hz) < 1e-3, \
        (j["speed_ratio"], same["speed_ratio"])
    # the text says the ratio the JSON gives: the two halves of the base
    # runs may differ by some percent themselves on a busy machine (13 %
    # once, under the e2e suite's own parallel workers), so "slower" is
    # not a given
    p = diff(*sides(base, slower))
    ratio = j["speed_ratio"]
    m = re.search(r"new runs ([0-9.]+)% (slower|faster) than base \(a robust mean "
                  r"over (\d+) functions\), allowed for", p.stdout)
    assert m, p.stdout
    said = float(m.group(1)) * (1 if m.group(2) == "slower" else -1)
    assert int(m.group(3)) == j["speed_functions"] >= 3, (m.group(0), j["speed_functions"])
    # JSON's ratio has 6 digits, the text's percentage one decimal
    assert abs(said - 100 * (ratio - 1)) <= 0.051, (ratio, p.stdout)
    # as measured, every function takes HZ / slow_hz times the seconds
    _, raw = diff_json("--absolute", *sides(base, new))
    _, rawslow = diff_json("--absolute", *sides(base, slower))
    assert rawslow["speed_ratio"] == 1 and not rawslow["speed_judged"]
    slowed = {g["name"]: g for g in rawslow["functions"]}
    for f in raw["functions"]:
        g = slowed[f["name"]]
        assert abs(g["new_seconds"] - f["new_seconds"] * HZ / slow_hz) < 1e-5, (f, g)
    # and a real slowdown still shows through the allowance
    slow = [with_rate(f, slow_hz, os.path.join(d, "slower%d" % i))
            for i, f in enumerate(runs("slow", 3))]
    rc, j = diff_json(*sides(base, slow, new_exe="regress-slow"))
    assert rc == 1 and j["functions"][0]["name"] == "stage_transform"
    assert 0.1 < j["functions"][0]["change"] < 0.3, j["functions"][0]
    return "speed ratio %.3f allowed for; stage_transform %+.1f%% through it" % (
        j["speed_ratio"], 100 * j["functions"][0]["change"])


def test_diff_json_and_markdown_shapes():
    base, slow = runs("base", 3), runs("slow", 3)
    rc, j = diff_json(*sides(base, slow, new_exe="regress-slow"))
    for k in ("verdict", "exit_status", "regressions", "improvements", "metric",
              "alpha", "threshold", "min_seconds", "family_size", "base",
              "new", "model", "functions"):
        assert k in j, k
    assert j["base"]["runs"] == 3 and len(j["base"]["profiles"]) == 3
    assert j["base"]["rate_hz"] == HZ and j["alpha"] == 0.01
    for f in j["functions"]:
        for k in ("name", "status", "significant", "base_seconds", "base_share",
                  "new_seconds", "new_share", "change_seconds", "change",
                  "p_value", "p_adjusted"):
            assert k in f, (k, f)
    fitted = j["model"]
    # at least one sample's seconds
    assert fitted["fitted"] and fitted["seconds_per_observation"] >= 1.0 / HZ
    p = diff("--format", "markdown", *sides(base, slow, new_exe="regress-slow"))
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0].startswith("**pcprof diff: regression**: `stage_transform` "), lines
    table = [l for l in lines if l.startswith("|")]
    assert table[0] == "| function | base s | new s | change | p |", table
    assert len(table) == 2 + j["regressions"] + j["improvements"], table
    assert table[2].startswith("| `stage_transform` | "), table
    p = diff("--format", "markdown", *sides(base, runs("base", 6)[3:]))
    assert p.returncode == 0
    assert p.stdout.startswith("**pcprof diff: no significant regression**")
    assert "No significant change." in p.stdout and "|" not in p.stdout


def test_diff_bad_inputs_get_one_line_and_status_2():
    # Covered: a missing, an empty, a truncated file; a directory with no
    # profile of the program; a FIFO; a non-ELF executable; a profile of
    # another program; runs of one side at two rates; two programs with
    # nothing in common; --metric total without call graphs; --metric
    # program on single runs; bad option values.
    d = tempfile.mkdtemp(prefix="pc-diff-bad-")
    exe = prog("regress-base")
    good = runs("base", 3)
    empty = os.path.join(d, "empty")
    open(empty, "w").close()
    cut = os.path.join(d, "cut")
    open(cut, "wb").write(open(good[0], "rb").read()[:30])
    os.mkfifo(os.path.join(d, "fifo"))
    os.mkdir(os.path.join(d, "nothing"))
    notelf = os.path.join(d, "notelf")
    open(notelf, "w").write("#!/bin/sh\n")
    three = run([prog("three-pie"), "0.1"], verbose=False).path()
    slowhz = run([exe, "0.05", "1"], env={"PC_HZ": "500"}, verbose=False).path()
    flat = run([exe, "0.05", "1"], env={"PC_CALLGRAPH": "0", "PC_HZ": str(HZ)},
               verbose=False).path()
    cases = [
        (sides([os.path.join(d, "missing")], good), "No such file"),
        (sides(good, [empty]), "empty file"),
        (sides(good, [cut]), "truncated"),
        (sides(good, [os.path.join(d, "nothing")]), "no profile of this program"),
        (sides(good, [os.path.join(d, "fifo")]), "not a regular file"),
        (["--base", notelf] + good + ["--new", exe] + good, "not an ELF file"),
        (sides(good, [three]), "not a profile of"),
        (sides(good, [good[0], slowhz]), "must share a rate"),
        (["--base", prog("three-pie"), three, "--new", exe] + good,
         "no function has samples on both sides"),
        (["--metric", "total"] + sides(good, [flat]), "no call graph"),
        (["--metric", "program"] + sides(good[:1], good[1:2]), "two runs or more"),
        (["--alpha", "2"] + sides(good, good), "--alpha"),
        (["--alpha", "x"] + sides(good, good), "--alpha"),
        (["--threshold", "-5"] + sides(good, good), "--threshold"),
        (["--format", "xml"] + sides(good, good), "--format"),
        (["--metric", "wall"] + sides(good, good), "--metric"),
        (["--base", exe] + good + ["--base", exe], "twice"),
    ]
    for args, words in cases:
        p = diff(*args)
        lines = p.stderr.splitlines()
        assert p.returncode == 2, (args, p.returncode, p.stdout, p.stderr)
        assert len(lines) == 1 and lines[0].startswith("pcprof: ") and \
            words in lines[0], (args, p.stderr)
        assert p.stdout == "", (args, p.stdout)
    # usage errors: the usage, status 2
    for args in (["--base", exe] + good, good[:2], []):
        p = diff(*args)
        assert p.returncode == 2 and "usage: pcprof diff" in p.stderr, (args, p.stderr)
    return "%d bad inputs" % len(cases)


def test_diff_flame_graph_colours_the_slowed_function_red():
    """pcprof diff --flame on regress-base against regress-slow (20 % more
    work in stage_transform): in the SVG of the new side's stacks, the
    frames of stage_transform, which the diff finds significantly slower,
    are red, and those of the functions it finds unchanged grey; the
    verdict and the exit status are those of the diff without it. Bad
    output: one line and exit 2, no file."""
    base, slow = runs("base", 3), runs("slow", 3)
    d = tempfile.mkdtemp(prefix="pc-diff-flame-")
    out = os.path.join(d, "diff.svg")
    p = diff("--flame", out, *sides(base, slow, new_exe="regress-slow"))
    rc, j = diff_json(*sides(base, slow, new_exe="regress-slow"))
    assert p.returncode == rc == 1, (p.returncode, rc, p.stderr)
    fills = flame_fills(out)
    verdict = {f["name"]: f for f in j["functions"]}
    slower = [n for n, f in verdict.items() if f["significant"] and f["status"] == "slower"]
    same = [n for n, f in verdict.items() if not f["significant"] and n in fills]
    assert "stage_transform" in slower, slower
    for n in slower:
        assert n in fills, (n, "no frame of it in the graph")
        assert all(r >= 225 and g < 80 and b < 80 for r, g, b in fills[n]), (n, fills[n])
    assert same, verdict
    for n in same:
        assert all(r == g == b and r >= 200 for r, g, b in fills[n]), (n, fills[n])
    bad = diff("--flame", "/dev/full", *sides(base, slow, new_exe="regress-slow"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and \
        "/dev/full" in bad.stderr and not bad.stdout, (bad.returncode, bad.stderr)
    # a new side with no stacks: one line, and neither the graph nor its
    # temporary file is left
    bare = os.path.join(d, "bare")
    os.mkdir(bare)
    shutil.copy(slow[-1], os.path.join(bare, "gmon.out"))
    out2 = os.path.join(d, "none.svg")
    bad = diff("--flame", out2, *sides(base, slow[:-1] + [os.path.join(bare, "gmon.out")],
                                       new_exe="regress-slow"))
    assert bad.returncode == 2 and "stacks" in bad.stderr and not bad.stdout, bad.stderr
    assert sorted(os.listdir(d)) == ["bare", "diff.svg"], os.listdir(d)
    return "red: %s; grey: %s" % (", ".join(slower), ", ".join(same))
