"""Least-recently-used pruning of cache folders, shared by the build cache (engine/build_cache.py) and the
precompiled headers' cap (backends/extbuild/pch_cache.py).

Why one routine: both caches keep folders by last use (the folder's mtime, touched by whoever uses it), both
must never remove a folder that is in use (its lock held, or used so recently that a run may be loading it),
and both report what they removed and what they had to keep over the cap. They differ only in which folders
count, how a folder is locked, and whether "old" alone is a reason to go; those stay with each cache.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar


class Used(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def last_used(self) -> float: ...


E = TypeVar("E", bound=Used)


@dataclass
class Pruned(Generic[E]):
    removed: list[E] = field(default_factory=list)
    busy: list[E] = field(default_factory=list)  # over the cap (or too old) but in use: kept
    kept_bytes: int = 0

    @property
    def freed_bytes(self) -> int:
        return sum(e.size_bytes for e in self.removed)


def folder_bytes(folder: Path, on_disk: bool = False) -> int:
    """The files' total under ``folder``: apparent sizes, or the blocks they hold on disk (what a disk cap is
    about; a sparse or tiny file's apparent size is not)."""
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            total += st.st_blocks * 512 if on_disk else st.st_size
    return total


def touch(folder: Path) -> None:
    """Mark ``folder`` used now (its mtime), so pruning keeps what runs still ask for."""
    try:
        os.utime(folder)
    except OSError:
        pass


def prune_lru(entries: Sequence[E], remove: Callable[[E], bool], *, max_bytes: int | None = None,
              older_than_s: float | None = None, min_idle_s: float = 600.0, keep: Collection[Path] = (),
              now: float | None = None) -> Pruned[E]:
    """Walk ``entries`` least recently used first, removing each that is over ``max_bytes`` of the rest or unused
    for ``older_than_s``; one in ``keep`` (resolved paths), used within ``min_idle_s``, or whose ``remove`` says
    it is busy (False) stays and is reported busy."""
    now = time.time() if now is None else now
    report: Pruned[E] = Pruned()
    total = sum(e.size_bytes for e in entries)
    for e in sorted(entries, key=lambda x: x.last_used):
        over = max_bytes is not None and total > max_bytes
        old = older_than_s is not None and now - e.last_used > older_than_s
        if not (over or old):
            continue
        if e.path.resolve() in keep or now - e.last_used < min_idle_s or not remove(e):
            report.busy.append(e)
            continue
        report.removed.append(e)
        total -= e.size_bytes
    report.kept_bytes = total
    return report
