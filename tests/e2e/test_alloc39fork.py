# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end test of a fork child's allocation profile (PC_ALLOC, issue
39's "fork children reset"): tests/progs/alloc39fork.c leaks known
amounts at known sites, forks a child that leaks and churns at sites of
its own and frees blocks the parent allocated before the fork, a child
that execs the program again and a vfork child that execs it, each of
which leaks at exec_site. Under pcprof run --alloc at PC_ALLOC_RATE=1
each process's figures (pcprof report --alloc and --metric, --process
PID) are exactly its own: none of the parent's samples, in-use blocks or
leaks in a child, the child's frees of the parent's blocks neither
counted in the child nor taken from the parent."""

import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import clean_env, prog
from test_host import pcprof

TIMEOUT = 60
EXE = "alloc39fork"

# Each process's sites in the program: allocations, bytes, and in use at
# exit (allocations, bytes).
PARENT = {
    "parent_leak_site": (5, 5000, 5, 5000),
    "parent_kept_site": (4, 12000, 4, 12000),	# the fork child frees its copies
    "parent_after_site": (2, 8642, 2, 8642),
}
FORK = {
    "child_leak_site": (3, 2100, 3, 2100),
    "child_churn_site": (20, 2560, 0, 0),
}
EXEC = {"exec_site": (6, 1500, 6, 1500)}
# What libc allocates in the parent (stdout's buffer, after the forks),
# at most, in bytes (in blocks: 4); the children allocate nothing else.
LIBC_MAX = 2 * 65536


def report(exe, rdir, pid, *args):
    p = subprocess.run([pcprof(), "report"] + list(args) +
                       ["--format", "json", "--process", str(pid), rdir],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, "pcprof report %s --process %s: %s" % (args, pid, p.stderr)
    return json.loads(p.stdout)


def metric(exe, rdir, pid, m):
    """--metric m of process pid: ({function of the program: self},
    {function elsewhere: self}), the functions with a self only."""
    j = report(exe, rdir, pid, "--metric", m)["profile"]
    assert j["profiles"] and all(re.search(r"\.%d$" % pid, f) or f.endswith("gmon.out")
                                 for f in j["profiles"]), j["profiles"]
    own = {f["name"]: f["self"] for f in j["functions"]
           if f["self"] and f["object"] == EXE}
    other = {f["name"]: f["self"] for f in j["functions"]
             if f["self"] and f["object"] != EXE}
    return own, other


def check(exe, rdir, pid, known, what, libc_max=0):
    j = report(exe, rdir, pid, "--alloc")
    assert [p["pid"] for p in j["processes"]] == [pid], (what, j["processes"])
    prof = j["profile"]
    assert prof["exact"] and prof["rate_bytes"] == 1, (what, prof)
    s = {x["name"]: (x["alloc_objects"], x["alloc_space"], x["inuse_objects"],
                     x["inuse_space"]) for x in prof["sites"]}
    own = {k: v for k, v in s.items() if k in PARENT or k in FORK or k in EXEC}
    rest = {k: v for k, v in s.items() if k not in own}
    assert own == known, "%s %d: sites %s, not %s" % (what, pid, s, known)
    assert all(min(v) >= 0 for v in s.values()), (what, s)
    # libc's (a site named by its first frame in the program, main)
    assert sum(v[1] for v in rest.values()) <= libc_max, (what, pid, rest)
    for m, col in (("alloc-bytes", 1), ("inuse-bytes", 3), ("alloc", 0), ("inuse", 2)):
        mine, other = metric(exe, rdir, pid, m)
        want = {k: v[col] for k, v in known.items() if v[col]}
        assert mine == want, "%s %d --metric %s: %s, not %s" % (what, pid, m, mine, want)
        most = (libc_max if col & 1 else 4) if libc_max else 0
        assert sum(other.values()) <= most, \
            "%s %d --metric %s: libc's %s" % (what, pid, m, other)
    # the leaks: the process's own sites alone (and libc's, in the parent)
    leaks = {x["name"] for x in prof["sites"] if x["inuse_space"]}
    assert leaks - set(rest) == {k for k, v in known.items() if v[3]}, (what, leaks)

def test_alloc_fork_children_start_empty_and_keep_their_own_figures():
    """pcprof run --alloc at rate 1: the parent's figures exact and
    unchanged by its children, the fork child's only its own (its frees
    of the parent's 4 blocks counted nowhere), each exec'd child's only
    exec_site's; each process's own file in the run."""
    exe = prog(EXE)
    d = tempfile.mkdtemp(prefix="pc-alloc39fork-")
    rdir = os.path.join(d, "r")
    e = clean_env(None, False)
    e["PC_ALLOC_RATE"] = "1"
    p = subprocess.run([pcprof(), "run", "--alloc", "-o", rdir, exe], capture_output=True,
                       text=True, timeout=TIMEOUT, env=e)
    assert p.returncode == 0 and p.stdout == "alloc39fork done\n", (p.returncode, p.stderr)
    pids = dict(re.findall(r"^(parent|fork|exec|vfork) (\d+)$", p.stderr, re.M))
    assert len(set(pids.values())) == 4, p.stderr
    pids = {k: int(v) for k, v in pids.items()}
    check(exe, rdir, pids["parent"], PARENT, "parent", LIBC_MAX)
    check(exe, rdir, pids["fork"], FORK, "fork child")
    check(exe, rdir, pids["exec"], EXEC, "fork+exec child")
    check(exe, rdir, pids["vfork"], EXEC, "vfork+exec child")


ROW = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+(\S+)\s+(\S+)$", re.M)


def test_alloc_whole_run_sums_its_processes_in_text_and_json():
    """pcprof report --alloc and --metric M of the run directory, with no
    --process: the four processes' figures summed, each site's the sum of
    its per-process figures, in text and in JSON alike, and the table
    says how many were summed (before: the first process's alone, under
    a header naming all four profiles)."""
    exe = prog(EXE)
    d = tempfile.mkdtemp(prefix="pc-alloc39whole-")
    rdir = os.path.join(d, "r")
    e = clean_env(None, False)
    e["PC_ALLOC_RATE"] = "1"
    p = subprocess.run([pcprof(), "run", "--alloc", "-o", rdir, exe], capture_output=True,
                       text=True, timeout=TIMEOUT, env=e)
    assert p.returncode == 0, (p.returncode, p.stderr)
    pids = [int(v) for v in re.findall(r"^(?:parent|fork|exec|vfork) (\d+)$", p.stderr, re.M)]
    assert len(set(pids)) == 4, p.stderr
    whole = FORK.copy()
    for k, v in list(PARENT.items()) + list(EXEC.items()) * 2:
        whole[k] = tuple(a + b for a, b in zip(whole.get(k, (0,) * 4), v))
    for m, col in (("alloc-bytes", 1), ("inuse-bytes", 3), ("alloc", 0), ("inuse", 2)):
        summed = {}
        for pid in pids:
            for k, v in metric(exe, rdir, pid, m)[0].items():
                summed[k] = summed.get(k, 0) + v
        assert summed == {k: v[col] for k, v in whole.items() if v[col]}, (m, summed)
        t = subprocess.run([pcprof(), "report", "--metric", m, rdir], capture_output=True,
                           text=True, timeout=TIMEOUT)
        assert t.returncode == 0, (m, t.stderr)
        text = {f: int(n) for n, o, f in ROW.findall(t.stdout) if o == EXE}
        assert text == summed, "--metric %s, text: %s, not %s" % (m, text, summed)
        j = subprocess.run([pcprof(), "report", "--metric", m, "--format", "json", rdir],
                           capture_output=True, text=True, timeout=TIMEOUT)
        assert j.returncode == 0, (m, j.stderr)
        prof = json.loads(j.stdout)["profile"]
        assert len(prof["profiles"]) == 4, prof["profiles"]
        js = {f["name"]: f["self"] for f in prof["functions"]
              if f["self"] and f["object"] == EXE}
        assert js == summed, "--metric %s, json: %s, not %s" % (m, js, summed)
    t = subprocess.run([pcprof(), "report", "--alloc", rdir], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert t.returncode == 0 and "its 4 processes summed" in t.stdout.split("\n")[0], t.stdout
    j = json.loads(subprocess.run([pcprof(), "report", "--alloc", "--format", "json", rdir],
                                  capture_output=True, text=True,
                                  timeout=TIMEOUT).stdout)["profile"]
    assert j["processes_summed"] == 4, j
    own = {x["name"]: (x["alloc_objects"], x["alloc_space"], x["inuse_objects"],
                       x["inuse_space"]) for x in j["sites"] if x["name"] in whole}
    assert own == whole, (own, whole)


def test_alloc_whole_run_of_processes_at_two_rates_is_one_line():
    """A run directory holding a process sampled at another PC_ALLOC_RATE
    (its files copied in from another run): the summed report would mix
    estimates with exact counts, so pcprof report --metric and --alloc
    say so in one line naming that file, exit 2; --process still reports
    each."""
    exe = prog(EXE)
    d = tempfile.mkdtemp(prefix="pc-alloc39rates-")
    for sub, rate in (("a", "1"), ("b", "4096")):
        e = clean_env(None, False)
        e["PC_ALLOC_RATE"] = rate
        p = subprocess.run([pcprof(), "run", "--alloc", "-o", os.path.join(d, sub), exe],
                           capture_output=True, text=True, timeout=TIMEOUT, env=e)
        assert p.returncode == 0, (rate, p.stderr)
    other = [f for f in os.listdir(os.path.join(d, "b")) if re.search(r"\.\d+$", f)][0]
    for suffix in ("", ".alloc", ".objects"):
        shutil.copy2(os.path.join(d, "b", other + suffix), os.path.join(d, "a"))
    for args in (["--metric", "alloc"], ["--alloc", "--format", "json"]):
        p = subprocess.run([pcprof(), "report"] + args + [os.path.join(d, "a")],
                           capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 2 and p.stdout == "", (args, p.returncode, p.stdout[:300])
        assert len(p.stderr.splitlines()) == 1 and other + ".alloc" in p.stderr and \
            "sampled every 4096 bytes, not 1" in p.stderr, p.stderr
    pid = int(other.rsplit(".", 1)[1])
    j = report(exe, os.path.join(d, "a"), pid, "--alloc")["profile"]
    assert j["rate_bytes"] == 4096 and j["processes_summed"] == 1, j
