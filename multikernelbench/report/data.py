"""What the report shows, computed once from the results store.

Scores come from :func:`multikernelbench.scoring.compute_scores` on the same records the ``evaluate`` module
would get, so the report's numbers and the metric's cannot differ. Everything else here (failure counts,
roofline fractions, raw speedups for plots) is bookkeeping the metric does not need.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multikernelbench.baselines import Baseline
from multikernelbench.host_peaks import report_peaks
from multikernelbench.records import EvalResult, FailureKind, Status
from multikernelbench.report.baseline_view import BaselineView, baseline_for, baseline_view
from multikernelbench.report.host_roofline import OwnEager, fill_rooflines, measure_this_host
from multikernelbench.scoring import Group, category_of, compute_scores, group_results
from multikernelbench.store import ResultStore, StoredResult

#: Failure-breakdown columns, in the order the report shows them.
OUTCOMES = ("correct", "compile error", "runtime error", "mismatch", "shape mismatch", "timeout", "crash",
            "refused", "cheat", "harness error")


def outcome(result: EvalResult) -> str:
    """The failure-breakdown column of one result.

    A shape mismatch is reported apart from a value mismatch (it usually means a misread spec, not a numeric
    bug); the engine may file it under INCORRECT or RUNTIME_ERROR, so both are checked. A refusal of the
    environment (a build folder of the candidate's own, a lazy build in forward) is apart from the cheats.
    """
    status = result.status
    shape = FailureKind.SHAPE_MISMATCH in (result.failure, result.correctness.failure)
    if status in (Status.INCORRECT, Status.RUNTIME_ERROR) and shape:
        return "shape mismatch"
    if result.failure is FailureKind.ENVIRONMENT_REFUSED:  # blocked by the sandbox, but not gaming
        return "refused"
    if result.failure is FailureKind.HARNESS_ERROR:  # the harness failed: re-run it, never the model's failure
        return "harness error"
    return {
        Status.CORRECT: "correct", Status.COMPILE_ERROR: "compile error", Status.RUNTIME_ERROR: "runtime error",
        Status.INCORRECT: "mismatch", Status.TIMEOUT: "timeout", Status.CRASH: "crash",
        Status.CHEAT_DETECTED: "cheat",
    }[status]


@dataclass
class GroupReport:
    """One model (and strategy) on one platform."""

    group: Group
    ks: list[int]  # the requested k values this group has enough samples for
    missing_ks: list[int]  # requested k values above its smallest per-task sample count
    scores: dict[str, Any] | None  # compute_scores output with k=ks (None: no scorable task)
    failures: Counter = field(default_factory=Counter)
    speedups: list[float] = field(default_factory=list)  # correct samples with a measured speedup
    roofline: list[float] = field(default_factory=list)  # correct samples with a roofline fraction
    roofline_by_category: dict[str, list[float]] = field(default_factory=dict)
    baseline: BaselineView = field(default_factory=BaselineView)

    @property
    def name(self) -> str:
        return f"{self.group.row_name} / {self.group.backend}"

    @property
    def median_roofline(self) -> float | None:
        return statistics.median(self.roofline) if self.roofline else None


@dataclass
class ReportData:
    groups: list[GroupReport]
    ks: list[int]
    alphas: list[float]
    source: str = ""
    baseline: Baseline | None = None  # the committed reference baseline the SOL score and scatter use
    own_eager: OwnEager = field(default_factory=dict)  # SOL baseline of hardware without a baseline file
    measured_host: str = ""  # this host's hardware, when the report measured its CPU peaks

    @property
    def compared(self) -> list[GroupReport]:
        """Groups with results on the baseline's own hardware (the only ones the baseline is compared with)."""
        return [g for g in self.groups if self.baseline is not None and g.baseline.compared]

    @property
    def with_sol(self) -> list[GroupReport]:
        """Groups with a SOL score to show: against the baseline file, or the eager times of their own run."""
        own = {hw for hw, _ in self.own_eager}
        return [g for g in self.groups if g in self.compared or own & set(g.baseline.results_hardware)]

    @property
    def rows(self) -> list[str]:
        """Row names (model, strategy) in first-seen (sorted) order."""
        return list(dict.fromkeys(g.group.row_name for g in self.groups))

    @property
    def backends(self) -> list[str]:
        return sorted({g.group.backend for g in self.groups})

    @property
    def categories(self) -> list[str]:
        cats = {c for g in self.groups if g.scores for c in g.scores.get("per_category", {})}
        return sorted(cats)

    def find(self, row: str, backend: str) -> GroupReport | None:
        for g in self.groups:
            if g.group.row_name == row and g.group.backend == backend:
                return g
        return None

    def notes(self) -> list[str]:
        out = []
        ref = self.baseline.label if self.baseline is not None else ""
        for g in self.groups:
            if g.baseline.stale:
                shown = ", ".join(g.baseline.stale[:10]) + (" ..." if len(g.baseline.stale) > 10 else "")
                out.append(f"{g.name}: the baseline is stale for {len(g.baseline.stale)} task(s) (its row measured "
                           f"other task content; no SOL for them): {shown}.")
            unpeaked = sorted(h for h in g.baseline.results_hardware if h and report_peaks(h) is None)
            if unpeaked:
                out.append(f"{g.name}: no measured peak table for {', '.join(unpeaked)} (multikernelbench/hardware/), "
                           "so its results have no roofline fraction and no SOL score.")
            other = sorted(h or "unknown hardware" for h in g.baseline.unmatched_hardware)
            own = sorted({h for h, _ in self.own_eager} & set(other))
            if ref and other:
                out.append(f"{g.name}: no baseline file measured on {', '.join(other)} (the baseline is {ref}; "
                           "`mkb baseline` measures one): no roofline scatter for those results"
                           + (f"; their SOL score is against the eager reference timed in the same run on "
                              f"{', '.join(own)}." if own else ", and no SOL score."))
            elif own:
                out.append(f"{g.name}: SOL score against the eager reference timed in the same run on "
                           f"{', '.join(own)} (no baseline file).")
            if g.missing_ks:
                out.append(f"{g.name}: some task has only {g.group.min_samples()} sample(s), so "
                           f"k={', '.join(map(str, g.missing_ks))} is not reported (n/a).")
            if g.group.unavailable:
                out.append(f"{g.name}: {g.group.unavailable} result(s) with the backend unavailable were not "
                           "scored (neither success nor failure).")
        return out


def group_report(group: Group, ks: list[int], alphas: list[float], baseline: Baseline | None = None,
                 own_eager: OwnEager | None = None) -> GroupReport:
    n_min = group.min_samples()
    usable = [k for k in ks if k <= n_min]
    missing = [k for k in ks if k > n_min]
    scores = None
    if group.tasks:
        preds, refs, cats = group.metric_inputs(baseline_for(baseline, own_eager))
        # k=1 is always computed: the per-category Pass@1 table needs it even if the user asked for other ks.
        scores = compute_scores(preds, refs, k=sorted(set(usable) | {1}), alphas=alphas, categories=cats)
    rep = GroupReport(group, usable, missing, scores, baseline=baseline_view(group, baseline))
    by_cat: dict[str, list[float]] = defaultdict(list)
    for tid in group.task_ids():
        for stored in group.tasks[tid]:
            r = stored.result
            rep.failures[outcome(r)] += 1
            if r.status is Status.CORRECT:
                if r.speedup is not None:
                    rep.speedups.append(r.speedup)
                if r.roofline_fraction is not None:
                    rep.roofline.append(r.roofline_fraction)
                    by_cat[category_of(stored)].append(r.roofline_fraction)
    rep.roofline_by_category = dict(by_cat)
    return rep


def build_report_data(stored: Iterable[StoredResult], ks: Iterable[int] = (1,),
                      alphas: Iterable[float] = (1.0,), source: str = "",
                      baseline: Baseline | None = None, measure_host: bool = False) -> ReportData:
    """``measure_host``: measure this host's CPU peaks first (a few seconds, once: cached) when some result
    was measured here and has no peak table, so CPU results get roofline fractions and SOL scores."""
    ks = sorted({int(k) for k in ks})
    alphas = sorted({float(a) for a in alphas})
    stored = list(stored)
    measured = measure_this_host(stored) if measure_host else False
    stored, own_eager = fill_rooflines(stored)
    groups = [group_report(g, ks, alphas, baseline, own_eager) for g in group_results(stored)]
    from multikernelbench.report.host_roofline import this_host_hardware

    return ReportData(groups, ks, alphas, source, baseline, own_eager, this_host_hardware() if measured else "")


def load_report_data(store_path: str | Path, ks: Iterable[int] = (1,), alphas: Iterable[float] = (1.0,),
                     baseline: Baseline | None = None, measure_host: bool = False) -> ReportData:
    """The report's data from a store; ``baseline`` (e.g. :func:`multikernelbench.baselines.load_baseline`)
    gives the SOL score and the roofline scatter their eager reference point."""
    path = Path(store_path)
    if not path.exists():
        raise FileNotFoundError(f"results store {path} does not exist (run `mkb demo` or `mkb eval` first)")
    with ResultStore(path) as store:
        return build_report_data(list(store.labelled()), ks, alphas, source=str(path), baseline=baseline,
                                 measure_host=measure_host)
