"""Typed records passed between stages.

Statuses are an enum, never free strings, so that metrics cannot silently miscount a misspelt status, and
absent measurements are ``None`` rather than sentinel numbers that could leak into a geomean.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import Any

from multikernelbench import flags as flag_rows
from multikernelbench.flags import Flag
from multikernelbench.reasons import lead_with_cause


class Status(str, enum.Enum):
    """Outcome of evaluating one candidate on one task (ordered roughly by how far it got)."""

    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    CRASH = "crash"
    INCORRECT = "incorrect"
    CHEAT_DETECTED = "cheat_detected"
    CORRECT = "correct"
    UNAVAILABLE = "unavailable"  # backend's toolchain or device missing: nothing was run

    @property
    def compiled(self) -> bool:
        return self not in (Status.COMPILE_ERROR, Status.UNAVAILABLE)


class FailureKind(str, enum.Enum):
    """Finer reason for an INCORRECT / RUNTIME_ERROR result, used by the report's failure breakdown."""

    VALUE_MISMATCH = "value_mismatch"
    SHAPE_MISMATCH = "shape_mismatch"
    DTYPE_MISMATCH = "dtype_mismatch"
    NON_FINITE = "non_finite"
    INPUT_MODIFIED = "input_modified"
    BAD_OUTPUT_TYPE = "bad_output_type"
    MISSING_MODELNEW = "missing_modelnew"
    EXCEPTION = "exception"
    SIGNAL = "signal"
    RESOURCE_LIMIT = "resource_limit"
    TIMED_OUTPUT_MISMATCH = "timed_output_mismatch"
    #: The sandbox blocked what an honest author writes without knowing the harness (a build folder of its
    #: own, a lazy build inside forward): not counted as a cheat (anticheat/refusals.py).
    ENVIRONMENT_REFUSED = "environment_refused"
    #: The harness failed, not the candidate (a stage raised: the parent out of GPU memory, a task's reference
    #: that raises): stored so the run goes on, never reused as the candidate's answer (evaluated again on the
    #: next run over the same store) and shown apart in the report.
    HARNESS_ERROR = "harness_error"


MESSAGE_LIMIT = 4000


def truncate(text: str | None, limit: int = MESSAGE_LIMIT) -> str:
    """Keep the head and the tail of long messages: compiler errors put the cause first, tracebacks last."""
    if not text:
        return ""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 40
    return f"{text[:head]}\n... [{len(text) - head - tail} characters cut] ...\n{text[-tail:]}"


class StopReason(str, enum.Enum):
    """Why the timing loop stopped sampling one callable (timing/loop.py, timing/stopping.py)."""

    MAX_RUNS = "max_runs"  # the cap on samples
    BUDGET = "budget"  # its wall budget was spent (after the clock audit's floor of samples)
    CONVERGED = "converged"  # the relative standard error of its own mean reached the target
    DECIDED = "decided"  # adaptive: the speedup's interval cleared every alpha, narrower than the resolution


@dataclass
class TimingStats:
    """Repeated timings of one callable, in milliseconds."""

    median_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    std_ms: float
    runs: int
    rel_std_err: float  # standard error of the mean / mean
    method: str
    #: Why sampling stopped; None in records made before the field (or a reason this version does not know).
    stop: StopReason | None = None

    def __post_init__(self) -> None:
        if self.stop is not None and not isinstance(self.stop, StopReason):
            self.stop = StopReason(self.stop) if self.stop in StopReason._value2member_map_ else None


@dataclass
class CorrectnessReport:
    trials: int = 0
    passed: int = 0
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    failed_shape: dict[str, Any] | None = None
    failure: FailureKind | None = None


@dataclass
class EvalResult:
    """Everything known about one (task, candidate) evaluation; one row of the results store."""

    task_id: str
    task_hash: str
    backend: str
    candidate: str  # a label: file path or generation id
    code_hash: str
    status: Status
    message: str = ""
    failure: FailureKind | None = None
    compile_time_s: float | None = None
    correctness: CorrectnessReport = field(default_factory=CorrectnessReport)
    timing_shape: dict[str, Any] | None = None
    candidate_timing: TimingStats | None = None
    eager_timing: TimingStats | None = None
    compile_timing: TimingStats | None = None  # torch.compile baseline, when measured
    speedup: float | None = None  # eager median / candidate median
    speedup_compile: float | None = None
    roofline_fraction: float | None = None
    #: The eager reference timed by a clean worker (one that never loaded candidate code), once per task and
    #: run, and the candidate's speedup against it. ``speedup`` uses it instead of the eager timing from the
    #: candidate's own worker when that was markedly slower (flagged).
    clean_eager_timing: TimingStats | None = None
    speedup_clean: float | None = None
    #: The 95% interval of ``speedup`` from the paired A/B samples (timing/interval.py); None when too few
    #: samples, or in records made before the field.
    speedup_low: float | None = None
    speedup_high: float | None = None
    #: How far the reference's own timing moved between the first and second half of its samples (a factor
    #: >= 1); beyond ``TimingConfig.drift_bound`` the result is flagged: its speedup is less certain.
    reference_drift: float | None = None
    #: The parent's clock: the candidate's unexplained time per call beyond the reference's in the same
    #: worker (ms; ~0 when honest; see anticheat/clock_audit.py).
    outside_clock_ms: float | None = None
    #: The host's load during the candidate's timing and the clean reference's (engine/host_load.py:
    #: runnable tasks, 1-minute load, CPU pressure, the factor the clock audit's verdict allowed for).
    host_load: dict[str, Any] | None = None
    #: ``--fresh-shapes``: how many shapes drawn this run from the task's SHAPE_RANGES passed (0: the task
    #: declares none, so none could be checked); None when the run did not ask for them. The runner reuses a
    #: stored correct result for a run that asks for fresh shapes only when this is set.
    fresh_shapes_checked: int | None = None
    #: Non-fatal notes, each with its kind (multikernelbench/flags.py); stored as ``flags`` (texts) and
    #: ``flag_kinds``.
    flags: list[Flag] = field(default_factory=list)
    hardware: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    #: The kernel sandbox its workers ran under (engine/kernel_sandbox.py: ``landlock7+seccomp``, or ``weak:...``
    #: when the user accepted less); "" in records made before the sandbox existed.
    sandbox: str = ""
    #: The evaluation policy (anticheat/policy.py): ``mkb`` (the compute runs in the candidate's own kernel)
    #: or ``kernelbench`` (PyTorch ops allowed in forward); records made before the field read back as ``mkb``.
    policy: str = "mkb"
    started_at: float | None = None
    finished_at: float | None = None

    def __post_init__(self) -> None:
        self.message = truncate(lead_with_cause(self.message))  # the cause first; old records too, on reading
        self.stdout = truncate(self.stdout, 2000)

    def to_dict(self) -> dict[str, Any]:
        return {**_to_jsonable(dataclasses.asdict(self)), **flag_rows.to_row(self.flags)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EvalResult:
        d = dict(d)
        d["status"] = Status(d["status"])
        d["failure"] = FailureKind(d["failure"]) if d.get("failure") else None
        corr = dict(d.get("correctness") or {})
        if corr.get("failure"):
            corr["failure"] = FailureKind(corr["failure"])
        d["correctness"] = CorrectnessReport(**corr)
        for key in ("candidate_timing", "eager_timing", "compile_timing", "clean_eager_timing"):
            if d.get(key):
                d[key] = TimingStats(**d[key])
        d["flags"] = flag_rows.from_row(d.get("flags"), d.get("flag_kinds"))
        if "fresh_shapes_checked" not in d:  # a record made before the field: its flag said the same
            d["fresh_shapes_checked"] = flag_rows.legacy_fresh_shapes(d["flags"])
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def _to_jsonable(obj: Any) -> Any:
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, dict):
        return {k: _to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v) for v in obj]
    if isinstance(obj, float) and obj != obj:  # NaN is not JSON
        return None
    return obj
