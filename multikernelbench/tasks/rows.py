"""A Task as a typed dataset row, and back.

:meth:`Task.to_row` is the engine's flat transport (shapes as JSON strings). The published dataset is typed
instead, so a user of ``datasets`` sees structure, not strings to parse: every shape is a list of
``{"name", "size"}`` pairs (sorted by name; one schema for every task, whatever its dimension names),
``test_shapes`` a list of those, and ``category`` / ``dtype`` are ``ClassLabel`` integers whose names the
dataset's features carry. This module is the one codec between the two; it needs neither ``datasets`` nor
``pyarrow`` so the tasks layer stays light.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from multikernelbench.tasks.record import Task

#: ``ClassLabel`` names of ``dtype``, in a fixed order so that no label is ever renumbered: a dtype added to
#: DTYPE_TOLERANCE goes at the end here (to_dataset_row refuses a dtype missing from this list).
DTYPE_NAMES: tuple[str, ...] = ("bfloat16", "float16", "float32", "float64")
SHAPE_FIELDS = ("test_shapes", "bench_shape", "cpu_bench_shape")
LABEL_FIELDS = ("category", "dtype")


class RowError(ValueError):
    """A dataset row that cannot be turned back into a Task; the message names the field."""


def shape_pairs(shape: Mapping[str, Any], where: str = "shape") -> list[dict[str, Any]]:
    """``{"batch": 4, "dim": 8}`` -> ``[{"name": "batch", "size": 4}, {"name": "dim", "size": 8}]``."""
    out = []
    for name in sorted(shape):
        size = shape[name]
        if isinstance(size, bool) or not isinstance(size, int):
            raise RowError(f"{where}: size {name!r} must be an int, got {size!r}")
        out.append({"name": str(name), "size": int(size)})
    return out


def _shape_dict(value: Any, field: str) -> dict[str, Any]:
    if isinstance(value, str):  # an engine row (Task.to_row) or a dataset built before typed shapes
        value = json.loads(value)
    if isinstance(value, Mapping):
        return dict(value)
    try:
        return {str(p["name"]): int(p["size"]) for p in value}
    except (TypeError, KeyError) as exc:
        raise RowError(f"{field}: expected a list of {{'name', 'size'}} pairs, got {value!r}") from exc


def _label(value: Any, names: Sequence[str] | None, field: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and names is not None and 0 <= value < len(names):
        return names[value]
    raise RowError(f"{field}: label {value!r} cannot be named (ClassLabel names: {names})")


def to_dataset_row(task: Task, categories: Sequence[str]) -> dict[str, Any]:
    """The typed row; ``categories`` are the ``ClassLabel`` names of ``category`` for this dataset."""
    row = dataclasses.asdict(task)
    if task.category not in categories:
        raise RowError(f"{task.id}: category {task.category!r} is not among the ClassLabel names {list(categories)}")
    if task.dtype not in DTYPE_NAMES:
        raise RowError(f"{task.id}: dtype {task.dtype!r} is not among {list(DTYPE_NAMES)}")
    row["category"] = list(categories).index(task.category)
    row["dtype"] = DTYPE_NAMES.index(task.dtype)
    row["test_shapes"] = [shape_pairs(s, f"{task.id} test_shapes") for s in task.test_shapes]
    row["bench_shape"] = shape_pairs(task.bench_shape, f"{task.id} bench_shape")
    row["cpu_bench_shape"] = shape_pairs(task.cpu_bench_shape, f"{task.id} cpu_bench_shape")
    return row


def from_dataset_row(row: Mapping[str, Any], labels: Mapping[str, Sequence[str]] | None = None) -> Task:
    """A Task from a typed row, an engine row (:meth:`Task.to_row`) or anything in between.

    ``labels`` maps ``category`` / ``dtype`` to their ``ClassLabel`` names (needed when they are integers;
    ``dtype`` defaults to :data:`DTYPE_NAMES`).
    """
    labels = {"dtype": DTYPE_NAMES, **(labels or {})}
    out = dict(row)
    missing = [f.name for f in dataclasses.fields(Task) if f.name not in out and f.default is dataclasses.MISSING]
    if missing:
        raise RowError(f"row {out.get('id', '?')!r} lacks the field(s) {missing}")
    for field in LABEL_FIELDS:
        out[field] = _label(out[field], labels.get(field), field)
    out["test_shapes"] = tuple(_shape_dict(s, "test_shapes") for s in (
        json.loads(out["test_shapes"]) if isinstance(out["test_shapes"], str) else out["test_shapes"]))
    for field in SHAPE_FIELDS[1:]:
        out[field] = _shape_dict(out[field], field)
    for key in ("flops", "bytes", "cpu_flops", "cpu_bytes", "seeds_per_shape"):
        out[key] = int(out[key])
    out["atol"], out["rtol"] = float(out["atol"]), float(out["rtol"])
    known = {f.name for f in dataclasses.fields(Task)}
    return Task(**{k: v for k, v in out.items() if k in known})
