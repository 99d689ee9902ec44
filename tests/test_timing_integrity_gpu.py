"""Issue #25 on a GPU (marked ``gpu``; run on the H200 by ``scripts/device_run.sh integrity``).

The Python attacks of tests/data/timing_attacks/ on ``matmul.square`` fp32 at its benchmark shape (8192^3,
cuBLAS ~22 ms on the H200): their honest kernel (a float64 product, 32 rows at a time) runs inside the
harness's input renewal and the timed call returns the stored answer after a short ``torch.cuda._sleep``
spin. An honest plain-PyTorch candidate runs beside them and must stay ``correct`` without a new flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.flags import FlagKind
from multikernelbench.records import Status

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

ATTACKS = Path(__file__).resolve().parent / "data" / "timing_attacks"
NAMES = ("renew_profile_hook", "renew_instance_hook", "early_ask_reference_turn")
HONEST = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.mm(a, b)
'''


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from multikernelbench.tasks import load_suite

    (task,) = load_suite(ids=["matmul.square"])
    cands = [Candidate(task_id=task.id, source=HONEST, label="honest")]
    cands += [Candidate(task_id=task.id, source=(ATTACKS / f"{n}.py").read_text(), label=n) for n in NAMES]
    cfg = EngineConfig(backend="cuda", build_root=tmp_path_factory.mktemp("builds"), allow_code_execution=True,
                       anticheat=AntiCheatConfig(require_custom_kernel=False), run_timeout_s=300.0,
                       timing=TimingConfig(min_runs=5, max_runs=30, budget_s=2.0, warmup=1))
    out = {c.label: r for c, r in zip(cands, evaluate_candidates([task], cands, cfg), strict=True)}
    for name, r in out.items():
        ct = r.candidate_timing
        print(f"{name}: {r.status.value} speedup={r.speedup} clean={r.speedup_clean} outside={r.outside_clock_ms} "
              f"t={ct.median_ms if ct else None} :: {r.message[:300]} {r.flags}")
    return out


def test_honest_candidate_is_quiet(results):
    r = results["honest"]
    assert r.status == Status.CORRECT, r.message
    assert r.clean_eager_timing is not None
    assert not [f for f in r.flags if f.kind in (FlagKind.REFERENCE_SLOWED, FlagKind.NO_CLEAN_REFERENCE)], r.flags


@pytest.mark.parametrize("name", NAMES)
def test_attack_is_caught(results, name):
    r = results[name]
    expected = read_headers((ATTACKS / f"{name}.py").read_text())["reason"]
    assert r.status == Status.CHEAT_DETECTED, f"{name}: {r.status.value} at {r.speedup}x: {r.message}"
    assert any(alt.strip() in r.message for alt in expected.split("||")), r.message
