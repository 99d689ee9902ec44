"""Load task source files into typed :class:`Task` records, validating the task format on the way."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from multikernelbench.tasks.record import DTYPE_SUFFIX, DTYPE_TOLERANCE, Task, content_hash


class TaskFormatError(ValueError):
    """A task file does not follow the task format (the message names the file and the problem)."""


def suite_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "suite"


def _description(mod: Any, path: Path) -> str:
    desc = getattr(mod, "DESCRIPTION", None) or (inspect.getdoc(mod) or "").strip().splitlines()[:1]
    if isinstance(desc, list):
        desc = desc[0] if desc else ""
    if not desc:
        raise TaskFormatError(f"{path}: needs a one-line DESCRIPTION or module docstring")
    return str(desc).strip()


def _check_shapes(path: Path, shapes: Any, what: str) -> None:
    if not isinstance(shapes, dict) or not shapes:
        raise TaskFormatError(f"{path}: every {what} must be a non-empty dict of named sizes, got {shapes!r}")
    for k, v in shapes.items():
        if not isinstance(k, str) or not isinstance(v, (int, float, str, bool, list, tuple)):
            raise TaskFormatError(f"{path}: {what} entry {k!r}={v!r} is not a plain JSON value")


def _check_ranges(path: Path, mod: Any, test_shapes: list[dict]) -> None:
    """``SHAPE_RANGES`` (optional) is well formed and holds every test shape (see tasks/ranges.py)."""
    from multikernelbench.tasks.ranges import RangeError, parse_ranges

    try:
        parse_ranges(getattr(mod, "SHAPE_RANGES", None), test_shapes)
    except RangeError as exc:
        raise TaskFormatError(f"{path}: {exc}") from exc


def _check_headroom_note(path: Path, source: str, mod: Any, dtypes: list[str]) -> None:
    """``NO_HEADROOM`` (optional) is a string or a dict keyed by dtypes the file declares (tasks/record.py)."""
    from multikernelbench.tasks.record import NO_HEADROOM, headroom_note

    try:
        for dtype in dtypes:
            headroom_note(source, dtype)
    except ValueError as exc:
        raise TaskFormatError(f"{path}: {exc}") from exc
    value = getattr(mod, NO_HEADROOM, None)
    if isinstance(value, dict) and not set(value) <= set(dtypes):
        raise TaskFormatError(f"{path}: {NO_HEADROOM} names dtypes the task does not declare: "
                              f"{sorted(set(value) - set(dtypes))}")


def load_task_file(path: str | Path, category: str | None = None) -> list[Task]:
    """One file gives one Task per dtype it declares (fp32 always; bf16 etc. as variants)."""
    path = Path(path)
    return tasks_from_source(path.read_text(), category or path.parent.name, path.stem, where=path)


def tasks_from_source(source: str, category: str, name: str, where: str | Path | None = None) -> list[Task]:
    """The tasks of one task file's text (``where`` names it in errors), as :func:`load_task_file` reads them;
    the held-out generator loads the files it writes this way before writing them."""
    from multikernelbench.tasks.module import REQUIRED, exec_source  # torch: only when a task is read (cli/main.py)

    path = Path(where) if where is not None else Path(f"<{category}/{name}.py>")
    try:
        mod = exec_source(source, f"{category}.{name}")
    except Exception as exc:  # a broken task file must say which file
        raise TaskFormatError(f"{path}: failed to execute: {exc!r}") from exc
    missing = [attr for attr in REQUIRED if not hasattr(mod, attr)]
    if missing:
        raise TaskFormatError(f"{path}: missing {', '.join(missing)}")
    test_shapes = list(mod.TEST_SHAPES)
    if len(test_shapes) < 3:
        raise TaskFormatError(f"{path}: needs at least 3 TEST_SHAPES, has {len(test_shapes)}")
    for s in test_shapes:
        _check_shapes(path, s, "TEST_SHAPES entry")
    _check_shapes(path, mod.BENCH_SHAPE, "BENCH_SHAPE")
    cpu_bench = getattr(mod, "CPU_BENCH_SHAPE", None) or test_shapes[-1]
    _check_shapes(path, cpu_bench, "CPU_BENCH_SHAPE")
    dtypes = list(getattr(mod, "DTYPES", ("float32",)))
    if "float32" not in dtypes:
        raise TaskFormatError(f"{path}: DTYPES must include float32")
    description = _description(mod, path)
    _check_ranges(path, mod, test_shapes)
    _check_headroom_note(path, source, mod, dtypes)
    tolerances = dict(getattr(mod, "TOLERANCE", {}) or {})
    tasks = []
    for dtype in dtypes:
        if dtype not in DTYPE_SUFFIX:
            raise TaskFormatError(f"{path}: unsupported dtype {dtype!r}")
        atol, rtol = tolerances.get(dtype, DTYPE_TOLERANCE[dtype])
        itemsize = {"float32": 4, "bfloat16": 2, "float16": 2, "float64": 8}[dtype]
        meta: dict[str, Any] = dict(
            id=f"{category}.{name}{DTYPE_SUFFIX[dtype]}",
            name=name,
            category=category,
            description=description,
            dtype=dtype,
            source=source,
            test_shapes=tuple(dict(s) for s in test_shapes),
            bench_shape=dict(mod.BENCH_SHAPE),
            cpu_bench_shape=dict(cpu_bench),
            atol=float(atol),
            rtol=float(rtol),
            flops=int(mod.flops(dict(mod.BENCH_SHAPE))),
            bytes=int(mod.bytes_moved(dict(mod.BENCH_SHAPE), itemsize)),
            cpu_flops=int(mod.flops(dict(cpu_bench))),
            cpu_bytes=int(mod.bytes_moved(dict(cpu_bench), itemsize)),
            seeds_per_shape=int(getattr(mod, "SEEDS_PER_SHAPE", 2)),
        )
        if meta["flops"] < 0 or meta["bytes"] <= 0:
            raise TaskFormatError(f"{path}: flops must be >= 0 and bytes_moved > 0")
        meta["content_hash"] = content_hash({k: v for k, v in meta.items()})
        tasks.append(Task(**meta))
    return tasks


def _iter_task_files(root: Path) -> Iterable[Path]:
    for path in sorted(root.glob("*/*.py")):
        if not path.name.startswith("_"):
            yield path


def load_suite(root: str | Path | None = None, categories: Iterable[str] | None = None,
               ids: Iterable[str] | None = None) -> list[Task]:
    """All tasks under ``root`` (default: the shipped suite), optionally filtered, sorted by id."""
    root = Path(root) if root else suite_dir()
    wanted_cats = set(categories) if categories else None
    tasks: list[Task] = []
    for path in _iter_task_files(root):
        if wanted_cats and path.parent.name not in wanted_cats:
            continue
        tasks.extend(load_task_file(path))
    seen: dict[str, Task] = {}
    for t in tasks:
        if t.id in seen:
            raise TaskFormatError(f"duplicate task id {t.id}")
        seen[t.id] = t
    if ids:
        wanted = set(ids)
        unknown = wanted - set(seen)
        if unknown:
            raise KeyError(f"unknown task ids: {sorted(unknown)}")
        tasks = [t for t in tasks if t.id in wanted]
    return sorted(tasks, key=lambda t: t.id)
