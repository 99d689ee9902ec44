"""A root test session keeps its temporary folders where no other pytest session changes their mode.

Why: with ``EngineConfig.drop_root`` a root harness runs its workers as ``nobody``, and the parent makes every
ancestor of a worker's folders searchable for it (engine/worker_uid.py: ``o+x``). pytest's default base
temporary folder is ``/tmp/pytest-of-root/pytest-N``, and *every* pytest session that starts resets
``/tmp/pytest-of-root`` to ``0700`` (pytest's getbasetemp: "fixup any world-readable temp rootdir"). So another
session starting on the same host (a second developer, CI job or helper) took the search bit away from a
running session's workers mid-build: torch's build baton in ``<build_root>/cpu/<hash>/mkb_cpu_*/`` could not be
removed (EACCES; tests/test_anticheat_cpu.py with ``drop_root`` on, 2026-12-04: 2 of 44 builds) although every
file there was the worker's own. Nothing of the engine changed the folder; its ancestor changed.

So a root session without ``--basetemp`` gets its own numbered folder under ``/tmp/mkb-pytest-of-root``
(``0711``), which no pytest session touches; a session that is not root, or that is given ``--basetemp``, and
pytest-xdist's workers (their base folder comes from the controller) are left as they are. Like pytest's own
numbering, older sessions' folders are removed once their session has ended, the newest ``KEEP`` kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

KEEP = 3
ROOT_NAME = "mkb-pytest-of-root"


def private_root() -> Path:
    return Path(tempfile.gettempdir()) / ROOT_NAME


def _alive(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text().split()[0]), 0)
        return True
    except (OSError, ValueError, IndexError):
        return False


def _prune(root: Path, keep: int) -> None:
    """Folders of ended sessions beyond the newest ``keep`` (a folder whose session lives is never removed)."""
    sessions = sorted((p for p in root.iterdir() if p.is_dir() and p.name.startswith("pytest-")),
                      key=lambda p: p.stat().st_mtime, reverse=True)
    for folder in sessions[keep:]:
        pid_file = root / f"{folder.name}.pid"
        if _alive(pid_file):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        pid_file.unlink(missing_ok=True)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if os.geteuid() != 0 or config.option.basetemp or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    root = private_root()
    root.mkdir(mode=0o711, exist_ok=True)
    if root.is_symlink() or root.stat().st_uid != 0:
        return  # not ours: pytest's default, as before
    os.chmod(root, 0o711)
    try:
        _prune(root, KEEP)
    except OSError:
        pass
    folder = Path(tempfile.mkdtemp(prefix="pytest-", dir=root))
    (root / f"{folder.name}.pid").write_text(f"{os.getpid()}\n")
    config.option.basetemp = str(folder)  # pytest empties it and makes it 0700; the engine adds o+x for nobody
