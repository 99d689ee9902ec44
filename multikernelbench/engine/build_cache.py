"""The build cache's size: candidates' build folders under ``build_root/<backend>/<code hash>``, kept by last use.

Why: every distinct candidate leaves a build folder (a CPU extension ~1 MB, a CUDA one 5-40 MB with its objects),
and a sampling run of thousands of candidates fills a disk; each folder is only worth keeping while the same code
may come back (a resumed run, another strategy producing the same kernel). So a run ends by removing the least
recently used folders beyond ``EngineConfig.build_cache_gb``, and ``mkb cache prune`` does it on demand.

Only candidates' folders (named by their 20-hex code hash) are pruned: the reference's folders, compile caches and
precompiled headers beside them are the harness's own and cheap to keep. A folder whose build lock is held (a build
is running in it) or that was used within ``min_idle_s`` (a device stage may still load it) is left alone.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

_HASH = re.compile(r"[0-9a-f]{20}")
LOCK = ".mkb_build.lock"


@dataclass(frozen=True)
class BuildEntry:
    path: Path
    backend: str
    size_bytes: int
    last_used: float  # the folder's mtime: touched whenever a build or the cache answers for it


@dataclass
class PruneReport:
    removed: list[BuildEntry] = field(default_factory=list)
    busy: list[BuildEntry] = field(default_factory=list)  # over the cap or too old, but in use: kept
    kept_bytes: int = 0

    @property
    def freed_bytes(self) -> int:
        return sum(e.size_bytes for e in self.removed)


def touch(build_dir: Path) -> None:
    """Mark a build folder used now (its mtime), so pruning keeps the folders runs still ask for."""
    try:
        os.utime(build_dir)
    except OSError:
        pass


def _size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def entries(build_root: Path) -> list[BuildEntry]:
    """Every candidate build folder under ``build_root``, least recently used first."""
    out: list[BuildEntry] = []
    root = Path(build_root)
    if not root.is_dir():
        return out
    for backend_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for folder in backend_dir.iterdir():
            if folder.is_dir() and not folder.is_symlink() and _HASH.fullmatch(folder.name):
                try:
                    used = folder.stat().st_mtime
                except OSError:
                    continue
                out.append(BuildEntry(folder, backend_dir.name, _size(folder), used))
    return sorted(out, key=lambda e: e.last_used)


def _remove_unless_busy(entry: BuildEntry) -> bool:
    """Remove the folder under its own build lock, taken without waiting: False when a build holds it."""
    lock = entry.path / LOCK
    try:
        fh = open(lock, "a+")
    except OSError:
        fh = None
    try:
        if fh is not None:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
        shutil.rmtree(entry.path, ignore_errors=True)
        return not entry.path.exists()
    finally:
        if fh is not None:
            fh.close()


def prune(build_root: Path, max_bytes: int | None = None, older_than_s: float | None = None,
          min_idle_s: float = 600.0, now: float | None = None) -> PruneReport:
    """Remove least recently used candidate build folders until at most ``max_bytes`` remain, and every one
    unused for ``older_than_s``; never one used within ``min_idle_s`` or whose build is running."""
    now = time.time() if now is None else now
    found = entries(build_root)
    total = sum(e.size_bytes for e in found)
    report = PruneReport()
    for e in found:  # oldest first
        over = max_bytes is not None and total > max_bytes
        old = older_than_s is not None and now - e.last_used > older_than_s
        if not (over or old):
            continue
        if now - e.last_used < min_idle_s or not _remove_unless_busy(e):
            report.busy.append(e)
            continue
        report.removed.append(e)
        total -= e.size_bytes
    report.kept_bytes = total
    return report
