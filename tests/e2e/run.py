#!/usr/bin/env python3
"""Runs the end-to-end tests (tests/e2e/test_*.py): each test_ function is a
test; an AssertionError or any other exception fails it. Prints one line per
test and a closing 'e2e: N passed, N failed' line.
Usage: run.py [--build DIR] [-k SUBSTRING]"""

import argparse
import importlib
import os
import sys
import time
import traceback

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", default="", help="run tests whose name contains this")
    a = ap.parse_args()
    os.environ["PC_BUILD"] = os.path.abspath(a.build)
    passed = failed = 0
    for fn in sorted(os.listdir(here)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        mod = importlib.import_module(fn[:-3])
        for name in [n for n in vars(mod) if n.startswith("test_")]:
            if a.k not in name:
                continue
            t0 = time.time()
            try:
                note = getattr(mod, name)()
                passed += 1
                print("ok    %-62s %5.1fs%s" % (name, time.time() - t0,
                                              "  " + note if note else ""))
            except Exception:
                failed += 1
                print("FAIL  %s" % name)
                traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
    print("e2e: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
