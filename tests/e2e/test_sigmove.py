# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests that the program's signals are all the program's, even
the one libpc samples on by default (SIGRTMAX), and that sampling goes on
through what once stopped it: tests/progs/sigmove.c's cases.

When the program takes libpc's signal (a handler for it, a mask or a wait
that names it), libpc moves to another real-time signal, for every thread,
and the program gets SIGRTMAX as it would plain: its waits return, its
queued values arrive one by one, a handler without SA_RESTART cuts a read
short. Every case runs plain and under libpc, with POSIX timers and with
task-clock events where this machine allows them: the two must print the
same and end the same way, and the profile must hold the work done after
the move, by name. A hang is a failure: every run has a timeout, after
which its process group is killed (test_host.host)."""

import re

import pctest
from pctest import gprof_flat, prog
from test_host import both, host, libpc_said, plain_ok, same

WAYS = ("sigwait", "sigwaitinfo", "sigtimedwait", "sigsuspend", "ppoll",
        "pselect", "signalfd")
# each run is killed after this: a wait that hangs, or runs out its own
# 10 s timeout, fails
TIMEOUT = 30


def sigmove():
    return prog("sigmove")


_timers = None


def timers():
    """posix, and taskclock where a task-clock event may be opened here."""
    global _timers
    if _timers is None:
        probe = host([prog("hostile"), "perf-ok"], profiled=False)
        _timers = ("posix", "taskclock") if probe.status == 0 else ("posix",)
    return _timers


def seconds_in(r, name):
    """gprof's self seconds of function name (a clone, name.constprop.0,
    counts as name) in r's profile."""
    funcs, total, _ = gprof_flat(sigmove(), r.path())
    return sum(s for f, s in funcs.items() if f == name or f.startswith(name + ".")), total


_plain = {}


def plain_run(argv, env=None):
    """sigmove argv's plain run, made once for both timers: without libpc
    PC_TIMER is nothing to it (each timer's run is compared with it). Its
    burns a twentieth as long: its output and status, all that is
    compared, do not change with them."""
    key = (tuple(argv), tuple(sorted((env or {}).items())))
    if key not in _plain:
        e = dict(env or {}, SIGMOVE_SCALE="0.05")
        _plain[key] = host([sigmove()] + argv, env=e, profiled=False, timeout=TIMEOUT)
    return _plain[key]


def case(argv, timer, name, want_s, env=None):
    """argv plain and under libpc with timer: same output and status, and
    at least want_s seconds of function name in the profile."""
    e = {"PC_TIMER": timer}
    e.update(env or {})
    prof = host([sigmove()] + argv, env=e, timeout=TIMEOUT)
    plain = plain_run(argv, env)
    what = "%s (PC_TIMER=%s)" % (" ".join(argv), timer)
    plain_ok(plain, 0, what)
    same(prof, plain, what)
    got, total = seconds_in(prof, name)
    assert got >= want_s, "%s: %.2f s of %s in the profile (of %.2f s), want %.2f; %s" % (
        what, got, name, total, want_s, libpc_said(prof))
    return "%s %.2f s" % (timer, got)


def blocked_wait(way, sender):
    """SIGRTMAX blocked, sent with value 7 by a thread or a child process,
    waited for with way; then 0.25 s of work in after_move_work."""
    notes = [case([way, sender], t, "after_move_work", 0.12) for t in timers()]
    return "%s from a %s: %s after the move" % (way, sender, ", ".join(notes))


def test_sigwait_takes_a_blocked_sigrtmax_from_a_thread():
    return blocked_wait("sigwait", "thread")


def test_sigwaitinfo_takes_a_blocked_sigrtmax_and_its_value_from_a_process():
    return blocked_wait("sigwaitinfo", "process")


def test_sigtimedwait_takes_a_blocked_sigrtmax_before_its_timeout():
    return blocked_wait("sigtimedwait", "thread")


def test_sigsuspend_runs_the_handler_of_a_blocked_sigrtmax():
    return blocked_wait("sigsuspend", "process")


def test_ppoll_with_a_mask_runs_the_handler_of_a_blocked_sigrtmax():
    return blocked_wait("ppoll", "thread")


def test_pselect_with_a_mask_runs_the_handler_of_a_blocked_sigrtmax():
    return blocked_wait("pselect", "process")


def test_signalfd_reads_a_blocked_sigrtmax_and_its_value():
    return blocked_wait("signalfd", "thread")


def test_sigrtmax_handler_without_sa_restart_cuts_read_short():
    notes = [case(["eintr"], t, "after_move_work", 0.12) for t in timers()]
    return "read ended with EINTR as plain; " + ", ".join(notes)


def test_three_queued_sigrtmax_values_arrive_as_three():
    notes = [case(["queue3"], t, "after_move_work", 0.12) for t in timers()]
    return "values 101 102 103 as plain; " + ", ".join(notes)


def test_three_sigrtmax_values_sent_to_itself_under_a_full_mask_are_taken():
    """A full mask names no signal; the program then sends SIGRTMAX to
    itself, which makes it the program's."""
    notes = [case(["selfqueue"], t, "after_move_work", 0.12) for t in timers()]
    return "values 201 202 203 as plain; " + ", ".join(notes)


def test_every_wait_returns_promptly_ten_times():
    """The move races with the other thread's or process's signal: each
    way and sender, over and over (a short run: the output must match)."""
    n = 0
    for i in range(10):
        way = WAYS[i % len(WAYS)]
        sender = ("thread", "process")[i % 2]
        timer = timers()[i % len(timers())]
        prof, plain = both([sigmove(), way, sender],
                           env={"PC_TIMER": timer, "SIGMOVE_SCALE": "0.1"}, timeout=TIMEOUT)
        what = "%s %s (PC_TIMER=%s), run %d" % (way, sender, timer, i + 1)
        plain_ok(plain, 0, what)
        same(prof, plain, what)
        n += 1
    return "%d runs as plain" % n


def test_program_that_takes_sigrtmax_gets_sigrtmax_and_libpc_another():
    """The summary line names the signal libpc samples on at the end:
    another than 64 (SIGRTMAX) once the program took it."""
    prof, plain = both([sigmove(), "queue3"], timeout=TIMEOUT)
    plain_ok(plain, 0, "queue3")
    same(prof, plain, "queue3")
    m = re.search(r"; signal (\d+);", prof.stderr)
    assert m, "no summary line: %s" % libpc_said(prof)
    assert int(m.group(1)) != 64, "libpc still samples on signal 64: %s" % libpc_said(prof)
    return "libpc moved to signal %s" % m.group(1)


def test_a_longjmp_out_of_an_altstack_handler_leaves_the_thread_sampled():
    notes = [case(["longjmp"], t, "after_jump_work", 0.18) for t in timers()]
    return "0.3 s burned after 3 longjmps: " + ", ".join(notes)


def test_close_range_leaves_task_clock_threads_sampled():
    if "taskclock" not in timers():
        pctest.skip("perf_event_open of a task-clock event refused here")
    # two threads burn 0.2 s each after the main one closes every
    # descriptor above 2, libpc's events included
    return "after close_range(3, ~0): " + case(["closerange"], "taskclock",
                                                "after_close_work", 0.22)


def test_thread_that_fills_a_16k_stack_runs_as_plain():
    """A 16 KiB thread leaves about 1 KiB of its stack free: the kernel's
    frame for a sample would not fit there, and libpc gives the thread an
    alternate stack for its samples."""
    notes = [case(["smallstack"], t, "small_stack_work", 0.1, env={"SIGMOVE_DEPTH": "20"})
             for t in timers()]
    return "0.2 s burned near the end of the stack: " + ", ".join(notes)


def test_commands_started_by_shells_inherit_the_programs_mask():
    """Debian's dash starts a command from a vfork child that clears its
    mask with sigsetmask(0), which glibc makes past libpc's sigprocmask;
    bash forks. The command each starts (run without libpc, so that it
    reads what it was handed) shows the same blocked and ignored signals
    plain and under libpc, with each timer, a loop's CPU burned first so
    that the shell was sampled. SIGRTMAX blocked there once, under dash."""
    script = ("i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; "
              "env -u LD_PRELOAD grep -E '^Sig(Blk|Ign)' /proc/self/status")
    notes = []
    for shell in ("/bin/sh", "/bin/bash"):
        for t in timers():
            prof, plain = both([shell, "-c", script], env={"PC_TIMER": t}, timeout=TIMEOUT)
            what = "%s -c (PC_TIMER=%s)" % (shell, t)
            plain_ok(plain, 0, what)
            assert "SigBlk" in plain.stdout, plain.stdout
            same(prof, plain, what)
        notes.append("%s: %s" % (shell, " ".join(plain.stdout.split())))
    return "; ".join(notes)
