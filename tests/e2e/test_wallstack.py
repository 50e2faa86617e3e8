# SPDX-License-Identifier: BSD-2-Clause
"""Wall profiles' stacks and names (issue 35): a blocked thread's stack is
walked whole in a build with frame pointers (its rbp found on the stack) as
in one without; sqlite3's fdatasync waits keep their stacks though the
kernel wakes the thread inside the call, and libpc's summary counts the
walks as the stacks show them; libc's frames are named in a process that
had no CPU sample there; a wait for children is one row for its site, the
children it waited for listed under it, in the reports, the exports and
the gate."""

import json
import os
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, need, prog, run, skip
from test_cli import pcprof
from test_offcpu import wall_run

# tests/progs/wallstack's waits and the leaf each must have
LEAVES = {
    "ws_sleep": "[off-cpu: clock_nanosleep]", "ws_pipe": "[off-cpu: read pipe]",
    "ws_poll": "[off-cpu: poll]", "ws_epoll": "[off-cpu: epoll_wait]",
    "ws_mutex": "[off-cpu: futex]", "ws_cond": "[off-cpu: futex]",
    "ws_fsync": "[off-cpu: fsync file]", "ws_accept": "[off-cpu: accept socket]",
    "ws_waitpid": "[off-cpu: wait4]",
}
# the frames that say a stack went whole to its thread's start
# These tests are about the stacks a walk finds, so they give the sampler
# 2 % of a CPU: this program starts ten waits a second (and forks), a walk
# costs 0.15 to 0.9 ms on this 2-CPU VM, and at the 1 % default a wait of
# 0.1 s went unwalked in about one run in three (its time, counted, under
# the call alone: PC_WALL_BUDGET in libpc(7)). The budget's own test is
# test_wallacct's. The frame-pointer build's walks (0.2 to 1.5 ms each)
# left the budget in debt so long that no round came during a wait of
# 0.12 s; with a few threads a round now comes 50 ms after the last at most
# (PC_WALL_HZ in libpc(7)), but at the default budget ws_accept still went
# unwalked in 2 runs of 3 while the machine was busy: the test stays at 2 %.
WALK_BUDGET = {"PC_WALL_BUDGET": "2"}
ROOTS = ("__libc_start_main", "start_thread")


def main_pid(rdir):
    """The pid of the run's first process (DIR/gmon.out's manifest)."""
    text = open(os.path.join(rdir, "gmon.out.objects")).read()
    return int(text.split("\npid ")[1].split()[0])


def folded(rdir, *extra):
    """{stack's frames (a tuple): its count} of pcprof report --format folded."""
    p = pcprof("report", "--format", "folded", *extra, rdir)
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        out[tuple(stack.split(";"))] = out.get(tuple(stack.split(";")), 0) + int(n)
    return out


def by_site(stacks):
    """Each ws_* function's off-CPU counts, its run queue's included:
    {function: (all, whole, {leaf: n})}
    (the innermost ws_* frame of each off-CPU stack; a cut stack keeps it:
    the walk's first frames are libc's and then the function's)."""
    out = {}
    for frames, n in stacks.items():
        if not frames[-1].startswith("[off-cpu: "):
            continue
        sites = [f for f in frames if f.startswith("ws_")]
        if not sites:
            continue
        total, whole, leaves = out.get(sites[-1], (0, 0, {}))
        # the run queue's time after a wait is charged to the wait's stack
        if frames[-1] != "[off-cpu: runqueue]":
            leaves[frames[-1]] = leaves.get(frames[-1], 0) + n
        out[sites[-1]] = (total + n, whole + n * any(r in frames for r in ROOTS), leaves)
    return out


def known_waits(name, d, env=None):
    """tests/progs/NAME plain and under pcprof run --clock wall: the same
    output and status; (the truth, the wall run's stacks by site, the
    threads' stacks whole or not: {"whole": n, "all": n})."""
    exe = prog(name)
    plain = run([exe, "0.12", d], profiled=False)
    assert plain.status == 0 and "truth: " in plain.stdout, plain.stdout + plain.stderr
    p = wall_run([exe, "0.12", d], d, env=WALK_BUDGET if env is None else env)
    assert p.returncode == 0, "status %d: %s" % (p.returncode, p.stderr[-1500:])
    assert p.stdout.startswith("truth: {") and p.stdout.count("\n") == 1, p.stdout
    truth = json.loads(p.stdout[len("truth: "):])
    rdir = os.path.join(d, "run")
    stacks = folded(rdir, "--process", str(main_pid(rdir)))
    off = {"whole": 0, "all": 0}
    for frames, n in stacks.items():
        if frames[-1].startswith("[off-cpu: "):
            off["all"] += n
            off["whole"] += n * (frames[0] not in ("[unwind stopped]", "[truncated]"))
    return truth, by_site(stacks), off


def check_callers(name, env=None):
    d = tempfile.mkdtemp(prefix="pc-e2e-wallstack-")
    try:
        truth, sites, off = known_waits(name, d, env)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    notes = []
    # the run queue's time in the run, ms: a thread woken from a wait that
    # then waits for a CPU has that time under the wait it woke from, the
    # last the sampler saw; on a busy machine one that waited 133 ms for a
    # CPU after the mutex (quiet CI, two tests at once) left ws_mutex 11
    # of its 125 ms, under ws_epoll's stack: a phase may be short by as
    # much, which is the run queue's placement, not the caller's
    rq = sum(t - sum(lv.values()) for t, _, lv in sites.values())
    for fn, leaf in LEAVES.items():
        total, whole, leaves = sites.get(fn, (0, 0, {}))
        # time in samples of 1 ms: the wait is seen (a phase is 90 ms at
        # least; fsync's is much of it CPU time in the kernel, sampled as
        # CPU, and runnable time), under its own leaf mostly, its caller
        # kept in 95 % of it; a wait seen in few walks may lose one walk's
        # weight, a round's 10 ms
        slack = 10 if fn == "ws_fsync" else 0
        least = 5 if slack else 0.25 * truth[fn] * 1000
        assert total >= min(least, max(least - rq, 1)), (fn, total, truth[fn], rq, sites)
        # fsync's own leaf can be short of samples: the kernel shows a
        # thread in fsync as runnable much of the time (issue 35's
        # accounting), and that time is the run queue's, on its stack; the
        # file's unlink at the end is a wait of its own
        if fn != "ws_fsync":
            assert max(leaves, key=leaves.get) == leaf, (fn, leaves)
        else:
            assert set(leaves) <= {leaf, "[off-cpu: unlink]", "[off-cpu: write file]",
                                   "[off-cpu: openat]", "[off-cpu: close file]"}, leaves
        assert whole >= 0.95 * total - slack, "%s: %d of %d ms with the caller kept: %s" % (
            fn, whole, total, sites)
        notes.append("%s %d%%" % (fn, 100 * whole // total))
    assert off["whole"] >= 0.95 * off["all"], off
    return "%s: off-CPU %d ms, %.1f %% whole, run queue %d ms; %s" % (
        name, off["all"], 100.0 * off["whole"] / off["all"], rq, ", ".join(notes))


def test_wallstack_frame_pointer_build_keeps_each_waits_caller():
    """tests/progs/wallstack built -fno-omit-frame-pointer -O2: libc's
    blocking calls leave the program's rbp in the register, which /proc
    does not show; the walk finds the frame record on the stack and goes on
    to main. Each of the nine waits (sleep, pipe read, poll, epoll, mutex,
    condition variable, fsync, accept, waitpid, each in its own function)
    has its caller kept in 95 % of its wait time at least (7.5 % of all
    wait time was whole before)."""
    return check_callers("wallstack-fp")


def test_wallstack_plain_o2_build_keeps_each_waits_caller():
    """The same waits built -O2 without frame pointers (as Debian builds
    its programs): every stack whole through the CFI alone, as before."""
    return check_callers("wallstack")


def summary_walks(stderr):
    """The walks libpc's summaries count: (whole, cut short, the wait alone)."""
    walks = [tuple(int(x) for x in m) for m in re.findall(
        r"off-CPU stacks: (\d+) whole, (\d+) cut short, (\d+) the wait alone", stderr)]
    return tuple(sum(w[i] for w in walks) for i in range(3))


def test_wallstack_sqlite3_fsync_waits_keep_their_stacks():
    """sqlite3, 300 inserts with PRAGMA synchronous=FULL, under pcprof run
    --clock wall: the kernel wakes the thread again and again inside
    fdatasync, which made every walk of it count as moved (0.5 % of the
    fdatasync and unlink time had a stack). A walk holds where the thread
    is still in the call, or the stack words it read are the same: most of
    that time now has the whole stack, through sqlite3_step. libpc's
    summary counts a walk with the wait alone exactly where the stacks hold
    one with the wait alone, and nothing lost."""
    need("sqlite3")
    d = tempfile.mkdtemp(prefix="pc-e2e-wallstack-", dir=os.path.abspath(BUILD))
    try:
        with open(os.path.join(d, "ins.sql"), "w") as f:
            f.write("PRAGMA synchronous=FULL; CREATE TABLE t(a, b);\n")
            for i in range(300):
                f.write("INSERT INTO t VALUES(%d, 'row %d');\n" % (i, i))
        p = wall_run(["sqlite3", os.path.join(d, "db"), ".read " + os.path.join(d, "ins.sql")],
                     d)
        assert p.returncode == 0, p.stderr[-1500:]
        stacks = folded(os.path.join(d, "run"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    total = whole = alone = 0
    for frames, n in stacks.items():
        if re.match(r"\[off-cpu: (fdatasync|fsync|unlink)", frames[-1]):
            total += n
            whole += n * ("sqlite3_step" in frames)
        # the wait alone: the syscall's own frame and the wait
        alone += frames[-1].startswith("[off-cpu: ") and frames[0] == "[unwind stopped]" and \
            len(frames) == 3
    assert total > 50, stacks
    w, c, a = summary_walks(p.stderr)
    assert w > 0 and "lost (the stacks table full)" not in p.stderr, p.stderr[-1500:]
    # a stack with the wait alone is counted in the summary; the converse
    # may not show, as folded leaves out a stack of under half a sample
    # (a wait whose last few microseconds stayed under its call alone)
    assert a > 0 or alone == 0, (w, c, a, alone, p.stderr[-800:])
    # most walks hold (before: none of 38); a short run on a fast disk has
    # a few walks of some 10 to 30 ms each, so one walk with the wait alone
    # weighs much of the time: the time's share is held to less
    assert w >= 0.75 * (w + c + a), (w, c, a)
    assert whole >= 0.6 * total, "%d of %d ms of fdatasync/unlink whole" % (whole, total)
    return "fdatasync/unlink %d ms, %.1f %% with the whole stack; walks %d whole, %d cut, " \
        "%d the wait alone" % (total, 100.0 * whole / total, w, c, a)


def test_wallstack_names_libc_frames_of_a_process_with_no_cpu_sample_there():
    """pcprof run --clock wall -- sleep 0.3: sleep spends no CPU sample in
    libc, whose symbols were then never read ([libc.so.6] frames): the
    objects the stacks hold frames in are named too. sleep itself is
    stripped, with no debug file installed: its frames stay object+offset.
    Debian's python3 sleeping: the stack whole, from _start through the
    interpreter's loop to clock_nanosleep."""
    d = tempfile.mkdtemp(prefix="pc-e2e-wallstack-")
    try:
        p = wall_run(["sleep", "0.3"], d)
        assert p.returncode == 0, p.stderr[-1500:]
        stacks = folded(os.path.join(d, "run"))
        leaf = max(stacks, key=stacks.get)
        assert leaf[-3:] == ("__nanosleep", "clock_nanosleep", "[off-cpu: clock_nanosleep]"), \
            stacks
        assert "__libc_start_main" in leaf and not any("[libc.so.6]" in f for f in leaf), leaf
        assert all(re.match(r"(sleep\+0x[0-9a-f]+|__\w+|clock_nanosleep|\[off-cpu: )", f)
                   for f in leaf), leaf
        assert stacks[leaf] >= 250, stacks
        note = ";".join(leaf)
        py = "/usr/bin/python3"
        if os.path.exists(py):
            os.mkdir(os.path.join(d, "py"))
            q = wall_run([py, "-c", "import time; time.sleep(0.4)"], os.path.join(d, "py"))
            assert q.returncode == 0, q.stderr[-1500:]
            pys = folded(os.path.join(d, "py", "run"), "--process", "python3.11") \
                if os.path.realpath(py).endswith("python3.11") else \
                folded(os.path.join(d, "py", "run"))
            top = max(pys, key=pys.get)
            assert top[0] == "_start" and "Py_BytesMain" in top and \
                "_PyEval_EvalFrameDefault" in top and \
                top[-2:] == ("clock_nanosleep", "[off-cpu: clock_nanosleep]"), top
            note += "; python3: %d ms whole, %d frames" % (pys[top], len(top))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return note


def test_wallstack_one_row_per_waiting_site():
    """tests/progs/wallstack children 6: one waitpid site waits for six
    children in turn. The text report has one [off-cpu: wait4] row, its
    children listed under it with their times (which add up to the row),
    the JSON row lists them as wait_pids (the children the program
    started), folded stacks and speedscope have one frame for it, and pcprof
    diff --metric wall and the gate one row."""
    exe = prog("wallstack")
    d = tempfile.mkdtemp(prefix="pc-e2e-wallstack-")
    try:
        rows = []
        for side in ("a", "b"):
            os.mkdir(os.path.join(d, side))
            p = wall_run([exe, "children", "6", "0.1"], os.path.join(d, side))
            assert p.returncode == 0, p.stderr[-1500:]
            rows.append((json.loads(p.stdout[len("truth: "):]), os.path.join(d, side, "run")))
        truth, rdir = rows[0]
        text = pcprof("report", rdir)
        assert text.returncode == 0, text.stderr
        assert text.stdout.count("[off-cpu: wait4") == 1 and " pid " not in \
            "".join(l for l in text.stdout.splitlines() if "[off-cpu:" in l), text.stdout
        m = re.search(r"^ +([\d.]+) .*\[off-cpu: wait4\]\n((?: +for pid \d+: [\d.]+ s .*\n)+)",
                      text.stdout, re.M)
        assert m, text.stdout
        kids = {int(a): float(b) for a, b in re.findall(r"for pid (\d+): ([\d.]+) s", m.group(2))}
        # children the program waited for, two or more in one row; a child
        # whose wait no look saw is under the one looked at before it (in
        # CI at load 15 to 30 the sampler once saw no wait after the third
        # of six: 0.412 s under it, the four last children's 0.432 s)
        assert set(kids) <= {int(k) for k in truth} and len(kids) >= 2, (kids, truth)
        assert abs(sum(kids.values()) - float(m.group(1))) <= 0.001 * (len(kids) + 1), m.group(0)
        j = json.loads(pcprof("report", "--format", "json", rdir).stdout)
        row = [f for f in j["profile"]["functions"] if f["name"].startswith("[off-cpu: wait4")]
        assert len(row) == 1 and {c["pid"] for c in row[0]["wait_pids"]} == set(kids), row
        leaves = {f[-1] for f in folded(rdir) if f[-1].startswith("[off-cpu: wait4")}
        assert leaves == {"[off-cpu: wait4]"}, leaves
        ss = os.path.join(d, "w.speedscope.json")
        e = pcprof("report", "--format", "speedscope", "-o", ss, rdir)
        assert e.returncode == 0, e.stderr
        frames = [f["name"] for f in json.load(open(ss))["shared"]["frames"]]
        assert [f for f in frames if f.startswith("[off-cpu: wait4")] == ["[off-cpu: wait4]"], \
            frames
        diff = pcprof("diff", "--metric", "wall", "--top", "0", "--base", rows[0][1], "--new",
                      rows[1][1])
        assert diff.returncode in (0, 1), diff.stderr
        assert len(re.findall(r"\[off-cpu: wait4\] from ws_children", diff.stdout)) == 1 and \
            "pid" not in re.sub(r"--process \d+", "", diff.stdout), diff.stdout
        gate = pcprof("compare", "--metric", "wall", "--runs", "2", "-q", "--top", "0",
                      "--base", exe, "children", "3", "0.03", "--new", exe, "children", "3",
                      "0.03", timeout=120)
        assert gate.returncode in (0, 1), gate.stderr[-1500:]
        assert len(re.findall(r"\[off-cpu: wait4\] from ws_children", gate.stdout)) == 1, \
            gate.stdout
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return "one [off-cpu: wait4] row of %s s, %d children listed under it" % (
        m.group(1), len(kids))


def perf_program_frames(exe, d):
    """perf record -e sched:sched_switch -g (frame pointers) of exe's plain
    run: for each switch of one of its threads away while sleeping or in
    D state, (pid, tid, its frames in exe, the leaf first)."""
    data = os.path.join(d, "perf.data")
    p = subprocess.run(["perf", "record", "-q", "-e", "sched:sched_switch", "-g", "-o", data,
                        "--", exe, "0.12", d], capture_output=True, text=True, errors="replace", timeout=120)
    if p.returncode != 0 or not os.path.exists(data):
        skip("perf record -e sched:sched_switch cannot record here: %s" % p.stderr[-300:])
    s = subprocess.run(["perf", "script", "-F", "comm,pid,tid,time,event,trace,ip,sym,symoff,dso",
                        "-i", data], capture_output=True,
                       text=True, errors="replace", timeout=120)
    out = []
    for block in s.stdout.split("\n\n"):
        lines = block.strip().split("\n")
        m = re.search(r"prev_pid=(\d+) .*prev_state=([SD])", lines[0]) if lines else None
        if not m:
            continue
        head = re.match(r"\s*\S+\s+(\d+)/(\d+)", lines[0])
        if not head:
            continue
        frames = [re.match(r"\s*[0-9a-f]+ (\S+?)\+0x", l) for l in lines[1:]
                  if l.rstrip().endswith("(%s)" % exe)]
        out.append((int(head.group(1)), int(m.group(1)), [f.group(1) for f in frames if f]))
    return out


def test_wallstack_frame_pointer_stacks_against_perf():
    """perf's own stacks of the same frame-pointer build's waits (perf record
    -e sched:sched_switch -g, which follows rbp from the switch): the
    program's frames perf finds are a part of pcprof's stacks of the same
    waits, which also keep the function that made the call (perf's start
    at the caller's record, as the libc call at the leaf pushes no frame)."""
    need("perf")
    if os.geteuid() != 0:
        skip("perf record of scheduler events needs root here")
    exe = prog("wallstack-fp")
    d = tempfile.mkdtemp(prefix="pc-e2e-wallstack-")
    try:
        perf = perf_program_frames(exe, d)
        rdir = os.path.join(d, "pc")
        os.mkdir(rdir)
        p = wall_run([exe, "0.12", d], rdir, env=WALK_BUDGET)
        assert p.returncode == 0, p.stderr[-1500:]
        rdir = os.path.join(rdir, "run")
        stacks = folded(rdir, "--process", str(main_pid(rdir)))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    # the main thread: the first switch's process (its children come
    # later), the thread whose id is that process's (pids may wrap)
    main_tid = perf[0][0] if perf else 0
    chains = [f for pid, t, f in perf if pid == t == main_tid and f]
    assert len(chains) >= 5, perf[:20]
    # pcprof's program frames of each off-CPU stack, the leaf first
    ours = {}
    for frames, n in stacks.items():
        if frames[-1].startswith("[off-cpu: ") and frames[-1] != "[off-cpu: runqueue]":
            prog_frames = tuple(f for f in reversed(frames) if f.startswith("ws_") or
                                f in ("main", "locks", "holder"))
            ours[prog_frames] = ours.get(prog_frames, 0) + n
    total = sum(ours.values())
    with_site = sum(n for f, n in ours.items() if f and f[0].startswith(("ws_", "holder")))
    assert with_site >= 0.95 * total, ours

    def part_of(theirs):
        return any(all(x in f for x in theirs) for f in ours)
    agree = sum(part_of(c) for c in chains)
    assert agree >= 0.95 * len(chains), [c for c in chains if not part_of(c)][:10]
    perf_site = sum(any(x.startswith("ws_") for x in c) for c in chains)
    return "perf: %d switches, %d with the wait's own function; pcprof: %.1f %% of %d ms " \
        "with it, perf's frames part of pcprof's in %d" % (
            len(chains), perf_site, 100.0 * with_site / total, total, agree)
