"""Build the task suite into a Hugging Face-style dataset folder: ``data/<config>-<hash>.parquet`` + ``README.md``.

The folder is what ``datasets.load_dataset(<folder>)`` reads offline, what ``mkb dataset push`` uploads and
what the installed package copies into the ``datasets`` cache (:mod:`multikernelbench.hfcache`), so the same
bytes serve local users and the Hub. Rows are typed (:mod:`multikernelbench.tasks.rows`: shapes as lists of
``{name, size}``, ``category``/``dtype`` as ``ClassLabel``), and
:func:`multikernelbench.tasks.load_from_dataset` gives back records equal to the ones loaded from the sources.

Configs: one per category plus ``all`` (the default, every suite task). ``extra_configs`` adds named task sets
that are not part of ``all`` (e.g. a held-out set); they share the features, so their categories join the
``ClassLabel`` names.

Determinism matters because the version is derived from content, and a rebuild of an unchanged suite must
not produce a diff: rows are sorted by id, the Arrow schema is fixed, the parquet writer options are pinned
and nothing time- or path-dependent is written. (Parquet bytes are identical for one pyarrow version; the
*version* string depends only on the tasks, never on the writer.)
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# The layout constants and the schema live in schema.py (shared with the card); re-exported here.
from multikernelbench.dataset_builder.schema import (  # noqa: F401
    ALL_CONFIG,
    DATA_DIR,
    DATASET_NAME,
    PARQUET_OPTIONS,
    SPLIT,
    arrow_schema,
    category_names,
    config_tasks,
    dataset_version,
    rows_table,
)
from multikernelbench.tasks.record import Task


def write_parquet(tasks: list[Task], path: Path, categories: Sequence[str] | None = None) -> None:
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(rows_table(tasks, categories), str(path), **PARQUET_OPTIONS)


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


def data_files(tasks: Iterable[Task], extra_configs: Mapping[str, list[Task]] | None = None) -> dict[str, str]:
    """config -> ``data/<config>-<hash8>.parquet``, the hash over that config's tasks.

    Why the hash is in the name: ``datasets`` keys its cache for a local folder with YAML ``configs`` on the
    file *patterns*, not on the files' contents or times (huggingface/datasets#2956), so a folder rebuilt in
    place (the package copy) would keep serving the old rows. A changed category gets a new file name,
    which changes the patterns and hence the cache key; unchanged categories keep their names (no churn).
    """
    return {name: f"{DATA_DIR}/{name}-{dataset_version(sub)[:8]}.parquet"
            for name, sub in config_tasks(tasks, extra_configs).items()}


def write_dataset(tasks: list[Task], folder: Path, template: str | Path | None = None,
                  note: str = "", extra_configs: Mapping[str, list[Task]] | None = None) -> BuildResult:
    """Write ``folder/README.md`` and ``folder/data/<config>-<hash>.parquet`` (stale parquet files are removed).

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
    groups = config_tasks(tasks, extra_configs)
    files = data_files(tasks, extra_configs)
    names = category_names(t for sub in groups.values() for t in sub)
    for old in data.glob("*.parquet"):
        if f"{DATA_DIR}/{old.name}" not in files.values():
            old.unlink()
    written = []
    for name, rel in files.items():
        write_parquet(groups[name], folder / rel, names)
        written.append(Path(rel))
    card = render_card(tasks, version, files, template=template, note=note, extra_configs=extra_configs)
    (folder / "README.md").write_text(card, encoding="utf-8")
    written.append(Path("README.md"))
    return BuildResult(folder=folder, version=version, counts=counts, files=tuple(sorted(written)))


def versioned_folder_name(version: str) -> str:
    return f"{DATASET_NAME}-{version}"


def build_dataset(out_parent: str | Path, tasks: list[Task] | None = None,
                  template: str | Path | None = None, replace: bool = True,
                  extra_configs: Mapping[str, list[Task]] | None = None) -> BuildResult:
    """Build into ``out_parent/multikernelbench-<version>/`` (the folder name carries the version)."""
    if tasks is None:
        from multikernelbench.tasks import load_suite

        tasks = load_suite()
    folder = Path(out_parent) / versioned_folder_name(dataset_version(tasks))
    if folder.exists() and replace:
        shutil.rmtree(folder)
    return write_dataset(tasks, folder, template=template, extra_configs=extra_configs)


PACKAGE_NOTE = ("<!-- This folder is both the `multikernelbench` Python package and the built dataset that "
                "`load_dataset(\"multikernelbench\")` finds from the repository root (an installed package copies "
                "it into the `datasets` cache: multikernelbench/hfcache). Generated by "
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
    from multikernelbench.tasks.from_dataset import load_from_dataset

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
        have_tasks = load_from_dataset(folder, check=False)
    except (FileNotFoundError, ValueError) as exc:
        return problems + [str(exc)]
    if have_tasks != sorted(tasks, key=lambda t: t.id):
        problems.append("data/*.parquet rows differ from the suite")
    return problems
