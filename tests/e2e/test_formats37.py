# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of the live file's versioned head (gmon/live.h): libpc
writes "pcprof-live 2", its pid, start and generation; a reader that meets a live file
of another version says so in one line naming the file and both versions,
exits 2 and leaves the file as it was; the same file at this version is
finished into the profile the killed process would have written."""

import json
import os
import signal
import struct
import subprocess
import tempfile
import time

import pctest
from pctest import clean_env, prog


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def live_files(d):
    return sorted(f for f in os.listdir(d) if f.startswith(".pcprof.") and f.endswith(".live"))


def thread_cpu(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9


def killed(d, seconds):
    """three-pie under libpc.so in d, SIGKILLed once it has used seconds of
    CPU: its pid and CPU seconds at the kill."""
    before = time.time()
    p = subprocess.Popen([prog("three-pie"), "30"], cwd=d, env=clean_env({"PC_SCOPE": "all"}),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        while thread_cpu(p.pid) < seconds:
            assert p.poll() is None, "three-pie ended early: %s" % p.returncode
            assert time.time() - before < 60, "three-pie did not get the CPU"
            time.sleep(0.01)
        at = thread_cpu(p.pid)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert p.returncode == -signal.SIGKILL, p.returncode
    return p.pid, at, before


def report(d):
    return subprocess.run([pcprof(), "report", "--format", "json", d], capture_output=True,
                          text=True, timeout=60, env=clean_env(profiled=False))


def test_live_file_of_another_version_is_one_line_and_status_2():
    d = tempfile.mkdtemp(prefix="pc-formats37-")
    pid, at, before = killed(d, 0.3)
    live = live_files(d)
    assert live == [".pcprof.%d.live" % pid], os.listdir(d)
    path = os.path.join(d, live[0])
    with open(path, "rb") as f:
        data = f.read()
    # the head: magic and version, header size, state 1 (running), pid, start
    magic, _, state, got_pid, start_s = struct.unpack_from("<16sIIiI", data)
    assert magic == b"pcprof-live 2\n\0\0", magic
    assert (state, got_pid) == (1, pid), (state, got_pid)
    assert int(before) <= start_s <= time.time(), (start_s, before)
    said = []
    for version in (b"1", b"9"):
        with open(path, "r+b") as f:
            f.seek(12)
            f.write(version)
        r = report(d)
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
        assert lines[0] == ("pcprof: '%s': a live file of version %s; this pcprof reads "
                            "version 2 (finish it with the pcprof of the libpc that wrote "
                            "it)" % (path, version.decode())), lines
        assert r.stdout == "", r.stdout
        assert os.listdir(d) == live, os.listdir(d)
        said.append(lines[0].split(": ", 2)[2].split(";")[0])
    with open(path, "r+b") as f:
        f.seek(12)
        f.write(b"2")
    r = report(d)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["cpu_seconds"]
    assert got >= 0.9 * at and not live_files(d), (got, at, os.listdir(d))
    return "%s; version 2: %.3f s of %.3f s" % ("; ".join(said), got, at)


def test_pcprof_run_with_a_live_file_of_another_version_keeps_the_programs_status():
    """pcprof run leaves such a file alone, its report says it in one line,
    and it exits with its program's status (3), not 2."""
    top = tempfile.mkdtemp(prefix="pc-formats37-")
    d = os.path.join(top, "run")
    other = os.path.join(top, "other.live")
    with open(other, "wb") as f:
        f.write(struct.pack("<16sIIiI", b"pcprof-live 3\n", 4096, 1, 999999, 0) +
                bytes(4096))
    planted = os.path.join(d, ".pcprof.999999.live")
    r = subprocess.run([pcprof(), "run", "-o", d, "--", "sh", "-c",
                        'cp "$1" "$2" && %s 0.2 >/dev/null; exit 3' % prog("three-pie"),
                        "sh", other, planted],
                       capture_output=True, text=True, timeout=60,
                       env=clean_env(profiled=False), start_new_session=True)
    assert r.returncode == 3, (r.returncode, r.stderr)
    said = [l for l in r.stderr.splitlines() if ".live" in l]
    assert said == ["pcprof: '%s': a live file of version 3; this pcprof reads version 2 "
                    "(finish it with the pcprof of the libpc that wrote it)" % planted], r.stderr
    with open(planted, "rb") as f, open(other, "rb") as g:
        assert f.read() == g.read()
    return said[0].split(": ", 2)[2].split(";")[0] + "; status 3"
