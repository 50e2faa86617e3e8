# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of libpc-alloc.so's static first-call arena: while
the hooks find their next definitions, what dlsym allocates comes from
a static arena, whose blocks must never reach glibc's free. glibc 2.34
and later allocate nothing in dlsym, so free's fast path does not test
for them; tests/progs/alloc39boot.c is a dlsym that allocates, as
glibc's did before, preloaded after the hooks: its blocks come from the
arena, and it grows one with realloc and frees them all at exit, after
the hooks know glibc's free.

Every program runs plain and preloaded, in the style of test_host.py:
same stdout, same status, a bound on the time."""

import re

import pctest
from pctest import prog
from test_alloc39 import RATE1, check_exact, hooks_lib, run, sites
from test_host import same


def arena_blocks(r):
    """How many of the shim's blocks came from libpc-alloc.so's arena."""
    m = re.search(r"^dlsym: (\d+) of its blocks from libpc-alloc.so$", r.stderr, re.M)
    assert m, r.stderr
    return int(m.group(1))


def test_alloc_blocks_of_the_first_call_arena_never_reach_glibc_s_free():
    """alloc39 with the allocating dlsym, at rate 1: output and status as
    plain (where a block of the arena freed by glibc aborts), some of
    dlsym's blocks from the arena, and every known site exact."""
    exe = prog("alloc39")
    shim = prog("alloc39boot.so")
    plain = run([exe], {"LD_PRELOAD": shim}, profiled=False, hooks=False)
    assert arena_blocks(plain) == 0, plain.stderr
    for threads in ([], ["threads"]):
        r = run([exe] + threads, dict(RATE1, LD_PRELOAD=pctest.lib() + ":" + shim))
        same(r, run([exe] + threads, {"LD_PRELOAD": shim}, profiled=False, hooks=False),
             "alloc39 %s with alloc39boot.so" % threads)
        assert arena_blocks(r) > 0 and "libpc:" not in r.stderr, r.stderr
        check_exact(sites(exe, r)[0], 4 if threads else 1)


def test_alloc_blocks_of_the_first_call_arena_without_libpc():
    """The hooks alone with the allocating dlsym (they only forward):
    output and status as plain, dlsym's first blocks from the arena."""
    exe = prog("alloc39")
    shim = prog("alloc39boot.so")
    plain = run([exe, "threads"], {"LD_PRELOAD": shim}, profiled=False, hooks=False)
    r = run([exe, "threads"], {"PC_ALLOC": "1", "LD_PRELOAD": hooks_lib() + ":" + shim},
            profiled=False, hooks=False)
    same(r, plain, "alloc39 threads with the hooks and alloc39boot.so")
    assert arena_blocks(r) > 0, r.stderr
