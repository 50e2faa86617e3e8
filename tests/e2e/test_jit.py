# SPDX-License-Identifier: BSD-2-Clause
"""node's JIT code named in every output that carries stacks: with
--perf-basic-prof (the perf map, /tmp/perf-PID.map) and with --perf-prof
(the jitdump, jit-PID.dump in node's working directory), a recursive fib
that V8 compiles is JS:*fib in the flat report, and the same samples are
that JIT function's frames in folded stacks, the flame graph and pprof (read by go tool
pprof), not one [libraries] or [unknown] frame."""

import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import need, tolerance
from test_cli import pcprof

FIB_JS = """
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 12; i++) s += fib(34);
console.log(s);
"""


def record(flag):
    """node FLAG fib.js under pcprof run --stacks in a scratch directory:
    (node's path, the scratch directory, the run directory, the profile,
    the JSON report)."""
    node = os.path.realpath(need("node", "nodejs"))
    d = tempfile.mkdtemp(prefix="pc-e2e-jit-")
    with open(os.path.join(d, "fib.js"), "w") as f:
        f.write(FIB_JS)
    rdir = os.path.join(d, "run")
    p = pcprof("run", "--stacks", "--no-report", "-o", rdir, "--", node, flag, "fib.js",
               cwd=d, timeout=300)
    assert p.returncode == 0, p.stderr
    gmon = os.path.join(rdir, "gmon.out")
    r = pcprof("report", "--format", "json", "--top", "0", node, gmon, cwd=d)
    assert r.returncode == 0, r.stderr
    return node, d, rdir, gmon, json.loads(r.stdout)


def jit_flat(report):
    """({JIT function: self samples}, all samples) of the flat report. V8
    names them JS:*fib (node 20) or LazyCompile:*fib (V8 10, node 18)."""
    js = {f["name"]: f["self_samples"] for f in report["functions"]
          if f["object"] == "[jit]" and not f["name"].startswith("[")}
    return js, sum(f["self_samples"] for f in report["functions"])


def folded(node, gmon, cwd):
    """[(frames, count)] of pcprof report --format folded."""
    p = pcprof("report", "--format", "folded", node, gmon, cwd=cwd)
    assert p.returncode == 0, p.stderr
    out = []
    for line in p.stdout.splitlines():
        stack, count = line.rsplit(" ", 1)
        out.append((stack.split(";"), int(count)))
    return out


def check_outputs(node, d, gmon, report):
    """The JIT's flat samples are the JIT functions' leaves of folded
    stacks, their frames in the flame graph and their functions in pprof;
    the top function, its share, the samples and a note per output."""
    js, total = jit_flat(report)
    top = max(js, key=js.get) if js else None
    assert top and re.match(r"\w+:\*fib .*fib\.js:2:13$", top), js
    p = sum(js.values()) / total
    tol = tolerance(p, total, 0.02)
    assert p > 0.5, (p, js, total)

    stacks = folded(node, gmon, d)
    ftotal = sum(c for _, c in stacks)
    leaf = sum(c for f, c in stacks if f[-1] in js) / ftotal
    lost = sum(c for f, c in stacks if f[-1] in ("[libraries]", "[unknown]")) / ftotal
    assert abs(leaf - p) <= tol, ("folded", leaf, p, tol)
    assert lost < tol, ("folded leaves [libraries]/[unknown]", lost)

    svg = os.path.join(d, "fib.svg")
    r = pcprof("flame", "-o", svg, node, gmon, cwd=d)
    assert r.returncode == 0, r.stderr
    titles = re.findall(r"<title>([^<]*?) \((\d+) samples?, [\d.]+%\)</title>",
                        open(svg).read())
    flame_js = sum(int(n) for name, n in titles if name == top)
    assert abs(flame_js / ftotal - js[top] / total) <= tol, ("flame", titles, js)

    go = need("go")
    pb = os.path.join(d, "fib.pb.gz")
    r = pcprof("report", "--format", "pprof", "-o", pb, node, gmon, cwd=d)
    assert r.returncode == 0, r.stderr
    t = subprocess.run([go, "tool", "pprof", "-top", "-sample_index=samples",
                        "-nodecount=1000000", "-nodefraction=0", pb],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PPROF_BINARY_PATH="/nonexistent"))
    assert t.returncode == 0, t.stderr
    rows = {}
    for line in t.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+?)\s*$", line)
        if m:
            rows[m.group(3)] = rows.get(m.group(3), 0) + int(m.group(1))
    ptotal = sum(rows.values())
    pjs = sum(n for name, n in rows.items() if name in js) / ptotal
    assert abs(pjs - p) <= tol, ("pprof", pjs, p, tol, t.stdout[:2000])
    return top, p, total, "folded %.1f %%, flame %d, pprof %.1f %%" % (
        100 * leaf, flame_js, 100 * pjs)


def test_node_perf_map_names_jit_frames_in_folded_flame_and_pprof():
    node, d, rdir, gmon, report = record("--perf-basic-prof")
    try:
        top, p, total, notes = check_outputs(node, d, gmon, report)
    finally:
        pid = open(gmon + ".objects").read().split("\npid ")[1].split()[0]
        if os.path.exists("/tmp/perf-%s.map" % pid):
            os.unlink("/tmp/perf-%s.map" % pid)
        shutil.rmtree(d, ignore_errors=True)
    return "%s %.1f %% of %d samples; %s" % (top, 100 * p, total, notes)


def test_node_jitdump_names_the_same_functions():
    """--perf-prof writes no perf map but jit-PID.dump in node's working
    directory: pcprof finds it there (and beside the profile, once moved),
    and names fib as the perf map does. Without it, the samples are
    [anonymous code]."""
    node, d, rdir, gmon, report = record("--perf-prof")
    try:
        dumps = [f for f in os.listdir(d) if re.match(r"jit-\d+\.dump$", f)]
        assert len(dumps) == 1, os.listdir(d)
        assert not os.path.exists("/tmp/perf-%s.map" % dumps[0][4:-5])
        top, p, total, notes = check_outputs(node, d, gmon, report)
        # beside the profile, read from another directory
        shutil.move(os.path.join(d, dumps[0]), os.path.join(rdir, dumps[0]))
        r = pcprof("report", "--format", "json", "--top", "0", node, gmon, cwd="/")
        assert r.returncode == 0, r.stderr
        js, _ = jit_flat(json.loads(r.stdout))
        assert top in js, js
        # none: unnamed
        os.unlink(os.path.join(rdir, dumps[0]))
        r = pcprof("report", "--format", "json", "--top", "0", node, gmon, cwd=d)
        assert r.returncode == 0, r.stderr
        js, n = jit_flat(json.loads(r.stdout))
        names = {f["name"]: f["self_samples"] for f in json.loads(r.stdout)["functions"]}
        assert not js and names.get("[anonymous code]", 0) >= p * n - tolerance(p, n) * n, names
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return "%s %.1f %% of %d samples; %s" % (top, 100 * p, total, notes)
