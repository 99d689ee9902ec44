"""Fair scheduling of queued jobs across clients, with per-client and global caps on pending work.

First come, first served lets one client that queues a thousand candidates hold everyone else behind them
for the length of its backlog. Here each client has its own queue, and the engine takes next from the
client that has used the least engine time (start-time fair queueing over measured seconds, not job
counts: a client whose candidates each hold the device for 20 s does not get as much of it as one whose
candidates take 1 s). A client that becomes active starts at the least usage of the clients waiting, so
idle time is no credit to spend later and a past heavy user is not starved for ever. Ties go to the client
that waited longest. Caps are checked before anything is queued: a client's pending jobs, a client's pending compute
(the sum of its jobs' timing budgets plus a fixed cost per job: what it asks the device for), and the
service's pending jobs and compute in all.

Not thread-safe on its own: the service calls it under its lock.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Generic, Hashable, TypeVar

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class Caps:
    per_client_jobs: int = 256
    per_client_compute_s: float = 3600.0
    total_jobs: int = 4096
    total_compute_s: float = 36000.0


class OverLimit(Exception):
    """A client asked for more than its share (or the service is full); nothing of the request was queued."""


class FairQueue(Generic[T]):
    """Per-client FIFO queues taken least-used first; pending counts cover queued and running jobs."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.queues: dict[str, collections.deque[tuple[T, float]]] = {}
        self.used: dict[str, float] = {}  # engine seconds per client (comparable among active clients only)
        self.since: dict[str, int] = {}  # tick a client last became active or was served (ties: oldest first)
        self._tick = 0
        self.jobs: collections.Counter[str] = collections.Counter()  # queued + running, per client
        self.compute: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.total_jobs = 0
        self.total_compute = 0.0

    def check(self, client: str, n: int, compute_s: float) -> None:
        """Raise :class:`OverLimit` if ``n`` more jobs costing ``compute_s`` would pass a cap."""
        c = self.caps
        if self.jobs[client] + n > c.per_client_jobs:
            raise OverLimit(f"client {client} has {self.jobs[client]} unfinished jobs; {n} more would pass its "
                            f"limit of {c.per_client_jobs}")
        if self.compute[client] + compute_s > c.per_client_compute_s:
            raise OverLimit(f"client {client} has {self.compute[client]:.0f} s of compute pending; "
                            f"{compute_s:.0f} s more would pass its limit of {c.per_client_compute_s:.0f} s")
        if self.total_jobs + n > c.total_jobs or self.total_compute + compute_s > c.total_compute_s:
            raise OverLimit(f"the service is full ({self.total_jobs} unfinished jobs, {self.total_compute:.0f} s "
                            "of compute pending); retry later")

    def charge(self, client: str, compute_s: float) -> None:
        """Count a job against its client without queueing it (one that joins a running evaluation)."""
        self.jobs[client] += 1
        self.compute[client] += compute_s
        self.total_jobs += 1
        self.total_compute += compute_s

    def push(self, client: str, item: T, compute_s: float) -> None:
        self.charge(client, compute_s)
        queue = self.queues.get(client)
        if queue is None:
            floor = min((self.used.get(c, 0.0) for c in self.queues), default=0.0)
            self.used[client] = max(self.used.get(client, 0.0), floor)
            self._tick += 1
            self.since[client] = self._tick
            queue = self.queues[client] = collections.deque()
        queue.append((item, compute_s))

    def release(self, client: str, compute_s: float) -> None:
        """A charged job finished (or was dropped)."""
        self.jobs[client] -= 1
        self.compute[client] -= compute_s
        if self.jobs[client] <= 0:
            del self.jobs[client]
            self.compute.pop(client, None)
        self.total_jobs -= 1
        self.total_compute = max(0.0, self.total_compute - compute_s)

    def take(self, n: int) -> list[T]:
        """Up to ``n`` queued items, one per client in turn (they stay charged until released)."""
        out: list[T] = []
        while self.queues and len(out) < n:
            client = min(self.queues, key=lambda c: (self.used.get(c, 0.0), self.since[c]))
            queue = self.queues[client]
            item, cost = queue.popleft()
            out.append(item)
            self.used[client] = self.used.get(client, 0.0) + cost  # provisional: corrected by account()
            self._tick += 1
            self.since[client] = self._tick
            if not queue:
                del self.queues[client]
        return out

    def settle(self, client: str, estimate: float, seconds: float) -> None:
        """Replace a taken job's provisional cost by the engine time it took."""
        self.used[client] = max(0.0, self.used.get(client, 0.0) - estimate + max(0.0, seconds))

    def __len__(self) -> int:
        return sum(len(q) for q in self.queues.values())
