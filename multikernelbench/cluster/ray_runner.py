"""The Runner on a Ray cluster: builds as Ray CPU tasks, device stages in long-lived lane actors.

The driver (this process) keeps everything the local runner keeps: the results store (written only here, as
each candidate finishes, so a killed driver resumes from it), the progress bar and the bookkeeping of which
tasks are done. What moves to the cluster:

* **Builds**: one Ray task per candidate (``num_cpus=1``), on any node with a free core, cached by code hash
  on that node; the built folder comes back as tar bytes kept in the object store and handed to the lane
  that runs the candidate, node to node.
* **Device stages**: one actor per accelerator (``num_gpus=1`` and ``lanes_per_gpu`` slots sharing it under
  one lock; plus the backend's :meth:`ray_resources`), or ``device_workers`` CPU lane actors for backends
  that run on the CPU. Where builds and timing share the cores (the CPU backend) the lanes are created after
  the last build, as the local runner starts its device stage after the last build.

**Exactly once.** Each candidate is submitted to one lane at a time. When a lane dies (its actor process is
killed, its node stops) every candidate it was running is put back at the front of the queue once and a
replacement lane is started; a candidate whose second lane dies too is recorded as a crash (a candidate that
kills its own lane twice is how that looks), never submitted a third time. Results only reach the store from
the driver, once per candidate, whatever happened on the cluster.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Any

from multikernelbench.backends.base import Availability
from multikernelbench.cluster.ray_import import require_ray
from multikernelbench.cluster.remote import Lane, build_candidate
from multikernelbench.engine.runner import Runner, _Job
from multikernelbench.records import EvalResult, Status

#: How long queued candidates wait for any device lane to be up before they are recorded as not run
#: (e.g. every lane's node stopped and no other node offers the lane's resources).
LANE_WAIT_S = 300.0
#: Replacement lanes started after lane deaths, per original lane, before the run stops replacing them.
MAX_REPLACEMENTS_PER_LANE = 3


def describe_lane_node(config) -> dict:
    """A short task on a node of the lanes' kind: its availability, hardware and versions (the driver keys
    results by them, and may itself have no GPU)."""
    from multikernelbench.backends import get_backend

    backend = get_backend(config.backend, threads=config.threads, **config.backend_options)
    avail = backend.availability()
    return {"available": avail.ok, "reason": avail.reason,
            "hardware": backend.hardware() if avail.ok else "", "versions": backend.versions()}


class LaneBackend:
    """The run's backend as seen by the lanes: the driver's object for everything else, but availability,
    hardware and versions answered by a node that runs the lanes."""

    def __init__(self, backend, info: dict) -> None:
        self._backend, self._info = backend, info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def availability(self) -> Availability:
        return Availability(bool(self._info["available"]), self._info.get("reason", ""))

    def hardware(self) -> str:
        return self._info["hardware"]

    def versions(self) -> dict[str, str]:
        return dict(self._info["versions"])


@dataclass
class _LaneState:
    handle: Any
    slots: int
    ready: bool = False
    dead: bool = False
    running: dict = field(default_factory=dict)  # ObjectRef -> _Job


class RayRunner(Runner):
    """:class:`Runner` whose pipeline runs on Ray (see the module docstring). ``rescheduled`` lists the
    candidates put back after a lane died, ``lane_deaths`` counts the lanes lost (tests and reports)."""

    def __init__(self, config, store=None, on_result=None, progress: bool = True) -> None:
        super().__init__(config, store, on_result=on_result, progress=progress)
        if config.reference_only:
            raise ValueError("the suite baseline (reference-only runs) runs locally, not on Ray")
        self.ray = require_ray()
        self.rescheduled: list[str] = []
        self.lane_deaths = 0

    # ------------------------------------------------------------------------------------------------
    def evaluate(self, tasks, candidates) -> list[EvalResult]:
        owns = self._connect()
        try:
            self.backend = LaneBackend(self.backend, self._probe())
            return super().evaluate(tasks, candidates)
        finally:
            if owns:
                self.ray.shutdown()

    def _connect(self) -> bool:
        ray = self.ray
        if ray.is_initialized():
            return False
        address = None if self.config.ray_address == "local" else self.config.ray_address
        if address is None:
            ray.init(log_to_driver=False, include_dashboard=False)
        else:
            ray.init(address=address, log_to_driver=False)
        return True

    def _lane_options(self) -> dict:
        opts: dict[str, Any] = {"resources": dict(self.backend.ray_resources())}
        if self.backend.device_type == "cuda":
            opts.update(num_gpus=1, num_cpus=0)  # builds get every core; the lane's work is on its GPU
        else:
            opts.update(num_cpus=1)
        return opts

    def _probe(self) -> dict:
        opts = self._lane_options()
        task = self.ray.remote(max_retries=1, **opts)(describe_lane_node)
        ref = task.remote(self.config)
        ready, _ = self.ray.wait([ref], timeout=LANE_WAIT_S)
        if not ready:
            self.ray.cancel(ref, force=True)
            wanted = {k: v for k, v in opts.items() if v}
            return {"available": False, "reason": f"no node of the Ray cluster offers a lane's resources "
                                                  f"{wanted} (waited {LANE_WAIT_S:.0f} s)",
                    "hardware": "", "versions": {}}
        return self.ray.get(ref)

    def lane_count(self) -> int:
        """One lane actor per GPU in the cluster (``gpus`` caps how many), per unit of the backend's custom
        resource, or ``device_workers`` for CPU lanes."""
        resources = self.ray.cluster_resources()
        custom = self.backend.ray_resources()
        if self.backend.device_type == "cuda":
            n = int(resources.get("GPU", 0))
            return min(n, len(self.config.gpus)) if self.config.gpus is not None else n
        if custom:
            return min(int(resources.get(k, 0) // v) for k, v in custom.items() if v > 0)
        return max(1, self.config.device_workers)

    def _start_zygote(self, wait: bool = True):
        return None  # the driver runs no worker: builds and lanes start their own

    # ------------------------------------------------------------------------------------------------
    def _pipeline(self, todo: list[_Job], results: dict[int, EvalResult], bar, warmer=None) -> None:
        ray, cfg = self.ray, self.config
        slots = max(1, cfg.lanes_per_gpu) if self.backend.device_type == "cuda" else 1
        build_task = ray.remote(num_cpus=1, max_retries=1)(build_candidate).options(num_returns=2)
        lane_cls = ray.remote(max_restarts=0, max_concurrency=slots + 2, **self._lane_options())(Lane)
        overlap = self.backend.overlap_compile_with_timing
        build_limit = cfg.compile_workers or len(todo)
        cutoff = time.monotonic() + cfg.stop_after_s if cfg.stop_after_s > 0 else None

        waiting_builds = collections.deque(todo)
        pending: dict[Any, tuple[str, Any]] = {}  # ObjectRef -> (kind, job or lane)
        tars: dict[int, Any] = {}
        attempts: dict[int, int] = collections.Counter()
        queue: collections.deque[_Job] = collections.deque()
        lanes: list[_LaneState] = []
        remaining = collections.Counter(job.task.id for job in todo)
        state = {"built": 0, "done": 0, "lanes_started": False, "replacements": 0, "lane_seen": time.monotonic(),
                 "lane_error": f"none started within {LANE_WAIT_S:.0f} s"}

        def submit_builds() -> None:
            while waiting_builds and sum(1 for k, _ in pending.values() if k == "build") < build_limit:
                job = waiting_builds.popleft()
                meta, tar = build_task.remote(cfg, job.task, job.cand, job.result)
                pending[meta] = ("build", job)
                tars[job.index] = tar

        def start_lane() -> None:
            gpu_ids = None
            handle = lane_cls.remote(cfg, slots, gpu_ids)
            lane = _LaneState(handle, slots)
            lanes.append(lane)
            pending[handle.describe.remote()] = ("lane", lane)

        def start_lanes() -> None:
            state["lanes_started"] = True
            if warmer is not None and not overlap:
                warmer.stop()  # nothing may share the cores with a CPU candidate's clock
            for _ in range(max(1, self.lane_count())):
                start_lane()
            state["lane_seen"] = time.monotonic()

        def finish(job: _Job) -> None:
            state["done"] += 1
            self._finish(job, results, bar)
            remaining[job.task.id] -= 1
            if remaining[job.task.id] == 0:
                for lane in lanes:
                    if lane.ready and not lane.dead:
                        lane.handle.release.remote([job.task.id])

        def lane_lost(lane: _LaneState, why: str) -> None:
            if lane.dead:
                return
            lane.dead = True
            self.lane_deaths += 1
            for ref, job in list(lane.running.items()):
                pending.pop(ref, None)
                retry(job, why)
            lane.running.clear()
            if state["replacements"] < MAX_REPLACEMENTS_PER_LANE * max(1, self.lane_count()):
                state["replacements"] += 1
                start_lane()

        def retry(job: _Job, why: str) -> None:
            attempts[job.index] += 1
            if attempts[job.index] == 1:
                self.rescheduled.append(job.cand.label)
                queue.appendleft(job)
                return
            job.result.status = Status.CRASH
            job.result.message = (f"harness: the device lane died again while evaluating this candidate "
                                  f"(rescheduled once already; {why})")
            finish(job)

        def dispatch() -> None:
            if not state["lanes_started"]:
                return
            for lane in lanes:
                while queue and lane.ready and not lane.dead and len(lane.running) < lane.slots:
                    job = queue.popleft()
                    if cutoff is not None and time.monotonic() >= cutoff:
                        job.result.message = (f"not started: the run's time limit ({cfg.stop_after_s:.0f} s) "
                                              "was reached first; not stored, a rerun picks it up")
                        results[job.index] = job.result
                        state["done"] += 1
                        bar.advance("evaluate")
                        continue
                    ref = lane.handle.evaluate.remote(job.task, job.cand, job.result, tars[job.index])
                    lane.running[ref] = job
                    pending[ref] = ("device", (lane, job))

        def on_build(ref, job: _Job) -> None:
            try:
                result, ok = ray.get(ref)
            except ray.exceptions.RayError as exc:
                job.result.status = Status.RUNTIME_ERROR
                job.result.message = f"harness error while building on the cluster: {type(exc).__name__}: {exc}"
                ok = False
            else:
                job.result = result
            state["built"] += 1
            bar.advance("compile")
            if ok:
                queue.append(job)
            else:
                finish(job)
            if not state["lanes_started"] and queue and (overlap or state["built"] == len(todo)):
                start_lanes()  # (none at all when every candidate failed to build)

        def on_device(ref, lane: _LaneState, job: _Job) -> None:
            lane.running.pop(ref, None)
            try:
                job.result = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                lane.running[ref] = job  # lane_lost puts every job of the lane back, this one included
                lane_lost(lane, type(exc).__name__)
                return
            except (ray.exceptions.ObjectLostError, ray.exceptions.OwnerDiedError) as exc:
                # the shipped build was lost with its node: build it again once, then try again
                attempts[job.index] += 1
                if attempts[job.index] == 1:
                    self.rescheduled.append(job.cand.label)
                    waiting_builds.appendleft(job)
                    state["built"] -= 1
                    return
                job.result.status = Status.RUNTIME_ERROR
                job.result.message = f"harness: the candidate's build was lost twice on the cluster ({exc!r})"
            except ray.exceptions.RayError as exc:
                job.result.status = Status.RUNTIME_ERROR
                job.result.message = f"harness error in the device lane: {type(exc).__name__}: {exc}"
            finish(job)

        def on_lane_ready(ref, lane: _LaneState) -> None:
            try:
                ray.get(ref)
            except ray.exceptions.RayError as exc:
                state["lane_error"] = f"the last lane failed to start: {str(exc).strip().splitlines()[-1][:300]}"
                lane_lost(lane, f"lane did not start: {type(exc).__name__}")
                return
            lane.ready = True
            state["lane_seen"] = time.monotonic()

        def starved() -> None:
            """Queued work and no lane up for LANE_WAIT_S (or every lane dead and no replacement left to
            start): record what is left instead of waiting forever."""
            if not queue or any(lane.ready and not lane.dead for lane in lanes) or not state["lanes_started"]:
                state["lane_seen"] = time.monotonic()
                return
            hopeless = all(lane.dead for lane in lanes)  # lane_lost starts replacements while it may
            if not hopeless and time.monotonic() - state["lane_seen"] < LANE_WAIT_S:
                return
            while queue:
                job = queue.popleft()
                job.result.message = (f"harness: no device lane of the Ray cluster was up ({state['lane_error']}); "
                                      "not evaluated")
                finish(job)

        submit_builds()
        if overlap:
            start_lanes()
        try:
            while state["done"] < len(todo):
                dispatch()
                if not pending:
                    starved()
                    time.sleep(1.0)
                    continue
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=5.0)
                for ref in ready:
                    if ref not in pending:
                        continue
                    kind, what = pending.pop(ref)
                    if kind == "build":
                        on_build(ref, what)
                        submit_builds()
                    elif kind == "device":
                        on_device(ref, *what)
                    else:
                        on_lane_ready(ref, what)
                # A lane that dies while idle is found when its next call fails; one that is starting on a
                # node that is gone never answers: starved() bounds the wait.
                starved()
        finally:
            for lane in lanes:  # the zygote and any worker die with their actor (die_with_parent)
                ray.kill(lane.handle, no_restart=True)
        self.reference_counts = {}
