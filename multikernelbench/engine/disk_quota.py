"""The disk a candidate may leave behind: a cap on the total of its work dir and build folder.

Why: ``RLIMIT_FSIZE`` caps each file a worker writes, not how many; a candidate wrote 301 MB into its own
build folder, which persists as the build cache (issue #41). So after the build and after the device stage the
trusted parent adds up the candidate's folders; over the cap, the candidate gets ``runtime_error`` naming the
quota and its build folder is removed (its work dirs go anyway when their worker closes).

Sizes are apparent sizes (``st_size``), so a sparse file counts at its full length: a candidate cannot hide a
large file in holes, and a test can write one fast. Links are not followed (a link to a shared folder adds
nothing it wrote).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path


def folder_bytes(path: str | Path) -> int:
    """Apparent bytes under ``path`` (0 when it is gone); files that vanish meanwhile are skipped."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def over_quota(folders: Iterable[str | Path | None], cap_mb: float) -> str | None:
    """The verdict's message when the folders together hold more than ``cap_mb`` MiB, else None (also when
    ``cap_mb`` is 0: no cap)."""
    if cap_mb <= 0:
        return None
    sizes = {str(f): folder_bytes(f) for f in folders if f is not None}
    total = sum(sizes.values())
    if total <= cap_mb * (1 << 20):
        return None
    biggest = max(sizes, key=lambda k: sizes[k])
    return (f"disk quota exceeded: the candidate's folders hold {total / (1 << 20):.0f} MiB, over the "
            f"{cap_mb:.0f} MiB cap (EngineConfig.disk_quota_mb; most in {biggest}); its build folder was removed")


def remove(folder: str | Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
