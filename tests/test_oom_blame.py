"""Issue #40: a device out-of-memory met while processes outside the run held the GPU is the harness's failure.

What it fixes (H100, 2026-12-05, `benchmarks/shipped_sets_h200/2026-12-05f_h100/`): the honest CUDA ``rms_norm``
ran out of memory beside the Triton and Pallas sets' processes (~60 GiB of the card) and was scored
``runtime_error``, a failure of the model. Now it is a harness error (evaluated again by the next run); an
out-of-memory with no neighbour stays the candidate's ``runtime_error``.

Real workers on the CPU backend: the candidate raises torch's own ``OutOfMemoryError`` with CUDA's message (what
a CUDA allocation failure raises in a worker); the only thing given is NVML's list of compute pids, which needs a
GPU: here a list with this process and pid 1 (a real process outside this one's tree) or this process alone.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.gpu_neighbours import GpuNeighbours, blame_for_oom, count_others
from multikernelbench.records import FailureKind, Status
from tests._procs import alive

RELU = "activation.relu"
OOM = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def forward(self, x):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")
    """)


def _evaluation(suite, tmp_path: Path, source: str = OOM, backend_name: str = "cpu", pids: list[int] | None = None):
    """The candidate's device stage outside a runner, and its reference service; ``pids``: NVML's list of
    compute pids as given (None: the service's own NVML reading, on a GPU)."""
    from multikernelbench.backends import get_backend
    from multikernelbench.engine.device_stage import CandidateEvaluation
    from multikernelbench.engine.reference import ReferenceService, SeedSource

    options = {"pch": False} if backend_name == "cpu" else {}
    cfg = EngineConfig(build_root=tmp_path / "builds", allow_code_execution=True, seed=5,
                       timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                       backend_options=options, trace_path=tmp_path / "trace.log")
    backend = get_backend(backend_name, **options)
    build = tmp_path / "builds" / backend_name / "one"
    build.mkdir(parents=True)
    refs = ReferenceService(backend.reference_device(0 if backend_name == "cuda" else None))
    if pids is not None:
        refs.neighbours = GpuNeighbours(0, read=lambda: pids, minor=0)
    return CandidateEvaluation(suite[RELU], source, build, backend, cfg, SeedSource(5), refs), refs


@pytest.mark.slow
@pytest.mark.skipif(os.getpid() == 1, reason="pid 1 must be a process outside this test's tree")
def test_out_of_memory_beside_another_process_is_a_harness_error(suite, tmp_path):
    out = _evaluation(suite, tmp_path, pids=[os.getpid(), 1])[0].evaluate()
    assert out.status == Status.RUNTIME_ERROR and out.failure is FailureKind.HARNESS_ERROR, out.message
    assert "1 other process(es) outside this run" in out.message and "CUDA out of memory" in out.message


@pytest.mark.slow
def test_out_of_memory_with_the_gpu_to_itself_stays_the_candidates(suite, tmp_path):
    out = _evaluation(suite, tmp_path, pids=[os.getpid()])[0].evaluate()
    assert out.status == Status.RUNTIME_ERROR and out.failure is FailureKind.RESOURCE_LIMIT, out.message
    assert "outside this run" not in out.message


def test_only_processes_outside_the_tree_are_blamed():
    assert blame_for_oom("x: CUDA out of memory", count_others([os.getpid()], None)) is None
    assert blame_for_oom("x: CUDA out of memory", None) is None  # unknown count: the candidate's, as before
    if os.getpid() != 1:
        assert "1 other process(es)" in (blame_for_oom("x: CUDA out of memory",
                                                       count_others([os.getpid(), 1], None)) or "")


@pytest.mark.gpu
def test_a_real_out_of_memory_beside_a_process_holding_the_gpu_is_a_harness_error(suite, tmp_path):
    """On a GPU: another tenant (a detached process, its own CUDA context) holds all but ~2 GiB of the card; the
    candidate asks for 8 GiB; NVML's real process list blames the neighbour."""
    import subprocess
    import sys
    import time

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.zeros(1, device="cuda")  # the parent's own context, as the engine's reference side holds one
    ready = tmp_path / "hog.pid"
    code = ("import os, time\nif os.fork(): os._exit(0)\nos.setsid()\nimport torch\n"
            "free, _ = torch.cuda.mem_get_info()\nx = torch.empty(free - (2 << 30), dtype=torch.uint8, device='cuda')\n"
            f"open({str(ready)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    for _ in range(600):
        if ready.exists() and ready.read_text():
            break
        time.sleep(0.1)
    hog = int(ready.read_text())
    try:
        src = OOM.replace('raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")',
                          "return torch.empty(8 << 30, dtype=torch.uint8, device=x.device)")
        evaluation, refs = _evaluation(suite, tmp_path, src, backend_name="cuda")
        out = evaluation.evaluate()
        if refs.neighbours is None or refs.neighbours.count() is None:
            pytest.skip(f"NVML not readable here: {getattr(refs.neighbours, 'error', 'no reader')}")
        assert out.status == Status.RUNTIME_ERROR and out.failure is FailureKind.HARNESS_ERROR, out.message
    finally:
        os.kill(hog, 9)
        _gone(hog)


def _gone(pid: int, within_s: float = 10.0) -> None:
    """Until ``pid`` has exited (gone, or a zombie: its device context is released at exit), so that the next GPU
    test does not meet this one's hog on the card (tests/test_gpu_neighbours.py read it as a neighbour)."""
    import time

    deadline = time.time() + within_s
    while alive(pid) and time.time() < deadline:
        time.sleep(0.05)
