# SPDX-License-Identifier: BSD-2-Clause
"""Wall-clock profiles on the recording side (issue 27): what libpc's wall
sampler measures of programs that wait, against the programs' own clocks
and against perf sched on the same run; that it never interrupts a
blocking call nor takes a descriptor number the program expects; and real
programs that wait (make, python3's http.server, sqlite3) under it.
test_wall.py holds the report and gate side."""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import shipped
from pctest import BUILD, need, prog, run, skip
from test_cli import pcprof

# a phase's wall time is within 15 % of its truth, or 3 rounds of the
# sampler at the lowest rate it came to (issue 27's tolerance)
SHARE = 0.15
ROUNDS = 3


# they start thousands of threads: run.py runs each alone
MANY_THREADS = ("test_wall_sampler_keeps_to_its_budget_at_a_thousand_threads",)


def wall_run(argv, d, env=None, perf_data=None, timeout=300):
    """pcprof run --clock wall -v -o d/run -- argv, under perf sched record
    when perf_data is given; the completed process."""
    pc = [os.path.join(os.path.abspath(BUILD), "pcprof"), "run", "--clock", "wall", "-v",
          "--no-report", "-o", os.path.join(d, "run"), "--"] + argv
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("PC_") and k != "LD_PRELOAD"}
    e.update(env or {})
    if perf_data:
        pc = ["perf", "sched", "record", "-q", "-o", perf_data, "--"] + pc
    return subprocess.run(pc, cwd=d, env=e, capture_output=True, text=True, timeout=timeout)


def slowest_round(stderr, pid):
    """The interval between the wall sampler's looks at a thread in
    process pid, from its PC_VERBOSE line: 1 / the rounds' rate, or / the
    rate a thread was looked at on average where the sampler spread its
    looks over several rounds to keep to its budget."""
    for line in stderr.splitlines():
        if "wall clock:" not in line:
            continue
        m = re.search(r"rounds? at (\d+) Hz(?: \(each thread looked at (\d+|under 1) Hz)?", line)
        who = re.search(r"libpc: wrote \S*?(?:\.(\d+))?: ", line)
        if m and who and (who.group(1) is None or int(who.group(1)) == pid):
            low = m.group(2) or m.group(1)
            return 1.0 if low == "under 1" else 1.0 / int(low)
    raise AssertionError("no wall clock summary of pid %d in %r" % (pid, stderr[-1500:]))


def threads_of(rdir):
    p = pcprof("report", "--format", "json", "--by-thread", rdir)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["threads"]


def stacks_pid(path):
    """The pid of the process that wrote the stacks file at path: its
    header's (gmon/gmon.h), read alone, where a report of the run would
    symbolize every process (1 to 2 s of CPU for a python3)."""
    with open(path, "rb") as f:
        head = f.read(32)
    assert head[:8] == b"pcstacks" and len(head) == 32, (path, head)
    return struct.unpack_from("<I", head, 28)[0]


def truth_of(stdout):
    m = re.search(r"^truth: (\{.*\})$", stdout, re.M)
    assert m, stdout[-500:]
    return json.loads(m.group(1))


def leaf_of(folded, fn):
    """The leaf under which function fn's stacks hold most of their time."""
    by = {}
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if fn in frames:
            by[frames[-1]] = by.get(frames[-1], 0) + int(n)
    assert by, "no stack through %s" % fn
    return max(by, key=by.get), by


def test_known_waits_against_their_own_clocks():
    """tests/progs/waits waits in known ways, each phase in its own
    function timed with CLOCK_MONOTONIC (a sleep, a pipe a child fills
    late, a mutex another thread holds, a poll that times out, waitpid for
    a child, CPU work), while an idle thread waits throughout. Under
    pcprof run --clock wall each function's inclusive wall time is within
    15 % (or 3 rounds) of its truth, each blocked phase's leaf names its
    call, the idle thread's wall time is the run's, folded counts add up
    to the wall seconds at rate_hz, the blocked threads' walks are whole,
    and the program's output is the plain run's but for the times."""
    exe = prog("waits")
    plain = run([exe, "0.4"], profiled=False)
    assert plain.status == 0 and "truth:" in plain.stdout, plain.stderr
    d = tempfile.mkdtemp(prefix="pc-e2e-offcpu-")
    p = wall_run([exe, "0.4"], d)
    assert p.returncode == 0, p.stderr[-2000:]
    truth = truth_of(p.stdout)
    assert set(truth) == set(truth_of(plain.stdout)), (truth, plain.stdout)
    rdir = os.path.join(d, "run")
    threads = threads_of(rdir)
    idle = [t for t in threads if t["name"] == "idle"]
    assert len(idle) == 1, threads
    pid = idle[0]["pid"]
    slow = slowest_round(p.stderr, pid)
    flat = json.loads(pcprof("report", "--format", "json", "--callgraph", "--process",
                             str(pid), rdir).stdout)["profile"]
    assert flat["clock"] == "wall", flat.get("clock")
    total = {f["name"]: f.get("total_seconds", 0.0) for f in flat["functions"]}
    notes = []
    for fn in ("wait_sleep", "wait_pipe", "wait_mutex", "wait_poll", "wait_child",
               "work_cpu"):
        tol = max(SHARE * truth[fn], ROUNDS * slow)
        got = total.get(fn, 0.0)
        assert abs(got - truth[fn]) <= tol, \
            "%s: %.3f s of wall time, truth %.3f (+- %.3f): %s" % (
                fn, got, truth[fn], tol, sorted(total.items())[:30])
        notes.append("%s %.3f/%.3f" % (fn, got, truth[fn]))
    tol = max(SHARE * truth["idle"], ROUNDS * slow)
    assert abs(idle[0]["wall_seconds"] - truth["idle"]) <= tol, (idle[0], truth)
    folded = pcprof("report", "--format", "folded", "--process", str(pid), rdir)
    assert folded.returncode == 0, folded.stderr
    want = {"wait_sleep": "[off-cpu: clock_nanosleep]", "wait_pipe": "[off-cpu: read pipe]",
            "wait_mutex": "[off-cpu: futex]", "wait_poll": "[off-cpu: poll]",
            "wait_child": "[off-cpu: wait4]"}
    for fn, leaf in want.items():
        got, by = leaf_of(folded.stdout, fn)
        assert got.startswith(leaf), "%s: most of its time under %s, not %s: %s" % (
            fn, got, leaf, by)
    # folded counts are wall time in units of 1/rate_hz; a stack's off-CPU
    # time is fractions of one, which folded rounds to a whole count (and
    # leaves out under a half): half a count for each stack whose time in
    # speedscope's export (seconds to 9 digits) is not whole
    rate = flat["rate_hz"]
    ss = os.path.join(d, "waits.speedscope.json")
    e = pcprof("report", "--format", "speedscope", "-o", ss, "--process", str(pid), rdir)
    assert e.returncode == 0, e.stderr
    weights = [w * rate for pr in json.load(open(ss))["profiles"] for w in pr["weights"]]
    parts = sum(1 for w in weights if abs(w - round(w)) > 1e-4)
    assert abs(sum(weights) - flat["total_seconds"] * rate) <= 1e-3 * len(weights) + 1, \
        (sum(weights), flat["total_seconds"], rate)
    count = sum(int(line.rpartition(" ")[2]) for line in folded.stdout.splitlines())
    assert abs(count - flat["total_seconds"] * rate) <= 1 + 0.001 * count + 0.5 * parts, \
        (count, flat["total_seconds"], rate, parts)
    notes.append("folded %d of %.1f samples (%d stacks in parts)" % (
        count, flat["total_seconds"] * rate, parts))
    # waits is built -O2 with .eh_frame, as Debian's programs are: the walks
    # of its blocked threads go whole to the thread's start (bench/wall.py
    # --completeness: 11 whole of 11)
    walks = [tuple(int(x) for x in m) for m in re.findall(
        r"off-CPU stacks: (\d+) whole, (\d+) cut short, (\d+) the wait alone", p.stderr)]
    whole, cut, alone = (sum(w[i] for w in walks) for i in range(3))
    # "the wait alone" is a wait the budget left no walk for (its time
    # kept under its call); of the walks made, whole ones are the rule
    assert len(walks) >= 3 and whole >= 3 and whole >= 0.8 * (whole + cut) and \
        alone <= whole, (walks, p.stderr[-1500:])
    return "; ".join(notes) + "; idle %.3f/%.3f; rounds at least every %.0f ms; " \
        "off-CPU walks %d whole, %d cut short, %d the wait alone" % (
            idle[0]["wall_seconds"], truth["idle"], 1000 * slow, whole, cut, alone)


def test_time_before_libpc_started_is_not_taken_from_the_first_wait():
    """A thread's kernel counters hold its time from before libpc started:
    its exec, the loader, and what ran before an exec. python3 burns 0.3 s
    of CPU and execs tests/progs/waits, whose first phase sleeps 0.3 s:
    that sleep's wall time is within 15 % (or 3 rounds) of its truth
    (before: 0 s, the 0.3 s of CPU before the exec taken from it; CI's
    make check once read 0.28 s of 0.40, its run queue before libpc)."""
    exe = prog("waits")
    d = tempfile.mkdtemp(prefix="pc-e2e-offcpu-")
    code = ("import os, sys, time\n"
            "t = time.process_time()\n"
            "while time.process_time() - t < 0.3: pass\n"
            "os.execv(sys.argv[1], sys.argv[1:])\n")
    p = wall_run([sys.executable, "-S", "-c", code, exe, "0.3"], d)
    assert p.returncode == 0, p.stderr[-2000:]
    truth = truth_of(p.stdout)
    rdir = os.path.join(d, "run")
    r = pcprof("report", "--format", "json", "--callgraph", "--process", exe, rdir)
    assert r.returncode == 0, r.stderr
    flat = json.loads(r.stdout)["profile"]
    total = {f["name"]: f.get("total_seconds", 0.0) for f in flat["functions"]}
    pid = [t for t in threads_of(rdir) if t["name"] == "idle"][0]["pid"]
    tol = max(SHARE * truth["wait_sleep"], ROUNDS * slowest_round(p.stderr, pid))
    got = total.get("wait_sleep", 0.0)
    assert abs(got - truth["wait_sleep"]) <= tol, (got, truth, tol, sorted(total.items()))
    return "wait_sleep %.3f s, truth %.3f (+- %.3f), after 0.3 s of CPU before the exec" % (
        got, truth["wait_sleep"], tol)


def test_wall_clock_never_interrupts_a_blocking_call():
    """tests/progs/blockers waits in nanosleep, select, poll, epoll_wait,
    ppoll, sigtimedwait, futex and read, each in a thread of its own with
    random timeouts of 1 to 20 ms, while a thread burns CPU and another
    closes descriptor 0 and opens /dev/null again and again: under the wall
    sampler at its highest rate no call fails with EINTR, errno is kept, the
    reopened descriptor is always 0, and each call is a named wait."""
    exe = prog("blockers")
    # plain for 0.5 s (2 s before): the control that the program alone
    # sees no EINTR and no wrong descriptor, some 50 calls of each kind
    plain = run([exe, "0.5"], profiled=False, stdin="")
    assert plain.status == 0, plain.stdout + plain.stderr
    d = tempfile.mkdtemp(prefix="pc-e2e-offcpu-")
    p = wall_run([exe, "3"], d, env={"PC_WALL_HZ": "1000"})
    assert p.returncode == 0, "status %d: %s %s" % (p.returncode, p.stdout, p.stderr[-1500:])
    assert re.search(r"reopen of 0: \d+ calls 0 wrong", p.stdout), p.stdout
    folded = pcprof("report", "--format", "folded", os.path.join(d, "run"))
    assert folded.returncode == 0, folded.stderr
    leaves = {line.rpartition(" ")[0].split(";")[-1] for line in folded.stdout.splitlines()}
    for call in ("clock_nanosleep", "pselect6", "poll", "epoll_wait", "ppoll",
                 "rt_sigtimedwait", "futex", "read pipe"):
        assert "[off-cpu: %s]" % call in leaves, (call, sorted(leaves))
    return p.stdout.strip()


def test_wall_sampler_keeps_to_its_budget_at_a_thousand_threads():
    """1000 threads asleep beside a busy one: the wall sampler's own CPU
    time stays within its budget (1 % of a CPU) of the run's wall time,
    and 25 ms for loading libunwind and the first walks; the summary says
    how often it looked at each thread."""
    exe = prog("sleepers")
    t0 = time.monotonic()
    r = run([exe, "1000", "10000"], env={"PC_CLOCK": "wall"})
    wall = time.monotonic() - t0
    assert r.status == 0, r.stderr[-1500:]
    # beside a CPU hog the first round (libunwind loaded, 1,001 first
    # walks) can owe the whole run's budget: one round, and the look rate
    # (set at a later wake-up) is not said
    m = re.search(r"wall clock: (\d+) rounds? at 100 Hz(?: \(each thread looked at (\d+|under 1) "
                  r"Hz on average, to keep its cost under 1 % of a CPU, at (\d+) threads\))?.*"
                  r"its own CPU ([\d.]+) ms", r.stderr)
    assert m, r.stderr[-1500:]
    own = float(m.group(4)) / 1000
    assert own <= 0.01 * wall + 0.025, "the sampler took %.3f s of CPU in %.2f s" % (own, wall)
    return "%.1f ms of the sampler's CPU in %.2f s, %s rounds, %s" % (
        1000 * own, wall, m.group(1), "each thread looked at %s Hz at %s threads" % (
            m.group(2), m.group(3)) if m.group(2) else "the look rate not said")


def test_wall_sampler_keeps_exits_execs_and_namespaces_as_plain():
    """The sampler's thread is a thread of the process: a program whose
    main thread calls pthread_exit still ends when its last thread does
    (status 0, in its own time, where it once ran on forever with only
    libpc's thread left); a program of one thread still gets a new user
    namespace (unshare would fail with EINVAL in a process of two); and a
    failing exec, during which sampling stops, leaves each sleeping
    thread's wall time its own (it once added the machine's uptime)."""
    exe = prog("wallhost")
    plain = run([exe, "pthread-exit"], profiled=False, timeout=30)
    t0 = time.monotonic()
    r = run([exe, "pthread-exit"], env={"PC_CLOCK": "wall"}, timeout=30)
    took = time.monotonic() - t0
    assert (r.status, r.stdout) == (plain.status, plain.stdout) == (0, "worker done\n"), \
        (r.status, r.stdout, r.stderr[-800:])
    assert took < 10, took
    notes = ["pthread_exit: status 0 in %.2f s" % took]
    plain = run([exe, "userns"], profiled=False)
    if plain.status == 0:
        r = run([exe, "userns"], env={"PC_CLOCK": "wall"})
        assert (r.status, r.stdout) == (0, plain.stdout), (r.status, r.stdout, r.stderr[-800:])
        notes.append("unshare(CLONE_NEWUSER) 0")
    else:
        notes.append("user namespaces refused here plain too (%s)" % plain.stdout.strip())
    d = tempfile.mkdtemp(prefix="pc-e2e-offcpu-")
    r = run([exe, "exec-fail"], env={"PC_CLOCK": "wall", "PC_WALL_HZ": "1000",
                                     "PC_WALL_BUDGET": "20"}, cwd=d)
    assert r.status == 0, r.stderr[-800:]
    secs = float(re.search(r"exec-fail: ([\d.]+) s", r.stdout).group(1))
    threads = json.loads(pcprof("report", "--format", "json", "--by-thread", exe,
                                os.path.join(d, "gmon.out")).stdout)["threads"]
    worst = max(t["wall_seconds"] for t in threads)
    # no thread lives longer than the process: the loop, and start-up
    assert worst < secs + 2, (worst, secs, threads[:3])
    notes.append("failing execs: longest thread %.2f s of wall in a %.2f s loop" % (worst, secs))
    return "; ".join(notes)


def perf_sched_waits(data):
    """({tid: seconds off the CPU}, {tids in doubt}) from the events perf
    sched record took: for each task, the time from each switch out to
    the next switch in (its waits and its run-queue delays). perf sched
    timehist says the same, but prints a task's time at its next switch
    out, which a thread that ends by exiting never has: its last wait
    goes missing.

    On this kernel (a VM's, 6.18) perf's record misses many switches
    from the idle task: a thread is seen switched out twice with no
    switch in between, and a 0.4 s wait that ended in such a switch
    once read as never having happened. The resume is then recovered
    from the thread's first sched_stat_runtime after it (the time of
    that event less the run time it reports, which the scheduler counts
    from the moment it picked the thread). A task whose resume cannot
    be recovered (one of another scheduling class) is in doubt; so is
    every task when perf counted lost events."""
    st = subprocess.run(["perf", "report", "-i", data, "--stats"],
                        capture_output=True, text=True, errors="replace", timeout=300)
    lost = sum(int(n) for n in re.findall(r"^\s*LOST(?:_SAMPLES)? events:\s+(\d+)",
                                           st.stdout, re.M))
    p = subprocess.run(["perf", "script", "-i", data, "-F", "time,event,trace"],
                       capture_output=True, text=True, errors="replace", timeout=300)
    assert p.returncode == 0, p.stderr[-1000:]
    out, off, resumed, doubt = {}, {}, {}, set()
    # a record per event: a thread's name may hold a line end (another
    # test's hostile name, switched in on the same CPU)
    records = []
    for line in p.stdout.splitlines():
        if records and not re.match(r"\s*[\d.]+:\s+\S+:", line):
            records[-1] += " " + line
        else:
            records.append(line)
    for line in records:
        m = re.match(r"\s*([\d.]+):\s+sched:sched_switch: .*prev_pid=(\d+) .*"
                     r"==> .*next_pid=(\d+) ", line)
        if m:
            t, prev, nxt = float(m.group(1)), int(m.group(2)), int(m.group(3))
            if prev in out:
                # switched in where perf did not see it
                if prev in resumed:
                    off[prev] = off.get(prev, 0.0) + resumed[prev] - out[prev]
                else:
                    doubt.add(prev)
            resumed.pop(prev, None)
            out[prev] = t
            if nxt in out:
                off[nxt] = off.get(nxt, 0.0) + t - out.pop(nxt)
            continue
        m = re.match(r"\s*([\d.]+):\s+sched:sched_stat_runtime: .*pid=(\d+) "
                     r"runtime=(\d+)", line)
        if m:
            tid = int(m.group(2))
            if tid in out and tid not in resumed:
                resumed[tid] = float(m.group(1)) - int(m.group(3)) / 1e9
    return off, (None if lost else doubt)


class PerfInDoubt(Exception):
    pass


def perf_sched_run(argv, d, compare, prepare=None):
    """wall_run of argv under perf sched record, then compare(p, perf,
    doubt); again (3 tries, prepare() before each) while compare raises
    PerfInDoubt: what compare returned, and how many tries it took."""
    for tries in range(1, 4):
        if prepare:
            prepare()
        shutil.rmtree(os.path.join(d, "run"), ignore_errors=True)
        data = os.path.join(d, "perf.data")
        p = wall_run(argv, d, perf_data=data)
        assert p.returncode == 0, (argv, p.returncode, p.stderr[:1500], p.stderr[-1500:])
        perf, doubt = perf_sched_waits(data)
        try:
            return compare(p, perf, doubt), tries
        except PerfInDoubt as e:
            why = str(e)
    raise AssertionError("perf sched's record was not whole in 3 runs: %s" % why)


def need_perf_sched():
    need("perf")
    if os.geteuid() != 0:
        skip("perf sched record needs root here")
    if not shipped.available():
        skip("perf cannot record here (install linux-perf)")


def against_perf(threads, perf, doubt, pid, slow, who):
    """Each of process pid's threads' off-CPU seconds against perf sched's,
    within sampling error: a round finds the thread blocked or not, so
    over n rounds the blocked time is off by about a round's length times
    sqrt(n p (1 - p)), p the share of its life blocked (large for a thread
    that waits often and briefly, as sqlite3 does in fdatasync, small for
    one that waits long); four of those, or 15 %, and 3 rounds and 30 ms
    for what perf sees that the sampler cannot: the exec and loading
    before libpc starts, and the end after its last round. PerfInDoubt
    where perf's record of one of them is not whole. The rows."""
    rows = []
    for t in threads:
        if t["pid"] != pid:
            continue
        if doubt is None or t["tid"] in doubt:
            raise PerfInDoubt("%s: %s" % (who, "perf lost events" if doubt is None else
                                          "thread %d's switches in" % t["tid"]))
        # a thread never switched out before its end was never off the CPU
        want, got = perf.get(t["tid"], 0.0), t["off_cpu_seconds"]
        n = max(t["wall_seconds"] / slow, 1.0)
        share = min(max(want / max(t["wall_seconds"], 1e-9), 0.0), 1.0)
        spread = slow * (n * share * (1 - share)) ** 0.5
        tol = max(SHARE * want, 4 * spread) + ROUNDS * slow + 0.03
        assert abs(got - want) <= tol, \
            "%s: thread %d (%s): %.3f s off the CPU, perf sched %.3f (+- %.3f)" % (
                who, t["tid"], t["name"], got, want, tol)
        rows.append("%s %.3f/%.3f" % (t["name"], got, want))
    assert rows, "%s: no thread of pid %d in perf sched's record" % (who, pid)
    return rows


def test_threads_off_cpu_time_against_perf_sched():
    """The same run of tests/progs/waits recorded by perf sched record (the
    kernel's switches): each thread's off-CPU seconds (its waits and its
    time waiting for a CPU) agree with the sum of perf sched timehist's
    wait times for it, within sampling error."""
    need_perf_sched()
    d = tempfile.mkdtemp(prefix="pc-e2e-offcpu-")

    def compare(p, perf, doubt):
        threads = threads_of(os.path.join(d, "run"))
        pid = [t for t in threads if t["name"] == "idle"][0]["pid"]
        return against_perf(threads, perf, doubt, pid, slowest_round(p.stderr, pid), "waits")
    rows, tries = perf_sched_run([prog("waits"), "0.4"], d, compare)
    shutil.rmtree(d, ignore_errors=True)
    return "pcprof/perf sched s: " + ", ".join(rows) + \
        ("" if tries == 1 else " (perf whole at try %d)" % tries)


HTTP_CLIENT = """
import http.server, socket, subprocess, sys, time, urllib.request
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
srv = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    # up within 20 s, however busy the machine
    end = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/" % port).read(); break
        except OSError:
            if time.monotonic() > end or srv.poll() is not None:
                raise
            time.sleep(0.02)
    for i in range(150):
        urllib.request.urlopen("http://127.0.0.1:%d/" % port).read()
        time.sleep(0.002 + 0.004 * (i % 7) / 7)
finally:
    # never left running; what it said, where the client failed
    srv.terminate()
    err = srv.communicate()[1]
    if sys.exc_info()[0]:
        sys.stderr.write("the server (status %s) said: %r\\n" % (srv.returncode, err[-1500:]))
print("served")
"""


def small_project(d):
    """Six C files and a Makefile that builds them in two jobs."""
    src = os.path.join(d, "proj")
    os.makedirs(src)
    for i in range(6):
        with open(os.path.join(src, "f%d.c" % i), "w") as f:
            f.write("#include <stdio.h>\nint f%d(int x) { return printf(\"%%d\", x * %d); }\n"
                    % (i, i + 1))
    with open(os.path.join(src, "Makefile"), "w") as f:
        f.write("all: " + " ".join("f%d.o" % i for i in range(6)) + "\n"
                "%.o: %.c\n\tcc -O2 -c -o $@ $<\n")
    return src


def test_real_programs_that_wait_against_perf_sched():
    """Debian's make -j2 of a small project (it waits for its children),
    python3 -m http.server under a loopback client (poll, accept, recv) and
    sqlite3 inserting with synchronous=FULL (fsync), each recorded by perf
    sched and pcprof run --clock wall at once: the same status and output
    as plain, the main thread's off-CPU seconds as perf sched measures them
    (but sqlite3's, a known gap), and the wait that holds most of it
    named; the http server's own process waits in its poll."""
    need_perf_sched()
    need("make", "sqlite3", "python3", "cc")
    d = tempfile.mkdtemp(prefix="pc-e2e-offcpu-real-")
    db = os.path.join(d, "t.db")
    sql = "PRAGMA synchronous=FULL; CREATE TABLE t(x);" + \
        "".join("INSERT INTO t VALUES(%d);" % i for i in range(150)) + \
        "SELECT count(*) FROM t;"
    cases = [
        ("make", ["make", "-j2", "-C", small_project(d)], None,
         ("[off-cpu: wait4", "[off-cpu: pselect6", "[off-cpu: read pipe")),
        # the python3 that runs the tests, as its server does: a python3
        # on PATH may be a version manager's shell script (pyenv's shim:
        # 0.6 s of CPU in bash before python3 starts, profiled too)
        ("python3", [sys.executable, "-c", HTTP_CLIENT], "served", ("[off-cpu: recvfrom socket",
                                                              "[off-cpu: poll", "[off-cpu: wait4",
                                                              "[off-cpu: clock_nanosleep")),
        # synchronous=FULL syncs the database and its journal; deleting
        # the journal waits on the file system's own journal
        ("sqlite3", ["sqlite3", db, sql], "150", ("[off-cpu: fdatasync file",
                                                  "[off-cpu: fsync file", "[off-cpu: unlink")),
    ]
    notes = []
    for name, argv, out, waits in cases:
        w = tempfile.mkdtemp(dir=d)
        if name == "sqlite3":
            argv = ["sqlite3", os.path.join(w, "plain.db"), sql]
        plain = subprocess.run(argv, cwd=w, capture_output=True, text=True, timeout=120)
        assert plain.returncode == 0, (name, plain.stderr[-500:])
        if name == "sqlite3":
            argv = ["sqlite3", db, sql]

        def prepare(name=name, argv=argv):
            if name == "make":
                subprocess.run(["make", "-C", argv[-1], "-s", "clean"], capture_output=True)
                subprocess.run("rm -f %s/*.o" % argv[-1], shell=True)
            if name == "sqlite3" and os.path.exists(db):
                os.unlink(db)

        seen = {}

        def compare(p, perf, doubt, name=name, out=out, w=w, seen=seen):
            if out:
                assert out in p.stdout and out in plain.stdout, (name, p.stdout[-300:])
            threads = seen["threads"] = threads_of(os.path.join(w, "run"))
            main = [t for t in threads if t["tid"] == t["pid"]]
            # the command's own process: the one that wrote gmon.out (its
            # children's files are named by their pids), not the lowest
            # pid, which pid numbers wrapping around gave to make's `as`
            # once (0.058 s off the CPU against make's 0.302)
            root = stacks_pid(os.path.join(w, "run", "gmon.out.stacks"))
            first = [t for t in main if t["pid"] == root]
            assert len(first) == 1, \
                (root, [(t["pid"], t["name"]) for t in main])
            first = first[0]
            seen["perf"] = perf.get(first["tid"], 0.0)
            seen["round"] = slowest_round(p.stderr, first["pid"])
            if name == "sqlite3":
                # known gap: sqlite3's off-CPU time reads 20 to 45 % under
                # perf sched's, inside the sampler's own rounds too, where a
                # program of the same brief fdatasyncs agrees within 3 %
                # (docs/benchmarks.md); its waits are still named
                rows = ["%s %.3f/%.3f (not compared)" % (name, first["off_cpu_seconds"],
                                                         perf.get(first["tid"], 0.0))]
            else:
                rows = against_perf([first], perf, doubt, first["pid"],
                                    slowest_round(p.stderr, first["pid"]), name)
            return first, rows
        (first, rows), tries = perf_sched_run(argv, w, compare, prepare)
        # the waits of its own, not its time waiting for a CPU (on a busy
        # machine sqlite3's largest)
        own = [w["name"] for w in first["waits"] if w["name"] != "[off-cpu: runqueue]"]
        top = own[0] if own else ""
        # the rounds that can find it: sqlite3's fsyncs came to 3 ms in all
        # once (a loop run beside a CPU hog), which rounds 10 ms apart miss
        # more often than not; with 10 rounds' worth, missing it all is
        # one in 20,000
        rounds = seen["perf"] / seen["round"] if seen.get("round") else 0
        if top or rounds >= 10:
            assert top.startswith(waits), "%s: its main thread's top wait is %r: %s" % (
                name, top, first["waits"])
        else:
            top = "none seen (perf sched: %.3f s off the CPU, %.1f rounds' worth)" % (
                seen["perf"], rounds)
        if name == "python3":
            # the server, a process of its own that pcprof run profiled
            # too (ended by SIGTERM): its main thread waits for requests
            # in serve_forever's poll, and reads them from the socket
            srv = [t for t in seen["threads"]
                   if t["tid"] == t["pid"] and t["pid"] != first["pid"]]
            assert len(srv) == 1, srv
            sw = [x["name"] for x in srv[0]["waits"] if x["name"] != "[off-cpu: runqueue]"]
            assert sw and sw[0].startswith(("[off-cpu: poll", "[off-cpu: epoll_wait",
                                            "[off-cpu: pselect6")), sw
            top += "; server's %s" % sw[0]
        notes.append("%s %s, top wait %s%s" % (name, rows[0], top,
                                               "" if tries == 1 else " (try %d)" % tries))
    shutil.rmtree(d, ignore_errors=True)
    return "; ".join(notes)
