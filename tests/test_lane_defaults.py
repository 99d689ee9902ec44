"""How many device lanes a run gets when it does not say (issue #44): the backend's default, automatic for CUDA.

Why a test: the CUDA default changed from one lane to ``0`` (engine/lane_count.py) on the strength of a GPU
measurement of that backend alone; every other GPU backend keeps one lane until measured. These run the real
Runner and the real lane count on this CPU-only host, where the GPU's free memory cannot be read (so the automatic
choice is 1 lane, and says so in the trace).
"""

from __future__ import annotations

import argparse

from multikernelbench.cli._common import add_engine_options, engine_config
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import Runner


def _runner(tmp_path, backend: str, **kw) -> Runner:
    cfg = EngineConfig(backend=backend, build_root=tmp_path / "b", trace_path=tmp_path / "t.log",
                       allow_code_execution=True, **kw)
    return Runner(cfg, progress=False)


def test_cuda_runs_choose_their_lanes_unless_told(tmp_path):
    runner = _runner(tmp_path, "cuda", gpus=(0,))
    assert runner.lanes() == [0]
    assert runner.lane_choice is not None and runner.lane_choice.free_gb is None
    assert "lanes per GPU (auto: memory unknown" in (tmp_path / "t.log").read_text()


def test_an_explicit_lane_count_is_kept(tmp_path):
    runner = _runner(tmp_path, "cuda", gpus=(0, 1), lanes_per_gpu=3)
    assert runner.lanes() == [0, 1] * 3 and runner.lane_choice is None


def test_other_gpu_backends_keep_one_lane(tmp_path):
    # Triton on its GPU path (not the interpreter this host would pick): a GPU backend not measured with lanes.
    runner = _runner(tmp_path, "triton", gpus=(0,), backend_options={"interpret": False})
    assert runner.backend.device_type == "cuda"
    assert runner.lanes() == [0] and runner.lane_choice is None


def test_cpu_lanes_are_device_workers(tmp_path):
    assert _runner(tmp_path, "cpu", device_workers=2).lanes() == [None, None]


def test_the_cli_leaves_the_choice_to_the_backend():
    p = argparse.ArgumentParser()
    add_engine_options(p)
    assert engine_config(p.parse_args(["--backend", "cuda"]), allow=True).lanes_per_gpu is None
    assert engine_config(p.parse_args(["--lanes-per-gpu", "1"]), allow=True).lanes_per_gpu == 1
