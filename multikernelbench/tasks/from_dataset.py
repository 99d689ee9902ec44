"""Read :class:`Task` records back from the built dataset instead of the task source files.

A user who only has the published dataset (``load_dataset("multikernelbench")`` or a Hub copy) gets the
same records as :func:`load_suite` gives from the sources, so every downstream stage (prompts, engine,
scores) works unchanged. Each row's ``content_hash`` is recomputed on load: results are keyed by it, so a
row edited by hand must fail loudly rather than be silently scored as the original task.

Rows are typed (:mod:`multikernelbench.tasks.rows`): ``category``/``dtype`` are ``ClassLabel`` integers,
named by the features that travel with them (a ``datasets.Dataset``'s ``features``, or the ``huggingface``
metadata of the parquet files' schema); engine rows (:meth:`Task.to_row`) with plain strings also load.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from multikernelbench.tasks.record import Task, content_hash
from multikernelbench.tasks.rows import LABEL_FIELDS, from_dataset_row

Labels = dict[str, list[str]]


class DatasetIntegrityError(ValueError):
    """A dataset row does not hash to its recorded ``content_hash``."""


def packaged_dataset_dir() -> Path:
    """The copy built into the package folder (``multikernelbench/README.md`` + ``multikernelbench/data/``).

    It is the folder ``load_dataset("multikernelbench")`` finds from the repository root.
    """
    return Path(__file__).resolve().parent.parent


def labels_from_features(features: Any) -> Labels:
    """``ClassLabel`` names per label field, from ``datasets.Features`` or its JSON dict."""
    out: Labels = {}
    for field in LABEL_FIELDS:
        feature = features.get(field) if features is not None else None
        names = getattr(feature, "names", None)
        if names is None and isinstance(feature, dict) and feature.get("_type") == "ClassLabel":
            names = feature.get("names")
        if names is not None:
            out[field] = list(names)
    return out


def labels_from_schema(schema: Any) -> Labels:
    """``ClassLabel`` names from an Arrow schema's ``huggingface`` metadata (written by the builder)."""
    meta = (schema.metadata or {}).get(b"huggingface")
    if not meta:
        return {}
    return labels_from_features(json.loads(meta).get("info", {}).get("features"))


def config_files(folder: Path, config: str = "all") -> list[Path]:
    """The parquet files of one config, as the folder's card lists them (every ``data/*.parquet`` without one)."""
    import yaml

    card = folder / "README.md"
    text = card.read_text(encoding="utf-8") if card.is_file() else ""
    meta = yaml.safe_load(text.split("---\n", 2)[1]) if text.startswith("---\n") else None
    for entry in (meta or {}).get("configs", []):
        if entry.get("config_name") == config:
            paths = [p for spec in entry.get("data_files", []) for p in (
                [spec["path"]] if isinstance(spec["path"], str) else spec["path"])]
            return [folder / p for p in sorted(paths)]
    return sorted((folder / "data").glob("*.parquet"))


def rows_from_folder(folder: Path, config: str = "all") -> tuple[list[dict[str, Any]], Labels]:
    """The rows of one config of a built folder (default ``all``: every suite task once) and the label names."""
    import pyarrow.parquet as pq

    files = config_files(folder, config)
    if not files:
        raise FileNotFoundError(f"{folder}: no data/*.parquet (build it with `mkb dataset build`)")
    rows: list[dict[str, Any]] = []
    labels: Labels = {}
    for f in files:
        table = pq.read_table(f)
        labels = labels or labels_from_schema(table.schema)
        rows.extend(table.to_pylist())
    return rows, labels


def _rows(source: Any) -> tuple[list[dict[str, Any]], Labels]:
    if source is None:
        source = packaged_dataset_dir()
    if isinstance(source, (str, Path)):
        return rows_from_folder(Path(source))
    if isinstance(source, dict):
        # a datasets.DatasetDict (a dict of splits): the benchmark has one split; take every split's rows
        rows: list[dict[str, Any]] = []
        labels: Labels = {}
        for split in source.values():
            split_rows, split_labels = _rows(split)
            rows.extend(split_rows)
            labels = labels or split_labels
        return rows, labels
    if hasattr(source, "features") and hasattr(source, "to_list"):  # datasets.Dataset
        return list(source.to_list()), labels_from_features(source.features)
    if hasattr(source, "to_pylist"):  # pyarrow.Table
        return list(source.to_pylist()), labels_from_schema(source.schema)
    return [dict(r) for r in source], {}  # any iterable of row dicts


def verify(task: Task) -> None:
    fields = {f.name: getattr(task, f.name) for f in dataclasses.fields(Task) if f.name != "content_hash"}
    if content_hash(fields) != task.content_hash:
        raise DatasetIntegrityError(f"{task.id}: row does not match its content_hash {task.content_hash} "
                                    "(edited after the build?)")


def load_from_dataset(source: Any = None, categories: Iterable[str] | None = None,
                      ids: Iterable[str] | None = None, check: bool = True) -> list[Task]:
    """Tasks from a built dataset, filtered like :func:`load_suite` and sorted by id.

    ``source``: a built folder (with ``data/*.parquet``), a ``datasets.Dataset`` / ``DatasetDict`` from
    ``load_dataset``, a pyarrow table, or an iterable of row dicts (typed, or ``Task.to_row()``). Default: the
    copy built
    into the package folder.
    """
    rows, labels = _rows(source)
    tasks = [from_dataset_row(r, labels) for r in rows]
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
