"""The speed-of-light (SOL) score: where a correct kernel sits between the eager baseline and the hardware
roofline, so that a task with no headroom and a task with 20x of it weigh the same.

Both inputs are roofline fractions (``bound_time / measured_time``, see :mod:`multikernelbench.roofline`):
``fraction`` is the candidate's, ``baseline`` the eager PyTorch reference's on the same task and shape.
Fractions rather than times so that a record needs no device-specific numbers, and so that a store from one
machine can be placed against a baseline measured on another (both are relative to their own hardware peak).

Per correct sample, with ``f`` the candidate's fraction and ``b`` the baseline's (``0 < b < 1``)::

    f >= 1        -> 1.0                                   (at or past the bound: clamped, and counted)
    b <= f < 1    -> 0.5 + 0.5 * ln(f / b) / ln(1 / b)      (log scale: 0.5 at eager, 1.0 at the bound)
    f < b         -> 0.5 * f / b                           (slower than eager: half its speedup, in (0, 0.5))

An incorrect sample scores 0. The slower-than-eager branch is linear in the speedup ``f / b`` rather than the
log scale continued downwards: the continued log would depend on the task's headroom (with ``b = 0.9`` a
kernel 10 % slower than eager would score 0.05, with ``b = 0.01`` it would score 0.49) and would go negative,
ranking a correct slow kernel below a wrong one. The two branches meet at 0.5.

A baseline at or above ``NO_HEADROOM_FRACTION`` (0.9) of the bound leaves the scale too narrow to mean
anything: with ``b = 0.95`` the whole range 0.5 -> 1.0 spans a 5 % speedup, while an independent re-measure of
the same reference on the H200 differs by up to ~3-8 % on short memory-bound tasks (issue #15's spread check),
so the score would be timing noise. Such a task has no SOL (``DEGENERATE``) rather than a number made of
noise; the suite hygiene script lists those tasks (the same threshold), and their task files say why
(``NO_HEADROOM``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

#: A baseline roofline fraction at or above this leaves no room for a meaningful SOL (see the module docstring).
NO_HEADROOM_FRACTION = 0.9


class TaskSol(enum.Enum):
    """Why a task has, or has no, SOL score."""

    SCORED = "scored"
    NO_BASELINE = "no_baseline"  # no record of the task carries a baseline fraction
    DEGENERATE = "degenerate"  # the baseline is at >= NO_HEADROOM_FRACTION of the roofline bound
    UNMEASURED = "unmeasured"  # a correct sample lacks its own or the baseline's fraction


def sol_score(fraction: float, baseline: float) -> float:
    """SOL of one correct sample, from its roofline fraction and the eager baseline's.

    >>> sol_score(0.1, 0.1), sol_score(1.0, 0.1), sol_score(0.05, 0.1)
    (0.5, 1.0, 0.25)
    >>> round(sol_score(0.5, 0.25), 6), round(sol_score(0.1 ** 0.5, 0.1), 6), sol_score(1.3, 0.1)
    (0.75, 0.75, 1.0)
    >>> sol_score(0.5, 1.0)
    Traceback (most recent call last):
    ...
    ValueError: baseline roofline fraction must be in (0, 1) to define a SOL score, got 1.0
    """
    if not (math.isfinite(fraction) and fraction > 0):
        raise ValueError(f"roofline fraction must be positive and finite, got {fraction}")
    if not (math.isfinite(baseline) and 0 < baseline < 1):
        raise ValueError(f"baseline roofline fraction must be in (0, 1) to define a SOL score, got {baseline}")
    if fraction >= 1.0:
        return 1.0
    if fraction >= baseline:
        return min(1.0, 0.5 + 0.5 * math.log(fraction / baseline) / math.log(1.0 / baseline))
    return 0.5 * fraction / baseline


@dataclass(frozen=True)
class SolSample:
    """What the SOL of one sample needs (a view of a scorer record)."""

    correct: bool
    fraction: float | None  # the sample's roofline fraction (only meaningful when correct)
    baseline: float | None  # the eager baseline's roofline fraction for this task


@dataclass(frozen=True)
class TaskSolResult:
    status: TaskSol
    score: float | None  # mean SOL over the task's samples; None unless SCORED
    above_bound: int = 0  # correct samples with fraction > 1 (clamped to 1.0)


def task_sol(samples: Sequence[SolSample]) -> TaskSolResult:
    """A task's SOL: the mean over its samples (incorrect ones score 0), i.e. the expected SOL of one sample.

    The task's baseline is what its records carry (a property of the task: give it on every record, wrong
    ones too). A task is left out, with the reason, when no record has a baseline, when a baseline is at
    ``NO_HEADROOM_FRACTION`` of the bound or above, or when a correct sample lacks a fraction (averaging a wrong
    sample's 0 with a dropped correct sample would understate the model).

    >>> ok = SolSample(True, 0.5, 0.25); wrong = SolSample(False, None, 0.25)
    >>> r = task_sol([ok, wrong]); r.status.value, round(r.score, 6)
    ('scored', 0.375)
    >>> task_sol([SolSample(True, 0.5, None)]).status.value, task_sol([SolSample(True, 0.5, 1.02)]).status.value
    ('no_baseline', 'degenerate')
    >>> task_sol([SolSample(True, 0.97, 0.95)]).status.value, task_sol([SolSample(True, 0.97, 0.89)]).status.value
    ('degenerate', 'scored')
    """
    baselines = [s.baseline for s in samples if s.baseline is not None]
    if not baselines:
        return TaskSolResult(TaskSol.NO_BASELINE, None)
    if any(not (math.isfinite(b) and b > 0) for b in baselines):
        raise ValueError(f"baseline roofline fractions must be positive and finite, got {baselines}")
    if max(baselines) >= NO_HEADROOM_FRACTION:
        return TaskSolResult(TaskSol.DEGENERATE, None)
    if any(s.correct and (s.fraction is None or s.baseline is None) for s in samples):
        return TaskSolResult(TaskSol.UNMEASURED, None)
    scores = [sol_score(s.fraction, s.baseline) if s.correct else 0.0 for s in samples]  # type: ignore[arg-type]
    above = sum(1 for s in samples if s.correct and s.fraction is not None and s.fraction > 1.0)
    return TaskSolResult(TaskSol.SCORED, math.fsum(scores) / len(scores), above)


def sol_summary(tasks: Sequence[Sequence[SolSample]]) -> dict[str, float | int | None]:
    """The aggregate keys of :func:`~multikernelbench.scoring.compute.compute_scores` for a set of tasks.

    ``sol_mean`` is the mean of the scored tasks' SOL (None when no task is scored); the counts say how many
    tasks were scored or left out and why, and how many samples were clamped at the bound.
    """
    results = [task_sol(t) for t in tasks]
    scored = [r.score for r in results if r.status is TaskSol.SCORED and r.score is not None]
    out: dict[str, float | int | None] = {
        "sol_mean": math.fsum(scored) / len(scored) if scored else None,
        "sol_num_tasks": len(scored),
    }
    for status in (TaskSol.NO_BASELINE, TaskSol.DEGENERATE, TaskSol.UNMEASURED):
        out[f"sol_tasks_{status.value}"] = sum(r.status is status for r in results)
    out["sol_samples_above_bound"] = sum(r.above_bound for r in results)
    return out
