"""Feedback for multi-turn refinement: what the model is told about its previous answer.

One message per outcome class, built from the evaluation summary stored on the turn's record: the compiler
or runtime error, the mismatch (which shape, largest errors, the tolerance) or — when correct — the timing,
speedup and roofline fraction with a request to go faster while staying correct. Test shapes are revealed
only once a kernel has failed on one, exactly as a developer would see it.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from multikernelbench.records import Status

_HEAD = "Your previous answer was evaluated.\n"
_TAIL = ("\nFix the problem and reply with the complete corrected Python file in one ```python block, "
         "following the same contract.")


def _err(summary: dict[str, Any]) -> str:
    return (summary.get("message") or "").strip()[:3000] or "(no message)"


def _compile(s: dict[str, Any]) -> str:
    return f"It failed to build or import:\n```\n{_err(s)}\n```"


def _runtime(s: dict[str, Any]) -> str:
    return f"It raised an error while running ({s.get('status')}):\n```\n{_err(s)}\n```"


def _incorrect(s: dict[str, Any]) -> str:
    parts = ["It ran but its output does not match the reference"]
    if s.get("failed_shape"):
        parts.append(f" at shape {json.dumps(s['failed_shape'], sort_keys=True)}")
    if s.get("max_abs_err") is not None:
        parts.append(f": max abs error {s['max_abs_err']:.3g}")
        if s.get("max_rel_err") is not None:
            parts.append(f", max rel error {s['max_rel_err']:.3g}")
    detail = _err(s)
    return "".join(parts) + f".\n```\n{detail}\n```"


def _cheat(s: dict[str, Any]) -> str:
    return f"It was rejected as breaking the platform contract:\n```\n{_err(s)}\n```"


def _correct(s: dict[str, Any]) -> str:
    bits = []
    if s.get("median_ms") is not None:
        bits.append(f"median time {s['median_ms']:.4g} ms")
    if s.get("speedup") is not None:
        bits.append(f"speedup {s['speedup']:.3g}x over the PyTorch reference")
    if s.get("roofline_fraction") is not None:
        bits.append(f"{100 * s['roofline_fraction']:.1f}% of the hardware roofline")
    stats = ", ".join(bits) or "no timing available"
    return (f"It is correct ({stats}). Make it faster while keeping it correct, and reply with the complete "
            "Python file in one ```python block.")


_BY_STATUS: dict[Status | None, Callable[[dict[str, Any]], str]] = {  # None: no engine status (_runtime's text)
    Status.COMPILE_ERROR: _compile, Status.RUNTIME_ERROR: _runtime, Status.TIMEOUT: _runtime,
    Status.CRASH: _runtime, Status.INCORRECT: _incorrect, Status.CHEAT_DETECTED: _cheat, Status.CORRECT: _correct,
}


def summary_status(summary: dict[str, Any] | None) -> Status | None:
    """The :class:`Status` of an evaluation summary (stored as its JSON value); None when there is none or it
    is not an engine status (e.g. ``"no_code"``: nothing reached the engine)."""
    try:
        return Status((summary or {}).get("status"))
    except ValueError:
        return None


def feedback_message(summary: dict[str, Any] | None, had_code: bool = True) -> str:
    """The user message for the next turn, given this turn's evaluation summary."""
    if not had_code:
        return ("Your previous answer contained no Python code block defining `class ModelNew`. Reply with the "
                "complete Python file in one ```python block.")
    if summary is None:
        return _HEAD + "It could not be evaluated." + _TAIL
    status = summary_status(summary)
    text = _BY_STATUS.get(status, _runtime)(summary)
    return _HEAD + text + ("" if status is Status.CORRECT else _TAIL)
