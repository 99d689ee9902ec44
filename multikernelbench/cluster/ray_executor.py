"""The Ray runner's executor (engine/executor.py): builds as Ray tasks, device steps in lane actors, driven by
the same scheduling loop as the local threads (engine/scheduler.py); the policy is in ray_runner's docstring.

What is Ray's own here, and nowhere else: placing a queued job on a lane actor with a free slot once the lane
has answered its start-up probe, noticing a lane that died (its jobs come back as :class:`LaneLost`, and a
replacement is started while the run may), a shipped build lost with its node (:class:`BuildLost`), and
queued jobs that no lane will ever take (:class:`NoLane`). Whether a lost job runs again is the scheduler's.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from multikernelbench.cluster.remote import Lane, build_candidate
from multikernelbench.engine.executor import BuildLost, Built, Completion, Evaluated, LaneLost, NoLane, NotStarted
from multikernelbench.engine.job import Job, JobHost
from multikernelbench.engine.outcomes import BuildOutcome, HarnessError, Outcome
from multikernelbench.engine.schedule import Schedule

#: How long queued candidates wait for any device lane to be up before they are recorded as not run
#: (e.g. every lane's node stopped and no other node offers the lane's resources).
LANE_WAIT_S = 300.0
#: Replacement lanes started after lane deaths, per original lane, before the run stops replacing them.
MAX_REPLACEMENTS_PER_LANE = 3
#: How long the run's end waits for the lanes' releases and reference counts (a report for tests and logs).
REPORT_WAIT_S = 60.0


class RayHost(JobHost, Protocol):
    """The Ray runner as its executor sees it (so the executor does not import the runner): the job host, the
    Ray module it connected, its lane actors' resources and count, and the count of lanes lost."""

    ray: Any
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


class RayExecutor:
    """Jobs on a Ray cluster, for one ``evaluate`` call (see the module docstring)."""

    def __init__(self, runner: RayHost, schedule: Schedule) -> None:
        ray, cfg = runner.ray, runner.config
        self.runner, self.ray, self.cfg, self.schedule = runner, ray, cfg, schedule
        self.slots = max(1, cfg.lanes_per_gpu or 1) if runner.backend.device_type == "cuda" else 1
        self.build_task = ray.remote(num_cpus=1, max_retries=1)(build_candidate).options(num_returns=2)
        self.lane_cls = ray.remote(max_restarts=0, max_concurrency=self.slots + 2, **runner.lane_options())(Lane)
        self.build_slots = cfg.compile_workers or max(1, schedule.total)
        self.pending: dict[Any, tuple[str, Any]] = {}  # ObjectRef -> (kind, job or lane)
        self.tars: dict[int, Any] = {}
        self.queue: collections.deque[Job] = collections.deque()
        self.lanes: list[LaneState] = []
        self.found: list[Completion] = []  # completions found since the last poll
        self.releases: list[Any] = []  # the lanes' release calls, waited for before their references are asked
        self.replacements = 0
        self.lanes_started = False
        self.lane_seen = time.monotonic()
        self.lane_error = f"none started within {LANE_WAIT_S:.0f} s"

    # -- the executor's interface -----------------------------------------------------------------------
    def submit_build(self, job: Job) -> None:
        meta, tar = self.build_task.remote(self.cfg, job.task, job.cand)
        self.pending[meta] = ("build", job)
        self.tars[job.index] = tar

    def open_lanes(self) -> None:
        if self.lanes_started:
            return
        self.lanes_started = True
        for _ in range(max(1, self.runner.lane_count())):
            self.start_lane()
        self.lane_seen = time.monotonic()

    def submit_device(self, job: Job, first: bool = False) -> None:
        if first:
            self.queue.appendleft(job)
        else:
            self.queue.append(job)

    def release(self, task_id: str) -> None:
        for lane in self.lanes:
            if lane.ready and not lane.dead:
                self.releases.append(lane.handle.release.remote([task_id]))

    def poll(self, timeout: float) -> list[Completion]:
        self.dispatch()
        if not self.pending:
            self.starved()
            if not self.found:
                time.sleep(min(1.0, timeout))
            return self.take()
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        for ref in ready:
            if ref not in self.pending:
                continue
            kind, what = self.pending.pop(ref)
            if kind == "build":
                self.on_build(ref, what)
            elif kind == "device":
                self.on_device(ref, *what)
            else:
                self.on_lane_ready(ref, what)
        # A lane that dies while idle is found when its next call fails; one that is starting on a node that is
        # gone never answers: starved() bounds the wait.
        self.starved()
        return self.take()

    def close(self, aborted: bool = False) -> None:
        if not aborted:
            self.report_references()
        for lane in self.lanes:  # the zygote and any worker die with their actor (die_with_parent)
            self.ray.kill(lane.handle, no_restart=True)

    def report_references(self) -> None:
        """Each live lane's reference count and the tasks it still holds, into the runner as the local lanes put
        theirs (``lane0``, ...). The releases are waited for first: a lane actor runs calls on several threads,
        so a later call need not see an earlier one's effect."""
        try:
            self.ray.get(self.releases, timeout=REPORT_WAIT_S)
            live = [(k, lane) for k, lane in enumerate(self.lanes) if lane.ready and not lane.dead]
            answers = self.ray.get([lane.handle.references.remote() for _, lane in live], timeout=REPORT_WAIT_S)
        except self.ray.exceptions.RayError:  # a lane lost at the end: nothing to report, the results stand
            return
        for (k, _), (computed, held) in zip(live, answers, strict=True):
            self.runner.reference_counts[f"lane{k}"] = computed
            self.runner.reference_held[f"lane{k}"] = held

    # -- lanes ------------------------------------------------------------------------------------------
    def take(self) -> list[Completion]:
        found, self.found = self.found, []
        return found

    def start_lane(self) -> None:
        handle = self.lane_cls.remote(self.cfg, self.slots, None)
        lane = LaneState(handle, self.slots)
        self.lanes.append(lane)
        self.pending[handle.describe.remote()] = ("lane", lane)

    def dispatch(self) -> None:
        """Queued jobs onto the free slots of lanes that are up; one a lane would start past the run's time
        limit is not started."""
        for lane in self.lanes:
            while self.queue and lane.ready and not lane.dead and len(lane.running) < lane.slots:
                job = self.queue.popleft()
                skipped = self.schedule.too_late()
                if skipped is not None:
                    self.found.append(NotStarted(job, skipped))
                    continue
                ref = lane.handle.evaluate.remote(job.task, job.cand, self.tars[job.index])
                lane.running[ref] = job
                self.pending[ref] = ("device", (lane, job))

    def lane_lost(self, lane: LaneState, why: str) -> None:
        if lane.dead:
            return
        lane.dead = True
        self.runner.lane_deaths += 1
        for ref, job in list(lane.running.items()):
            self.pending.pop(ref, None)
            self.found.append(LaneLost(job, why))
        lane.running.clear()
        if self.replacements < MAX_REPLACEMENTS_PER_LANE * max(1, self.runner.lane_count()):
            self.replacements += 1
            self.start_lane()

    def starved(self) -> None:
        """Queued work and no lane up for LANE_WAIT_S (or every lane dead and no replacement left to start):
        what is left is recorded as not evaluated instead of waiting forever."""
        if not self.queue or any(lane.ready and not lane.dead for lane in self.lanes) or not self.lanes_started:
            self.lane_seen = time.monotonic()
            return
        hopeless = all(lane.dead for lane in self.lanes)  # lane_lost starts replacements while it may
        if not hopeless and time.monotonic() - self.lane_seen < LANE_WAIT_S:
            return
        while self.queue:
            self.found.append(NoLane(self.queue.popleft(), f"harness: no device lane of the Ray cluster was up "
                                                           f"({self.lane_error}); not evaluated"))

    # -- what the cluster answered ----------------------------------------------------------------------
    def on_build(self, ref: Any, job: Job) -> None:
        outcome: Outcome
        try:
            outcome = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            outcome = HarnessError(f"harness error while building on the cluster: {type(exc).__name__}: {exc}")
        self.found.append(Built(job, outcome, goes_on=isinstance(outcome, BuildOutcome) and outcome.ok))

    def on_device(self, ref: Any, lane: LaneState, job: Job) -> None:
        errors = self.ray.exceptions
        lane.running.pop(ref, None)
        outcome: Outcome
        try:
            outcome = self.ray.get(ref)
        except (errors.RayActorError, errors.ActorUnavailableError) as exc:
            lane.running[ref] = job  # lane_lost gives back every job of the lane, this one included
            self.lane_lost(lane, type(exc).__name__)
            return
        except (errors.ObjectLostError, errors.OwnerDiedError) as exc:  # the shipped build, lost with its node
            self.found.append(BuildLost(job, repr(exc)))
            return
        except errors.RayError as exc:
            outcome = HarnessError(f"harness error in the device lane: {type(exc).__name__}: {exc}")
        self.found.append(Evaluated(job, outcome))

    def on_lane_ready(self, ref: Any, lane: LaneState) -> None:
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self.lane_error = f"the last lane failed to start: {str(exc).strip().splitlines()[-1][:300]}"
            self.lane_lost(lane, f"lane did not start: {type(exc).__name__}")
            return
        lane.ready = True
        self.lane_seen = time.monotonic()
