"""Typed flags: the non-fatal notes a result carries, each with the kind of thing it reports.

Why: a result's flags were free strings, and the code that acted on them (the baseline file leaving the
torch.compile failure out of its list, the clock audit withholding a speedup) matched their first words, so a
reworded message silently changed a decision. Now every producer names the kind; a caller tests the kind, and
the text is only what a person reads (unchanged, word for word).

On disk (``EvalResult.to_dict``) a result keeps ``flags`` as the list of texts it always had, with the kinds in
a parallel ``flag_kinds`` list: every reader of stored rows and of the service's JSON (the report, the scripts,
an older harness reading a newer store) still sees strings. A row written before the kinds existed has no
``flag_kinds``; :func:`from_row` gives its texts their kinds by the words each producer's text has always
started with (:func:`legacy_kind`, the one place that reads a flag's text to find its kind).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


class FlagKind(str, enum.Enum):
    """What a flag reports (its producer in parentheses)."""

    #: The backend or device cannot time: the result is correctness only (engine/device_stage.py).
    TIMING_UNAVAILABLE = "timing_unavailable"
    #: The first timing's clock audit found what load alone can produce; timed again in a fresh worker
    #: (engine/device_stage.py).
    CLOCK_RETIMED = "clock_retimed"
    #: The confirming timing's audit was judged against the clean worker recalibrated beside it
    #: (engine/device_stage.py).
    CLOCK_RECALIBRATED = "clock_recalibrated"
    #: The clock audit's findings are what the host's load could produce: not a conviction, and no speedup is
    #: reported (anticheat/timing_judge.py).
    CLOCK_INCONCLUSIVE = "clock_inconclusive"
    #: The parent could not read the worker's per-thread schedstat: the idle audit (anticheat/sched_idle.py) is off
    #: for this timing (anticheat/timing_judge.py).
    IDLE_AUDIT_OFF = "idle_audit_off"
    #: How many fresh inputs the timing drew outside the clock and how many timed calls were verified
    #: (engine/device_stage.py).
    FRESH_INPUTS = "fresh_inputs"
    #: ``--fresh-shapes``: the outcome of the trials on shapes drawn this run (engine/device_trials.py; the
    #: count is ``EvalResult.fresh_shapes_checked``).
    FRESH_SHAPES = "fresh_shapes"
    #: The clean worker gave no reference timing: the speedup is not cross-checked (anticheat/timing_judge.py).
    NO_CLEAN_REFERENCE = "no_clean_reference"
    #: The reference ran markedly slower in the candidate's worker than in a clean one (anticheat/timing_judge.py).
    REFERENCE_SLOWED = "reference_slowed"
    #: The reference's timing moved between the halves of its samples: the speedup is uncertain
    #: (anticheat/timing_judge.py).
    REFERENCE_DRIFT = "reference_drift"
    #: The torch.compile baseline failed, so the result has no compiled timing (engine/device_baseline.py).
    NO_COMPILE_BASELINE = "no_compile_baseline"
    #: torch's API was rebound while the baseline compiled; noted, not judged (engine/device_baseline.py).
    BASELINE_TORCH_REBOUND = "baseline_torch_rebound"
    #: The reference's ahead-of-time compile failed; it compiled in the device stage instead
    #: (engine/thread_executor.py).
    REFERENCE_WARMUP_FAILED = "reference_warmup_failed"
    #: Ran out of device memory while other lanes shared its GPU: this result is its evaluation with the GPU to
    #: itself (engine/lane_gate.py).
    REEVALUATED_ALONE = "reevaluated_alone"
    #: Read from a stored row: a text no producer of this version writes, or a kind this version does not know.
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Flag:
    """One note on a result: its kind (what code tests) and its text (what a person reads)."""

    kind: FlagKind
    text: str

    def __str__(self) -> str:
        return self.text


#: The words each producer's text has always started with, for rows stored before ``flag_kinds``.
_LEGACY_PREFIXES: tuple[tuple[str, FlagKind], ...] = (
    ("timing unavailable on this backend/device", FlagKind.TIMING_UNAVAILABLE),
    ("clock audit: the first timing showed", FlagKind.CLOCK_RETIMED),
    ("clock audit: renewal judged against", FlagKind.CLOCK_RECALIBRATED),
    ("clock audit inconclusive under load", FlagKind.CLOCK_INCONCLUSIVE),
    ("no idle audit:", FlagKind.IDLE_AUDIT_OFF),
    ("fresh inputs:", FlagKind.FRESH_INPUTS),
    ("fresh shapes:", FlagKind.FRESH_SHAPES),
    ("no clean reference timing", FlagKind.NO_CLEAN_REFERENCE),
    ("reference slowed in the candidate's worker", FlagKind.REFERENCE_SLOWED),
    ("reference drifted", FlagKind.REFERENCE_DRIFT),
    ("no torch.compile baseline", FlagKind.NO_COMPILE_BASELINE),
    ("torch API rebound while the baseline compiled", FlagKind.BASELINE_TORCH_REBOUND),
    ("reference warm-up compile failed", FlagKind.REFERENCE_WARMUP_FAILED),
    ("ran out of device memory beside", FlagKind.REEVALUATED_ALONE),
)


def legacy_kind(text: str) -> FlagKind:
    """The kind of a flag stored as text alone (a row written before ``flag_kinds``)."""
    for prefix, kind in _LEGACY_PREFIXES:
        if text.startswith(prefix):
            return kind
    return FlagKind.UNKNOWN


def _kind(value: Any) -> FlagKind:
    try:
        return FlagKind(value)
    except ValueError:  # written by a newer version: still shown, acted on by nothing
        return FlagKind.UNKNOWN


def to_row(flags: Iterable[Flag]) -> dict[str, list[str]]:
    """The stored form: the texts as ``flags`` (what every reader has always read) and the kinds beside them."""
    flags = list(flags)
    return {"flags": [f.text for f in flags], "flag_kinds": [f.kind.value for f in flags]}


def from_row(texts: Any, kinds: Any = None) -> list[Flag]:
    """The flags of a stored row; ``kinds`` absent (an older row) or not matching the texts one for one: each
    text's kind from its first words (:func:`legacy_kind`)."""
    if isinstance(texts, str):  # a hand-written row with one note: one flag, not one per character
        texts = [texts]
    texts = [t if isinstance(t, str) else str(t) for t in texts or []]
    if isinstance(kinds, list) and len(kinds) == len(texts):
        return [Flag(_kind(k), t) for k, t in zip(kinds, texts, strict=True)]
    return [Flag(legacy_kind(t), t) for t in texts]


def legacy_fresh_shapes(flags: Iterable[Flag]) -> int | None:
    """``fresh_shapes_checked`` of a stored record older than the field, from the flag it had instead
    (``fresh shapes: K passed`` / ``fresh shapes: not checked ...`` / ``fresh shapes: failed``)."""
    for flag in flags:
        if flag.kind is FlagKind.FRESH_SHAPES:
            words = flag.text.split()
            return int(words[2]) if len(words) > 3 and words[2].isdigit() and words[3] == "passed" else 0
    return None


def of_kind(flags: Iterable[Flag], *kinds: FlagKind) -> list[Flag]:
    """The flags of any of these kinds, in order."""
    return [f for f in flags if f.kind in kinds]
