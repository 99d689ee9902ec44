"""How sure a speedup is: a confidence interval from the A/B samples, and the reference's drift within them.

The speedup is a ratio of medians (reference median / candidate median). Its interval is a percentile
bootstrap of that same statistic over whole A/B rounds: each resample draws rounds with replacement and keeps
the reference's and the candidate's sample of a round together, so drift that hits both (clock, load) cancels
as it does in the estimate. Why not a t interval of the mean log-ratio: timing samples are heavy-tailed (a
burst of load makes a few rounds slow), so the mean and its standard error are pulled by the outliers the
median ignores, and the interval would be centred on another estimate (the geometric mean of ratios) than
the one shown. The percentile bootstrap undercovers with few rounds, so below ``SMALL`` rounds the wider of
it and the paired t interval of the log-ratios is taken.

Series of different workers (the clean reference) are not paired: ``paired=False`` resamples each alone.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

#: Below this many rounds the bootstrap's interval is widened to the paired t interval when that is wider.
SMALL = 10
#: Two-sided 97.5% quantiles of Student's t for 1..9 degrees of freedom (a 95% interval).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262)


@dataclass(frozen=True)
class SpeedupInterval:
    low: float
    high: float
    rounds: int
    method: str  # "bootstrap" or "bootstrap+t" (widened with few rounds), "+unpaired" when not paired

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def speedup_interval(reference: list[float], candidate: list[float], paired: bool = True, level: float = 0.95,
                     resamples: int = 2000, seed: int = 0) -> SpeedupInterval | None:
    """The ``level`` interval of median(reference) / median(candidate); None with fewer than 3 usable samples
    per side. Deterministic (a fixed seed): the same series give the same interval."""
    ref = np.asarray([x for x in reference if x > 0 and math.isfinite(x)], dtype=float)
    cand = np.asarray([x for x in candidate if x > 0 and math.isfinite(x)], dtype=float)
    if paired:
        n = min(len(ref), len(cand))
        ref, cand = ref[:n], cand[:n]  # the loop takes round i of both back to back
    if min(len(ref), len(cand)) < 3:
        return None
    rng = np.random.default_rng(seed)
    if paired:
        idx = rng.integers(0, len(ref), size=(resamples, len(ref)))
        ratios = np.median(ref[idx], axis=1) / np.median(cand[idx], axis=1)
    else:
        ri = rng.integers(0, len(ref), size=(resamples, len(ref)))
        ci = rng.integers(0, len(cand), size=(resamples, len(cand)))
        ratios = np.median(ref[ri], axis=1) / np.median(cand[ci], axis=1)
    alpha = (1 - level) / 2
    low, high = float(np.quantile(ratios, alpha)), float(np.quantile(ratios, 1 - alpha))
    method = "bootstrap"
    rounds = min(len(ref), len(cand))
    if paired and rounds < SMALL:
        logs = np.log(ref) - np.log(cand)
        centre = float(np.log(np.median(ref) / np.median(cand)))
        half = _T975[rounds - 2] * float(np.std(logs, ddof=1)) / math.sqrt(rounds)
        if math.exp(centre - half) < low or math.exp(centre + half) > high:
            low, high = min(low, math.exp(centre - half)), max(high, math.exp(centre + half))
            method = "bootstrap+t"
    return SpeedupInterval(low, high, rounds, method + ("" if paired else "+unpaired"))


def drift(series: list[float]) -> float | None:
    """How much one series' level moved during the loop: the ratio of its later half's median to its earlier
    half's, as a factor >= 1 (either direction); None with fewer than 6 samples."""
    if len(series) < 6:
        return None
    mid = len(series) // 2
    a, b = statistics.median(series[:mid]), statistics.median(series[mid:])
    if a <= 0 or b <= 0:
        return None
    return max(a / b, b / a)
