"""What the light paths' and the ops path's analyses share: the probe preprocessed with a flag set, an
analysis file made once per flag set, under a lock, by whichever process needs it first, and shared headers
written whole.

Standard library only: it runs inside the nvcc driver, a plain script.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path


def preprocess(cmd: list[str], flags: list[str], probe: Path, extra: list[str],
               keep_macros: tuple[str, ...] = ("-Xcompiler", "-dD")) -> str:
    """``nvcc -E -Xcompiler -dD`` of ``probe`` with the flag set and ``extra`` (a ``-I`` folder): the text the
    analyses compare (line markers name the files, ``-dD`` keeps the macro definitions). ``keep_macros``: how
    the compiler is asked for ``-dD`` (``("-dD",)`` for g++ itself: light_main's analysis)."""
    res = subprocess.run([*cmd, *flags, *extra, "-E", *keep_macros, str(probe)], capture_output=True,
                         text=True, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"preprocessing the probe failed ({res.returncode}): {res.stderr[-500:]}")
    return res.stdout


def made_once(path: Path, make: Callable[[], str]) -> str:
    """``path``'s text, made by ``make()`` on first use under a lock beside it (one process makes it; the
    others wait and read it) and written under a temporary name, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.exists():
                return path.read_text()
            text = make()
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
            return text
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it holds it already, through a temporary name per process and thread
    (the warmer's jobs write shared headers side by side: one temporary name for both lost a rename)."""
    if path.exists() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
