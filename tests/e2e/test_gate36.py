# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of what pcprof compare --metric wall keeps of each
run and how the gate reports it, on tests/progs/gate36_napper.c's two
builds (a nap of 50 ms a round against 100 ms): each run's wall seconds
in its directory, gated as [elapsed] by compare and by diff of the kept
runs alike, the disturbed runs named alike, history add keeping the wall
seconds. A burst of load that the test makes, found and named with the
regression still caught: test_gate36_burst.py (its program niced beside
the burst, which then holds it in the run queue at any load);
bench/disturbed.py measures bursts at nice 0 over many comparisons."""

import json
import os
import re
import shutil
import tempfile

from pctest import prog, run
from test_cli import pcprof

# pcprof compare's runs are timed: one worker, in order
SHARED = True

def summary(j):
    """A comparison's verdict, disturbed runs and first rows, for a
    failure's message."""
    return (j["verdict"], j.get("sequential", {}).get("verdict"), j["disturbed"],
            [(f["name"], f["base_seconds"], f["new_seconds"], f["p_adjusted"])
             for f in j["functions"][:6]])


def test_gate36_compare_keeps_each_runs_wall_seconds_and_gates_them():
    """Three runs a side: exit 0 or 1 as the load has it (not asserted);
    each kept run's directory holds its wall seconds, at least its nap's
    (0.27 s); the JSON has "disturbed" (a list) and "speed_fit"; [elapsed]
    is a tested row whose base seconds are the mean of the base runs' not
    left out; pcprof diff of the kept runs gives the same rows, verdicts
    and disturbed runs, and a "disturbed:" line where there are some;
    history add of the new runs keeps their wall seconds."""
    tmp = tempfile.mkdtemp(prefix="pc-e2e-gate36-")
    base, new = prog("gate36_napper"), prog("gate36_napper-slow")
    kept = os.path.join(tmp, "runs")
    # diff's limits, so that the two gates' families are the same
    limits = ("--threshold", "5", "--min-seconds", "0.01")
    p = pcprof("compare", "--metric", "wall", "--runs", "3", "--format", "json", "-q",
               "-o", kept, *limits, "--base", base, "6", "50", "--new", new, "6", "50",
               timeout=300)
    assert p.returncode in (0, 1), (p.returncode, p.stdout[-2000:], p.stderr)
    j = json.loads(p.stdout)
    assert isinstance(j["disturbed"], list) and "p" in j["speed_fit"], summary(j)
    runs = lambda side: sorted(d for d in os.listdir(kept)
                               if d.startswith(side + "-"))
    assert len(runs("base")) == len(runs("new")) == 3, os.listdir(kept)
    secs = {}
    for d in runs("base") + runs("new"):
        with open(os.path.join(kept, d, "elapsed")) as f:
            secs[d] = float(f.read())
        assert secs[d] > 0.27, (d, secs[d])
    left = {os.path.basename(x["run"]) for x in j["disturbed"]
            if x["action"] == "left out"}
    used = [secs[d] for d in runs("base") if d not in left]
    el = [f for f in j["functions"] if f["name"] == "[elapsed]"]
    assert el and el[0]["p_value"] is not None, summary(j)
    assert abs(el[0]["base_seconds"] - sum(used) / len(used)) < 1e-5, (el, secs, left)
    # pcprof diff of the kept runs: the same gate, from the same files
    args = ["--metric", "wall", *limits, "--base", base] + \
        [os.path.join(kept, d) for d in runs("base")] + ["--new", new] + \
        [os.path.join(kept, d) for d in runs("new")]
    d = pcprof("diff", "--format", "json", *args)
    assert d.returncode in (0, 1), d.stderr
    jd = json.loads(d.stdout)
    assert [(f["name"], f["status"], f["p_adjusted"]) for f in jd["functions"]] == \
        [(f["name"], f["status"], f["p_adjusted"]) for f in j["functions"]], \
        (summary(jd), summary(j))
    assert sorted(os.path.basename(x["run"]) for x in jd["disturbed"]) == sorted(left), \
        (jd["disturbed"], j["disturbed"])
    text = pcprof("diff", *args).stdout
    assert ("\ndisturbed: " in text) == bool(left), text[:1500]
    # history add keeps the runs' wall seconds from their directories
    hist = os.path.join(tmp, "history.jsonl")
    h = pcprof("history", "add", "--commit", "c1", "--time", "1", hist, new,
               *[os.path.join(kept, d) for d in runs("new")])
    assert h.returncode == 0, h.stderr
    with open(hist) as f:
        rec = json.loads(f.readlines()[-1])
    assert rec["wall"][0] > 0.5 and rec["wall"][0] > rec["cpu"][0], rec
    shutil.rmtree(tmp)
    return "exit %d; [elapsed] %.3f -> %.3f s; nap %s; left out: %s" % (
        p.returncode, el[0]["base_seconds"], el[0]["new_seconds"],
        [f["status"] for f in j["functions"]
         if f["name"] == "[off-cpu: clock_nanosleep] from nap_stage"],
        ", ".join(sorted(left)) or "none")


def test_gate36_verdict_says_the_runs_made_and_those_left_out():
    """pcprof diff --looks on six runs a side of regress-base, one base run
    doing 1.6 times the work (its CPU seconds stand out: left out as a
    slower machine's), at --threshold 0.5 (no look can rule that out):
    the verdict line says "undecided after 6 runs a side, 1 left out as
    disturbed (5 base runs and 6 new compared; ...)" and the budget's end,
    never the 5 runs of the side that lost one; the JSON gives the runs
    made, compared and left out alike. (On a busy machine another run may
    stand out too: the counts must then say so.)"""
    exe = prog("regress-base")
    work = ["0.1"] * 5 + ["0.16"] + ["0.1"] * 6
    made = []
    for w in work:
        r = run([exe, w, "1"], verbose=False)
        assert r.status == 0, r.stderr
        made.append(r.path())
    args = ["--looks", "6", "--threshold", "0.5", "--base", exe] + made[:6] + \
        ["--new", exe] + made[6:]
    j = json.loads(pcprof("diff", "--format", "json", *args).stdout)
    left = [made.index(d["run"]) for d in j["disturbed"]]
    assert 5 in left and all(d["action"] == "left out" for d in j["disturbed"]), \
        j["disturbed"]
    nb, nn = 6 - sum(i < 6 for i in left), 6 - sum(i >= 6 for i in left)
    q = j["sequential"]
    assert (q["verdict"], q["runs"], q["runs_made"], q["runs_compared"], q["left_out"]) == \
        ("undecided", 6, {"base": 6, "new": 6}, {"base": nb, "new": nn}, len(left)), q
    assert j["base"]["runs"] == nb and j["new"]["runs"] == nn, (j["base"], j["new"])
    p = pcprof("diff", *args)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr)
    assert re.search(r"^disturbed: \S+ left out \(\S+ s of CPU, its side's runs \S+ s: a "
                     r"slower machine\)", p.stdout, re.M), p.stdout[:1500]
    assert re.search(r"^verdict: undecided after 6 runs a side, %d left out as disturbed "
                     r"\(%d base runs and %d new compared; looks at 3 to 6 runs a side, this "
                     r"one at level [0-9.e-]+ of alpha 0.01\): changes of [0-9.]+%% or more "
                     r"ruled out, not of 0.5%% \(.*\); the budget's end$" % (len(left), nb, nn),
                     p.stdout, re.M), p.stdout[:1500]
    return "left out: %s" % ", ".join("%s-%d" % ("new" if i >= 6 else "base", i % 6 + 1)
                                       for i in left)


def test_gate36_sequential_wall_gate_decides_a_20_percent_wait_before_identical_builds():
    """pcprof compare --metric wall, gate36_napper's four naps of 30 ms a
    run against 36 ms (a wait 20 % longer, no CPU more): exit 1,
    "regressed" with the nap's wait named, before the budget's end (the
    runs made under the most the budget allowed, as the gate reports
    them); the same build against itself: exit 0, never "regressed", and
    "unchanged", or undecided only at its budget's end (the sequential
    gate stops when the answer is known, on wall time too, and not
    before). The regression's budget, 10 s, is a ceiling it does not
    reach: at load 12 on 2 CPUs it was regressed after 3 runs a side (p
    3e-5 and 0.005). At 2.5 s, as the identical builds' still is, a busy
    machine's warm-up pair left room for 3 runs a side, the first look's,
    and "before the budget's end" could not be seen (it failed once, 3 of
    3); at 10 s that takes a warm-up run of 3.3 s, 25 times a quiet one's."""
    exe = prog("gate36_napper")
    limits = ("--threshold", "5", "--min-seconds", "0.005")

    def gate(new_nap, budget):
        p = pcprof("compare", "--metric", "wall", "--budget", budget, "--format", "json",
                   "-q", *limits, "--base", exe, "4", "30", "--new", exe, "4", new_nap,
                   timeout=300)
        assert p.returncode in (0, 1), (p.returncode, p.stderr)
        return p.returncode, json.loads(p.stdout)

    rc, j = gate("36", "10s")
    q = j["sequential"]
    assert rc == 1 and q["verdict"] == "regressed", summary(j)
    # the gate's own account of its budget: a first look and more fitted,
    # and it stopped before the last
    assert q["first_look_runs"] < q["max_runs"], q
    assert q["runs"] < q["max_runs"], q
    slow = [f["name"] for f in j["functions"] if f["status"] == "slower"]
    assert "[off-cpu: clock_nanosleep] from nap_stage" in slow, summary(j)
    assert all(n.startswith("[off-cpu: ") or n == "[elapsed]" for n in slow), summary(j)
    rc2, j2 = gate("30", "2.5s")
    q2 = j2["sequential"]
    assert rc2 == 0 and q2["verdict"] != "regressed", summary(j2)
    # identical builds are decided unchanged (every change of the
    # threshold ruled out: 3 runs a side on a quiet machine), or looked
    # at up to the budget's end
    assert q2["verdict"] == "unchanged" or \
        (q2["verdict"] == "undecided" and q2["runs"] == q2["max_runs"]), q2
    return "20 %% longer nap: regressed after %d runs a side of %d; identical: %s after %d of %d" % (
        q["runs"], q["max_runs"], q2["verdict"], q2["runs"], q2["max_runs"])
