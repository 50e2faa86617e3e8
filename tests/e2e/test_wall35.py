# SPDX-License-Identifier: BSD-2-Clause
"""Walks reused across stacks (issue 35): a walk is kept by its pc alone
too, for a thread blocked at that pc on another stack, its stack words
checked at the same offsets from its own sp. tests/progs/wall35pool's
two pools nap in nanosleep at the same pc from the same depth, each
under a function of its own (12 threads under pool_a, 4 under pool_b):
each pool's off-CPU time stays under its own function, in the share of
its threads, plain and profiled alike."""

import json
import os
import shutil
import tempfile

from pctest import prog, run
from test_cli import pcprof
from test_wallacct import wall_run
from test_wallstack import main_pid


def pools(rdir):
    """Seconds under pool_a and pool_b, and in all, of the main process."""
    p = pcprof("report", "--format", "folded", "--process", str(main_pid(rdir)), rdir)
    assert p.returncode == 0, p.stderr
    rate = json.loads(pcprof("report", "--format", "json", rdir).stdout)["profile"]["rate_hz"]
    out = {"pool_a": 0.0, "pool_b": 0.0, "all": 0.0}
    for line in p.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        s = int(n) / rate
        out["all"] += s
        frames = stack.split(";")
        for f in ("pool_a", "pool_b"):
            if f in frames:
                out[f] += s
    return out


def test_wall35_pools_at_one_pc_keep_their_own_functions():
    """Each pool's time under its own function: pool_a's share of the
    two 0.75 (12 threads of 16, each asleep 1 s), within 0.08 (a
    thread's time known to its looks' interval; a walk reused from the
    other pool would move a whole thread's naps, 0.0625); both under
    their functions for 85 % of the workers' 16 s at least."""
    exe = prog("wall35pool")
    d = tempfile.mkdtemp(prefix="pc-e2e-wall35-")
    try:
        plain = run([exe, "12", "4", "1"], profiled=False, timeout=60)
        assert (plain.status, plain.stdout) == (0, "done\n"), plain.stderr
        p, _ = wall_run([exe, "12", "4", "1"], d, timeout=60)
        assert (p.returncode, p.stdout) == (0, "done\n"), p.stderr[-1500:]
        got = pools(os.path.join(d, "run"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    both = got["pool_a"] + got["pool_b"]
    share = got["pool_a"] / both if both else 0.0
    assert abs(share - 0.75) <= 0.08, got
    assert both >= 0.85 * 16, got
    return "pool_a %.2f s, pool_b %.2f s (share %.3f), all %.2f s" % (
        got["pool_a"], got["pool_b"], share, got["all"])
