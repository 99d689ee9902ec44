"""The timing judges in one room (issue #46, item 3): ``judge_timing(evidence)`` returns every finding on a timing,
typed, in the order the device stage acts on them, and what the device stage does with them (engine/timing_verdict.py)
follows from their kinds. The clock's own findings on real request patterns: tests/test_clock_audit.py and
tests/test_load_verdicts.py; through the real engine: tests/test_timing_evidence.py."""

from __future__ import annotations

import pytest

from multikernelbench.anticheat.clock_audit import Ask, AskLog
from multikernelbench.anticheat.clock_records import FindingKind
from multikernelbench.anticheat.timing_judge import judge, judge_timing
from multikernelbench.anticheat.timing_records import CleanTiming, TimingEvidence
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.session import Verdict
from multikernelbench.engine.timing_verdict import apply_speed, enforce_bounds, enforce_claim, enforce_clock
from multikernelbench.flags import FlagKind
from multikernelbench.records import Status, TimingStats
from multikernelbench.timing.loop import Phase
from multikernelbench.wire import Series

FNS = [Series.CANDIDATE, Series.EAGER]


def _stats(median_ms: float, runs: int = 20) -> TimingStats:
    return TimingStats(median_ms, median_ms, median_ms, median_ms, 0.0, runs, 0.0, "m")


def _everything_wrong() -> TimingEvidence:
    """A worker whose reply breaks every rule at once: its samples claim more than the request took, it sent no
    sample requests, its reference ran twice as slow as the clean worker's and drifted, and its candidate is faster
    than the sanity bounds allow."""
    log = AskLog(asks=[Ask("candidate", 1, Phase.FINAL, 1.0)], end=1.001)
    stats = {"candidate": _stats(0.004), "eager": _stats(10.0)}
    series = {"candidate": [0.004] * 20, "eager": [7.0] * 10 + [13.0] * 10}
    return TimingEvidence(log, stats, series, {"candidate": 1, "eager": 1}, FNS, clean=CleanTiming(_stats(5.0), None),
                          parent_wall_ms=10.0, drift_bound=1.2, roofline_fraction=3.0)


def test_judge_timing_returns_every_finding_typed_in_the_order_the_stage_acts_on_them():
    found = judge_timing(_everything_wrong())
    kinds = [f.kind for f in found]
    assert kinds == [FindingKind.CLAIMED, FindingKind.PROTOCOL, FindingKind.PROTOCOL, FindingKind.REFERENCE_SLOWED,
                     FindingKind.REFERENCE_DRIFT, FindingKind.SPEEDUP_BOUND, FindingKind.ROOFLINE_BOUND], found
    texts = {f.kind: f.text for f in found}
    assert texts[FindingKind.CLAIMED] == "timings claim 200 ms of work inside a 10 ms request"
    assert texts[FindingKind.SPEEDUP_BOUND].startswith("speedup 1250x over eager exceeds the sanity bound 1000x")
    assert texts[FindingKind.REFERENCE_SLOWED].startswith("reference slowed in the candidate's worker: eager 10.000 ms")


def test_the_stage_carries_out_each_kind_at_its_step():
    """The stopwatch convicts first; the clock's protocol finding convicts at once (no retry); the notes become
    flags of their kinds with the same texts; the bounds convict last, against the clean reference's speedup."""
    evidence = _everything_wrong()
    verdict = judge(evidence)
    with pytest.raises(Verdict) as claim:
        enforce_claim(evidence.stats, 10.0)
    assert claim.value.status == Status.CHEAT_DETECTED and claim.value.message == verdict.claim[0].text
    out = DeviceOutcome()
    with pytest.raises(Verdict) as clock:
        enforce_clock(verdict, out)
    assert clock.value.message.startswith("timing protocol: ")
    apply_speed(evidence, verdict, out)
    assert [(f.kind, f.text) for f in out.flags] == [(FlagKind.REFERENCE_SLOWED, verdict.notes[0].text),
                                                      (FlagKind.REFERENCE_DRIFT, verdict.notes[1].text)]
    assert out.speedup == out.speedup_clean == 1250.0 and out.clean_eager_timing == _stats(5.0)
    assert out.reference_drift is not None and out.reference_drift > 1.2
    with pytest.raises(Verdict) as bounds:
        enforce_bounds(verdict)
    assert "sanity bound" in bounds.value.message and "roofline" in bounds.value.message


def test_statistics_without_a_speedup_are_judged_and_fail_where_the_stage_reads_them():
    """A worker's reply without the reference's statistics: the judge still returns the clock's findings (it never
    raises), and the device stage meets the missing statistics where it reads them, as it always did."""
    evidence = _everything_wrong()
    evidence = TimingEvidence(evidence.log, {"candidate": _stats(1.0)}, evidence.series, evidence.calls, FNS)
    verdict = judge(evidence)
    assert verdict.speed is None and FindingKind.PROTOCOL in [f.kind for f in verdict.findings]
    with pytest.raises(KeyError):
        apply_speed(evidence, verdict, DeviceOutcome())
