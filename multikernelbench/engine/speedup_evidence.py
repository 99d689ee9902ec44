"""Puts the speedup's uncertainty on the outcome: its interval and the reference's drift (timing/interval.py).

One entry point applied to whatever series the speedup was taken from, so that a change of which reference
the speedup uses (the clean worker's: engine/timing_guard.py) changes only the series handed in here.
"""

from __future__ import annotations

from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.timing.interval import drift, speedup_interval


def attach_interval(out: DeviceOutcome, reference: list[float], candidate: list[float], paired: bool,
                    drift_bound: float) -> None:
    """Store the interval of ``out.speedup`` (taken as median(reference) / median(candidate)) and flag a
    reference that drifted beyond ``drift_bound`` within its samples."""
    ci = speedup_interval(reference, candidate, paired=paired)
    if ci is not None:
        out.speedup_low, out.speedup_high = ci.low, ci.high
    d = drift(reference)
    out.reference_drift = d
    if d is not None and d > drift_bound:
        out.flags.append(Flag(FlagKind.REFERENCE_DRIFT,
                              f"reference drifted {d:.2f}x between the halves of its {len(reference)} samples "
                              f"(bound {drift_bound:.2f}x): the speedup is uncertain, see its interval"))
