#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Export speed and size: pcprof report --format pprof, speedscope and
callgrind (and text and json for reference) on bench/cli.py's executable
of N functions (default 100,000), with a profile that touches every one of
them; and the same with a stacks file of as many distinct stacks (each
main -> f(i % 64) -> f(i), so that every function is a leaf), for which
pcprof flame's SVG is also timed and sized, and its first paint measured
in headless Chromium where the browser tests' packages are installed.

Prints one line per format: median seconds over R runs, the best, the
peak RSS, and the file's size. Usage: export.py [--build DIR]
[--functions N] [--runs R]"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402  (its executable and profile)


def write_stacks(path, addrs, rate=1000):
    """A stacks file with one stack a function, leaf first, each with the
    samples cli.write_profile gives the function."""
    with open(path, "wb") as f:
        f.write(b"pcstacks" + struct.pack("<II", 1, rate) + b"\0" * 8 +
                struct.pack("<II", 0, 0))
        main = addrs[0] + 1
        for i, a in enumerate(addrs):
            mid = addrs[(i % 64) + 1] + 1
            f.write(struct.pack("<QII", 1 + i % 7, 3, 0))
            f.write(struct.pack("<QQQ", a, mid, main))


def first_paint(svg, build):
    """Chromium's first-contentful-paint of the SVG, in ms, or None."""
    mods = os.path.join(os.path.abspath(build), "npm", "node_modules")
    node = shutil.which("node") or shutil.which("nodejs")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e")
    if not node or not shutil.which("chromium") or \
            not os.path.exists(os.path.join(mods, "playwright-core")):
        return None
    script = os.path.join(here, "browser.js")
    shots = os.path.join(build, "bench", "shots")
    os.makedirs(shots, exist_ok=True)
    p = subprocess.run([node, script, "paint", "file://" + os.path.abspath(svg), shots],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, NODE_PATH=mods))
    if p.returncode:
        print("chromium: " + p.stderr.strip()[-500:])
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--functions", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    d = os.path.join(a.build, "bench")
    exe = cli.executable(d, a.functions)
    addrs = cli.functions(exe)
    pcprof = os.path.join(a.build, "pcprof")
    for stacks in (False, True):
        gmon = os.path.join(d, "export%s.gmon" % ("-stacks" if stacks else ""))
        total = cli.write_profile(gmon, addrs)
        if stacks:
            write_stacks(gmon + ".stacks", addrs)
        else:
            try:
                os.unlink(gmon + ".stacks")
            except FileNotFoundError:
                pass
        print("%d functions, %d samples, %s:" % (
            len(addrs), total, "a stack each (%d stacks)" % len(addrs) if stacks
            else "no stacks"))
        print("    %-12s %9s %9s %9s %12s" % ("format", "median s", "best s", "RSS MB",
                                             "size"))
        for fmt in ("text", "json", "pprof", "speedscope", "callgrind"):
            out = os.path.join(d, "export.%s" % fmt)
            argv = [pcprof, "report", "--format", fmt, "--top", "0", "-o", out, exe, gmon]
            med, best, rss = cli.timed(argv, a.runs)
            print("    %-12s %9.3f %9.3f %9.1f %12s" % (
                fmt, med, best, rss / 1024, "{:,} B".format(os.path.getsize(out))),
                  flush=True)
        if stacks:
            svg = os.path.join(d, "export.svg")
            argv = [pcprof, "flame", "-o", svg, exe, gmon]
            med, best, rss = cli.timed(argv, a.runs)
            print("    %-12s %9.3f %9.3f %9.1f %12s" % (
                "flame SVG", med, best, rss / 1024,
                "{:,} B".format(os.path.getsize(svg))), flush=True)
            paint = first_paint(svg, a.build)
            if paint:
                print("    flame SVG in headless Chromium: loaded in %d ms; %s" % (
                    paint["loadedMs"], ", ".join("%s %.0f ms" % (e["name"], e["ms"])
                                                 for e in paint["paint"])))
            else:
                print("    flame SVG in headless Chromium: not measured (no chromium or "
                      "playwright-core: make check installs them)")


if __name__ == "__main__":
    main()
