"""One model's results placed against a committed baseline: which tasks the baseline covers, which of its rows
are stale, which hardware each side was measured on, and the points of the roofline scatter plot.

Kept apart from :mod:`.data` because it is the only part of the report that reads anything besides the
results store. A row counts only for a result whose ``task_hash`` it measured (:mod:`multikernelbench.baselines`)
and that was measured on the baseline's own hardware: an eager time on an H200 says nothing about how hard a
task is on an AMD EPYC, so results from other hardware get no SOL score and no scatter point, and the report
says that their hardware has no baseline.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from multikernelbench.baselines import Baseline, Match
from multikernelbench.records import EvalResult, Status
from multikernelbench.roofline import load_peaks
from multikernelbench.scoring import Group, category_of


@dataclass(frozen=True)
class ScatterPoint:
    """One task: the eager baseline's roofline fraction against the best correct candidate's."""

    task_id: str
    category: str
    baseline_fraction: float
    best_fraction: float


@dataclass
class BaselineView:
    """How one group's tasks relate to the baseline (None baseline: nothing matched, nothing stale)."""

    results_hardware: Counter = field(default_factory=Counter)  # hardware name -> results measured on it
    unmatched_hardware: Counter = field(default_factory=Counter)  # hardware the baseline was not measured on
    matches: Counter = field(default_factory=Counter)  # Match -> number of tasks
    stale: list[str] = field(default_factory=list)  # task ids whose baseline row measured other task content
    points: list[ScatterPoint] = field(default_factory=list)

    @property
    def hardware_text(self) -> str:
        return ", ".join(sorted(h for h in self.results_hardware if h)) or "unknown"

    @property
    def compared(self) -> bool:
        """Some result of the group was measured on the baseline's hardware."""
        return sum(self.results_hardware.values()) > sum(self.unmatched_hardware.values())


def baseline_for(baseline: Baseline | None, own_eager: dict[tuple[str, str], float] | None = None):
    """The scorer's per-result lookup: the eager roofline fraction of a matching baseline row, else None.

    A result on hardware the baseline file was not measured on takes ``own_eager`` instead: the eager
    reference's fraction timed in the same run on that same hardware (:mod:`.host_roofline`), when there is one.

    None also for a result on hardware without a measured peak table (it can have no roofline fraction, so
    every correct sample would be unmeasured while wrong ones scored 0), and for a result timed on another
    shape than the row (a CPU backend times a smaller shape than the GPU baseline did).
    """
    own_eager = own_eager or {}
    if baseline is None and not own_eager:
        return None

    def lookup(result: EvalResult) -> float | None:
        if baseline is None or result.hardware not in baseline.hardware:
            return own_eager.get((result.hardware, result.task_id))
        if not result.hardware or load_peaks(result.hardware) is None:
            return None
        status, row = baseline.match(result.task_id, result.task_hash)
        if status is not Match.OK or row is None:
            return None
        shape = row.raw.get("shape")
        if result.timing_shape is not None and shape is not None and result.timing_shape != shape:
            return None
        return row.eager_fraction

    return lookup


def _best_fraction(results: list[EvalResult]) -> float | None:
    fractions = [r.roofline_fraction for r in results
                 if r.status is Status.CORRECT and r.roofline_fraction is not None]
    return max(fractions) if fractions else None


def baseline_view(group: Group, baseline: Baseline | None) -> BaselineView:
    """Per task: how the baseline matches (by the task hash of the task's first result) and, where it
    matches and a correct sample has a roofline fraction, the scatter point."""
    view = BaselineView()
    for tid in group.task_ids():
        stored = group.tasks[tid]
        view.results_hardware.update(s.result.hardware for s in stored)
        if baseline is None:
            continue
        results = [s.result for s in stored if s.result.hardware in baseline.hardware]
        view.unmatched_hardware.update(r.hardware for r in (s.result for s in stored)
                                       if r.hardware not in baseline.hardware)
        if not results:
            continue
        status, row = baseline.match(tid, results[0].task_hash)
        view.matches[status] += 1
        if status is Match.STALE:
            view.stale.append(tid)
        best = _best_fraction(results)
        if status is Match.OK and row is not None and row.eager_fraction is not None and best is not None:
            view.points.append(ScatterPoint(tid, category_of(stored[0]), row.eager_fraction, best))
    return view
