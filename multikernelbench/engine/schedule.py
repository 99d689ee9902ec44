"""A run's scheduling policy, asked by the one scheduling loop (engine/scheduler.py) and by the executors that
move its jobs: the local lane threads (engine/thread_executor.py) and the Ray driver's tasks and actors
(cluster/ray_executor.py).

Why one object: the two executors move jobs very differently (a thread pool and queues; Ray tasks, actors
and object references), but what they decide must not differ between a laptop and a cluster: when a job is
too late to start (the run's ``stop_after_s``, and the message a skipped job carries), when the device lanes
open (at once where builds may overlap the clocks, else after the last build, the trusted warmer stopped
first: nothing may share the cores with a CPU candidate's clock), when a task's last candidate is done
(its references are released), and whether a job whose lane was lost runs again. Each executor keeps only how
it moves jobs; the loop that applies these answers is engine/scheduler.py.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.outcomes import Skipped


class Schedule:
    """The policy of one run over ``task_ids`` (one entry per candidate). Thread-safe: a thread executor's
    lanes report finished jobs from their own threads."""

    def __init__(self, cfg: EngineConfig, task_ids: list[str], overlap: bool, warmer: Any = None) -> None:
        self.cfg, self.overlap, self.warmer = cfg, overlap, warmer
        self.total = len(task_ids)
        self.cutoff = time.monotonic() + cfg.stop_after_s if cfg.stop_after_s > 0 else None
        self.remaining = collections.Counter(task_ids)
        self.built = 0
        self.lanes_open = False
        self.losses: collections.Counter[int] = collections.Counter()  # lost lanes or builds, per job index
        self.lock = threading.Lock()

    def too_late(self) -> Skipped | None:
        """Why a job may not start now (the run's time limit has passed), or None."""
        if self.cutoff is None or time.monotonic() < self.cutoff:
            return None
        return Skipped(f"not started: the run's time limit ({self.cfg.stop_after_s:.0f} s) was reached first; "
                       "not stored, a rerun picks it up")

    def open_at_start(self) -> bool:
        """Whether the lanes open before any build ends (builds use the CPU, the clocks another device)."""
        if self.overlap:
            self.lanes_open = True
        return self.overlap

    def build_ended(self, *, rebuilt: bool = False) -> bool:
        """Count one build's end (``rebuilt``: a lost build that will run again no longer counts). Returns
        True exactly once: when the lanes should open now (the last build ended and they were not open); the
        trusted warmer is stopped before."""
        with self.lock:
            self.built += -1 if rebuilt else 1
            if self.lanes_open or self.built < self.total:
                return False
            self.lanes_open = True
        if self.warmer is not None:
            self.warmer.stop()
        return True

    def run_again(self, index: int) -> bool:
        """Whether the job at ``index``, whose lane or shipped build was just lost, runs once more: only after
        its first loss (a candidate that kills its own lane would otherwise take down every lane in turn)."""
        with self.lock:
            self.losses[index] += 1
            return self.losses[index] == 1

    def job_done(self, task_id: str) -> bool:
        """Count one of ``task_id``'s jobs done; True when it was the task's last (release its references)."""
        with self.lock:
            self.remaining[task_id] -= 1
            return self.remaining[task_id] == 0

    def last_of_task(self, task_id: str) -> bool:
        """Whether a job of ``task_id`` that has ended but is not counted yet is its task's last: a local lane
        frees the task's references at once, before its next job, rather than when the count reaches it."""
        with self.lock:
            return self.remaining[task_id] <= 1

    def done_tasks(self) -> set[str]:
        with self.lock:
            return {t for t, n in self.remaining.items() if n == 0}
