"""A harness failure is never stored as the candidate's answer.

Why: a stage that raises (the parent out of GPU memory beside other lanes, seen on an H100 on 2026-12-05; a task's
reference that raises in the parent) was recorded as the candidate's ``runtime_error`` and reused by every later
run over the same store, so an honest kernel kept a failure that was the harness's. Now it is a runtime error with
``FailureKind.HARNESS_ERROR``, evaluated again on the next run, and its own column in the report. The harness error
here is a real one: a task whose reference raises in the trusted parent, evaluated through the real engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import Runner
from multikernelbench.records import FailureKind, Status
from multikernelbench.report.data import outcome
from multikernelbench.store import ResultStore
from multikernelbench.tasks.loader import tasks_from_source

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_harness_error_is_marked_and_evaluated_again(tmp_path):
    src = (REPO / "multikernelbench/suite/activation/elu.py").read_text()
    broken = src.replace("        return torch.nn.functional.elu(x, alpha=self.alpha)",
                         "        raise RuntimeError('the reference broke')")
    assert broken != src
    (task,) = tasks_from_source(broken, "activation", "elu_broken")[:1]
    cand = Candidate(task_id=task.id, source=(REPO / "solutions/cpu/activation.elu.py").read_text(), label="elu")
    cfg = EngineConfig(build_root=tmp_path / "builds", allow_code_execution=True, skip_timing=True)
    with ResultStore(tmp_path / "r.sqlite") as store:
        (first,) = Runner(cfg, store=store, progress=False).evaluate([task], [cand])
        assert first.status == Status.RUNTIME_ERROR and first.failure is FailureKind.HARNESS_ERROR, \
            (first.status, first.failure, first.message)
        assert "the reference broke" in first.message and outcome(first) == "harness error"
        (again,) = Runner(cfg, store=store, progress=False).evaluate([task], [cand])
    assert again.failure is FailureKind.HARNESS_ERROR
    assert again.finished_at > first.finished_at, "the stored harness error was reused, not evaluated again"
