"""Render the dataset card (``README.md`` of the built folder) from the top-level ``CARD.md`` template.

The prose lives in ``CARD.md`` so it can be edited as markdown; this module only fills ``{{ name }}``
placeholders with numbers computed from the tasks and prepends the YAML block that ``datasets`` and the Hub
read: ``configs`` (one per category plus ``all``, the default, and any extra configs, each with the row
format's ``version``) and ``dataset_info`` (per config: the typed features, the split's size). An unknown
placeholder is an error rather
than a silent blank, and every ``Task`` field must have a description here so the fields table cannot
fall behind the record.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from multikernelbench.dataset_builder.schema import (
    ALL_CONFIG,
    FORMAT_VERSION,
    SPLIT,
    category_names,
    config_tasks,
    features_yaml,
    rows_table,
    type_names,
)
from multikernelbench.tasks.record import Task

FIELD_DOCS = {
    "id": "`<category>.<name>[.bf16]`, unique; also the file stem a solution is saved under",
    "name": "task name (the source file stem)",
    "category": "one of the categories above (also the config name)",
    "description": "one line: what the reference computes",
    "dtype": "`float32`, `bfloat16`, ...: inputs and parameters are cast to it by the harness",
    "source": "the task file verbatim: reference `Model`, `get_init_inputs`, `get_inputs`, shapes, cost functions",
    "test_shapes": "the shapes used for correctness checks; each a list of `{name, size}` (sorted by name)",
    "bench_shape": "the shape timed on a datacenter GPU, as `{name, size}` pairs",
    "cpu_bench_shape": "the shape timed on a few CPU cores, as `{name, size}` pairs",
    "atol": "absolute tolerance: `abs(out - ref) <= atol + rtol * abs(ref)` elementwise",
    "rtol": "relative tolerance",
    "flops": "floating-point operations of one forward at `bench_shape` (multiply-add = 2)",
    "bytes": "compulsory DRAM traffic at `bench_shape` in this dtype (roofline denominator)",
    "cpu_flops": "`flops` at `cpu_bench_shape`",
    "cpu_bytes": "`bytes` at `cpu_bench_shape`",
    "seeds_per_shape": "correctness trials (fresh secret input seeds) per test shape",
    "content_hash": "sha256 prefix over all other fields; evaluation results are keyed by it",
}

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\s*\}\}")
_TEMPLATE_COMMENT = re.compile(r"\A\s*<!--\s*TEMPLATE.*?-->\s*", re.S)


def default_template() -> Path:
    """CARD.md at the repository root (the builder runs from a checkout; pass --card elsewhere)."""
    return Path(__file__).resolve().parent.parent / "CARD.md"


def front_matter(tasks: list[Task], version: str, files: dict[str, str],
                 extra_configs: Mapping[str, list[Task]] | None = None) -> str:
    """YAML block; ``files`` maps config -> relative parquet path (``all`` lists every category's file)."""
    groups = config_tasks(tasks, extra_configs)
    cats = sorted({t.category for t in tasks})
    groups_all = {ALL_CONFIG: list(tasks), **groups}
    names = category_names(t for sub in groups.values() for t in sub)
    configs = [{"config_name": ALL_CONFIG, "default": True, "version": FORMAT_VERSION,
                "data_files": [{"split": SPLIT, "path": [files[c] for c in cats]}]}]
    configs += [{"config_name": c, "version": FORMAT_VERSION, "data_files": [{"split": SPLIT, "path": files[c]}]}
                for c in groups]
    feats = features_yaml(names)
    infos = []
    for name, sub in groups_all.items():
        nbytes = rows_table(sub, names).nbytes
        infos.append({"config_name": name, "features": copy.deepcopy(feats),  # no YAML anchors/aliases
                      "splits": [{"name": SPLIT, "num_bytes": nbytes, "num_examples": len(sub)}],
                      "dataset_size": nbytes})
    meta = {
        "pretty_name": "MultiKernelBench",
        "license": "apache-2.0",
        "language": ["en"],
        "tags": ["code", "benchmark", "kernels", "pytorch", "gpu", "performance"],
        "task_categories": ["text-generation"],
        "size_categories": ["n<1K" if len(tasks) < 1000 else "1K<n<10K"],
        "version": version,
        "configs": configs,
        "dataset_info": infos,
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, default_flow_style=False, width=1000) + "---\n"


def _category_table(tasks: list[Task]) -> str:
    lines = ["| config (category) | rows | float32 | bfloat16 |", "|---|---:|---:|---:|"]
    for cat in sorted({t.category for t in tasks}):
        sub = [t for t in tasks if t.category == cat]
        lines.append(f"| `{cat}` | {len(sub)} | {sum(t.dtype == 'float32' for t in sub)} | "
                     f"{sum(t.dtype == 'bfloat16' for t in sub)} |")
    lines.append(f"| `all` (default) | {len(tasks)} | {sum(t.dtype == 'float32' for t in tasks)} | "
                 f"{sum(t.dtype == 'bfloat16' for t in tasks)} |")
    return "\n".join(lines)


def _fields_table(tasks: list[Task]) -> str:
    types = type_names(category_names(tasks))
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(Task):
        if f.name not in FIELD_DOCS:
            raise KeyError(f"dataset card: Task field {f.name!r} has no description in FIELD_DOCS")
        lines.append(f"| `{f.name}` | {types[f.name]} | {FIELD_DOCS[f.name]} |")
    return "\n".join(lines)


def card_values(tasks: list[Task], version: str) -> dict[str, str]:
    return {
        "version": version,
        "num_tasks": str(len(tasks)),
        "num_categories": str(len({t.category for t in tasks})),
        "num_files": str(len({(t.category, t.name) for t in tasks})),  # task files (bf16 = variant row)
        "num_bf16": str(sum(t.dtype == "bfloat16" for t in tasks)),
        "category_table": _category_table(tasks),
        "fields_table": _fields_table(tasks),
        "format_version": FORMAT_VERSION,
        "split": SPLIT,
    }


def render_card(tasks: list[Task], version: str, files: dict[str, str], template: str | Path | None = None,
                note: str = "", extra_configs: Mapping[str, list[Task]] | None = None) -> str:
    path = Path(template) if template else default_template()
    if not path.is_file():
        raise FileNotFoundError(f"dataset card template {path} not found (run from a checkout or pass --card)")
    text = _TEMPLATE_COMMENT.sub("", path.read_text(encoding="utf-8"), count=1)
    values = card_values(tasks, version)
    unknown = sorted({m.group(1) for m in _PLACEHOLDER.finditer(text)} - set(values))
    if unknown:
        raise KeyError(f"{path}: unknown placeholders {unknown}; known: {sorted(values)}")
    body = _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
    note = f"\n{note.strip()}\n\n" if note else "\n"
    return front_matter(tasks, version, files, extra_configs) + note + body.lstrip("\n")
