"""Roofline fractions for results the engine stored without one (a CPU host has no committed peak table), from
this host's measured CPU peaks (:mod:`multikernelbench.host_peaks`), and the eager reference's fraction from
the same run, which is the SOL score's baseline on hardware that has no baseline file.

Only here, in the report: the engine's own fraction (and the anti-cheat bound on it) keeps to committed,
reviewed tables. A fraction is computed only where it is unambiguous: a correct result with a candidate time,
whose task (by content hash) is in the packaged suite and whose timed shape is the task's CPU or GPU bench
shape (so the FLOP and byte counts are the ones that were timed).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Iterable

from multikernelbench.host_peaks import report_peaks
from multikernelbench.records import Status
from multikernelbench.roofline import bound_ms
from multikernelbench.store import StoredResult

#: (hardware, task id) -> the eager reference's roofline fraction, median over that task's timed results.
OwnEager = dict[tuple[str, str], float]


def this_host_hardware() -> str:
    from multikernelbench.backends.cpu import CpuBackend

    return CpuBackend().hardware()


def measure_this_host(stored: list[StoredResult]) -> bool:
    """Measure (and cache) this host's CPU peaks when some result was measured on this very host and has no
    table yet; True when it did. The table's name includes the core count, so results from another machine or
    another core allowance are never placed against this host's peaks."""
    from multikernelbench.host_peaks import cached_or_measure
    from multikernelbench.util.procs import usable_cores

    here = this_host_hardware()
    if report_peaks(here) is not None or not any(s.result.hardware == here for s in stored):
        return False
    cached_or_measure(here, usable_cores())
    return True


def _tasks(ids: Iterable[str]):
    from multikernelbench.tasks import load_from_dataset

    try:
        return {t.id: t for t in load_from_dataset(ids=sorted(set(ids)), check=False)}
    except Exception:  # noqa: BLE001 - no packaged dataset (a bare checkout mid-edit): no fractions, no harm
        return {}


def fill_rooflines(stored: list[StoredResult]) -> tuple[list[StoredResult], OwnEager]:
    """``stored`` with missing roofline fractions filled in where a peak table exists, and the eager fractions."""
    wanted = [s for s in stored if s.result.status is Status.CORRECT and s.result.candidate_timing is not None
              and s.result.roofline_fraction is None and report_peaks(s.result.hardware) is not None]
    if not wanted:
        return stored, {}
    tasks = _tasks(s.result.task_id for s in wanted)
    filled: dict[int, StoredResult] = {}
    eager: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in wanted:
        r, task = s.result, tasks.get(s.result.task_id)
        if task is None or task.content_hash != r.task_hash:
            continue
        shape = r.timing_shape
        if shape == task.cpu_bench_shape:
            flops, nbytes = task.costs_for_timing(True)
        elif shape == task.bench_shape:
            flops, nbytes = task.costs_for_timing(False)
        else:
            continue
        peaks, timing = report_peaks(r.hardware), r.candidate_timing
        if peaks is None or timing is None:  # both checked when picked above
            continue
        bound = bound_ms(peaks, task.dtype, flops, nbytes)
        if bound is None or timing.median_ms <= 0:
            continue
        filled[id(s)] = dataclasses.replace(s, result=dataclasses.replace(
            r, roofline_fraction=bound / timing.median_ms))
        if r.eager_timing is not None and r.eager_timing.median_ms > 0:
            eager[(r.hardware, r.task_id)].append(bound / r.eager_timing.median_ms)
    own = {key: statistics.median(v) for key, v in eager.items()}
    return [filled.get(id(s), s) for s in stored], own
