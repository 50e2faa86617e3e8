# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end test of the wall gate beside a burst of load that the test
makes itself (issue 36): pcprof compare --metric wall of
tests/progs/gate36_napper.c's two builds (the nap doubled), each run
through a wrapper that, for three chosen runs a side, starts two busy
loops pinned to one CPU beside the program for that run alone. The gate
must still decide "regressed", the nap's wait named, and name each of
the disturbed runs (made again or left out). bench/disturbed.py measures
the same over many comparisons."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import pctest
from pctest import BUILD, clean_env, need, prog

# pcprof compare's runs are timed: one worker, in order
SHARED = True

# The wrapper: WRAP LOG RUNS CMD... runs CMD; where the run's directory
# (PC_OUT's) is one of RUNS and not yet in LOG (its first try: a run made
# again is not disturbed again), it notes it in LOG and runs CMD pinned to
# one CPU at nice NICE beside two busy loops pinned there too, killed after
# it (and ending after 20 s whatever happens to the wrapper); taskset and
# nice run unprofiled. Niced, the program waits in the run queue for the
# loops whatever else the machine runs. At nice 0 it did not: a program
# that wakes from a nap runs before the loops, and beside them it waited
# no longer than beside other jobs' load (3 of 6 runs missed at load 10).
# At nice 8, at load 10 to 18 on 2 CPUs, a disturbed run waited 0.07 to
# 0.98 s in the run queue, its side's other runs 0.001 to 0.012 s (the
# gate's limit: twice the median, and 10 ms, at least). SCHED_BATCH at
# nice 0 (no wake-up preemption) was too weak: 0.03 to 0.08 s, one missed.
NICE = 8
WRAPPER = r"""#!/bin/sh
log=$1; runs=$2; shift 2
run=$(basename "$(dirname "$PC_OUT")")
case " $runs " in *" $run "*)
	if ! grep -qx "$run" "$log" 2>/dev/null; then
		echo "$run" >> "$log"
		hogs=
		for i in 1 2; do
			env -u LD_PRELOAD timeout 20 taskset -c %(cpu)d sh -c 'while :; do :; done' &
			hogs="$hogs $!"
		done
		t0=$(date +%%s.%%N)
		env -u LD_PRELOAD taskset -c %(cpu)d nice -n %(nice)d env "LD_PRELOAD=$LD_PRELOAD" "$@"
		st=$?
		kill $hogs
		echo "$run $t0 $(date +%%s.%%N)" >> "$log.time"
		exit $st
	fi;;
esac
exec "$@"
"""

NAP = "[off-cpu: clock_nanosleep] from nap_stage"


def compare(argv, timeout=120):
    """pcprof compare argv in its own session, killed whole on a hang:
    (exit status, stdout, stderr)."""
    p = subprocess.Popen([os.path.join(os.path.abspath(BUILD), "pcprof"), "compare"] + argv,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env(profiled=False), start_new_session=True)
    out, err = pctest.communicate(p, timeout, "pcprof compare %s" % argv)
    return p.returncode, out, err


def test_gate36_burst_wall_regression_decided_with_the_disturbed_runs_named():
    """pcprof compare --metric wall --runs 6 --hz 1000, gate36_napper 4
    naps of 30 ms a run against 60 ms, runs 4, 5 and 6 of each side (the
    first tries) disturbed by the wrapper's burst: exit 1, "regressed"
    with the nap's wait slower, and each disturbed run named in
    "disturbed" (made again, or left out). The runs disturbed are the
    last three a side, so that each is judged against three earlier runs
    at least (the gate judges a run against its side's kept runs: against
    two, one slow one moves the median). A gate that finds no disturbed
    run fails here (checked with run_disturbed and the leave-out turned
    off: every burst missed). 14 to 40 s at load 10 to 18 on 2 CPUs (the
    bursts 0.7 to 3.6 s each: the niced program's start and end wait
    too)."""
    need("taskset")
    need("timeout")
    tmp = tempfile.mkdtemp(prefix="pc-e2e-gate36b-")
    wrap = os.path.join(tmp, "wrap.sh")
    with open(wrap, "w") as f:
        f.write(WRAPPER % {"nice": NICE, "cpu": min(os.sched_getaffinity(0))})
    os.chmod(wrap, 0o755)
    exes = []
    for side, name in (("b", "gate36_napper"), ("n", "gate36_napper-slow")):
        os.makedirs(os.path.join(tmp, side))
        exes.append(os.path.join(tmp, side, "napper"))
        shutil.copy(prog(name), exes[-1])
    log = os.path.join(tmp, "disturbed")
    hit = {"base": "base-004 base-005 base-006", "new": "new-004 new-005 new-006"}
    t0 = time.monotonic()
    rc, out, err = compare(["--metric", "wall", "--runs", "6", "--hz", "1000",
                            "--program", "napper", "--threshold", "5", "--min-seconds", "0.005",
                            "--format", "json", "-o", os.path.join(tmp, "runs"),
                            "--base", wrap, log, hit["base"], exes[0], "4", "30",
                            "--new", wrap, log, hit["new"], exes[1], "4", "30"])
    took = time.monotonic() - t0
    assert rc == 1, (rc, out[-2000:], err[-2000:])
    j = json.loads(out)
    with open(log) as f:
        made = sorted(l.strip() for l in f if l.strip())
    assert made == sorted(hit["base"].split() + hit["new"].split()), made
    q = j["sequential"]
    slow = [f["name"] for f in j["functions"] if f["status"] == "slower"]
    assert q["verdict"] == "regressed" and NAP in slow, (q, slow)
    named = {}
    for d in j["disturbed"]:
        named.setdefault(os.path.basename(d["run"]), []).append(
            (d["action"], d["why"], d["value"], d["side_median"]))
    missed = [r for r in made if r not in named]
    assert not missed, (missed, named)
    with open(log + ".time") as f:
        burst = ["%s %.2f" % (l.split()[0], float(l.split()[2]) - float(l.split()[1]))
                 for l in f if l.strip()]
    shutil.rmtree(tmp)
    return "%.1f s; bursts %s; named: %s" % (took, ", ".join(burst), "; ".join(
        "%s %s" % (r, ", ".join("%s (%s %.3f s, median %.3f)" % x for x in named[r]))
        for r in sorted(named)))
