"""The precompiled-header folder's size: one ``<flags signature>/`` set per compiler command (~0.75 GB each).

Why: a set's signature hashes the compiler's flags, which name torch's include folders, so every new virtual
environment (each CI run, each ``pip install`` into a fresh venv) warms a new set beside the old ones, and
nothing ever removed them: the dev host's ``~/.cache/multikernelbench/pch`` reached 7.5 GB in two days and
filled its disk with the build folders. The build cache's cap (engine/build_cache.py) skips these folders on
purpose (they are the harness's own); this is their cap: least recently used sets first, never a set the run
asks for, never one in use.

"In use": the warmer holds ``<set>.lock`` while it writes a set, and a set touched within ``min_idle_s`` may be
read by another run's builds right now (runs touch the sets they use when they start). A set is removed under
its own lock, so a warmer cannot start writing into a folder being removed (the empty lock file stays).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from multikernelbench.util import lru_folders
from multikernelbench.util.lru_folders import Pruned

_SIG = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class PchSet:
    path: Path
    size_bytes: int
    last_used: float  # the folder's mtime: touched by every run that asks for it


#: What :func:`prune` returns: the sets removed, those kept over the cap (the run's own, locked or recently
#: used), the bytes left.
PchPrune = Pruned[PchSet]


def sets(pch_root: Path) -> list[PchSet]:
    """Every flag set's folder under ``pch_root``, least recently used first."""
    root = Path(pch_root)
    if not root.is_dir():
        return []
    out = []
    for folder in root.iterdir():
        if _SIG.fullmatch(folder.name) and folder.is_dir() and not folder.is_symlink():
            try:
                out.append(PchSet(folder, lru_folders.folder_bytes(folder, on_disk=True), folder.stat().st_mtime))
            except OSError:
                continue
    return sorted(out, key=lambda s: s.last_used)


def touch(folders: Iterable[Path]) -> None:
    """Mark the sets a run uses (their folders' mtime), so pruning keeps what runs still ask for."""
    for folder in folders:
        lru_folders.touch(folder)


def prune(pch_root: Path, max_bytes: int, keep: Iterable[Path] = (), min_idle_s: float = 3600.0) -> PchPrune:
    """Remove least recently used sets until the rest fit in ``max_bytes``; ``keep`` (the sets this run asks
    for), locked sets and sets used within ``min_idle_s`` stay."""
    return lru_folders.prune_lru(sets(pch_root), lambda s: _remove_locked(s.path), max_bytes=max_bytes,
                                 min_idle_s=min_idle_s, keep={Path(k).resolve() for k in keep})


def _remove_locked(folder: Path) -> bool:
    """Remove ``folder`` while holding its set's lock; False when a warmer holds it."""
    lock_path = folder.with_name(folder.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        shutil.rmtree(folder, ignore_errors=True)
        return not folder.exists()  # the lock file stays: a warmer waiting on it must share it with the next
    finally:
        os.close(fd)
