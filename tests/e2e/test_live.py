# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end tests of libpc's live file (DIR/.pcprof.PID.live), where the
counters live from the start so that a process that ends without writing
its profile leaves it for pcprof to finish: pages the kernel wrote back
and dropped still count, a file-size limit never kills the program, a
pcprof that runs with libpc preloaded finishes files in a process of its
own, and a damaged or foreign live file is one line, never a crash."""

import json
import os
import resource
import signal
import subprocess
import tempfile
import time

import pctest
from pctest import clean_env, gprof_flat, prog, read_gmon

THREE = ["work_alpha", "work_beta", "work_gamma"]


def pcprof():
    return os.path.abspath(os.path.join(pctest.BUILD, "pcprof"))


def live_files(d):
    return sorted(f for f in os.listdir(d) if f.startswith(".pcprof.") and f.endswith(".live"))


def thread_cpu(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9


def killed_at(d, seconds, env=None):
    """three-pie under libpc.so in d, SIGKILLed once it has used seconds of
    CPU; its CPU seconds at the kill."""
    p = subprocess.Popen([prog("three-pie"), "30"], cwd=d, env=clean_env(env),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.time()
        while thread_cpu(p.pid) < seconds:
            assert p.poll() is None, "three-pie ended early: %s" % p.returncode
            assert time.time() - t0 < 120, "three-pie did not get the CPU"
            time.sleep(0.01)
        at = thread_cpu(p.pid)
        p.kill()
        p.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == -signal.SIGKILL, p.returncode
    return at


def report(d, *extra, env=None):
    return subprocess.run([pcprof(), "report", "--format", "json"] + list(extra) + [d],
                          capture_output=True, text=True, timeout=120,
                          env=clean_env(env, profiled=False))


def test_written_back_and_dropped_pages_still_count():
    """The writer skips the pages of counters no sample touched. For the
    live file that is the file system's word (SEEK_DATA), not mincore's:
    pages written back and dropped from the page cache hold samples."""
    d = tempfile.mkdtemp(prefix="pc-live-")
    at = killed_at(d, 1.5, {"PC_SCOPE": "all"})
    live = live_files(d)
    assert len(live) == 1, os.listdir(d)
    path = os.path.join(d, live[0])
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    r = report(d)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    got = j["cpu_seconds"]
    assert got >= 0.95 * at, "%.3f s finished of %.3f s at the kill: %s" % (got, at, r.stderr)
    assert j["processes"][0].get("killed") is True, j["processes"]
    funcs, total, _ = gprof_flat(prog("three-pie"), os.path.join(d, "gmon.out"))
    assert all(f in funcs for f in THREE), funcs
    return "%.3f s of %.3f s, with the live file's pages dropped from the cache" % (got, at)


def test_a_file_size_limit_never_kills_the_program():
    """Under ulimit -f smaller than the live file, libpc makes none (the
    kernel would send SIGXFSZ) and counts in memory: the program ends as
    plain, with its profile."""
    d = tempfile.mkdtemp(prefix="pc-live-")

    def limit():
        pctest.default_signals()
        resource.setrlimit(resource.RLIMIT_FSIZE, (512 * 1024, 512 * 1024))
    p = subprocess.run([prog("three-pie"), "0.5"], cwd=d, env=clean_env({"PC_VERBOSE": "1"}),
                       capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert os.listdir(d) == ["gmon.out"], os.listdir(d)
    funcs, total, _ = gprof_flat(prog("three-pie"), os.path.join(d, "gmon.out"))
    assert total >= 0.3, (total, p.stderr)
    return "%.2f s in gmon.out, no live file" % total


def test_pcprof_with_libpc_preloaded_finishes_a_killed_run():
    """A CI job that exports LD_PRELOAD runs pcprof under libpc too: the
    live file is finished by a process of pcprof's own, without it."""
    d = tempfile.mkdtemp(prefix="pc-live-")
    at = killed_at(d, 1.0, {"PC_SCOPE": "all"})
    r = report(d, env={"LD_PRELOAD": pctest.lib(), "PC_OUT": os.path.join(d, "x", "gmon.out")})
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["cpu_seconds"]
    assert got >= 0.95 * at, (got, at, r.stderr)
    assert not live_files(d), os.listdir(d)
    return "%.3f s of %.3f s" % (got, at)


def test_damaged_and_foreign_live_files_are_one_line_each():
    """Each is named on one line and left; pcprof never crashes, and writes
    nothing outside the directory. Cases: zeros, a cut file, random bytes
    and a header of another build of libpc (its size field changed), each
    refused; and a real one with bytes past its magic scrambled, refused or
    finished into files beside it."""
    top = tempfile.mkdtemp(prefix="pc-live-")
    d = os.path.join(top, "run")
    os.mkdir(d)
    killed_at(d, 0.5, {"PC_SCOPE": "all"})
    real = os.path.join(d, live_files(d)[0])
    with open(real, "rb") as f:
        data = bytearray(f.read())
    os.unlink(real)
    scrambled = bytearray(data)
    for off in range(24, min(len(scrambled), 64 * 1024), 7):
        scrambled[off] ^= 0x5a
    other = bytearray(data)
    other[16:20] = (12345).to_bytes(4, "little")
    refused = {"zeros": bytes(len(data)), "cut": bytes(data[:len(data) // 3]),
               "random": os.urandom(len(data)), "other": bytes(other)}
    names = {}
    for i, (name, b) in enumerate(sorted(refused.items()) + [("scrambled", bytes(scrambled))]):
        names[name] = ".pcprof.%d.live" % (900000 + i)
        with open(os.path.join(d, names[name]), "wb") as f:
            f.write(b)
    r = subprocess.run([pcprof(), "report", d], capture_output=True, text=True, timeout=120,
                       env=clean_env(profiled=False))
    assert r.returncode in (0, 2), (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if ".live" in l]
    for name in refused:
        said = [l for l in lines if names[name] in l]
        assert len(said) == 1 and "cannot finish this profile" in said[0], (name, r.stderr)
        assert os.path.exists(os.path.join(d, names[name])), name
    assert os.listdir(top) == ["run"], os.listdir(top)
    assert not [f for f in os.listdir(d) if f.endswith(".tmp")], os.listdir(d)
    scr = "refused" if os.path.exists(os.path.join(d, names["scrambled"])) else "finished"
    return "; ".join(sorted(set(l.split(": ", 2)[-1] for l in lines))) + "; scrambled: " + scr
