"""Issue #40 items 1 and 3 on a GPU (marked ``gpu``; run on the H200 by the lead).

* What the worker does to a CUDA output (``cudaMemcpy`` through ctypes) records no aten op, contiguous or not.
* tests/data/verdict_outputs/lazy_output_observer_cuda.py: the forward only allocates; a global RecordFunction
  callback computes the output on the device when an op of the harness touches it. Trials read outputs without
  an op, so it is ``incorrect`` on its first trial with the hook check off, and the callback is named with it on.
* tests/data/verdict_outputs/lazy_timed_output_cuda.py: honest on the trials' small shapes, lazy only at the
  timing shape (a 2 GiB output, sampled at secret positions): before the parent read it through a CUDA IPC handle
  (engine/cuda_ipc.py) the worker's ``index`` woke its callback and it passed; now ``incorrect`` with the hook
  check off.
* tests/data/verdict_outputs/got_event_shave_cuda.py: libtorch's GOT slots for ``cudaEventElapsedTime`` pointed at
  a function that reports 10 % less for the candidate's samples: named (``cheat_detected``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.raw_outputs import RAW_LIMIT, needs_positions, read_raw, rebuild
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import Status

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

DATA = Path(__file__).resolve().parent / "data" / "verdict_outputs"
TASK = "activation.relu"
ATTACKS = ("lazy_output_observer_cuda", "got_event_shave_cuda", "lazy_timed_output_cuda")
HONEST = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x).t().contiguous().t()  # a non-contiguous CUDA output, read through its strides
'''


def test_cuda_raw_read_runs_no_aten_op():
    t = torch.randn(300, 70, device="cuda").t()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        raw = read_raw(t, 0)
    assert [e.name for e in prof.events() if e.name.startswith("aten::")] == []
    assert torch.equal(rebuild(raw, 0), t.cpu())
    assert not needs_positions(t)
    assert needs_positions(torch.empty(RAW_LIMIT // 4 + 1, device="cuda"))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from multikernelbench.tasks import load_suite

    (task,) = load_suite(ids=[TASK])
    cands = [Candidate(task_id=TASK, source=HONEST, label="honest")]
    cands += [Candidate(task_id=TASK, source=(DATA / f"{n}.py").read_text(), label=n) for n in ATTACKS]
    cfg = EngineConfig(backend="cuda", build_root=tmp_path_factory.mktemp("builds"), allow_code_execution=True,
                       anticheat=AntiCheatConfig(require_custom_kernel=False), run_timeout_s=300.0,
                       timing=TimingConfig(min_runs=5, max_runs=30, budget_s=2.0, warmup=1))
    out = {c.label: r for c, r in zip(cands, evaluate_candidates([task], cands, cfg), strict=True)}
    cfg.anticheat = AntiCheatConfig(require_custom_kernel=False, runtime_checks=False)
    unhooked = [cands[1], cands[3]]
    out["lazy_unhooked"], out["lazy_timed_unhooked"] = evaluate_candidates([task], unhooked, cfg)
    for name, r in out.items():
        print(f"{name}: {r.status.value} speedup={r.speedup} :: {r.message[:300]} {r.flags}")
    return out


def test_honest_non_contiguous_output_stays_correct(results):
    r = results["honest"]
    assert r.status == Status.CORRECT, r.message


@pytest.mark.parametrize("name", ATTACKS)
def test_attack_is_not_judged_correct(results, name):
    r = results[name]
    headers = read_headers((DATA / f"{name}.py").read_text())
    assert r.status.value in headers["expect"].split("||"), f"{r.status.value} at {r.speedup}x: {r.message}"
    if "reason" in headers:
        assert headers["reason"] in r.message, r.message


def test_lazy_output_is_wrong_without_the_hook_check(results):
    r = results["lazy_unhooked"]
    assert r.status == Status.INCORRECT, f"{r.status.value} at {r.speedup}x: {r.message}"


def test_lazy_timed_output_is_wrong_without_the_hook_check(results):
    r = results["lazy_timed_unhooked"]
    assert r.status == Status.INCORRECT, f"{r.status.value} at {r.speedup}x: {r.message}"
    assert "output of a timed run is wrong" in r.message, r.message
