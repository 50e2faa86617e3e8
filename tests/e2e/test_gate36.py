# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the wall gate's disturbed runs: pcprof compare
--metric wall of tests/progs/gate36_napper.c's two builds (a nap of 10 ms a
round against 20 ms), where chosen runs get a burst of load made by the
test: two CPU hogs pinned to the program's CPU for that run alone. The
disturbed runs are made again (compare) or left out (diff), and named;
the regression is still found. The whole process's wall seconds a run
are gated too ([elapsed]), and history add keeps them."""

import json
import os
import shutil
import stat
import tempfile

from pctest import prog
from test_cli import pcprof

# pcprof compare's runs are timed: one worker, in order
SHARED = True

# A wrapper, the command of each side: the program (copied to the side's
# directory as "napper", so that --program names both), on CPU 0; the
# invocations listed (1: the warm-up) get two busy loops on CPU 0 beside
# it, made without libpc, and the run's directory is written to COUNTER.hit.
WRAPPER = r"""#!/bin/sh
cnt=$1; hit=$2; shift 2
n=$(( $(cat "$cnt" 2>/dev/null || echo 0) + 1 ))
echo $n > "$cnt"
hogs=
pin=
case " $hit " in *" $n "*)
	for i in 1 2; do
		env -u LD_PRELOAD taskset -c 0 sh -c 'while :; do :; done' &
		hogs="$hogs $!"
	done
	pin="taskset -c 0"
	dirname "$PC_OUT" >> "$cnt.hit";;
esac
$pin "$@"; st=$?
[ -n "$hogs" ] && kill $hogs
exit $st
"""

ROUNDS = "15"


def setup(tmp):
    """The wrapper and the two builds in tmp: (wrapper, base, new)."""
    w = os.path.join(tmp, "wrap.sh")
    with open(w, "w") as f:
        f.write(WRAPPER)
    os.chmod(w, os.stat(w).st_mode | stat.S_IXUSR)
    exes = []
    for side, build in (("b", "gate36_napper"), ("n", "gate36_napper-slow")):
        os.mkdir(os.path.join(tmp, side))
        exes.append(os.path.join(tmp, side, "napper"))
        shutil.copy(prog(build), exes[-1])
    return [w] + exes


def hits(counter):
    """The run directories the wrapper disturbed."""
    try:
        with open(counter + ".hit") as f:
            return [os.path.basename(l.strip()) for l in f if l.strip()]
    except FileNotFoundError:
        return []


def summary(j):
    """A comparison's verdict, disturbed runs and first rows, for a
    failure's message."""
    return (j["verdict"], j.get("sequential", {}).get("verdict"), j["disturbed"],
            [(f["name"], f["base_seconds"], f["new_seconds"], f["p_adjusted"])
             for f in j["functions"][:6]])


def test_gate36_wall_gate_names_the_disturbed_runs_and_still_finds_the_nap():
    """Eight runs a side; base-001 and new-001 (too early for compare to
    judge: it needs two kept runs a side first) and the base's fourth
    command (base-003, or a run made again) get the burst. Exit 1 with
    the nap's wait from nap_stage slower; every run the burst met is named
    in "disturbed", made again or left out, for its run-queue seconds;
    base-001 and new-001 are left out, also by pcprof diff of the kept
    runs, which says so in its text and markdown; [elapsed] is gated, its
    seconds the runs'; history add keeps the new runs' wall seconds."""
    if not shutil.which("taskset"):
        import pctest
        pctest.skip("no taskset")
    tmp = tempfile.mkdtemp(prefix="pc-e2e-gate36-")
    wrap, base, new = setup(tmp)
    cb, cn = os.path.join(tmp, "cb"), os.path.join(tmp, "cn")
    kept = os.path.join(tmp, "runs")
    p = pcprof("compare", "--metric", "wall", "--runs", "8", "--program", "napper",
               "--format", "json", "-o", kept,
               "--base", wrap, cb, "2 4", base, ROUNDS,
               "--new", wrap, cn, "2", new, ROUNDS, timeout=300)
    j = json.loads(p.stdout)
    assert p.returncode == 1, (p.returncode, summary(j), p.stderr)
    slow = [f["name"] for f in j["functions"] if f["status"] == "slower"]
    assert "[off-cpu: clock_nanosleep] from nap_stage" in slow, (slow, p.stderr)
    named = {os.path.basename(d["run"]): d for d in j["disturbed"]}
    disturbed = hits(cb) + hits(cn)
    assert {"base-001", "new-001"} <= set(disturbed), disturbed
    for run in disturbed:
        assert run in named, (run, j["disturbed"], p.stderr)
        assert named[run]["why"] == "runqueue", named[run]
        assert named[run]["value"] > named[run]["side_median"], named[run]
    for run in ("base-001", "new-001"):
        assert named[run]["action"] == "left out", named[run]
    # the whole process's wall seconds, a row of the gate
    el = [f for f in j["functions"] if f["name"] == "[elapsed]"]
    assert el and el[0]["p_value"] is not None, j["functions"][:5]
    runs = lambda side: sorted(d for d in os.listdir(kept)
                               if d.startswith(side + "-"))
    assert len(runs("base")) == len(runs("new")) == 8, os.listdir(kept)
    secs = []
    for d in runs("base"):
        with open(os.path.join(kept, d, "elapsed")) as f:
            secs.append(float(f.read()))
    left = [d for d in runs("base") if named.get(d, {}).get("action") == "left out"]
    used = [s for d, s in zip(runs("base"), secs) if d not in left]
    assert abs(el[0]["base_seconds"] - sum(used) / len(used)) < 1e-5, (el, secs, left)
    # pcprof diff of the kept runs: the same runs left out, named
    args = ["--metric", "wall", "--base", base] + \
        [os.path.join(kept, d) for d in runs("base")] + ["--new", new] + \
        [os.path.join(kept, d) for d in runs("new")]
    d = pcprof("diff", "--format", "json", *args)
    jd = json.loads(d.stdout)
    assert sorted(os.path.basename(x["run"]) for x in jd["disturbed"]) == \
        sorted(r for r, x in named.items() if x["action"] == "left out"), \
        (jd["disturbed"], j["disturbed"])
    text = pcprof("diff", *args).stdout
    line = [l for l in text.splitlines() if l.startswith("disturbed: ")]
    assert line and "base-001 left out (" in line[0] and \
        "s in the run queue, its side's runs" in line[0], text[:1500]
    md = pcprof("diff", "--format", "markdown", *args).stdout
    assert "- disturbed: " in md and "new-001 left out" in md, md[:1500]
    # history add keeps the runs' wall seconds from their directories
    hist = os.path.join(tmp, "history.jsonl")
    h = pcprof("history", "add", "--commit", "c1", "--time", "1", hist, new,
               *[os.path.join(kept, d) for d in runs("new")])
    assert h.returncode == 0, h.stderr
    with open(hist) as f:
        rec = json.loads(f.readlines()[-1])
    assert rec["wall"][0] > 0.9 * rec["cpu"][0] and rec["wall"][0] > 0.1, rec
    shutil.rmtree(tmp)
    return "slower: %s; disturbed: %s" % (", ".join(slow), ", ".join(
        "%s %s (%.3f s against %.3f s)" % (r, x["action"], x["value"], x["side_median"])
        for r, x in sorted(named.items())))
