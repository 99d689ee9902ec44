"""Jobs of the evaluation service: submitted, answered from the results store, or evaluated in batches.

A submission is answered from the results store when the store holds its key -- (task id, task hash,
backend, hardware, code hash), the key ``mkb eval`` stores under -- so a repeated sample costs one SQLite
read. Otherwise it is queued; a submission whose key is already queued or running waits for that one
instead of running again. One engine thread takes the queue in batches and runs them through the same
Runner as ``mkb eval`` (``--ray`` included), which writes each result to the store as it finishes; the
job is answered from the same callback.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from multikernelbench.engine.candidates import Candidate, code_hash
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import check_opt_in
from multikernelbench.records import EvalResult, Status
from multikernelbench.serve.metrics import Metrics
from multikernelbench.store import Label, ResultStore
from multikernelbench.tasks.record import Task


class JobState(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # the harness itself failed on the batch (the message says why); resubmit


class OverLimit(Exception):
    """A client asked for more than its share; nothing of the request was queued."""


@dataclass
class Submission:
    task_id: str
    source: str
    fresh_shapes: int = 0
    timing_budget_s: float | None = None


@dataclass
class Job:
    id: str
    client: str
    sub: Submission
    task: Task
    code_hash: str
    submitted_at: float
    state: JobState = JobState.QUEUED
    cached: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    result: EvalResult | None = None
    message: str = ""
    followers: list["Job"] = field(default_factory=list)

    def view(self) -> dict:
        return {"id": self.id, "state": self.state.value, "task_id": self.task.id, "code_hash": self.code_hash,
                "cached": self.cached, "submitted_at": self.submitted_at, "finished_at": self.finished_at,
                "message": self.message, "result": self.result.to_dict() if self.result is not None else None}


@dataclass
class ServiceConfig:
    engine: EngineConfig
    db: Path
    token: str | None = None
    max_body_bytes: int = 2 * 1024 * 1024
    max_items_per_request: int = 64
    max_source_bytes: int = 256 * 1024
    #: Unfinished jobs (queued or running) one client may have at once.
    max_pending_per_client: int = 256
    max_fresh_shapes: int = 8
    max_timing_budget_s: float = 30.0
    #: Longest long-poll a request may ask for (``GET /jobs/{id}?wait=S``).
    max_wait_s: float = 60.0
    #: Candidates handed to the engine at once (one Runner.evaluate call: its builds overlap).
    batch_size: int = 64
    #: Finished jobs kept in memory for GET; older ones are forgotten (their results stay in the store).
    keep_jobs: int = 100_000


class EvalService:
    """The job table and the engine thread (see the module docstring)."""

    def __init__(self, config: ServiceConfig, tasks: dict[str, Task]) -> None:
        check_opt_in(config.engine)  # the same explicit opt-in as `mkb eval`
        from multikernelbench.backends import get_backend

        self.config = config
        self.tasks = tasks
        eng = config.engine
        self.backend = get_backend(eng.backend, threads=eng.threads, **eng.backend_options)
        avail = self.backend.availability()
        self.hardware = self.backend.hardware() if avail.ok else f"unavailable {self.backend.name}"
        if eng.ray_address:  # connect once: each batch's RayRunner then reuses the connection
            from multikernelbench.cluster import require_ray

            ray = require_ray()
            if not ray.is_initialized():
                address = None if eng.ray_address == "local" else eng.ray_address
                ray.init(address=address, log_to_driver=False)
        self.metrics = Metrics()
        self.lock = threading.Condition()
        self.jobs: dict[str, Job] = {}
        self.finished: collections.deque[str] = collections.deque()
        self.queue: collections.deque[Job] = collections.deque()
        self.leaders: dict[tuple, Job] = {}  # key -> the queued or running job that will answer it
        self.pending: collections.Counter[str] = collections.Counter()
        self.running = 0
        self.batches = itertools.count()
        self._local = threading.local()
        self._stop = False
        self.thread = threading.Thread(target=self._loop, name="mkb-serve-engine", daemon=True)
        self.thread.start()

    # ---- request side (any thread) ----------------------------------------------------------------
    def _store(self) -> ResultStore:
        store = getattr(self._local, "store", None)
        if store is None:  # one SQLite connection per thread (sqlite3 connections are per thread)
            store = self._local.store = ResultStore(self.config.db)
        return store

    def key(self, task: Task, chash: str) -> tuple:
        return (task.id, task.content_hash, self.backend.name, self.hardware, chash)

    def cached(self, task: Task, sub: Submission, chash: str) -> EvalResult | None:
        stored = self._store().get(*self.key(task, chash))
        if stored is None:
            return None
        if sub.fresh_shapes and stored.status == Status.CORRECT and stored.fresh_shapes_checked is None:
            return None  # as Runner._reusable: a result without the asked-for fresh shapes does not answer
        return stored

    def submit(self, client: str, subs: list[Submission]) -> list[Job]:
        """Queue (or answer from the store) every submission, or none: over the client's limit raises
        :class:`OverLimit` before anything is queued."""
        now = time.time()
        planned = [(s, self.tasks[s.task_id], code_hash(s.source)) for s in subs]
        with self.lock:
            hits = {i: self.cached(t, s, h) for i, (s, t, h) in enumerate(planned)}
            new = sum(1 for r in hits.values() if r is None)
            limit = self.config.max_pending_per_client
            if self.pending[client] + new > limit:
                raise OverLimit(f"client {client} has {self.pending[client]} unfinished jobs; {new} more would "
                                f"pass its limit of {limit}")
            out = []
            for i, (sub, task, chash) in enumerate(planned):
                job = Job(id=secrets.token_hex(8), client=client, sub=sub, task=task, code_hash=chash,
                          submitted_at=now)
                self.jobs[job.id] = job
                if hits[i] is not None:
                    job.state, job.cached, job.result, job.finished_at = JobState.DONE, True, hits[i], now
                    self.metrics.count("jobs", 'outcome="cached"')
                    self._forget_later(job)
                else:
                    self.pending[client] += 1
                    key = self.key(task, chash) + (sub.fresh_shapes > 0,)
                    leader = self.leaders.get(key)
                    if leader is not None:
                        leader.followers.append(job)
                        job.state = leader.state
                        self.metrics.count("jobs", 'outcome="joined"')
                    else:
                        self.leaders[key] = job
                        self.queue.append(job)
                        self.metrics.count("jobs", 'outcome="queued"')
                out.append(job)
            self.lock.notify_all()
        return out

    def get(self, job_id: str) -> Job | None:
        with self.lock:
            return self.jobs.get(job_id)

    def wait(self, job_id: str, timeout: float) -> Job | None:
        """The job once finished, or as it is after ``timeout`` seconds (blocking: call from a thread)."""
        end = time.monotonic() + timeout
        with self.lock:
            while True:
                job = self.jobs.get(job_id)
                left = end - time.monotonic()
                if job is None or job.state in (JobState.DONE, JobState.FAILED) or left <= 0:
                    return job
                self.lock.wait(left)

    def gauges(self) -> dict[str, float]:
        with self.lock:
            return {"queue_depth": len(self.queue), "running_jobs": self.running, "jobs_in_memory": len(self.jobs)}

    def close(self) -> None:
        with self.lock:
            self._stop = True
            self.lock.notify_all()
        self.thread.join(timeout=5)

    # ---- engine side (one thread) -----------------------------------------------------------------
    def _loop(self) -> None:
        store = ResultStore(self.config.db)
        try:
            while True:
                with self.lock:
                    while not self.queue and not self._stop:
                        self.lock.wait()
                    if self._stop:
                        return
                    batch = [self.queue.popleft() for _ in range(min(len(self.queue), self.config.batch_size))]
                    now = time.time()
                    for job in batch:
                        for j in [job, *job.followers]:
                            j.state, j.started_at = JobState.RUNNING, now
                            self.metrics.observe("queue", now - j.submitted_at)
                    self.running += len(batch)
                groups: dict[tuple, list[Job]] = {}
                for job in batch:
                    groups.setdefault((job.sub.fresh_shapes, job.sub.timing_budget_s), []).append(job)
                for (fresh, budget), jobs in groups.items():
                    self._run_group(store, fresh, budget, jobs)
        finally:
            store.close()

    def _run_group(self, store: ResultStore, fresh: int, budget: float | None, jobs: list[Job]) -> None:
        from multikernelbench.cluster import make_runner

        eng = self.config.engine
        timing = dataclasses.replace(eng.timing, budget_s=budget) if budget else eng.timing
        config = dataclasses.replace(eng, fresh_shapes=fresh, timing=timing)
        by_label = {job.id: job for job in jobs}
        cands = [Candidate(task_id=j.task.id, source=j.sub.source, label=j.id, code_hash=j.code_hash,
                           meta=Label(model=f"serve:{j.client}", strategy="serve")) for j in jobs]
        tasks = {j.task.id: j.task for j in jobs}

        def on_result(result: EvalResult, cand: Candidate) -> None:
            job = by_label.get(cand.label)
            if job is not None:
                self.metrics.observe("build", result.compile_time_s)
                self._finish(job, result, JobState.DONE)

        try:
            make_runner(config, store, on_result=on_result, progress=False).evaluate(list(tasks.values()), cands)
        except Exception as exc:  # the service outlives a failed batch; its jobs say why
            print(f"mkb serve: batch failed: {exc!r}", file=sys.stderr)
            for job in jobs:
                self._finish(job, None, JobState.FAILED, f"harness error: {type(exc).__name__}: {exc}")
            return
        for job in jobs:  # not emitted (a run's time limit): fail closed, never a silent hang
            if job.state == JobState.RUNNING:
                self._finish(job, None, JobState.FAILED, "harness: the engine returned no result for it")

    def _finish(self, job: Job, result: EvalResult | None, state: JobState, message: str = "") -> None:
        now = time.time()
        with self.lock:
            self.running -= 1
            key = self.key(job.task, job.code_hash) + (job.sub.fresh_shapes > 0,)
            if self.leaders.get(key) is job:
                del self.leaders[key]
            for j in [job, *job.followers]:
                j.state, j.result, j.message, j.finished_at = state, result, message, now
                self.pending[j.client] -= 1
                if j.started_at is not None:
                    self.metrics.observe("evaluate", now - j.started_at)
                self.metrics.observe("end_to_end", now - j.submitted_at)
                self.metrics.count("jobs", f'outcome="{state.value}"')
                self._forget_later(j)
            self.lock.notify_all()

    def _forget_later(self, job: Job) -> None:
        self.finished.append(job.id)
        while len(self.finished) > self.config.keep_jobs:
            self.jobs.pop(self.finished.popleft(), None)
