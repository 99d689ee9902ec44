"""Workers' allocator thresholds are fixed (util/worker_env.py, ``MALLOC_DEFAULTS``).

Why it is a trust matter: the clock audit compares the candidate's and the reference's input renewals in the same
worker, round by round, and reads a difference as hidden work (anticheat/clock_audit.py). At glibc's defaults the
allocator's thresholds move with the worker's history, so in some workers the reference's renewal page-faulted
its 24 MB of inputs again after each eager call while the candidate's reused warm memory: an honest SGD-momentum
exemplar was convicted of "work in the reference's turn" (-12 ms per sample against a ~9.6 ms bound) in 3 of 16
evaluations on a quiet host.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from multikernelbench.backends.registry import get_backend
from multikernelbench.util.worker_env import MALLOC_DEFAULTS

BUILD_ROOT = Path(tempfile.gettempdir()) / "mkb-exemplar-builds"  # shared with test_prompt_exemplars' builds


def test_every_worker_env_fixes_the_allocator(tmp_path, monkeypatch):
    for key in MALLOC_DEFAULTS:
        monkeypatch.delenv(key, raising=False)
    for name in ("cpu", "opencl", "triton", "cuda"):
        env = get_backend(name).worker_env(tmp_path)
        assert {k: env.get(k) for k in MALLOC_DEFAULTS} == MALLOC_DEFAULTS, name
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")  # the harness's own choice passes through
    assert get_backend("cpu").worker_env(tmp_path)["MALLOC_TRIM_THRESHOLD_"] == "131072"


@pytest.mark.slow
@pytest.mark.timing  # its figures are the parent's clock: alone, as the suite's other timing tests
def test_an_honest_optimizer_renews_its_inputs_alike_for_both_callables(cpu_pch):
    """Eight evaluations of the honest SGD-momentum exemplar (eight fresh workers, one build): every round
    difference the parent's clock measured stays small. Before the fixed thresholds about a third of the workers
    showed -10 to -13.5 ms per sample (the reference's renewal page-faulting), so eight pass together with a
    probability of a few percent; with them, all eight stayed within 0.4 ms on the dev host (1.6 ms on a slow one)."""
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.prompts.exemplars import all_exemplars
    from multikernelbench.records import Status

    ex = next(e for e in all_exemplars("cpu") if e.category == "optimizer")
    task = ex.task()
    cands = [Candidate(task_id=ex.task_id, source=ex.solution, label=f"honest/{i}") for i in range(8)]
    cfg = EngineConfig(backend="cpu", build_root=BUILD_ROOT, allow_code_execution=True,
                       timing=TimingConfig(min_runs=3, max_runs=8, budget_s=0.3, warmup=1),
                       compile_workers=1, compile_timeout_s=1200.0, run_timeout_s=120.0, seed=11)
    results = evaluate_candidates([task], cands, cfg, None)
    assert all(r.status == Status.CORRECT for r in results), [(r.status.value, r.message[:300]) for r in results]
    diffs = [r.outside_clock_ms for r in results]
    # The defect is -10 to -13.5 ms; an honest worker's differences are load: within 1.6 ms alone on a slow host,
    # up to 5.9 ms in a CI-like run there (2026-12-07), so the bound sits between the two.
    assert all(d is not None and abs(d) < 8.0 for d in diffs), diffs
