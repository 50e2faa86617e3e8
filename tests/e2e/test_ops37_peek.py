# SPDX-License-Identifier: BSD-2-Clause
"""pcprof report's first operand is told apart before it is opened: a
device, a FIFO or a socket named as an operand is one line, "not a
regular file", and exit status 2; nothing waits on the FIFO (no writer
ever opens it), and the peek never opens the device or the FIFO itself
(an O_PATH descriptor tells the kind, strace shows it)."""

import os
import shutil
import socket
import subprocess
import tempfile

import pctest
from pctest import BUILD, clean_env, default_signals, prog

TIMEOUT = 20


def pcprof(*args, cwd=None, wrap=()):
    return subprocess.run(list(wrap) +
                          [os.path.join(os.path.abspath(BUILD), "pcprof")] +
                          list(args), cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, env=clean_env(None, profiled=False),
                          preexec_fn=default_signals)


def test_ops37_a_device_or_fifo_operand_is_one_line_and_status_2():
    d = tempfile.mkdtemp(prefix="pc-ops37-peek-")
    try:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(os.path.join(d, "sock"))
        cases = [[x] for x in ("/dev/zero", "/dev/null", fifo,
                               os.path.join(d, "sock"))]
        # the program's profile a FIFO or a device: refused by its reader
        cases += [[prog("forker"), fifo], [prog("forker"), "/dev/zero"]]
        for argv in cases:
            r = pcprof("report", *argv, cwd=d)
            bad = argv[-1]
            assert r.returncode == 2, (argv, r.returncode, r.stderr)
            assert r.stdout == "", (argv, r.stdout)
            assert r.stderr == "pcprof: '%s': not a regular file\n" % bad, \
                (argv, r.stderr)
        sock.close()
        strace = pctest.need("strace")
        for bad in ("/dev/zero", fifo):
            log = os.path.join(d, "strace.log")
            r = pcprof("report", bad, cwd=d,
                       wrap=(strace, "-f", "-qq", "-o", log, "-e",
                             "trace=open,openat"))
            assert r.returncode == 2, (bad, r.stderr)
            with open(log) as f:
                opens = [ln for ln in f if '"%s"' % bad in ln]
            # one open of it, O_PATH: no device's open, no FIFO's
            assert len(opens) == 1 and "O_PATH" in opens[0], (bad, opens)
    finally:
        shutil.rmtree(d, ignore_errors=True)
