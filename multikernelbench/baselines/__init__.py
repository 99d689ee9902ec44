"""Committed reference-GPU baselines: eager and ``torch.compile`` times of every task's reference.

The files here are package data, so an installed ``mkb report`` can place a results store from any machine
against the reference GPU's measurement. ``cuda_h200.jsonl`` is made by ``mkb baseline --backend cuda`` on
an H200 (how, and with what device time: ``benchmarks/baseline_cuda_h200/README.md``); one JSON line per task
in the format of :func:`multikernelbench.cli.baseline.row`. Extra keys are ignored, so the format can grow.

A row is only used for a result whose task content is the one the row measured (``task_hash``): after a
task's shape or code changed, its old time says nothing about the new task, and the report calls it stale.
A row with a ``suspect`` key (a measurement whose own statistics or an independent repeat say the GPU was
not the timer's alone; see ``scripts/mark_suspect_baseline.py``) is kept in the file for the record but
never used.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multikernelbench.roofline import roofline_fraction

#: The reference GPU's baseline shipped with the package.
DEFAULT_BASELINE = Path(__file__).with_name("cuda_h200.jsonl")


class Match(enum.Enum):
    """How a baseline row relates to the task content a result was measured on."""

    OK = "ok"
    MISSING = "missing"  # no row for the task id
    STALE = "stale"  # a row, but for other task content (task_hash differs)
    FAILED = "failed"  # the row records that the reference could not be timed
    SUSPECT = "suspect"  # timed, but the measurement is not trusted (the row says why)


@dataclass(frozen=True)
class BaselineRow:
    """The parts of one baseline line the report and the hygiene script read."""

    task_id: str
    task_hash: str
    hardware: str
    backend: str
    dtype: str
    eager_ms: float | None
    compiled_ms: float | None
    eager_fraction: float | None  # roofline bound / eager median
    compiled_fraction: float | None
    error: str = ""
    suspect: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def bound_ms(self) -> float | None:
        """The roofline bound the row's fractions were computed with (eager median x eager fraction)."""
        if self.eager_ms is None or self.eager_fraction is None:
            return None
        return self.eager_ms * self.eager_fraction

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BaselineRow:
        if not isinstance(d.get("task_id"), str) or not d["task_id"]:
            raise ValueError(f"baseline row without a task_id: {str(d)[:200]}")
        hardware, dtype = str(d.get("hardware", "")), str(d.get("dtype", ""))
        eager_ms, compiled_ms = _median(d.get("eager")), _median(d.get("compiled"))

        def fraction(key: str, ms: float | None) -> float | None:
            """The row's own fraction, else one from its costs and the device's committed peak table."""
            value = _positive(d.get(key))
            flops, nbytes = d.get("flops"), d.get("bytes")
            if value is None and ms is not None and isinstance(flops, int) and isinstance(nbytes, int) and hardware:
                value = _positive(roofline_fraction(hardware, dtype, flops, nbytes, ms))
            return value

        return cls(task_id=d["task_id"], task_hash=str(d.get("task_hash", "")), hardware=hardware,
                   backend=str(d.get("backend", "")), dtype=dtype, eager_ms=eager_ms, compiled_ms=compiled_ms,
                   eager_fraction=fraction("eager_roofline_fraction", eager_ms),
                   compiled_fraction=fraction("compiled_roofline_fraction", compiled_ms),
                   error=str(d.get("error") or ""), suspect=str(d.get("suspect") or ""), raw=d)


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def _median(stats: Any) -> float | None:
    return _positive(stats.get("median_ms")) if isinstance(stats, dict) else None


@dataclass
class Baseline:
    """All rows of one baseline file, by task id (a later line for the same task replaces an earlier one,
    as when a task was measured again and appended)."""

    source: str
    rows: dict[str, BaselineRow]

    @property
    def hardware(self) -> list[str]:
        """The devices the rows were measured on (one for a well-formed file)."""
        return sorted({r.hardware for r in self.rows.values() if r.hardware})

    @property
    def label(self) -> str:
        return ", ".join(self.hardware) or "unknown hardware"

    def match(self, task_id: str, task_hash: str) -> tuple[Match, BaselineRow | None]:
        """The row usable for a result on ``task_hash``, or why there is none (the row, if any, still
        comes back so a caller can say what it was)."""
        row = self.rows.get(task_id)
        if row is None:
            return Match.MISSING, None
        if row.task_hash != task_hash:
            return Match.STALE, row
        if row.error or row.eager_ms is None:
            return Match.FAILED, row
        if row.suspect:
            return Match.SUSPECT, row
        return Match.OK, row

    def eager_fraction(self, task_id: str, task_hash: str) -> float | None:
        """The eager roofline fraction of a matching, measured row; None otherwise."""
        status, row = self.match(task_id, task_hash)
        return row.eager_fraction if status is Match.OK and row is not None else None


def parse_baseline(lines: Iterable[str], source: str = "") -> Baseline:
    rows: dict[str, BaselineRow] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{source}:{n}: not a JSON line ({exc})") from exc
        if not isinstance(d, dict):
            raise ValueError(f"{source}:{n}: a baseline line must be a JSON object")
        try:
            row = BaselineRow.from_json(d)
        except ValueError as exc:
            raise ValueError(f"{source}:{n}: {exc}") from exc
        rows[row.task_id] = row
    return Baseline(source, rows)


def load_baseline(path: str | Path | None = None) -> Baseline:
    """Read a baseline file (default: the packaged reference-GPU one)."""
    p = Path(path) if path is not None else DEFAULT_BASELINE
    if not p.is_file():
        raise FileNotFoundError(f"baseline file {p} does not exist")
    with p.open(encoding="utf-8") as fh:
        return parse_baseline(fh, source=str(p))
