#!/usr/bin/env python3
"""pcprof on Debian's own programs, against perf on the same runs.

    python3 bench/real.py --build build            # every program
    python3 bench/real.py --build build xz sqlite  # some of them

For each program, one run is recorded by perf (task-clock, 1000 Hz, with
call chains) and
profiled whole by libpc at once (PC_SCOPE=all, every process), and
separate runs time the bare command and `pcprof run`. Printed per program:

    shown     libpc's CPU seconds over perf's (the time a report accounts for)
    named     the share of samples on real function names, libpc's and perf's
              (not an address, OBJ+0xOFFSET, or [something])
    tvd obj   total variation distance between the two by object
    tvd fn    the same by (object, function), for names both can give;
              what one side cannot name is lumped per object
    wall      pcprof run's wall time over the bare command's (median of 3)

perf counts kernel time where it is spent ([kernel.kallsyms]); libpc
credits it to the user code the system call or page fault returns to. So
a perf sample in the kernel is counted at the first user-space frame of
its call chain; each side is normalised to its own total.
Needs perf, the programs, and build/libpc.so and build/pcprof. Python 3
standard library only. Tables go to stdout, progress to stderr.
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def text_file(path, mbytes, seed=7):
    rnd = random.Random(seed)
    words = ["".join(rnd.choice("etaoinshrdlucmfwyp") for _ in range(rnd.randint(2, 9)))
             for _ in range(4000)]
    with open(path, "w") as f:
        n = 0
        while n < mbytes << 20:
            line = " ".join(rnd.choice(words) for _ in range(12)) + "\n"
            f.write(line)
            n += len(line)


CXX_EXC = r"""
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
static int parse(const std::string &s) {
    if (s.size() % 7 == 0) throw std::runtime_error("bad " + s);
    return (int)s.size();
}
int main() {
    std::map<std::string, int> m;
    long caught = 0, sum = 0;
    for (int i = 0; i < 400000; i++) {
        std::string k = std::to_string(i * 2654435761u % 100003);
        try { sum += parse(k); m[k] += 1; } catch (const std::exception &) { caught++; }
    }
    std::printf("%ld %ld %zu\n", sum, caught, m.size());
    return 0;
}
"""


def programs(d, build):
    """name -> (argv, stdin text or None, setup function or None)."""
    data = os.path.join(d, "text.txt")
    shim = os.path.join(d, "python3")
    repo = os.path.join(d, "repo")

    def setup_text():
        if not os.path.exists(data):
            text_file(data, 24)

    def setup_shim():
        with open(shim, "w") as f:
            f.write("#!/bin/sh\nexec /usr/bin/python3.11 \"$@\"\n")
        os.chmod(shim, 0o755)

    def setup_repo():
        if os.path.exists(repo):
            shutil.rmtree(repo)
        subprocess.run(["git", "clone", "-q", "--no-local", TOP, repo], check=True)

    def setup_cxx():
        src = os.path.join(d, "exc.cc")
        with open(src, "w") as f:
            f.write(CXX_EXC)
        subprocess.run(["c++", "-O2", "-g", "-o", os.path.join(d, "exc"), src], check=True)

    py = "import json; d=[{'k': i, 'v': str(i)*3} for i in range(300000)]; " \
         "print(len(json.loads(json.dumps(d))))"
    return {
        "xz": (["xz", "-9", "-k", "-T1", "-c", data], None, setup_text),
        "gzip": (["gzip", "-9", "-c", data], None, setup_text),
        "sort": (["sort", "-f", data, data], None, setup_text),
        "sqlite": (["sqlite3", ":memory:",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
                    "WHERE x < 1000000) SELECT sum(x), count(*) FROM c;"], None, None),
        "python3.11": (["/usr/bin/python3.11", "-c", py], None, None),
        "python shim": ([shim, "-c", py], None, setup_shim),
        "git gc": (["git", "-C", repo, "gc", "--aggressive", "-q"], None, setup_repo),
        "bc": (["bc", "-l"], "scale=1500; 4*a(1)\n", None),
        "awk": (["awk", "{ n += length($0); w[$1]++ } END { print n, length(w) }", data],
                None, setup_text),
        "c++ exceptions": ([os.path.join(d, "exc")], None, setup_cxx),
        "4 threads": ([os.path.join(build, "tests", "progs", "threads"), "2"], None, None),
    }


def unnamed(name):
    return name.startswith("[") or re.search(r"\+0x[0-9a-f]+", name) or \
        re.match(r"^0x[0-9a-f]+$", name)


def perf_table(data):
    """{(object, symbol): samples} from perf's samples, as libpc counts
    them: a sample in the kernel goes to the first user-space frame of its
    call chain (the code the system call or fault returns to), as libpc's
    signal lands there; a kernel sample with no user frame is left out."""
    r = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"],
                       capture_output=True, text=True, timeout=900)
    out = {}

    def flush(frames):
        for sym, dso in frames:
            if dso.startswith("[kernel") or dso == "[unknown]":
                continue
            obj = os.path.basename(dso)
            if obj.startswith("perf-") and obj.endswith(".map"):
                obj = "[jit]"
            out[(obj, sym)] = out.get((obj, sym), 0) + 1
            return

    frames = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line:
            if frames:
                flush(frames)
            frames = []
            continue
        ip, _, rest = line.partition(" ")
        k = rest.rfind(" (")
        if k < 0 or not rest.endswith(")"):
            continue
        sym = re.sub(r"\+0x[0-9a-f]+$", "", rest[:k].strip())
        frames.append((sym, rest[k + 2:-1]))
    if frames:
        flush(frames)
    return out


def norm_obj(name):
    """liblzma.so.5.4.1 and liblzma.so.5 are one object."""
    m = re.match(r"^(.*?\.so(?:\.\d+)?)", name)
    return m.group(1) if m else name


def tvd(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return float("nan")
    return 0.5 * sum(abs(a.get(k, 0) / ta - b.get(k, 0) / tb) for k in set(a) | set(b))


def measure(name, argv, stdin, build, d, reps):
    lib = os.path.join(build, "libpc.so")
    pcprof = os.path.join(build, "pcprof")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PC_") and k != "LD_PRELOAD"}
    run_dir = os.path.join(d, "run-" + re.sub(r"\W", "_", name))
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    pdata = os.path.join(d, "perf.data")
    p = subprocess.run(["perf", "record", "-q", "-g", "-e", "task-clock", "-F", "1000", "-o", pdata,
                        "--", "env", "LD_PRELOAD=" + lib, "PC_SCOPE=all",
                        "PC_OUT=" + os.path.join(run_dir, "gmon.out")] + argv,
                       input=stdin.encode() if stdin else None, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=900)
    if p.returncode:
        note("%s: exit %d: %s" % (name, p.returncode, p.stderr[-500:].decode(errors="replace")))
    q = subprocess.run([pcprof, "report", "--format", "json", run_dir], capture_output=True,
                       text=True, timeout=600)
    if q.returncode:
        note("%s: pcprof report: %s" % (name, q.stderr))
        return None
    j = json.loads(q.stdout)
    prof = j["profile"]
    ours = {}
    for f in prof["functions"]:
        k = (norm_obj(f["object"]), f["name"])
        ours[k] = ours.get(k, 0) + f["self_samples"]
    if prof["unattributed_samples"]:
        ours[("?", "[unknown]")] = prof["unattributed_samples"]
    theirs = {(norm_obj(o), s): c for (o, s), c in perf_table(pdata).items()}
    perf_all = subprocess.run(["perf", "report", "-i", pdata, "--stdio", "-q", "-n",
                               "--sort", "comm"], capture_output=True, text=True).stdout
    perf_cpu = sum(int(m) for m in re.findall(r"^\s*[\d.]+%\s+(\d+)", perf_all, re.M)) / 1000
    pc_cpu = j["cpu_seconds"]
    by_obj = lambda t: {o: sum(c for (oo, _), c in t.items() if oo == o)
                        for o in {o for o, _ in t}}
    named_pc = sum(c for (_, n), c in ours.items() if not unnamed(n)) / max(sum(ours.values()), 1)
    named_perf = sum(c for (_, n), c in theirs.items() if not unnamed(n)) / \
        max(sum(theirs.values()), 1)

    def lumped(t):
        out = {}
        for (o, n), c in t.items():
            k = (o, "[unnamed]") if unnamed(n) else (o, n)
            out[k] = out.get(k, 0) + c
        return out

    walls = {"bare": [], "pcprof": []}
    for _ in range(reps):
        for how in ("bare", "pcprof"):
            cmd = argv if how == "bare" else \
                [pcprof, "run", "--no-report", "-o", os.path.join(d, "wall-run")] + argv
            t0 = time.time()
            subprocess.run(cmd, input=stdin, text=True, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=900)
            walls[how].append(time.time() - t0)
            shutil.rmtree(os.path.join(d, "wall-run"), ignore_errors=True)
    return {
        "program": name, "processes": len(j["processes"]),
        "perf_cpu": perf_cpu, "pcprof_cpu": pc_cpu,
        "shown": pc_cpu / perf_cpu if perf_cpu else float("nan"),
        "named": named_pc, "named_perf": named_perf,
        "tvd_obj": tvd(by_obj(ours), by_obj(theirs)),
        "tvd_fn": tvd(lumped(ours), lumped(theirs)),
        "wall": statistics.median(walls["pcprof"]) / statistics.median(walls["bare"]),
        "bare_s": statistics.median(walls["bare"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of each side")
    ap.add_argument("only", nargs="*", help="programs whose name contains one of these")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if not shutil.which("perf"):
        note("bench: perf not found (apt-get install linux-perf)")
        return 2
    d = tempfile.mkdtemp(prefix="pc-real-")
    rows = []
    for name, (argv, stdin, setup) in programs(d, build).items():
        if a.only and not any(o in name for o in a.only):
            continue
        if not shutil.which(argv[0]) and not os.path.exists(argv[0]) and setup is None:
            note("%s: %s not installed; skipped" % (name, argv[0]))
            continue
        if setup:
            setup()
        note("%s ..." % name)
        r = measure(name, argv, stdin, build, d, a.reps)
        if r:
            rows.append(r)
    print("| program | processes | CPU s (perf) | shown | named (perf) | TVD by object "
          "| TVD by function | wall, pcprof run / bare |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %.2f | %.1f %% | %.1f %% (%.1f %%) | %.3f | %.3f | %.2f (%.2f s) |" % (
            r["program"], r["processes"], r["perf_cpu"], 100 * r["shown"], 100 * r["named"],
            100 * r["named_perf"], r["tvd_obj"], r["tvd_fn"], r["wall"], r["bare_s"]))
    shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
