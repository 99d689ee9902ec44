"""Suite vs held-out results side by side: a model that scores much better on the published suite than on
freshly generated held-out tasks of the same kinds has likely seen the suite (issue #16).

The split is by task id (:func:`multikernelbench.tasks.heldout.sets.task_set_of`); scores are the same
estimators as the main table, computed on each part alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from multikernelbench.report.data import ReportData
from multikernelbench.scoring import compute_scores, fast_key
from multikernelbench.tasks.heldout.sets import HELDOUT, SUITE, task_set_of

SETS = (SUITE, HELDOUT)


@dataclass(frozen=True)
class SetScores:
    tasks: int
    pass_at_1: float | None
    fast: float | None  # fast_alpha for the first requested alpha


def set_scores(data: ReportData) -> dict[str, dict[str, SetScores]] | None:
    """Group name -> task set -> scores; None when no result is from a held-out task (no column to show)."""
    if not any(task_set_of(tid) == HELDOUT for g in data.groups for tid in g.group.task_ids()):
        return None
    alpha = data.alphas[0] if data.alphas else 1.0
    out: dict[str, dict[str, SetScores]] = {}
    for g in data.groups:
        preds, refs, cats = g.group.metric_inputs()
        per: dict[str, SetScores] = {}
        for name in SETS:
            keep = [i for i, tid in enumerate(refs) if task_set_of(tid) == name]
            if not keep:
                per[name] = SetScores(0, None, None)
                continue
            s = compute_scores([preds[i] for i in keep], [refs[i] for i in keep], k=[1], alphas=[alpha],
                               categories=[cats[i] for i in keep])
            per[name] = SetScores(len(keep), s["pass@1"], s[fast_key(alpha)])
        out[g.name] = per
    return out
