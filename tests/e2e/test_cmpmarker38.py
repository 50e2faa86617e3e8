# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare --marker NAME with few runs a side: the gate on the time
inside a marker decides as soon as its samples allow.

tests/progs/markers38_itt.c serves N requests, every Kth "slow" (an ITT
task named "slow" running serve_slow for 10 ms of CPU, or the third
argument's milliseconds). Inside the "slow" window there are few
functions: serve_slow and the clock reads around it, whose share moves by
half from run to run; the variance model once lent their spread to
serve_slow and three times the work came out undecided. Every command has
a timeout after which its process group is killed."""

import re
import tempfile

import pctest
from pctest import prog
from test_markers38 import pcprof, run  # one launcher for the marker tests


def requests():
    """30 requests, 3 of them slow, a run; three times as many where the
    timer is held to the kernel tick (a third of the observations), and
    the most runs a side the gate may take to decide: 3, its first look,
    or 6 with the tick (p 1e-5 to 1.3e-3 at 3 runs there, against a first
    look's level of 0.003)."""
    f = pctest.tick_factor({"PC_TIMER": "taskclock"})
    return str(30 * f), 3 if f == 1 else 6


def test_cmpmarker38_sequential_gate_decides_a_tripled_marked_task_at_its_first_look():
    """--budget 10: looks from 3 runs a side, the first at level 0.0007 of
    alpha 0.01 (0.003 with the tick's longer runs). Slow tasks of 30 ms
    against 10 ms: regressed at that first look (p 1e-9 to 1e-10 with
    taskclock), serve_slow the function named."""
    d = tempfile.mkdtemp(prefix="pc-e2e-cmpmarker-")
    p, (n, most) = prog("markers38_itt"), requests()
    rc, out, err = run([pcprof(), "compare", "-q", "--budget", "10", "--absolute",
                        "--marker", "slow", "--base", p, n, "10", "--new", p, n, "10", "30"],
                       cwd=d)
    assert rc == 1, (rc, out, err)
    assert re.search(r"^pcprof compare: regression: serve_slow \d+\.\d% slower", out), out
    m = re.search(r"^verdict: regressed after (\d+) runs a side \(looks at 3 to", out, re.M)
    assert m and int(m.group(1)) <= most, out


def test_cmpmarker38_identical_builds_inside_a_marker_stay_quiet():
    """The same command on both sides, 3 runs a side: never regressed
    (undecided, or unchanged). serve_slow's own seconds may move by 10 %
    between identical runs (a slow task spins to 10 ms of CPU, and the
    clock reads' share of it moves with the load: 254 against 284
    samples), so no bound on its change is asked."""
    d = tempfile.mkdtemp(prefix="pc-e2e-cmpmarker-")
    p, (n, _) = prog("markers38_itt"), requests()
    rc, out, err = run([pcprof(), "compare", "-q", "--runs", "3", "--absolute",
                        "--marker", "slow", "--base", p, n, "10", "--new", p, n, "10"],
                       cwd=d)
    assert rc == 0, (rc, out, err)
    assert out.startswith("pcprof compare: no significant regression"), out
    assert re.search(r"^verdict: (undecided|unchanged) after 3 runs a side", out, re.M), out
