"""Timing configuration (a dataclass built from CLI flags; no module-level state)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TimingConfig:
    warmup: int = 3
    #: After the ``warmup`` calls, keep calling until this many seconds have passed (for a device whose clocks
    #: drop when idle); None: the sampler's default (0 for both samplers; see timing/loop.py).
    warmup_s: float | None = None
    min_runs: int = 10
    max_runs: int = 200
    target_rse: float = 0.01  # stop once the standard error of the mean is this fraction of the mean
    budget_s: float = 10.0  # wall budget per timed callable
    compile_baseline: bool = False  # also time torch.compile of the reference
    #: Its own request before timing: a compile that fails or takes longer loses the compiled baseline
    #: (flagged on the result), never the candidate's verdict.
    compile_baseline_timeout_s: float = 300.0
    #: Every timed call runs on freshly generated inputs (see engine/fresh.py). Each sample of the candidate
    #: is verified against the reference with this probability, decided only after the sample ran; at least
    #: ``min_verified`` samples are verified. 1.0 (every sample) by default: at 0.25 a kernel wrong on every
    #: other call escaped in about a third of short timing runs (9 samples); the price is one reference call
    #: per sample on the parent's device, after timing.
    verify_fraction: float = 1.0
    min_verified: int = 3
    #: A result whose reference moved more than this factor between the halves of its samples is flagged
    #: (timing/interval.py: ``drift``); the speedup is kept, its interval shows the uncertainty.
    drift_bound: float = 1.2
    #: Stop the candidate and the reference timed beside it together once their speedup is known well enough
    #: (timing/stopping.py): its interval at ``speedup_level`` lies on one side of every ``decision_alphas``
    #: and is at most ``speedup_resolution`` wide (relative); else at ``max_runs`` / ``budget_s``. Replaces
    #: ``target_rse`` for those two (a reference-only worker keeps it). Off by default: a speedup that sits on
    #: an alpha (every ~1x kernel at alpha 1.0) is sampled to the cap, longer than the per-callable rule;
    #: ``benchmarks/adaptive_timing/`` measures both.
    adaptive: bool = False
    #: The SpeedUp_alpha thresholds the decision must clear (the report's default set: alpha 1.0).
    decision_alphas: tuple[float, ...] = (1.0,)
    speedup_resolution: float = 0.05
    speedup_level: float = 0.95
