#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pcprof compare --metric wall with runs disturbed by a burst of load: are
the disturbed runs named, and is the regression still found?

    python3 bench/disturbed.py --build build              # 5 comparisons
    python3 bench/disturbed.py --build build --reps 10 --runs 8

tests/progs/gate36_napper.c naps ROUNDS times a round of NAP_MS (random
0.9 to 1.1 times it) and spins about 2 ms; gate36_napper-slow naps twice
as long. Each comparison runs both through a wrapper that, for the
commands listed (1: the warm-up pair's), starts two busy loops pinned to
CPU 0 beside the program, pinned there too (and at --nice), for that
run alone, and notes the run's directory. pcprof compare judges a run
against two kept runs of its side at least, so the first measured run
(command 2) is judged only by the comparison's leave-out; and at nice 0
a program woken from a nap runs before the loops: on a busy machine
such bursts can go unseen (test_gate36_burst.py). For each comparison:
its exit status, whether the nap's wait was found slower, and which
disturbed runs the output named (made again or left out) or missed. Python 3 standard library only.
"""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

WRAPPER = r"""#!/bin/sh
cnt=$1; hit=$2; shift 2
n=$(( $(cat "$cnt" 2>/dev/null || echo 0) + 1 ))
echo $n > "$cnt"
hogs=
pin=
case " $hit " in *" $n "*)
	for i in 1 2; do
		env -u LD_PRELOAD taskset -c 0 sh -c 'while :; do :; done' &
		hogs="$hogs $!"
	done
	pin="taskset -c 0 nice -n @NICE@"
	dirname "$PC_OUT" >> "$cnt.hit";;
esac
$pin "$@"; st=$?
[ -n "$hogs" ] && kill $hogs
exit $st
"""


def one(build, tmp, runs, rounds, nap, hit_base, hit_new, nice=0):
    wrap = os.path.join(tmp, "wrap.sh")
    with open(wrap, "w") as f:
        f.write(WRAPPER.replace("@NICE@", str(nice)))
    os.chmod(wrap, os.stat(wrap).st_mode | stat.S_IXUSR)
    exes = []
    for side, prog in (("b", "gate36_napper"), ("n", "gate36_napper-slow")):
        os.makedirs(os.path.join(tmp, side), exist_ok=True)
        exes.append(os.path.join(tmp, side, "napper"))
        shutil.copy(os.path.join(build, "tests", "progs", prog), exes[-1])
    cb, cn = os.path.join(tmp, "cb"), os.path.join(tmp, "cn")
    p = subprocess.run([os.path.join(build, "pcprof"), "compare", "--metric", "wall",
                        "--runs", str(runs), "--program", "napper", "--format", "json",
                        "-q", "--base", wrap, cb, hit_base, exes[0], rounds, nap,
                        "--new", wrap, cn, hit_new, exes[1], rounds, nap],
                       capture_output=True, text=True, timeout=600)
    j = json.loads(p.stdout)
    hits = []
    for c in (cb, cn):
        if os.path.exists(c + ".hit"):
            with open(c + ".hit") as f:
                hits += [os.path.basename(l.strip()) for l in f if l.strip()]
    named = {os.path.basename(d["run"]): d["action"] for d in j["disturbed"]}
    slow = [f["name"] for f in j["functions"] if f["status"] == "slower"]
    return p.returncode, "[off-cpu: clock_nanosleep] from nap_stage" in slow, hits, named


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--rounds", default="6")
    ap.add_argument("--nap", default="50", help="NAP_MS")
    ap.add_argument("--hit-base", default="2 4")
    ap.add_argument("--hit-new", default="2")
    ap.add_argument("--nice", type=int, default=0,
                    help="the disturbed run's niceness beside the loops (0; "
                         "test_gate36_burst.py's 8 holds it in the run queue at any load)")
    a = ap.parse_args()
    found = allnamed = 0
    for r in range(a.reps):
        tmp = tempfile.mkdtemp(prefix="pc-bench-disturbed-")
        rc, nap, hits, named = one(a.build, tmp, a.runs, a.rounds, a.nap, a.hit_base,
                                   a.hit_new, a.nice)
        missed = [h for h in hits if h not in named]
        found += rc == 1 and nap
        allnamed += not missed
        print("%2d: exit %d, nap %s; disturbed %s; named %s; missed %s" % (
            r + 1, rc, "slower" if nap else "not found", ",".join(hits),
            ", ".join("%s %s" % kv for kv in sorted(named.items())) or "none",
            ",".join(missed) or "none"))
        sys.stdout.flush()
        shutil.rmtree(tmp)
    print("regression found in %d of %d; every disturbed run named in %d of %d" % (
        found, a.reps, allnamed, a.reps))


if __name__ == "__main__":
    main()
