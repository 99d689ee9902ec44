"""CI: shipped Triton solutions evaluated by the engine under Triton's CPU interpreter (test shapes).

The engine's workers get ``TRITON_INTERPRET=1`` from the backend's ``worker_env`` before Python starts
(Triton reads it at import), so this exercises exactly the CI path: correctness only, timing reported as
unavailable rather than measured on the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._engine_check import ROOT, evaluate_backend_solutions

pytest.importorskip("triton")

FILES = sorted(p.relative_to(ROOT / "solutions" / "triton").as_posix()
               for p in (ROOT / "solutions" / "triton").rglob("*.py"))


def test_backend_reports_interpret_mode_without_gpu():
    from multikernelbench.backends.registry import get_backend

    b = get_backend("triton", interpret=True)
    assert b.availability().ok
    assert b.timing_available is False and b.device_type == "cpu"
    assert b.worker_env(Path("/tmp"))["TRITON_INTERPRET"] == "1"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test covers the interpreter path; a GPU machine runs the native one")
    return evaluate_backend_solutions("triton", tmp_path_factory.mktemp("triton-builds"))


@pytest.mark.slow
@pytest.mark.parametrize("label", FILES)
def test_triton_solution_status(outcomes, label):
    cand, res = outcomes[label]
    want = cand.expect or "correct"
    assert res.status.value == want, f"{label}: {res.status.value} ({res.message[:800]})"
    if want == "correct":
        assert res.candidate_timing is None  # no made-up timing from the interpreter


@pytest.mark.gpu
def test_triton_gpu_mode_available_with_cuda():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from multikernelbench.backends.registry import get_backend

    assert get_backend("triton").availability().ok
