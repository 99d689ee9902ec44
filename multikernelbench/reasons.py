"""Messages that lead with their cause.

A failed candidate's message is often a Python traceback whose first line (``Traceback (most recent call
last):``) and first frames are the harness's own; the cause is at the bottom (the exception's type and text)
and in the one frame of the candidate's file. Every table, the report and the service show a message's first
line, so the stored message gets a first line that says the cause — the compiler's first ``error:`` line for a
failed C++ build, else the exception and the candidate's own frame — followed by the message as it was (the
full traceback stays in the store).
"""

from __future__ import annotations

import re

TRACEBACK = "Traceback (most recent call last):"
#: The file a candidate's source is loaded from in its worker (backends/base.py).
CANDIDATE_FILE = "candidate.py"
_COMPILER_ERROR = re.compile(r"(?:^|\s)((?:fatal )?error: .*)$")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


def compiler_error(lines: list[str]) -> str | None:
    """The compiler's first ``error:`` line as ``main.cpp:8:5: error: ...`` (no build-folder path)."""
    for line in lines:
        m = _COMPILER_ERROR.search(line)
        if m:
            where = line[:m.start(1)].strip().rsplit("/", 1)[-1]
            return f"{where} {m.group(1)}".strip()
    return None


def traceback_cause(text: str) -> str | None:
    """``Type: text — candidate.py line N: source`` from the last traceback in ``text``; None without one."""
    start = text.rfind(TRACEBACK)
    if start < 0:
        return None
    lines = text[start:].splitlines()[1:]
    last_frame = None
    frame: tuple[str, str] | None = None
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if m:
            last_frame = i
            if m.group(1).rsplit("/", 1)[-1] == CANDIDATE_FILE:
                src = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]) else ""
                frame = (m.group(2), src)
    if last_frame is None:
        return None
    # The exception's own lines: the first unindented line after the last frame (its source and carets are
    # indented).
    exc = next((ln.strip() for ln in lines[last_frame + 1:] if ln and not ln[0].isspace()), "")
    if not exc:
        return None
    if frame is not None:
        exc += f" — {CANDIDATE_FILE} line {frame[0]}" + (f": {frame[1]}" if frame[1] else "")
    return exc


def lead_with_cause(message: str) -> str:
    """The message with its cause as first line (``<stage>: <cause>``), when its first line is a traceback's
    header or a failed build's; unchanged otherwise (so applying it twice changes nothing)."""
    if not message:
        return message
    first, _, _ = message.partition("\n")
    if not first.rstrip().endswith(TRACEBACK):
        return message
    stage = first.rstrip()[: -len(TRACEBACK)].rstrip().rstrip(":").strip()
    cause = compiler_error(message.splitlines()) or traceback_cause(message)
    if not cause:
        return message
    return f"{stage}: {cause}\n{message}" if stage else f"{cause}\n{message}"
