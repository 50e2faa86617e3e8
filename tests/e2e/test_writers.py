# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of what pcprof writes, and of pcprof run standing for
its command: every JSON output is valid UTF-8 whatever bytes the names
hold (tests/progs/writers_names.c), folded stacks keep a name with a ';'
one frame, a file pcprof writes under RLIMIT_FSIZE fails in one line and
leaves nothing behind, and every signal that can be caught, sent to
pcprof run, reaches the command (tests/progs/writers_sigs.c), while
SIGKILL of pcprof run takes the command with it."""

import codecs
import ctypes
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time

from pctest import BUILD, clean_env, default_signals, prog

DEADLINE = 60	# seconds for anything a busy machine may be slow to do

# writers_names.c's names, as bytes
SEMI = b"semi;colon\xff\xc0\xaf\xed\xa0\x80work"
CUT = b"cut\x7f\xf4\x90\x80\x80\xe2\x82work"
THREAD = b"th\xff;\"\\x"
# the program's file name: a byte of no UTF-8, a ';', valid UTF-8, ESC
EXE = b"prog\xff;\xc3\xa9\x1bx"


def _latin1(err):
    return "".join(chr(b) for b in err.object[err.start:err.end]), err.end


codecs.register_error("pcprof-latin1", _latin1)


def reading(b):
    """What a JSON reader must get for the bytes b: valid UTF-8 as it is,
    every other byte its Latin-1 reading (pcprof(1), JSON)."""
    return b.decode("utf-8", "pcprof-latin1")


def folded_frame(b):
    """b as a frame of folded stacks: text's escapes (\\xHH for a byte of
    no UTF-8 or a control, the backslash doubled), and ';' as \\x3b."""
    out = []
    for ch in reading(b):
        c = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == ";" or c < 0x20 or c == 0x7f or 0x80 <= c <= 0xff:
            # a Latin-1 reading above 0x9f is a byte of no UTF-8 here
            out.append("\\x%02x" % c)
        else:
            out.append(ch)
    return "".join(out)


def pcprof_path():
    return os.path.join(os.path.abspath(BUILD), "pcprof")


def pcprof(*args, cwd, preexec_fn=default_signals):
    """pcprof ARGS (str or bytes), its output as bytes."""
    return subprocess.run([pcprof_path()] + list(args), cwd=cwd, capture_output=True,
                          timeout=DEADLINE, env=clean_env(profiled=False),
                          preexec_fn=preexec_fn)


def strings(doc):
    """Every string in a JSON document, keys too."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v)


def recorded():
    """writers_names run by pcprof run --stacks from a file whose name is
    not UTF-8: the directory, the executable (bytes) and the profile."""
    d = tempfile.mkdtemp(prefix="pc-e2e-writers-")
    exe = os.path.join(d.encode(), EXE)
    shutil.copy(prog("writers_names"), exe)
    p = pcprof("run", "--stacks", "-o", "run", "--", exe, "0.3", cwd=d)
    assert p.returncode == 0, p.stderr
    return d, exe, os.path.join(d, "run", "gmon.out")


def test_every_json_output_is_valid_utf8_whatever_the_names():
    """The JSON of report (a run directory, a profile, --by-thread,
    --callgraph, --lines), of diff, and the speedscope file of a run whose
    function, thread and program names hold bytes that are not UTF-8, a
    ';', a quote, a backslash and controls: each decodes as strict UTF-8
    and parses, and holds the names as their UTF-8 or Latin-1 reading."""
    d, exe, gmon = recorded()
    run = os.path.dirname(gmon)
    names = {reading(SEMI), reading(CUT)}
    outs = {}
    for key, args, want in (
            ("run", ("report", "--format", "json", run), names | {reading(exe)}),
            ("profile", ("report", "--format", "json", exe, gmon), names),
            ("threads", ("report", "--by-thread", "--format", "json", exe, gmon),
             {reading(THREAD)}),
            ("callgraph", ("report", "--callgraph", "--format", "json", exe, gmon), names),
            ("lines", ("report", "--lines", "--format", "json", exe, gmon), set()),
            ("diff", ("diff", "--format", "json", "--base", exe, gmon, "--new", exe, gmon),
             names | {reading(exe)}),
            ("speedscope", ("report", "--format", "speedscope", "-o", "s.json", run),
             names | {reading(THREAD)}),
            ("speedscope-exe", ("report", "--format", "speedscope", "-o", "t.json", exe,
                                gmon), names)):
        p = pcprof(*args, cwd=d)
        assert p.returncode == 0, (key, p.returncode, p.stderr)
        raw = p.stdout
        if "-o" in args:
            with open(os.path.join(d, args[args.index("-o") + 1]), "rb") as f:
                raw = f.read()
        text = raw.decode("utf-8")	# strict: raises on any byte of no UTF-8
        doc = json.loads(text)
        seen = set(strings(doc))
        # a name may be part of a longer string (a thread's profile name)
        missing = [w for w in want if not any(w in s for s in seen)]
        assert not missing, (key, missing, sorted(seen)[:50])
        outs[key] = len(raw)
    return "%d JSON outputs valid UTF-8: %s" % (len(outs), ", ".join(sorted(outs)))


def test_folded_stacks_keep_a_name_with_a_semicolon_one_frame():
    """report --format folded writes the name with a ';' as one frame,
    the ';' as \\x3b and its other bytes as text escapes them, so that
    FlameGraph, inferno and speedscope, which split at every ';', see one
    frame; every line is text with one count. The flame graph built from
    the same stacks shows the name whole, as one frame."""
    d, exe, gmon = recorded()
    p = pcprof("report", "--format", "folded", exe, gmon, cwd=d)
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode("utf-8")
    frames = set()
    for line in text.splitlines():
        m = re.fullmatch(r"(\S.*) (\d+)", line)
        assert m, line
        frames.update(m.group(1).split(";"))
    semi, cut = folded_frame(SEMI), folded_frame(CUT)
    assert semi in frames and cut in frames, (semi, cut, sorted(frames))
    assert not any(f.startswith("colon") for f in frames), sorted(frames)
    svg = os.path.join(d, "f.svg")
    p = pcprof("flame", "-o", svg, exe, gmon, cwd=d)
    assert p.returncode == 0, p.stderr
    titles = re.findall(r"<title>(.*?) \(", open(svg, encoding="utf-8").read())
    assert any(t.startswith("semi;colon") for t in titles), titles
    assert not any(t.startswith("colon") for t in titles), titles
    return "frame %s" % semi


def one_block():
    """preexec_fn: RLIMIT_FSIZE of one block (ulimit -f 1)."""
    default_signals()
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def test_files_over_the_size_limit_fail_in_one_line_and_leave_nothing():
    """Under ulimit -f 1, pcprof run --report FILE, report -o FILE and
    flame -o FILE each say in one line that the file
    is too large and leave no file, temporary or partial; pcprof run
    exits with the program's own status (7), the others with 2."""
    d = tempfile.mkdtemp(prefix="pc-e2e-writers-")
    p = pcprof("run", "-o", "run", "--stacks", "--report", "rep.json", "--format", "json",
               "--top", "0", "--", "sh", "-c", '"$0" 0.2 >/dev/null; exit 7', prog("burn"),
               cwd=d, preexec_fn=one_block)
    # libpc's own writes are under the limit too: a profile of one more
    # object (burn's samples in the vDSO, which a busy machine gives it)
    # may not fit, and libpc says so in its own line
    lines = [l for l in p.stderr.decode().splitlines()
             if not (l.startswith("libpc: cannot write ") and "write failed" in l)]
    assert p.returncode == 7, (p.returncode, p.stderr)
    assert len(lines) == 1 and "'rep.json': File too large" in lines[0], lines
    cases = 1
    for args, name in ((("report", "--format", "json", "--top", "0", "-o", "r.json", "run"),
                        "r.json"),
                       (("flame", "--process", "burn", "-o", "f.svg", "run"), "f.svg")):
        p = pcprof(*args, cwd=d, preexec_fn=one_block)
        lines = p.stderr.decode().splitlines()
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert len(lines) == 1 and "'%s': File too large" % name in lines[0], (args, lines)
        cases += 1
    left = sorted(f for f in os.listdir(d) if f != "run")
    assert not left, left
    # the same, without the limit: the files are written (the limit was why)
    p = pcprof("flame", "--process", "burn", "-o", "f.svg", "run", cwd=d)
    assert p.returncode == 0 and os.path.getsize(os.path.join(d, "f.svg")) > 1024, p.stderr
    return "%d writes over the limit: one line each, no file left, run's status 7" % cases


class Out:
    """A process's standard output (a pipe), read line by line, each line
    awaited with a deadline."""

    def __init__(self, p):
        self.p, self.buf = p, b""

    def line(self):
        deadline = time.monotonic() + DEADLINE
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [],
                                    max(0, deadline - time.monotonic()))
            b = os.read(self.p.stdout.fileno(), 4096) if r else b""
            assert b, "no line; so far %r" % self.buf
            self.buf += b
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()


def start_waiter(d, *sigs):
    """pcprof run -- writers_sigs SIGS..., in a session of its own (the
    command in a process group of its own), and the command's pid once it
    catches them. libpc samples with SIGRTMAX, which the tests do not send."""
    p = subprocess.Popen([pcprof_path(), "run", "--no-report", "--signal", "SIGRTMAX",
                          "-o", "run", "--", prog("writers_sigs")] + [str(int(s)) for s in sigs],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=clean_env(profiled=False), preexec_fn=default_signals,
                         start_new_session=True)
    out = Out(p)
    m = re.fullmatch(r"pid (\d+)", out.line())
    return p, out, int(m.group(1))


def state(pid):
    """Process pid's state letter (R, S, T, Z...), or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def wait_state(pid, states, seconds=DEADLINE):
    deadline = time.monotonic() + seconds
    while state(pid) not in states:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def leave_nothing(p, pids):
    for pid in pids:
        if state(pid) not in (None, "Z"):
            os.kill(pid, signal.SIGKILL)
    if p.poll() is None:
        p.kill()
    p.wait()


def sigqueue(pid, sig, value):
    libc = ctypes.CDLL(None, use_errno=True)

    class Sigval(ctypes.Union):
        _fields_ = [("sival_int", ctypes.c_int), ("sival_ptr", ctypes.c_void_p)]

    if libc.sigqueue(pid, sig, Sigval(sival_int=value)):
        raise OSError(ctypes.get_errno(), "sigqueue")


def test_run_passes_every_signal_on_to_the_command():
    """Each of SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGQUIT, SIGWINCH and a
    real-time signal (queued, with a value) sent to pcprof run reaches the
    command, which catches it and exits with 10 + its number, and pcprof
    run exits with that status. SIGTERM, SIGHUP and SIGINT reach it too,
    and pcprof then dies of the signal, as pcprof(1) says. Twice each."""
    d = tempfile.mkdtemp(prefix="pc-e2e-writers-")
    rt = signal.SIGRTMIN + 4
    seen = []
    for _ in range(2):
        for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGPIPE,
                    signal.SIGQUIT, signal.SIGWINCH, rt, signal.SIGTERM, signal.SIGHUP,
                    signal.SIGINT):
            shutil.rmtree(os.path.join(d, "run"), ignore_errors=True)
            p, out, pid = start_waiter(d, sig)
            try:
                if sig == rt:
                    sigqueue(p.pid, sig, 4242)
                else:
                    os.kill(p.pid, sig)
                got = out.line()
                p.wait(timeout=DEADLINE)
            finally:
                leave_nothing(p, [pid])
            code, value = (-1, 4242) if sig == rt else (0, 0)
            assert got == "got %d code %d value %d" % (sig, code, value), (sig, got)
            want = -sig if sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT) else 10 + sig
            assert p.returncode == want, (sig, p.returncode, p.stderr.read())
            seen.append(signal.Signals(sig).name if sig != rt else "SIGRTMIN+4")
    return "passed on: %s" % " ".join(seen[:len(seen) // 2])


def test_run_stopped_and_continued_stops_and_continues_the_command():
    """SIGTSTP to pcprof run stops the command and pcprof; SIGCONT goes on
    with both. SIGSTOP, which cannot be caught, stops pcprof alone; the
    command runs on. The command then ends at SIGUSR1, with its status."""
    d = tempfile.mkdtemp(prefix="pc-e2e-writers-")
    p, out, pid = start_waiter(d, signal.SIGUSR1)
    try:
        os.kill(p.pid, signal.SIGTSTP)
        assert wait_state(pid, ("T",)) and wait_state(p.pid, ("T",)), \
            (state(pid), state(p.pid))
        os.kill(p.pid, signal.SIGCONT)
        assert wait_state(pid, ("S", "R")) and wait_state(p.pid, ("S", "R")), \
            (state(pid), state(p.pid))
        os.kill(p.pid, signal.SIGSTOP)
        assert wait_state(p.pid, ("T",)), state(p.pid)
        time.sleep(0.1)
        assert state(pid) in ("S", "R"), state(pid)
        os.kill(p.pid, signal.SIGCONT)
        assert wait_state(p.pid, ("S", "R")), state(p.pid)
        os.kill(p.pid, signal.SIGUSR1)
        got = out.line()
        p.wait(timeout=DEADLINE)
    finally:
        leave_nothing(p, [pid])
    assert got == "got %d code 0 value 0" % signal.SIGUSR1, got
    assert p.returncode == 10 + signal.SIGUSR1, (p.returncode, p.stderr.read())
    return "TSTP and CONT passed on; STOP stops pcprof alone"


def test_run_killed_takes_the_command_with_it():
    """SIGKILL of pcprof run, which cannot be caught or passed on: the
    command is gone within a second (its parent-death signal), 10 times."""
    d = tempfile.mkdtemp(prefix="pc-e2e-writers-")
    worst = 0.0
    for _ in range(10):
        shutil.rmtree(os.path.join(d, "run"), ignore_errors=True)
        p, _, pid = start_waiter(d, signal.SIGUSR1)
        try:
            t0 = time.monotonic()
            os.kill(p.pid, signal.SIGKILL)
            gone = wait_state(pid, (None, "Z"), seconds=1.0)
            worst = max(worst, time.monotonic() - t0)
        finally:
            leave_nothing(p, [pid])
        assert gone, "the command outlived pcprof run's SIGKILL by a second"
    return "the command gone within %.3f s, 10 of 10" % worst
