"""Self-check: each task's own reference, submitted as a candidate through the engine, is judged correct.

This catches tasks the harness cannot evaluate faithfully: nondeterministic references, inputs the harness
casts differently from the reference, outputs that fail the tolerance against themselves at bf16, weights
that depend on more than the seed. The candidate is the task source plus ``class ModelNew(Model): pass``,
so nothing is compiled (the cpu backend's build step only imports the Python source).

Cost: the engine forks one compile and one device worker per candidate from its zygote, so the suite takes
minutes. All candidates go through one engine run (four device workers in parallel): one zygote and one
reference service for the whole suite, where a run per category paid their start-up (torch's import, ~5 s of
CPU each) 15 times. Each task still gets its own test so a failure names it.
"""

from __future__ import annotations

import pytest
from _suite_ids import by_id, categories, task_ids

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import Status

SELF_CHECK_SUFFIX = "\n\n# self-check: the reference itself, as a candidate\nclass ModelNew(Model):\n    pass\n"


def self_check_config(build_root) -> EngineConfig:
    # The candidate *is* the reference, so the anti-cheat rules that demand the compute run in the
    # candidate's own kernel (no reference model/ops) must be off; every other defence stays on.
    # Four device workers on two cores: each candidate's worker spends most of its ~0.3 s asleep in the
    # thread check's sampling window (anticheat.runtime.busy_threads), so two left the cores half idle.
    return EngineConfig(backend="cpu", build_root=build_root, skip_timing=True, allow_code_execution=True,
                        device_workers=4, compile_workers=2, threads=1, seed=20240607,
                        anticheat=AntiCheatConfig(require_custom_kernel=False))


def self_candidate(task) -> Candidate:
    return Candidate(task_id=task.id, source=task.source + SELF_CHECK_SUFFIX, label=f"self-check/{task.id}")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    """task id -> EvalResult of its self-check, every task in one engine run."""
    tasks = list(by_id().values())
    out = evaluate_candidates(tasks, [self_candidate(t) for t in tasks],
                              self_check_config(tmp_path_factory.mktemp("selfcheck-builds")))
    return {r.task_id: r for r in out}


def test_every_category_is_covered():
    assert {tid.split(".")[0] for tid in task_ids()} == set(categories())


@pytest.mark.slow
@pytest.mark.parametrize("task_id", task_ids())
def test_reference_as_candidate_is_correct(task_id, results):
    result = results[task_id]
    assert result.status == Status.CORRECT, (
        f"{task_id}: {result.status.value} {result.failure} {result.message[:2000]}")
