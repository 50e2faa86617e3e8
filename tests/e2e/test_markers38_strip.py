# SPDX-License-Identifier: BSD-2-Clause
"""The flame graph's time strip (pcprof flame of a run recorded with
--timeline), opened in headless Chromium and driven as a user would
(playwright-core, tests/e2e/browser.js): a drag across the strip over a
marker redraws the graph with that window's samples alone, the same
numbers as pcprof report --format folded --from --to of the window; a
click on the strip brings the whole run back. Screenshots in
BUILD/test-artifacts/flame-strip."""

import os
import re

from pctest import prog
from test_export import artifacts, browser, drive
from test_markers38 import firefox, markers, pcprof, recorded, run


def folded_by(d, names, *args):
    """pcprof report --format folded's samples of the stacks that hold
    each name, and of all."""
    rc, out, err = run([pcprof(), "report", "--format", "folded"] + list(args) + [d])
    assert rc == 0, err
    by = dict.fromkeys(names, 0)
    total = 0
    for ln in out.splitlines():
        stack, n = ln.rsplit(" ", 1)
        total += int(n)
        for f in names:
            by[f] += int(n) if f in stack.split(";") else 0
    return by, total


def shown(state, name):
    """The samples the page shows for a function: its frames' values."""
    return sum(f["value"] for f in state["frames"] if f["shown"] and f["name"] == name)


def flame_strip_drag_over_a_marker_draws_its_window():
    """test_markers38_flame_strip_drag_over_a_marker_draws_its_window, run
    by test_export.py with its other pages in one browser."""
    browser()
    # 4 slow requests of 80 ms of CPU (serve_slow), 16 fast ones of 1 ms
    argv = [prog("markers38_itt"), "20", "5", "80"]
    rc0, out0, _ = run(argv)
    d, out = recorded(argv)
    shape = [ln for ln in out.splitlines() if ln.startswith("requests ")]
    assert rc0 == 0 and shape == [ln for ln in out0.splitlines() if ln.startswith("requests ")] \
        == ["requests fast 16 slow 4"], (shape, out0[-300:])
    svg = os.path.join(os.path.dirname(d), "strip.svg")
    rc, _, err = run([pcprof(), "flame", "-o", svg, d])
    assert rc == 0, err
    shots = artifacts("flame-strip")
    r = drive("strip", "file://" + svg, shots, "slow", "1")
    assert not r["blocked"] and not r["errors"], (r["blocked"], r["errors"])
    # the markers on the strip are the export's, at their times (the
    # strip's in microseconds, cut down)
    slow = [(a, b) for name, a, b in markers(firefox(d)) if name == "slow"]
    assert len(r["markers"]) == len(slow) == 4, (r["markers"], slow)
    for m, (a, b) in zip(r["markers"], slow):
        assert abs(m["start"] / 1e3 - a) < 0.002 and abs(m["end"] / 1e3 - b) < 0.002, (m, a, b)
    # the drag's window is the marker's, to a pixel of the strip
    w, m = r["window"], r["markers"][1]
    lo, hi = int(w["from"]), int(w["to"])
    span = int(re.search(r"span:(\d+)", open(svg).read()).group(1))
    px = span / 1180 + 1
    assert abs(lo - m["start"]) <= px and abs(hi - m["end"]) <= px, (w, m, px)
    # the graph of the window: pcprof's own numbers for those microseconds
    names = ("serve_slow", "serve_fast", "main")
    by, total = folded_by(d, names, "--from", "%.6f" % (lo / 1e6), "--to", "%.6f" % (hi / 1e6))
    win = r["steps"]["window"]
    for f in names:
        assert abs(shown(win, f) - by[f]) < 1e-6, (f, shown(win, f), by)
    assert abs(shown(win, "all") - total) < 1e-6, (shown(win, "all"), total)
    # only that window's functions: serve_slow, a serve_fast sample at an
    # edge at most (a sample stands at its period's end)
    assert by["serve_slow"] > 4 * by["serve_fast"] and by["serve_slow"] >= 20, by
    assert all(f["shown"] == (f["value"] > 0) for f in win["frames"]), win["frames"]
    # the whole run before the drag and after the click on the strip
    whole, _ = folded_by(d, names)
    for st in (r["steps"]["whole"], r["steps"]["back"]):
        for f in names:
            assert abs(shown(st, f) - whole[f]) < 1e-6, (f, shown(st, f), whole)
    assert r["backFrom"] is None and whole["serve_slow"] > 2 * by["serve_slow"], (r["backFrom"], whole)
    for png in ("flame-strip-window.png", "flame-strip-whole.png"):
        assert os.path.getsize(os.path.join(shots, png)) > 1000
    return "window %.3f-%.3f s: serve_slow %d, serve_fast %d of %d samples (whole run: %d, " \
        "%d); screenshots in %s" % (lo / 1e6, hi / 1e6, by["serve_slow"], by["serve_fast"], total,
                                     whole["serve_slow"], whole["serve_fast"], shots)


def test_markers38_empty_window_is_one_warning_line_and_status_0():
    """A window that holds no sample is one warning line that names it,
    and the (empty) report, status 0, in report, folded and flame; a
    window that holds some says nothing on stderr."""
    d, _ = recorded([prog("markers38_itt"), "20", "5", "5"])
    cases = [
        (["--from", "50", "--to", "60"], "no samples from 50 s to 60 s (its timeline: 0 to "),
        (["--marker", "slow", "--to", "0.000001"],
         "no samples inside the markers 'slow' to 1e-06 s (its timeline: 0 to "),
    ]
    for args, said in cases:
        for cmd in (["report"], ["report", "--format", "folded"],
                    ["flame", "-o", os.path.join(os.path.dirname(d), "empty.svg")]):
            rc, out, err = run([pcprof()] + cmd + args + [d])
            assert rc == 0 and err.count("\n") == 1, (cmd, args, rc, err)
            assert err.startswith("pcprof: warning: '%s/gmon.out': %s" % (d, said)), (cmd, err)
            span = float(re.search(r"its timeline: 0 to ([\d.]+) s\)$", err).group(1))
            # the run's own time at least: 4 slow requests of 5 ms of CPU
            # and 17 of 1 ms (0.042 s was seen, 0.05 was too tight)
            assert 0.037 <= span < 30, err
            if cmd == ["report"]:
                assert ": 0 samples at " in out.splitlines()[0], out[:300]
            else:
                assert out == "", out
    rc, out, err = run([pcprof(), "report", "--marker", "slow", d])
    assert rc == 0 and err == "" and "serve_slow" in out, (rc, err, out[:300])
