# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the cache of allocation walks (preload/alloc_walk.c):
a sampled allocation's stack is taken from a kept walk of the same
return address and stack pointer where the return addresses above are
still in their slots. tests/progs/alloc39walk.c calls one malloc site
from two alike callers at the same stack pointer, from frames of varying
sizes and from recursion 1 to 80 deep, alone and in 4 threads at once: at
PC_ALLOC_RATE=1 each stack's count is exact, as libgcc's walk of every
allocation gave it.

Every program runs plain and under libpc.so in the style of
test_host.py: same stdout, same status, a bound on the time."""

from pctest import prog
from test_alloc39 import RATE1, both, report


def stacks(exe, r):
    """{folded stack: allocations} of r's profile, its recursion's stacks
    as ('rec', depth, truncated)."""
    out = {}
    for line in report(exe, r, "--metric", "alloc", "--format", "folded").splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        if "rec" in frames:
            key = ("rec", frames.count("rec"), frames[0] == "[truncated]")
        else:
            key = stack
        out[key] = out.get(key, 0) + int(n)
    return out


def check(exe, r, threads):
    assert "same frame from via_a and via_b: yes" in r.stdout, r.stdout
    s = stacks(exe, r)
    for via, n in (("via_a", 3000), ("via_b", 7000), ("via_vla", 700)):
        got = s.get("_start;[libraries];main;work;%s;leaf" % via, 0)
        assert got == n, (via, got, sorted(k for k in s if isinstance(k, str)))
        got = s.get("[libraries];work;%s;leaf" % via, 0)
        assert got == n * threads, (via, got, threads)
    # the recursion's stacks to depth 50 whole in every thread (64 frames
    # are kept: the deeper ones are cut at 64, the thread's outer frames
    # first), each of its 80 calls counted once
    for d in range(1, 51):
        assert s.get(("rec", d, False)) == threads + 1, (d, s.get(("rec", d, False)))
    got = sum(n for k, n in s.items() if not isinstance(k, str))
    assert got == 80 * (threads + 1), got

def test_alloc_walks_kept_tell_alike_callers_apart_at_rate_1():
    """One thread: every stack's count exact at rate 1, though via_a and
    via_b reach the malloc site at the same stack pointer."""
    exe = prog("alloc39walk")
    check(exe, both([exe], RATE1), 0)


def test_alloc_walks_kept_in_threads_at_rate_1():
    """3 threads more at once, each its own stack: 4 times each count."""
    exe = prog("alloc39walk")
    check(exe, both([exe, "threads"], RATE1), 3)
