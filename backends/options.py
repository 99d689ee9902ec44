"""Typed backend options: each backend declares the options it reads, and an unknown key is an error.

Why: options arrive as ``--backend-option KEY=VALUE`` strings (or a config's dict) and were read with
``options.get("key", default)`` wherever needed, so a typo (``fast_biuld=false``) or an option of another
backend (``interpret`` on cuda) was silently ignored and a run measured something other than what its author
asked for. Now a backend class names a frozen dataclass in ``Options``; ``Backend.__init__`` parses the given
dict into it (in the parent before any work, and again in each worker from the same dict), rejecting unknown
keys with the known ones listed and wrong types (``max_jobs="8"``) with the expected type.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass, fields
from typing import Any, TypeVar

T = TypeVar("T", bound="BackendOptions")


class BackendOptionError(ValueError):
    """An option the backend does not have, or a value of the wrong type."""


@dataclass(frozen=True)
class BackendOptions:
    """What every backend takes."""

    #: CPU threads for the candidate's worker (``--threads``); None: the backend's default.
    threads: int | None = None


@dataclass(frozen=True)
class GpuTimerOptions(BackendOptions):
    """The CUDA-event timer's knobs (timing/cuda_events.py); None: the timer's default."""

    short_ms: float | None = None
    batch_target_ms: float | None = None

    def timer_kwargs(self) -> dict[str, Any]:
        """The knobs that were set, as the timer's keyword arguments."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name in _TIMER_KNOBS and getattr(self, f.name) is not None}


@dataclass(frozen=True)
class GraphTimerOptions(GpuTimerOptions):
    """Also CUDA-graph replay in the timer, for backends whose kernels can be captured."""

    allow_graphs: bool | None = None


_TIMER_KNOBS = frozenset({"short_ms", "batch_target_ms", "allow_graphs"})


def parse_options(cls: type[T], given: dict[str, Any], backend: str) -> T:
    """``given`` checked against ``cls``'s fields: every key known, every value of its field's type."""
    hints = typing.get_type_hints(cls)
    known = [f.name for f in fields(cls)]
    for key in given:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise BackendOptionError(f"backend {backend!r} has no option {key!r}{hint}; its options: "
                                     f"{', '.join(sorted(known))}")
    for key, value in given.items():
        if not _fits(value, hints[key]):
            raise BackendOptionError(f"backend {backend!r} option {key!r} wants {_name(hints[key])}, "
                                     f"got {value!r}")
    return cls(**given)


def _fits(value: Any, hint: Any) -> bool:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, hint)


def _name(hint: Any) -> str:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " or ".join(_name(h) for h in typing.get_args(hint))
    return "null" if hint is type(None) else getattr(hint, "__name__", str(hint))
