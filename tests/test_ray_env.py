"""Ray's authentication mode across the suite's Ray sessions (tests/conftest.py fixes it for the whole run).

In two CI-like runs of 2026-12-06, test_ray_cluster's five tests failed whenever they ran on the pytest worker
that had run test_worker_isolation before: that file's local Ray session switched the process to token mode
(``ray.init()`` of a new local cluster writes ``RAY_AUTH_MODE=token`` into ``os.environ``), its fixture then
restored its saved environment (removing the variable), and the next cluster's nodes ran without token mode
beside a driver in it. Its GCS called the driver without the token ("Missing authorization header in
request!"), took the driver for dead and cancelled every lane actor ("SchedulingCancelled"). The replay runs
that sequence in a real process with the suite's environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

REPLAY = Path(__file__).parent / "data" / "ray_auth" / "replay.py"


def _replay(env: dict[str, str]) -> str:
    return subprocess.run([sys.executable, str(REPLAY)], env=env, capture_output=True, text=True,
                          timeout=240).stdout


def test_the_suites_ray_sessions_share_one_auth_mode():
    assert os.environ.get("RAY_AUTH_MODE") == "disabled"  # set before any session (conftest.pytest_configure)
    out = _replay(dict(os.environ))
    assert "mode after the local session: disabled" in out and "actor: ran" in out, out


def test_the_replay_fails_without_a_fixed_mode():
    """The control: the same sequence with the mode left to Ray is the CI failure (so the replay can tell)."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    out = _replay(env)
    assert "mode after the local session: token" in out and "actor: failed" in out, out
