"""The worker protocol as types: one dataclass per request and per reply, and an enum of error kinds.

Why: the parent and the worker used to share ~45 string keys in dicts, dispatched by ``getattr(f"op_{op}")``
and classified failures by substring. A typo there silently became a wrong verdict. Now a message is a
frozen dataclass; its JSON form is ``{"type": <class name>, **fields}``; the worker dispatches on the type
from a table; a failure carries an :class:`ErrorKind` decided where it is known (in the worker, from the
exception's type); tensors travel beside the header (see :mod:`multikernelbench.engine.protocol`).

Conversation: the parent sends a request; the worker answers with exactly one final reply, except during
:class:`Time`, where it may first send any number of :class:`FreshAsk` messages, each answered by a
:class:`FreshGrant` (the seeds of the next sample's inputs and which held outputs to sample; see
:mod:`multikernelbench.engine.fresh`), and during :class:`CompileBaseline` with ``take_turns``, where it
asks for and gives back the shared GPU with :class:`DeviceTurn`, each answered by :class:`TurnGranted`.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from multikernelbench.wire import Evidence


class ErrorKind(str, enum.Enum):
    """Why a request failed inside the worker."""

    EXCEPTION = "exception"  # the candidate (or the harness on its behalf) raised
    EXIT = "exit"  # the candidate called sys.exit
    MISSING_MODELNEW = "missing_modelnew"
    BAD_OUTPUT_TYPE = "bad_output_type"  # not a plain dense torch.Tensor
    OUT_OF_MEMORY = "out_of_memory"  # host or device allocation failed
    FILE_TOO_LARGE = "file_too_large"  # RLIMIT_FSIZE hit (EFBIG)
    PROTOCOL = "protocol"  # an unknown or malformed message, an unsendable reply


#: How a device allocation failure reads where torch raises it as a plain RuntimeError: CUDA's own, and the CUDA
#: libraries' handles and workspaces (cuBLAS's ``cublasCreate`` failed this way for an honest candidate with eight
#: lanes on an 80 GB H100, 2026-12-07, and was scored a runtime error instead of being evaluated again alone).
DEVICE_ALLOCATION_FAILED = ("CUDA out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED",
                            "CUFFT_ALLOC_FAILED", "CUSOLVER_STATUS_ALLOC_FAILED", "CUSPARSE_STATUS_ALLOC_FAILED")


class Message:
    """Base of every message; subclasses are dataclasses registered by name."""

    registry: ClassVar[dict[str, type[Message]]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        Message.registry[cls.__name__] = cls

    @classmethod
    def op(cls) -> str:
        """The request's name in messages and traces: ``CompileBaseline`` -> ``compile_baseline``."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    def to_header(self) -> dict[str, Any]:
        return {"type": type(self).__name__, **_plain(dataclasses.asdict(self))}  # type: ignore[call-overload]

    @staticmethod
    def from_header(header: dict[str, Any]) -> Message:
        cls = Message.registry.get(str(header.get("type")))
        if cls is None:
            raise ValueError(f"unknown message type {header.get('type')!r}")
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in header.items() if k in names})


def _plain(obj: Any) -> Any:
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


# ---- requests (parent -> worker) ------------------------------------------------------------------------

@dataclass(frozen=True)
class Setup(Message):
    """First message to every worker: what it works on. Sent once, not repeated in every request."""

    backend: str
    backend_options: dict[str, Any]
    build_dir: str
    threads: int = 0
    task: dict[str, Any] | None = None  # Task.to_row(); absent for compile workers
    runtime_checks: bool = True
    require_custom_kernel: bool = True
    #: Create the device context now, before any candidate code (device workers): a worker started ahead of
    #: its turn (engine/prefetch.py) then reaches its first check with the context's cost already paid.
    warm_device: bool = False


@dataclass(frozen=True)
class Compile(Message):
    source: str
    #: The task's init inputs (engine/init_build.py): after compiling, construct ModelNew once with them so a
    #: build in ``__init__`` runs in the build stage; None: construct nothing.
    init_args: tuple | None = None


@dataclass(frozen=True)
class Load(Message):
    source: str


@dataclass(frozen=True)
class Check(Message):
    """One correctness trial: the inputs travel as the tensor payload."""

    shape: dict[str, Any]
    weight_seed: int
    report_busy: bool = False  # also scan for threads still burning CPU after the call


@dataclass(frozen=True)
class CompileBaseline(Message):
    shape: dict[str, Any]
    weight_seed: int
    seed: int
    #: Lanes share this GPU: run on it only between DeviceTurn(take=True) and DeviceTurn(take=False), and
    #: compile (CPU work) outside those turns.
    take_turns: bool = False


@dataclass(frozen=True)
class Time(Message):
    shape: dict[str, Any]
    weight_seed: int
    timing: dict[str, Any]  # TimingConfig as a dict
    compiled: bool = False  # time the torch.compile baseline built by CompileBaseline
    reference_only: bool = False  # time the reference (and its compiled form) alone: the suite baseline
    positions: int = 4096  # random flat positions sampled from a verified output (plus its edges)
    edge: int = 1024  # first and last elements of a verified output, always sampled


@dataclass(frozen=True)
class Prepare(Message):
    """Make the timing shape's models now (the reference's and, unless ``reference_only``, the candidate's): sent
    in a shared turn before the Time request, whose exclusive turn then finds them made (issue #44: their
    weights' creation is device work, and a heavy model's took ~1 s of a clock turn on an H100)."""

    shape: dict[str, Any]
    weight_seed: int
    reference_only: bool = False


@dataclass(frozen=True)
class Exit(Message):
    pass


# ---- the fresh-input conversation inside Time ----------------------------------------------------------

@dataclass(frozen=True)
class FreshAsk(Message):
    """Worker -> parent: seeds for the next sample of ``fn`` (``calls`` of them; 0 at the end). ``phase`` is a
    :class:`multikernelbench.timing.loop.Phase` value: the parent stamps each request with its own clock and
    audits the intervals between ``sample`` requests (anticheat/clock_audit.py)."""

    fn: str
    calls: int
    phase: str = "plan"


@dataclass(frozen=True)
class DeviceTurn(Message):
    """Worker -> parent: take (``take``) or give back the GPU that several lanes share. The parent answers
    once it holds (or has released) the GPU's lock, so no other lane's clock runs while this worker uses the
    device; whatever the worker does, the parent releases the lock when the request ends."""

    take: bool


@dataclass(frozen=True)
class TurnGranted(Message):
    """Parent -> worker: the DeviceTurn is done."""


@dataclass(frozen=True)
class FreshGrant(Message):
    """Parent -> worker: the seeds, and which slots of the outputs held from ``fn``'s previous sample to
    sample now (each with the seed of its positions), decided only after that sample ran."""

    seeds: list[int]
    verify: list[list[int]] = field(default_factory=list)  # [[slot], ...] ([[slot, positions_seed]]: see fresh.py)


# ---- replies (worker -> parent) -------------------------------------------------------------------------

@dataclass(frozen=True)
class Failed(Message):
    kind: ErrorKind
    error: str
    evidence: Evidence = field(default_factory=Evidence)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ErrorKind(self.kind))


@dataclass(frozen=True)
class Done(Message):
    """Success with nothing more to say than the behaviour evidence collected meanwhile."""

    evidence: Evidence = field(default_factory=Evidence)


@dataclass(frozen=True)
class Compiled(Message):
    ok: bool
    message: str = ""
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    evidence: Evidence = field(default_factory=Evidence)


@dataclass(frozen=True)
class Checked(Message):
    """Payload: :class:`~multikernelbench.wire.CheckPayload`."""

    evidence: Evidence = field(default_factory=Evidence)


@dataclass(frozen=True)
class BaselineCompiled(Message):
    evidence: Evidence = field(default_factory=Evidence)
    torch_rebinds: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Timed(Message):
    """Payload: :class:`~multikernelbench.wire.TimedPayload`."""

    stats: dict[str, dict[str, Any]]
    wall_ms: float
    verified_meta: list[list[list[Any]]]  # per verified call: [[shape, dtype], ...] of each output
    fresh_calls: int  # calls that ran on freshly granted inputs
    fresh_ms: float  # wall time spent renewing inputs (outside the clock)
    evidence: Evidence = field(default_factory=Evidence)
    #: Every timed sample's time per call in the order taken, and the calls each sample made, per callable:
    #: what the parent's clock audit matches with the arrival times of the sample requests.
    series: dict[str, list[float]] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    #: The timer's warm-up and planning walls (ms; timing/loop.py ``Timer.phase_ms``): only traced.
    phase_ms: dict[str, float] = field(default_factory=dict)


Reply = Failed | Done | Compiled | Checked | BaselineCompiled | Timed
