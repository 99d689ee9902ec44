"""What each stage of an evaluation returns, and the one function that turns it into the stored record.

Why: one :class:`~multikernelbench.records.EvalResult` used to be written by the build stage, the device stage
and the runner, from three threads, its status set in eight places; which stage had set which field was
visible only by reading all three. Now the build stage returns a :class:`BuildOutcome`, the device stage a
:class:`DeviceOutcome`, the runner's own decisions are a :class:`HarnessError` or a :class:`Skipped`, and
:func:`record` is the only code that writes a stage's findings into an ``EvalResult`` (the scheduler calls it
from its thread, engine/scheduler.py, for local and Ray runs alike; the stages' ``run(result)`` entry points, for
one candidate evaluated alone, call it too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from multikernelbench.engine.messages import DEVICE_ALLOCATION_FAILED
from multikernelbench.flags import Flag
from multikernelbench.reasons import lead_with_cause
from multikernelbench.records import CorrectnessReport, EvalResult, FailureKind, Status, TimingStats


@dataclass
class BuildOutcome:
    """The build stage's outcome. ``ok``: built (or found built), go on to the device stage; else ``status``,
    ``failure`` and ``message`` are the verdict."""

    ok: bool
    status: Status | None = None
    failure: FailureKind | None = None
    message: str = ""
    compile_time_s: float | None = None  # None: not measured (a static check stopped it before any build)
    stdout: str | None = None  # the compile worker's output; None when no worker ran
    cached: bool = False
    flags: list[Flag] = field(default_factory=list)
    #: The record this outcome was written into, when it came from ``BuildStage.run(..., result)``.
    result: EvalResult | None = None


@dataclass
class DeviceOutcome:
    """The device stage's outcome: the verdict, the correctness report and every measurement taken (also those
    taken before a later check failed: a cheat caught after timing keeps its timings in the record)."""

    status: Status = Status.RUNTIME_ERROR  # until the stage decides (a harness error leaves it so)
    message: str = ""
    failure: FailureKind | None = None
    correctness: CorrectnessReport = field(default_factory=CorrectnessReport)
    timing_shape: dict[str, Any] | None = None
    candidate_timing: TimingStats | None = None
    eager_timing: TimingStats | None = None
    compile_timing: TimingStats | None = None
    speedup: float | None = None
    speedup_compile: float | None = None
    roofline_fraction: float | None = None
    clean_eager_timing: TimingStats | None = None
    speedup_clean: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    reference_drift: float | None = None
    outside_clock_ms: float | None = None
    host_load: dict | None = None
    fresh_shapes_checked: int | None = None
    flags: list[Flag] = field(default_factory=list)
    stdout: str | None = None  # the last device worker's output; None when no worker started

    #: The fields copied as they are onto the record.
    MEASURED: ClassVar[tuple[str, ...]] = (
        "correctness", "timing_shape", "candidate_timing", "eager_timing", "compile_timing", "speedup",
        "speedup_compile", "roofline_fraction", "clean_eager_timing", "speedup_clean", "outside_clock_ms",
        "fresh_shapes_checked", "speedup_low", "speedup_high", "reference_drift", "host_load")

    def out_of_memory(self) -> bool:
        """Ended in a device out-of-memory: what the neighbours' blame (engine/gpu_neighbours.py) and the lanes'
        retry alone (engine/lane_gate.py) both ask."""
        return self.failure is FailureKind.RESOURCE_LIMIT and (
            "out of memory" in self.message or any(m in self.message for m in DEVICE_ALLOCATION_FAILED))


@dataclass
class HarnessError:
    """A stage raised where it should have returned (a harness bug): recorded on this candidate as a runtime
    error, with what the stage had found until then (``partial``), so the run goes on."""

    message: str
    partial: DeviceOutcome | None = None
    #: The harness's own step ran out of memory (the parent's check of the timed outputs on the GPU, beside
    #: other lanes' workers): not a bug to report but crowding, which the lanes' retry alone answers.
    device_oom: bool = False

    def out_of_memory(self) -> bool:
        return self.device_oom


@dataclass
class Skipped:
    """Not started: the run's time limit came first. Returned to the caller, neither stored nor emitted."""

    message: str


Outcome = BuildOutcome | DeviceOutcome | HarnessError | Skipped


def record(result: EvalResult, outcome: Outcome) -> EvalResult:
    """Write one stage's outcome into the record: the build's first, then the device stage's."""
    if isinstance(outcome, BuildOutcome):
        if outcome.compile_time_s is not None:
            result.compile_time_s = outcome.compile_time_s
        if outcome.stdout is not None:
            result.stdout = outcome.stdout
        result.flags.extend(outcome.flags)
        if not outcome.ok:
            assert outcome.status is not None, "a failed build says why"
            _verdict(result, outcome.status, outcome.message, outcome.failure)
    elif isinstance(outcome, DeviceOutcome):
        for name in DeviceOutcome.MEASURED:
            setattr(result, name, getattr(outcome, name))
        result.flags.extend(outcome.flags)
        if outcome.stdout is not None:
            result.stdout = outcome.stdout
        _verdict(result, outcome.status, outcome.message, outcome.failure)
    elif isinstance(outcome, HarnessError):
        if outcome.partial is not None:
            record(result, outcome.partial)
        _verdict(result, Status.RUNTIME_ERROR, outcome.message, FailureKind.HARNESS_ERROR)
    elif isinstance(outcome, Skipped):
        result.message = outcome.message
    return result


def _verdict(result: EvalResult, status: Status, message: str, failure: FailureKind | None) -> None:
    result.status, result.message, result.failure = status, lead_with_cause(message), failure  # cause first
