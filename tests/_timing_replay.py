"""Timings replayed through the real clock judge: request logs rebuilt from recorded (or synthetic) intervals, and the
device stage's clock step on them (anticheat/timing_judge.py's verdict carried out by engine/timing_verdict.py).
Shared by tests/test_load_verdicts.py and tests/test_load_verdicts_recorded.py."""

from __future__ import annotations

from typing import TypeVar

from multikernelbench.anticheat.clock_records import Ask, AskLog
from multikernelbench.anticheat.sched_idle import SchedSnapshot
from multikernelbench.anticheat.timing_judge import judge
from multikernelbench.anticheat.timing_records import CleanTiming, HostLoad, TimingEvidence
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.timing_verdict import enforce_clock
from multikernelbench.timing.loop import Phase, round_order
from multikernelbench.wire import Series

S = TypeVar("S", bound=tuple)
FNS = ["candidate", "eager"]
CALLS = {"candidate": 1, "eager": 1}


def judge_clock(log: AskLog, series: dict[str, list[float]], clean: CleanTiming | None, out: DeviceOutcome, *,
                min_samples: int = 0, confirming: bool = False, load: HostLoad | None = None, cores: int = 1) -> None:
    """The device stage's clock step on one timing: its evidence judged, the clock's decision carried out."""
    evidence = TimingEvidence(log, {}, series, CALLS, [Series.CANDIDATE, Series.EAGER], clean=clean,
                              min_samples=min_samples, cores=cores, confirming=confirming, load=load)
    enforce_clock(judge(evidence), out)


def alternated(samples: list[S]) -> list[S]:
    """Samples recorded (or written) in the loop's old fixed order (candidate, reference, candidate, ...) in the order
    the loop takes them since 2026-12-07, turning round every round (timing/loop.py ``round_order``): each
    interval stays as recorded, and the rounds keep their pairs."""
    rounds: list[list[S]] = []
    for s in samples:
        if not rounds or any(o[0] == s[0] for o in rounds[-1]):  # type: ignore[index]
            rounds.append([])
        rounds[-1].append(s)
    return [s for r, group in enumerate(rounds) for s in round_order(group, r)]


def recorded(samples: list[tuple[str, float, float, float]]) -> tuple[AskLog, dict[str, list[float]]]:
    """A timing's requests rebuilt from recorded intervals: (callable, wall ms from its request to the next,
    claimed ms, the worker's CPU ms over it), one call per sample."""
    samples = alternated(samples)
    t, cpu, log = 100.0, 50.0, AskLog()
    series: dict[str, list[float]] = {}
    for fn, wall, claimed, used in samples:
        log.asks.append(Ask(fn, 1, Phase.SAMPLE, t, cpu))
        series.setdefault(fn, []).append(claimed)
        t, cpu = t + wall / 1e3, cpu + used / 1e3
    log.asks.append(Ask(samples[0][0], 1, Phase.FINAL, t, cpu))
    log.end, log.end_cpu = t + 5e-4, cpu
    return log, series


def recorded_sched(samples: list[tuple[str, float, float, float, float, float, float]]):
    """A timing's requests rebuilt from recorded intervals with the schedstat figures (anticheat/sched_idle.py): the
    worker's and the parent's answering thread's cumulative runnable ns advance by the recorded amounts."""
    samples = alternated(samples)
    t, cpu, worker, own, log = 100.0, 50.0, 0, 0, AskLog()
    series: dict[str, list[float]] = {}
    for fn, wall, claimed, used, served, ran, parent in samples:
        log.asks.append(Ask(fn, 1, Phase.SAMPLE, t, cpu, SchedSnapshot({1: worker}), served / 1e3,
                            SchedSnapshot({2: own}), SchedSnapshot({2: own})))
        series.setdefault(fn, []).append(claimed)
        t, cpu, worker, own = t + wall / 1e3, cpu + used / 1e3, worker + int(ran * 1e6), own + int(parent * 1e6)
    log.asks.append(Ask(samples[0][0], 1, Phase.FINAL, t, cpu, SchedSnapshot({1: worker}),
                        own_arrival=SchedSnapshot({2: own})))
    log.end, log.end_cpu, log.end_sched, log.end_own = t + 5e-4, cpu, SchedSnapshot({1: worker}), SchedSnapshot({2: own})
    return log, series


def recorded_marks(samples: list[tuple[str, float, float, float, float, float]], marks: bool = True):
    """A timing's requests rebuilt from recorded intervals with their start marks (anticheat/call_marks.py): the
    process CPU clock advances by the renewal's CPU up to the mark and by the call part's after it."""
    samples = alternated(samples)
    t, cpu, run = 100.0, 50.0, 10**9
    log = AskLog(run_clock=(lambda: None) if marks else None)  # a CPU clock read: marks expected
    series: dict[str, list[float]] = {}
    for fn, wall, claimed, used, renew, call in samples:
        log.asks.append(Ask(fn, 1, Phase.SAMPLE, t, cpu, run=run if marks else None))
        if marks:
            log.asks.append(Ask(fn, 1, Phase.START, t + (wall - claimed) / 2e3, run=run + int(renew * 1e6)))
        series.setdefault(fn, []).append(claimed)
        t, cpu, run = t + wall / 1e3, cpu + used / 1e3, run + int((renew + call) * 1e6)
    log.asks.append(Ask(samples[0][0], 1, Phase.FINAL, t, cpu, run=run if marks else None))
    log.end, log.end_cpu, log.end_run = t + 5e-4, cpu, run if marks else None
    return log, series
