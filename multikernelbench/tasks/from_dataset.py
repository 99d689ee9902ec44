"""Read :class:`Task` records back from the built dataset instead of the task source files.

A user who only has the published dataset (``load_dataset("multikernelbench")`` or a Hub copy) gets the
same records as :func:`load_suite` gives from the sources, so every downstream stage (prompts, engine,
scores) works unchanged. Each row's ``content_hash`` is recomputed on load: results are keyed by it, so a
row edited by hand must fail loudly rather than be silently scored as the original task.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable

from multikernelbench.tasks.record import Task, content_hash


class DatasetIntegrityError(ValueError):
    """A dataset row does not hash to its recorded ``content_hash``."""


def packaged_dataset_dir() -> Path:
    """The copy built into the package folder (``multikernelbench/README.md`` + ``multikernelbench/data/``).

    It is the folder ``load_dataset("multikernelbench")`` finds from the repository root.
    """
    return Path(__file__).resolve().parent.parent


def rows_from_folder(folder: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    files = sorted((folder / "data").glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{folder}: no data/*.parquet (build it with `mkb dataset build`)")
    rows: list[dict[str, Any]] = []
    for f in files:
        rows.extend(pq.read_table(f).to_pylist())
    return rows


def _rows(source: Any) -> list[dict[str, Any]]:
    if source is None:
        source = packaged_dataset_dir()
    if isinstance(source, (str, Path)):
        return rows_from_folder(Path(source))
    if isinstance(source, dict):
        # a datasets.DatasetDict (a dict of splits): the benchmark has one split; take every split's rows
        rows = []
        for split in source.values():
            rows.extend(_rows(split))
        return rows
    if hasattr(source, "to_list"):  # datasets.Dataset, pyarrow.Table
        return list(source.to_list())
    if hasattr(source, "to_pylist"):
        return list(source.to_pylist())
    return [dict(r) for r in source]  # any iterable of row dicts


def verify(task: Task) -> None:
    fields = {f.name: getattr(task, f.name) for f in dataclasses.fields(Task) if f.name != "content_hash"}
    if content_hash(fields) != task.content_hash:
        raise DatasetIntegrityError(f"{task.id}: row does not match its content_hash {task.content_hash} "
                                    "(edited after the build?)")


def load_from_dataset(source: Any = None, categories: Iterable[str] | None = None,
                      ids: Iterable[str] | None = None, check: bool = True) -> list[Task]:
    """Tasks from a built dataset, filtered like :func:`load_suite` and sorted by id.

    ``source``: a built folder (with ``data/*.parquet``), a ``datasets.Dataset`` / ``DatasetDict`` from
    ``load_dataset``, a pyarrow table, or an iterable of ``Task.to_row()`` dicts. Default: the copy built
    into the package folder.
    """
    tasks = [Task.from_row(r) for r in _rows(source)]
    if check:
        for t in tasks:
            verify(t)
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise ValueError(f"duplicate task id {t.id} in dataset")
        seen.add(t.id)
    if categories:
        cats = set(categories)
        tasks = [t for t in tasks if t.category in cats]
    if ids:
        wanted = set(ids)
        unknown = wanted - seen
        if unknown:
            raise KeyError(f"unknown task ids: {sorted(unknown)}")
        tasks = [t for t in tasks if t.id in wanted]
    return sorted(tasks, key=lambda t: t.id)
