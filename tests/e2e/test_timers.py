"""End-to-end tests of the two timer backends: POSIX CPU-time timers (the
default, PC_TIMER=posix), which fire only on the kernel tick, and the
task-clock perf event (PC_TIMER=taskclock, or auto where the kernel allows
it), which samples at the rate asked for."""

import os
import subprocess

from pctest import check_shares, clean_env, gprof_flat, prog, run, tolerance

THREE = ["work_alpha", "work_beta", "work_gamma"]


def test_taskclock_is_not_limited_to_the_kernel_tick():
    exe = prog("three-pie")
    r = run([exe, "2"], env={"PC_HZ": "4000", "PC_TIMER": "taskclock"})
    s = r.summary()
    assert "timer taskclock" in r.stderr, r.stderr
    per_cpu_second = s["signals"] / r.truth()["cpu"]
    assert per_cpu_second >= 3000, s
    funcs, total, _ = gprof_flat(exe, r.path())
    assert abs(total - r.truth()["cpu"]) <= 0.05 * r.truth()["cpu"], (total, r.truth())
    worst = check_shares(r.truth(), funcs, s["signals"], THREE)
    return "%.0f signals per CPU second, worst share error %.1f pts" % \
        (per_cpu_second, 100 * worst)


def test_posix_timers_keep_seconds_true_at_4000_hz():
    exe = prog("three-pie")
    r = run([exe, "2"], env={"PC_HZ": "4000", "PC_TIMER": "posix"})
    s = r.summary()
    assert "timer posix" in r.stderr, r.stderr
    funcs, total, _ = gprof_flat(exe, r.path())
    cpu = r.truth()["cpu"]
    assert abs(total - cpu) <= 0.05 * cpu, (total, cpu)
    check_shares(r.truth(), funcs, s["signals"], THREE)
    return "%.0f signals/s (tick-bound), gprof %.3f s vs CPU %.3f s" % \
        (s["signal_rate"], total, cpu)


def test_four_threads_with_posix_timers():
    exe = prog("threads")
    r = run([exe, "2"], env={"PC_TIMER": "posix"})
    s = r.summary()
    names = ["thread_one", "thread_two", "thread_three", "thread_four"]
    funcs, total, _ = gprof_flat(exe, r.path())
    worst = check_shares(r.truth(), funcs, s["signals"], names)
    return "worst share error %.1f pts over %d signals" % (100 * worst, s["signals"])


def test_refused_task_clock_falls_back_to_posix_timers():
    exe = prog("threads")
    r = run([exe, "2"], env={"PC_TIMER": "auto", "PC_TEST_REFUSE_PERF": "1"})
    s = r.summary()
    assert "timer posix (task-clock refused" in r.stderr, r.stderr
    assert s["threads"] == 5, s
    names = ["thread_one", "thread_two", "thread_three", "thread_four"]
    funcs, total, _ = gprof_flat(exe, r.path())
    check_shares(r.truth(), funcs, s["signals"], names)


def test_blocking_calls_never_see_eintr_with_either_timer():
    notes = []
    for timer in ("taskclock", "posix"):
        r = run([prog("syscalls"), "2"], env={"PC_TIMER": timer})
        assert r.status == 0, (timer, r.stdout, r.stderr)
        assert "timer " + timer in r.stderr
        notes.append("%s: %s" % (timer, r.stdout.strip()))
    return "; ".join(notes)


def share_errors(truth, funcs, names):
    """Each named function's measured share minus its true share."""
    tt = sum(truth[k] for k in names)
    tm = sum(funcs.get(k, 0.0) for k in names)
    return {k: funcs.get(k, 0.0) / tm - truth[k] / tt for k in names}


def timer_run(argv, exe, timer, hz):
    """Run argv (exe, or exe under taskset) with the given timer and rate:
    the run, its summary, gprof's functions and total, and the worst share
    error of THREE against the program's truth."""
    r = run(argv, env={"PC_TIMER": timer, "PC_HZ": hz})
    assert r.status == 0, r.stderr
    s = r.summary()
    assert "timer " + timer in r.stderr, r.stderr
    funcs, total, _ = gprof_flat(exe, r.path())
    worst = max(abs(e) for e in share_errors(r.truth(), funcs, THREE).values())
    return r, s, funcs, total, worst


def test_periodic_program_and_the_two_timers():
    """Aliasing, documented. periodic (three.c built -DPERIODIC) repeats exactly the same cycle of
    about 1 ms (5:3:2 units), the one test program with a fixed period.
    POSIX timers sample on the kernel tick, a rigid 4 ms grid, and a grid
    that stays near a whole number of cycles keeps landing on the same
    phases: the shares can be off by more than sampling error, by how much
    depending on how the program happens to be scheduled, so that error is
    recorded here and not asserted. The task-clock timer samples every
    1/PC_HZ of the thread's own CPU time; on this program it must be within
    the tolerance of its signal count, as on the varied programs."""
    exe = prog("periodic")
    notes = []
    for timer, hz in (("taskclock", "4000"), ("posix", "1000")):
        r, s, funcs, _, worst = timer_run([exe, "1.5"], exe, timer, hz)
        if timer == "taskclock":
            check_shares(r.truth(), funcs, s["signals"], THREE)
        notes.append("%s worst %.1f pts over %d signals (tolerance %.1f)" % (
            timer, 100 * worst, s["signals"],
            100 * tolerance(0.2, s["signals"])))
    return "; ".join(notes)


def test_clock_reads_on_a_shared_cpu_and_the_two_timers():
    """Preemption at system calls, documented. three-percall reads the
    thread CPU clock around every call (0.5 to 1.3 ms each), and here it
    shares one CPU with a busy process (both pinned with taskset). A CPU
    clock read brings the task's runtime up to date, and once its slice is
    spent the scheduler preempts it right there; it resumes at the other
    task's tick, so a tick-driven POSIX timer's next sample lands one tick
    of CPU after a call boundary, not at a random point, and the shares are
    off by more than sampling error: recorded here, not asserted. The
    task-clock timer counts the thread's own CPU time and must stay within
    the tolerance of its signal count. three-pie, which times blocks of 16
    calls (truth.h), must be within tolerance with POSIX timers too: that
    is what keeps the other share tests true on a busy machine."""
    one = str(max(os.sched_getaffinity(0)))
    busy = subprocess.Popen(["taskset", "-c", one, prog("three-pie"), "600"],
                            stdout=subprocess.DEVNULL, env=clean_env(profiled=False))
    notes = []
    try:
        for name, timer, hz, assert_it in (
                ("three-percall", "taskclock", "1000", True),
                ("three-percall", "posix", "1000", False),
                ("three-pie", "posix", "1000", True)):
            exe = prog(name)
            r, s, funcs, total, worst = timer_run(
                ["taskset", "-c", one, exe, "1.5"], exe, timer, hz)
            cpu = r.truth()["cpu"]
            if assert_it:
                check_shares(r.truth(), funcs, s["signals"], THREE)
                assert abs(total - cpu) <= 0.05 * cpu, \
                    "%s %s: gprof %.3f s, CPU %.3f s" % (name, timer, total, cpu)
            notes.append("%s %s worst %.1f pts over %d signals (tolerance %.1f), "
                         "gprof %.2f of %.2f CPU s" % (
                             name, timer, 100 * worst, s["signals"],
                             100 * tolerance(0.2, s["signals"]), total, cpu))
    finally:
        busy.kill()
        busy.wait()
    return "; ".join(notes)
