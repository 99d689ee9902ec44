"""Turns on one GPU for the lanes that share it: checks side by side, every clock alone.

Why a reader-writer lock: most of a candidate's device stage is not timing (worker start, load, correctness
trials on several shapes and seeds, fresh-shape checks), and none of that needs the GPU to itself -- a check's
outputs are the same whatever else runs beside it. A clock does: any kernel another lane runs while a timing is
sampled inflates its samples. So checks take a GPU's turns *shared* (any number of lanes at once) and every
clock takes them *exclusive* (the candidate's timing, the clean reference's timing and its recalibrations, a
torch.compile request's device steps, whose autotuning is itself a clock). While the exclusive side is held, no
step that the harness drives for another candidate runs on that GPU.

Writers first: once a clock waits, no new check starts on that GPU until the clock has run, so a steady stream
of checks from the other lanes cannot starve timing, and clocks run in the order they were asked for, so no
lane's timing is passed over by the others'; the checks already running finish first (a check is
bounded by its request's timeout and the candidate's device-stage budget, as before, when one plain lock
around every step made every lane wait for it too).

:class:`OneTurn` is that plain lock (every step exclusive, loads outside it): what lanes did before, and what
callers that hand in a ``threading.Lock`` still get (the Ray actor's slots).

Idle workers of the other lanes: while a clock runs no step of theirs does, but a thread their candidate left
running would. So a worker is enlisted when its candidate code is loaded, and every clock stops the other
owners' enlisted workers (SIGSTOP of their sessions, as the clock audit's recalibration does) until it ends.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from multikernelbench.util.procs import signal_sessions


class Pausable(Protocol):
    """A worker (engine/sandbox.py): its process leads a session of its own (what it started is in it too)."""

    @property
    def proc(self) -> subprocess.Popen | None: ...


class Turns(Protocol):
    """What a device stage asks of its GPU's turns. ``owner``: the device stage asking (its own workers are
    never stopped by its own clock)."""

    def shared(self) -> contextlib.AbstractContextManager[None]:
        """Around a step that runs kernels but no clock (checks, ending workers)."""

    def loading(self) -> contextlib.AbstractContextManager[None]:
        """Around loading a candidate (its import may run kernels and create its device context)."""

    def exclusive(self, owner: object = None) -> contextlib.AbstractContextManager[None]:
        """Around a clock: nothing of another lane runs on the GPU meanwhile."""

    def acquire_exclusive(self, owner: object = None) -> None:
        """The exclusive side for a worker's own turn (a compile request's DeviceTurn), given back with
        :meth:`release_exclusive`."""

    def release_exclusive(self) -> None: ...

    def enlist(self, owner: object, worker: Pausable) -> None:
        """``worker`` may run candidate code from now on: stopped while another owner's clock runs."""

    def dismiss(self, worker: Pausable) -> None:
        """``worker`` is about to end (or never ran candidate code): no longer stopped for clocks."""


def _note(owner: object, what: str) -> None:
    """A line in the owner's ``--trace``, when it keeps one (a device stage has ``trace`` and ``who``)."""
    trace, who = getattr(owner, "trace", None), getattr(owner, "who", None)
    if callable(trace) and isinstance(who, str):
        trace(who, what)


@contextlib.contextmanager
def _traced(owner: object, acquire: Callable[[], object], release: Callable[[], None]) -> Iterator[None]:
    """A clock's turn with its edges in the owner's trace: when it was taken, how long it was waited for and
    held. Why: only the timed samples need the GPU alone, and what else a turn holds is what throughput pays
    for one for one (issue #44); scripts/throughput/clock_phases.py reads these lines. The given-back line is
    written before the release, so the trace stays in the turns' order."""
    asked = time.perf_counter()
    acquire()
    taken = time.perf_counter()
    try:
        _note(owner, f"clock turn taken after waiting {taken - asked:.2f} s")
        yield
    finally:
        try:
            _note(owner, f"clock turn given back after {time.perf_counter() - taken:.2f} s")
        finally:
            release()


class GpuTurns:
    """A writer-preferring reader-writer lock for one GPU. Re-entrant where the engine nests steps: a thread
    holding the exclusive side may enter the shared side (it is alone already), a thread holding the shared
    side may enter it again; asking for the exclusive side while holding the shared side is a harness bug and
    raises instead of deadlocking."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers: dict[int, int] = {}  # thread id -> how deep it holds the shared side
        self._writer: int | None = None
        self._writer_depth = 0
        self._writers_waiting = 0
        self._next_ticket = self._serving = 0  # clocks run in the order they were asked for
        self._abandoned: set[int] = set()
        #: Workers that may run candidate code, by id: (their owner, the worker). A clock stops every one of
        #: another owner for its whole hold (:meth:`_stop_bystanders`).
        self._bystanders: dict[int, tuple[object, Pausable]] = {}
        self._stopped: set[int] = set()  # the sessions the clock holding the exclusive side stopped

    # ---- the shared side ---------------------------------------------------------------------------------
    def acquire_shared(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me or me in self._readers:  # nested: already alone, or already a reader
                self._readers[me] = self._readers.get(me, 0) + 1
                return
            while self._writer is not None or self._writers_waiting:
                self._cond.wait()
            self._readers[me] = 1

    def release_shared(self) -> None:
        me = threading.get_ident()
        with self._cond:
            depth = self._readers.get(me, 0)
            if depth <= 0:
                raise RuntimeError("GpuTurns: shared side released by a thread that does not hold it")
            if depth == 1:
                del self._readers[me]
                self._cond.notify_all()
            else:
                self._readers[me] = depth - 1

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        self.acquire_shared()
        try:
            yield
        finally:
            self.release_shared()

    def loading(self) -> contextlib.AbstractContextManager[None]:
        return self.shared()

    # ---- the exclusive side ------------------------------------------------------------------------------
    def acquire_exclusive(self, owner: object = None) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._writer_depth += 1
                return
            if me in self._readers:
                raise RuntimeError("GpuTurns: a clock asked for while this thread holds a check's turn "
                                   "(it would wait for itself)")
            ticket, self._next_ticket = self._next_ticket, self._next_ticket + 1
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers or self._serving != ticket:
                    self._cond.wait()
            except BaseException:  # interrupted while waiting: its place in the queue must not hold it up
                self._abandoned.add(ticket)
                self._skip_abandoned()
                self._cond.notify_all()
                raise
            finally:
                self._writers_waiting -= 1
            self._serving += 1
            self._skip_abandoned()
            self._writer, self._writer_depth = me, 1
            try:
                self._stop_bystanders(owner)
            except BaseException:
                self._writer, self._writer_depth = None, 0
                self._cond.notify_all()
                raise

    def _stop_bystanders(self, owner: object) -> None:
        """Stop (SIGSTOP, their whole sessions) the workers of other owners for the clock: no step of theirs runs
        now (the turns see to that), but a thread their candidate left running (a GPU kernel loop, a busy loop on
        the cores) would, inside this clock. Kernels they queued before stopping still finish on the GPU."""
        sids = set()
        for who, worker in self._bystanders.values():
            proc = worker.proc
            if who is not owner and proc is not None and proc.poll() is None:
                sids.add(proc.pid)
        if sids:
            signal_sessions(sids, signal.SIGSTOP)
        self._stopped = sids

    def enlist(self, owner: object, worker: Pausable) -> None:
        with self._cond:
            self._bystanders[id(worker)] = (owner, worker)

    def dismiss(self, worker: Pausable) -> None:
        with self._cond:
            self._bystanders.pop(id(worker), None)

    def _skip_abandoned(self) -> None:
        while self._serving in self._abandoned:
            self._abandoned.discard(self._serving)
            self._serving += 1

    def release_exclusive(self) -> None:
        with self._cond:
            if self._writer != threading.get_ident():
                raise RuntimeError("GpuTurns: exclusive side released by a thread that does not hold it")
            self._writer_depth -= 1
            if self._writer_depth == 0:
                stopped, self._stopped = self._stopped, set()
                try:
                    if stopped:
                        signal_sessions(stopped, signal.SIGCONT)  # before any of them gets a turn
                finally:
                    self._writer = None
                    self._cond.notify_all()

    def exclusive(self, owner: object = None) -> contextlib.AbstractContextManager[None]:
        return _traced(owner, lambda: self.acquire_exclusive(owner), self.release_exclusive)

    def state(self) -> tuple[int, bool, int]:
        """(threads holding the shared side, whether the exclusive side is held, clocks waiting): for tests."""
        with self._cond:
            return len(self._readers), self._writer is not None, self._writers_waiting


class OneTurn:
    """Every step under one plain lock, loads outside it (the lanes' turns before :class:`GpuTurns`)."""

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self.lock:
            yield

    def loading(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def exclusive(self, owner: object = None) -> contextlib.AbstractContextManager[None]:
        return _traced(owner, self.lock.acquire, self.lock.release)

    def acquire_exclusive(self, owner: object = None) -> None:
        self.lock.acquire()

    def release_exclusive(self) -> None:
        self.lock.release()

    def enlist(self, owner: object, worker: Pausable) -> None:
        return None

    def dismiss(self, worker: Pausable) -> None:
        return None


class NoTurns:
    """A device that no other lane uses: every turn is free."""

    def shared(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    loading = shared

    def exclusive(self, owner: object = None) -> contextlib.AbstractContextManager[None]:
        return _traced(owner, lambda: None, lambda: None)

    def acquire_exclusive(self, owner: object = None) -> None:
        return None

    def release_exclusive(self) -> None:
        return None

    def enlist(self, owner: object, worker: Pausable) -> None:
        return None

    def dismiss(self, worker: Pausable) -> None:
        return None


def turns_for(lock: GpuTurns | OneTurn | threading.Lock | None) -> Turns:
    """The turns a device stage takes: a GPU's :class:`GpuTurns` as given, a plain lock as :class:`OneTurn`,
    none as :class:`NoTurns`."""
    if lock is None:
        return NoTurns()
    if isinstance(lock, (GpuTurns, OneTurn)):
        return lock
    return OneTurn(lock)
