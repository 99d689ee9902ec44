"""One run of :class:`~multikernelbench.cluster.ray_runner.RayRunner`'s pipeline: builds as Ray tasks, device
stages in lane actors, every result recorded by the driver (the policy is in ray_runner's module docstring).

A class rather than one function of closures: each event the driver waits on (a build's metadata, a device
stage's result, a lane's start-up probe) has its own small handler, and the state they share is named in one
place (``__init__``) instead of living in a dict of counters.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from multikernelbench.cluster.remote import Lane, build_candidate
from multikernelbench.engine.job import JobHost
from multikernelbench.engine.schedule import Schedule
from multikernelbench.records import EvalResult, Status

if TYPE_CHECKING:
    from multikernelbench.engine.job import Job

#: How long queued candidates wait for any device lane to be up before they are recorded as not run
#: (e.g. every lane's node stopped and no other node offers the lane's resources).
LANE_WAIT_S = 300.0
#: Replacement lanes started after lane deaths, per original lane, before the run stops replacing them.
MAX_REPLACEMENTS_PER_LANE = 3


class RayHost(JobHost, Protocol):
    """The Ray runner as its pipeline sees it (so the pipeline does not import the runner): the job host, the
    Ray module it connected, its lane actors' resources and count, and what it reports about lost lanes."""

    ray: Any
    rescheduled: list[str]
    lane_deaths: int

    def lane_options(self) -> dict: ...

    def lane_count(self) -> int: ...


@dataclass
class LaneState:
    handle: Any
    slots: int
    ready: bool = False
    dead: bool = False
    running: dict = field(default_factory=dict)  # ObjectRef -> Job


class RayPipeline:
    """The driver's event loop for one ``evaluate`` call (``run``), with one handler per kind of event."""

    def __init__(self, runner: RayHost, todo: list[Job], results: dict[int, EvalResult], bar: Any,
                 warmer: Any = None) -> None:
        ray, cfg = runner.ray, runner.config
        self.runner, self.ray, self.cfg = runner, ray, cfg
        self.todo, self.results, self.bar, self.warmer = todo, results, bar, warmer
        self.slots = max(1, cfg.lanes_per_gpu) if runner.backend.device_type == "cuda" else 1
        self.build_task = ray.remote(num_cpus=1, max_retries=1)(build_candidate).options(num_returns=2)
        self.lane_cls = ray.remote(max_restarts=0, max_concurrency=self.slots + 2, **runner.lane_options())(Lane)
        self.overlap = runner.backend.overlap_compile_with_timing
        self.build_limit = cfg.compile_workers or len(todo)
        self.schedule = Schedule(cfg, [job.task.id for job in todo], self.overlap, warmer)

        self.waiting_builds: collections.deque[Job] = collections.deque(todo)
        self.pending: dict[Any, tuple[str, Any]] = {}  # ObjectRef -> (kind, job or lane)
        self.tars: dict[int, Any] = {}
        self.attempts: collections.Counter[int] = collections.Counter()
        self.queue: collections.deque[Job] = collections.deque()
        self.lanes: list[LaneState] = []
        self.done = self.replacements = 0
        self.lanes_started = False
        self.lane_seen = time.monotonic()
        self.lane_error = f"none started within {LANE_WAIT_S:.0f} s"

    # -- the loop ---------------------------------------------------------------------------------------
    def run(self) -> None:
        self.submit_builds()
        if self.schedule.open_at_start():
            self.start_lanes()
        try:
            while self.done < len(self.todo):
                self.dispatch()
                if not self.pending:
                    self.starved()
                    time.sleep(1.0)
                    continue
                ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=5.0)
                for ref in ready:
                    if ref not in self.pending:
                        continue
                    kind, what = self.pending.pop(ref)
                    if kind == "build":
                        self.on_build(ref, what)
                        self.submit_builds()
                    elif kind == "device":
                        self.on_device(ref, *what)
                    else:
                        self.on_lane_ready(ref, what)
                # A lane that dies while idle is found when its next call fails; one that is starting on a
                # node that is gone never answers: starved() bounds the wait.
                self.starved()
        finally:
            for lane in self.lanes:  # the zygote and any worker die with their actor (die_with_parent)
                self.ray.kill(lane.handle, no_restart=True)

    # -- builds and lanes -------------------------------------------------------------------------------
    def submit_builds(self) -> None:
        while self.waiting_builds and sum(1 for k, _ in self.pending.values() if k == "build") < self.build_limit:
            job = self.waiting_builds.popleft()
            meta, tar = self.build_task.remote(self.cfg, job.task, job.cand, job.result)
            self.pending[meta] = ("build", job)
            self.tars[job.index] = tar

    def start_lane(self) -> None:
        handle = self.lane_cls.remote(self.cfg, self.slots, None)
        lane = LaneState(handle, self.slots)
        self.lanes.append(lane)
        self.pending[handle.describe.remote()] = ("lane", lane)

    def start_lanes(self) -> None:
        self.lanes_started = True
        for _ in range(max(1, self.runner.lane_count())):
            self.start_lane()
        self.lane_seen = time.monotonic()

    def finish(self, job: Job) -> None:
        self.done += 1
        self.runner.finish(job, self.results, self.bar)
        if self.schedule.job_done(job.task.id):
            for lane in self.lanes:
                if lane.ready and not lane.dead:
                    lane.handle.release.remote([job.task.id])

    def lane_lost(self, lane: LaneState, why: str) -> None:
        if lane.dead:
            return
        lane.dead = True
        self.runner.lane_deaths += 1
        for ref, job in list(lane.running.items()):
            self.pending.pop(ref, None)
            self.retry(job, why)
        lane.running.clear()
        if self.replacements < MAX_REPLACEMENTS_PER_LANE * max(1, self.runner.lane_count()):
            self.replacements += 1
            self.start_lane()

    def retry(self, job: Job, why: str) -> None:
        self.attempts[job.index] += 1
        if self.attempts[job.index] == 1:
            self.runner.rescheduled.append(job.cand.label)
            self.queue.appendleft(job)
            return
        job.result.status = Status.CRASH
        job.result.message = (f"harness: the device lane died again while evaluating this candidate "
                              f"(rescheduled once already; {why})")
        self.finish(job)

    def dispatch(self) -> None:
        if not self.lanes_started:
            return
        for lane in self.lanes:
            while self.queue and lane.ready and not lane.dead and len(lane.running) < lane.slots:
                job = self.queue.popleft()
                skipped = self.schedule.too_late()
                if skipped is not None:
                    job.result.message = skipped.message
                    self.results[job.index] = job.result
                    self.done += 1
                    self.bar.advance("evaluate")
                    continue
                ref = lane.handle.evaluate.remote(job.task, job.cand, job.result, self.tars[job.index])
                lane.running[ref] = job
                self.pending[ref] = ("device", (lane, job))

    # -- events -----------------------------------------------------------------------------------------
    def on_build(self, ref: Any, job: Job) -> None:
        ray = self.ray
        try:
            result, ok = ray.get(ref)
        except ray.exceptions.RayError as exc:
            job.result.status = Status.RUNTIME_ERROR
            job.result.message = f"harness error while building on the cluster: {type(exc).__name__}: {exc}"
            ok = False
        else:
            job.result = result
        last = self.schedule.build_ended()
        self.bar.advance("compile")
        if ok:
            self.queue.append(job)
        else:
            self.finish(job)
        if last and not self.lanes_started and self.queue:
            self.start_lanes()  # (none at all when every candidate failed to build)

    def on_device(self, ref: Any, lane: LaneState, job: Job) -> None:
        ray = self.ray
        lane.running.pop(ref, None)
        try:
            job.result = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
            lane.running[ref] = job  # lane_lost puts every job of the lane back, this one included
            self.lane_lost(lane, type(exc).__name__)
            return
        except (ray.exceptions.ObjectLostError, ray.exceptions.OwnerDiedError) as exc:
            # the shipped build was lost with its node: build it again once, then try again
            self.attempts[job.index] += 1
            if self.attempts[job.index] == 1:
                self.runner.rescheduled.append(job.cand.label)
                self.waiting_builds.appendleft(job)
                self.schedule.build_ended(rebuilt=True)
                return
            job.result.status = Status.RUNTIME_ERROR
            job.result.message = f"harness: the candidate's build was lost twice on the cluster ({exc!r})"
        except ray.exceptions.RayError as exc:
            job.result.status = Status.RUNTIME_ERROR
            job.result.message = f"harness error in the device lane: {type(exc).__name__}: {exc}"
        self.finish(job)

    def on_lane_ready(self, ref: Any, lane: LaneState) -> None:
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self.lane_error = f"the last lane failed to start: {str(exc).strip().splitlines()[-1][:300]}"
            self.lane_lost(lane, f"lane did not start: {type(exc).__name__}")
            return
        lane.ready = True
        self.lane_seen = time.monotonic()

    def starved(self) -> None:
        """Queued work and no lane up for LANE_WAIT_S (or every lane dead and no replacement left to start):
        record what is left instead of waiting forever."""
        if not self.queue or any(lane.ready and not lane.dead for lane in self.lanes) or not self.lanes_started:
            self.lane_seen = time.monotonic()
            return
        hopeless = all(lane.dead for lane in self.lanes)  # lane_lost starts replacements while it may
        if not hopeless and time.monotonic() - self.lane_seen < LANE_WAIT_S:
            return
        while self.queue:
            job = self.queue.popleft()
            job.result.message = (f"harness: no device lane of the Ray cluster was up ({self.lane_error}); "
                                  "not evaluated")
            self.finish(job)
