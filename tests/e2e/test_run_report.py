# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the whole run's report as pcprof run prints it: a
run of many processes fits a terminal, a background process is named (or
waited for with --wait), a rate the timer cannot give is said, a signal
death is recorded as one, an object's long name keeps the table's
columns, and a C++ run's libstdc++ file is read as an object's."""

import json
import os
import re
import signal
import subprocess
import tempfile

from pctest import BUILD, clean_env, default_signals, prog


def pcprof(*args, cwd=None, timeout=120, env=None):
    return subprocess.run([os.path.join(os.path.abspath(BUILD), "pcprof")] + list(args),
                          cwd=cwd, env=clean_env(env, profiled=False),
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=default_signals)


def test_run_report_of_150_processes_fits_a_terminal():
    """A shell that runs burn 150 times, each for a different share of a
    hundredth of a second of CPU: 152 processes (the shell, seq and the
    150). The report that pcprof run prints fits in 60 lines, its table
    sums the processes by program with the busiest, burn, first; with
    --processes there is a line for each, and JSON lists every one."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = pcprof("run", "-o", "run", "--", "sh", "-c",
               "for i in $(seq 150); do %s 0.00$((i %% 9)) >/dev/null; done"
               % prog("burn"), cwd=d, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) <= 60, p.stderr
    head = lines.index([l for l in lines if l.split()[:3] == ["CPU", "s", "share"]][0])
    assert lines[head].split()[-2:] == ["processes", "program"], lines[head]
    top = lines[head + 1].split()
    assert top[2:] == ["150", "burn"], lines[head + 1]
    assert re.search(r"^\(152 processes of \d programs: --processes lists each\)$",
                     p.stderr, re.M), p.stderr
    full = pcprof("report", "--processes", "--top", "3", os.path.join(d, "run"))
    assert full.returncode == 0, full.stderr
    rows = [l for l in full.stdout.splitlines() if re.match(r"\s+[\d.]+\s+[\d.]+%\s+\d+\s+\d+\s+\S", l)]
    assert len(rows) == 152 and sum(r.endswith(" burn") for r in rows) == 150, full.stdout
    j = json.loads(pcprof("report", "--format", "json", os.path.join(d, "run")).stdout)
    assert len(j["processes"]) == 152
    by = {}
    for x in j["processes"]:
        by[x["program"]] = by.get(x["program"], 0) + x["cpu_seconds"]
    assert max(by, key=by.get) == "burn", by
    return "%d lines for 152 processes; %s" % (len(lines), lines[head + 1].strip())


def test_cxx_run_that_sampled_libstdcxx_has_no_note():
    """gmon.out+libstdc++.so.6 is an object's file of gmon.out, though its
    name holds a '+' after the one that joins them: the report reads it
    with the profile, and says nothing of a profile left out (each C++
    run said "note: left out 1 profile recorded without PC_SCOPE=all")."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = pcprof("run", "-o", "run", "--top", "0", "--", prog("cxx"), "0.4", "lib", cwd=d)
    assert p.returncode == 0, p.stderr
    assert os.path.exists(os.path.join(d, "run", "gmon.out+libstdc++.so.6")), os.listdir(
        os.path.join(d, "run"))
    assert "left out" not in p.stderr, p.stderr
    assert re.search(r"^\s+[\d.]+\s.*\slibstdc\+\+\.so\.6\s", p.stderr, re.M), p.stderr
    q = pcprof("report", os.path.join(d, "run"))
    assert q.returncode == 0 and "left out" not in q.stderr, q.stderr
    return "no note; libstdc++.so.6 in the report"


def test_run_names_a_background_process_and_waits_for_it_with_wait():
    """sh -c 'burn & ...': the shell ends while burn runs. pcprof run's
    report names it as still running, with its pid and program, and its
    live file is left alone; once it has ended (SIGTERM, its default
    action), pcprof report has it, killed by SIGTERM. With --wait,
    pcprof run waits for it and its report has it."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    # the shell waits until burn runs under libpc (it has printed its pid)
    p = pcprof("run", "-o", "run", "--", "sh", "-c",
               "%s 60 > pid 2>/dev/null & while ! [ -s pid ]; do sleep 0.01; done; echo started"
               % prog("burn"), cwd=d)
    pid = int(open(os.path.join(d, "pid")).read().split()[1])
    try:
        assert p.returncode == 0, p.stderr
        m = re.search(r"^pcprof: 1 process still running \(pid (\d+), burn\); "
                      r"`pcprof report (\S+)` when it ends$", p.stderr, re.M)
        assert m and int(m.group(1)) == pid and m.group(2) == "run", p.stderr
        assert re.search(r"^Run in run: \d+ process", p.stderr, re.M), p.stderr
        assert not re.search(r"\sburn$", p.stderr, re.M), p.stderr
        assert os.path.exists(os.path.join(d, "run", ".pcprof.%d.live" % pid))
    finally:
        os.kill(pid, signal.SIGTERM)
    while os.path.exists("/proc/%d" % pid) and \
            open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z":
        os.sched_yield()
    q = pcprof("report", os.path.join(d, "run"))
    assert q.returncode == 0, q.stderr
    assert re.search(r"^\s+[\d.]+\s+[\d.]+%%\s+%d\s+1\s+burn \(killed by SIGTERM\)$" % pid,
                     q.stdout, re.M), q.stdout + q.stderr
    assert "still running" not in q.stderr, q.stderr
    w = pcprof("run", "--wait", "-o", "waited", "--", "sh", "-c",
               "%s 0.3 > /dev/null 2>&1 & echo started" % prog("burn"), cwd=d)
    assert w.returncode == 0, w.stderr
    assert "still running" not in w.stderr, w.stderr
    m = re.search(r"^\s+([\d.]+)\s+[\d.]+%\s+\d+\s+1\s+burn$", w.stderr, re.M)
    assert m and float(m.group(1)) > 0.2, w.stderr
    return "named pid %d; with --wait burn has %s s" % (pid, m.group(1))


def test_run_says_what_each_signal_stands_for_when_the_timer_gives_fewer():
    """--hz 20000 with POSIX timers, which the kernel checks at its tick:
    each signal carries its overrun, and stands for many samples. The
    manifest records the signals and the samples, and the report says so
    once, with the rate the timer gave; at --hz 100 each signal is about
    one sample and nothing is said."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    env = {"PC_TIMER": "posix"}
    p = pcprof("run", "--hz", "20000", "-o", "fast", "--", prog("burn"), "0.5", cwd=d, env=env)
    assert p.returncode == 0, p.stderr
    rec = [l.split() for l in open(os.path.join(d, "fast", "gmon.out.objects"))
           if l.startswith("signals ")]
    assert len(rec) == 1, "no signals record: the timer gave every sample?"
    signals, samples = int(rec[0][1]), int(rec[0][2])
    notes = re.findall(r"^note: rate 20000 Hz asked, (\d+) signals/s given by the timer "
                       r"\(POSIX timers are held to the kernel tick\): each signal stands "
                       r"for ~(\d+) samples$", p.stderr, re.M)
    assert len(notes) == 1, p.stderr
    assert int(notes[0][1]) == round(samples / signals), (notes, signals, samples)
    assert abs(int(notes[0][0]) - 20000 * signals / samples) <= 1, (notes, signals, samples)
    q = pcprof("run", "--hz", "100", "-o", "slow", "--", prog("burn"), "0.3", cwd=d, env=env)
    assert q.returncode == 0 and "note: rate" not in q.stderr, q.stderr
    assert not [l for l in open(os.path.join(d, "slow", "gmon.out.objects"))
                if l.startswith("signals ")]
    return "%d signals for %d samples: %s signals/s" % (signals, samples, notes[0][0])


def test_run_records_a_death_by_sigint_as_one():
    """A program that dies of SIGINT (its default action): libpc writes
    its profile on the way, and the manifest says "ended signal 2", not
    "ended exit"; the report says it was killed by SIGINT, and pcprof run
    dies of SIGINT as the program did."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    p = pcprof("run", "-o", "run", "--", prog("endings"), "INT", cwd=d)
    assert p.returncode == -signal.SIGINT, (p.returncode, p.stderr)
    ended = [l.strip() for l in open(os.path.join(d, "run", "gmon.out.objects"))
             if l.startswith("ended ")]
    assert ended == ["ended signal %d" % signal.SIGINT], ended
    assert re.search(r"\s\d+\s+1\s+endings \(killed by SIGINT\)$", p.stderr, re.M), p.stderr
    j = json.loads(pcprof("report", "--format", "json", os.path.join(d, "run")).stdout)
    assert j["processes"][0]["signal"] == signal.SIGINT
    return "ended signal 2; killed by SIGINT"


def test_run_report_columns_fit_a_long_object_name():
    """A plugin whose file name is 33 characters: the object column is as
    wide as it, and every function's name starts in the same column."""
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    long = os.path.join(d, "libplugspin-with-a-long-name-1.so")
    with open(prog("plugspin.so"), "rb") as f, open(long, "wb") as g:
        g.write(f.read())
    p = pcprof("run", "-o", "run", "--", prog("plugrun"), long, "0.3", cwd=d)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    head = [l for l in lines if l.split()[-2:] == ["object", "function"]]
    assert len(head) == 1, p.stderr
    at = head[0].index("function")
    rows = [l for l in lines[lines.index(head[0]) + 1:] if re.match(r"\s+[\d.]+\s+[\d.]+%", l)
            and "more function" not in l]
    assert any(os.path.basename(long) in r for r in rows), p.stderr
    for r in rows:
        assert r[at - 1] == " " and r[at] != " ", (at, r)
    return "function column at %d" % at
