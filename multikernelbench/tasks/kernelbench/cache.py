"""``--tasks kernelbench:PATH``: a KernelBench-format folder imported on first use, cached by its content.

The cache folder is named by a hash of the importer's own source and of every problem file's path and bytes,
so an edited problem (or importer) is re-imported and a stale task never serves a result.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

PREFIX = "kernelbench:"


def cache_root() -> Path:
    return Path.home() / ".cache" / "multikernelbench" / "kernelbench"


def folder_hash(root: Path) -> str:
    from multikernelbench.tasks.kernelbench.importer import problem_files

    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + path.read_bytes())
    for path in problem_files(root):
        h.update(str(path.relative_to(root) if root.is_dir() else path.name).encode() + path.read_bytes())
    return h.hexdigest()[:12]


def imported_folder(root: Path, log: Callable[[str], None] | None = None) -> Path:
    """The task folder of ``root``'s problems, imported now if this content was never imported."""
    from multikernelbench.tasks.kernelbench.importer import import_folder

    root = root.resolve()
    if not root.exists():
        raise FileNotFoundError(f"no such KernelBench-format folder or file: {root}")
    folder = cache_root() / f"{root.name}-{folder_hash(root)}"
    if not (folder / "import_table.json").is_file():
        tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        import_folder(root, tmp, log=log)
        try:
            tmp.rename(folder)
        except OSError:  # another process imported the same bytes first
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
