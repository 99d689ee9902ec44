"""Timing statistics and the host-clock timer used by CPU backends.

The timer interleaves the callables it is given (A, B, A, B, ...) so that frequency drift, thermal state
and background load hit all of them alike, and stops adding runs once the relative standard error of
every callable's mean is below target or its wall budget is spent.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any, Callable

from multikernelbench.backends.base import Timer
from multikernelbench.engine.config import TimingConfig
from multikernelbench.records import TimingStats


def summarize(samples_ms: list[float], method: str) -> TimingStats:
    n = len(samples_ms)
    mean = statistics.fmean(samples_ms)
    std = statistics.stdev(samples_ms) if n > 1 else 0.0
    return TimingStats(
        median_ms=statistics.median(samples_ms),
        mean_ms=mean,
        min_ms=min(samples_ms),
        max_ms=max(samples_ms),
        std_ms=std,
        runs=n,
        rel_std_err=(std / math.sqrt(n) / mean) if n > 1 and mean > 0 else float("inf"),
        method=method,
    )


def converged(samples: list[float], cfg: TimingConfig) -> bool:
    if len(samples) < cfg.min_runs:
        return False
    mean = statistics.fmean(samples)
    if mean <= 0:
        return True
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean <= cfg.target_rse


class AlternatingTimer(Timer):
    """Generic A/B loop; subclasses supply ``time_one`` (one measured call, in ms)."""

    method = "abstract"

    def __init__(self, cfg: TimingConfig) -> None:
        self.cfg = cfg

    def time_one(self, fn: Callable[[int], Any], i: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def measure(self, fns: dict[str, Callable[[int], Any]]) -> dict[str, TimingStats]:
        cfg = self.cfg
        for name, fn in fns.items():
            for i in range(cfg.warmup):
                fn(i)
        samples: dict[str, list[float]] = {name: [] for name in fns}
        spent: dict[str, float] = {name: 0.0 for name in fns}
        i = 0
        while True:
            active = [n for n in fns if len(samples[n]) < cfg.max_runs and spent[n] < cfg.budget_s
                      and not converged(samples[n], cfg)]
            # Keep every callable at >= min_runs even if one of them already used its budget.
            if not active:
                break
            for name in active:
                t0 = time.perf_counter()
                samples[name].append(self.time_one(fns[name], i))
                spent[name] += time.perf_counter() - t0
            i += 1
        return {name: summarize(s, self.method) for name, s in samples.items()}


class HostClockTimer(AlternatingTimer):
    """perf_counter around a call: right for synchronous CPU kernels (OpenMP regions join before return)."""

    method = "host_perf_counter"

    def __init__(self, cfg: TimingConfig, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        super().__init__(cfg)
        self._clock = clock  # bound before any candidate code is loaded into the worker

    def time_one(self, fn: Callable[[int], Any], i: int) -> float:
        t0 = self._clock()
        fn(i)
        return (self._clock() - t0) / 1e6
