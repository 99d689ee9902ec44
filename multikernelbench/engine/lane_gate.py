"""Lanes sharing a device: whose device stages may run at once, and the retry of a candidate that ran out of
device memory beside the others.

Why: the turns (engine/gpu_turns.py) keep every clock alone, but not the memory. Each lane's worker holds its
task's inputs, outputs and the candidate's workspace from its start to its end, so a candidate that fits on the
GPU alone can run out of memory while other lanes' workers hold theirs (on an 80 GB H100, 4 lanes, 7 of 36
honest candidates did once: benchmarks/throughput/README.md, 2026-12-05 third session). Scored as its
``runtime_error`` that would count the run's own crowding against the model. So a device out-of-memory met while
other lanes shared the device is evaluated again, once, with the device to itself: no other lane starts a device
stage until it ends, and it starts only after the running ones ended. Its second outcome is the verdict, flagged
``reevaluated_alone``; a candidate that runs out of memory alone too is the candidate's failure, as with one lane.

Nothing to gain for a cheat: the second evaluation is a whole one (every check and timing again), and a
candidate that exhausts memory on purpose only costs the run the time of its own second stage.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class LaneGate:
    """One device's device stages: side by side (:meth:`stage`), or one with the device to itself
    (:meth:`alone`), which new stages wait behind (so a retry is not starved by a stream of new jobs)."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes  # how many lanes share the device
        self._cv = threading.Condition()
        self._running = 0
        self._alone_waiting = 0
        self._alone = False

    @contextmanager
    def stage(self) -> Iterator[None]:
        with self._cv:
            self._cv.wait_for(lambda: not self._alone and not self._alone_waiting)
            self._running += 1
        try:
            yield
        finally:
            with self._cv:
                self._running -= 1
                self._cv.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cv:
            self._alone_waiting += 1
            self._cv.wait_for(lambda: not self._running and not self._alone)
            self._alone_waiting -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._cv:
                self._alone = False
                self._cv.notify_all()

