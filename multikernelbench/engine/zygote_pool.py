"""Zygotes kept across the engine runs of one process, for a caller that makes many runs (the test suite).

A run starts a zygote (engine/zygote.py: ~3.4 s of CPU to import torch and the worker code) and ends it with
the run. That is right for ``mkb eval``, which makes one run, and wasteful for a process that makes dozens: the
test suite's in-process runs paid ~3.4 CPU-s each. A :class:`ZygotePool` that such a process installs
(:meth:`ZygotePool.install`; none is installed unless a caller does, so a production run is unchanged) hands
each run a lease on a zygote already started for the same start, and the run's ``close`` ends the lease, not
the zygote. ``mkb serve``'s lanes keep theirs for the same reason (serve/lanes.py), as do the Ray build tasks
(cluster/remote.py).

Why reuse does not weaken isolation between candidates: the zygote never runs candidate code and holds no state
of a run. It imports its modules, then only forks on request (each child gets its environment, folder, limits,
stdio and sandbox after the fork, from the request) and reaps the children it is asked about; the descriptors
a spawn request carries are closed in the zygote right after its fork, so no later child inherits an earlier
run's. Its children cannot reach it (it is not dumpable; the sandbox's seccomp and Landlock apply to them).
What a child inherits from the zygote itself is fixed at its start, so the key is everything that start reads:
the environment it is given (torch's imports read OpenMP, inductor and dynamo settings from it, and a forked
worker's ``/proc/self/environ`` is the zygote's), the modules it preloads and the starting thread's nice and
CPU affinity (both per thread on Linux and inherited by the process it starts: a caller whose differ from the
pool's thread gets None, and starts its own zygote as a run without a pool does).

The zygotes are started from one thread of the pool's own that lives until :meth:`close`: a zygote gets a
parent-death signal (util/procs.py ``die_with_parent``), which Linux ties to the *thread* that started it, so a
zygote started from a run's thread (the anti-cheat tests run engine runs in a thread pool) would die when that
thread ended, under whichever other run held a lease on it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar


def _thread_start_state() -> tuple[int, frozenset[int]]:
    """The calling thread's nice and CPU affinity: what a process it starts inherits from it."""
    return os.getpriority(os.PRIO_PROCESS, 0), frozenset(os.sched_getaffinity(0))


class _Entry:
    """One kept zygote and how many leases on it are open."""

    def __init__(self, zygote: Any) -> None:
        self.zygote = zygote
        self.leases = 0
        self.ready_lock = threading.Lock()  # Zygote.wait_ready reads one message: one reader at a time


class KeptZygote:
    """A run's lease on a kept zygote, with the Zygote methods the engine calls; :meth:`close` ends the lease."""

    def __init__(self, entry: _Entry, pool: ZygotePool) -> None:
        self._entry, self._pool = entry, pool
        self._open = True

    @property
    def proc(self) -> Any:
        return self._entry.zygote.proc

    def wait_ready(self) -> None:
        with self._entry.ready_lock:
            self._entry.zygote.wait_ready()

    def alive(self) -> bool:
        return bool(self._entry.zygote.alive())

    def spawn(self, *args: Any, **kwargs: Any) -> Any:
        self.wait_ready()
        return self._entry.zygote.spawn(*args, **kwargs)

    def status(self, pid: int) -> int | None:
        return self._entry.zygote.status(pid)

    def close(self) -> None:
        if self._open:
            self._open = False
            self._pool.release(self._entry)


class ZygotePool:
    """Zygotes by start key; at most ``keep`` of them are kept once no lease is open on them (each holds an
    interpreter with torch imported: a few hundred MB), the least recently leased ended first."""

    #: The pool that :meth:`multikernelbench.engine.runner.Runner._start_zygote` leases from; None (no reuse)
    #: unless a caller installs one.
    current: ClassVar[ZygotePool | None] = None

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self.started = 0  # zygotes this pool has started (a test's count of its reuse)
        self._lock = threading.Lock()
        self._kept: dict[tuple, _Entry] = {}  # in order of last lease
        self._starter = ThreadPoolExecutor(1, thread_name_prefix="mkb-zygote-starter")
        # The thread starts now, from the caller's thread, and keeps that thread's nice and affinity.
        self._start_state = self._starter.submit(_thread_start_state).result()

    @classmethod
    def install(cls, pool: ZygotePool | None) -> None:
        cls.current = pool

    def lease(self, env: dict[str, str], preload: tuple[str, ...], wait: bool = True) -> KeptZygote | None:
        """A lease on the zygote for this start (started now if there is none, or it died); None when the
        calling thread's nice or affinity differ from the pool's thread's (the caller starts its own).
        ZygoteError as Zygote's own start raises it."""
        if _thread_start_state() != self._start_state:
            return None
        from multikernelbench.engine.zygote import Zygote

        key = (tuple(sorted(env.items())), tuple(preload))
        with self._lock:
            entry = self._kept.pop(key, None)
            ended = [entry.zygote] if entry is not None and not entry.zygote.alive() else []
            if ended:  # killed from outside: its open leases see a dead zygote, as a run's own would
                entry = None
            if entry is None:
                entry = _Entry(self._starter.submit(Zygote, dict(env), tuple(preload), False).result())
                self.started += 1
            self._kept[key] = entry
            entry.leases += 1
            ended += self._trim()
        for zygote in ended:
            zygote.close()
        kept = KeptZygote(entry, self)
        if wait:
            try:
                kept.wait_ready()
            except BaseException:
                kept.close()
                raise
        return kept

    def release(self, entry: _Entry) -> None:
        with self._lock:
            entry.leases -= 1
            ended = self._trim()
        for zygote in ended:
            zygote.close()

    def _trim(self) -> list[Any]:
        """Under the lock: take out the zygotes without open leases that are dead or beyond ``keep`` (the least
        recently leased first); the caller ends them after releasing the lock."""
        ended = []
        for key, entry in list(self._kept.items()):
            if entry.leases == 0 and (len(self._kept) > self.keep or not entry.zygote.alive()):
                del self._kept[key]
                ended.append(entry.zygote)
        return ended

    def close(self) -> None:
        """End every kept zygote (leases still open see a dead zygote) and the starting thread."""
        with self._lock:
            entries, self._kept = list(self._kept.values()), {}
        for entry in entries:
            entry.zygote.close()
        self._starter.shutdown()
