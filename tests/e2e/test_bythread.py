# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the per-thread view: libpc records each sampled
stack's thread (its tid, and the last name it saw it by), and pcprof
report --by-thread and --thread read them, as do the pprof and speedscope
exports. namedthreads (tests/progs/namedthreads.c) runs four workers of
1 to 4 units of work, two named by main with pthread_setname_np after it
creates them and two by themselves with PR_SET_NAME, and prints each
thread's own CPU time and tid."""

import json
import os
import re
import subprocess
import tempfile

from pctest import need, prog, run, tolerance
from test_cli import pcprof

NAMES = ("pc-one", "pc-two", "pc-three", "pc-four")
# one recorded run serves the three tests that read one: one worker, in
# file order (each test reads the run's files and writes only its own
# exports beside them)
SHARED = True
_recorded = []


def recorded():
    """namedthreads' run with its stacks, made once: 1 s of work, some
    500 signals (the shares' tolerance follows them; it was 2 s)."""
    if not _recorded:
        r = run([prog("namedthreads"), "1"], env={"PC_STACKS": "1"})
        assert r.status == 0, r.stderr
        _recorded.append(r)
    return _recorded[0]


def test_by_thread_shares_match_each_threads_own_cpu_time():
    """--by-thread: one line per named thread, its tid the one the thread
    read itself, its share of the workers' samples within the tolerance
    of the signals that sampled it of its share of their CPU time; and
    --thread NAME or --thread TID keeps exactly that thread's samples."""
    r = recorded()
    truth, n = r.truth(), r.summary()["signals"]
    exe = prog("namedthreads")
    p = pcprof("report", "--by-thread", "--format", "json", exe, r.path())
    assert p.returncode == 0, p.stderr
    rows = {t["name"]: t for t in json.loads(p.stdout)["threads"]}
    assert set(NAMES) <= set(rows), rows
    cpu = sum(truth[k]["cpu"] for k in NAMES)
    got = sum(rows[k]["samples"] for k in NAMES)
    worst = 0
    for k in NAMES:
        assert rows[k]["tid"] == truth[k]["tid"], (k, rows[k], truth[k])
        want = truth[k]["cpu"] / cpu
        tol = tolerance(want, n)
        share = rows[k]["samples"] / got
        assert abs(share - want) <= tol, (k, share, want, tol, n)
        worst = max(worst, abs(share - want))
    text = pcprof("report", "--by-thread", exe, r.path())
    assert text.returncode == 0 and all(re.search(r"\b%d\s+\d+\s+%s\b" % (
        truth[k]["tid"], k), text.stdout) for k in NAMES), text.stdout
    for which in ("pc-three", str(truth["pc-three"]["tid"])):
        one = pcprof("report", "--thread", which, "--format", "json", exe, r.path())
        assert one.returncode == 0, one.stderr
        assert json.loads(one.stdout)["total_samples"] == rows["pc-three"]["samples"]
    return "worst %.1f points over %d signals; %s" % (
        100 * worst, n, ", ".join("%s %.1f%%" % (k, 100 * rows[k]["samples"] / got)
                                 for k in NAMES))


def test_threads_in_pprof_and_speedscope():
    """go tool pprof -tags lists the threads by name and tid with the
    samples --by-thread gives them; speedscope's file has one profile per
    thread."""
    go = need("go")
    r = recorded()
    exe = prog("namedthreads")
    rows = {t["name"]: t for t in json.loads(pcprof(
        "report", "--by-thread", "--format", "json", exe, r.path()).stdout)["threads"]}
    d = tempfile.mkdtemp(prefix="pc-e2e-bythread-")   # the shared run's files stay as made
    out = os.path.join(d, "t.pb.gz")
    p = pcprof("report", "--format", "pprof", "-o", out, exe, r.path())
    assert p.returncode == 0, p.stderr
    tags = subprocess.run([go, "tool", "pprof", "-tags", "-sample_index=samples", out],
                          capture_output=True, text=True, timeout=120).stdout
    for k in NAMES:
        assert re.search(r"\b%d(?:\.0)? \(\s*[\d.]+%%\): %s\b" % (rows[k]["samples"], k),
                         tags), (k, tags)
        assert re.search(r"\b%d(?:\.0)? \(\s*[\d.]+%%\): %d\b" % (rows[k]["samples"],
                                                              rows[k]["tid"]), tags), tags
    ss = os.path.join(d, "t.json")
    p = pcprof("report", "--format", "speedscope", "-o", ss, exe, r.path())
    assert p.returncode == 0, p.stderr
    names = [x["name"] for x in json.load(open(ss))["profiles"]]
    for k in NAMES:
        assert any(" %s (tid %d)" % (k, rows[k]["tid"]) in n for n in names), names
    return "%d speedscope profiles: %s" % (len(names), "; ".join(names))


def test_by_thread_needs_the_stacks_and_says_so():
    """Without stacks (no PC_STACKS), --by-thread and --thread say in one
    line how to record threads, and exit 2; --thread of a name that is
    not there says so too."""
    r = run([prog("namedthreads"), "0.2"], verbose=False)
    exe = prog("namedthreads")
    for args in (["--by-thread"], ["--thread", "pc-one"]):
        p = pcprof("report", *args, exe, r.path())
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and \
            "PC_STACKS=1" in p.stderr, (args, p.returncode, p.stderr)
    r = recorded()
    p = pcprof("report", "--thread", "pc-nine", exe, r.path())
    assert p.returncode == 2 and "pc-nine" in p.stderr, p.stderr
    p = pcprof("report", "--by-thread", "--format", "pprof", "-o", "/dev/null", exe, r.path())
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    return "4 refusals"


def test_threads_of_a_whole_run_and_the_two_options_together():
    """pcprof run --stacks records the threads of every process: report
    --by-thread DIR lists the four workers, --thread NAME DIR prints that
    thread's functions, --by-thread --thread NAME gives it alone at 100 %,
    and folded output, which has no threads, is refused with one line."""
    d = tempfile.mkdtemp(prefix="pc-e2e-bythread-")
    rdir = os.path.join(d, "run")
    # 0.4 s of work: the threads are named and counted, not their shares
    p = pcprof("run", "--stacks", "--no-report", "-o", rdir, "--", prog("namedthreads"),
               "0.4", timeout=120)
    assert p.returncode == 0, p.stderr
    rows = json.loads(pcprof("report", "--by-thread", "--format", "json", rdir).stdout)
    names = {t["name"]: t for t in rows["threads"]}
    assert set(NAMES) <= set(names), rows
    one = pcprof("report", "--thread", "pc-two", rdir)
    assert one.returncode == 0 and re.search(r"\bworker\b", one.stdout), one.stderr
    m = re.search(r"(\d+) samples at", one.stdout)
    assert m and int(m.group(1)) == names["pc-two"]["samples"], one.stdout[:500]
    both = json.loads(pcprof("report", "--by-thread", "--thread", "pc-two", "--format",
                             "json", rdir).stdout)
    assert [t["name"] for t in both["threads"]] == ["pc-two"], both
    assert both["threads"][0]["share"] == 1.0, both
    for args in (["--by-thread"], ["--thread", "pc-two"]):
        p = pcprof("report", *args, "--format", "folded", rdir)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    return "pc-two: %d samples, alone at 100 %%" % names["pc-two"]["samples"]
