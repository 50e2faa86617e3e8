# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of call graphs from sampled stacks: gprof's call graph
on libpc's gmon.out splits a function's time among its callers by time."""

import json
import os
import xml.etree.ElementTree as ET

from pctest import gprof_callers, gprof_flat, prog, read_gmon, run, tick_factor

# callers' run with the dwarf unwinder serves the three tests that read
# one (the caller split, the qsort chain, pcprof's call graph): one
# worker, in file order; each reads the run's files and writes its own
SHARED = True
_runs = {}


def run_seconds(held):
    """How long callers runs for the caller split's bound of 5 points:
    leaf holds some 85 % of the time, so its split is a binomial share of
    leaf's independent samples, with an error of sqrt(0.85 * 0.15 / n).
    Where the default timer samples at its 1000 Hz (the task-clock timer),
    1 s holds some 850 of leaf's: an error of 1.2 points, the bound 4 of
    them (3 s held 7). Where the timer is held to the kernel's 250 Hz tick
    (POSIX timers, tick_factor 3), held seconds as before: 3 s, some 640
    of leaf's signals, 3.5 errors."""
    return "1" if tick_factor({}) == 1 else held


def recorded(exe, unwinder, held="3"):
    """exe's run with PC_UNWIND=unwinder (run_seconds(held)), made once."""
    seconds = run_seconds(held)
    key = (exe, unwinder, seconds)
    if key not in _runs:
        r = run([prog(exe), seconds], env={"PC_UNWIND": unwinder})
        assert r.status == 0, r.stderr
        _runs[key] = r
    return _runs[key]


def caller_split(exe, unwinder, held="3"):
    r = recorded(exe, unwinder, held)
    truth = r.truth()
    want = truth["leaf_in_a"] / (truth["leaf_in_a"] + truth["leaf_in_b"])
    callers, text = gprof_callers(prog(exe), r.path(), "leaf")
    a, b = callers.get("caller_a", 0), callers.get("caller_b", 0)
    assert a + b > 0, text
    got = a / (a + b)
    # by call counts the split would be 50:50; by time it is ~85:15
    assert abs(got - want) <= 0.05, \
        "%s/%s: caller_a has %.3f of leaf, truth %.3f (%d:%d)" % \
        (exe, unwinder, got, want, a, b)
    return "caller_a %.1f%% of leaf, truth %.1f%%" % (100 * got, 100 * want)


def test_caller_split_follows_time_with_dwarf_unwinding():
    return caller_split("callers", "dwarf")


def test_caller_split_follows_time_with_frame_pointers():
    return caller_split("callers-fp", "fp")


def test_caller_of_frameless_leaf_found_without_frame_pointers():
    # leaf() is frameless at -O2: the frame-pointer walk must take its
    # caller from the top of the stack
    return caller_split("callers", "fp")


def test_caller_split_with_libunwind():
    return caller_split("callers", "libunwind", "2")


def test_chain_through_qsort_keeps_program_edges():
    r = recorded("callers", "dwarf")
    callers, text = gprof_callers(prog("callers"), r.path(), "by_key")
    assert callers.get("sort_items", 0) > 0, text
    assert set(callers) == {"sort_items"}, callers


def test_deep_recursion_is_bounded_and_counted_once_per_sample():
    exe = prog("recurse")
    r = run([exe, "1"], timeout=60)
    assert r.status == 0, r.stderr
    s = r.summary()
    g = read_gmon(r.path())
    self_arcs = [c for f, t, c in g["arcs"] if c and f != t]
    rec = gprof_callers(exe, r.path(), "descend")[0]
    # descend -> descend appears 128 times on each stack but counts once,
    # for each sample in the program's text (arcs are counted only there:
    # the samples in its clock reads, in the vDSO, are outside it)
    inside = s["samples"] - s["outside"]
    assert rec.get("descend", 0) <= inside, (rec, s)
    assert rec.get("descend", 0) >= 0.9 * inside, (rec, s)
    funcs, total, _ = gprof_flat(exe, r.path())
    assert funcs.get("bottom_work", 0) / total > 0.95, funcs
    assert "frames a stack" in r.stderr
    return "%d samples, descend->descend %d, %d arcs" % \
        (s["samples"], rec.get("descend", 0), len(self_arcs))


def test_unwinding_survives_dlopen_and_malloc_storms():
    """Every sample walks the stack while threads hold the loader's and
    malloc's locks. What counts is the number of walks: at PC_HZ=1000000
    the task-clock timer gives some 6600 signals a CPU second (perf's own
    limit), the tick-bound POSIX timer 250 a thread, so 3 s of the first
    walk more stacks than 20 s of the other (4622 signals against 192 in
    3 s, on a machine at load 11); where perf events are refused, libpc
    falls back to POSIX timers and the run takes the 20 s it took."""
    exe = prog("stress")
    plugin = prog("plugin.so")
    r = run([exe, "3", plugin], env={"PC_HZ": "1000000", "PC_TIMER": "taskclock"},
            timeout=90)
    if "; timer taskclock" not in r.stderr:
        r = run([exe, "20", plugin], env={"PC_HZ": "1000000"}, timeout=90)
    assert r.status == 0, r.stderr
    assert r.stdout.startswith("loads: "), r.stdout
    loads = int(r.stdout.split()[1])
    s = r.summary()
    assert s["threads"] == 5, s
    funcs, total, _ = gprof_flat(exe, r.path())
    assert "burn_leaf" in funcs, funcs
    callers, _ = gprof_callers(exe, r.path(), "burn_leaf")
    assert callers.get("burn_middle", 0) > 0, callers
    return "%d dlopen/dlclose, %d signals, no deadlock" % (loads, s["signals"])


def test_full_arc_table_drops_and_says_so():
    # 30 call chains of 100 distinct functions (tests/progs/chains37.py):
    # every sample walks 100 edges, and 3000 distinct edges do not fit a
    # 1024-slot table
    exe = prog("chains37")
    # 0.5 s: some 500 samples of 100 edges each overfill the table many
    # times, and each chain's leaf expects 16 of them (none: e^-16)
    r = run([exe, "0.5"], env={"PC_ARCS": "1024"})
    assert r.status == 0, r.stderr
    dropped = int(r.stderr.split(" arc samples dropped")[0].split()[-1])
    assert dropped > 0, r.stderr
    g = read_gmon(r.path())
    assert 0 < len(g["arcs"]) <= 1024
    funcs, total, _ = gprof_flat(exe, r.path())
    assert len(funcs) >= 25, funcs
    return "%d arcs kept, %d samples' edges dropped" % (len(g["arcs"]), dropped)


def pcprof_cmd(*args):
    from test_cli import pcprof
    return pcprof(*args)


def test_pcprof_callgraph_text_json_follow_time():
    exe = prog("callers")
    r = recorded("callers", "dwarf")
    truth = r.truth()
    want = truth["leaf_in_a"] / (truth["leaf_in_a"] + truth["leaf_in_b"])
    p = pcprof_cmd("report", "--format", "json", exe, r.path())
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    arcs = {(a["caller"], a["callee"]): a["samples"] for a in j["arcs"]}
    a, b = arcs[("caller_a", "leaf")], arcs[("caller_b", "leaf")]
    assert abs(a / (a + b) - want) <= 0.05, (a, b, want)
    assert arcs[("sort_items", "by_key")] > 0
    funcs = {f["name"]: f for f in j["functions"]}
    # total = self + callees: main holds (nearly) everything sampled in
    # the executable (the samples in libc's qsort are outside it)
    inside = j["total_seconds"] - j["outside_samples"] / j["rate_hz"]
    assert funcs["main"]["total_seconds"] >= 0.97 * inside, (funcs["main"], inside)
    assert abs(funcs["caller_a"]["total_seconds"] -
               (funcs["caller_a"]["self_seconds"] + a / j["rate_hz"])) < 1e-6
    # the same split in the text call graph
    p = pcprof_cmd("report", "--callgraph", exe, r.path())
    block = p.stdout.split("] leaf\n")[1].split("\n\n")[0]
    assert "caller_a" in block and "caller_b" in block, block
    pct = float(block.split("%  caller_a")[0].split()[-1])
    assert abs(pct / 100 - want) <= 0.05, (pct, want)
    return "caller_a %.1f%% (truth %.1f%%)" % (100 * a / (a + b), 100 * want)


def test_folded_stacks_and_flame_graph():
    exe = prog("callers")
    r = run([exe, "1"], env={"PC_STACKS": "1"})
    assert os.path.exists(r.path("gmon.out.stacks"))
    p = pcprof_cmd("report", "--format", "folded", exe, r.path())
    assert p.returncode == 0, p.stderr
    lines = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1])
             for l in p.stdout.splitlines()}
    hot = [k for k in lines if k.endswith(";main;caller_a;leaf")]
    assert hot, lines
    total = sum(lines.values())
    s = r.summary()
    assert total == s["samples"], (total, s)   # every sample, libraries too
    assert any(k.endswith(";sort_items;[libraries];by_key") for k in lines), lines
    svg = r.path("flame.svg")
    p = pcprof_cmd("flame", "-o", svg, exe, r.path())
    assert p.returncode == 0, p.stderr
    root = ET.parse(svg).getroot()
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    leaf = [t for t in titles if t.startswith("leaf (")]
    assert leaf, titles[:20]
    assert any(t.startswith("caller_a (") for t in titles)
    return "%d distinct stacks, %d samples; %s" % (len(lines), total, leaf[0])
