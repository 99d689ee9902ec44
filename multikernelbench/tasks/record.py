"""The typed ``Task`` record.

A task's behaviour lives in its source file (reference ``Model``, input generator, FLOP/byte counts); the
record carries that source verbatim plus the metadata evaluated from it, so a task can travel as one row
of a dataset and be re-materialised anywhere with :func:`multikernelbench.tasks.module.materialize`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, asdict
from typing import Any

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
    def from_row(cls, row: dict[str, Any]) -> "Task":
        row = dict(row)
        row["test_shapes"] = tuple(json.loads(row["test_shapes"]))
        row["bench_shape"] = json.loads(row["bench_shape"])
        row["cpu_bench_shape"] = json.loads(row["cpu_bench_shape"])
        for key in ("flops", "bytes", "cpu_flops", "cpu_bytes", "seeds_per_shape"):
            row[key] = int(row[key])
        row["atol"] = float(row["atol"])
        row["rtol"] = float(row["rtol"])
        return cls(**row)


def content_hash(fields: dict[str, Any]) -> str:
    """Stable across machines: hashes the source and the evaluated metadata, not file paths or times."""
    blob = json.dumps(fields, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
