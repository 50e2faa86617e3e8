# SPDX-License-Identifier: BSD-2-Clause
"""What the power benchmarks share about the machine they run on: a CPU
hog on its last CPU (`yes > /dev/null`, the runs wherever the scheduler
puts them) and the load average they record beside their figures."""

import contextlib
import os
import subprocess


@contextlib.contextmanager
def hog_on_last_cpu(on=True):
    """`yes > /dev/null` on the last CPU for the with block, where on."""
    hog = subprocess.Popen(["taskset", "-c", str(max(os.sched_getaffinity(0))), "sh",
                            "-c", "exec yes > /dev/null"]) if on else None
    try:
        yield
    finally:
        if hog:
            hog.kill()
            hog.wait()


def load1():
    """The load average over the last minute."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])
