"""CI: shipped numba_cuda solutions (correct and wrong) evaluated by the real engine on the CPU path.

The engine's workers get the backend's switches from ``worker_env`` before Python starts (numba and triton
read them at import): Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``). Correctness
only: every correct solution must come back with no timing rather than an interpreter's made-up one, and every
wrong one with the status its ``# expect:`` line declares."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._engine_check import ROOT, evaluate_backend_solutions

pytest.importorskip("numba_cuda")

BACKEND = "numba_cuda"
FILES = sorted(p.relative_to(ROOT / "solutions" / BACKEND).as_posix() for p in (ROOT / "solutions" / BACKEND).rglob("*.py"))


def test_backend_runs_as_interpreter_without_gpu():
    import torch

    from multikernelbench.backends.registry import get_backend

    if torch.cuda.is_available():
        pytest.skip("this test covers the CPU path")
    b = get_backend(BACKEND)
    assert b.availability().ok and b.interpret
    assert b.timing_available is False and b.device_type == "cpu"
    env = b.worker_env(Path("/tmp/x"))
    assert env["NUMBA_ENABLE_CUDASIM"] == "1"
    assert env["NUMBA_CACHE_DIR"].startswith("/tmp/x/")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test covers the CPU path; a GPU machine runs the native one (scripts/device_run.sh)")
    # Lean: two test shapes, one seed each (the simulator's cost is per simulated thread and per element).
    return evaluate_backend_solutions(BACKEND, tmp_path_factory.mktemp(f"{BACKEND}-builds"), lean=True)


@pytest.mark.slow
@pytest.mark.parametrize("label", FILES)
def test_solution_status(outcomes, label):
    cand, res = outcomes[label]
    want = cand.expect or "correct"
    assert res.status.value == want, f"{label}: {res.status.value} ({res.message[:800]})"
    if want == "correct":
        assert res.candidate_timing is None  # no made-up timing from the interpreter
