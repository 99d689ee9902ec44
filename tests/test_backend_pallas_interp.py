"""CI: shipped Pallas solutions evaluated by the engine in interpret mode on the CPU (test shapes).

Without a TPU or GPU the pallas backend runs the TPU dialect through Pallas' interpreter: the worker wraps
``pallas_call`` with ``interpret=True`` before the candidate executes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._engine_check import ROOT, evaluate_backend_solutions

pytest.importorskip("jax")

FILES = sorted(p.relative_to(ROOT / "solutions" / "pallas").as_posix()
               for p in (ROOT / "solutions" / "pallas").rglob("*.py"))


def test_backend_interpret_defaults_without_tpu():
    from multikernelbench.backends.registry import get_backend

    b = get_backend("pallas", dialect="tpu")
    assert b.availability().ok
    assert b.interpret and b.timing_available is False and b.device_type == "cpu"
    env = b.worker_env(Path("/tmp"))
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and env["JAX_PLATFORMS"] == "cpu"


def test_interop_roundtrip_cpu():
    import torch

    from multikernelbench.interop.pallas import to_jax, to_torch

    for dt in (torch.float32, torch.bfloat16):
        x = torch.randn(5, 7).to(dt)
        assert torch.equal(to_torch(to_jax(x)), x)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test covers the interpret path; a GPU machine runs the gpu dialect natively")
    return evaluate_backend_solutions("pallas", tmp_path_factory.mktemp("pallas-builds"))


@pytest.mark.slow
@pytest.mark.parametrize("label", FILES)
def test_pallas_solution_status(outcomes, label):
    cand, res = outcomes[label]
    want = cand.expect or "correct"
    assert res.status.value == want, f"{label}: {res.status.value} ({res.message[:800]})"
