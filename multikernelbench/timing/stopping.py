"""When the timing loop may stop sampling: each callable on its own, or a candidate and its reference together
once their speedup is known well enough for the decisions made from it (``TimingConfig.adaptive``).

The per-callable rule (today's default) stops a callable at ``max_runs``, or, after the clock audit's floor
of samples, once its own mean is precise (``target_rse``) or its wall budget is spent. Its precision is the
wrong question for a benchmark whose numbers are speedups judged against thresholds: a 3x kernel is 3x after
ten samples however noisy each is, and a kernel at 1.0x is not decided by its own mean being precise.

The adaptive rule looks at the speedup itself. Round ``i`` of the A/B loop times the candidate and the
reference back to back, so ``log(reference_i / candidate_i)`` cancels what hit both (clock, load). Its
median is estimated by a distribution-free order-statistic interval (the sign test's: a timing series is
heavy-tailed, a burst of load makes a few rounds slow, and order statistics ignore how slow). The pair
stops together (the clock audit pairs their rounds) once the interval lies on one side of every threshold
in ``decision_alphas`` and its relative width is at most ``speedup_resolution``; otherwise at the caps.

Looking after every round and stopping at the first look that decides would make a wrong decision likelier
than the interval's level says. The rule looks only at a geometric schedule of round counts (``min_runs``,
then x1.5) and splits the error among the looks (Bonferroni), so the chance that any look wrongly puts the
speedup on one side of an alpha stays below ``1 - speedup_level``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from multikernelbench.records import StopReason
from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.stats import converged

#: Each look is this much later than the previous one (in rounds).
LOOK_GROWTH = 1.5


def looks(cfg: TimingConfig, floor: int) -> list[int]:
    """The round counts at which the adaptive rule may decide: from ``max(min_runs, floor)`` growing by
    :data:`LOOK_GROWTH`, below ``max_runs`` (which stops anyway)."""
    n, out = max(cfg.min_runs, floor, 2), []
    while n < cfg.max_runs:
        out.append(n)
        n = max(n + 1, math.ceil(n * LOOK_GROWTH))
    return out


def own_stop(samples: list[float], spent_s: float, cfg: TimingConfig, floor: int) -> StopReason | None:
    """The per-callable rule: why this callable stops now, or None to sample it again."""
    if len(samples) >= cfg.max_runs:
        return StopReason.MAX_RUNS
    if len(samples) < floor:
        return None
    if spent_s >= cfg.budget_s:
        return StopReason.BUDGET
    return StopReason.CONVERGED if converged(samples, cfg) else None


@dataclass(frozen=True)
class LogInterval:
    """An interval of the median per-round log speedup (``exp`` gives the speedup's)."""

    low: float
    high: float
    rounds: int

    def clears(self, alphas: Sequence[float]) -> bool:
        """Entirely above or entirely below every threshold."""
        return all(self.low > math.log(a) or self.high < math.log(a) for a in alphas if a > 0)

    @property
    def rel_width(self) -> float:
        return math.exp(self.high - self.low) - 1.0


def _rank(n: int, error: float) -> int:
    """The largest k (1-based) whose order statistics x_(k), x_(n+1-k) bound the median with two-sided error
    at most ``error``; 0 when even the extremes do not."""
    below, k, tail = 0, 0, 0.0
    total = 2 ** n
    for i in range(n // 2 + 1):
        below += math.comb(n, i)  # P(at most i of n rounds fall below the median) * 2^n
        tail = below / total
        if 2 * tail > error:
            break
        k = i + 1
    return k


def median_interval(reference: Sequence[float], candidate: Sequence[float], error: float) -> LogInterval | None:
    """The order-statistic interval of the median of ``log(reference_i / candidate_i)`` over paired rounds;
    None when a sample is not a positive finite time or the rounds are too few for ``error``."""
    n = min(len(reference), len(candidate))
    if any(not (x > 0 and math.isfinite(x)) for x in (*reference[:n], *candidate[:n])):
        return None
    k = _rank(n, error)
    if k == 0:
        return None
    logs = sorted(math.log(r / c) for r, c in zip(reference[:n], candidate[:n], strict=True))
    return LogInterval(logs[k - 1], logs[n - k], n)


class PairRule:
    """The adaptive rule for one (candidate, reference) pair timed in the same loop."""

    def __init__(self, cfg: TimingConfig, candidate: str, reference: str, floor: int) -> None:
        self.cfg, self.candidate, self.reference, self.floor = cfg, candidate, reference, floor
        self.looks = set(looks(cfg, floor))
        self.error = (1.0 - cfg.speedup_level) / max(1, len(self.looks))
        self.alphas = sorted({float(a) for a in cfg.decision_alphas})
        #: The interval at the last look (None before one could be formed).
        self.last: LogInterval | None = None

    def stop(self, samples: dict[str, list[float]], spent: dict[str, float]) -> StopReason | None:
        """Why both stop now, or None to sample both again (their rounds stay paired)."""
        cand, ref = samples[self.candidate], samples[self.reference]
        n = min(len(cand), len(ref))
        if n >= self.cfg.max_runs:
            return StopReason.MAX_RUNS
        if n < self.floor:
            return None
        if max(spent[self.candidate], spent[self.reference]) >= self.cfg.budget_s:
            return StopReason.BUDGET
        if n not in self.looks:
            return None
        ci = median_interval(ref, cand, self.error)
        if ci is None:
            return None
        self.last = ci
        if ci.clears(self.alphas) and ci.rel_width <= self.cfg.speedup_resolution:
            return StopReason.DECIDED
        return None
