"""The lanes' out-of-memory retry on a real GPU (engine/lane_gate.py; tests/test_lane_gate.py is the CPU-lane twin).

Why on the GPU too: the CPU test's candidate raises a ``MemoryError`` of its own; here the out-of-memory is CUDA's,
met because another lane's worker holds device memory, which is the crowding the retry exists for (7 of 36 honest
candidates on an 80 GB H100 with 4 lanes once, benchmarks/throughput/README.md). Two candidates on two lanes of
one GPU: H holds 60 % of the card from its import to its worker's end and checks slowly; V needs 60 % in its
forward, first asked for after H is loaded. Beside H, V runs out of memory; alone it fits. The test passes only
if V's second, solitary stage is its verdict (correct, flagged once) and nothing of H runs inside it.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import Runner
from multikernelbench.flags import FlagKind, of_kind
from multikernelbench.records import Status
from tests.test_lane_gate import _events
from tests.test_lane_turns import RELU

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

SHARE = 0.6  # of the card's memory, each: two do not fit, one does

HOG = textwrap.dedent(f"""
    import time
    import torch
    import torch.nn as nn
    _free, _total = torch.cuda.mem_get_info()
    _held = torch.empty(int({SHARE} * _total), dtype=torch.uint8, device="cuda")  # until the worker ends
    class ModelNew(nn.Module):
        def forward(self, x):
            time.sleep(0.5)  # slow checks: the memory stays held while V is checked
            return torch.clamp_min(x, 0.0)
    """)

VICTIM = textwrap.dedent(f"""
    import time
    import torch
    import torch.nn as nn
    _calls = [0]
    class ModelNew(nn.Module):
        def forward(self, x):
            if _calls[0] == 0:
                time.sleep(1.5)  # H is loaded (and holds its share) by now
            _calls[0] += 1
            _, total = torch.cuda.mem_get_info()
            work = torch.empty(int({SHARE} * total), dtype=torch.uint8, device=x.device)
            del work
            return torch.clamp_min(x, 0.0)
    """)


def test_a_cuda_out_of_memory_beside_another_lane_is_evaluated_again_alone(suite, tmp_path):
    from multikernelbench.backends import get_backend

    if not get_backend("cuda").availability().ok:
        pytest.skip("cuda backend unavailable")
    cfg = EngineConfig(backend="cuda", build_root=tmp_path / "builds", allow_code_execution=True, seed=5,
                       trace_path=tmp_path / "t.log", lanes_per_gpu=2, skip_timing=True, run_timeout_s=120.0,
                       timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2),
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    hog, victim = Candidate(task_id=RELU, source=HOG, label="H"), Candidate(task_id=RELU, source=VICTIM, label="V")
    rh, rv = Runner(cfg, progress=False).evaluate([suite[RELU]], [hog, victim])
    trace = cfg.trace_path.read_text()
    assert rh.status == Status.CORRECT and not of_kind(rh.flags, FlagKind.REEVALUATED_ALONE), (rh.status, rh.message)
    assert rv.status == Status.CORRECT, (rv.status, rv.message, trace[-3000:])
    assert len(of_kind(rv.flags, FlagKind.REEVALUATED_ALONE)) == 1, (rv.flags, trace[-3000:])
    events = _events(cfg.trace_path)
    v_who = next(who for who, what in events if what.startswith("out of memory beside"))
    start, end = events.index((v_who, "alone on its device")), events.index((v_who, "alone on its device: done"))
    assert {who for who, _ in events[start:end + 1]} == {v_who}, events[start:end + 1]
