"""Caps on pending work, per client and in all: the fair queue's admission side (serve/sched.py).

Why apart from the scheduling rules: the caps are checked before anything is queued (a client's pending jobs,
its pending compute: the sum of its jobs' timing budgets plus a fixed cost per job, what it asks the device
for; and the service's pending jobs and compute in all), and they count jobs that never reach a lane (one that
joins a running evaluation), so they depend on nothing the lanes decide.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass


@dataclass(frozen=True)
class Caps:
    per_client_jobs: int = 256
    per_client_compute_s: float = 3600.0
    total_jobs: int = 4096
    total_compute_s: float = 36000.0


class OverLimit(Exception):
    """A client asked for more than its share (or the service is full); nothing of the request was queued."""


class PendingCaps:
    """Pending counts (queued and running jobs, and their compute) per client and in all, against :class:`Caps`."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
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

    def release(self, client: str, compute_s: float) -> None:
        """A charged job finished (or was dropped)."""
        self.jobs[client] -= 1
        self.compute[client] -= compute_s
        if self.jobs[client] <= 0:
            del self.jobs[client]
            self.compute.pop(client, None)
        self.total_jobs -= 1
        self.total_compute = max(0.0, self.total_compute - compute_s)
