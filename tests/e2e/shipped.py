# SPDX-License-Identifier: BSD-2-Clause
"""Debian's own programs, and perf, the peer pcprof is measured against on
them: shared by tests/e2e/test_shipped.py and bench/real.py. The programs
and their inputs (in two sizes: a few seconds for the tests, longer for
the benchmark), whether perf can record here, its command line, and its
samples read the way libpc counts them. Python 3 standard library only."""

import os
import random
import re
import shutil
import subprocess
import tempfile

_usable = None


def available():
    """Whether perf can record task-clock here (it may be missing, or
    perf_event_paranoid may refuse)."""
    global _usable
    if _usable is None:
        _usable = False
        if shutil.which("perf"):
            p = subprocess.run(["perf", "record", "-q", "-e", "task-clock", "-o", "/dev/null",
                                "--", "true"], capture_output=True, text=True, errors="replace")
            _usable = p.returncode == 0
    return _usable


def record_argv(data, callgraph=True, hz=1000, switches=False):
    """The perf record command line to put before `-- COMMAND`: task-clock
    at hz (one sample each 1/hz of CPU time), with frame-pointer call
    chains when callgraph, and with switches a record of each time a
    thread leaves a CPU or takes one (for switches())."""
    return ["perf", "record", "-q"] + (["-g"] if callgraph else []) + \
        (["--switch-events"] if switches else []) + \
        ["-e", "task-clock", "-F", str(hz), "-o", data]


def _frame(line):
    """(symbol, object, address) of one call-chain line "ADDR SYM+0xOFF
    (DSO)"."""
    k = line.rfind(" (")
    if k < 0 or not line.endswith(")"):
        return None
    addr, _, sym = line[:k].strip().partition(" ")
    try:
        ip = int(addr, 16)
    except ValueError:
        return None
    return re.sub(r"\+0x[0-9a-f]+$", "", sym.strip()), line[k + 2:-1], ip


def obj_name(dso):
    """perf's object as pcprof names it: the file name, "[jit]" for a
    perf map's code, perf's own names ([vdso], //anon) as they are."""
    if dso.startswith("//anon"):
        return "[anonymous code]"	# as pcprof names it
    if dso.startswith("[") or dso.startswith("//"):
        return dso
    base = os.path.basename(dso)
    if base.startswith("perf-") and base.endswith(".map"):
        return "[jit]"
    return base


# the threads libpc starts (their names, as prctl(PR_SET_NAME) gives them)
LIBPC_THREADS = ("pc-grower", "pc-snapshot", "pc-wall")
# what libpc's handler calls, beneath it on a stack: the unwinders, and the
# system calls' wrappers (a task-clock event's ioctl, a CPU clock's read)
HANDLER_CALLS = ("libgcc_s.so", "libunwind", "libc.so", "[vdso]")
# the kernel's functions of the system calls libpc's handler makes, which
# the shipped programs make none of: a task-clock event's refresh (an
# ioctl of a perf event), a read of the thread's CPU clock
HANDLER_SYSCALLS = ("perf_ioctl", "posix_cpu_clock_get")


def samples(data, skip_comms=()):
    """perf's samples of data as libpc counts them, skipping the
    processes named in skip_comms: {(object, symbol): CPU seconds}, a
    sample in the kernel counted at the first user-space frame of its call
    chain (the code that the system call or fault returns to, where
    libpc's signal lands); and the CPU seconds of every sample, those with
    no user frame included (the kernel's exec, an exit). libpc's own
    threads, its handler's system calls (HANDLER_SYSCALLS), and a chain
    whose first frames of libc, the vDSO or an unwinder lead to libpc.so
    (its handler's calls), are libpc.so's."""
    r = subprocess.run(["perf", "script", "-i", data, "-F", "comm,period,ip,sym,dso"],
                       capture_output=True, text=True, errors="replace", timeout=900)
    out, total = {}, 0.0
    head, frames = None, []

    def flush():
        nonlocal total
        if head is None or head[0] in skip_comms:
            return
        total += head[1]
        if head[0] in LIBPC_THREADS:
            # a thread of libpc's own, which it never samples
            out[("libpc.so", head[0])] = out.get(("libpc.so", head[0]), 0.0) + head[1]
            return
        k = None
        if any(sym in HANDLER_SYSCALLS and dso.startswith("[kernel")
               for sym, dso, _ in frames):
            # the handler's own system call, its user chain cut at libc's
            # wrapper (libpc is built without frame pointers)
            out[("libpc.so", "[system call]")] = \
                out.get(("libpc.so", "[system call]"), 0.0) + head[1]
            return
        for sym, dso, ip in frames:
            if ip == 0 or ip >> 63 or dso.startswith("[kernel") or \
                    dso.startswith("[guest"):
                continue	# the kernel's, or the end of a chain
            o = obj_name(dso)
            if o == "libpc.so":
                # libpc's handler, and what it called: libpc's
                k = ("libpc.so", sym)
                break
            # user code in no file perf knows: JIT code with no map
            k = k or (("[anonymous code]", "[anonymous code]") if dso == "[unknown]"
                      else (o, sym))
            if not o.startswith(HANDLER_CALLS):
                break	# not under libpc's handler
        if k:
            out[k] = out.get(k, 0.0) + head[1]

    for line in r.stdout.splitlines() + [""]:
        if not line.strip():
            flush()
            head, frames = None, []
            continue
        # "COMM PERIOD", perf right-aligning COMM (which may hold spaces);
        # without -g the one frame follows on the line
        one = re.match(r"^\s*(\S.*?)\s+(\d+)\s*:?\s+([0-9a-f]+\s.*\))$", line)
        m = one or re.match(r"^\s*(\S.*?)\s+(\d+)\s*:?\s*$", line)
        if m:
            flush()
            head, frames = (m.group(1), int(m.group(2)) / 1e9), []
            if one:
                f = _frame(" " + one.group(3))
                if f:
                    frames.append(f)
            continue
        f = _frame(line.strip())
        if f and head is not None:
            frames.append(f)
    return out, total


def switches(data, period, skip_comms=()):
    """What perf's record of its threads' context switches (data recorded
    with switches=True, sampling every period seconds) says of its
    samples, the processes named in skip_comms left out: (switches,
    missed). switches: how many times a thread left a CPU. Around each
    such switch, and the one that brings the thread back, perf's
    task-clock and the thread's CPU clock part: perf counts from the
    switch that brings a thread in to the one that takes it out, while
    the scheduler charges the CPU clock from its run-queue clock, which it
    does not read again at a switch that a wakeup asked for (the wakeup
    read it), so the wakeup's interrupt and the switch itself count for
    the thread preempted in perf's count and for the thread woken in the
    CPU clocks. missed: the seconds that threads stayed on a CPU beyond
    what their samples cover. perf samples task-clock with a timer on the
    wall clock that runs while the thread is on a CPU; one that fires late
    (the virtual CPU stopped by its host, say) takes one sample and skips
    the periods it missed. A stretch on a CPU, from the switch that brings
    the thread in to the one that takes it out, holds a sample every
    period; what it lasts beyond its samples and one period (the part of
    a period carried in from the stretch before) went unsampled. A
    thread's first and last stretches have no switch to start or end
    them: they count from their first sample to their last."""
    r = subprocess.run(["perf", "script", "-i", data, "--show-switch-events",
                        "-F", "comm,tid,time,event"], capture_output=True, text=True, errors="replace", timeout=900)
    on = {}		# tid: [start, samples, last sample] of its stretch on a CPU
    n, missed = 0, 0.0

    def end(tid, t):
        nonlocal missed
        start, k, _ = on.pop(tid)
        missed += max(0.0, t - start - (k + 1) * period)

    for line in r.stdout.splitlines():
        m = re.match(r"^\s*(\S.*?)\s+(\d+)\s+(\d+\.\d+):\s+(.*)$", line)
        if not m or m.group(1) in skip_comms:
            continue
        tid, t, what = int(m.group(2)), float(m.group(3)), m.group(4)
        if what.startswith("PERF_RECORD_SWITCH"):
            if " OUT" not in what:
                on[tid] = [t, 0, t]
                continue
            n += 1
            if tid in on:
                end(tid, t)
        elif "task-clock" not in what:
            continue
        elif tid in on:
            on[tid][1] += 1
            on[tid][2] = t
        else:
            on[tid] = [t, 0, t]
    for tid in list(on):
        end(tid, on[tid][2])
    return n, missed


def pcprof_table(report):
    """{(object, function): samples} of a `pcprof report --format json`
    of a run, what no function holds as ("?", "[unknown]"); and the
    seconds that the report's not-sampled line counts."""
    prof = report["profile"]
    out = {}
    for f in prof["functions"]:
        k = (norm_obj(f["object"]), f["name"])
        out[k] = out.get(k, 0) + f["self_samples"]
    if prof["unattributed_samples"]:
        out[("?", "[unknown]")] = prof["unattributed_samples"]
    ns = report["not_sampled"]
    return out, ns["before_start"] + ns["while_sampling"] + ns["writing"]


def perf_table(data):
    """perf's samples of data as in samples(), with pcprof's own processes
    (run's parent, its child before the exec) left out, and libpc's
    handler and threads (libpc.so, and what the handler calls: samples()
    tells it by libpc.so as the first frame past libc's, the vDSO's or an
    unwinder's), which libpc cannot sample: perf's time there falls to what libpc samples
    next. libgcc_s's own time, a C++ program's
    exceptions unwound, stays. Objects named as norm_obj names them; and
    perf's CPU seconds."""
    table, cpu = samples(data, skip_comms=("pcprof",))
    out = {}
    for (o, n), v in table.items():
        if o == "libpc.so":
            continue
        k = (norm_obj(o), n)
        out[k] = out.get(k, 0) + v
    return out, cpu


def named_alike(ours, theirs):
    """The share of perf's samples named, (pcprof's, perf's): within each
    object that both sampled, the fraction each names, weighed by perf's
    samples of the object. Names are then compared object by object, apart
    from the objects' shares (tvd() compares those): where a share differs
    by what pcprof cannot sample (its own handler's calls into libc, the
    vDSO and libgcc_s, an exec), that no longer reads as names lost."""
    a, b = by_object(ours), by_object(theirs)
    both = [o for o in b if a.get(o, 0) > 0 and b[o] > 0]
    total = sum(b[o] for o in both) or 1
    named = {}
    for table, key in ((ours, 0), (theirs, 1)):
        for (o, n), v in table.items():
            if o in both and not unnamed(n):
                named[(o, key)] = named.get((o, key), 0) + v
    pc = sum(b[o] * named.get((o, 0), 0) / a[o] for o in both) / total
    perf = sum(named.get((o, 1), 0) for o in both) / total
    return pc, perf


def by_object(table):
    """{object: value} of a {(object, name): value} table."""
    out = {}
    for (o, _), v in table.items():
        out[o] = out.get(o, 0) + v
    return out


def tvd(a, b):
    """Total variation distance between two tables of counts, each taken
    as a distribution."""
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return float("nan")
    return 0.5 * sum(abs(a.get(k, 0) / ta - b.get(k, 0) / tb) for k in set(a) | set(b))


def chance_tvd(a, n_a, b, n_b):
    """The total variation distance that sampling alone gives, on average,
    between two samplers of one run with n_a and n_b independent samples,
    where a and b are their tables: half the sum of each share's mean
    absolute difference, sqrt(2/pi) sqrt(p (1/n_a + 1/n_b))."""
    ta, tb = sum(a.values()), sum(b.values())
    keys = set(a) | set(b)
    if not ta or not tb or not n_a or not n_b:
        return float("nan")
    out = 0.0
    for k in keys:
        p = max((a.get(k, 0) / ta + b.get(k, 0) / tb) / 2, 1 / max(n_a, n_b))
        out += (2 / 3.141592653589793) ** 0.5 * (p * (1 / n_a + 1 / n_b)) ** 0.5
    return out / 2


def unnamed(name):
    """Whether a function's name is no name: an address, OBJ+0xOFFSET, or
    a [pseudo] row."""
    return name.startswith("[") or bool(re.search(r"\+0x[0-9a-f]+", name)) or \
        bool(re.match(r"^0x[0-9a-f]+$", name))


def norm_obj(name):
    """liblzma.so.5.4.1 and liblzma.so.5 are one object."""
    m = re.match(r"^(.*?\.so(?:\.\d+)?)", name)
    return m.group(1) if m else name


def text_file(path, mbytes, seed=7):
    """mbytes of made-up text that compresses about 3:1, the same bytes
    every time. In an e2e run (tests/e2e/run.py's TMPDIR, which goes at
    its end) made once and copied from there: a test changes only its
    copy; elsewhere (bench/real.py) made each time."""
    tmp = tempfile.gettempdir()
    if not os.path.basename(tmp).startswith("pc-e2e-run-"):
        _make_text(path, mbytes, seed)
        return
    cache = os.path.join(tmp, "pc-text-%d-%d.txt" % (mbytes, seed))
    if not os.path.exists(cache):
        # tests run in parallel processes: each writes its own file, and
        # the rename puts a whole one in place
        fd, part = tempfile.mkstemp(prefix="pc-text-", dir=tmp)
        os.close(fd)
        _make_text(part, mbytes, seed)
        os.chmod(part, 0o644)
        os.replace(part, cache)
    shutil.copyfile(cache, path)


def _make_text(path, mbytes, seed):
    rnd = random.Random(seed)
    words = ["".join(rnd.choice("etaoinshrdlucmfwyp") for _ in range(rnd.randint(2, 9)))
             for _ in range(4000)]
    with open(path, "w") as f:
        n = 0
        while n < mbytes << 20:
            line = " ".join(rnd.choice(words) for _ in range(12)) + "\n"
            f.write(line)
            n += len(line)


PY_JSON = "import json; d=[{'k': i, 'v': str(i)*3} for i in range(%d)]; " \
    "print(len(json.loads(json.dumps(d))))"


class Program:
    """One command: its argv, its stdin, and what must exist first."""

    def __init__(self, name, argv, stdin=None, setup=None, needs=(), same_output=True):
        self.name, self.argv, self.stdin, self.setup = name, argv, stdin, setup
        self.needs = needs or (argv[0],)
        # False where the output tells measured times, not the same twice
        self.same_output = same_output


def programs(d, build, top, big=False):
    """The programs of issue 13, working in directory d, as {name: Program}:
    a few seconds each, or with big the benchmark's longer runs."""
    data = os.path.join(d, "text.txt")
    part = os.path.join(d, "part.txt")
    shim = os.path.join(d, "python3")
    repo = os.path.join(d, "repo")
    mb = 24 if big else 6

    def setup_text():
        if not os.path.exists(data):
            text_file(data, mb)

    def setup_part():
        # xz -6 takes about a second a megabyte here
        if not os.path.exists(part):
            text_file(part, mb if big else 2)

    def setup_shim():
        with open(shim, "w") as f:
            f.write("#!/bin/sh\nexec /usr/bin/python3.11 \"$@\"\n")
        os.chmod(shim, 0o755)

    def setup_repo():
        # the tests' clone holds the last 40 commits (file:// for --depth):
        # the whole history's gc grew with each commit (7.4 s of CPU at 800
        # commits, 2.4 s at 40), the same processes doing the same work
        if os.path.exists(repo):
            shutil.rmtree(repo)
        depth = [] if big else ["--depth", "40"]
        src = top if big else "file://" + os.path.abspath(top)
        subprocess.run(["git", "clone", "-q", "--no-local"] + depth + [src, repo], check=True,
                       capture_output=True, timeout=300)

    def setup_cxx():
        # tests/progs/exc37.cc, as make builds it (PROGS), or built here
        # with the same flags where make has not
        exe, built = os.path.join(d, "exc"), os.path.join(build, "tests", "progs", "exc37")
        if os.path.exists(built):
            shutil.copy(built, exe)
            return
        src = os.path.join(top, "tests", "progs", "exc37.cc")
        subprocess.run(["c++", "-O2", "-g", "-o", exe, src], check=True, timeout=300)

    py = PY_JSON % (300000 if big else 200000)
    rows = 1000000
    v = [
        Program("xz", ["xz", "-9" if big else "-6", "-k", "-T1", "-c", part], setup=setup_part),
        Program("gzip", ["gzip", "-9", "-c", data], setup=setup_text),
        Program("sort", ["sort", "-f", data, data], setup=setup_text),
        Program("sqlite3", ["sqlite3", ":memory:",
                            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
                            "WHERE x < %d) SELECT sum(x), count(*) FROM c;" % rows]),
        Program("python3.11", ["/usr/bin/python3.11", "-c", py]),
        Program("python3.11 through a shim", [shim, "-c", py], setup=setup_shim,
                needs=("/usr/bin/python3.11", "sh")),
        Program("git gc", ["git", "-C", repo, "gc", "--aggressive", "-q"], setup=setup_repo,
                needs=("git",)),
        Program("bc", ["bc", "-l"], stdin="scale=%d; 4*a(1)\n" % (1500 if big else 1000)),
        Program("awk", ["awk", "{ n += length($0); w[$1]++ } END { print n, length(w) }"] +
                [data] * (2 if big else 6), setup=setup_text),
        Program("c++ exceptions", [os.path.join(d, "exc"), "1200000"],
                setup=setup_cxx, needs=("c++",)),
        Program("4 threads", [os.path.join(build, "tests", "progs", "threads"),
                              "2" if big else "1"],
                needs=(os.path.join(build, "tests", "progs", "threads"),), same_output=False),
    ]
    return {p.name: p for p in v}


def missing(prog):
    """The first of prog's needs that is not here, or None."""
    for n in prog.needs:
        if not (shutil.which(n) if "/" not in n else os.path.exists(n)):
            return n
    return None
