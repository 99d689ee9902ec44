"""Build workers of a device backend run niced (engine/config.py ``build_nice``): the limit is applied in the
child, to the process and to its session's autogroup, and its compilers inherit it. A real child process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from multikernelbench.util.procs import Limits, apply_limits

_CHILD = ("import os, subprocess, sys; print(os.nice(0)); "
          "print(subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'], capture_output=True, "
          "text=True).stdout.strip())")


def _nice_of_child(limits: Limits) -> list[int]:
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=60,
                         start_new_session=True, preexec_fn=lambda: apply_limits(limits), check=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.slow
def test_nice_limit_lowers_the_worker_and_what_it_starts():
    base = os.nice(0)
    assert _nice_of_child(Limits(isolate_network=False)) == [base, base]
    want = min(19, base + 5)
    assert _nice_of_child(Limits(isolate_network=False, nice=5)) == [want, want]
    if os.path.exists("/proc/self/autogroup"):  # the session's autogroup got the same nice
        out = subprocess.run(["cat", "/proc/self/autogroup"], capture_output=True, text=True, timeout=30,
                             start_new_session=True,
                             preexec_fn=lambda: apply_limits(Limits(isolate_network=False, nice=5))).stdout
        assert out.strip().endswith("nice 5"), out
