"""Engine tests that must hold whichever executor moves the jobs (engine/executor.py): the local threads and Ray.

A test that takes the ``executor`` fixture runs once per executor and makes its runner with :func:`runner_for`;
the Ray one runs on a Ray instance of this process (two CPUs: one build task and one lane actor at a time),
or on the cluster the test module connected already (tests/conftest.py loads this module as a plugin).
"""

from __future__ import annotations

import dataclasses

import pytest

from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import Runner

EXECUTORS = ("threads", "ray")
STORE_BYTES = 80 * 1024 * 1024


@pytest.fixture(scope="module")
def local_ray():
    """Ray in this process for the module's Ray runs (or the connection the module made already)."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        yield ray
        return
    ray.init(address="local", num_cpus=2, object_store_memory=STORE_BYTES, include_dashboard=False,
             log_to_driver=False)  # a new instance, not one another session left running on this machine
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(params=EXECUTORS)
def executor(request) -> str:
    if request.param == "ray":
        request.getfixturevalue("local_ray")
    return request.param


def runner_for(executor: str, cfg: EngineConfig, store=None) -> Runner:
    """The local runner, or the Ray runner on the connected instance (``ray_address`` as the config has it, else
    the one this process started)."""
    if executor == "threads":
        return Runner(dataclasses.replace(cfg, ray_address=None), store, progress=False)
    from multikernelbench.cluster.ray_runner import RayRunner

    return RayRunner(dataclasses.replace(cfg, ray_address=cfg.ray_address or "local"), store, progress=False)
