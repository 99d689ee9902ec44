"""What a Ray session leaves in the process (cluster/ray_import.py: ray_env_restored).

``ray.init()`` of a new local cluster writes ``RAY_AUTH_MODE=token`` into ``os.environ`` and leaves it there. In
two CI-like runs of 2026-12-06 the next module of the same pytest worker (test_ray_cluster.py: a cluster made by
``ray.cluster_utils``) then had every lane actor cancelled before it started: its GCS called the driver without
the token ("Missing authorization header in request!"), took the driver for dead and cancelled what it owned.
"""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")

from multikernelbench.anticheat.config import AntiCheatConfig  # noqa: E402
from multikernelbench.engine.candidates import Candidate  # noqa: E402
from multikernelbench.engine.config import EngineConfig  # noqa: E402
from multikernelbench.records import Status  # noqa: E402

pytestmark = pytest.mark.slow

HONEST = ("import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
          "        return torch.clamp_min(x, 0.0)\n")


def test_a_local_ray_run_leaves_no_token_mode_behind(suite, build_root, monkeypatch):
    """``mkb eval --ray local`` in a process (the service, a notebook, the suite) starts and ends a local cluster;
    afterwards the process's environment and Ray's cached mode are as before, so a later session is consistent.
    On the code before ray_env_restored: ``RAY_AUTH_MODE`` was "token" here after the run."""
    from ray._raylet import AuthenticationMode, get_authentication_mode

    from multikernelbench.cluster.ray_runner import RayRunner

    assert not ray.is_initialized()  # the run must start (and end) its own local cluster
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    cfg = EngineConfig(build_root=build_root, allow_code_execution=True, seed=7, skip_timing=True,
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                       ray_address="local")
    (r,) = RayRunner(cfg, None, progress=False).evaluate(
        [suite["activation.relu"]], [Candidate(task_id="activation.relu", source=HONEST, label="honest")])
    assert r.status == Status.CORRECT, r.message
    assert not ray.is_initialized()
    assert "RAY_AUTH_MODE" not in os.environ
    assert get_authentication_mode() == AuthenticationMode.DISABLED
