# SPDX-License-Identifier: BSD-2-Clause
"""ITT calls with times of their own (libpc-itt.so): __itt_task_begin_ex
and _end_ex, __itt_marker_ex and __itt_frame_submit_v3 in the collector's
clock (__itt_get_timestamp: CLOCK_MONOTONIC ns), and a clock domain of
the program's own (__itt_clock_domain_create, microseconds from an
offset), made after the fact by tests/progs/markers38_itt.c's "ex" mode
and read back from pcprof's Firefox export against the times the program
printed. The program also runs plain, and prints and ends the same."""

import re

from pctest import prog
from test_markers38 import env, firefox, itt_lib, markers, pcprof, recorded, run


def printed(out, what):
    m = re.search(r"^%s (\d+) (\d+)$" % what, out, re.M)
    assert m, out[-500:]
    return int(m.group(1)) / 1e6, int(m.group(2)) / 1e6


def test_markers38_itt_explicit_times_and_clock_domains():
    argv = [prog("markers38_itt"), "10", "5", "20", "ex"]
    rc0, out0, _ = run(argv)
    rc1, out1, _ = run(argv, env({"INTEL_LIBITTNOTIFY64": itt_lib()}))
    d, out = recorded(argv)
    shape = [ln.split()[0] for ln in out.splitlines() if not ln.startswith("timestamp ")]
    assert rc0 == rc1 == 0 and out0.endswith("collector no\n") and \
        out1.endswith("collector no\n") and out.endswith("collector yes\n"), (out0, out1, out)
    assert shape == [ln.split()[0] for ln in out0.splitlines()] == \
        [ln.split()[0] for ln in out1.splitlines()], (out, out0)
    # __itt_get_timestamp read between two CLOCK_MONOTONIC readings
    assert "\ntimestamp in 1\n" in out, out
    a, b = printed(out, "ex")
    a2, b2 = printed(out, "clock")
    m = markers(firefox(d))
    one = {}
    for name, s, e in m:
        one.setdefault(name, []).append((s, e))
    assert {k: len(v) for k, v in one.items() if k in
            ("ex-task", "ex-mark", "m38-submit", "clock-task")} == \
        {"ex-task": 1, "ex-mark": 1, "m38-submit": 2, "clock-task": 1}, one.keys()
    # the program's own times, to the export's microsecond: a task and a
    # frame submitted after the fact, an instant at their middle, a frame
    # from then to now
    (ts, te), = one["ex-task"]
    assert abs((te - ts) - (b - a)) < 0.002, (ts, te, a, b)
    assert one["m38-submit"][0] == (ts, te), (one["m38-submit"], ts, te)
    (ms, me), = one["ex-mark"]
    assert abs((ms - ts) - (b - a) / 2) < 0.002 and me in (None, ms), (ms, me, ts)
    s2, e2 = one["m38-submit"][1]
    assert abs(s2 - te) < 0.002 and e2 >= s2, (s2, e2, te)
    # the clock domain's microseconds, placed by its base read as now:
    # its length to a microsecond, its start to a millisecond (the
    # collector reads its own clock beside the callback's)
    (cs, ce), = one["clock-task"]
    assert abs((ce - cs) - (b2 - a2)) < 0.002, (cs, ce, a2, b2)
    assert abs((cs - ts) - (a2 - a)) < 1.0, (cs, ts, a2, a)
    # the ex task holds its slow request's CPU, as a marker window
    rc, text, err = run([pcprof(), "report", "--format", "folded", "--marker",
                         "ex-task", d])
    assert rc == 0 and "serve_slow" in text, (rc, err, text[:300])
    return "ex-task %.3f ms (program %.3f), clock-task at +%.3f ms (program +%.3f)" % (
        te - ts, b - a, cs - ts, a2 - a)
