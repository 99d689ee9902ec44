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
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from multikernelbench.util import lru_folders
from multikernelbench.util.lru_folders import Pruned

_HASH = re.compile(r"[0-9a-f]{20}")
LOCK = ".mkb_build.lock"


@dataclass(frozen=True)
class BuildEntry:
    path: Path
    backend: str
    size_bytes: int
    last_used: float  # the folder's mtime: touched whenever a build or the cache answers for it


#: What :func:`prune` returns: the folders removed, those kept over the cap because in use, the bytes left.
PruneReport = Pruned[BuildEntry]


def touch(build_dir: Path) -> None:
    """Mark a build folder used now (its mtime), so pruning keeps the folders runs still ask for."""
    lru_folders.touch(build_dir)


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
                out.append(BuildEntry(folder, backend_dir.name, lru_folders.folder_bytes(folder), used))
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
    return lru_folders.prune_lru(entries(build_root), _remove_unless_busy, max_bytes=max_bytes,
                                 older_than_s=older_than_s, min_idle_s=min_idle_s, now=now)
