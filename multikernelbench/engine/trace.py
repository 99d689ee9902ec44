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
