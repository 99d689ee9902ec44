"""Rich progress bars on stderr (stdout stays clean for --json output); a no-op when disabled."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn


class Progress:
    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar = None
        self._ids: dict[str, int] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> "Progress":
        if self.enabled:
            self._bar = RichProgress(TextColumn("{task.description:>9}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=Console(stderr=True), transient=False)
            self._bar.__enter__()
        return self

    def add(self, name: str, total: int) -> None:
        if self._bar is not None:
            self._ids[name] = self._bar.add_task(name, total=total)

    def advance(self, name: str) -> None:
        if self._bar is not None:
            with self._lock:
                self._bar.advance(self._ids[name])

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
