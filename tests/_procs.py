"""Process state for tests that wait on processes they do not reap (orphans, grandchildren)."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Running (or stopped): not gone and not a zombie, whose resources (files, device context) are released."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False
