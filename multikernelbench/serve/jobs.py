"""Jobs of the evaluation service: submitted, answered from the cache, or evaluated on the engine's lanes.

A submission is answered from the service's cache when it holds the submission's exact key with at least
the strength asked for (serve/cachekey.py). Otherwise it is queued in its client's queue (serve/sched.py:
the client with the least recent engine time goes next, a heavy client does not get the last free lane;
capped per client and in all); a submission whose key and strength are already queued or running joins that
one. Each device lane has a thread that takes work as it frees and runs it through the same Runner as
``mkb eval`` (``--ray`` included; serve/lanes.py); the Runner is given a store it cannot read back from, so a
queued job is always evaluated at the strength asked for, never answered by a weaker stored row.

Every job, cached or not, belongs to one client (its token's name), counts against that client and is only
visible to it. Accepted jobs are written to the job store (serve/durable.py) before the reply and re-queued
on restart under the same ids. In memory a finished job keeps its result (as compact JSON), not its source;
the table has a byte budget and a per-client count, the oldest finished jobs go first and stay answerable
from the job store. Build folders of finished jobs are removed (``keep_builds`` keeps them).
"""

from __future__ import annotations

import collections
import json
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from multikernelbench.engine.candidates import code_hash
from multikernelbench.engine.runner import check_opt_in
from multikernelbench.records import EvalResult, FailureKind
from multikernelbench.serve.cachekey import engine_fingerprint, job_key, strength
from multikernelbench.serve.durable import JobRow, JobStore
from multikernelbench.serve.jobtypes import Job, JobState, ServiceConfig, Submission
from multikernelbench.serve.lanes import EngineLanes, lane_configs
from multikernelbench.serve.metrics import Metrics
from multikernelbench.serve.preempt import Preemptor, default_after_s
from multikernelbench.serve.sched import Caps, FairQueue, OverLimit, Share
from multikernelbench.serve.worker_nice import RunPriority, niced_roles, run_priority
from multikernelbench.tasks.record import Task

__all__ = ["EvalService", "Job", "JobState", "OverLimit", "ServiceConfig", "Submission"]


class EvalService:
    """The job table and the engine lanes (see the module docstring)."""

    def __init__(self, config: ServiceConfig, tasks: dict[str, Task]) -> None:
        check_opt_in(config.engine)  # the same explicit opt-in as `mkb eval`
        from multikernelbench.backends import get_backend
        from multikernelbench.engine.kernel_sandbox import support as sandbox_support

        self.config = config
        self.tasks = tasks
        eng = config.engine
        self.backend = get_backend(eng.backend, threads=eng.threads, **eng.backend_options)
        avail = self.backend.availability()
        self.hardware = self.backend.hardware() if avail.ok else f"unavailable {self.backend.name}"
        versions = self.backend.versions() if avail.ok else {}
        self.fingerprint = engine_fingerprint(eng, self.hardware, versions, sandbox_support().label())
        if eng.ray_address:  # connect once: each batch's RayRunner then reuses the connection
            from multikernelbench.cluster import require_ray

            ray = require_ray()
            if not ray.is_initialized():
                address = None if eng.ray_address == "local" else eng.ray_address
                ray.init(address=address, log_to_driver=False)
        self.metrics = Metrics()
        self.lock = threading.Condition()
        self.jobs: dict[str, Job] = {}
        self.table_bytes = 0
        self.finished: collections.OrderedDict[str, None] = collections.OrderedDict()  # oldest first
        self.finished_of: dict[str, collections.OrderedDict[str, None]] = {}
        configs = lane_configs(eng, self.backend, config.lanes)
        after = config.preempt_after_s
        self.sched: FairQueue[Job] = FairQueue(
            Caps(config.max_pending_per_client, config.max_compute_s_per_client, config.max_pending_total,
                 config.max_compute_s_total),
            Share(lanes=len(configs), lanes_per_client=config.lanes_per_client, half_life_s=config.usage_half_life_s,
                  reserve_last_lane=config.reserve_last_lane, idle_grace_s=config.idle_grace_s,
                  preempt_after_s=default_after_s(self.backend.device_type) if after is None else after),
            weight=config.tokens.weight if config.tokens is not None else None)
        self.preemptor = Preemptor(self, config.max_preemptions, JobState.QUEUED)
        self.leaders: dict[tuple, Job] = {}  # (key, strength) -> the queued or running job that will answer it
        self.running = 0
        self.store = JobStore(Path(str(config.db) + ".serve.sqlite"), config.keep_finished)
        self._stop = False
        self._requeue()
        self.niced_roles = niced_roles(eng.skip_timing, self.backend)
        self.lanes = EngineLanes(self, configs)
        if self.sched.share.preempt_after_s > 0:
            self.preemptor.thread.start()

    # ---- request side (any thread) ----------------------------------------------------------------
    def _new_job(self, job_id: str, client: str, task: Task, chash: str, fresh: int, budget: float | None,
                 now: float, source: str) -> Job:
        st = strength(self.config.engine, fresh, budget)
        return Job(id=job_id, client=client, task=task, code_hash=chash, key=job_key(self.fingerprint, task, chash),
                   strength=st, fresh_shapes=fresh, timing_budget_s=budget,
                   compute_s=st.timing_budget_s + self.config.job_compute_s, submitted_at=now, source=source)

    def _requeue(self) -> None:
        """Accepted, unfinished jobs of the previous run: queued again under the same ids (no caps: accepted)."""
        for row in self.store.unfinished():
            task = self.tasks.get(row.task_id)
            if task is None or row.source is None:
                self.store.finish([row.id], JobState.FAILED.value, None, "the service no longer has this task",
                                  time.time())
                continue
            job = self._new_job(row.id, row.client, task, row.code_hash, row.fresh, row.budget, row.submitted_at,
                                row.source)
            self.jobs[job.id] = job
            self.table_bytes += job.nbytes
            self._enqueue(job)
        if self.jobs:
            print(f"mkb serve: {len(self.jobs)} accepted job(s) queued again after a restart", file=sys.stderr)

    def _enqueue(self, job: Job) -> None:
        leader = self.leaders.get((job.key, job.strength))
        if leader is not None:
            self.sched.charge(job.client, job.compute_s)
            leader.followers.append(job)
            job.state = leader.state
            self.metrics.count("jobs", 'outcome="joined"')
        else:
            self.leaders[(job.key, job.strength)] = job
            self.sched.push(job.client, job, job.compute_s, time.time())
            self.metrics.count("jobs", 'outcome="queued"')

    def submit(self, client: str, subs: list[Submission], idem_key: str | None = None) -> list[Job]:
        """Queue (or answer from the cache) every submission, or none: over a cap raises :class:`OverLimit`
        before anything is queued. The jobs are in the job store when this returns."""
        now = time.time()
        with self.lock:
            if idem_key is not None:
                ids = self.store.idempotent(client, idem_key)
                if ids is not None:
                    self.metrics.count("jobs", 'outcome="idempotent"', len(ids))
                    return [j for j in (self.get(i, client) for i in ids) if j is not None]
            jobs = [self._new_job(secrets.token_hex(12), client, self.tasks[s.task_id], code_hash(s.source),
                                  s.fresh_shapes, s.timing_budget_s, now, s.source) for s in subs]
            hits = [self.store.cache_get(j.key, j.strength.fresh_shapes, j.strength.timing_budget_s) for j in jobs]
            new = [j for j, hit in zip(jobs, hits, strict=True) if hit is None]
            self.sched.check(client, len(new), sum(j.compute_s for j in new))
            for job, hit in zip(jobs, hits, strict=True):
                if hit is not None:
                    job.state, job.cached, job.result_json, job.finished_at, job.source = \
                        JobState.DONE, True, hit, now, None
            self.store.add([JobRow(j.id, client, j.state.value, j.task.id, j.code_hash, j.fresh_shapes,
                                   j.timing_budget_s, j.source, j.result_json, "", j.cached, now, j.finished_at)
                            for j in jobs], client, idem_key, now)
            for job in jobs:
                self.jobs[job.id] = job
                self.table_bytes += job.nbytes
                if job.cached:
                    self.metrics.count("jobs", 'outcome="cached"')
                    self._retire(job)
                else:
                    self._enqueue(job)
            self._trim()
            self.lock.notify_all()
        return jobs

    def get(self, job_id: str, client: str) -> Job | None:
        """The client's own job (from memory, else the job store); another client's is None, as unknown."""
        with self.lock:
            job = self.jobs.get(job_id)
        if job is not None:
            return job if job.client == client else None
        row = self.store.get(job_id)
        if row is None or row.client != client or row.source is not None or row.task_id not in self.tasks:
            return None
        job = self._new_job(row.id, row.client, self.tasks[row.task_id], row.code_hash, row.fresh, row.budget,
                            row.submitted_at, "")
        job.state, job.cached, job.result_json, job.message, job.finished_at, job.source = (
            JobState(row.state), row.cached, row.result, row.message, row.finished_at, None)
        return job

    def watch(self, job_id: str, client: str, wake: Callable[[], None]) -> Job | None:
        """The client's job; ``wake`` is called (from a lane's thread) when it finishes, unless it already has."""
        with self.lock:
            job = self.jobs.get(job_id)
            if job is not None and job.client == client and not job.finished:
                job.waiters.append(wake)
                return job
        return self.get(job_id, client)

    def unwatch(self, job_id: str, wake: Callable[[], None]) -> None:
        with self.lock:
            job = self.jobs.get(job_id)
            if job is not None and wake in job.waiters:
                job.waiters.remove(wake)

    def gauges(self) -> dict[str, float]:
        with self.lock:
            return {"queue_depth": len(self.sched), "running_jobs": self.running, "jobs_in_memory": len(self.jobs),
                    "job_table_bytes": self.table_bytes, "clients_pending": len(self.sched.jobs)}

    def close(self) -> None:
        with self.lock:
            self._stop = True
            self.lock.notify_all()
        self.lanes.join(timeout=5)

    # ---- memory -----------------------------------------------------------------------------------
    def _retire(self, job: Job) -> None:
        """A finished job: kept for GET until the byte budget or its client's count pushes it out."""
        self.finished[job.id] = None
        own = self.finished_of.setdefault(job.client, collections.OrderedDict())
        own[job.id] = None
        while len(own) > self.config.max_jobs_in_memory_per_client:
            self._drop(own.popitem(last=False)[0])

    def _drop(self, job_id: str) -> None:
        self.finished.pop(job_id, None)
        job = self.jobs.pop(job_id, None)
        if job is not None:
            self.table_bytes -= job.nbytes
            own = self.finished_of.get(job.client)
            if own is not None:
                own.pop(job_id, None)
                if not own:
                    del self.finished_of[job.client]

    def _trim(self) -> None:
        while self.table_bytes > self.config.max_table_bytes and self.finished:
            self._drop(next(iter(self.finished)))

    # ---- engine side (the lanes' threads: serve/lanes.py) -------------------------------------------
    def take(self, lane: int) -> list[Job] | None:
        """The next jobs for ``lane`` (serve/sched.py decides whose), marked running; blocks until there are
        some; None when the service stops. A lane the rules hold idle looks again each second (recent usage
        decays) and whenever a job is queued or finishes."""
        with self.lock:
            while True:
                if self._stop:
                    return None
                batch = self.sched.take(lane, self.config.batch_size, time.time()) if self.sched.waiting() else []
                if batch:
                    break
                self.lock.wait(timeout=1.0 if self.sched.waiting() else None)
            now = time.time()
            for job in batch:
                for j in [job, *job.followers]:
                    j.state, j.started_at = JobState.RUNNING, now
                    self.metrics.observe("queue", now - j.submitted_at)
                self.metrics.per_client(job.client, taken=1, queue_ms=round(1000 * (now - job.submitted_at)))
            self.running += len(batch)
            return batch

    def run_priority(self, lane: int, jobs: list[Job]) -> RunPriority:
        """The CPU priority of the workers of ``lane``'s run of ``jobs`` (just taken): niced when it was taken on
        sufferance (serve/worker_nice.py)."""
        with self.lock:
            sufferance = self.sched.on_sufferance(lane)
        return run_priority(self.config.sufferance_nice, sufferance, any(j.full_priority for j in jobs),
                            self.niced_roles)

    def _clean_build(self, job: Job) -> None:
        """Remove the finished job's build folder unless another unfinished job has the same code (before the
        job is marked finished: a client that sees it done finds no folder left)."""
        if self.config.keep_builds or self.config.engine.ray_address:
            return  # Ray: the folders are on the nodes that built them
        with self.lock:
            busy = any(j.code_hash == job.code_hash and j is not job and j not in job.followers and not j.finished
                       for j in self.jobs.values())
        if not busy:
            shutil.rmtree(Path(self.config.engine.build_root) / self.backend.name / job.code_hash, ignore_errors=True)

    def finish(self, lane: int, job: Job, result: EvalResult | None, message: str = "") -> None:
        """A taken job's end (from its lane's thread): done with a result, else failed with ``message``."""
        state = JobState.DONE if result is not None else JobState.FAILED
        self._clean_build(job)
        now = time.time()
        payload = None
        if result is not None:
            d = result.to_dict()
            d.pop("candidate", None)
            payload = json.dumps(d, separators=(",", ":"))
        with self.lock:
            self.running -= 1
            self.sched.done(lane, job, now)  # the lane's time so far is charged to the clients it held
            if self.leaders.get((job.key, job.strength)) is job:
                del self.leaders[(job.key, job.strength)]
            group = [job, *job.followers]
            if payload is not None and state == JobState.DONE and result is not None \
                    and result.failure is not FailureKind.HARNESS_ERROR:  # the harness's failure is nobody's answer
                self.store.cache_put(job.key, job.strength.fresh_shapes, job.strength.timing_budget_s, payload, now)
            self.store.finish([j.id for j in group], state.value, payload, message, now)
            for j in group:
                self.table_bytes -= j.nbytes
                j.state, j.result_json, j.message, j.finished_at, j.source = state, payload, message, now, None
                self.table_bytes += j.nbytes
                self.sched.release(j.client, j.compute_s)
                if j.started_at is not None:
                    self.metrics.observe("evaluate", now - j.started_at)
                    if j is job:
                        self.metrics.per_client(j.client, lane_ms=round(1000 * (now - j.started_at)))
                self.metrics.observe("end_to_end", now - j.submitted_at)
                self.metrics.count("jobs", f'outcome="{state.value}"')
                for wake in j.waiters:
                    wake()
                j.waiters.clear()
                self._retire(j)
            job.followers = []
            self._trim()
            self.lock.notify_all()
