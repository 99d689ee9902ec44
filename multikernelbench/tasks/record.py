"""The typed ``Task`` record.

A task's behaviour lives in its source file (reference ``Model``, input generator, FLOP/byte counts); the
record carries that source verbatim plus the metadata evaluated from it, so a task can travel as one row
of a dataset and be re-materialised anywhere with :func:`multikernelbench.tasks.module.materialize`.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from multikernelbench.util import pyast

if TYPE_CHECKING:
    import torch

# (atol, rtol) per dtype: |out - ref| <= atol + rtol * |ref| elementwise. bf16 carries 8 mantissa bits
# (eps = 7.8e-3), so two correct bf16 kernels with different accumulation orders differ by ~1-2 ulp.
DTYPE_TOLERANCE: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float64": (1e-8, 1e-8),
}

DTYPE_SUFFIX = {"float32": "", "bfloat16": ".bf16", "float16": ".fp16", "float64": ".fp64"}


def torch_dtype(name: str) -> torch.dtype:
    import torch  # here, not with the module: `mkb --help` and the CLI's parsers import the records (see cli/main.py)

    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return dt


@dataclass(frozen=True)
class Task:
    """One benchmark problem: a reference model at one dtype, with its shapes and costs."""

    id: str  # "<category>.<name>[.bf16]"; also the candidate file stem in a solutions folder
    name: str
    category: str
    description: str
    dtype: str
    source: str  # the task file, verbatim
    test_shapes: tuple[dict[str, Any], ...]
    bench_shape: dict[str, Any]  # sized for a datacenter GPU
    cpu_bench_shape: dict[str, Any]  # sized for timing on a few CPU cores
    atol: float
    rtol: float
    flops: int  # at bench_shape
    bytes: int  # compulsory DRAM traffic at bench_shape, in this dtype
    cpu_flops: int  # at cpu_bench_shape
    cpu_bytes: int
    seeds_per_shape: int = 2
    content_hash: str = field(default="", compare=True)

    @property
    def no_headroom(self) -> str | None:
        """Why the eager reference leaves no room to win on the reference GPU, when the task file says so for
        this variant's dtype."""
        return headroom_note(self.source, self.dtype)

    def shape_for_timing(self, on_cpu: bool) -> dict[str, Any]:
        return self.cpu_bench_shape if on_cpu else self.bench_shape

    def costs_for_timing(self, on_cpu: bool) -> tuple[int, int]:
        return (self.cpu_flops, self.cpu_bytes) if on_cpu else (self.flops, self.bytes)

    @property
    def torch_dtype(self) -> torch.dtype:
        return torch_dtype(self.dtype)

    def to_row(self) -> dict[str, Any]:
        """A flat, JSON/parquet friendly row: shapes are JSON strings so every row has one schema."""
        row = asdict(self)
        row["test_shapes"] = json.dumps(list(self.test_shapes), sort_keys=True)
        row["bench_shape"] = json.dumps(self.bench_shape, sort_keys=True)
        row["cpu_bench_shape"] = json.dumps(self.cpu_bench_shape, sort_keys=True)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Task:
        row = dict(row)
        row["test_shapes"] = tuple(json.loads(row["test_shapes"]))
        row["bench_shape"] = json.loads(row["bench_shape"])
        row["cpu_bench_shape"] = json.loads(row["cpu_bench_shape"])
        for key in ("flops", "bytes", "cpu_flops", "cpu_bytes", "seeds_per_shape"):
            row[key] = int(row[key])
        row["atol"] = float(row["atol"])
        row["rtol"] = float(row["rtol"])
        return cls(**row)


#: A task file's optional note that its eager reference already runs at the hardware bound on the reference
#: GPU (``NO_HEADROOM = "why"``): documentation of a measurement, not part of what is measured.
NO_HEADROOM = "NO_HEADROOM"


def _no_headroom_node(source: str) -> ast.Assign | None:
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == NO_HEADROOM for t in node.targets):
            return node
    return None


def headroom_note(source: str, dtype: str) -> str | None:
    """The task file's ``NO_HEADROOM`` reason for the ``dtype`` variant; None when it has none. The note is a
    string (every variant) or a dict of dtype name -> string; it is read without running the file, and anything
    else raises ValueError."""
    node = _no_headroom_node(source)
    if node is None:
        return None
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        value = None
    if isinstance(value, str):
        value = {dtype: value}
    if not (isinstance(value, dict) and value and all(isinstance(k, str) and k in DTYPE_TOLERANCE
                                                      and isinstance(v, str) and v.strip() for k, v in value.items())):
        raise ValueError(f"{NO_HEADROOM} (line {node.lineno}) must be a non-empty string or a dict of dtype name "
                         f"-> non-empty string")
    note = value.get(dtype)
    return " ".join(note.split()) if note else None


def measured_source(source: str) -> str:
    """The source without its ``NO_HEADROOM`` statement and the comment lines right above it: what the content
    hash covers, so that marking a task after its baseline was measured does not make that measurement (or any
    stored result) stale."""
    node = _no_headroom_node(source)
    if node is None:
        return source
    lines = source.splitlines(keepends=True)
    start = node.lineno - 1
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return "".join(lines[:start] + lines[node.end_lineno:])


def content_hash(fields: dict[str, Any]) -> str:
    """Stable across machines: hashes the source (less its ``NO_HEADROOM`` note) and the evaluated metadata,
    not file paths or times."""
    if isinstance(fields.get("source"), str):
        fields = {**fields, "source": measured_source(fields["source"])}
    blob = json.dumps(fields, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
