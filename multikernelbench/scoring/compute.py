"""Benchmark scores from per-sample records: the one implementation behind the ``evaluate`` module and the
report, so the two can never disagree.

Input contract (shared with ``metrics/mkb_speedup``): ``predictions`` holds one list per task of sample
records ``{"compiled": bool, "correct": bool, "speedup": float | None}``, optionally with
``"roofline_fraction"`` (the sample's) and ``"baseline_roofline_fraction"`` (the eager baseline's, for the SOL
score of :mod:`.sol`); ``references`` holds the task ids in the same order; ``categories`` (optional) one
category per task. The first record of a task is its first sample (``fast_p`` looks only at it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from multikernelbench.scoring.estimators import geometric_mean, mean_pass_at_k
from multikernelbench.scoring.sol import SolSample, sol_summary, task_sol


@dataclass(frozen=True)
class Sample:
    """One validated sample record."""

    compiled: bool
    correct: bool
    speedup: float | None  # only meaningful when correct; None = not measured
    roofline_fraction: float | None = None  # the sample's, only when correct
    baseline_roofline_fraction: float | None = None  # the task's eager baseline, for the SOL score

    def reaches(self, alpha: float) -> bool:
        return self.correct and self.speedup is not None and self.speedup >= alpha


def alpha_label(alpha: float) -> str:
    """How an alpha appears in output keys: ``str(float(alpha))``, so 1 -> ``"1.0"`` and 1.5 -> ``"1.5"``."""
    return str(float(alpha))


def compilation_key(k: int) -> str:
    return f"compilation@{k}"


def pass_key(k: int) -> str:
    return f"pass@{k}"


def speedup_key(alpha: float, k: int) -> str:
    return f"speedup_{alpha_label(alpha)}@{k}"


def fast_key(alpha: float) -> str:
    return f"fast_{alpha_label(alpha)}"


def _positive(record: Any, name: str, value: Any) -> float | None:
    """A positive finite float or None: zero, negative or infinite values mean a broken timer or cost model,
    and averaging them in would poison the geomean and the SOL score."""
    if value is None:
        return None
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite (or None), got {record!r}")
    return value


def to_sample(record: Any) -> Sample:
    """Validate one record (a mapping, or an object with the attributes).

    A correct sample must have compiled; its speedup and roofline fractions must be positive finite numbers
    or None. The baseline's fraction is kept on wrong samples too (it belongs to the task).
    """
    get = record.get if isinstance(record, Mapping) else (lambda key, default=None: getattr(record, key, default))
    compiled, correct, speedup = get("compiled"), get("correct"), get("speedup", None)
    if not isinstance(compiled, bool) or not isinstance(correct, bool):
        raise ValueError(f"'compiled' and 'correct' must be bools, got {record!r}")
    if correct and not compiled:
        raise ValueError(f"a sample cannot be correct without compiling: {record!r}")
    baseline = _positive(record, "baseline_roofline_fraction", get("baseline_roofline_fraction", None))
    if not correct:
        return Sample(compiled, False, None, None, baseline)
    return Sample(compiled, True, _positive(record, "speedup of a correct sample", speedup),
                  _positive(record, "roofline_fraction", get("roofline_fraction", None)), baseline)


def _sol_samples(task: Sequence[Sample]) -> list[SolSample]:
    return [SolSample(s.correct, s.roofline_fraction, s.baseline_roofline_fraction) for s in task]


def _validate(predictions: Sequence[Sequence[Any]], references: Sequence[Any],
              categories: Sequence[Any] | None) -> list[list[Sample]]:
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} prediction lists but {len(references)} references (task ids)")
    if categories is not None and len(categories) != len(references):
        raise ValueError(f"{len(categories)} categories but {len(references)} tasks")
    seen: set = set()
    for ref in references:
        if ref in seen:
            raise ValueError(f"task id {ref!r} appears twice; give all samples of a task in one list")
        seen.add(ref)
    if not references:
        raise ValueError("no tasks to score")
    return [[to_sample(r) for r in task] for task in predictions]


def _check_k(tasks: Sequence[Sequence[Sample]], references: Sequence[Any], ks: Sequence[int]) -> None:
    for task, ref in zip(tasks, references, strict=True):
        for k in ks:
            if len(task) < k:
                raise ValueError(f"task {ref!r} has {len(task)} samples, fewer than k={k}; "
                                 "sample more or lower k (tasks are never dropped silently)")


def _scores(tasks: Sequence[Sequence[Sample]], references: Sequence[Any], ks: Sequence[int],
            alphas: Sequence[float]) -> dict[str, Any]:
    out: dict[str, Any] = {"num_tasks": len(tasks), "num_samples": sum(len(t) for t in tasks)}
    for k in ks:
        out[compilation_key(k)] = mean_pass_at_k(((len(t), sum(s.compiled for s in t)) for t in tasks), k)
        out[pass_key(k)] = mean_pass_at_k(((len(t), sum(s.correct for s in t)) for t in tasks), k)
        for a in alphas:
            out[speedup_key(a, k)] = mean_pass_at_k(((len(t), sum(s.reaches(a) for s in t)) for t in tasks), k)
    for a in alphas:
        out[fast_key(a)] = sum(t[0].reaches(a) for t in tasks) / len(tasks)
    timed = [s.speedup for t in tasks for s in t if s.correct and s.speedup is not None]
    out["num_correct_samples"] = sum(s.correct for t in tasks for s in t)
    out["geomean_speedup"] = geometric_mean(timed)
    out.update(sol_summary([_sol_samples(t) for t in tasks]))
    out["sol_per_task"] = {str(ref): task_sol(_sol_samples(t)).score for ref, t in zip(references, tasks, strict=True)}
    return out


def compute_scores(predictions: Sequence[Sequence[Any]], references: Sequence[Any], k: Iterable[int] = (1,),
                   alphas: Iterable[float] = (1.0,), categories: Sequence[Any] | None = None) -> dict[str, Any]:
    """All scores for one set of tasks (e.g. one model on one platform); see the module docstring.

    >>> preds = [[{"compiled": True, "correct": True, "speedup": 2.0},
    ...           {"compiled": True, "correct": False, "speedup": None}],
    ...          [{"compiled": False, "correct": False, "speedup": None},
    ...           {"compiled": True, "correct": True, "speedup": 0.5}]]
    >>> s = compute_scores(preds, ["a", "b"], k=[1, 2])
    >>> s["pass@1"], s["pass@2"], s["speedup_1.0@1"], s["fast_1.0"], s["geomean_speedup"]
    (0.5, 1.0, 0.25, 0.5, 1.0)

    With roofline fractions, the SOL score (:mod:`multikernelbench.scoring.sol`): task "a" has a correct
    sample at the bound (1.0) and a wrong one (0), task "b" no baseline, so it is left out.

    >>> preds[0][0].update(roofline_fraction=1.0, baseline_roofline_fraction=0.2)
    >>> preds[0][1]["baseline_roofline_fraction"] = 0.2
    >>> s = compute_scores(preds, ["a", "b"])
    >>> s["sol_mean"], s["sol_num_tasks"], s["sol_tasks_no_baseline"], s["sol_per_task"]
    (0.5, 1, 1, {'a': 0.5, 'b': None})
    """
    ks = sorted({int(x) for x in k})
    alpha_list = sorted({float(a) for a in alphas})
    if not ks or min(ks) < 1:
        raise ValueError(f"k must be a non-empty list of ints >= 1, got {list(k)}")
    if not alpha_list:
        raise ValueError("alphas must be a non-empty list of floats")
    tasks = _validate(predictions, references, categories)
    _check_k(tasks, references, ks)
    out = _scores(tasks, references, ks, alpha_list)
    if categories is not None:
        per: dict[str, dict[str, Any]] = {}
        for cat in sorted({str(c) for c in categories}):
            idx = [i for i, c in enumerate(categories) if str(c) == cat]
            per[cat] = _scores([tasks[i] for i in idx], [references[i] for i in idx], ks, alpha_list)
        out["per_category"] = per
    return out
