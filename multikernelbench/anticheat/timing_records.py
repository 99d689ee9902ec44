"""The records of the timing verdict: everything the parent holds of one timing (:class:`TimingEvidence`) and what
anticheat/timing_judge.py makes of it (:class:`TimingVerdict`).

Why one evidence record: the verdict on a timing rests on the parent's stopwatch over the request, its log of the
fresh-input requests (arrival times, the worker's CPU time and schedstat), the clean worker's reference and
calibration, the host's load and the speed figures; spread over a function's arguments, each judge took its own
subset and the rules were hard to read side by side. The judge takes them together and returns every finding.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from multikernelbench.anticheat.clock_audit import intervals
from multikernelbench.anticheat.clock_records import (
    BOUND_KINDS,
    NOTE_FLAGS,
    AskLog,
    Audit,
    CleanBaseline,
    Finding,
    FindingKind,
)
from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.records import TimingStats
from multikernelbench.wire import REFERENCE, Series

#: The load factor never exceeds this: a candidate that starts busy threads of its own raises the host's load,
#: and with it the bound it is judged by; capped, that buys it at most this factor (the README's limits).
MAX_FACTOR = 4.0
#: CPU pressure (``/proc/pressure/cpu`` "some", share of the last 10 s in which a runnable task waited for a core)
#: from which the host counts as oversubscribed whatever the runnable count said. The count is read twice, before
#: and after a timing; load that comes in bursts between the readings (another evaluation's compiles and OpenMP
#: timings, the other xdist worker) leaves it at 1-3 on 2 cores while the pressure over the same seconds is high:
#: the honest relu of tests/test_prefetch.py was convicted so (benchmarks/test_suite_2core/cirun_004f783_loaded.log:
#: ~3.66 ms per call, a margin over its quiet bound of about 1.2-1.5, confirmed by a timing whose factor was read
#: lower still).
PSI_BUSY = 25.0
#: A confirming timing on an oversubscribed host convicts by a load-excusable finding only when its excess over the
#: quiet bound passes this (and the factor): well beyond what load produced on honest candidates. Measured
#: (scripts/honest_audit_under_load.py, 2026-12-05: the honest relus of tests/test_prefetch.py and the Python-allocating
#: twin beside 0-8 pinned busy loops, a memory-bandwidth hog and another evaluation, factor 2.1-4.0, 35 timings): the
#: round differences' margin over the quiet bound reached 2.62 (the candidate's renewal page-faulting a fresh 8 MB
#: in 3 of its 4 rounds, the reference's in none, each fault burst stretched by the load); the CI conviction above
#: ~1.2-1.5; issue #40's first one 1.05. 6 is 2.3x the largest.
LOAD_PROOF_MARGIN = 6.0


@dataclass(frozen=True)
class HostLoad:
    """How busy the host was while a timing ran, read by the parent from /proc (engine/host_load.py reads it)."""

    cores: int
    procs_running: int | None  # runnable tasks when read (the reading process is one of them)
    load1: float | None
    psi_some_avg10: float | None  # percent
    psi_full_avg10: float | None
    #: Compute processes on the timed GPU outside this run's process tree (engine/gpu_neighbours.py); None
    #: when not read (a CPU timing, no NVML). The GPU time-slices between them and this timing's worker.
    gpu_others: int | None = None

    @property
    def gpu_shared(self) -> bool:
        return bool(self.gpu_others)

    @property
    def runnable_others(self) -> float:
        """Runnable tasks besides the reader: the larger of the instant count and the 1-minute average."""
        now = (self.procs_running - 1) if self.procs_running is not None else 0
        return float(max(now, self.load1 or 0.0))

    @property
    def factor(self) -> float:
        """How much longer than on a quiet host an interval may take: runnable tasks per core, >= 1, capped."""
        return min(MAX_FACTOR, max(1.0, self.runnable_others / max(1, self.cores)))

    @property
    def pressured(self) -> bool:
        """Tasks waited for a core in at least :data:`PSI_BUSY` percent of the last 10 s (bursts the count missed)."""
        return self.psi_some_avg10 is not None and self.psi_some_avg10 >= PSI_BUSY

    @property
    def oversubscribed(self) -> bool:
        return self.factor > 1.0 or self.pressured

    def to_dict(self) -> dict[str, float | int | bool | None]:
        return {**asdict(self), "factor": round(self.factor, 3), "oversubscribed": self.oversubscribed}

    def label(self) -> str:
        psi = f", cpu pressure {self.psi_some_avg10:.0f} %" if self.psi_some_avg10 is not None else ""
        gpu = f", {self.gpu_others} other process(es) on the GPU" if self.gpu_others else ""
        return f"{self.runnable_others:.1f} runnable on {self.cores} cores{psi}{gpu}"


@dataclass(frozen=True)
class CleanTiming:
    """The reference as a clean worker timed it, and what its input renewals cost there."""

    eager: TimingStats | None
    baseline: CleanBaseline | None
    error: str = ""  # why there is none (the clean worker failed)
    series: tuple[float, ...] = ()  # the reference's samples there (ms per call): the speedup's interval
    load: HostLoad | None = None  # the host's load while it ran (engine/host_load.py)

    @classmethod
    def from_samples(cls, log: AskLog, stats: dict[str, dict[str, Any]], series: dict[str, list[float]],
                     calls: dict[str, int], load: HostLoad | None = None) -> CleanTiming:
        """From a clean worker's reply (its statistics, samples and calls per sample) and the parent's log."""
        got = stats.get(REFERENCE)
        ivs, problems = intervals(log, series, calls, [REFERENCE])
        baseline = CleanBaseline.from_intervals(ivs) if not problems else None
        return cls(TimingStats(**got) if got else None, baseline, series=tuple(series.get(REFERENCE, [])), load=load)

    @classmethod
    def failed(cls, why: str) -> CleanTiming:
        return cls(None, None, why)


@dataclass(frozen=True)
class TimingEvidence:
    """What the parent holds of one Time request of a candidate's worker: everything its verdict rests on."""

    log: AskLog  # the parent's log of the fresh-input requests (arrival times, the worker's CPU time, schedstat)
    stats: dict[str, TimingStats]  # what the worker claims per callable
    series: dict[str, list[float]]  # every sample's time per call, per callable (the worker's claim)
    calls: dict[str, int]  # calls per sample, per callable
    fns: list[Series]  # the callables timed, in the loop's order
    clean: CleanTiming | None = None  # the run's clean reference: the speedup is taken against it
    #: The calibration the clock audit is judged by when it is not ``clean``'s: the clean workers timed beside a
    #: confirming timing (:func:`~.timing_judge.recalibrated`).
    recalibrated: CleanTiming | None = None
    cfg: AntiCheatConfig = field(default_factory=AntiCheatConfig)
    parent_wall_ms: float | None = None  # the parent's stopwatch over the whole request; None: not judged
    min_samples: int = 0  # the samples the harness's loop takes of every callable at least
    cores: int = 1  # what a timed call could use at most (the CPU-time findings)
    confirming: bool = False  # this is the second timing, in a fresh worker, that confirms or clears the first's
    load: HostLoad | None = None  # the host's load during this timing
    drift_bound: float = float("inf")  # how far the reference may drift between the halves of its samples
    roofline_fraction: float | None = None  # the candidate's median against the hardware's roofline

    @property
    def calibration(self) -> CleanTiming | None:
        return self.recalibrated if self.recalibrated is not None else self.clean


@dataclass(frozen=True)
class ClockDecision:
    """What the parent's clock findings mean for one timing: at most one of the three set (none: clear)."""

    retry: str = ""  # only load-sensitive findings in a first timing: time again in a fresh worker
    conviction: str = ""  # ``cheat_detected`` with this message
    inconclusive: str = ""  # what load alone could produce: this flag, and no speedup


@dataclass(frozen=True)
class SpeedFigures:
    """The speedup and its uncertainty, taken against the clean worker's reference where there is one."""

    speedup: float
    speedup_compile: float | None
    speedup_clean: float | None  # set when taken against the clean reference
    clean_eager: TimingStats | None  # the clean worker's reference timing
    low: float | None  # the speedup's interval
    high: float | None
    drift: float | None  # the reference's drift between the halves of the series the speedup came from
    notes: tuple[Finding, ...] = ()  # no clean reference, a slowed reference, a drifting one (in that order)


@dataclass(frozen=True)
class TimingVerdict:
    """Every finding on one timing and what they decide. ``speed`` is None where the worker's statistics give no
    speedup (the device stage meets that when it reads them)."""

    findings: list[Finding]
    audit: Audit  # the clock's figures behind its findings
    clock: ClockDecision
    speed: SpeedFigures | None

    @property
    def claim(self) -> list[Finding]:
        """The stopwatch's finding: judged before anything else (anticheat/timing_judge.py, :func:`judge_claim`)."""
        return [f for f in self.findings if f.kind is FindingKind.CLAIMED]

    @property
    def bounds(self) -> list[Finding]:
        """The sanity bounds' findings: judged after the outputs of the timed calls."""
        return [f for f in self.findings if f.kind in BOUND_KINDS]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.kind in NOTE_FLAGS]
