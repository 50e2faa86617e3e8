# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the Firefox export's native allocations (PC_ALLOC
with PC_TIMELINE, pcprof run --alloc --timeline, then pcprof report
--format firefox, with or without --metric alloc|alloc-bytes|inuse|
inuse-bytes): each thread's sampled allocations and the frees of the
blocks they tracked, timed, in bytes, with their addresses. The Firefox
Profiler's own profiler-cli reads the export: at PC_ALLOC_RATE=1 its
native-allocations call tree gives each site exactly the bytes that
pcprof report --alloc gives, and its retained-memory tree (frees paired
with their allocations by address) each site's bytes in use at exit.
tests/progs/alloc39.c has the known sites; alloc39fork.c forks a child
that frees blocks of its parent's, and execs: each process its own."""

import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import clean_env, prog
from test_host import pcprof
from test_timeline38 import Cli, leaf
from test_alloc39 import KNOWN
from test_alloc39fork import PARENT, FORK, EXEC

TIMEOUT = 60
METRICS = ("alloc", "alloc-bytes", "inuse", "inuse-bytes")
# one recorded run of a program serves every test that reads it (one
# worker, in file order): a test that edits a run's files edits a copy
SHARED = True
_runs = {}


def recorded(argv, *run_args):
    """pcprof run RUN_ARGS of argv at PC_ALLOC_RATE=1: the run directory
    and pcprof run's stderr."""
    d = tempfile.mkdtemp(prefix="pc-alloc39ff-")
    rdir = os.path.join(d, "r")
    e = clean_env(None, False)
    e["PC_ALLOC_RATE"] = "1"
    p = subprocess.run([pcprof(), "run"] + list(run_args) + ["--no-report", "-o", rdir, "--"]
                       + argv, capture_output=True, text=True, timeout=TIMEOUT, env=e)
    assert "libpc:" not in p.stderr, p.stderr
    return rdir, p


def shared(argv, *run_args):
    """recorded(argv, *run_args), made once for all the tests that read
    it: they only read its files and write their exports elsewhere."""
    key = (tuple(argv), run_args)
    if key not in _runs:
        _runs[key] = recorded(argv, *run_args)
    return _runs[key]


def copied(rdir):
    """A copy of run directory rdir, for a test that edits its files."""
    to = os.path.join(tempfile.mkdtemp(prefix="pc-alloc39ff-copy-"), "r")
    shutil.copytree(rdir, to)
    return to


def firefox(rdir, *args):
    """pcprof report ARGS --format firefox of rdir: the export's path."""
    out = os.path.join(tempfile.mkdtemp(prefix="pc-alloc39ff-out-"), "profile.json")
    p = subprocess.run([pcprof(), "report"] + list(args) + ["--format", "firefox", "-o", out,
                                                            rdir],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, (args, p.stderr)
    return out


def sites(rdir, pid=None):
    """pcprof report --alloc --format json: {site: (bytes, in use bytes)},
    asked once for each run and pid."""
    key = ("sites", rdir, pid)
    if key not in _runs:
        _runs[key] = report_sites(rdir, pid)
    return _runs[key]


def report_sites(rdir, pid):
    p = subprocess.run([pcprof(), "report", "--alloc", "--format", "json"] +
                       (["--process", str(pid)] if pid else []) + [rdir],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)["profile"]
    assert j["exact"] and j["rate_bytes"] == 1, j
    return {s["name"]: (s["alloc_space"], s["inuse_space"]) for s in j["sites"]}


def cli_sites(cli, tid):
    """What profiler-cli's native-allocations and retained trees give
    thread tid (a process's main thread: its pid): ({function: self
    bytes}, {function: self bytes retained}). Asked once for each thread
    of the session (each call of profiler-cli starts Node: 0.25 s of
    CPU), the thread list once."""
    memo = cli.__dict__.setdefault("alloc39ff", {})
    if "threads" not in memo:
        memo["threads"] = cli.json("thread", "list")["threads"]
    if tid not in memo:
        memo[tid] = ask_sites(cli, memo["threads"], tid)
    return memo[tid]


def ask_sites(cli, threads, tid):
    """cli_sites's answer, from profiler-cli."""
    got = ({}, {})
    for t in threads:
        if t["tid"] != tid:
            continue
        for k, strategy in enumerate(("native-allocations", "native-retained-allocations")):
            j = cli.json("thread", "functions", "--thread", t["threadHandle"], "--strategy",
                         strategy, "--limit", "0", "--include-idle")
            assert j["weightType"] == "bytes", j["weightType"]
            for f in j["functions"]:
                if f["selfSamples"]:
                    got[k][f["name"]] = got[k].get(f["name"], 0) + f["selfSamples"]
    return got


def check_sites(cli, pid, known):
    """Each known site's bytes and in-use bytes, from profiler-cli, as
    they are known and as pcprof report --alloc has them."""
    alloc, retained = cli_sites(cli, pid)
    for name, want in known.items():
        have = (alloc.get(name, 0), retained.get(name, 0))
        assert have == want, "%d %s: bytes, retained %s, not %s" % (pid, name, have, want)


def test_alloc_firefox_native_allocations_are_each_sites_bytes_at_rate_1():
    """alloc39 at rate 1: profiler-cli's native allocations give each
    known site its bytes, and the retained ones its bytes in use at exit
    (leak_site's 7000, the rest 0: realloc chains and the aligned forms
    freed); every site of pcprof report --alloc agrees, libc's too. The
    export is the same with each --metric and without one."""
    exe = prog("alloc39")
    rdir, p = shared([exe], "--alloc", "--timeline")
    assert p.returncode == 3, p.stderr		# alloc39's own status
    path = firefox(rdir, "--metric", "alloc-bytes")
    with open(path) as f:
        ff = json.load(f)
    for m in METRICS[:1] + METRICS[2:]:
        with open(firefox(rdir, "--metric", m)) as f:
            assert json.load(f)["threads"] == ff["threads"], m
    with open(firefox(rdir)) as f:
        assert json.load(f)["threads"] == ff["threads"]
    assert [t["name"] for t in ff["threads"]] == ["alloc39"], ff["threads"][0]["name"]
    pid = int(ff["threads"][0]["pid"])
    cli = Cli(path)
    try:
        check_sites(cli, pid, {k: (v[1], v[3]) for k, v in KNOWN.items()})
        # every site that pcprof names in the program (libc's: a frame
        # of the program's may be named otherwise in an export)
        alloc, retained = cli_sites(cli, pid)
        for name, (b, inb) in sites(rdir).items():
            if name in alloc or name in KNOWN or name == "main":
                assert (alloc.get(name, 0), retained.get(name, 0)) == (b, inb), \
                    (name, alloc.get(name), retained.get(name), b, inb)
        assert sum(alloc.values()) == sum(b for b, _ in sites(rdir).values())
        assert sum(retained.values()) == sum(inb for _, inb in sites(rdir).values())
    finally:
        cli.stop()
    # --to S: the events up to S seconds after the run's start (time 0
    # of the export), S inside the widest gap between two events' times
    # (ms) in the middle half
    t = sorted(ff["threads"][0]["nativeAllocations"]["time"])
    k = max(range(len(t) // 4, 3 * len(t) // 4), key=lambda i: t[i] - t[i - 1])
    cut = (t[k - 1] + t[k]) / 2
    assert t[k] - t[k - 1] > 0.01, (t[k - 1], t[k])
    with open(firefox(rdir, "--to", "%.6f" % (cut / 1000))) as f:
        na = json.load(f)["threads"][0]["nativeAllocations"]
    assert na["length"] == sum(1 for x in t if x < cut), (na["length"], k)
    assert max(na["time"]) < cut, max(na["time"])


def test_alloc_firefox_threads_allocating_at_once_keep_every_event():
    """alloc39 threads at rate 1: 4 threads run the sites at once, faster
    than libpc's grower thread backs the timeline (it kept 4,096 of 90,064
    events once, the rest lost): each thread has each known site's bytes
    and retained bytes exactly, and all of them the report's sums."""
    exe = prog("alloc39")
    rdir, p = recorded([exe, "threads"], "--alloc", "--timeline")
    assert p.returncode == 3, p.stderr
    path = firefox(rdir, "--metric", "alloc-bytes")
    with open(path) as f:
        ff = json.load(f)
    workers = [t["tid"] for t in ff["threads"] if not t["isMainThread"]]
    assert len(workers) == 4, [t["tid"] for t in ff["threads"]]
    cli = Cli(path)
    try:
        total = [0, 0]
        for tid in [t["tid"] for t in ff["threads"]]:
            if tid in workers:
                check_sites(cli, tid, {k: (v[1], v[3]) for k, v in KNOWN.items()})
            alloc, retained = cli_sites(cli, tid)
            total[0] += sum(alloc.values())
            total[1] += sum(retained.values())
        s = sites(rdir).values()
        assert total == [sum(b for b, _ in s), sum(inb for _, inb in s)], total
    finally:
        cli.stop()


def test_alloc_firefox_fork_and_exec_children_have_their_own_allocations():
    """alloc39fork at rate 1 under --alloc --timeline: each process's
    threads in the export have its own sites' bytes and retained bytes
    alone, as pcprof report --alloc --process PID has them; the fork
    child's frees of its parent's blocks are in neither."""
    exe = prog("alloc39fork")
    rdir, p = recorded([exe], "--alloc", "--timeline")
    assert p.returncode == 0 and p.stdout == "alloc39fork done\n", (p.returncode, p.stderr)
    pids = {k: int(v) for k, v in re.findall(r"^(parent|fork|exec|vfork) (\d+)$", p.stderr,
                                              re.M)}
    assert len(set(pids.values())) == 4, p.stderr
    path = firefox(rdir, "--metric", "inuse-bytes")
    with open(path) as f:
        ff = json.load(f)
    assert {t["tid"] for t in ff["threads"]} == set(pids.values()), ff["threads"]
    cli = Cli(path)
    try:
        for who, known in (("parent", PARENT), ("fork", FORK), ("exec", EXEC),
                           ("vfork", EXEC)):
            want = {k: (v[1], v[3]) for k, v in known.items()}
            check_sites(cli, pids[who], want)
            mine = {k: v for k, v in sites(rdir, pids[who]).items() if k in want}
            assert mine == want, (who, mine, want)
            alloc, _ = cli_sites(cli, pids[who])
            others = set(PARENT) | set(FORK) | set(EXEC)
            assert not (set(alloc) & others) - set(known), (who, alloc)
    finally:
        cli.stop()


def test_alloc_firefox_failed_realloc_takes_its_free_back():
    """alloc39 unrealloc at rate 1: 5 blocks of 300 bytes, each grown by
    a realloc that fails (libpc counts the block's free, then takes it
    back: the block is the program's still), then 3 freed. The export's
    events at unrealloc_site are the 5 allocations and the 3 frees alone,
    600 bytes retained, as pcprof report --alloc has them; a free left
    in would have made each kept block's address freed."""
    rdir, p = recorded([prog("alloc39"), "unrealloc"], "--alloc", "--timeline")
    assert p.returncode == 3, p.stderr
    assert sites(rdir).get("unrealloc_site") == (1500, 600), sites(rdir)
    with open(firefox(rdir, "--metric", "inuse-bytes")) as f:
        t = json.load(f)["threads"][0]
    na = t["nativeAllocations"]
    mine = [(w, a) for k, w, a in zip(na["stack"], na["weight"], na["memoryAddress"])
            if leaf(t, k) == "unrealloc_site"]
    assert sorted(w for w, _ in mine) == [-300] * 3 + [300] * 5, mine
    freed = [a for w, a in mine if w < 0]
    assert len(set(freed)) == 3 and set(freed) <= {a for w, a in mine if w > 0}, mine


def refused(rdir, m, *words):
    out = os.path.join(tempfile.mkdtemp(prefix="pc-alloc39ff-no-"), "p.json")
    p = subprocess.run([pcprof(), "report", "--metric", m, "--format", "firefox", "-o", out,
                        rdir], capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, (m, p.returncode, p.stderr)
    for w in words:
        assert w in p.stderr, (m, w, p.stderr)
    assert not os.path.exists(out), m


def edit_records(path, edit):
    """PROFILE.timeline at path with each record (tag, payload) replaced
    by edit's (None: left out)."""
    with open(path, "rb") as f:
        b = f.read()
    out, at = b"", 0
    while at < len(b):
        tag, n = int.from_bytes(b[at:at + 4], "little"), int.from_bytes(b[at + 4:at + 8],
                                                                          "little")
        r = edit(tag, b[at + 8:at + 8 + n])
        if r:
            out += r[0].to_bytes(4, "little") + len(r[1]).to_bytes(4, "little") + r[1]
        at += 8 + n
    assert out != b
    with open(path, "wb") as f:
        f.write(out)


def strip_alloc_records(path):
    """Without its allocation records (tags 7 and 8, preload/timeline.h):
    as an earlier build wrote it."""
    edit_records(path, lambda tag, b: None if tag in (7, 8) else (tag, b))


def test_alloc_firefox_without_allocation_events_is_refused_in_one_line():
    """--metric M --format firefox where the allocations keep no time: a
    run of --alloc without --timeline, or a timeline with no allocation
    events (an earlier build's): one line saying so and how to record
    them, exit 2, no file. The CPU timeline's export of the second is
    still made, with no native allocations."""
    exe = prog("alloc39")
    rdir, p = recorded([exe], "--alloc")
    for m in METRICS:
        refused(rdir, m, "--metric %s --format firefox: it has no timeline" % m,
                "--alloc --timeline")
    rdir = copied(shared([exe], "--alloc", "--timeline")[0])
    strip_alloc_records(os.path.join(rdir, "gmon.out.timeline"))
    for m in METRICS:
        refused(rdir, m, "its timeline has no allocation events", "--alloc --timeline")
    with open(firefox(rdir)) as f:
        ff = json.load(f)
    assert ff["threads"] and not any("nativeAllocations" in t for t in ff["threads"])


def test_alloc_firefox_damaged_allocation_records_are_one_line_and_status_2():
    """A timeline whose allocation counts or events are cut short: one
    line naming the file, exit 2, no file written."""
    exe = prog("alloc39")
    for tag in (7, 8):
        rdir = copied(shared([exe], "--alloc", "--timeline")[0])
        path = os.path.join(rdir, "gmon.out.timeline")
        edit_records(path, lambda t, b: (t, b[:-4]) if t == tag else (t, b))
        out = os.path.join(tempfile.mkdtemp(prefix="pc-alloc39ff-bad-"), "p.json")
        p = subprocess.run([pcprof(), "report", "--metric", "alloc-bytes", "--format",
                            "firefox", "-o", out, rdir],
                           capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and \
            path in p.stderr, (tag, p.returncode, p.stderr)
        assert not os.path.exists(out), tag
