# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of allocation profiling (PC_ALLOC, pcprof run --alloc,
pcprof report --alloc and --metric): tests/progs/alloc39.c makes known
allocations from known functions, exact at PC_ALLOC_RATE=1 and within the
sampling error at the default rate; the known leak is reported at its
site (and heaptrack agrees on it); alloc39stress.c churns 8 threads
with forks, dlopen, short threads and a handler that allocates, 10 runs
as plain; a C++ program's new and delete in their forms, python3 and
sort run as plain; go tool pprof reads the heap profile.

Every program runs plain and under libpc.so in the style of test_host.py:
same stdout, same status, a bound on the time."""

import json
import math
import os
import re
import subprocess
import tempfile

import pctest
from pctest import clean_env, need, prog, read_gmon
from test_host import pcprof, same, tail

TIMEOUT = 60
RATE1 = {"PC_ALLOC": "1", "PC_ALLOC_RATE": "1"}


def hooks_lib():
    """libpc-alloc.so, the malloc hooks, beside libpc.so."""
    return os.path.join(os.path.dirname(pctest.lib()), "libpc-alloc.so")


def with_hooks(e):
    """e with libpc-alloc.so first in LD_PRELOAD where it asks for
    allocations (PC_ALLOC, not 0) and preloads libpc.so, as pcprof run
    --alloc preloads it."""
    if e.get("PC_ALLOC", "0") != "0" and e.get("LD_PRELOAD"):
        e["LD_PRELOAD"] = hooks_lib() + ":" + e["LD_PRELOAD"]
    return e


class Done:
    def __init__(self, argv, cwd, out, err, status):
        self.argv, self.cwd = argv, cwd
        self.stdout, self.stderr, self.status = out, err, status

    def path(self, name="gmon.out"):
        return os.path.join(self.cwd, name)


def run(argv, env=None, profiled=True, stdin=None, timeout=TIMEOUT, hooks=True):
    """One run in a directory of its own and a session of its own (a hang
    kills the whole group); with hooks, libpc-alloc.so preloaded where env
    asks for allocations (with_hooks)."""
    cwd = tempfile.mkdtemp(prefix="pc-alloc39-")
    e = clean_env(None, profiled)
    e.update(env or {})
    if hooks:
        with_hooks(e)
    p = subprocess.Popen(argv, cwd=cwd, env=e, stdin=subprocess.PIPE if stdin else None,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=pctest.default_signals)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        raise AssertionError("%s hung (%s profiled): %s" % (argv, profiled, tail(err)))
    return Done(argv, cwd, out, err, p.returncode)


def both(argv, env, stdin=None):
    """Plain, then profiled with env: the same output and status."""
    plain = run(argv, None, profiled=False, stdin=stdin)
    prof = run(argv, env, stdin=stdin)
    same(prof, plain, " ".join(argv))
    assert "libpc:" not in prof.stderr, prof.stderr
    return prof


def report(exe, r, *args, where=None):
    p = subprocess.run([pcprof(), "report"] + list(args) + [exe, where or r.path()],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, "pcprof report %s: %s" % (args, p.stderr)
    return p.stdout


def sites(exe, r, where=None):
    """pcprof report --alloc --format json (of r's profile, or of where):
    {site: its figures}, and the whole."""
    j = json.loads(report(exe, r, "--alloc", "--format", "json", where=where))
    return {s["name"]: s for s in j["sites"]}, j


# What alloc39 allocates at each site: allocations, bytes, and in use at
# exit (allocations, bytes).
KNOWN = {
    "small_site": (10000, 10000 * 64, 0, 0),
    "big_site": (100, 100 * 100000, 0, 0),
    "leak_site": (7, 7000, 7, 7000),
    "calloc_site": (500, 500 * 320, 0, 0),
    "realloc_site": (100, sum(i * 100 for i in range(1, 101)), 0, 0),
    "aligned_site": (400, 200 * 4096 + 200 * 128, 0, 0),
    "array_site": (150, 16 * sum(range(1, 51)) + 50 * 256 + 50 * 100, 0, 0),
}


def check_exact(s, times=1):
    for name, (n, b, inn, inb) in KNOWN.items():
        got = s.get(name)
        assert got, "no site %s in %s" % (name, sorted(s))
        want = (n * times, b * times, inn * times, inb * times)
        have = (got["alloc_objects"], got["alloc_space"], got["inuse_objects"],
                got["inuse_space"])
        assert have == want, "%s: %s, not %s" % (name, have, want)


def test_alloc_every_count_and_byte_is_exact_at_rate_1():
    """At PC_ALLOC_RATE=1 every allocation is recorded: each site's
    allocations, bytes, and what is in use at exit are exact, realloc
    chains and the aligned forms included."""
    exe = prog("alloc39")
    r = both([exe], RATE1)
    s, j = sites(exe, r)
    check_exact(s)
    assert j["exact"] is True and j["rate_bytes"] == 1, j


def test_alloc_threads_at_rate_1_add_up_exactly():
    """The same sites in 4 threads at once: 4 times each figure."""
    exe = prog("alloc39")
    r = both([exe, "threads"], RATE1)
    check_exact(sites(exe, r)[0], 4)


def test_alloc_default_rate_is_within_its_sampling_error():
    """At the default rate (512 KiB), 4 GiB of 4 KiB blocks from one site:
    its bytes and allocations are within 4.5 standard errors of the truth
    (1/sqrt(samples): about 8000 samples, 5 %), and nothing is in use."""
    exe = prog("alloc39")
    r = both([exe, "churn", "4096"], {"PC_ALLOC": "1"})
    s, j = sites(exe, r)
    c = s["churn_site"]
    n = c["alloc_samples"]
    tol = 4.5 / math.sqrt(n)
    assert n > 4000, c
    assert abs(c["alloc_space"] / 2 ** 32 - 1) < tol, (c, tol)
    assert abs(c["alloc_objects"] / 2 ** 20 - 1) < tol, (c, tol)
    assert c["inuse_space"] == 0 and c["inuse_objects"] == 0, c
    assert j["rate_bytes"] == 512 * 1024, j


def test_alloc_the_leak_is_reported_at_its_site():
    """The text report's leaks at exit: leak_site's 7 blocks of 1000
    bytes, called from main, and the plain word that blocks still
    reachable from globals are not told apart."""
    exe = prog("alloc39")
    r = both([exe], RATE1)
    out = report(exe, r, "--alloc")
    assert re.search(r"^\s+7000 bytes in 7 blocks at leak_site$", out, re.M), out
    assert re.search(r"^\s+at leak_site <- main\b", out, re.M), out
    assert "reachable from globals are not told apart" in out, out


def heaptrack_leaks(exe):
    """Debian's heaptrack on exe: {function: (calls, bytes)} of its leaks
    at exit, each at the function that called the allocator (bytes as
    heaptrack_print writes them: 7.00K, rounded)."""
    d = tempfile.mkdtemp(prefix="pc-alloc39-ht-")
    p = subprocess.run([need("heaptrack"), "-o", os.path.join(d, "ht"), exe], cwd=d,
                       capture_output=True, text=True, timeout=120, env=clean_env(None, False))
    assert p.returncode == 3, (p.returncode, p.stderr)
    data = [f for f in os.listdir(d) if f.startswith("ht.")]
    assert data, os.listdir(d)
    q = subprocess.run([need("heaptrack_print"), "-f", os.path.join(d, data[0]), "-l", "1",
                        "-a", "0", "-p", "0", "-T", "0"],
                       capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr
    units = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
    leaks = {}
    for m in re.finditer(r"^([\d.]+)([KMG]?)B? leaked over (\d+) calls from\n(\S+)$",
                         q.stdout, re.M):
        leaks.setdefault(m.group(4), (int(m.group(3)), float(m.group(1)) * units[m.group(2)]))
    return leaks, q.stdout


def test_alloc_the_leak_site_agrees_with_heaptrack():
    """heaptrack (which records every allocation) and pcprof at
    PC_ALLOC_RATE=1 agree on the leak: the same site, its blocks and
    bytes, and leak_site the program's largest leak in both."""
    exe = prog("alloc39")
    ht, text = heaptrack_leaks(exe)
    assert ht.get("leak_site") == (7, 7000.0), text
    r = both([exe], RATE1)
    j = json.loads(report(exe, r, "--metric", "inuse-bytes", "--format", "json"))
    ours = {f["name"]: f["self"] for f in j["functions"] if f["self"] > 0}
    assert ours.get("leak_site") == 7000, ours
    j = json.loads(report(exe, r, "--metric", "inuse", "--format", "json"))
    assert {f["name"]: f["self"] for f in j["functions"]}.get("leak_site") == 7, j
    # the program's own functions that leak, by each: leak_site alone
    own = {"small_site", "big_site", "leak_site", "calloc_site", "realloc_site",
           "aligned_site", "array_site", "main", "sites"}
    assert {f for f in ht if f in own} == {"leak_site"}, text
    assert {f for f in ours if f in own} == {"leak_site"}, ours


def test_alloc_metric_reports_and_folded_stacks_are_in_bytes_and_objects():
    """--metric alloc-bytes: the flat profile in bytes (JSON's self and
    total); --metric inuse-bytes: the leak alone (and the stdout buffer
    libc keeps); --format folded: the stacks by allocations."""
    exe = prog("alloc39")
    r = both([exe], RATE1)
    j = json.loads(report(exe, r, "--metric", "alloc-bytes", "--format", "json"))
    self_ = {f["name"]: f["self"] for f in j["functions"]}
    for name, (n, b, _, _) in KNOWN.items():
        assert self_[name] == b, (name, self_)
    j = json.loads(report(exe, r, "--metric", "inuse-bytes", "--format", "json"))
    assert {f["name"]: f["self"] for f in j["functions"]}.get("leak_site") == 7000, j
    folded = report(exe, r, "--metric", "alloc", "--format", "folded")
    rows = dict(l.rsplit(" ", 1) for l in folded.splitlines())
    assert rows.get("_start;[libraries];main;small_site") == "10000", folded


def test_alloc_flame_graph_is_in_bytes_and_objects():
    """pcprof flame --clock alloc-bytes (and alloc, inuse-bytes) of the
    allocation stacks: each frame's title in the metric's unit, exact at
    rate 1, and the graph's title says what it counts."""
    exe = prog("alloc39")
    r = both([exe], RATE1)

    def flame(metric):
        svg = r.path(metric + ".svg")
        p = subprocess.run([pcprof(), "flame", "--clock", metric, "--stacks-file",
                            r.path("gmon.out.alloc"), "-o", svg, exe, r.path()],
                           capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        with open(svg) as f:
            return f.read()

    svg = flame("alloc-bytes")
    assert re.search(r"<title>big_site \(10000000 bytes, [\d.]+%\)</title>", svg), svg[:2000]
    assert "samples" not in svg.split("<title>all ")[1].split("</title>")[0], svg[:2000]
    assert re.search(r"allocated", svg), svg[:2000]
    svg = flame("alloc")
    assert re.search(r"<title>small_site \(10000 objects, [\d.]+%\)</title>", svg), svg[:2000]
    svg = flame("inuse-bytes")
    assert re.search(r"<title>leak_site \(7000 bytes, [\d.]+%\)</title>", svg), svg[:2000]
    assert "in use at exit" in svg, svg[:2000]


def test_alloc_go_tool_pprof_reads_the_heap_profile():
    """--format pprof: go tool pprof reads the four sample types of a
    heap profile, its default the metric asked for, its period the rate
    (1 here), and finds each site's bytes and the leak."""
    need("go")
    exe = prog("alloc39")
    r = both([exe], RATE1)
    path = r.path("heap.pb.gz")
    p = subprocess.run([pcprof(), "report", "--metric", "inuse-bytes", "--format", "pprof",
                        "-o", path, exe, r.path()], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    env = dict(os.environ, PPROF_BINARY_PATH="/nonexistent")

    def top(index):
        q = subprocess.run([need("go"), "tool", "pprof", "-top", "-unit=B",
                            "-sample_index=" + index, "-nodefraction=0", path],
                           capture_output=True, text=True, timeout=120, env=env)
        assert q.returncode == 0, q.stderr
        return q.stdout

    out = top("alloc_space")
    assert "Type: alloc_space" in out, out
    assert re.search(r"^\s*10000000B\s.*\bbig_site$", out, re.M), out
    out = top("inuse_space")
    assert re.search(r"^\s*7000B\s.*\bleak_site$", out, re.M), out
    raw = subprocess.run([need("go"), "tool", "pprof", "-raw", path], capture_output=True,
                         text=True, timeout=120, env=env).stdout
    assert "alloc_objects/count alloc_space/bytes inuse_objects/count " \
           "inuse_space/bytes[dflt]" in raw, raw[:400]
    # the period: the sampling rate in bytes, 1 at PC_ALLOC_RATE=1
    assert re.search(r"^PeriodType: space bytes\nPeriod: 1$", raw, re.M), raw[:400]


def test_alloc_pcprof_run_alloc_reports_the_sites():
    """pcprof run --alloc: the program's status and output, and the
    sites' table on standard error (sampled: big_site, 10 MB, leads)."""
    exe = prog("alloc39")
    d = tempfile.mkdtemp(prefix="pc-alloc39-run-")
    p = subprocess.run([pcprof(), "run", "--alloc", "-o", os.path.join(d, "r"), exe],
                       capture_output=True, text=True, timeout=TIMEOUT, env=clean_env(None, False))
    assert p.returncode == 3 and p.stdout == "alloc39 done\n", (p.returncode, p.stdout)
    assert "Allocations of alloc39:" in p.stderr, p.stderr
    first = [l for l in p.stderr.splitlines() if re.match(r"^\s+\d+\s+[\d.]+%", l)][0]
    assert first.endswith("big_site"), p.stderr
    assert os.path.exists(os.path.join(d, "r", "gmon.out.alloc"))


def test_alloc_stress_of_threads_forks_dlopen_and_a_handler_10_runs():
    """8 threads of malloc, calloc, realloc and free, forks whose children
    allocate, dlopen and dlclose, short threads and a handler that
    allocates: as plain in 10 of 10 runs (one at rate 1, whose every
    allocation is walked, the others at the default rate), no hang; at rate 1 the handler's and the short threads'
    allocations are counted exactly."""
    exe = prog("alloc39stress")
    plain = run([exe], profiled=False)
    assert plain.status == 0 and "handler ran" in plain.stdout, plain.stdout
    for i in range(10):
        prof = run([exe], RATE1 if i == 1 else {"PC_ALLOC": "1"})
        same(prof, plain, "alloc39stress run %d" % i)
        if i == 1:
            s, _ = sites(exe, prof)
            assert s["on_usr1"]["alloc_objects"] == 4, s.get("on_usr1")
            assert s["short_lived"]["alloc_objects"] == 4, s.get("short_lived")
            assert s["churn"]["inuse_objects"] == 0, s["churn"]


def test_alloc_cxx_new_and_delete_in_their_forms():
    """operator new and delete (array, aligned, nothrow) and std::vector
    growth go through the interposed malloc family: exact at rate 1, the
    leaked vector's blocks in use at exit."""
    exe = prog("alloc39pp")
    r = both([exe], RATE1)
    s, _ = sites(exe, r)
    assert (s["new_site"]["alloc_objects"], s["new_site"]["alloc_space"]) == (1000, 100000)
    assert (s["aligned_new_site"]["alloc_objects"],
            s["aligned_new_site"]["alloc_space"]) == (300, 38400)
    assert (s["nothrow_site"]["alloc_objects"], s["nothrow_site"]["alloc_space"]) == \
        (200, 60000)
    assert s["vector_site"]["inuse_space"] == 24, s["vector_site"]


def test_alloc_python_and_sort_run_as_plain():
    """Real programs under PC_ALLOC (python3 at the default rate, sort at
    rate 1):
    the same output and status as plain, and an allocation profile."""
    py = need("python3")
    srt = need("sort")
    code = "import json; d = {str(i): list(range(i % 50)) for i in range(20000)}; " \
           "print(len(json.dumps(d)))"
    data = "".join("%d\n" % ((i * 7919) % 10007) for i in range(20000))
    r = both([py, "-c", code], {"PC_ALLOC": "1"})
    assert os.path.getsize(r.path("gmon.out.alloc")) > 32
    r = both([srt, "-n"], RATE1, stdin=data)
    assert os.path.getsize(r.path("gmon.out.alloc")) > 32


def test_alloc_without_pc_alloc_no_allocation_profile():
    """PC_ALLOC unset or 0: no PROFILE.alloc, and report --alloc says why
    in one line with status 2."""
    exe = prog("alloc39")
    for env in (None, {"PC_ALLOC": "0"}):
        r = both([exe], env)
        assert not os.path.exists(r.path("gmon.out.alloc"))
    p = subprocess.run([pcprof(), "report", "--alloc", exe, r.path()], capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert p.returncode == 2 and "no allocation profile" in p.stderr, p.stderr


def killed(argv, env):
    """argv (whose last word is "kill") under libpc.so with env: ended by
    its own SIGKILL once its allocations are made, so that its profile is
    the live file's, which pcprof report finishes."""
    r = run(argv, env)
    assert r.status == -9, (r.status, r.stderr)
    assert not os.path.exists(r.path()), os.listdir(r.cwd)
    assert any(f.endswith(".live") for f in os.listdir(r.cwd)), os.listdir(r.cwd)
    return r


def test_alloc_a_killed_program_keeps_its_allocation_profile_exact_at_rate_1():
    """SIGKILLed after its allocations (4 threads of the known sites): the
    live file holds the allocation profile, and pcprof report of the run's
    directory finishes it with
    every count and byte exact, the blocks still in use at the kill (the
    leak) at their site."""
    exe = prog("alloc39")
    r = killed([exe, "threads", "kill"], RATE1)
    s, j = sites(exe, r, r.cwd)
    check_exact(s, 4)
    assert j["exact"] is True, j
    assert not any(f.endswith(".live") for f in os.listdir(r.cwd)), os.listdir(r.cwd)


def test_alloc_a_killed_program_keeps_its_estimates_within_the_sampling_error():
    """SIGKILLed after 4 GiB of 4 KiB blocks at the default rate: the
    finished live file's estimates of churn_site are within 4.5 standard
    errors (1/sqrt(samples)) of the truth, as a program's that exits."""
    exe = prog("alloc39")
    r = killed([exe, "churn", "4096", "kill"], {"PC_ALLOC": "1"})
    s, j = sites(exe, r, r.cwd)
    c = s["churn_site"]
    n = c["alloc_samples"]
    tol = 4.5 / math.sqrt(n)
    assert n > 4000, c
    assert abs(c["alloc_space"] / 2 ** 32 - 1) < tol, (c, tol)
    assert abs(c["alloc_objects"] / 2 ** 20 - 1) < tol, (c, tol)
    assert j["rate_bytes"] == 512 * 1024, j


def gate_runs(exe, n, env, args=()):
    """n runs of exe (alloc39gate or -more) under libpc with env: their
    profiles."""
    out = []
    for _ in range(n):
        r = run([exe] + list(args), env)
        assert r.status == 0 and r.stdout == "alloc39gate done\n", (r.status, r.stderr)
        out.append(r.path())
    return out


def gate_diff(base, new, metric, extra=()):
    """pcprof diff --metric metric --format json of the base runs (of
    alloc39gate) against the new runs (of new's executable): status and
    verdict."""
    p = subprocess.run([pcprof(), "diff", "--metric", metric, "--format", "json"] + list(extra) +
                       ["--base", prog("alloc39gate")] + base[1] + ["--new", new[0]] + new[1],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def test_alloc_gate_catches_one_percent_more_in_one_function_10_of_10():
    """At PC_ALLOC_RATE=1, one run a side: a build whose grow_site makes
    1 % more allocations of its size fails diff --metric alloc-bytes in 10
    of 10 comparisons (and --metric alloc), naming grow_site (not churn,
    the helper every site calls, which grew 0.18 %); two runs of the same
    build pass 10 of 10, every figure the same."""
    base = gate_runs(prog("alloc39gate"), 10, RATE1)
    more = gate_runs(prog("alloc39gate-more"), 10, RATE1)
    for i in range(10):
        st, j = gate_diff((None, [base[i]]), (prog("alloc39gate-more"), [more[i]]),
                          "alloc-bytes" if i else "alloc")
        assert st == 1 and j["blamed"] == "grow_site", (j["verdict"], j["blamed"])
        assert j["regressions"] == 1 and j["exact"] is True, j
        grow = [f for f in j["functions"] if f["name"] == "grow_site"][0]
        assert abs(grow["change_ratio"] - 1.01) < 1e-9, grow
        st, j = gate_diff((None, [base[i]]), (prog("alloc39gate"), [base[(i + 1) % 10]]),
                          "alloc-bytes")
        assert st == 0 and j["regressions"] == 0, j
        assert all(f["change"] == 0 for f in j["functions"]), j["functions"]
    return "10 of 10 caught at 1 %, 10 of 10 unchanged passed"


def test_alloc_compare_metric_alloc_is_the_gate_in_one_command():
    """pcprof compare --metric alloc-bytes runs each side once with
    PC_ALLOC=only PC_ALLOC_RATE=1: exit 1 naming grow_site against the 1 %
    build, 0 against the same build."""
    def compare(new):
        p = subprocess.run([pcprof(), "compare", "-q", "--metric", "alloc-bytes", "--format",
                            "json", "--base", prog("alloc39gate"), "--new", prog(new)],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env=clean_env(None, False))
        return p.returncode, json.loads(p.stdout) if p.stdout else p.stderr
    st, j = compare("alloc39gate-more")
    assert st == 1 and j["blamed"] == "grow_site" and j["runs"] == {"base": 1, "new": 1}, j
    st, j = compare("alloc39gate")
    assert st == 0 and j["regressions"] == 0 and j["exact"] is True, j


def test_alloc_gate_at_a_sampling_rate_uses_each_function_s_sampling_error():
    """At PC_ALLOC_RATE=64k, two runs a side of 113 MB each (about 1700
    samples a run): each function's variance is its sampling error (its
    figure squared over its samples), so the same build passes, 5 of 5 at
    alpha 0.001, with the whole program's standard error near that; the 1 %
    build is within that noise and blames nothing but grow_site, if
    anything (one run at rate 1 is the gate for 1 %)."""
    env = {"PC_ALLOC": "1", "PC_ALLOC_RATE": "65536"}
    for _ in range(5):
        base = gate_runs(prog("alloc39gate"), 2, env, ["20"])
        again = gate_runs(prog("alloc39gate"), 2, env, ["20"])
        st, j = gate_diff((None, base), (prog("alloc39gate"), again), "alloc-bytes",
                          ["--alpha", "0.001"])
        assert st == 0 and j["exact"] is False, j
        prog_row = j["program"]
        # two runs a side of ~1700 samples: se of the difference about
        # x * sqrt(2 / 2 / 1700) at least
        assert prog_row["se"] >= 0.5 * prog_row["base"] / math.sqrt(2 * 1700), prog_row
    more = gate_runs(prog("alloc39gate-more"), 2, env, ["20"])
    st, j = gate_diff((None, base), (prog("alloc39gate-more"), more), "alloc-bytes",
                      ["--alpha", "0.001"])
    assert j["blamed"] in (None, "grow_site"), j


def test_alloc_only_records_allocations_without_cpu_samples():
    """PC_ALLOC=only (pcprof run --alloc --no-cpu): no thread is sampled
    (not one sample in gmon.out after 4 GiB of churn, where PC_ALLOC=1's
    run of it has some; nor in 4 threads), the program runs as plain, and
    the allocations are exact at rate 1."""
    def samples(path):
        g = read_gmon(path)
        return sum(sum(h[5]) for h in g["hists"]) + g["outside"]
    exe = prog("alloc39")
    r = both([exe, "threads"], {"PC_ALLOC": "only", "PC_ALLOC_RATE": "1"})
    check_exact(sites(exe, r)[0], 4)
    assert samples(r.path()) == 0
    r = both([exe, "churn", "4096"], {"PC_ALLOC": "1"})
    assert samples(r.path()) > 0
    r = both([exe, "churn", "4096"], {"PC_ALLOC": "only"})
    assert samples(r.path()) == 0
    assert sites(exe, r)[0]["churn_site"]["alloc_samples"] > 4000
    d = tempfile.mkdtemp(prefix="pc-alloc39-run-")
    p = subprocess.run([pcprof(), "run", "--alloc", "--no-cpu", "-o", os.path.join(d, "r"), exe],
                       capture_output=True, text=True, timeout=TIMEOUT,
                       env=clean_env(None, False))
    assert p.returncode == 3 and "Allocations of alloc39:" in p.stderr, p.stderr
    assert samples(os.path.join(d, "r", "gmon.out")) == 0


def test_alloc_a_program_linked_with_jemalloc_is_profiled_through_it():
    """alloc39 linked with Debian's jemalloc (-ljemalloc): libpc's hooks
    forward to jemalloc's malloc family (its mallctl answers, so jemalloc
    is the allocator), as plain, and every known site is exact at rate 1."""
    if subprocess.run(["pkg-config", "--exists", "jemalloc"]).returncode:
        pctest.skip("jemalloc not installed (apt-get install libjemalloc-dev)")
    d = tempfile.mkdtemp(prefix="pc-alloc39-je-")
    exe = os.path.join(d, "alloc39je")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "alloc39.c")
    subprocess.run(["cc", "-O2", "-g", "-pthread", "-DWITH_JEMALLOC=1", "-o", exe, src,
                    "-ljemalloc"], check=True, timeout=TIMEOUT)
    r = both([exe], RATE1)
    assert "allocator: jemalloc" in r.stdout, r.stdout
    check_exact(sites(exe, r)[0])
