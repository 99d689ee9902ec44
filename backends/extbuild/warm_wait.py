"""Wait, bounded, for something the trusted warmer is making right now (a light-header analysis, a PCH).

    python warm_wait.py FILE FOLDER SECONDS     (always exits 0: it only waits)

Why: a run's first builds start a few seconds after the warmer (backends/extbuild/cuda_warm.py). Without waiting,
each of them made its own light-header analysis (~10 s of nvcc on every build's critical path, measured on
the H200: ``benchmarks/throughput/``) and compiled ``main.cpp`` without the PCH, while the cores they took
slowed the warmer that would have served them all. The warmer marks the folder it is filling with
:data:`MARKER` (its pid); a build waits while that mark stands and its process lives, up to ``SECONDS``, then
goes on with whatever is there. The mark is in a folder the builds may only read, so a candidate cannot
make another build wait.

Standard library only: run as a script inside a build (ninja's command line, the nvcc_light driver).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

MARKER = ".warming"


def probe_dir_prefix(pid: int) -> str:
    """Temporary folders of a warmer or probe are named after its pid, so that the parent which kills a warmer
    (``PchWarmer.stop``) can remove what its ``TemporaryDirectory`` never got to clean up."""
    return f"mkb-pch-{pid}-"

#: A mark older than this is a dead run's (a whole warm takes minutes on 2 cores, seconds on the H200).
STALE_S = 900.0


def marked(folder: Path) -> bool:
    """The folder's warming mark stands and is younger than :data:`STALE_S`, without asking whether its process
    lives: for the build worker itself, whose audit hook reports any signal it sends (even signal 0) as a
    sandbox violation; the waiter it sets up (a process of its own, run by ninja) checks the pid."""
    try:
        return time.time() - (Path(folder) / MARKER).stat().st_mtime <= STALE_S
    except OSError:
        return False


def warmer_active(folder: Path) -> bool:
    """The folder's warming mark stands, is younger than :data:`STALE_S` and names a live process (inside the
    kernel sandbox, another process's liveness reads as "alive": a signal scope denies even signal 0; the age
    and each waiter's bound cover a mark left by a run that died)."""
    try:
        path = Path(folder) / MARKER
        if time.time() - path.stat().st_mtime > STALE_S:
            return False
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, not ours to signal (a sandbox's signal scope)
        return True
    return True


def wait_for(path: Path, folder: Path, seconds: float, poll_s: float = 0.1) -> bool:
    """True once ``path`` exists; False when the warmer is gone (or never marked ``folder``) or ``seconds``
    have passed without it."""
    end = time.monotonic() + seconds
    while True:
        if Path(path).exists():
            return True
        if not warmer_active(folder) or time.monotonic() >= end:
            return Path(path).exists()
        time.sleep(poll_s)


def mark(folder: Path, pid: int | None = None) -> None:
    """Warmer side: say "process ``pid`` (default: this one) is filling this folder", atomically. The parent
    marks for the warmer it has just started, so builds that start during the warmer's own start-up wait too."""
    folder, pid = Path(folder), os.getpid() if pid is None else pid
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{MARKER}.{pid}.tmp"
    tmp.write_text(f"{pid}\n")
    os.replace(tmp, folder / MARKER)


def unmark(folder: Path, pid: int | None = None) -> None:
    """Remove the mark if it is ``pid``'s (default: this process's)."""
    path = Path(folder) / MARKER
    try:
        if int(path.read_text().split()[0]) == (os.getpid() if pid is None else pid):
            path.unlink()
    except (OSError, ValueError, IndexError):
        pass


if __name__ == "__main__":
    if len(sys.argv) == 4:
        try:
            wait_for(Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]))
        except Exception:  # noqa: BLE001 - waiting is an optimisation; the build goes on regardless
            pass
    sys.exit(0)
