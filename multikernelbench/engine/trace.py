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
        self._lock = threading.Lock()

    def __call__(self, who: str, what: str) -> None:
        if self.path is None:
            return
        line = f"{time.strftime('%H:%M:%S')} +{time.monotonic() - self.t0:8.1f}s {who}: {what}\n"
        with self._lock, self.path.open("a") as fh:
            fh.write(line)
