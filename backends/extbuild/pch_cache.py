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
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

_SIG = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class PchSet:
    path: Path
    size_bytes: int
    last_used: float  # the folder's mtime: touched by every run that asks for it


@dataclass
class PchPrune:
    removed: list[PchSet] = field(default_factory=list)
    busy: list[PchSet] = field(default_factory=list)  # beyond the cap but locked or recently used: kept
    kept_bytes: int = 0


def _size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512  # on disk, not apparent
            except OSError:
                pass
    return total


def sets(pch_root: Path) -> list[PchSet]:
    """Every flag set's folder under ``pch_root``, least recently used first."""
    root = Path(pch_root)
    if not root.is_dir():
        return []
    out = []
    for folder in root.iterdir():
        if _SIG.fullmatch(folder.name) and folder.is_dir() and not folder.is_symlink():
            try:
                out.append(PchSet(folder, _size(folder), folder.stat().st_mtime))
            except OSError:
                continue
    return sorted(out, key=lambda s: s.last_used)


def touch(folders: Iterable[Path]) -> None:
    """Mark the sets a run uses (their folders' mtime), so pruning keeps what runs still ask for."""
    for folder in folders:
        try:
            os.utime(folder)
        except OSError:
            pass


def prune(pch_root: Path, max_bytes: int, keep: Iterable[Path] = (), min_idle_s: float = 3600.0) -> PchPrune:
    """Remove least recently used sets until the rest fit in ``max_bytes``; ``keep`` (the sets this run asks
    for), locked sets and sets used within ``min_idle_s`` stay."""
    kept = {Path(k).resolve() for k in keep}
    found = sets(pch_root)
    report = PchPrune()
    total = sum(s.size_bytes for s in found)
    now = time.time()
    for s in found:
        if total <= max_bytes:
            break
        if s.path.resolve() in kept or now - s.last_used < min_idle_s:
            report.busy.append(s)
            continue
        if _remove_locked(s.path):
            report.removed.append(s)
            total -= s.size_bytes
        else:
            report.busy.append(s)
    report.kept_bytes = total
    return report


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
