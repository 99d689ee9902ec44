"""Ctrl-C for the long-running commands (``mkb eval``, ``mkb generate``, ``mkb demo``).

Why not Python's default: a ``KeyboardInterrupt`` in the collecting thread leaves the build threads and their
compilers running (the thread pool's exit waits for them: 51.6 s measured during builds), and ends in a
traceback. Here the first Ctrl-C kills every process the command started (their sessions: ninja puts each
compiler in a group of its own), then unwinds the main thread (``finally`` blocks run), runs the exit functions
and ends with status 130 without the interpreter's own finalisation (2.4 s with torch loaded on a busy 2-core
host); a deadline thread ends it if unwinding is not done within ``deadline_s``. A second Ctrl-C ends it at
once. Either way one line says what was kept and how to resume. What was stored before the signal stays: the
stores commit every record.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from multikernelbench.util.procs import kill_session, parent_and_session

INTERRUPTED_EXIT = 130  # 128 + SIGINT, what shells report for a command ended by Ctrl-C


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (by parent links in /proc, children before their own children)."""
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            st = parent_and_session(entry)
            if st is not None:
                parents.setdefault(st[0], []).append(int(entry))
    out: list[int] = []
    frontier = [root]
    while frontier:
        kids = parents.get(frontier.pop(), [])
        out += kids
        frontier += kids
    return out


def kill_tree(root: int | None = None) -> int:
    """SIGKILL every process below ``root`` (this process by default) and every member of their sessions other
    than ``root``'s own; returns how many processes were found."""
    root = os.getpid() if root is None else root
    own = parent_and_session(root)
    found = descendants(root)
    sessions = set()
    for pid in found:
        st = parent_and_session(pid)
        if st is not None:
            sessions.add(st[1])
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for sid in sessions - ({own[1]} if own else set()):
        kill_session(sid, rounds=2)
    return len(found)


@dataclass
class StopNotice:
    """What the command says when stopped: ``kept()`` describes what is stored (called at that moment, so it
    must be quick and must not raise), ``resume`` how to go on."""

    command: str
    resume: str
    kept: Callable[[], str] = field(default=lambda: "")

    def text(self) -> str:
        try:
            kept = self.kept()
        except Exception as exc:  # the notice must print even if the store cannot be read
            kept = f"(could not read what was kept: {exc})"
        return f"{self.command}: interrupted. {kept} Resume: {self.resume}".replace("  ", " ")


class _Stop(BaseException):
    """The first Ctrl-C, unwinding the main thread. A BaseException: the engine's ``except Exception`` guards
    (which turn harness bugs into results) must not record it as a candidate's outcome."""


@contextmanager
def on_ctrl_c(notice: StopNotice, deadline_s: float = 1.5, stream=None) -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) stops the command as the module says: the process ends with
    :data:`INTERRUPTED_EXIT` from here."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    out = stream if stream is not None else sys.stderr
    state = {"hits": 0, "said": False}
    lock = threading.Lock()

    def say() -> None:
        with lock:
            if state["said"]:
                return
            state["said"] = True
        try:
            out.write(notice.text() + "\n")
            out.flush()
        except (OSError, ValueError):
            pass

    def finish_now() -> None:
        kill_tree()
        say()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(INTERRUPTED_EXIT)

    def deadline(t_end: float) -> None:
        time.sleep(max(0.0, t_end - time.monotonic()))
        finish_now()

    def handler(signum, frame) -> None:
        state["hits"] += 1
        if state["hits"] > 1:
            finish_now()
        try:
            out.write(f"{notice.command}: stopping (Ctrl-C again to end at once)\n")
            out.flush()
        except (OSError, ValueError):
            pass
        threading.Thread(target=deadline, args=(time.monotonic() + deadline_s,), daemon=True,
                         name="ctrl-c-deadline").start()
        kill_tree()
        raise _Stop()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    except _Stop:
        kill_tree()  # what started while unwinding
        say()
        # Not SystemExit: ending an interpreter that imported torch took 2.4 s on a loaded 2-core host (and a
        # daemon thread cannot end it sooner once finalisation began). The exit functions still run (temporary
        # folders of the workers), under the deadline.
        try:
            atexit._run_exitfuncs()
        except BaseException:  # noqa: S110 - ending anyway
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(INTERRUPTED_EXIT)
    finally:
        signal.signal(signal.SIGINT, previous)
