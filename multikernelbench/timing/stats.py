"""Summary statistics of repeated timings, and the adaptive stopping rule."""

from __future__ import annotations

import math
import statistics

from multikernelbench.records import StopReason, TimingStats
from multikernelbench.timing.config import TimingConfig


def summarize(samples_ms: list[float], method: str, stop: StopReason | None = None) -> TimingStats:
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
        stop=stop,
    )


def converged(samples: list[float], cfg: TimingConfig) -> bool:
    if len(samples) < cfg.min_runs:
        return False
    mean = statistics.fmean(samples)
    if mean <= 0:
        return True
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean <= cfg.target_rse
