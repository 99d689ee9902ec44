"""Build the task suite into a Hugging Face-style dataset folder: ``data/<category>.parquet`` + ``README.md``.

The folder is what ``datasets.load_dataset(<folder>)`` reads offline and what ``mkb dataset push`` uploads, so
the same bytes serve local users and the Hub. Rows are exactly :meth:`Task.to_row` (one schema for every
row, shapes as JSON strings), so :func:`multikernelbench.tasks.load_from_dataset` gives back records equal to
the ones loaded from the source files.

Determinism matters because the version is derived from content, and a rebuild of an unchanged suite must
not produce a diff: rows are sorted by id, the Arrow schema is fixed, the parquet writer options are pinned
and nothing time- or path-dependent is written. (Parquet bytes are identical for one pyarrow version; the
*version* string depends only on the tasks, never on the writer.)
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

# The layout constants and the schema live in schema.py (shared with the card); re-exported here.
from multikernelbench.dataset_builder.schema import (ALL_CONFIG, DATA_DIR, DATASET_NAME,  # noqa: F401
                                                     PARQUET_OPTIONS, SPLIT, arrow_schema)
from multikernelbench.tasks.record import Task


def dataset_version(tasks: Iterable[Task]) -> str:
    """Short hash over every task's content hash: changes iff some task's source or metadata changes."""
    lines = sorted(f"{t.id} {t.content_hash}" for t in tasks)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def rows_table(tasks: list[Task]):
    import pyarrow as pa

    schema = arrow_schema()
    rows = [t.to_row() for t in sorted(tasks, key=lambda t: t.id)]
    return pa.Table.from_pylist(rows, schema=schema)


def write_parquet(tasks: list[Task], path: Path) -> None:
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(rows_table(tasks), str(path), **PARQUET_OPTIONS)


@dataclass(frozen=True)
class BuildResult:
    folder: Path
    version: str
    counts: dict[str, int]  # category -> rows
    files: tuple[Path, ...]  # every file written, relative to folder

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def category_counts(tasks: Iterable[Task]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.category] = counts.get(t.category, 0) + 1
    return dict(sorted(counts.items()))


def data_files(tasks: Iterable[Task]) -> dict[str, str]:
    """category -> ``data/<category>-<hash8>.parquet``, the hash over that category's tasks.

    Why the hash is in the name: ``datasets`` keys its cache for a local folder with YAML ``configs`` on the
    file *patterns*, not on the files' contents or times (huggingface/datasets#2956), so a folder rebuilt in
    place (the package copy) would keep serving the old rows. A changed category gets a new file name,
    which changes the patterns and hence the cache key; unchanged categories keep their names (no churn).
    """
    by_cat: dict[str, list[Task]] = {}
    for t in tasks:
        by_cat.setdefault(t.category, []).append(t)
    return {cat: f"{DATA_DIR}/{cat}-{dataset_version(by_cat[cat])[:8]}.parquet" for cat in sorted(by_cat)}


def write_dataset(tasks: list[Task], folder: Path, template: str | Path | None = None,
                  note: str = "") -> BuildResult:
    """Write ``folder/README.md`` and ``folder/data/<category>.parquet`` (stale parquet files are removed).

    ``note`` is an optional markdown comment placed right after the card's YAML block (the in-package copy
    uses it to say that the folder is also the Python package).
    """
    from multikernelbench.dataset_builder.card import render_card

    if not tasks:
        raise ValueError("no tasks to build")
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate task ids")
    folder = Path(folder)
    data = folder / DATA_DIR
    data.mkdir(parents=True, exist_ok=True)
    counts = category_counts(tasks)
    version = dataset_version(tasks)
    files = data_files(tasks)
    for old in data.glob("*.parquet"):
        if f"{DATA_DIR}/{old.name}" not in files.values():
            old.unlink()
    written = []
    for cat, rel in files.items():
        write_parquet([t for t in tasks if t.category == cat], folder / rel)
        written.append(Path(rel))
    card = render_card(tasks, version, files, template=template, note=note)
    (folder / "README.md").write_text(card, encoding="utf-8")
    written.append(Path("README.md"))
    return BuildResult(folder=folder, version=version, counts=counts, files=tuple(sorted(written)))


def versioned_folder_name(version: str) -> str:
    return f"{DATASET_NAME}-{version}"


def build_dataset(out_parent: str | Path, tasks: list[Task] | None = None,
                  template: str | Path | None = None, replace: bool = True) -> BuildResult:
    """Build into ``out_parent/multikernelbench-<version>/`` (the folder name carries the version)."""
    if tasks is None:
        from multikernelbench.tasks import load_suite

        tasks = load_suite()
    folder = Path(out_parent) / versioned_folder_name(dataset_version(tasks))
    if folder.exists() and replace:
        shutil.rmtree(folder)
    return write_dataset(tasks, folder, template=template)


PACKAGE_NOTE = ("<!-- This folder is both the `multikernelbench` Python package and the built dataset that "
                "`load_dataset(\"multikernelbench\")` finds from the repository root. Generated by "
                "`mkb dataset build` from CARD.md: do not edit by hand. -->")


def package_folder() -> Path:
    from multikernelbench.tasks.from_dataset import packaged_dataset_dir

    return packaged_dataset_dir()


def in_source_checkout() -> bool:
    """True when the package folder sits in a repository checkout (editable install), where it may be written."""
    root = package_folder().parent
    return (root / "pyproject.toml").is_file() and (root / "CARD.md").is_file()


def install_into_package(tasks: list[Task], template: str | Path | None = None) -> BuildResult:
    """Refresh ``multikernelbench/README.md`` + ``multikernelbench/data/`` (the copy the bare name finds)."""
    if not in_source_checkout():
        raise RuntimeError(f"{package_folder()} is not inside a source checkout; refusing to write into it")
    return write_dataset(tasks, package_folder(), template=template, note=PACKAGE_NOTE)


def built_version(folder: str | Path) -> str | None:
    """The version in a built folder's card, or None when there is no card."""
    from multikernelbench.dataset_builder.push import PushError, read_version

    try:
        return read_version(Path(folder))
    except (OSError, PushError):
        return None


def package_copy_problems(tasks: list[Task], template: str | Path | None = None) -> list[str]:
    """Why the package copy does not match the suite (empty: up to date).

    Compares the version (rows) and the card text, both pure functions of the tasks and CARD.md; the
    parquet bytes are not compared because another pyarrow release may encode the same rows differently.
    """
    from multikernelbench.dataset_builder.card import render_card
    from multikernelbench.tasks.from_dataset import rows_from_folder

    folder = package_folder()
    want = dataset_version(tasks)
    have = built_version(folder)
    if have is None:
        return [f"{folder}/README.md is missing or not a built card"]
    problems = []
    if have != want:
        problems.append(f"card version {have} != suite version {want}")
    card = render_card(tasks, want, data_files(tasks), template=template, note=PACKAGE_NOTE)
    if (folder / "README.md").read_text(encoding="utf-8") != card:
        problems.append("README.md differs from the card rendered from CARD.md")
    try:
        rows = sorted(rows_from_folder(folder), key=lambda r: r["id"])
    except FileNotFoundError as exc:
        return problems + [str(exc)]
    if rows != [t.to_row() for t in sorted(tasks, key=lambda t: t.id)]:
        problems.append("data/*.parquet rows differ from the suite")
    return problems
