#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof benchmarks: overhead, accuracy, gmon.out size, and PC_SCOPE=all.

    python3 bench/run.py --build build               # all four
    python3 bench/run.py --build build overhead      # one of them
    python3 bench/run.py --help                      # options

Needs build/libpc.so and build/tests/progs/three-pie (`make bench` builds
them). The benchmark programs in bench/*.c (and a generated program for the
size benchmark, and 100 libraries for the objects benchmark) are compiled
here with `cc` into BUILD/bench/. Tables go to
stdout, progress to stderr. Python 3 standard library only.
"""

import argparse
import gzip
import hashlib
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIBPROFILER = "/usr/lib/x86_64-linux-gnu/libprofiler.so.0"
CC = os.environ.get("CC", "cc")
USABLE = sorted(os.sched_getaffinity(0))  # before main() pins itself

# Environment variables that would change what a run measures.
SCRUB = ("LD_PRELOAD", "GMON_OUT_PREFIX", "CPUPROFILE", "CPUPROFILE_FREQUENCY",
         "CPUPROFILESIGNAL", "CPUPROFILE_REALTIME")


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    note("bench: " + msg)
    sys.exit(2)


# ----------------------------------------------------------------- plumbing

class Ctx:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.join(self.build, "bench")
        self.built_lib = os.path.join(self.build, "libpc.so")
        self.tmp = tempfile.mkdtemp(prefix="pc-bench-")
        os.makedirs(self.out, exist_ok=True)
        # measure one library from start to end, even if it is rebuilt
        # while the benchmarks run
        self.lib = os.path.join(self.tmp, "libpc.so")
        self.extra_env = {}
        for kv in args.env:
            k, sep, v = kv.partition("=")
            if not sep or not k.startswith("PC_"):
                die("--env %r: expected PC_NAME=VALUE" % kv)
            self.extra_env[k] = v
        self.lib_id = None
        if os.path.exists(self.built_lib):
            shutil.copy2(self.built_lib, self.lib)
            with open(self.lib, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
            self.lib_id = "%s, sha256 %s..., built %s" % (
                os.path.relpath(self.built_lib), digest, time.strftime(
                    "%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(self.lib))))

    def need(self, path, what):
        if not os.path.exists(path):
            die("%s is missing: build it first (cd to the source tree and run "
                "`make %s`)" % (path, what))


def libpc_env(ctx, out, rate="default", extra=None):
    """The environment of a run under libpc: --env settings, then extra."""
    env = base_env()
    env.update(LD_PRELOAD=ctx.lib, PC_VERBOSE="1", PC_OUT=out)
    env.update(ctx.extra_env)
    if rate != "default":
        env["PC_HZ"] = rate
    env.update(extra or {})
    return env


def base_env():
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("PC_") or k in SCRUB:
            del e[k]
    return e


def compile_c(ctx, src, name, flags):
    """cc FLAGS -o BUILD/bench/NAME SRC, unless the binary is newer than its
    source and was built with the same command. Returns (exe, seconds spent
    compiling, 0 when it was up to date)."""
    exe, secs = compile_many(ctx, [(src, name, flags)])[0]
    return exe, secs


def compile_many(ctx, jobs):
    """compile_c for several (src, name, flags) at once, in parallel on all
    usable CPUs (the benchmark runs themselves are pinned to one)."""
    procs, res = [], []
    for src, name, flags in jobs:
        exe = os.path.join(ctx.out, name)
        stamp = exe + ".cmd"  # the command line it was built with
        cmd = " ".join([CC] + flags + [src])
        try:
            with open(stamp) as f:
                same = f.read() == cmd
        except OSError:
            same = False
        if same and os.path.exists(exe) and \
                os.path.getmtime(exe) >= os.path.getmtime(src):
            procs.append(None)
            continue
        note("  cc " + " ".join(flags) + " -o " + os.path.relpath(exe) + " "
             + os.path.relpath(src))
        if os.path.exists(stamp):
            os.unlink(stamp)
        procs.append((subprocess.Popen(
            [CC] + flags + ["-o", exe, src], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
            preexec_fn=lambda: os.sched_setaffinity(0, USABLE)),
            time.monotonic(), flags))
    for (src, name, _), p in zip(jobs, procs):
        exe = os.path.join(ctx.out, name)
        if p is None:
            res.append((exe, 0.0))
            continue
        out = p[0].communicate()[0]
        if p[0].returncode:
            die("compiling %s failed:\n%s" % (src, out))
        with open(exe + ".cmd", "w") as f:
            f.write(" ".join([CC] + p[2] + [src]))
        res.append((exe, time.monotonic() - p[1]))
    return res


LAST_WALL = [0.0]  # wall-clock seconds of the last run_cpu


def run_cpu(argv, env, cwd=None):
    """Run argv; return (user+sys CPU seconds from wait4, stdout, stderr)."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=fo, stderr=fe,
                             stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        LAST_WALL[0] = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode(errors="replace")
        err = fe.read().decode(errors="replace")
    if p.returncode:
        die("%s exited with %d:\n%s" % (" ".join(argv), p.returncode, err))
    return ru.ru_utime + ru.ru_stime, out, err


def run_rusage(ctx, argv, env, cwd=None):
    """Run argv under bench/rusage.c: return (maxrss KiB, cpu s, stdout,
    stderr). The launcher keeps the interpreter's RSS out of ru_maxrss."""
    launcher, _ = compile_c(ctx, os.path.join(HERE, "rusage.c"), "rusage",
                            ["-O2", "-Wall"])
    env = dict(env)
    if "LD_PRELOAD" in env:
        env["BENCH_LD_PRELOAD"] = env.pop("LD_PRELOAD")
    _, out, err = run_cpu([launcher] + argv, env, cwd)
    m = re.search(r"rusage: maxrss_kb=(\d+) utime=([\d.]+) stime=([\d.]+) "
                  r"status=(\d+)", err)
    if not m or m.group(4) != "0":
        die("%s failed:\n%s" % (" ".join(argv), err))
    return (int(m.group(1)), float(m.group(2)) + float(m.group(3)), out,
            err[:m.start()] + err[m.end():])


def libpc_summary(err):
    """Numbers from libpc's PC_VERBOSE line."""
    m = re.search(r"libpc: wrote \S+: (\d+) samples \((\d+) signals\) in "
                  r"([\d.]+) s CPU; rate (\d+) Hz requested, (\d+) Hz effective, "
                  r"(\d+) signals/s", err)
    if not m:
        die("no libpc summary line on stderr:\n" + err)
    t = re.search(r"; timer (\w+)", err[m.start():].splitlines()[0])
    return {"samples": int(m.group(1)), "signals": int(m.group(2)),
            "cpu": float(m.group(3)), "hz": int(m.group(4)),
            "effective": int(m.group(5)), "signal_rate": int(m.group(6)),
            "timer": t.group(1) if t else "posix"}


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def table(headers, rows, aligns=None):
    """A plain text table: right-aligned numbers, left-aligned text."""
    rows = [[str(c) for c in r] for r in rows]
    w = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    aligns = aligns or ["<"] + [">"] * (len(headers) - 1)

    def fmt(cells):
        return "  ".join(("{:%s%d}" % (a, n)).format(c)
                         for c, a, n in zip(cells, aligns, w)).rstrip()
    lines = [fmt(headers), "  ".join("-" * n for n in w)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def pct(x, signed=True):
    return ("%+.1f %%" if signed else "%.1f %%") % x


def mib(n):
    return "%.2f MiB" % (n / 1048576.0)


def kib(n):
    if n >= 1048576:
        return mib(n)
    return "%.1f KiB" % (n / 1024.0)


# ----------------------------------------------------------------- machine

def kernel_hz():
    rel = platform.release()
    for path in ("/boot/config-" + rel, "/proc/config.gz"):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt") as f:
                for line in f:
                    if line.startswith("CONFIG_HZ="):
                        return line.strip().split("=")[1]
        except OSError:
            pass
    return "unknown"


def first_line(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True)
        return (p.stdout or p.stderr).splitlines()[0].strip()
    except (OSError, IndexError):
        return "not found"


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    distro = "unknown"
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    distro = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        with open("/etc/debian_version") as f:
            distro += " (debian_version " + f.read().strip() + ")"
    except OSError:
        pass
    ncpu = len(USABLE)
    return [
        ("cpu", "%s, %d usable" % (cpu, ncpu)),
        ("system", "%s, kernel %s, CONFIG_HZ=%s" % (distro, platform.release(),
                                                   kernel_hz())),
        ("compiler", first_line([CC, "--version"])),
        ("gprof", first_line(["gprof", "--version"])),
        ("python", platform.python_version()),
        ("gperftools", LIBPROFILER if os.path.exists(LIBPROFILER)
         else "absent (%s)" % LIBPROFILER),
    ]


# ----------------------------------------------------------------- overhead

OVERHEAD_PROGS = [
    # name, what, initial argument for calibration
    ("cpuloop", "CPU-bound loop", 100000000),
    ("calls", "call-heavy: a loop calling a tiny noinline function", 100000000),
]


def rate_label(rate):
    return "1000 (default)" if rate == "default" else rate


def calibrate(exe, n0, target, env):
    """An argument that makes exe take about target CPU seconds."""
    n = n0
    for _ in range(3):
        cpu, _, _ = run_cpu([exe, str(n)], env)
        if cpu >= 0.25 * target:
            break
        n *= 4
    return max(1, int(n * target / max(cpu, 1e-3)))


def overhead_variants(ctx, name, src, rates):
    """The unprofiled executable, and (label, rate, executable, env, cwd,
    kind) for each profiled configuration of one program."""
    exe, _ = compile_c(ctx, src, name, ["-O2", "-Wall"])
    pg, _ = compile_c(ctx, src, name + "-pg", ["-O2", "-Wall", "-pg"])
    variants = []
    configs = [("libpc", rate, {}) for rate in rates]
    configs.append(("libpc PC_CALLGRAPH=0", "default", {"PC_CALLGRAPH": "0"}))
    configs.append(("libpc PC_TIMER=posix", "default", {"PC_TIMER": "posix"}))
    for label, rate, extra in configs:
        env = libpc_env(ctx, os.path.join(ctx.tmp, "overhead.gmon"), rate, extra)
        variants.append((label, rate, exe, env, None, "libpc"))
    if os.path.exists(LIBPROFILER):
        for rate in rates:
            env = base_env()
            env.update(LD_PRELOAD=LIBPROFILER,
                       CPUPROFILE=os.path.join(ctx.tmp, "overhead.prof"),
                       CPUPROFILE_FREQUENCY="1000" if rate == "default" else rate)
            variants.append(("gperftools", rate, exe, env, None, "gperftools"))
    pgdir = os.path.join(ctx.tmp, "pg")
    os.makedirs(pgdir, exist_ok=True)
    variants.append(("gcc -pg", "100 (glibc)", pg, base_env(), pgdir, "pg"))
    return exe, variants


class Measure:
    """run_cpu for the overhead runs: a run that spent more than 10 % of its
    wall-clock time off the CPU shared it with another process (this
    benchmark pins itself to one CPU, but cannot keep others off it), so it
    is run once more; the count of such runs is reported. (Once only: on a
    machine that stays busy, every attempt shares the CPU.)"""

    def __init__(self):
        self.runs = 0
        self.retried = 0

    def __call__(self, argv, env, cwd=None):
        for attempt in range(2):
            cpu, out, err = run_cpu(argv, env, cwd)
            self.runs += 1
            if LAST_WALL[0] <= 1.1 * cpu + 0.005 or attempt == 1:
                return cpu, out, err
            self.retried += 1


def signal_rate(kind, cpu, err):
    """(signals per CPU second or None, timer name)"""
    if kind == "libpc":
        summ = libpc_summary(err)
        return summ["signal_rate"], summ["timer"]
    if kind == "gperftools":
        m = re.search(r"PROFILE: interrupts/evictions/bytes = (\d+)/", err)
        return (int(round(int(m.group(1)) / cpu)) if m and cpu > 0 else None,
                "ITIMER_PROF")
    return None, "profil+mcount"


def bench_overhead(ctx):
    a = ctx.args
    rates = a.rates.split(",")
    ctx.need(ctx.built_lib, "build/libpc.so")
    if not os.path.exists(LIBPROFILER):
        note("overhead: gperftools' libprofiler is not installed (%s; Debian "
             "package libgoogle-perftools4): skipping the peer" % LIBPROFILER)
    for name, what, n0 in OVERHEAD_PROGS:
        src = os.path.join(HERE, name + ".c")
        exe, variants = overhead_variants(ctx, name, src, rates)
        plain = base_env()
        n = calibrate(exe, n0, a.seconds, plain)
        note("overhead: %s, argument %d, %d rounds of %d runs"
             % (name, n, a.runs, 2 * len(variants) + 1))
        measure = Measure()
        base = []
        ratios = {i: [] for i in range(len(variants))}
        sigs = {i: [] for i in range(len(variants))}
        timers = {}
        for r in range(a.runs):
            # B v1 B v2 B ... vk B: each profiled run is compared with the
            # mean of the unprofiled runs either side of it
            b_prev, _, _ = measure([exe, str(n)], plain)
            base.append(b_prev)
            for i, (_, _, vexe, env, cwd, kind) in enumerate(variants):
                cpu, _, err = measure([vexe, str(n)], env, cwd)
                b_next, _, _ = measure([exe, str(n)], plain)
                base.append(b_next)
                ratios[i].append(cpu / ((b_prev + b_next) / 2))
                s, timers[i] = signal_rate(kind, cpu, err)
                if s is not None:
                    sigs[i].append(s)
                b_prev = b_next
            note("  round %d/%d done" % (r + 1, a.runs))
        # the fixed cost of a profiled process: start-up and writing the
        # profile, on a run with almost no work
        fixed = []
        for i, (label, rate, vexe, env, cwd, kind) in enumerate(variants):
            if rate not in ("default", "100 (glibc)"):
                continue
            b, v = [], []
            for _ in range(a.fixed_runs):
                b.append(measure([exe, "1000"], plain)[0])
                v.append(measure([vexe, "1000"], env, cwd)[0])
            fixed.append([label, "%.1f ms" % (1000 * median(v)),
                          "%+.1f ms" % (1000 * (median(v) - median(b)))])
        rows = []
        for i, (label, rate, _, _, _, _) in enumerate(variants):
            ov = [(x - 1) * 100 for x in ratios[i]]
            rows.append([label, timers[i], rate_label(rate), pct(median(ov)),
                         "%s .. %s" % (pct(min(ov)), pct(max(ov))),
                         "%d" % median(sigs[i]) if sigs[i] else "-"])
        print()
        print("overhead: %s (bench/%s.c, argument %d)" % (what, name, n))
        print("unprofiled CPU time: median %.3f s [%.3f .. %.3f] over %d runs; "
              "%d alternating rounds"
              % (median(base), min(base), max(base), len(base), a.runs))
        print(table(["profiler", "timer", "rate Hz", "CPU overhead",
                     "min .. max", "signals/s"], rows,
                    ["<", "<", ">", ">", ">", ">"]))
        print("runs repeated once because another process shared the CPU "
              "(wall > 1.1 x CPU): %d of %d" % (measure.retried, measure.runs))
        print("fixed cost per process (argument 1000, median of %d runs; "
              "unprofiled %.1f ms):" % (a.fixed_runs, 1000 * median(
                  [measure([exe, "1000"], plain)[0] for _ in range(a.fixed_runs)])))
        print(table(["profiler", "CPU time", "added"], fixed, ["<", ">", ">"]))
        sys.stdout.flush()


# ----------------------------------------------------------------- accuracy

THREE = ("work_alpha", "work_beta", "work_gamma")


def gprof_flat(exe, gmon):
    """gprof -b -p: ({name: %time}, total seconds, seconds per sample)."""
    p = subprocess.run(["gprof", "-b", "-p", exe, gmon], capture_output=True,
                       text=True)
    if p.returncode:
        die("gprof %s %s failed (%d): %s" % (exe, gmon, p.returncode,
                                            p.stderr))
    share, total, unit = {}, 0.0, None
    for line in p.stdout.splitlines():
        m = re.match(r"\s*Each sample counts as ([\d.]+) seconds", line)
        if m:
            unit = float(m.group(1))
            continue
        t = line.split()
        if len(t) >= 4:
            try:
                pc, cum, _ = float(t[0]), float(t[1]), float(t[2])
            except ValueError:
                continue
            share[t[-1]] = share.get(t[-1], 0.0) + pc
            total = max(total, cum)  # the last cumulative column: all of it
    return share, total, unit


def bench_accuracy(ctx):
    a = ctx.args
    exe = os.path.join(ctx.build, "tests", "progs", "three-pie")
    ctx.need(ctx.built_lib, "build/libpc.so")
    ctx.need(exe, "build/tests/progs/three-pie")
    lengths = [float(x) for x in a.lengths.split(",")]
    for rate in a.accuracy_hz.split(","):
        gmon = os.path.join(ctx.tmp, "accuracy.gmon")
        env = libpc_env(ctx, gmon, rate)
        rows, details, timer = [], [], "?"
        for length in lengths:
            tvds, errs, allerrs, sigs, shares = [], [], [], [], []
            for rep in range(a.reps):
                if os.path.exists(gmon):
                    os.unlink(gmon)
                _, out, err = run_cpu([exe, "%g" % length], env)
                truth = None
                for line in out.splitlines():
                    if line.startswith("truth: "):
                        truth = json.loads(line[7:])
                if truth is None:
                    die("no truth line from %s:\n%s" % (exe, out))
                flat, _, _ = gprof_flat(exe, gmon)
                total = gmon_records(gmon, seconds=True)
                g = [flat.get(f, 0.0) for f in THREE]
                t = [truth[f] for f in THREE]
                if sum(g) <= 0:
                    die("gprof shows none of %s" % (THREE,))
                gs = [x / sum(g) for x in g]
                ts = [x / sum(t) for x in t]
                tvd = 50 * sum(abs(x - y) for x, y in zip(gs, ts))
                tvds.append(tvd)
                errs.append(100 * (total - truth["cpu"]) / truth["cpu"])
                summ = libpc_summary(err)
                timer = summ["timer"]
                sigs.append(summ["signals"])
                allerrs.append(100 * (summ["samples"] / summ["hz"] - truth["cpu"])
                               / truth["cpu"])
                shares.append((gs, ts, total, truth["cpu"]))
            rows.append(["%g s" % length, "%.2f" % median(tvds),
                         "%.2f" % max(tvds),
                         "%d/%d" % (sum(1 for x in tvds if x < 2), len(tvds)),
                         pct(median(errs)),
                         "%s .. %s" % (pct(min(errs)), pct(max(errs))),
                         pct(median(allerrs)), "%d" % median(sigs)])
            for gs, ts, total, cpu in shares:
                details.append(["%g s" % length]
                               + ["%.1f / %.1f" % (100 * x, 100 * y)
                                  for x, y in zip(gs, ts)]
                               + ["%.3f / %.3f" % (total, cpu)])
            note("accuracy: PC_HZ=%s, %g s done" % (rate, length))
        print()
        print("accuracy: tests/progs/three.c (three-pie SECONDS), PC_HZ=%s, "
              "timer %s%s, %d runs per length, read with gprof -b -p"
              % (rate_label(rate), timer, "".join(
                  ", %s=%s" % kv for kv in sorted(ctx.extra_env.items())),
                 a.reps))
        print("TVD: total variation distance between gprof's and the truth's "
              "shares of work_alpha/beta/gamma, percentage points")
        print("seconds error: the profile's total (histogram counts / "
              "prof_rate, gprof's total time) against the truth's process CPU")
        print("with outside: the same, counting the samples that fell outside "
              "the program's text too (libc, vdso; from PC_VERBOSE)")
        print(table(["length", "TVD median", "TVD max", "TVD < 2",
                     "seconds error", "min .. max", "with outside", "signals"],
                    rows, ["<", ">", ">", ">", ">", ">", ">", ">"]))
        if a.details:
            print()
            print(table(["length", "alpha gprof/truth %", "beta %", "gamma %",
                         "total s gprof/truth"], details,
                        ["<", ">", ">", ">", ">"]))
        sys.stdout.flush()


# ----------------------------------------------------------------- size

def manyfuncs_source(nfuncs):
    """C source: nfuncs distinct noinline functions (straight-line arithmetic
    with constants of their own, so no two are alike) and a driver that
    calls every STRIDE-th one through a table until SECONDS of CPU time."""
    rng = random.Random(20240601)
    out = ["/* generated by bench/run.py: %d distinct functions */" % nfuncs,
           "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
           "#include <time.h>", ""]
    for i in range(nfuncs):
        c = [rng.getrandbits(64) | 1 for _ in range(8)]
        s = [rng.randrange(5, 59) for _ in range(3)]
        out.append(
            "__attribute__((noinline)) uint64_t\nf%05d(uint64_t x)\n{\n"
            "\tx = x * 0x%016xULL + 0x%016xULL;\n"
            "\tx ^= x >> %d;\n"
            "\tx = x * 0x%016xULL;\n"
            "\tx = (x << %d) | (x >> %d);\n"
            "\tx += 0x%016xULL;\n"
            "\tx = x * 0x%016xULL + 0x%016xULL;\n"
            "\tx ^= x >> %d;\n"
            "\tx = x * 0x%016xULL + 0x%016xULL;\n"
            "\t__asm__ volatile(\"\" : \"+r\"(x));\n"
            "\treturn x;\n}\n"
            % (i, c[0], c[1], s[0], c[2], s[1], 64 - s[1], c[3], c[4], c[5],
               s[2], c[6], c[7]))
    out.append("typedef uint64_t (*fn)(uint64_t);")
    out.append("static fn const table[%d] = {" % nfuncs)
    out += ["\tf%05d," % i for i in range(nfuncs)]
    out.append("};")
    out.append(r"""
/* CLOCK_PROCESS_CPUTIME_ID is a system call: read it only every 20000
 * calls or so, or its time (outside the program's text) shows up */
static double
cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	long stride = argc > 1 ? atol(argv[1]) : 1;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0, start = cpu();
	long n = (long)(sizeof(table) / sizeof(table[0])), calls = 0, since = 0;
	uint64_t x = 1;

	if (stride < 1)
		stride = 1;
	for (;;) {
		for (long i = 0; i < n; i += stride)
			x = table[i](x);
		since += (n + stride - 1) / stride;
		if (since >= 20000) {
			calls += since;
			since = 0;
			if (cpu() - start >= seconds)
				break;
		}
	}
	printf("manyfuncs: %ld calls, %llu\n", calls, (unsigned long long)x);
	return 0;
}""")
    return "\n".join(out) + "\n"


def text_size(exe):
    p = subprocess.run(["size", "-A", exe], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        t = line.split()
        if t and t[0] == ".text":
            return int(t[1])
    die("no .text in `size -A %s`" % exe)


def gmon_records(path, seconds=False):
    """(histogram records, histogram bins, arcs) of a gmon.out file; with
    seconds, the histogram's total in seconds instead: the sum of all counts
    over the first record's prof_rate, which is gprof's total time."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"gmon":
        die("%s is not a gmon.out file" % path)
    off, hists, bins, arcs, count, rate = 20, 0, 0, 0, 0, None
    while off < len(data):
        tag = data[off]
        off += 1
        if tag == 0:
            n, r = struct.unpack_from("<II", data, off + 16)
            rate = rate or r
            count += sum(struct.unpack_from("<%dH" % n, data, off + 40))
            off += 40 + 2 * n
            hists += 1
            bins += n
        elif tag == 1:
            off += 20
            arcs += 1
        else:
            die("%s: unexpected tag %d at %d" % (path, tag, off - 1))
    if seconds:
        return count / rate if rate else 0.0
    return hists, bins, arcs


def gprof_functions(exe, gmon):
    """How many functions gprof's flat profile lists with time."""
    flat, _, _ = gprof_flat(exe, gmon)
    return sum(1 for v in flat.values() if v > 0)


def calls_made(out):
    m = re.search(r"manyfuncs: (\d+) calls", out)
    return "{:,}".format(int(m.group(1))) if m else "?"


def bench_size(ctx):
    a = ctx.args
    ctx.need(ctx.built_lib, "build/libpc.so")
    src = os.path.join(ctx.out, "manyfuncs.c")
    text = manyfuncs_source(a.funcs)
    old = None
    if os.path.exists(src):
        with open(src) as f:
            old = f.read()
    if old != text:
        with open(src, "w") as f:
            f.write(text)
    note("size: compiling %d functions (takes a while the first time)" % a.funcs)
    # -O1: gcc 12 takes ~10 ms per function at -O2 here, 4x as long, for
    # the same code size
    flags = ["-O1", "-fno-ipa-icf", "-w"]
    (exe, t1), (pg, t2) = compile_many(ctx, [
        (src, "manyfuncs", flags), (src, "manyfuncs-pg", flags + ["-pg"])])
    tsize = text_size(exe)
    tsize_pg = text_size(pg)
    modes = [("1 %% (every 100th, %d functions)" % ((a.funcs + 99) // 100), 100),
             ("all %d functions" % a.funcs, 1)]
    rows = []
    for label, stride in modes:
        argv = [str(stride), "%g" % a.size_seconds]
        rss0, _, out, _ = run_rusage(ctx, [exe] + argv, base_env())
        rows.append([label, "none", "-", "-", "%d KiB" % rss0, "-",
                     calls_made(out)])

        for what, extra in (("libpc", {}),
                            ("libpc PC_CALLGRAPH=0", {"PC_CALLGRAPH": "0"})):
            gmon = os.path.join(ctx.tmp, "size.gmon")
            if os.path.exists(gmon):
                os.unlink(gmon)
            env = libpc_env(ctx, gmon, "default", extra)
            rss1, _, out, err = run_rusage(ctx, [exe] + argv, env)
            summ = libpc_summary(err)
            h, b, arcs = gmon_records(gmon)
            nf = gprof_functions(exe, gmon)
            rows.append(["", "%s (%s, %d signals)" % (what, summ["timer"],
                                                      summ["signals"]),
                         kib(os.path.getsize(gmon)),
                         "%d hist / %d bins, %d arcs" % (h, b, arcs),
                         "%d KiB (%+d)" % (rss1, rss1 - rss0), "%d" % nf,
                         calls_made(out)])

        pgdir = os.path.join(ctx.tmp, "size-pg")
        shutil.rmtree(pgdir, ignore_errors=True)
        os.makedirs(pgdir)
        rss2, _, out, _ = run_rusage(ctx, [pg] + argv, base_env(), cwd=pgdir)
        pgmon = os.path.join(pgdir, "gmon.out")
        h, b, arcs = gmon_records(pgmon)
        nf = gprof_functions(pg, pgmon)
        rows.append(["", "gcc -pg build", kib(os.path.getsize(pgmon)),
                     "%d hist / %d bins, %d arcs" % (h, b, arcs),
                     "%d KiB (%+d)" % (rss2, rss2 - rss0), "%d" % nf,
                     calls_made(out)])
        note("size: %s done" % label)
    print()
    print("size: generated program, %d noinline functions (gcc %s), "
          "~%g s CPU per run" % (a.funcs, " ".join(flags), a.size_seconds))
    print(".text (size -A): %s (%d bytes); -pg build: %s"
          % (mib(tsize), tsize, mib(tsize_pg)))
    if t1 or t2:
        print("compile time: %.0f s plain, %.0f s -pg (in parallel)" % (t1, t2))
    print("glibc's -pg histogram for this .text, computed: 2 bytes per 4 "
          "bytes of text = %s (the -pg build's real file is measured below)"
          % kib(tsize // 2))
    print("gprof lists: functions with time in gprof -b -p; calls made: "
          "in the ~%g s of CPU" % a.size_seconds)
    print(table(["functions called", "profiler", "gmon.out", "records",
                 "peak RSS", "gprof lists", "calls made"], rows,
                ["<", "<", ">", ">", ">", ">", ">"]))
    sys.stdout.flush()


# ----------------------------------------------------------------- main

# ----------------------------------------------------------------- objects

NLIBS = 100


def objects_program(ctx):
    """A program linked with NLIBS generated shared libraries, calling a
    spinning function in each in turn: most samples land in a library, so
    the handler's object search runs on nearly every one. Returns the
    executable (argument: rounds of calls)."""
    d = os.path.join(ctx.out, "objlibs")
    os.makedirs(d, exist_ok=True)
    jobs = []
    for i in range(NLIBS):
        src = os.path.join(d, "o%03d.c" % i)
        text = ("#include <stdint.h>\nuint64_t f%03d(uint64_t x);\n"
                "uint64_t f%03d(uint64_t x) { for (int i = 0; i < 20000; i++) "
                "{ x = x * 6364136223846793005ULL + %d; __asm__ volatile(\"\" : \"+r\"(x)); }"
                " return x; }\n" % (i, i, 2 * i + 1))
        if not os.path.exists(src) or open(src).read() != text:
            with open(src, "w") as f:
                f.write(text)
        jobs.append((src, "objlibs/libo%03d.so" % i,
                     ["-O2", "-shared", "-fPIC", "-Wl,-soname,libo%03d.so" % i]))
    compile_many(ctx, jobs)
    main = os.path.join(d, "main.c")
    text = ["#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>"]
    text += ["uint64_t f%03d(uint64_t);" % i for i in range(NLIBS)]
    text.append("static uint64_t (*const fs[])(uint64_t) = {%s};"
                % ", ".join("f%03d" % i for i in range(NLIBS)))
    text.append("int main(int argc, char **argv) { long n = argc > 1 ? atol(argv[1]) : 100;"
                " uint64_t x = 1; for (long r = 0; r < n; r++) for (int i = 0; i < %d; i++)"
                " x = fs[i](x); printf(\"%%llu\\n\", (unsigned long long)x); return 0; }"
                % NLIBS)
    text = "\n".join(text) + "\n"
    if not os.path.exists(main) or open(main).read() != text:
        with open(main, "w") as f:
            f.write(text)
    flags = ["-O2", "-L" + d, "-Wl,-rpath," + d] + \
        ["-lo%03d" % i for i in range(NLIBS)]
    # the libraries go after the source on the link line
    exe = os.path.join(ctx.out, "objmain")
    p = subprocess.run([CC, "-O2", "-o", exe, main] + flags[1:], capture_output=True,
                       text=True)
    if p.returncode:
        die("linking the %d-library program failed:\n%s" % (NLIBS, p.stderr))
    return exe


def bench_objects(ctx):
    """PC_SCOPE=all against main: CPU overhead on a program that spends its
    time in the executable (cpuloop) and on one that spends it in 100 shared
    libraries, and the memory and files of the latter."""
    a = ctx.args
    ctx.need(ctx.built_lib, "build/libpc.so")
    loop, _ = compile_c(ctx, os.path.join(HERE, "cpuloop.c"), "cpuloop", ["-O2", "-Wall"])
    many = objects_program(ctx)
    plain = base_env()
    scopes = [("main", {}), ("all", {"PC_SCOPE": "all"})]
    for label, exe, n0 in (("CPU-bound loop in the executable (bench/cpuloop.c)", loop,
                            100000000),
                           ("%d shared libraries, each called in turn" % NLIBS, many, 10)):
        n = calibrate(exe, n0, a.seconds, plain)
        measure = Measure()
        ratios = {s: [] for s, _ in scopes}
        base = []
        note("objects: %s, argument %d, %d rounds" % (label, n, a.runs))
        for _ in range(a.runs):
            b_prev, _, _ = measure([exe, str(n)], plain)
            base.append(b_prev)
            for sname, extra in scopes:
                env = libpc_env(ctx, os.path.join(ctx.tmp, "objects.gmon"), "default", extra)
                cpu, _, _ = measure([exe, str(n)], env)
                b_next, _, _ = measure([exe, str(n)], plain)
                base.append(b_next)
                ratios[sname].append(cpu / ((b_prev + b_next) / 2))
                b_prev = b_next
        print()
        print("objects: %s, argument %d; unprofiled CPU median %.3f s over %d runs"
              % (label, n, median(base), len(base)))
        rows = []
        for sname, _ in scopes:
            ov = [(x - 1) * 100 for x in ratios[sname]]
            rows.append(["PC_SCOPE=" + sname, pct(median(ov)),
                         "%s .. %s" % (pct(min(ov)), pct(max(ov)))])
        print(table(["libpc", "CPU overhead", "min .. max"], rows, ["<", ">", ">"]))
        print("runs repeated once because another process shared the CPU: %d of %d"
              % (measure.retried, measure.runs))
    # memory and files of the 100-library program, one short run each
    n = calibrate(many, 10, 0.5, plain)
    rows = []
    rss0, _, _, _ = run_rusage(ctx, [many, str(n)], plain)
    rows.append(["unprofiled", kib(rss0 * 1024), "-", "-", "-"])
    for sname, extra in scopes:
        d = tempfile.mkdtemp(dir=ctx.tmp)
        out = os.path.join(d, "gmon.out")
        env = libpc_env(ctx, out, "default", extra)
        rss, cpu, _, err = run_rusage(ctx, [many, str(n)], env)
        files = [f for f in os.listdir(d) if not f.startswith(".")]
        size = sum(os.path.getsize(os.path.join(d, f)) for f in files)
        summ = libpc_summary(err)
        rows.append(["PC_SCOPE=" + sname, kib(rss * 1024), "%+d KiB" % (rss - rss0),
                     "%d files, %s" % (len(files), kib(size)), str(summ["samples"])])
    print()
    print("memory: the %d-library program, %.1f s of CPU (max RSS from wait4)"
          % (NLIBS, 0.5))
    print(table(["libpc", "max RSS", "added", "written", "samples"], rows,
                ["<", ">", ">", ">", ">"]))
    # thread creation: each pthread_create takes an inventory with all
    d = os.path.join(ctx.out, "objlibs")
    spawn = os.path.join(ctx.out, "spawn")
    p = subprocess.run([CC, "-O2", "-pthread", "-o", spawn, os.path.join(HERE, "spawn.c"),
                        "-L" + d, "-Wl,-rpath," + d, "-Wl,--no-as-needed"] +
                       ["-lo%03d" % i for i in range(NLIBS)], capture_output=True, text=True)
    if p.returncode:
        die("linking bench/spawn.c failed:\n" + p.stderr)
    rows = []
    cpu0 = median([run_cpu([spawn, "3000"], plain)[0] for _ in range(a.runs)])
    rows.append(["unprofiled", "%.1f ms" % (1000 * cpu0), "-"])
    for sname, extra in scopes:
        env = libpc_env(ctx, os.path.join(ctx.tmp, "spawn.gmon"), "default", extra)
        cpu = median([run_cpu([spawn, "3000"], env)[0] for _ in range(a.runs)])
        rows.append(["PC_SCOPE=" + sname, "%.1f ms" % (1000 * cpu),
                     "%+.1f us a thread" % (1e6 * (cpu - cpu0) / 3000)])
    print()
    print("thread creation: 3000 threads created and joined with %d libraries loaded "
          "(bench/spawn.c), median CPU of %d runs" % (NLIBS, a.runs))
    print(table(["libpc", "CPU", "added"], rows, ["<", ">", ">"]))
    sys.stdout.flush()



BENCHES = {"overhead": bench_overhead, "accuracy": bench_accuracy,
           "size": bench_size, "objects": bench_objects}


def main():
    ap = argparse.ArgumentParser(
        description="pcprof benchmarks: overhead, accuracy, gmon.out size, PC_SCOPE=all.")
    ap.add_argument("bench", nargs="*", metavar="BENCH",
                    help="benchmarks to run (default: all, in this order: "
                    + ", ".join(BENCHES) + ")")
    ap.add_argument("--build", default="build",
                    help="build directory with libpc.so (default: build)")
    ap.add_argument("--runs", type=int, default=7,
                    help="overhead: alternating rounds (default 7)")
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="overhead: CPU seconds per unprofiled run (default 1)")
    ap.add_argument("--rates", default="default,250,4000,10000",
                    help="overhead: rates, 'default' leaves PC_HZ unset "
                    "(default: default,250,4000,10000)")
    ap.add_argument("--fixed-runs", type=int, default=21,
                    help="overhead: runs for the fixed cost of a tiny run "
                    "(default 21)")
    ap.add_argument("--reps", type=int, default=5,
                    help="accuracy: runs per length (default 5)")
    ap.add_argument("--lengths", default="0.5,1,3",
                    help="accuracy: run lengths in CPU seconds (default 0.5,1,3)")
    ap.add_argument("--accuracy-hz", default="default",
                    help="accuracy: PC_HZ values, comma separated "
                    "(default: 'default', PC_HZ unset)")
    ap.add_argument("--details", action="store_true",
                    help="accuracy: also print every run's shares")
    ap.add_argument("--funcs", type=int, default=20000,
                    help="size: functions in the generated program (default 20000)")
    ap.add_argument("--size-seconds", type=float, default=1.0,
                    help="size: CPU seconds per run (default 1)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="pin every run to this CPU (default: the highest "
                    "numbered usable CPU; -1: do not pin)")
    ap.add_argument("--env", action="append", default=[], metavar="PC_X=V",
                    help="set a libpc variable in every libpc run, e.g. "
                    "--env PC_TIMER=posix (repeatable)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (profiles) for a look")
    a = ap.parse_args()
    for name in a.bench:
        if name not in BENCHES:
            ap.error("unknown benchmark %r: choose from %s"
                     % (name, ", ".join(BENCHES)))
    # SIGTERM (e.g. a CI timeout) ends through the finally below, which
    # removes the temporary directory
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    ctx = Ctx(a)
    usable = USABLE
    if a.cpu is None:
        a.cpu = usable[-1]
    if a.cpu >= 0:
        if a.cpu not in usable:
            ap.error("--cpu %d: not one of the usable CPUs %s" % (a.cpu, usable))
        # children inherit it: unprofiled and profiled runs share one CPU,
        # and the interpreter stays off the other one
        os.sched_setaffinity(0, {a.cpu})
    todo = a.bench or list(BENCHES)
    print("pcprof benchmarks, %s" % time.strftime("%Y-%m-%d %H:%M %Z"))
    for k, v in machine():
        print("  %-10s %s" % (k, v))
    print("  %-10s %s" % ("pinned", "CPU %d" % a.cpu if a.cpu >= 0 else "no"))
    print("  %-10s %s" % ("libpc", ctx.lib_id or "missing"))
    if ctx.extra_env:
        print("  %-10s %s" % ("settings", " ".join(
            "%s=%s" % kv for kv in sorted(ctx.extra_env.items()))))
    sys.stdout.flush()
    t0 = time.monotonic()
    try:
        for name in todo:
            BENCHES[name](ctx)
    finally:
        if not a.keep:
            shutil.rmtree(ctx.tmp, ignore_errors=True)
        else:
            note("bench: temporary files kept in " + ctx.tmp)
    note("bench: done in %.0f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
