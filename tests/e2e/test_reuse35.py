# SPDX-License-Identifier: BSD-2-Clause
"""A blocked thread's walk taken while the thread ran (issue 35): a walk
that read another call's frames in the wait's place must never become the
wait's stack. tests/progs/reuse35's threads nap 20 to 120 us at one of a
few depths and read the clock between naps, in frames that take the
naps' place; walked while a thread is out of its nap and back in it by
the check, such a walk read the clock's frames. Taken as right, it named
the wait from stamper, from [unknown], or with clock_nanosleep twice, and
kept that stack for every later nap at that depth: before the fix, in 19
of 20 runs of 8 threads, 800 rounds, at PC_WALL_HZ=1000 and
PC_WALL_BUDGET=20 (these make walks many: 100 to 260 a run), and this
test failed at its first run 11 times in 11."""

import os
import re
import shutil
import tempfile

from pctest import prog, run
from test_offcpu import wall_run
from test_wallstack import folded

RUNS = 4	# at 19 of 20 runs with a wrong stack before: all 4 clean, 6e-6
ARGS = ["8", "800"]
ENV = {"PC_WALL_HZ": "1000", "PC_WALL_BUDGET": "20"}
LEAF = "[off-cpu: clock_nanosleep]"
# a nap's stack: whole, napper once for each depth; or cut short, the
# walk's stop, then the end of that (at least the call alone)
WHOLE = re.compile(r"__GI___clone3;start_thread;thread;(napper;){1,4}"
                   r"__nanosleep;clock_nanosleep;\[off-cpu: clock_nanosleep\]$")
CUT = re.compile(r"\[unwind stopped\];(start_thread;)?(thread;)?"
                 r"(napper;)*(__nanosleep;)?clock_nanosleep;"
                 r"\[off-cpu: clock_nanosleep\]$")


def test_reuse35_a_walk_torn_by_its_thread_is_never_the_waits_stack():
    """Four runs of reuse35 8 800 under pcprof run --clock wall: the same
    output and status as plain; no nap's time under a stack that is not
    the nap's (a cut one may be: [unwind stopped]), and most of it under
    the whole stack (the walks still find it: 25 % or more over the
    runs; 53 to 86 % here, at a load of 4 on 2 CPUs)."""
    exe = prog("reuse35")
    plain = run([exe] + ARGS, profiled=False)
    assert plain.status == 0, plain.stderr
    whole = total = 0
    for i in range(RUNS):
        d = tempfile.mkdtemp(prefix="pc-e2e-reuse35-")
        p = wall_run([exe] + ARGS, d, env=ENV, timeout=120)
        assert p.returncode == 0 and p.stdout == plain.stdout, \
            (p.returncode, p.stderr[-1500:])
        stacks = folded(os.path.join(d, "run"))
        naps = {f: n for f, n in stacks.items() if f[-1] == LEAF}
        bad = {s: n for s, n in ((";".join(f), n) for f, n in naps.items())
               if not WHOLE.match(s) and not CUT.match(s)}
        assert not bad, (i, sorted(bad.items(), key=lambda x: -x[1])[:5])
        total += sum(naps.values())
        whole += sum(n for f, n in naps.items() if WHOLE.match(";".join(f)))
        shutil.rmtree(d)
    assert total > 0 and whole >= 0.25 * total, (whole, total)
    return "%d runs: %d nap samples, %.0f %% under the whole stack, " \
        "none wrong" % (RUNS, total, 100.0 * whole / total)
