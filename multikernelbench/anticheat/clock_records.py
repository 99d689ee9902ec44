"""The records of the parent's clock audit (anticheat/clock_audit.py): what the parent logged of one Time request,
the intervals it pairs, the clean worker's calibration, the typed findings of every timing judge
(anticheat/timing_judge.py) and the audit's outcome. Their own module so the audit's judgments stay readable;
anticheat/clock_audit.py re-exports them, and its docstring says what each figure means."""

from __future__ import annotations

import enum
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from multikernelbench.anticheat.sched_idle import IdleConfig, IdleFigures, SchedSnapshot
from multikernelbench.flags import FlagKind
from multikernelbench.timing.loop import AUDIT_MIN_SAMPLES, Phase


class FreshRequest(Protocol):
    """What the parent reads of a worker's request for fresh inputs (engine/messages.py's ``FreshAsk``): named
    here by its fields so that the judges need no import of the engine above them."""

    @property
    def fn(self) -> str: ...
    @property
    def calls(self) -> int: ...
    @property
    def phase(self) -> str: ...


@dataclass(frozen=True)
class Ask:
    fn: str
    calls: int
    phase: Phase
    t: float  # the parent's perf_counter when the request arrived (seconds)
    cpu: float | None = None  # the worker's CPU seconds then, read by the parent from /proc ("CPU time" below)
    sched: SchedSnapshot | None = None  # the worker's threads' schedstat then (anticheat/sched_idle.py)
    served: float = 0.0  # seconds the parent took from the arrival to its answer (the worker blocked on it)
    #: The parent's own threads' schedstat when its answer was ready (anticheat/sched_idle.py: from then to the next
    #: request's arrival, the worker waits on the parent only while a parent thread is runnable).
    own_answered: SchedSnapshot | None = None
    own_arrival: SchedSnapshot | None = None  # ... and when this request arrived
    #: The worker process's CPU clock then, ns (every thread, exited ones too: anticheat/call_marks.py).
    run: int | None = None


@dataclass
class AskLog:
    """Every fresh-input request of one Time request, stamped by the parent's clock on arrival."""

    clock: Callable[[], float] = time.perf_counter
    asks: list[Ask] = field(default_factory=list)
    end: float | None = None  # when the final reply arrived
    #: The worker's CPU seconds (anticheat/clock_audit.py, "CPU time"); None: not read.
    cpu_clock: Callable[[], float | None] | None = None
    end_cpu: float | None = None
    #: The worker's threads' schedstat (anticheat/sched_idle.py); None: not read.
    sched_clock: Callable[[], SchedSnapshot | None] | None = None
    end_sched: SchedSnapshot | None = None
    #: The parent's own threads' schedstat (read with ``sched_clock``); None: not read.
    own_clock: Callable[[], SchedSnapshot | None] | None = None
    end_own: SchedSnapshot | None = None
    #: The worker process's CPU clock in ns (anticheat/call_marks.py); None: not read, and no start marks expected.
    run_clock: Callable[[], int | None] | None = None
    end_run: int | None = None

    def record(self, ask: FreshRequest) -> None:
        try:
            phase = Phase(ask.phase)
        except ValueError:
            phase = None  # judged as out of order below
        t = self.clock()
        run = self.run_clock() if self.run_clock is not None else None
        if phase is Phase.START:  # a mark: its time and the CPU clock only (a few us, anticheat/call_marks.py)
            self.asks.append(Ask(str(ask.fn), int(ask.calls), phase, t, run=run))
            return
        cpu = self.cpu_clock() if self.cpu_clock is not None else None
        sched = self.sched_clock() if self.sched_clock is not None else None
        own = self.own_clock() if self.own_clock is not None else None
        self.asks.append(Ask(str(ask.fn), int(ask.calls), phase, t, cpu, sched,  # type: ignore[arg-type]
                             own_arrival=own, run=run))

    def answered(self) -> None:
        """The parent's answer to the latest request is ready: the time since its arrival is service time."""
        if self.asks and self.asks[-1].phase is not Phase.START:
            last = self.asks[-1]
            own = self.own_clock() if self.own_clock is not None else None
            self.asks[-1] = replace(last, served=max(0.0, self.clock() - last.t), own_answered=own)

    def close(self) -> None:
        self.end = self.clock()
        self.end_cpu = self.cpu_clock() if self.cpu_clock is not None else None
        self.end_sched = self.sched_clock() if self.sched_clock is not None else None
        self.end_own = self.own_clock() if self.own_clock is not None else None
        self.end_run = self.run_clock() if self.run_clock is not None else None


@dataclass(frozen=True)
class Interval:
    """One timed sample as the parent sees it."""

    fn: str
    round: int
    calls: int
    wall_ms: float
    claimed_ms: float  # the worker's claim for the whole sample (per-call time x calls)
    cpu_ms: float | None = None  # the worker's CPU time over the interval (its request to the next one)
    idle_ms: float | None = None  # time no worker thread could run, service excluded (anticheat/sched_idle.py)
    #: The worker's CPU time (ns clock) from the sample's request to its start mark (the renewal), and from the
    #: mark to the next request (the timed call and the harness's bookkeeping): anticheat/call_marks.py.
    renew_cpu_ms: float | None = None
    call_cpu_ms: float | None = None

    @property
    def unexplained_ms(self) -> float:
        return self.wall_ms - self.claimed_ms

    @property
    def per_call_ms(self) -> float:
        return self.unexplained_ms / max(1, self.calls)


@dataclass(frozen=True)
class AuditConfig:
    floor_ms: float = 0.1  # per sample: below this the parent cannot tell work from latency
    rel: float = 0.1  # of the candidate's claimed sample time: hiding less changes its speed by < 10 %
    sigmas: float = 6.0  # robust standard deviations of the median round difference
    #: The candidate's renewal may differ from the reference's by this fraction of the reference's own
    #: unexplained time: each renewal runs right after the other callable's sample, whose after-effects differ
    #: (an OpenMP pool still spinning, caches).
    within_slack: float = 0.25
    #: Rounds a median needs before anything is judged. The timing loop always takes at least this many samples
    #: of each callable (timing.loop.AUDIT_MIN_SAMPLES) unless max_runs is lower; a worker that reports fewer
    #: than the harness takes is a protocol finding (``min_samples`` of :func:`audit`).
    min_rounds: int = AUDIT_MIN_SAMPLES
    #: A callable's renewal in the candidate's worker may take this fraction longer than the clean worker's
    #: (another process, another moment; the sample before it differs). Load beyond it: anticheat/timing_records.py: HostLoad.
    clean_slack: float = 0.5
    #: CPU time ("CPU time" in the module docstring): what the clock's ticks (10 ms on Linux) and an OpenMP
    #: pool's spinning can add to an honest sample, and the fraction of the compared CPU time allowed on top.
    cpu_floor_ms: float = 40.0
    cpu_slack: float = 0.5
    #: The cores the worker may run on: a timed call of ``claimed`` ms cannot use more than ``cores`` x that.
    cores: int = 1
    #: The idle audit (anticheat/sched_idle.py): time no worker thread could run, which load does not produce.
    idle: IdleConfig = field(default_factory=IdleConfig)
    #: The start marks' CPU audit (anticheat/call_marks.py): how far the renewal's CPU time per call may pass the
    #: clean worker's (floor and fraction), and how much CPU a sample's call part may use beyond ``cores`` x its
    #: claimed time (the harness's bookkeeping after the call: holding the outputs, pinning the reference's
    #: settings, sending the raw outputs read for the parent).
    renew_cpu_floor_ms: float = 2.0
    renew_cpu_slack: float = 0.5
    call_cpu_floor_ms: float = 2.0


def robust_sigma(values: Sequence[float]) -> float:
    """A standard deviation that a few descheduled samples do not inflate: 1.4826 x the median absolute deviation."""
    mid = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - mid) for v in values)


def lower_quartile(values: Sequence[float]) -> float:
    """Hidden work lengthens every interval, a burst of load only some: the lower quartile keeps the one and
    drops the other (the median does not once a quarter of the intervals or more are hit)."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 4]


@dataclass(frozen=True)
class CleanBaseline:
    """What a clean worker's renewals cost, per renewed call, and how much that varies."""

    per_call_ms: float
    noise_ms: float  # robust standard deviation of one interval's unexplained time
    samples: int
    calls: int = 1  # calls per sample there (a sample's fixed overhead is spread over them)
    #: The lower quartile of the per-call time: what the renewal takes when no burst of load hits it.
    low_per_call_ms: float | None = None
    #: The worker's CPU time per call (its renewal and the reference's call together), median; None: not read.
    cpu_per_call_ms: float | None = None
    #: The renewal's CPU time alone per call (request to start mark, ns clock: anticheat/call_marks.py), median.
    renew_cpu_per_call_ms: float | None = None

    @classmethod
    def from_intervals(cls, intervals: list[Interval]) -> CleanBaseline | None:
        if len(intervals) < 3:
            return None
        cpus = [iv.cpu_ms / max(1, iv.calls) for iv in intervals if iv.cpu_ms is not None]
        renew = [iv.renew_cpu_ms / max(1, iv.calls) for iv in intervals if iv.renew_cpu_ms is not None]
        return cls(per_call_ms=statistics.median(iv.per_call_ms for iv in intervals),
                   noise_ms=robust_sigma([iv.unexplained_ms for iv in intervals]), samples=len(intervals),
                   calls=max(1, int(statistics.median(iv.calls for iv in intervals))),
                   low_per_call_ms=lower_quartile([iv.per_call_ms for iv in intervals]),
                   cpu_per_call_ms=statistics.median(cpus) if len(cpus) == len(intervals) else None,
                   renew_cpu_per_call_ms=statistics.median(renew) if len(renew) == len(intervals) else None)


class FindingKind(enum.Enum):
    """What a timing judge found (anticheat/timing_judge.py returns every kind). The parent's clock: its kinds
    from PROTOCOL to IDLE (anticheat/clock_audit.py's module docstring names each); the rest judge the request's
    wall time, the reference's speed and the speedup."""

    PROTOCOL = "protocol"  # requests out of the loop's order, or not matching the samples reported
    OVERLAP = "overlap"  # a sample claims more than the wall time between its request and the next one
    OUTSIDE_CALL = "outside_call"  # round by round, the candidate's renewals take longer than the reference's
    REFERENCE_TURN = "reference_turn"  # ... or the reference's longer than the candidate's
    OVER_CLEAN = "over_clean"  # a callable's renewals take longer than the clean worker's
    CPU_TIME = "cpu_time"  # the worker's CPU time around a callable's samples beyond what it can explain
    IDLE = "idle"  # no thread of the worker runnable around a callable's samples: it slept (anticheat/sched_idle.py)
    CLAIMED = "claimed"  # the samples claim more work than the request's wall time holds (the parent's stopwatch)
    SPEEDUP_BOUND = "speedup_bound"  # the speedup over eager passes the sanity bound
    ROOFLINE_BOUND = "roofline_bound"  # the candidate's time is faster than the hardware's roofline
    # Notes: flagged on the result, never a conviction.
    NO_CLEAN_REFERENCE = "no_clean_reference"  # the clean worker gave no reference timing: nothing cross-checked
    REFERENCE_SLOWED = "reference_slowed"  # the reference ran markedly slower in the candidate's worker
    REFERENCE_DRIFT = "reference_drift"  # the reference moved between the halves of its samples
    IDLE_AUDIT_OFF = "idle_audit_off"  # the worker's schedstat could not be read: no idle audit this timing


#: Kinds a burst of host load can also produce: they convict only when a second timing has them too.
LOAD_SENSITIVE = frozenset({FindingKind.OUTSIDE_CALL, FindingKind.REFERENCE_TURN, FindingKind.OVER_CLEAN,
                            FindingKind.CPU_TIME, FindingKind.IDLE})
#: Load-sensitive kinds that load does not excuse (descheduling adds wall time, little CPU time, no sleep).
NOT_EXCUSED_BY_LOAD = frozenset({FindingKind.CPU_TIME, FindingKind.IDLE})
#: The parent's clock's kinds (anticheat/clock_audit.py): what decides a retry, a conviction or "inconclusive".
CLOCK_KINDS = frozenset({FindingKind.PROTOCOL, FindingKind.OVERLAP}) | LOAD_SENSITIVE
#: The sanity bounds on the speedup and the roofline: they convict after the outputs of the timed calls passed.
BOUND_KINDS = frozenset({FindingKind.SPEEDUP_BOUND, FindingKind.ROOFLINE_BOUND})
#: The notes, and the kind of flag each becomes on the result (the same text).
NOTE_FLAGS = {FindingKind.NO_CLEAN_REFERENCE: FlagKind.NO_CLEAN_REFERENCE,
              FindingKind.REFERENCE_SLOWED: FlagKind.REFERENCE_SLOWED,
              FindingKind.REFERENCE_DRIFT: FlagKind.REFERENCE_DRIFT,
              FindingKind.IDLE_AUDIT_OFF: FlagKind.IDLE_AUDIT_OFF}


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    text: str
    #: Load-sensitive kinds: the excess over the bound the finding would have had on a quiet host (no noise
    #: term). A host ``f`` times oversubscribed can stretch an honest systematic difference about ``f`` times, and
    #: load in bursts further than the readings show, so a confirming timing on an oversubscribed host convicts only
    #: by a finding with a margin above ``max(f, LOAD_PROOF_MARGIN)`` (anticheat/timing_judge.py, timing_records.py).
    margin: float = 0.0

    @property
    def load_sensitive(self) -> bool:
        return self.kind in LOAD_SENSITIVE

    @property
    def excused_by_load(self) -> bool:
        return self.load_sensitive and self.kind not in NOT_EXCUSED_BY_LOAD


@dataclass
class Audit:
    """The outcome: typed findings (empty when clean) and the figures behind them."""

    found: list[Finding] = field(default_factory=list)
    intervals: list[Interval] = field(default_factory=list)
    outside_ms: float | None = None  # the candidate's excess unexplained time per call (within the worker)
    #: Per callable, its median unexplained time per call minus the clean worker's renewal (ms).
    over_clean_ms: dict[str, float] = field(default_factory=dict)
    #: Per callable, its idle figures (anticheat/sched_idle.py); empty when the kernel keeps no schedstat.
    idle: list[IdleFigures] = field(default_factory=list)
    idle_off: str = ""  # why the idle audit judged nothing though the parent tried to read schedstat

    def add(self, kind: FindingKind, text: str, margin: float = 0.0) -> None:
        self.found.append(Finding(kind, text, margin))

    @property
    def findings(self) -> list[str]:
        """Every finding's text, in the order found."""
        return [f.text for f in self.found]

    @property
    def load_sensitive(self) -> list[str]:
        return [f.text for f in self.found if f.load_sensitive]

    @property
    def margins(self) -> list[float]:
        """Per load-sensitive finding (same order as :attr:`load_sensitive`), its :attr:`Finding.margin`."""
        return [f.margin for f in self.found if f.load_sensitive]

    @property
    def cpu(self) -> list[str]:
        return [f.text for f in self.found if f.kind is FindingKind.CPU_TIME]
