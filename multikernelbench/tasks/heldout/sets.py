"""Task sets by name, so every command takes ``--tasks``: ``suite`` (default), ``heldout-<seed>[:<count>]``, or
a folder (task files as ``<category>/<name>.py``, e.g. written by ``mkb tasks generate --out``, or a built
dataset folder with ``data/*.parquet``).

A held-out set is a pure function of its seed and count, so it is regenerated where it is needed and kept in
a cache folder named by seed, count and a hash of the generator's own source (a changed generator never
serves stale files). Held-out categories start with ``heldout_``; :func:`task_set_of` is the one rule the
report uses to put a result in the suite or the held-out column.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from multikernelbench.tasks.record import Task

DEFAULT_COUNT = 50
SUITE = "suite"
HELDOUT = "held-out"
_HELDOUT = re.compile(r"^heldout-(\d+)(?::(\d+))?$")


class TaskSetError(ValueError):
    """An unknown task-set name."""


def task_set_of(task_id: str) -> str:
    """``held-out`` for a generated task's id, else ``suite``."""
    from multikernelbench.tasks.heldout.generate import CATEGORY_PREFIX

    return HELDOUT if task_id.startswith(CATEGORY_PREFIX) else SUITE


def parse_heldout(spec: str) -> tuple[int, int] | None:
    """``heldout-7`` -> (7, 50); ``heldout-7:500`` -> (7, 500); anything else -> None."""
    m = _HELDOUT.match(spec)
    return (int(m.group(1)), int(m.group(2) or DEFAULT_COUNT)) if m else None


def generator_version() -> str:
    """Hash of the generator's source files: part of the cache key of generated sets."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()[:10]


def cache_root() -> Path:
    return Path.home() / ".cache" / "multikernelbench" / "heldout"


def heldout_folder(seed: int, count: int, log=None) -> Path:
    """The folder of set ``heldout-<seed>:<count>``, generated on first use."""
    from multikernelbench.tasks.heldout.generate import generate, write

    folder = cache_root() / f"heldout-{seed}-{count}-{generator_version()}"
    if not (folder / "heldout.json").is_file():
        tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")  # two processes may generate it at once
        shutil.rmtree(tmp, ignore_errors=True)
        write(generate(seed, count, log=log), tmp)
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first: its files are the same bytes
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def load_task_set(spec: str | None = None, categories: Iterable[str] | None = None,
                  ids: Iterable[str] | None = None, log=None) -> list[Task]:
    """The tasks of a named set, filtered like :func:`multikernelbench.tasks.load_suite`."""
    from multikernelbench.tasks import load_from_dataset, load_suite

    spec = spec or SUITE
    if spec == SUITE:
        return load_suite(categories=categories, ids=ids)
    if spec.startswith("kernelbench:"):  # a KernelBench-format folder, imported on first use
        from multikernelbench.tasks.kernelbench.cache import imported_folder

        try:
            folder = imported_folder(Path(spec[len("kernelbench:"):]), log=log)
        except FileNotFoundError as exc:
            raise TaskSetError(str(exc)) from exc
        return load_suite(folder, categories=categories, ids=ids)
    heldout = parse_heldout(spec)
    if heldout:
        return load_suite(heldout_folder(*heldout, log=log), categories=categories, ids=ids)
    path = Path(spec)
    if (path / "data").is_dir():
        return load_from_dataset(path, categories=categories, ids=ids)
    if path.is_dir():
        return load_suite(path, categories=categories, ids=ids)
    raise TaskSetError(f"unknown task set {spec!r}: use 'suite', 'heldout-<seed>[:<count>]', "
                       "'kernelbench:<folder>' or a folder")
