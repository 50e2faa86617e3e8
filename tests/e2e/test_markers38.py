# SPDX-License-Identifier: BSD-2-Clause
"""Markers from Intel ITT (libpc-itt.so, which pcprof run --timeline names
in INTEL_LIBITTNOTIFY64), and the report's windows: --from/--to and
--marker.

tests/progs/markers38_itt.c carries its own minimal ITT static part (the
collector ABI: a global with ITT's magic, a table of named function
pointers that the collector's __itt_api_init fills); it serves requests,
"fast" (serve_fast) and every Kth "slow" (serve_slow), each an ITT task in
a frame, sets a counter, and prints each slow request's CLOCK_MONOTONIC
span. tests/progs/markers38_tbb.cc is a TBB flow graph built with
TBB_USE_PROFILING_TOOLS=1, whose bodies libtbb's own ITT static part marks
as tasks named "body". Every run has a timeout after which its process
group is killed; the programs also run plain and must print and end the
same."""

import json
import os
import re
import signal
import subprocess
import tempfile

import pctest
from pctest import prog

TIMEOUT = 60


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def itt_lib():
    return os.path.abspath(os.path.join(pctest.BUILD, "libpc-itt.so"))


def env(extra=None, profiled=False):
    e = pctest.clean_env(extra, profiled=profiled)
    if not extra or "INTEL_LIBITTNOTIFY64" not in extra:
        e.pop("INTEL_LIBITTNOTIFY64", None)
    return e


def run(argv, e=None, cwd=None):
    p = subprocess.Popen(argv, cwd=cwd, env=e or env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=pctest.default_signals)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError("%s hung: %r" % (argv, err[-500:]))
    return p.returncode, out, err


def recorded(argv):
    """pcprof run --timeline of argv: the run directory and the output."""
    d = tempfile.mkdtemp(prefix="pc-e2e-markers-")
    rc, out, err = run([pcprof(), "run", "--timeline", "--no-report", "-o", d + "/run", "--"]
                       + argv, cwd=d)
    assert rc == 0, err[-800:]
    return d + "/run", out


def firefox(d, *args):
    rc, out, err = run([pcprof(), "report", "--format", "firefox", d] + list(args))
    assert rc == 0, err
    return json.loads(out)


def markers(ff):
    """Each marker as (name, start ms, end ms), by start."""
    v = []
    for t in ff["threads"]:
        m = t["markers"]
        for i in range(m["length"]):
            v.append((t["stringArray"][m["name"][i]], m["startTime"][i], m["endTime"][i]))
    return sorted(v, key=lambda x: x[1])


def test_markers38_itt_tasks_frames_and_counters_are_markers():
    argv = [prog("markers38_itt"), "100", "10"]
    # plain, and with the collector named but no libpc: it fills nothing,
    # and the program runs as it does with no collector
    rc0, out0, _ = run(argv)
    rc1, out1, _ = run(argv, env({"INTEL_LIBITTNOTIFY64": itt_lib()}))
    assert rc0 == rc1 == 0 and out0.endswith("collector no\n") and \
        out1.endswith("collector no\n"), (out0[-200:], out1[-200:])
    d, out = recorded(argv)
    assert out.endswith("collector yes\n"), out[-200:]
    shape = [ln for ln in out.splitlines() if ln.startswith("requests ")]
    assert shape == [ln for ln in out0.splitlines() if ln.startswith("requests ")] == \
        ["requests fast 90 slow 10"], (shape, out0[-200:])
    ff = firefox(d)
    m = markers(ff)
    count = {}
    for name, _, _ in m:
        count[name] = count.get(name, 0) + 1
    assert count == {"early": 1, "fast": 90, "slow": 10, "m38-frame": 100, "done": 1}, count
    assert [c["name"] for c in ff["counters"]] == ["served"], ff["counters"]
    # the slow tasks against the program's own clock: lengths and gaps
    # within a millisecond (both are clock_gettime, microseconds apart)
    slow = [(a, b) for name, a, b in m if name == "slow"]
    mine = [(int(a) / 1e6, int(b) / 1e6)
            for a, b in re.findall(r"^slow \d+ (\d+) (\d+)$", out, re.M)]
    assert len(mine) == 10, out[-400:]
    for (a, b), (x, y) in zip(slow, mine):
        # 10 ms of the thread's CPU clock (sched_clock), under markers on
        # CLOCK_MONOTONIC, which NTP slews: 9.9994 ms seen (60 ppm)
        assert y - x + 0.02 >= b - a >= 10.0 * (1 - 1e-3), (a, b, x, y)
    # each task's marker lies inside the program's two clock reads around
    # it, all under one offset: a preemption between a read and the call
    # widens the bounds (a busy machine), a marker clock that runs slow or
    # fast leaves no offset that fits (the rate taken with the samples
    # written between its two reads: 0.11-0.88 ms short over 10 tasks);
    # room for the slew (500 ppm at most) and microseconds
    lo = max(x - a for (a, _), (x, _) in zip(slow, mine))
    hi = min(y - b for (_, b), (_, y) in zip(slow, mine))
    room = 0.01 + 5e-4 * (mine[-1][1] - mine[0][0])
    assert lo <= hi + room, ("no offset fits: %.3f ms over" % (lo - hi), slow, mine)
    # the frames hold the tasks: each slow task inside a frame
    frames = [(a, b) for name, a, b in m if name == "m38-frame"]
    assert all(any(fa <= a and b <= fb for fa, fb in frames) for a, b in slow)


def test_markers38_tbb_flow_graph_bodies_are_markers():
    if not os.path.exists(prog("markers38_tbb")):
        pctest.skip("markers38_tbb not built (apt-get install libtbb-dev)")
    argv = [prog("markers38_tbb"), "60"]
    rc0, out0, _ = run(argv)
    assert rc0 == 0 and out0.startswith("bodies 60\n"), out0
    d, out = recorded(argv)
    assert out.startswith("bodies 60\n"), out
    m = markers(firefox(d))
    body = [(a, b) for name, a, b in m if name == "body"]
    assert len(body) == 60, [n for n, _, _ in m][:20]
    short = [(i, a, b) for i, (a, b) in enumerate(body) if b - a < 2.0 * (1 - 1e-3)]
    assert not short, (short, body[:5])
    # the bodies' whole span, by TBB's markers and by the program's clock
    x, y = (int(v) / 1e6 for v in re.search(r"^span (\d+) (\d+)$", out, re.M).groups())
    span = max(b for _, b in body) - min(a for a, _ in body)
    # TBB's task begins before the body's first clock read and ends after
    # its last: the markers' span holds the program's (a busy machine can
    # preempt between them, so only the one side)
    assert span >= (y - x) * (1 - 5e-4) - 0.01, (span, y - x)


def leaf_names(ff, thread_filter=None):
    """Each sample of ff as (time ms, the functions on its stack, weight)."""
    v = []
    for t in ff["threads"]:
        sa, st, fr, fu = t["stringArray"], t["stackTable"], t["frameTable"], t["funcTable"]
        w = t["samples"].get("weight") or [1] * len(t["samples"]["time"])
        for k, tm, n in zip(t["samples"]["stack"], t["samples"]["time"], w):
            fs = []
            while k is not None:
                fs.append(sa[fu["name"][fr["func"][st["frame"][k]]]])
                k = st["prefix"][k]
            v.append((tm, fs, n))
    return v


def flat(d, *args):
    """pcprof report's JSON functions as {name: samples}."""
    rc, out, err = run([pcprof(), "report", "--format", "json", "--top", "0", d] + list(args))
    assert rc == 0, err
    j = json.loads(out)
    j = j.get("profile", j)
    return {f["name"]: f["self_samples"] for f in j["functions"]}, j


def test_markers38_marker_window_is_that_kinds_functions():
    argv = [prog("markers38_itt"), "100", "10"]
    d, out = recorded(argv)
    whole, _ = flat(d)
    slow, j = flat(d, "--marker", "slow")
    fast, _ = flat(d, "--marker", "fast")
    assert whole.get("serve_fast", 0) > 20 and whole.get("serve_slow", 0) > 20, whole
    # inside the slow tasks, serve_slow; inside the fast ones, serve_fast:
    # a sample whose period began before its task may land just inside
    assert slow.get("serve_slow", 0) > 4 * slow.get("serve_fast", 0), slow
    assert fast.get("serve_fast", 0) > 4 * fast.get("serve_slow", 0), fast
    # the windows are parts of the whole
    assert sum(slow.values()) + sum(fast.values()) <= sum(whole.values()) + 1e-6
    # the export of the window holds the slow tasks' samples alone: a
    # serve_fast sample in it is within its own period of a slow task's
    # start (a sample stands at its period's end; under load one period
    # holds several intervals, its weight)
    ff = firefox(d, "--marker", "slow")
    interval = ff["meta"]["interval"]
    starts = [a for name, a, _ in markers(ff) if name == "slow"]
    n = 0
    for tm, fs, w in leaf_names(ff):
        if "serve_fast" in fs:
            assert min(abs(tm - a) for a in starts) <= max(1, w) * interval, (tm, w, starts)
        n += "serve_slow" in fs
    assert n > 20, n
    # folded stacks and the flame graph of the window say the same
    rc, folded, err = run([pcprof(), "report", "--format", "folded", "--marker", "slow", d])
    assert rc == 0, err
    by = {"serve_slow": 0, "serve_fast": 0}
    for ln in folded.splitlines():
        stack, n = ln.rsplit(" ", 1)
        for f in by:
            by[f] += int(n) if f in stack.split(";") else 0
    assert by["serve_slow"] > 4 * by["serve_fast"] and by["serve_slow"] > 20, by
    # the text report says the window it was cut to, and holds its samples
    rc, text, err = run([pcprof(), "report", "--marker", "slow", d])
    assert rc == 0 and " inside marker 'slow': " in text.splitlines()[0], text[:300]
    m = re.search(r": (\d+) samples at ", text.splitlines()[0])
    total = sum(int(ln.rsplit(" ", 1)[1]) for ln in folded.splitlines())
    assert m and int(m.group(1)) == total, (text[:800], total)
    svg = os.path.join(os.path.dirname(d), "slow.svg")
    rc, _, err = run([pcprof(), "flame", "-o", svg, "--marker", "slow", d])
    assert rc == 0, err
    with open(svg) as f:
        titles = dict(re.findall(r"<title>(\w+) \((\d+) samples", f.read()))
    assert int(titles["serve_slow"]) == by["serve_slow"], (titles, by)
    assert int(titles.get("serve_fast", 0)) == by["serve_fast"], (titles, by)
    # a name no marker has is one line and status 2
    rc, _, err = run([pcprof(), "report", "--marker", "nope", d])
    assert rc == 2 and err.count("\n") == 1 and "no marker named 'nope'" in err, (rc, err)
    # an instant marker has no span: one line that says so, and where
    done = [a for name, a, b in markers(firefox(d)) if name == "done"]
    rc, _, err = run([pcprof(), "report", "--marker", "done", d])
    m = re.search(r"'done' has no span \(1 at a single time, the first at ([\d.]+) s\)", err)
    assert rc == 2 and err.count("\n") == 1 and m, (rc, err)
    assert len(done) == 1 and abs(float(m.group(1)) * 1e3 - done[0]) < 0.01, (m.group(1), done)


def test_markers38_from_to_holds_each_phases_samples():
    d = tempfile.mkdtemp(prefix="pc-e2e-markers-")
    rc, out, err = run([pcprof(), "run", "--timeline", "--no-report", "-o", d + "/run", "--",
                        prog("timeline38"), "40", "10"], cwd=d)
    assert rc == 0, err[-800:]
    d += "/run"
    spans = {name: (a, b) for name, a, b in markers(firefox(d)) if name in ("one", "two")}
    for name, fn, other in (("one", "phase_one", "phase_two"),
                            ("two", "phase_two", "phase_one")):
        a, b = spans[name]
        ff = firefox(d, "--from", "%.6f" % (a / 1e3), "--to", "%.6f" % (b / 1e3))
        interval = ff["meta"]["interval"]
        samples = leaf_names(ff)
        # every sample in the window, its own phase's, one at most of the
        # other phase's at an edge
        assert all(a - 1e-3 <= tm <= b + 1e-3 for tm, _, _ in samples), (a, b)
        mine = sum(1 for _, fs, _ in samples if fn in fs)
        theirs = [tm for tm, fs, _ in samples if other in fs]
        assert mine > 20, (name, mine, len(samples))
        assert all(min(tm - a, b - tm) <= interval for tm in theirs), (name, theirs, a, b)
    # the text report of phase two: its function first
    f, _ = flat(d, "--from", "%.6f" % (a / 1e3), "--to", "%.6f" % (b / 1e3))
    assert max(f, key=f.get) == "phase_two", f
    # --to before --from, and a window of a profile with no timeline
    rc, _, err = run([pcprof(), "report", "--from", "2", "--to", "1", d])
    assert rc == 2 and "not after --from" in err, (rc, err)


def test_markers38_compare_gates_the_time_inside_a_marker():
    """compare --marker slow compares the slow requests' time alone (3 of
    10 ms a run, then of 30 ms); diff --marker fast of the same runs the
    fast requests' alone, which did not change."""
    d = tempfile.mkdtemp(prefix="pc-e2e-markers-")
    p = prog("markers38_itt")
    rc, out, err = run([pcprof(), "compare", "--runs", "3", "--absolute", "--marker", "slow",
                        "-o", d + "/cmp", "--base", p, "30", "10", "--new", p, "30", "10", "30"],
                       cwd=d)
    # the verdict is the gate's (few runs: it may stay undecided), but
    # never that the tripled time is unchanged, nor about the fast ones
    assert rc in (0, 1) and "verdict: unchanged" not in out, (rc, out, err)
    assert rc == 0 or re.search(r"regression: serve_slow \d+\.\d% slower", out), out
    row = r"^\s+([\d.]+)\s+[\d.]+%%\s+([\d.]+)\s+[\d.]+%%\s+[-+][\d.]+%%.*\s%s$"
    m = re.search(row % "serve_slow", out, re.M)
    assert m and 0.02 < float(m.group(1)) < 0.04 and 0.07 < float(m.group(2)) < 0.11, out
    # the window's seconds, not the program's: the 27 fast requests'
    # 27 ms are outside it
    m = re.search(r"^base .*: 3 runs, ([\d.]+) s a run", out, re.M)
    assert m and float(m.group(1)) < 0.04, out
    runs = sorted(os.listdir(d + "/cmp"))
    base = [d + "/cmp/" + r for r in runs if r.startswith("base-")]
    new = [d + "/cmp/" + r for r in runs if r.startswith("new-")]
    assert len(base) == len(new) == 3, runs
    rc, out, err = run([pcprof(), "diff", "--absolute", "--marker", "fast",
                        "--base"] + base + ["--new"] + new)
    assert rc == 0 and out.startswith("pcprof diff: no significant regression"), (rc, out, err)
    m = re.search(row % "serve_fast", out, re.M)
    assert m and 0.015 < float(m.group(1)) < 0.035 and 0.015 < float(m.group(2)) < 0.035, out
    # serve_slow only where a sample's period began before its fast task
    m = re.search(row % "serve_slow", out, re.M)
    assert not m or float(m.group(1)) + float(m.group(2)) < 0.003, out
    # the whole programs' call graphs are not the window's
    rc, _, err = run([pcprof(), "diff", "--metric", "total", "--marker", "fast",
                      "--base"] + base + ["--new"] + new)
    assert rc == 2 and "--marker: with --metric self or program" in err, (rc, err)
