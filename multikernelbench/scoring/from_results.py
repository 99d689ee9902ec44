"""Turning evaluation results into the scorer's sample records.

Kept next to the scorer so the report and the ``evaluate`` module's executing mode convert an
:class:`~multikernelbench.records.EvalResult` the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from multikernelbench.records import EvalResult, Status
from multikernelbench.store import StoredResult

#: The eager baseline's roofline fraction for a result's task, or None (e.g. a lookup in a committed baseline).
BaselineFor = Callable[[EvalResult], "float | None"]


def sample_record(result: EvalResult, baseline_fraction: float | None = None) -> dict[str, Any]:
    """The scorer's record for one result: ``compiled``, ``correct``, ``speedup`` and ``roofline_fraction``
    (both kept only when correct), ``baseline_roofline_fraction`` (the task's, given by the caller)."""
    correct = result.status is Status.CORRECT
    return {"compiled": result.status.compiled, "correct": correct,
            "speedup": result.speedup if correct else None,
            "roofline_fraction": result.roofline_fraction if correct else None,
            "baseline_roofline_fraction": baseline_fraction}


def category_of(stored: StoredResult) -> str:
    """The label's category, else the task id's first dotted part (``activation.relu`` -> ``activation``)."""
    return stored.label.category or stored.result.task_id.split(".", 1)[0]


@dataclass
class Group:
    """All labelled results of one model (and strategy) on one backend, arranged per task by sample index.

    UNAVAILABLE results are held aside: the backend never ran them, so they say nothing about the model and
    are neither successes nor failures.
    """

    model: str
    strategy: str
    backend: str
    #: The evaluation policy (anticheat/policy.py): results of two policies are never in one group.
    policy: str = "mkb"
    tasks: dict[str, list[StoredResult]] = field(default_factory=dict)
    unavailable: int = 0

    @property
    def row_name(self) -> str:
        name = self.model if self.strategy in ("", "none") else f"{self.model} ({self.strategy})"
        return name if self.policy == "mkb" else f"{name} [policy {self.policy}]"

    def task_ids(self) -> list[str]:
        return sorted(self.tasks)

    def results(self) -> list[EvalResult]:
        return [s.result for tid in self.task_ids() for s in self.tasks[tid]]

    def min_samples(self) -> int:
        return min((len(v) for v in self.tasks.values()), default=0)

    def metric_inputs(self, baseline_for: BaselineFor | None = None
                      ) -> tuple[list[list[dict[str, Any]]], list[str], list[str]]:
        """``(predictions, references, categories)`` exactly as the ``evaluate`` module takes them;
        ``baseline_for`` fills each record's baseline roofline fraction (for the SOL score)."""
        ids = self.task_ids()
        look = baseline_for or (lambda result: None)
        preds = [[sample_record(s.result, look(s.result)) for s in self.tasks[tid]] for tid in ids]
        cats = [category_of(self.tasks[tid][0]) for tid in ids]
        return preds, ids, cats


def group_results(stored: Iterable[StoredResult]) -> list[Group]:
    """Group labelled results by (model, strategy, backend, policy); samples of a task sorted by sample index."""
    groups: dict[tuple[str, str, str, str], Group] = {}
    per_task: dict[tuple[str, str, str, str], dict[str, list[StoredResult]]] = defaultdict(lambda: defaultdict(list))
    for s in stored:
        key = (s.label.model, s.label.strategy, s.result.backend, s.result.policy)
        group = groups.setdefault(key, Group(*key))
        if s.result.status is Status.UNAVAILABLE:
            group.unavailable += 1
            continue
        per_task[key][s.result.task_id].append(s)
    for key, group in groups.items():
        group.tasks = {tid: sorted(v, key=lambda s: s.label.sample_index) for tid, v in per_task[key].items()}
    return [groups[k] for k in sorted(groups)]
