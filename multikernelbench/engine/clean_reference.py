"""The clean reference of a run: per (task, shape, weight seed), the reference timed once by a worker that never
loaded candidate code, and what its input renewals cost (anticheat/clock_audit.py judges every candidate's timing
against it). One computation per key however many lanes ask at once; a task's entries go when its last
candidate is done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class CleanReference:
    """Per (task, shape, weight seed), once per run: the reference timed by a worker that never loaded
    candidate code, and what its input renewals cost (shared by every lane; one computation per key)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[tuple, threading.Lock] = {}
        self._done: dict[tuple, tuple] = {}

    def has(self, key: tuple) -> bool:
        with self._lock:
            return key in self._done

    def get(self, key: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._done:
                return self._done[key]
            lock = self._keys.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                if key in self._done:
                    return self._done[key]
            value = compute()
            with self._lock:
                self._done[key] = value
            return value

    def release(self, task_id: str) -> None:
        with self._lock:
            for key in [k for k in self._done if k and k[0] == task_id]:
                del self._done[key]
                self._keys.pop(key, None)
