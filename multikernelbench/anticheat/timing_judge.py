"""The timing judges in one place: :func:`judge_timing` takes everything the parent holds of one timing
(:class:`~.timing_records.TimingEvidence`) and returns every finding, typed (:class:`~.clock_records.Finding`);
:func:`judge` adds what they decide (a retry, a conviction, a flag, the speed figures), which the device stage
(engine/device_stage.py, through engine/timing_verdict.py) carries out without reading a finding's text.

Why the parent's own numbers: the worker's reports can only convict it. Two of a timing's numbers come from the
parent rather than from the candidate's worker: the time spent outside the timed calls (anticheat/clock_audit.py,
from the arrival times of the worker's fresh-input requests) and the reference's speed (a clean worker that never
loaded candidate code times it once per task and run). Claiming less time makes the unexplained time larger, and the
speedup is always taken against the clean worker's reference (the in-worker one is a cross-check: a note).
Issue #40: the renewal's cost is calibrated in the clean worker too, and each timing carries the host's load
(engine/host_load.py), so a finding that load alone can produce is no conviction.

The findings, in the order the device stage acts on them: the stopwatch's (:data:`~.clock_records.FindingKind.CLAIMED`,
before the audit's calibration is even made), the clock's (a retry, a conviction or "inconclusive under load":
:func:`decide_clock`), the notes (flags), then, once the outputs of the timed calls passed, the sanity bounds on the
speedup and the roofline.
"""

from __future__ import annotations

import math
from dataclasses import replace

from multikernelbench.anticheat.clock_audit import audit
from multikernelbench.anticheat.clock_records import Audit, AuditConfig, Finding, FindingKind
from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.anticheat.timing_records import (
    LOAD_PROOF_MARGIN,
    CleanTiming,
    ClockDecision,
    SpeedFigures,
    TimingEvidence,
    TimingVerdict,
)
from multikernelbench.records import TimingStats
from multikernelbench.timing.interval import drift, speedup_interval
from multikernelbench.wire import REFERENCE, Series

#: How a result whose clock findings load alone could produce is flagged (not convicted, no speedup): the
#: text of its :attr:`~multikernelbench.flags.FlagKind.CLOCK_INCONCLUSIVE` flag begins so.
INCONCLUSIVE = "clock audit inconclusive under load (not a conviction)"


def judge_timing(evidence: TimingEvidence) -> list[Finding]:
    """Every finding on one timing, typed, in the order the device stage acts on them (module docstring)."""
    return judge(evidence).findings


def judge(evidence: TimingEvidence) -> TimingVerdict:
    """:func:`judge_timing`'s findings with the clock's figures, what the clock's findings decide and the speed
    figures. Pure: it neither raises on a worker's malformed statistics (no speed figures then) nor writes."""
    found = audit_clock(evidence)
    clock = decide_clock(found, evidence)
    notes = [Finding(FindingKind.IDLE_AUDIT_OFF, found.idle_off)] if found.idle_off else []
    try:
        speed: SpeedFigures | None = speed_figures(evidence)
    except Exception:  # noqa: BLE001 - malformed statistics: the device stage meets the error where it reads them
        speed = None
    shown = None if speed is None or clock.inconclusive else speed.speedup  # withheld when inconclusive
    bounds = bound_findings(shown, evidence.roofline_fraction, evidence.cfg)
    claim = judge_claim(evidence.stats, evidence.parent_wall_ms)
    findings = claim + found.found + notes + list(speed.notes if speed else ()) + bounds
    return TimingVerdict(findings, found, clock, speed)


def judge_claim(stats: dict[str, TimingStats], parent_wall_ms: float | None) -> list[Finding]:
    """The parent's stopwatch over the whole request: the worker's samples cannot hold more work than it saw."""
    if parent_wall_ms is None:
        return []
    claimed = sum(s.mean_ms * s.runs for s in stats.values())
    if claimed > parent_wall_ms * 1.05 + 50:
        return [Finding(FindingKind.CLAIMED,
                        f"timings claim {claimed:.0f} ms of work inside a {parent_wall_ms:.0f} ms request")]
    return []


def audit_clock(evidence: TimingEvidence) -> Audit:
    """The parent's clock on one timing (anticheat/clock_audit.py): its typed findings and the figures behind them;
    nothing when the clock audit or the runtime checks are off."""
    cfg = evidence.cfg
    if not (cfg.clock_audit and cfg.runtime_checks):
        return Audit()
    clean = evidence.calibration.baseline if evidence.calibration is not None else None
    return audit(evidence.log, evidence.series, evidence.calls, evidence.fns, Series.CANDIDATE, REFERENCE, clean,
                 AuditConfig(floor_ms=cfg.clock_floor_ms, rel=cfg.clock_rel, sigmas=cfg.clock_sigmas,
                             cores=evidence.cores), min_samples=evidence.min_samples)


def decide_clock(found: Audit, evidence: TimingEvidence) -> ClockDecision:
    """What the clock's findings mean, from their kinds alone. A first timing whose only findings are
    load-sensitive is timed again (``retry``, after waiting for a quieter host: engine/host_load.py);
    ``evidence.confirming``: this is the timing that confirms them. A confirming timing that ran on a host still
    oversubscribed (runnable tasks per core, or CPU pressure: :attr:`~.timing_records.HostLoad.oversubscribed`)
    does not confirm a finding that load can excuse: it convicts only by one whose excess over the quiet bound
    passes both the load's factor and :data:`~.timing_records.LOAD_PROOF_MARGIN` (far beyond what load produced on
    honest candidates; the factor alone was read low beside bursty load and an honest relu was convicted at ~1.2x),
    else the result is flagged "inconclusive under load", with no speedup. CPU time and idle findings are not
    excused (load does not produce them). Beside other processes on the GPU (engine/gpu_neighbours.py) no
    load-sensitive finding convicts: a time slice of theirs has no factor to scale by. Anything else the clock found
    convicts."""
    if not found.found:
        return ClockDecision()
    all_load = all(f.load_sensitive for f in found.found)
    if not evidence.confirming and all_load:
        return ClockDecision(retry="; ".join(found.findings))
    texts = found.findings
    load = evidence.load
    if load is not None and load.gpu_shared and all_load:
        return ClockDecision(inconclusive=(
            f"{INCONCLUSIVE}: {'; '.join(texts)}; {load.gpu_others} other process(es) held a context on the GPU "
            "(engine/gpu_neighbours.py), which time-slices their kernels with this timing's renewals, so no "
            "excess can be told from theirs; no speedup is reported"))
    if load is not None and load.oversubscribed and all_load:
        limit = max(load.factor, LOAD_PROOF_MARGIN)
        beyond = [f for f in found.found if f.margin > limit or not f.excused_by_load]
        if not beyond:
            return ClockDecision(inconclusive=(
                f"{INCONCLUSIVE}: {'; '.join(texts)}; the host had {load.label()} (factor {load.factor:.2f}) "
                f"during the confirming timing, which can stretch an honest difference that far (largest excess "
                f"{max(found.margins, default=0.0):.2f}x the quiet bound, limit {limit:.1f}x); no speedup is "
                "reported"))
        texts = [f.text if not f.excused_by_load
                 else f.text + f" (beyond what a host {load.factor:.2f}x oversubscribed can stretch: "
                               f"{f.margin:.1f}x the quiet bound, limit {limit:.1f}x)" for f in beyond]
    message = "; ".join(texts)
    if evidence.confirming:
        message += " (confirmed: the second timing, in a fresh worker with the candidate loaded again, has it too)"
    return ClockDecision(conviction=message)


def speed_figures(evidence: TimingEvidence) -> SpeedFigures:
    """The speedup and its interval. The one place that decides which reference the speedup is taken against:
    the clean worker's, whenever it timed one (issue #40: the candidate's worker can slow its own reference by
    hooks the worker cannot see), with the reference timed in the candidate's worker as a cross-check (a note
    when markedly slower). Raises KeyError or ZeroDivisionError on statistics with no speedup in them."""
    stats = evidence.stats
    cand, eager = stats[Series.CANDIDATE], stats[Series.EAGER]
    compiled = stats.get(Series.COMPILED)
    speedup = eager.median_ms / cand.median_ms
    speedup_compile = compiled.median_ms / cand.median_ms if compiled is not None else None
    reference, paired = list(evidence.series.get(REFERENCE, [])), True  # the samples the speedup comes from
    notes: list[Finding] = []
    clean, speedup_clean = evidence.clean, None
    if clean is not None and clean.eager is None:
        notes.append(Finding(FindingKind.NO_CLEAN_REFERENCE,
                             f"no clean reference timing ({clean.error or 'no samples'}): the speedup is taken "
                             "against the reference in the candidate's worker, not cross-checked"))
    elif clean is not None and clean.eager is not None and cand.median_ms > 0:
        speedup_clean = speedup = clean.eager.median_ms / cand.median_ms
        if clean.series:
            reference, paired = list(clean.series), False
        slowed = _slowed(eager, clean.eager, evidence.cfg)
        if slowed is not None:
            notes.append(slowed)
    ci = speedup_interval(reference, evidence.series.get(Series.CANDIDATE, []), paired=paired)
    d = drift(reference)
    if d is not None and d > evidence.drift_bound:
        notes.append(Finding(FindingKind.REFERENCE_DRIFT,
                             f"reference drifted {d:.2f}x between the halves of its {len(reference)} samples "
                             f"(bound {evidence.drift_bound:.2f}x): the speedup is uncertain, see its interval"))
    return SpeedFigures(speedup, speedup_compile, speedup_clean, clean.eager if clean is not None else None,
                        ci.low if ci is not None else None, ci.high if ci is not None else None, d, tuple(notes))


def _slowed(eager: TimingStats, clean: TimingStats, cfg: AntiCheatConfig) -> Finding | None:
    """The reference in the candidate's worker against the clean worker's: a note when markedly slower."""
    ratio = eager.median_ms / clean.median_ms
    spread = math.hypot(_rel_spread(eager), _rel_spread(clean))
    bound = max(cfg.reference_slowdown, 1.0 + 4.0 * spread)
    if ratio <= bound:
        return None
    return Finding(FindingKind.REFERENCE_SLOWED,
                   f"reference slowed in the candidate's worker: eager {eager.median_ms:.3f} ms there, "
                   f"{clean.median_ms:.3f} ms in a clean worker ({ratio:.2f}x, bound {bound:.2f}x); the speedup "
                   "is taken against the clean reference")


def _rel_spread(stats: TimingStats) -> float:
    """Relative spread of one series: how far its median lies above its fastest sample. One-sided on
    purpose: a burst of load makes a few samples slow (and the standard deviation large), never the fastest
    one faster, and a slowed reference is slow in every sample."""
    if stats.runs < 2 or stats.median_ms <= 0:
        return 0.0
    return (stats.median_ms - stats.min_ms) / stats.median_ms


def bound_findings(speedup: float | None, roofline_fraction: float | None, cfg: AntiCheatConfig) -> list[Finding]:
    """The sanity bounds: a speedup or a roofline fraction no honest kernel reaches (measurement exploit)."""
    out = []
    if speedup is not None and speedup > cfg.max_speedup:
        out.append(Finding(FindingKind.SPEEDUP_BOUND,
                           f"speedup {speedup:.0f}x over eager exceeds the sanity bound {cfg.max_speedup:g}x "
                           "(measurement exploit suspected)"))
    if roofline_fraction is not None and roofline_fraction > cfg.max_roofline_fraction:
        out.append(Finding(FindingKind.ROOFLINE_BOUND,
                           f"candidate time implies {roofline_fraction:.2f}x the hardware roofline "
                           f"(bound {cfg.max_roofline_fraction:g}): faster than the hardware allows"))
    return out


def recalibrated(cached: CleanTiming | None, *fresh: CleanTiming | None) -> CleanTiming | None:
    """The clean calibration a confirming timing's audit is judged by: the run's cached one (its reference
    timing stays the speedup's) with the renewal cost of the clean workers timed beside the confirming timing,
    the larger one (anticheat/clock_audit.py, "Against the clean worker": load that arrived after the cached
    calibration lengthens every renewal of both callables; CI convicted an honest relu that way). The cached
    calibration where none of them gave one."""
    got = [f.baseline for f in fresh if f is not None and f.baseline is not None]
    if cached is None or not got:
        return cached
    best = max(got, key=lambda b: b.low_per_call_ms if b.low_per_call_ms is not None else b.per_call_ms)
    cpus = [b.cpu_per_call_ms for b in got if b.cpu_per_call_ms is not None]
    if cpus:  # the CPU time too is the larger of the clean workers beside it (load varies it: util/worker_env.py)
        best = replace(best, cpu_per_call_ms=max(cpus))
    renew = [b.renew_cpu_per_call_ms for b in got if b.renew_cpu_per_call_ms is not None]
    if renew:  # and the renewal's alone (anticheat/call_marks.py)
        best = replace(best, renew_cpu_per_call_ms=max(renew))
    return replace(cached, baseline=best)
