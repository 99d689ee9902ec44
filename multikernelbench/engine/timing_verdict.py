"""Carries out the timing judge's verdict in the device stage: anticheat/timing_judge.py decides, this raises and
writes (the stage's control flow, :class:`~.session.Verdict` and :class:`ClockRetry`, and the result's fields and
flags), so that nothing here reads a finding's text or weighs a figure.
"""

from __future__ import annotations

from multikernelbench.anticheat.clock_records import NOTE_FLAGS, AskLog, Finding, FindingKind
from multikernelbench.anticheat.timing_judge import judge_claim, speed_figures
from multikernelbench.anticheat.timing_records import CleanTiming, HostLoad, TimingEvidence, TimingVerdict
from multikernelbench.engine.messages import Timed
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.session import Verdict
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import Status, TimingStats
from multikernelbench.wire import Series


class ClockRetry(Exception):
    """The first timing's audit found only what a burst of host load can also produce: time the candidate again
    in a fresh worker, whose audit confirms or clears it (anticheat/clock_audit.py, "Confirmation")."""


def clean_timing(log: AskLog, reply: Timed, load: HostLoad | None = None) -> CleanTiming:
    """The clean worker's timing of the reference, from its reply and the parent's log of its requests."""
    return CleanTiming.from_samples(log, reply.stats, reply.series, reply.calls, load)


def enforce_claim(stats: dict[str, TimingStats], parent_wall_ms: float) -> None:
    """``cheat_detected`` when the samples claim more work than the parent's stopwatch saw the request take."""
    found = judge_claim(stats, parent_wall_ms)
    if found:
        raise Verdict(Status.CHEAT_DETECTED, "; ".join(f.text for f in found))


def _flag(note: Finding) -> Flag:
    return Flag(NOTE_FLAGS[note.kind], note.text)


def enforce_clock(verdict: TimingVerdict, out: DeviceOutcome) -> None:
    """The clock's part of the verdict: its figure and idle note on the result, then :class:`ClockRetry`, the
    "inconclusive under load" flag, or ``cheat_detected`` (anticheat/timing_judge.py, ``decide_clock``)."""
    out.outside_clock_ms = verdict.audit.outside_ms
    for note in verdict.notes:
        if note.kind is FindingKind.IDLE_AUDIT_OFF and not any(f.kind is FlagKind.IDLE_AUDIT_OFF for f in out.flags):
            out.flags.append(_flag(note))
    clock = verdict.clock
    if clock.retry:
        raise ClockRetry(clock.retry)
    if clock.inconclusive:
        out.flags.append(Flag(FlagKind.CLOCK_INCONCLUSIVE, clock.inconclusive))
    elif clock.conviction:
        raise Verdict(Status.CHEAT_DETECTED, clock.conviction)


def apply_speed(evidence: TimingEvidence, verdict: TimingVerdict, out: DeviceOutcome) -> None:
    """The timings, the speedup (against the clean reference where there is one), its interval and the notes on
    the reference; no speedup where the clock was inconclusive. Statistics without a speedup in them raise here,
    where the device stage reads them."""
    stats = evidence.stats
    out.candidate_timing = stats[Series.CANDIDATE]
    out.eager_timing = stats[Series.EAGER]
    out.compile_timing = stats.get(Series.COMPILED)
    speed = verdict.speed if verdict.speed is not None else speed_figures(evidence)
    out.speedup = speed.speedup
    if speed.speedup_compile is not None:
        out.speedup_compile = speed.speedup_compile
    if speed.clean_eager is not None:
        out.clean_eager_timing = speed.clean_eager
    if speed.speedup_clean is not None:
        out.speedup_clean = speed.speedup_clean
    if speed.low is not None:
        out.speedup_low, out.speedup_high = speed.low, speed.high
    out.reference_drift = speed.drift
    out.flags.extend(_flag(note) for note in speed.notes)
    withhold_if_inconclusive(out)


def enforce_bounds(verdict: TimingVerdict) -> None:
    """``cheat_detected`` when the speedup or the roofline fraction passes its sanity bound."""
    if verdict.bounds:
        raise Verdict(Status.CHEAT_DETECTED, "; ".join(f.text for f in verdict.bounds))


def withhold_if_inconclusive(result: DeviceOutcome) -> None:
    """A timing the clock audit could not clear because of host load earns no speedup: neither an honest
    candidate's (re-run it on a quieter host) nor an attacker's that raised the load to hide behind it."""
    if any(f.kind is FlagKind.CLOCK_INCONCLUSIVE for f in result.flags):
        result.speedup = result.speedup_clean = result.speedup_compile = None
        result.speedup_low = result.speedup_high = None
