"""Anti-cheat on the GPU: the profiler probe and the GPU-only exploit/fault candidates in
solutions/cuda/wrong/anticheat_*.py (side stream, cuBLAS doing the work, illegal address, device OOM).
Skipped where no NVIDIA GPU or CUDA backend is present; run on the device machine."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from multikernelbench.anticheat import AntiCheatConfig
from multikernelbench.engine.candidates import read_headers
from multikernelbench.records import Status

REPO = Path(__file__).resolve().parents[1]
GPU_WRONG = sorted((REPO / "solutions" / "cuda" / "wrong").glob("anticheat_*.py"))

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]


def headers(path: Path) -> dict[str, str]:
    return read_headers(path.read_text())


def test_profiler_probe_classifies_cublas_as_library():
    from multikernelbench.anticheat.gpu_probe import ProfilerKernelProbe

    a = torch.randn(256, 256, device="cuda")
    with ProfilerKernelProbe() as probe:
        torch.mm(a, a)
        torch.zeros_like(a)
    ev = probe.evidence()
    assert ev["library_kernels"], ev
    assert not any("fill" in k.lower() for k in ev["library_kernels"]), ev


@pytest.fixture(scope="module")
def gpu_results(suite, build_root):
    from multikernelbench.backends import get_backend
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates

    try:
        if not get_backend("cuda").availability().ok:
            pytest.skip("cuda backend unavailable")
    except KeyError:
        pytest.skip("no cuda backend registered")
    out = {}
    for static in (True, False):
        paths = [p for p in GPU_WRONG if static or "runtime-expect" in headers(p)]
        cands = [Candidate(task_id=headers(p)["task"], source=p.read_text(), label=p.stem) for p in paths]
        cfg = EngineConfig(backend="cuda", build_root=build_root, allow_code_execution=True, seed=5,
                           run_timeout_s=120.0, timing=TimingConfig(min_runs=3, max_runs=10, budget_s=0.5),
                           anticheat=AntiCheatConfig(static_checks=static))
        results = evaluate_candidates([suite[c.task_id] for c in cands], cands, cfg)
        out[static] = {c.label: r for c, r in zip(cands, results, strict=True)}
    return out


@pytest.mark.parametrize("path", GPU_WRONG, ids=[p.stem for p in GPU_WRONG])
def test_gpu_wrong_candidate_caught(gpu_results, path):
    h = headers(path)
    r = gpu_results[True][path.stem]
    assert r.status == Status(h["expect"]) and h["reason"] in r.message, (r.status, r.message)
    if "runtime-expect" in h:
        r = gpu_results[False][path.stem]
        assert r.status == Status(h["runtime-expect"]) and h["runtime-reason"] in r.message, (r.status, r.message)
