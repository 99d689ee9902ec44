"""One exclusive file lock for build folders and caches shared by threads and processes.

``flock`` conflicts between separate ``open()`` calls even inside one process, so the same lock serialises
the compile threads of one run and concurrent runs (or workers) alike.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
