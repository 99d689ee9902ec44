"""The dataset's fixed layout, shared by the builder, the card and the cache seeder: names, the split, the
parquet writer options and the typed features of a row.

The features are declared once here, as plain values, and rendered three ways: the Arrow schema the parquet
files are written with, the ``datasets`` features JSON stored in those files' schema metadata (key
``huggingface``, as ``datasets`` itself writes it, so ``load_dataset("parquet", ...)`` and our own reader see
the ``ClassLabel`` names too) and the YAML ``dataset_info.features`` of the card. The JSON and YAML use the
forms that every ``datasets`` release from 3.0 on reads (a list is ``[feature]`` / ``list:``), so a card
written here loads the same under ``datasets`` 3, 4 and 5. Every Task field must have a feature: a new field
without one is an error, not a silent string column.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from multikernelbench.tasks.record import Task
from multikernelbench.tasks.rows import DTYPE_NAMES, to_dataset_row

DATASET_NAME = "multikernelbench"
#: The row format's semantic version, the ``version`` of every config (``datasets`` shows it as the builder's
#: version and names a cache folder after it). 2.0.0: typed rows. The *content* version is the hash
#: :func:`dataset_version` (the card's top-level ``version`` and the Hub tag).
FORMAT_VERSION = "2.0.0"
SPLIT = "test"  # a benchmark is an evaluation set; every config has this one split
DATA_DIR = "data"
ALL_CONFIG = "all"

# Pinned writer options: a library default that changes between pyarrow releases must not change our files.
# The Arrow schema is stored (its metadata carries the features and ClassLabel names).
PARQUET_OPTIONS = dict(compression="zstd", compression_level=9, use_dictionary=True, write_statistics=False,
                       version="2.6", data_page_version="1.0", row_group_size=1 << 20)


@dataclasses.dataclass(frozen=True)
class Label:
    """A ``ClassLabel``: stored as int64, named by ``names``."""

    names: tuple[str, ...]


#: One shape: ``[{"name": dimension, "size": int}]`` sorted by name (see multikernelbench/tasks/rows.py).
SHAPE = [{"name": "string", "size": "int64"}]
_SCALARS = {"str": "string", "int": "int64", "float": "float64"}
_SHAPES = {"test_shapes": [SHAPE], "bench_shape": SHAPE, "cpu_bench_shape": SHAPE}


def features(categories: Sequence[str]) -> dict[str, Any]:
    """Field -> feature: ``"string"``/``"int64"``/``"float64"``, :class:`Label`, ``[inner]`` or ``{name: feature}``."""
    labels = {"category": Label(tuple(categories)), "dtype": Label(DTYPE_NAMES)}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Task):
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        feature = labels.get(f.name) or _SHAPES.get(f.name) or _SCALARS.get(ann)
        if feature is None:
            raise TypeError(f"Task field {f.name!r} ({ann}) has no dataset feature: declare one in schema.py")
        out[f.name] = feature
    return out


def _arrow_type(feature: Any):
    import pyarrow as pa

    if isinstance(feature, Label):
        return pa.int64()
    if isinstance(feature, list):
        return pa.list_(_arrow_type(feature[0]))
    if isinstance(feature, dict):
        return pa.struct([pa.field(k, _arrow_type(v)) for k, v in feature.items()])
    return {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}[feature]


def _hf_json(feature: Any) -> Any:
    if isinstance(feature, Label):
        return {"names": list(feature.names), "_type": "ClassLabel"}
    if isinstance(feature, list):
        return [_hf_json(feature[0])]
    if isinstance(feature, dict):
        return {k: _hf_json(v) for k, v in feature.items()}
    return {"dtype": feature, "_type": "Value"}


def features_json(categories: Sequence[str]) -> dict[str, Any]:
    """The ``datasets`` features dict (``Features.from_dict`` reads it)."""
    return {name: _hf_json(f) for name, f in features(categories).items()}


def arrow_schema(categories: Sequence[str]):
    """The Arrow schema of a row, with the features JSON in its ``huggingface`` metadata."""
    import pyarrow as pa

    # nullable, as datasets writes them: from_arrow_schema only trusts the metadata for fields equal to its own
    fields = [pa.field(name, _arrow_type(f)) for name, f in features(categories).items()]
    meta = json.dumps({"info": {"features": features_json(categories)}})
    return pa.schema(fields, metadata={"huggingface": meta})


def _yaml_inner(feature: Any) -> dict[str, Any]:
    if isinstance(feature, Label):
        return {"dtype": {"class_label": {"names": {str(i): n for i, n in enumerate(feature.names)}}}}
    if isinstance(feature, list):
        inner = _yaml_inner(feature[0])
        return {"list": inner.get("dtype", inner.get("struct", inner))}
    if isinstance(feature, dict):
        return {"struct": [{"name": k, **_yaml_inner(v)} for k, v in feature.items()]}
    return {"dtype": feature}


def features_yaml(categories: Sequence[str]) -> list[dict[str, Any]]:
    """``dataset_info.features`` of the card, in the YAML form ``datasets`` writes for the same features."""
    out = []
    for name, f in features(categories).items():
        inner = _yaml_inner(f)
        out.append({"name": name, **({"struct": inner["struct"]} if "struct" in inner else inner)})
    return out


def type_names(categories: Sequence[str]) -> dict[str, str]:
    """Field -> a short type for the card's fields table."""
    def name(f: Any) -> str:
        if isinstance(f, Label):
            return "ClassLabel"
        if isinstance(f, list):
            return f"list[{name(f[0])}]"
        if isinstance(f, dict):
            return "{" + ", ".join(f"{k}: {name(v)}" for k, v in f.items()) + "}"
        return f

    return {k: name(v) for k, v in features(categories).items()}


def dataset_version(tasks: Iterable[Task]) -> str:
    """Short hash over every task's content hash: changes iff some task's source or metadata changes."""
    lines = sorted(f"{t.id} {t.content_hash}" for t in tasks)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def config_tasks(tasks: Iterable[Task], extra_configs: Mapping[str, list[Task]] | None = None
                 ) -> dict[str, list[Task]]:
    """File config -> its tasks: one per category, then the extra configs (``all`` lists the category files)."""
    by_cat: dict[str, list[Task]] = {}
    for t in tasks:
        by_cat.setdefault(t.category, []).append(t)
    out = {cat: by_cat[cat] for cat in sorted(by_cat)}
    for name, extra in (extra_configs or {}).items():
        if name in out or name == ALL_CONFIG:
            raise ValueError(f"extra config {name!r} collides with a category or {ALL_CONFIG!r}")
        if not extra:
            raise ValueError(f"extra config {name!r} has no tasks")
        out[name] = list(extra)
    return out


def category_names(tasks: Iterable[Task]) -> tuple[str, ...]:
    """The ``ClassLabel`` names of ``category``: every category present, sorted."""
    return tuple(sorted({t.category for t in tasks}))


def rows_table(tasks: list[Task], categories: Sequence[str] | None = None):
    import pyarrow as pa

    categories = category_names(tasks) if categories is None else categories
    rows = [to_dataset_row(t, categories) for t in sorted(tasks, key=lambda t: t.id)]
    return pa.Table.from_pylist(rows, schema=arrow_schema(categories))
