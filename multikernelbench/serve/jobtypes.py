"""The job records of the evaluation service and what its lanes need of it, apart from serve/jobs.py so
that serve/lanes.py and serve/preempt.py can name them without importing the service (which imports them:
an import cycle, if only for annotations).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol

from multikernelbench.engine.config import EngineConfig
from multikernelbench.records import EvalResult
from multikernelbench.serve.auth import TokenBook
from multikernelbench.serve.cachekey import Strength
from multikernelbench.serve.metrics import Metrics
from multikernelbench.serve.worker_nice import RunPriority
from multikernelbench.tasks.record import Task

#: Bytes a job costs in memory beyond its source and result (the object, its dict, ids, timestamps).
JOB_OVERHEAD_BYTES = 1024


class JobState(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # the harness itself failed on the batch (the message says why); resubmit


@dataclass
class Submission:
    task_id: str
    source: str
    fresh_shapes: int = 0
    timing_budget_s: float | None = None


@dataclass(eq=False)
class Job:
    id: str
    client: str
    task: Task
    code_hash: str
    key: str
    strength: Strength
    fresh_shapes: int
    timing_budget_s: float | None
    compute_s: float
    submitted_at: float
    source: str | None = None  # None once finished
    state: JobState = JobState.QUEUED
    cached: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    result_json: str | None = None  # the result without its candidate label (no job ids leave the service)
    message: str = ""
    preemptions: int = 0  # stops that count against it: once a run of it lasted preempt_after_s (serve/preempt.py)
    stops: int = 0  # every time its run was stopped for a cheaper client, counted or not
    overran: bool = False  # a run of it lasted preempt_after_s and was stopped: later runs are on sufferance
    #: A niced run of it timed out (serve/worker_nice.py): its later runs keep the lane's priority.
    full_priority: bool = False
    followers: list[Job] = field(default_factory=list)
    waiters: list[Callable[[], None]] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.state in (JobState.DONE, JobState.FAILED)

    @property
    def nbytes(self) -> int:
        return JOB_OVERHEAD_BYTES + len(self.source or "") + len(self.result_json or "")

    def view(self) -> dict:
        return {"id": self.id, "state": self.state.value, "task_id": self.task.id, "code_hash": self.code_hash,
                "cached": self.cached, "submitted_at": self.submitted_at, "finished_at": self.finished_at,
                "message": self.message, "result": json.loads(self.result_json) if self.result_json else None}


@dataclass
class ServiceConfig:
    engine: EngineConfig
    db: Path
    #: Accepted tokens and their clients' names (serve/auth.py); None or empty: no token, loopback only.
    tokens: TokenBook | None = None
    max_body_bytes: int = 2 * 1024 * 1024
    max_items_per_request: int = 64
    max_source_bytes: int = 256 * 1024
    #: Unfinished jobs (queued or running) one client may have at once, and the service in all.
    max_pending_per_client: int = 256
    max_pending_total: int = 4096
    #: Compute pending per client / in all: each job costs its timing budget plus ``job_compute_s``.
    max_compute_s_per_client: float = 4 * 3600.0
    max_compute_s_total: float = 64 * 3600.0
    job_compute_s: float = 10.0
    max_fresh_shapes: int = 8
    max_timing_budget_s: float = 30.0
    #: Longest long-poll a request may ask for (``GET /jobs/{id}?wait=S``).
    max_wait_s: float = 60.0
    #: Seconds a request has to send its whole body.
    body_timeout_s: float = 30.0
    #: Device lanes taking jobs as they free (serve/lanes.py); 0: one per GPU, else the engine's device_workers.
    lanes: int = 0
    #: Jobs a lane takes at once (one Runner.evaluate call: their builds overlap, and the batch runs to its end
    #: on that lane while later jobs wait for a lane); 1 takes the next job as soon as a lane frees.
    batch_size: int = 1
    #: Lanes one client may hold at once (0: all but one) and the half-life of the recent engine time clients
    #: are ordered by; heavy clients do not get the last free lane (serve/sched.py).
    lanes_per_client: int = 0
    usage_half_life_s: float = 120.0
    reserve_last_lane: bool = True
    #: Seconds a client stays engaged after its last job ended: counted in the shares, the last lane kept for it.
    idle_grace_s: float = 5.0
    #: A job of a client over its share is stopped after this many seconds on a lane a cheaper client waits
    #: for, and queued again; past ``max_preemptions`` stops it fails (serve/preempt.py). None: 10 s on CPU
    #: lanes, 120 s on GPU lanes; 0: never.
    preempt_after_s: float | None = None
    max_preemptions: int = 2
    #: Memory budget of the job table (sources of unfinished jobs, results of finished ones) and the finished
    #: jobs one client keeps in memory; past either, the oldest finished jobs leave memory (not the job store).
    max_table_bytes: int = 256 * 1024 * 1024
    max_jobs_in_memory_per_client: int = 20_000
    #: Finished jobs (and idempotency keys, cached results) the job store keeps on disk.
    keep_finished: int = 200_000
    #: Keep finished jobs' build folders (a warm C++ build cache; size them with the engine's quota).
    keep_builds: bool = False
    #: Nice of the HTTP front (the event loop's thread, and the service's autogroup where it leads its own
    #: session) above the lanes and workers, so evaluations get a shared core first (serve/priority.py); 0: off,
    #: the default: beside other work on the host a niced front starved (p99 3.9-6.7 s in the soak), and the
    #: runs on sufferance are niced instead (benchmarks/serve/, 2026-12-05).
    http_nice: int = 0
    #: Nice of the workers of a run taken on sufferance (every job of it taken while its client was over its
    #: share), below the front and the protected runs; only their compile workers where the service times
    #: (serve/worker_nice.py); 0: off.
    sufferance_nice: int = 19


class StoppedJobs(Protocol):
    """Where a lane hands back the jobs of a run that was stopped (serve/preempt.py's Preemptor)."""

    def returned(self, lane: int, jobs: list[Job], overran: bool = False) -> None: ...


class LaneHost(Protocol):
    """What a lane (serve/lanes.py) needs of its service (serve/jobs.py's EvalService)."""

    @property
    def config(self) -> ServiceConfig: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def preemptor(self) -> StoppedJobs: ...

    def take(self, lane: int) -> list[Job] | None: ...

    def run_priority(self, lane: int, jobs: list[Job]) -> RunPriority: ...

    def finish(self, lane: int, job: Job, result: EvalResult | None, message: str = "") -> None: ...
