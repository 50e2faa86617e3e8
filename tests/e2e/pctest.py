# SPDX-License-Identifier: BSD-2-Clause
"""Helpers for the end-to-end tests: run a program under libpc.so, read the
result with the real gprof, and judge shares with tolerances derived from
sampling statistics."""

import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET

BUILD = os.environ.get("PC_BUILD", "build")


class Skip(Exception):
    """A test that cannot run here, and why. run.py reports it as skipped,
    and under CI=true as failed."""


def skip(reason):
    raise Skip(reason)


def need(*tools):
    """The path of the first of tools on PATH; skips the test when none is."""
    for t in tools:
        path = shutil.which(t)
        if path:
            return path
    skip("%s not found on PATH" % " or ".join(tools))


def lib():
    return os.path.abspath(os.path.join(BUILD, "libpc.so"))


def prog(name):
    return os.path.abspath(os.path.join(BUILD, "tests", "progs", name))


class Run:
    """One program run: its output, status, and where its profile went."""

    def __init__(self, argv, cwd, env, proc):
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.status = proc.returncode

    def truth(self):
        for line in self.stdout.splitlines():
            if line.startswith("truth: "):
                return json.loads(line[7:])
        raise AssertionError("no truth line in output of %s: status %s, stdout %r, "
                             "stderr %r" % (self.argv[0], self.status,
                                            self.stdout[-300:], self.stderr[-600:]))

    def summary(self):
        """The PC_VERBOSE line, as numbers."""
        m = re.search(r"libpc: wrote (\S+): (\d+) samples \((\d+) signals\)"
                      r" in ([\d.]+) s CPU; rate (\d+) Hz requested, (\d+) Hz"
                      r" effective, (\d+) signals/s; (\d+) threads;[^;]*; (\d+)"
                      r" samples outside", self.stderr)
        if not m:
            raise AssertionError("no libpc summary on stderr: %r" % self.stderr)
        keys = ("path", "samples", "signals", "cpu", "hz", "effective_hz",
                "signal_rate", "threads", "outside")
        vals = [m.group(1)] + [float(g) for g in m.groups()[1:]]
        return dict(zip(keys, vals))

    def path(self, name="gmon.out"):
        return os.path.join(self.cwd, name)


def default_signals():
    """preexec_fn for the programs the tests run: the signal dispositions a
    program normally starts with. A shell without job control starts a
    background command (`make check &`) with SIGINT and SIGQUIT ignored,
    nohup ignores SIGHUP, and ignored signals stay ignored across exec: the
    test programs that end by those signals would not."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def clean_env(extra=None, profiled=True):
    """This environment without libpc's variables, with LD_PRELOAD=libpc.so
    when profiled, and extra on top."""
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("PC_") or k.startswith("DEBUGINFOD_") or \
                k in ("GMON_OUT_PREFIX", "LD_PRELOAD"):
            del e[k]
    if profiled:
        e["LD_PRELOAD"] = lib()
    e.update(extra or {})
    return e


def communicate(p, timeout, what):
    """p.communicate() within timeout: (stdout, stderr); on a hang p's
    process group (started with start_new_session) is killed whole and
    the test fails, naming what hung."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError("%s: still running after %d s" % (what, timeout))


def run(argv, env=None, cwd=None, profiled=True, verbose=True, timeout=120,
        stdin=None):
    cwd = cwd or tempfile.mkdtemp(prefix="pc-e2e-")
    e = clean_env({"PC_VERBOSE": "1"} if profiled and verbose else None, profiled)
    e.update(env or {})
    p = subprocess.run(argv, cwd=cwd, env=e, capture_output=True, text=True,
                       timeout=timeout, input=stdin, preexec_fn=default_signals)
    return Run(argv, cwd, e, p)


_ticks = {}


def tick_factor(env):
    """How much longer runs under env must be for the same statistical
    power: 1 with a timer that samples at the requested rate, 3 where
    CPU-time timers are held to the kernel tick and a signal carries
    several samples (PC_TIMER=posix, or taskclock without perf events), so that
    a run holds a third as many independent observations."""
    key = tuple(sorted(env.items()))
    if key not in _ticks:
        r = run([prog("regress-base"), "0.1", "1"], env=env)
        m = re.search(r"(\d+) samples \((\d+) signals\)", r.stderr)
        assert m, r.stderr
        _ticks[key] = 3 if int(m.group(1)) > 1.5 * int(m.group(2)) else 1
    return _ticks[key]


def gprof_flat(exe, *gmon):
    """gprof's flat profile: {name: self seconds}, and the total (the sum
    of the self seconds as printed, each to 0.01 s: spread over many
    functions of a few samples each, far under gprof's own total, for
    which see gprof_total), and gprof's output."""
    p = subprocess.run(["gprof", "-b", "-p", exe] + list(gmon),
                       capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise AssertionError("gprof failed (%d): %s" % (p.returncode, p.stderr))
    funcs = {}
    for line in p.stdout.splitlines():
        f = line.split()
        # "%time cumulative self [calls self/call total/call] name"
        if len(f) >= 4 and re.match(r"^[\d.]+$", f[0]) and \
                re.match(r"^[\d.]+$", f[2]):
            funcs[f[-1]] = funcs.get(f[-1], 0.0) + float(f[2])
    return funcs, sum(funcs.values()), p.stdout


def gprof_total(flat):
    """The seconds of gprof's flat profile (gprof_flat's output): the
    cumulative column of its last row, summed by gprof before it rounds
    to 0.01 s. Not the sum of the self column: 296 samples of 1 ms over
    hostile's 256 sleds print as 0.03 s of self time, 0.29 cumulative."""
    total = 0.0
    for line in flat.splitlines():
        f = line.split()
        if len(f) >= 4 and re.match(r"^[\d.]+$", f[0]) and \
                re.match(r"^[\d.]+$", f[1]):
            total = float(f[1])
    return total


def tolerance(p, n, systematic=0.01):
    """How far a share measured from n independent samples may stray from
    p: four standard errors of a binomial proportion, plus an allowance for
    what sampling cannot see (timing calls, loop overhead in main)."""
    return 4.0 * math.sqrt(max(p * (1 - p), 0.0025) / max(n, 1)) + systematic


def check_shares(truth, funcs, n, names):
    """Every named function's share of the named functions' seconds must
    match the truth's within tolerance(); returns the worst gap."""
    tt = sum(truth[k] for k in names)
    tm = sum(funcs.get(k, 0.0) for k in names)
    assert tm > 0, "gprof shows none of %s: %s" % (names, funcs)
    worst = 0.0
    for k in names:
        want = truth[k] / tt
        got = funcs.get(k, 0.0) / tm
        tol = tolerance(want, n)
        assert abs(got - want) <= tol, \
            "%s: share %.3f, truth %.3f, tolerance %.3f (n=%d signals)" % \
            (k, got, want, tol, n)
        worst = max(worst, abs(got - want))
    return worst


def clear_order(truth, names, n, gaps=3.0):
    """The pairs (a, b) of names whose true shares differ by at least gaps
    tolerances at n signals, a the larger: a measured profile must rank a
    above b. Pairs closer than that are left out: their order is not
    asserted."""
    tt = sum(truth[k] for k in names)
    share = {k: truth[k] / tt for k in names}
    return [(a, b) for a in names for b in names
            if share[a] - share[b] >= gaps * max(tolerance(share[a], n),
                                                 tolerance(share[b], n))]


def read_gmon(path):
    """A minimal independent reader: histogram records and arcs, as written.
    In a libpc file, arcs from address 0 to 1 count the samples outside the
    executable (gmon.h): they are summed in "outside", not listed."""
    with open(path, "rb") as f:
        b = f.read()
    assert b[:4] == b"gmon", "%s: bad magic" % path
    version, = struct.unpack_from("<I", b, 4)
    spare = b[8:20]
    off = 20
    hists, arcs, outside = [], [], 0
    while off < len(b):
        tag = b[off]
        off += 1
        if tag == 0:
            low, high, n, rate = struct.unpack_from("<QQII", b, off)
            dimen = b[off + 24:off + 39].rstrip(b"\0")
            off += 40
            counts = struct.unpack_from("<%dH" % n, b, off)
            off += 2 * n
            hists.append((low, high, n, rate, dimen, counts))
        elif tag == 1:
            arc = struct.unpack_from("<QQI", b, off)
            if arc[:2] == (0, 1) and spare[:2] == b"pc":
                outside += arc[2]
            else:
                arcs.append(arc)
            off += 20
        else:
            raise AssertionError("%s: tag %d at %d" % (path, tag, off - 1))
    return {"version": version, "spare": spare, "hists": hists, "arcs": arcs,
            "outside": outside}


def nm(exe):
    """{name: address} of the functions in exe."""
    out = subprocess.run(["nm", "--defined-only", exe], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            syms[f[2]] = int(f[0], 16)
    return syms


def gprof_callers(exe, gmon, callee):
    """From gprof's call graph: {caller: arc count} for callee."""
    p = subprocess.run(["gprof", "-b", "-q", exe, gmon], capture_output=True,
                       text=True, timeout=120)
    if p.returncode:
        raise AssertionError("gprof -q failed (%d): %s" % (p.returncode, p.stderr))
    callers = {}
    for block in p.stdout.split("-----------------------------------------------"):
        lines = block.strip("\n").splitlines()
        primary = [i for i, l in enumerate(lines)
                   if re.match(r"^\[\d+\]", l) and
                   re.search(r"\s%s \[\d+\]\s*$" % re.escape(callee), l)]
        if not primary:
            continue
        for l in lines[:primary[0]]:
            # "self children called/total name [i]", or for a recursive
            # call "called name [i]"
            m = re.search(r"(\d+)/(\d+)\s+(\S+) \[\d+\]\s*$", l) or \
                re.search(r"^\s+(\d+)()\s+(\S+) \[\d+\]\s*$", l)
            if m:
                callers[m.group(3)] = callers.get(m.group(3), 0) + int(m.group(1))
    return callers, p.stdout


def flame_fills(svg):
    """{function: {(r, g, b)}}: the fill colours of an SVG flame graph's
    frames (pcprof flame, diff --flame), by the function each names."""
    ns = {"s": "http://www.w3.org/2000/svg"}
    fills = {}
    for g in ET.parse(svg).getroot().iterfind(".//s:g[@id='frames']/s:g", ns):
        t = g.find("s:title", ns).text
        fill = g.find("s:rect", ns).get("fill")
        fills.setdefault(t[:t.rindex(" (")], set()).add(
            tuple(int(v) for v in re.match(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups()))
    return fills
