# SPDX-License-Identifier: BSD-2-Clause
"""A program's signal that a wait's own mask lets through runs during the
wait under libpc, as plain, even when a sample comes as the wait is cut
short (tests/progs/flaky_waits.c). The kernel keeps the wait's mask until
the first handler is entered, and the signal frame keeps the program's
own mask for sigreturn (sigmask_to_save(), signal_delivered()); the
sample, a thread's own signal, is taken first, and its handler blocks
every other signal, so without waits.c the program's handler ran only
when the program unblocked its signal: 0 to 5 times a wait in 0.15 s of
them here (5 to 13 a run of the four waits, 4 runs), once in CI in
test_host's single pselect."""

import pctest
from pctest import prog


def test_waits_with_a_mask_run_the_programs_handler_during_the_wait():
    argv = [prog("flaky_waits"), "0.15"]
    plain = pctest.run(argv, profiled=False, timeout=60)
    assert plain.status == 0, "the plain run is off: %s %r %r" % (
        plain.status, plain.stdout, plain.stderr[-300:])
    # the POSIX timer: it expires on a tick, which finds the thread in the
    # kernel most of the time here, and its signal comes as the thread
    # leaves it (with the task-clock timer, a run of the old libpc had
    # no handler late)
    prof = pctest.run(argv, env={"PC_TIMER": "posix"}, timeout=60)
    assert prof.stdout == plain.stdout and prof.status == 0, \
        "under libpc: status %s\n%s\nplain:\n%s" % (prof.status, prof.stdout, plain.stdout)
    s = prof.summary()
    # the loop is all system calls: the samples come at their returns,
    # about 250 a CPU-second, a share of them as a wait is cut short
    assert s["signals"] >= 50, "%d signals: too few to cut a wait short" % s["signals"]
    return "%d signals over %.2f s of waits, every handler during its wait" % (
        s["signals"], s["cpu"])
