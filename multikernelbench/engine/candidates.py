"""Candidates: one piece of source code claiming to solve one task.

A solutions folder holds ``<task id>.py`` or ``<task id>/<name>.py``; any file may instead name its task in
a first-lines comment ``# task: <id>`` (the form used by the deliberately wrong examples in
``solutions/<backend>/wrong/``, which also carry ``# expect: <status>``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from multikernelbench.records import Status
from multikernelbench.store import Label

_HEADER = re.compile(r"^#\s*([\w-]+)\s*:\s*(.+?)\s*$", re.M)
#: How many first lines may carry ``# key: value`` headers.
HEADER_LINES = 12


def code_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:20]


@dataclass
class Candidate:
    task_id: str
    source: str
    label: str  # where it came from (file path, or generation id)
    code_hash: str = ""
    meta: Label = field(default_factory=Label)
    expect: Status = Status.CORRECT  # expected status (shipped wrong candidates say otherwise in a header)
    #: Whether ``expect`` was declared (a ``# expect:`` header), rather than the default: tables show an
    #: expectation only for folders that declare them, never ``correct`` for every user or model candidate.
    expect_declared: bool = False

    def __post_init__(self) -> None:
        if not self.code_hash:
            self.code_hash = code_hash(self.source)


def read_headers(source: str) -> dict[str, str]:
    """The ``# key: value`` lines at the top of a solution (task, expect, reason, runtime-expect, config, ...):
    the one parser of solution headers, used by discovery, tests and scripts alike."""
    head = "\n".join(source.splitlines()[:HEADER_LINES])
    return {m.group(1): m.group(2) for m in _HEADER.finditer(head)}


def discover_solutions(root: str | Path, known_ids: set[str] | None = None,
                       model: str = "shipped") -> list[Candidate]:
    """All candidates under a solutions folder, sorted by (task, label)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"solutions folder {root} does not exist")
    out: list[Candidate] = []
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith("_") or "__pycache__" in path.parts:
            continue
        source = path.read_text()
        headers = read_headers(source)
        rel = path.relative_to(root)
        if "task" in headers:
            task_id = headers["task"]
        elif len(rel.parts) == 1:
            task_id = path.stem
        else:
            task_id = rel.parts[-2]
        if known_ids is not None and task_id not in known_ids:
            continue
        index = 0
        out.append(Candidate(task_id=task_id, source=source, label=str(rel),
                             expect=Status(headers.get("expect", Status.CORRECT.value)),
                             expect_declared="expect" in headers,
                             meta=Label(model=model, strategy="none", sample_index=index)))
    out.sort(key=lambda c: (c.task_id, c.label))
    # Several candidates for one task get distinct sample indices, so the store keeps them apart.
    counts: dict[str, int] = {}
    for c in out:
        i = counts.get(c.task_id, 0)
        counts[c.task_id] = i + 1
        c.meta = Label(model=c.meta.model, strategy=c.meta.strategy, sample_index=i, category=c.meta.category)
    return out
