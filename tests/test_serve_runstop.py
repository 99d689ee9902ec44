"""A stopped lane run kills a worker forked after the stop even before that worker has made its own session
(serve/lanes.py ``RunStop``; issue #42's preemption).

Found in a full ``.ci/run`` and reproduced beside another test session: B's sleeper, stopped for A, went on
sleeping its whole minute, and A's quick kernel waited 61 s (or was still queued after 120 s). The stop came
while the run had no worker yet; the compile worker forked next was adopted and killed by *session*, but a
worker calls setsid only after the fork, and under load that window was long enough for the session kill to
find no member. Here the window is made wide on purpose: the child sleeps before it calls setsid.
"""

from __future__ import annotations

import subprocess
import sys
import time

from multikernelbench.serve.lanes import RunStop

LATE_SESSION = "import os, time\ntime.sleep(1.0)\nos.setsid()\ntime.sleep(60)\n"


def _gone(proc: subprocess.Popen, timeout: float) -> bool:
    try:
        proc.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def test_a_worker_adopted_after_the_stop_dies_before_its_session_exists():
    stop = RunStop()
    stop.stop()
    child = subprocess.Popen([sys.executable, "-c", LATE_SESSION])
    try:
        stop.adopt(child.pid)  # the child is still in this process's session: no session of its own yet
        assert _gone(child, 5), "the worker forked after the stop ran on"
    finally:
        child.kill()
        child.wait()


def test_a_stop_kills_a_worker_adopted_before_it_and_leaves_an_unrelated_pid_alone():
    stop = RunStop()
    child = subprocess.Popen([sys.executable, "-c", LATE_SESSION])
    other = subprocess.Popen([sys.executable, "-c", "import time\ntime.sleep(60)\n"])
    try:
        stop.adopt(child.pid)
        stop._pids.append((other.pid, -1))  # a pid whose recorded parent is not its parent: reused, not ours
        stop.stop()
        stop.kill()
        assert _gone(child, 5), "the stopped run's worker ran on"
        time.sleep(0.3)
        assert other.poll() is None, "a process that is not the run's worker was killed"
    finally:
        for p in (child, other):
            p.kill()
            p.wait()
