"""Optional phase log of an evaluation run (``mkb eval --trace FILE``).

Why: on the device a run that is cut by its time limit leaves no record of where the time went (the
results store only holds finished candidates). One line per phase, appended and flushed at once, shows
which build, check or timing request was running when the clock ran out.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path


def trace_label(task_id: str, code_hash: str) -> str:
    """How one candidate is named in the trace (the runner and the device stage must agree)."""
    return f"{task_id} [{code_hash[:12]}]"


class Trace:
    def __init__(self, path: Path | str | None) -> None:
        self.path = Path(path) if path else None
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self._lock = threading.Lock()

    def __call__(self, who: str, what: str, at: float | None = None) -> None:
        """One line; ``at``: when it happened (a wall time, e.g. from a helper process's log), default now."""
        if self.path is None:
            return
        rel = time.monotonic() - self.t0 if at is None else at - self.wall0
        stamp = time.strftime('%H:%M:%S', time.localtime(at)) if at is not None else time.strftime('%H:%M:%S')
        line = f"{stamp} +{rel:8.1f}s {who}: {what}\n"
        with self._lock, self.path.open("a") as fh:
            fh.write(line)


class HelperLog:
    """Copies a helper process's timed lines (``new_events()``: (wall time, what) pairs, e.g. the CUDA warmer's
    log) into the trace while the run goes on, every ``every_s``; :meth:`close` takes the rest. Live, not at
    the end: a run cut by a benchmark's cap is the one whose trace must say when the helper's products came."""

    def __init__(self, helper, trace: Trace, who: str, every_s: float = 0.5) -> None:
        self.helper, self.trace, self.who, self.every_s = helper, trace, who, every_s
        self._stop = threading.Event()
        self._thread = None
        if trace.path is not None and callable(getattr(helper, "new_events", None)):
            self._thread = threading.Thread(target=self._follow, name=f"trace-{who}", daemon=True)
            self._thread.start()

    def _copy(self) -> None:
        for at, what in self.helper.new_events():
            self.trace(self.who, what, at=at)

    def _follow(self) -> None:
        while not self._stop.wait(self.every_s):
            self._copy()

    def close(self) -> None:
        """After the helper has stopped (its last lines are read then)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._copy()
