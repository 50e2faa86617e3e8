# SPDX-License-Identifier: BSD-2-Clause
"""The versions agree: VERSION's, pcprof's, libpc's, debian/changelog's
and NEWS.md's. (The release's slow tests, the tarball's and the Debian
package's, are tests/release/test_package.py's, in make check-release.)"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from pctest import BUILD, lib

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def version():
    with open(os.path.join(TOP, "VERSION")) as f:
        return f.read().strip()


def sh(argv, **kw):
    return subprocess.run(argv, text=True, timeout=60, capture_output=True, **kw)


def test_versions_agree():
    """VERSION's version is pcprof --version's, libpc's (its exported
    pc_version, its PC_VERBOSE line, its manifest's version record),
    debian/changelog's and NEWS.md's newest."""
    v = version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", v), v
    p = sh([os.path.join(BUILD, "pcprof"), "--version"])
    assert p.returncode == 0 and p.stdout == "pcprof %s\n" % v, (p.stdout, p.stderr)
    d = tempfile.mkdtemp(prefix="pc-e2e-version-")
    env = dict(os.environ, LD_PRELOAD=lib(), PC_SCOPE="all", PC_VERBOSE="1",
               PC_OUT=os.path.join(d, "gmon.out"))
    p = sh([sys.executable, "-c", "import ctypes; print((ctypes.c_char * 64).in_dll("
            "ctypes.CDLL(None), 'pc_version').value.decode())"], env=env, cwd=d)
    assert p.returncode == 0 and p.stdout == v + "\n", (p.stdout, p.stderr)
    assert re.search(r"^libpc: wrote .*; libpc %s$" % re.escape(v), p.stderr, re.M), p.stderr
    with open(os.path.join(d, "gmon.out.objects")) as f:
        head = f.read().split("\n")[:2]
    assert head == ["pcprof-objects 1", "version " + v], head
    shutil.rmtree(d)
    with open(os.path.join(TOP, "debian", "changelog")) as f:
        first = f.readline()
    assert first.startswith("pcprof (%s) " % v), first
    with open(os.path.join(TOP, "NEWS.md")) as f:
        heads = re.findall(r"^## (\S+)", f.read(), re.M)
    assert heads and heads[0] == v, heads
    return "%s everywhere" % v
