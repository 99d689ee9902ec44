"""The parent's reference for the verified timed calls, computed while the worker finishes its Time request.

Why (issue #44): after the timing loop's last sample the worker still makes the final observed call and watches
its threads for work left running (``runtime.busy_threads``: at least 0.09 s where threads' CPU time is exact,
0.23 s where it counts ticks), then answers; only then did the parent recompute the reference for every
verified call (0.15-0.8 s on an H200), one after the other, all inside
the clock's exclusive turn, which every other lane of the GPU waits for. The two do not depend on each other: the
expected outputs need only the seeds the parent granted, not the worker's reply. So at the worker's first
``final`` fresh-input request (the loop is over: the clock audit judges only the ``sample`` intervals, each ended
by the next request, and a ``final`` request before the last sample breaks the requests' order, a finding), the
parent starts computing the expected samples of the checks granted so far in a thread; after the reply it
compares as before (engine/timed_outputs.py ``verify_timed``), computing only the checks granted later.

What stays the same: the checks, their seeds and secret positions, the comparison and its order, and the turn
(still exclusive: the reference runs on the GPU beside this lane's own worker only, whose GPU memory it already
shared at this point; 2026-12-05 showed that beside other lanes' checks it does not fit). The host-load reading
after the timing is taken once the thread is done, so no work of the parent's is counted in it.

Only where the reference runs off the host's cores (a GPU): on the CPU backend the reference's threads would share
the cores with the worker's busy-thread window, whose evidence is a background thread's share of a core. Off with
``EngineConfig.prefetch_workers`` (``--no-worker-prefetch``), as the clean worker's start ahead is
(engine/device_clean.py): that flag gives the engine whose turns hold everything, for an A/B in one tree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from multikernelbench.engine.fresh import TimedCheck
from multikernelbench.engine.messages import FreshAsk, FreshGrant
from multikernelbench.engine.timed_outputs import ExpectedSample
from multikernelbench.timing.loop import Phase


class VerifyAhead:
    """Computes ``make(check)`` for the checks known at the loop's end, in a thread; :meth:`join` hands them over
    keyed by their index in the planner's list. A failure leaves the rest to be computed after the reply, where it is
    reported as before."""

    def __init__(self, make: Callable[[TimedCheck], ExpectedSample]) -> None:
        self._make = make
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.done: dict[int, ExpectedSample] = {}

    def handler(self, answer: Callable[[FreshAsk, Any], FreshGrant],
                checks: list[TimedCheck]) -> Callable[[FreshAsk, Any], FreshGrant]:
        """``answer`` (a Time request's FreshAsk handler), starting the computation once it has answered the
        first ``final`` request (its grant may add the last sample's checks)."""

        def on_fresh(ask: FreshAsk, raws: Any = None) -> FreshGrant:
            grant = answer(ask, raws)
            if ask.phase == Phase.FINAL.value:
                self.start(list(checks))
            return grant

        return on_fresh

    def start(self, checks: list[TimedCheck]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(checks,), daemon=True, name="verify-ahead")
            self._thread.start()

    def _run(self, checks: list[TimedCheck]) -> None:
        for i, check in enumerate(checks):
            if self._stop.is_set():
                return
            try:
                self.done[i] = self._make(check)
            except Exception:  # noqa: BLE001 - computed again after the reply, where its failure is reported
                return

    def join(self, cancel: bool = False) -> dict[int, ExpectedSample]:
        """Wait for the thread (``cancel``: after the check in progress); the expected samples computed."""
        if cancel:
            self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self.done
