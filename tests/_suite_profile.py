"""``--suite-profile PATH``: one JSON line per test (its start, wall and CPU, the xdist worker that ran it), for
finding where a full run's wall goes that is not CPU: a worker waiting at the timing gate, sleeping tests, the
run's end after one worker ran out of files.

CPU is this process's and its reaped children's (``RUSAGE_SELF`` and ``RUSAGE_CHILDREN``) over the test's whole
protocol (setup, call, teardown). A child reaped later (a module fixture's zygote, closed at the module's end) is
counted to the test during which it is reaped, so per-file sums are exact and per-test figures are not. Off by
default; each worker appends its own lines (short writes to a file opened for appending do not interleave).
The worker's pid is there for ``scripts/suite_cpu.py``, which counts the CPU of every process a test started,
reaped or not.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--suite-profile", default=None, metavar="PATH",
                     help="append one JSON line per test (start, wall, CPU with reaped children, xdist worker) to PATH")


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    path = item.config.getoption("suite_profile")
    if path is None:
        return (yield)
    start, t0 = time.time(), time.monotonic()
    own0, children0 = _cpu()
    try:
        return (yield)
    finally:
        own1, children1 = _cpu()
        row = {"test": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "pid": os.getpid(),
               "start": round(start, 3), "wall_s": round(time.monotonic() - t0, 3),
               "cpu_s": round(own1 - own0, 3), "children_cpu_s": round(children1 - children0, 3)}
        with open(path, "a") as fh:
            fh.write(json.dumps(row) + "\n")
