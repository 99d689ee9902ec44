"""Turns the parent's own timing evidence into verdicts and result fields (the trusted side of issue #25).

Two numbers of a timing now come from the parent rather than from the candidate's worker: the time spent
outside the timed calls (engine/clock_audit.py, from the arrival times of the worker's fresh-input requests)
and the reference's speed (a clean worker that never loaded candidate code times it once per task and run).
The worker's own reports can only convict it: claiming less time makes the unexplained time larger, and the
speedup is always taken against the clean worker's reference (the in-worker one is a cross-check: a flag).
Issue #40: the renewal's cost is calibrated in the clean worker too (engine/clock_audit.py), and each timing
carries the host's load (engine/host_load.py), so a finding that load alone can produce is no conviction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.clock_audit import AskLog, Audit, AuditConfig, CleanBaseline, audit, intervals
from multikernelbench.engine.host_load import HostLoad
from multikernelbench.engine.messages import Timed
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.session import Verdict
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import Status, TimingStats
from multikernelbench.wire import REFERENCE, Series


@dataclass(frozen=True)
class CleanTiming:
    """The reference as a clean worker timed it, and what its input renewals cost there."""

    eager: TimingStats | None
    baseline: CleanBaseline | None
    error: str = ""  # why there is none (the clean worker failed)
    series: tuple[float, ...] = ()  # the reference's samples there (ms per call): the speedup's interval
    load: HostLoad | None = None  # the host's load while it ran (engine/host_load.py)

    @classmethod
    def from_reply(cls, log: AskLog, reply: Timed, load: HostLoad | None = None) -> CleanTiming:
        stats = reply.stats.get(REFERENCE)
        ivs, problems = intervals(log, reply.series, reply.calls, [REFERENCE])
        baseline = CleanBaseline.from_intervals(ivs) if not problems else None
        return cls(TimingStats(**stats) if stats else None, baseline,
                   series=tuple(reply.series.get(REFERENCE, [])), load=load)

    @classmethod
    def failed(cls, why: str) -> CleanTiming:
        return cls(None, None, why)


def recalibrated(cached: CleanTiming | None, *fresh: CleanTiming | None) -> CleanTiming | None:
    """The clean calibration a confirming timing's audit is judged by: the run's cached one (its reference
    timing stays the speedup's) with the renewal cost of the clean workers timed beside the confirming timing,
    the larger one (engine/clock_audit.py, "Against the clean worker": load that arrived after the cached
    calibration lengthens every renewal of both callables; CI convicted an honest relu that way). The cached
    calibration where none of them gave one."""
    got = [f.baseline for f in fresh if f is not None and f.baseline is not None]
    if cached is None or not got:
        return cached
    best = max(got, key=lambda b: b.low_per_call_ms if b.low_per_call_ms is not None else b.per_call_ms)
    cpus = [b.cpu_per_call_ms for b in got if b.cpu_per_call_ms is not None]
    if cpus:  # the CPU time too is the larger of the clean workers beside it (load varies it: util/worker_env.py)
        best = replace(best, cpu_per_call_ms=max(cpus))
    return replace(cached, baseline=best)


#: How a result whose clock findings load alone could produce is flagged (not convicted, no speedup): the
#: text of its :attr:`~multikernelbench.flags.FlagKind.CLOCK_INCONCLUSIVE` flag begins so.
INCONCLUSIVE = "clock audit inconclusive under load (not a conviction)"


def withhold_if_inconclusive(result: DeviceOutcome) -> None:
    """A timing the clock audit could not clear because of host load earns no speedup: neither an honest
    candidate's (re-run it on a quieter host) nor an attacker's that raised the load to hide behind it."""
    if any(f.kind is FlagKind.CLOCK_INCONCLUSIVE for f in result.flags):
        result.speedup = result.speedup_clean = result.speedup_compile = None
        result.speedup_low = result.speedup_high = None


class ClockRetry(Exception):
    """The first timing's audit found only what a burst of host load can also produce: time the candidate again
    in a fresh worker, whose audit confirms or clears it (engine/clock_audit.py, "Confirmation")."""


@dataclass(frozen=True)
class TimingEvidence:
    """What the parent holds of one Time request of a candidate's worker: its own log of the fresh-input
    requests (arrival times, the worker's CPU time), the worker's reply, and the clean worker's calibration."""

    log: AskLog
    reply: Timed
    fns: list[Series]
    clean: CleanTiming | None
    min_samples: int = 0
    cores: int = 1  # what a timed call could use at most (the CPU-time findings)


def judge_timing(evidence: TimingEvidence, cfg: AntiCheatConfig) -> Audit:
    """The findings of the parent's clock on one timing (typed: :class:`~.clock_records.Finding`), and the figures
    behind them; deciding what they mean (a retry, a conviction, a flag) is :func:`judge_clock`'s."""
    if not (cfg.clock_audit and cfg.runtime_checks):
        return Audit()
    clean = evidence.clean.baseline if evidence.clean is not None else None
    return audit(evidence.log, evidence.reply.series, evidence.reply.calls, evidence.fns, Series.CANDIDATE,
                 REFERENCE, clean, AuditConfig(floor_ms=cfg.clock_floor_ms, rel=cfg.clock_rel, sigmas=cfg.clock_sigmas,
                                               cores=evidence.cores), min_samples=evidence.min_samples)


def judge_clock(log: AskLog, reply: Timed, fns: list[Series], clean: CleanTiming | None, cfg: AntiCheatConfig,
                result: DeviceOutcome, min_samples: int = 0, confirming: bool = False,
                load: HostLoad | None = None, cores: int = 1) -> None:
    """Raise ``cheat_detected`` when the parent's clock shows work outside the candidate's timed call or a
    request pattern the harness never makes; record the figure on the result otherwise. A first timing whose
    only findings are load-sensitive raises :class:`ClockRetry` instead; ``confirming``: this is the timing
    that confirms them (re-timed at a quieter moment where the host allowed it). ``load``: the host's load
    during this timing; on an oversubscribed host, findings that load can excuse convict only when their excess
    exceeds the quiet bound by more than the load's factor (engine/host_load.py), else the result is flagged
    "inconclusive under load" and not convicted. ``cores``: what a timed call could use at most (the CPU-time
    findings, when the log carries the worker's CPU time)."""
    found = judge_timing(TimingEvidence(log, reply, fns, clean, min_samples, cores), cfg)
    result.outside_clock_ms = found.outside_ms
    if found.idle_off and not any(f.kind is FlagKind.IDLE_AUDIT_OFF for f in result.flags):
        result.flags.append(Flag(FlagKind.IDLE_AUDIT_OFF, found.idle_off))
    if not found.found:
        return
    all_load = all(f.load_sensitive for f in found.found)
    if not confirming and all_load:
        raise ClockRetry("; ".join(found.findings))
    texts = found.findings
    if load is not None and load.oversubscribed and all_load:
        beyond = [f for f in found.found if f.margin > load.factor or not f.excused_by_load]
        if not beyond:
            result.flags.append(Flag(
                FlagKind.CLOCK_INCONCLUSIVE,
                f"{INCONCLUSIVE}: {'; '.join(texts)}; the host had {load.label()} (factor {load.factor:.2f}), "
                f"which can stretch an honest difference that far (largest excess "
                f"{max(found.margins, default=0.0):.2f}x the quiet bound); no speedup is reported"))
            return
        texts = [f.text if not f.excused_by_load
                 else f.text + f" (beyond what a host {load.factor:.2f}x oversubscribed can stretch)" for f in beyond]
    message = "; ".join(texts)
    if confirming:
        message += " (confirmed: the second timing, in a fresh worker with the candidate loaded again, has it too)"
    raise Verdict(Status.CHEAT_DETECTED, message)


def apply_clean_reference(result: DeviceOutcome, clean: CleanTiming | None, cfg: AntiCheatConfig,
                          series: dict[str, list[float]] | None = None) -> tuple[list[float], bool]:
    """The one place that decides which reference the speedup is taken against: the clean worker's, whenever
    it timed one (issue #40: the candidate's worker can slow its own reference by hooks the worker cannot see),
    with the reference timed in the candidate's worker as a cross-check (a flag when markedly slower). Returns
    the reference samples the speedup came from and whether they are paired with the candidate's samples (the
    in-worker A/B series) for :func:`~multikernelbench.engine.speedup_evidence.attach_interval`."""
    series = series or {}
    in_worker = (list(series.get(REFERENCE, [])), True)
    if clean is None:
        return in_worker
    if clean.eager is None:
        result.flags.append(Flag(FlagKind.NO_CLEAN_REFERENCE,
                                 f"no clean reference timing ({clean.error or 'no samples'}): the speedup is taken "
                                 "against the reference in the candidate's worker, not cross-checked"))
        return in_worker
    result.clean_eager_timing = clean.eager
    cand, eager = result.candidate_timing, result.eager_timing
    if cand is None or eager is None or cand.median_ms <= 0:
        return in_worker
    result.speedup_clean = result.speedup = clean.eager.median_ms / cand.median_ms
    used = (list(clean.series), False) if clean.series else in_worker
    ratio = eager.median_ms / clean.eager.median_ms
    spread = math.hypot(_rel_spread(eager), _rel_spread(clean.eager))
    bound = max(cfg.reference_slowdown, 1.0 + 4.0 * spread)
    if ratio > bound:
        result.flags.append(Flag(
            FlagKind.REFERENCE_SLOWED,
            f"reference slowed in the candidate's worker: eager {eager.median_ms:.3f} ms there, "
            f"{clean.eager.median_ms:.3f} ms in a clean worker ({ratio:.2f}x, bound {bound:.2f}x); the speedup "
            "is taken against the clean reference"))
    return used


def _rel_spread(stats: TimingStats) -> float:
    """Relative spread of one series: how far its median lies above its fastest sample. One-sided on
    purpose: a burst of load makes a few samples slow (and the standard deviation large), never the fastest
    one faster, and a slowed reference is slow in every sample."""
    if stats.runs < 2 or stats.median_ms <= 0:
        return 0.0
    return (stats.median_ms - stats.min_ms) / stats.median_ms
