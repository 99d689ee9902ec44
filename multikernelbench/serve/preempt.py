"""Preemption: a job of a client over its fair share is stopped when it holds a lane that a cheaper client waits for.

Why: lanes are taken as they free and fairly (serve/sched.py), but a job taken while its client looked cheap
held its lane to its end. A candidate that sleeps 20 s when built and 20 s when loaded held one of the
soak's two lanes ~45 s per job, and every honest job queued behind the one lane left. Run timeouts cannot
tell that job from an honest slow one; the share can: the sleeper's client is the one over its share.

The policy, kept simple on purpose:

* **Who is stopped** (``FairQueue.victim``): only when every lane is busy and a client not over its share
  waits; only a lane of a client over its share, and then either at once, if the run is on sufferance (taken
  while its client was already over its share, or a job that outlasted ``preempt_after_s`` before), or after
  ``preempt_after_s`` (default 10 s on CPU lanes, 120 s on GPU lanes, where an honest CUDA build alone takes
  tens of seconds). A run taken within its client's share is protected for ``preempt_after_s``.
* **What happens to it**: the run's workers are killed (serve/lanes.py: the lane's zygote forked them all,
  their sessions go, compilers included), whatever that run reports is dropped (no result, no cache entry,
  no results-store row), a half-built folder is removed, and the job goes back to the front of its client's
  queue, charged for the lane time it used. It runs again from the start: one job has one answer, the one of
  the run that finished.
* **Bounded**: once a run of a job has lasted ``preempt_after_s``, every stop of it counts; a job with more
  than ``max_preemptions`` counted stops is ended instead, ``failed`` with a one-line ``preempted: ...``
  message (nothing cached, the client may resubmit), so a job that always outlasts the bound cannot cycle
  through the lanes for ever. Stops of a job that never ran ``preempt_after_s`` do not count: an honest job
  shorter than that is never failed because other clients' work arrived, however often it is restarted
  (and its restarts are bounded by the share: it is protected once its client falls within its share).

A checker thread looks every ``PERIOD_S`` and whenever the service's condition is notified (a submission, a
job's end); the kill happens outside the service's lock.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from multikernelbench.engine.build_stage import read_marker
from multikernelbench.util.procs import name_thread

if TYPE_CHECKING:
    from multikernelbench.records import EvalResult
    from multikernelbench.serve.jobtypes import Job, ServiceConfig
    from multikernelbench.serve.lanes import EngineLanes, RunStop
    from multikernelbench.serve.metrics import Metrics
    from multikernelbench.serve.sched import FairQueue

#: Seconds between looks for a lane to stop when nothing wakes the checker earlier.
PERIOD_S = 0.5
#: ``preempt_after_s`` when the service config leaves it unset: CPU lanes, GPU lanes.
DEFAULT_AFTER_S = {"cpu": 10.0, "cuda": 120.0}


def default_after_s(device_type: str) -> float:
    return DEFAULT_AFTER_S.get(device_type, DEFAULT_AFTER_S["cuda"])


class PreemptHost(Protocol):
    """What the preemptor needs of its service (serve/jobs.py's EvalService, which imports this module)."""

    running: int

    @property
    def lock(self) -> threading.Condition: ...

    @property
    def _stop(self) -> bool: ...

    @property
    def config(self) -> ServiceConfig: ...

    @property
    def backend(self) -> Any: ...

    @property
    def lanes(self) -> EngineLanes: ...

    @property
    def sched(self) -> FairQueue[Job]: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def jobs(self) -> dict[str, Job]: ...

    def finish(self, lane: int, job: Job, result: EvalResult | None, message: str = "") -> None: ...


class Preemptor:
    """The checker thread of one service (started by it when ``preempt_after_s`` > 0) and the way back for
    stopped jobs (:meth:`returned`, called by the lanes whether or not the thread runs)."""

    def __init__(self, service: PreemptHost, max_preemptions: int, queued: Any) -> None:
        self.service = service
        self.queued = queued  # JobState.QUEUED (passed in: serve/jobs.py imports this module)
        self.max_preemptions = max_preemptions
        self.thread = threading.Thread(target=self.loop, name="mkb-serve-preempt", daemon=True)

    def loop(self) -> None:
        name_thread("mkb-preempt")
        svc = self.service
        while True:
            with svc.lock:
                if svc._stop:
                    return
                stop = self.pick(time.time())
                if stop is None:
                    svc.lock.wait(timeout=PERIOD_S)
            if stop is not None:
                stop.kill()

    def pick(self, now: float) -> RunStop | None:
        """Under the service's lock: mark the lane the scheduler names as stopping, and return its RunStop."""
        svc = self.service
        lanes = svc.lanes.lanes
        exclude = {i for i, lane in enumerate(lanes) if lane.stopping() or not lane.can_stop()}
        index = svc.sched.victim(now, exclude)
        if index is None:
            return None
        stop = lanes[index].preempt()
        if stop is not None:
            stop.overran = svc.sched.overran_after(index, now)
            svc.metrics.count("preemptions", 'kind="overran"' if stop.overran else 'kind="sufferance"')
        return stop

    def returned(self, lane: int, jobs: list[Job], overran: bool = False) -> None:
        """A stopped run's unreported jobs (from the lane's thread, after the run returned): each back in its
        client's queue, or ended once it has more than ``max_preemptions`` counted stops. ``overran``: the
        run had lasted ``preempt_after_s`` when it was stopped."""
        svc = self.service
        ended = []
        for job in jobs:
            self._drop_partial_build(job)
        now = time.time()
        with svc.lock:
            for job in jobs:
                job.stops += 1
                job.overran = job.overran or overran
                if job.overran:
                    job.preemptions += 1
                if job.preemptions > self.max_preemptions:
                    ended.append(job)
                    svc.sched.ended_overran(job.client, now)
                    continue  # finish() counts its lane time
                if job.started_at is not None:
                    svc.metrics.per_client(job.client, stopped=1, stopped_lane_ms=round(1000 * (now - job.started_at)))
                svc.running -= 1
                svc.sched.done(lane, job, now, stopped=True)  # the lane time it used is its client's
                for j in [job, *job.followers]:
                    j.state, j.started_at = self.queued, None
                svc.sched.requeue(job.client, job, job.compute_s, now, overran=job.overran)
            svc.lock.notify_all()
        for job in ended:
            svc.finish(lane, job, None, f"preempted: stopped {job.preemptions} times after running "
                                        f"{svc.sched.share.preempt_after_s:g} s while its client was over its fair "
                                        "share and other clients waited; not evaluated, nothing cached (resubmit "
                                        "later, or ask for a higher --preempt-after)")

    def _drop_partial_build(self, job: Job) -> None:
        """The killed run's build folder, unless its build completed (the marker is written last and
        atomically) or another unfinished job has the same code: a killed compiler can leave an object file
        that a later build would take as up to date."""
        svc = self.service
        if svc.config.engine.ray_address:
            return
        folder = Path(svc.config.engine.build_root) / svc.backend.name / job.code_hash
        if read_marker(folder) is not None:
            return
        with svc.lock:
            busy = any(j.code_hash == job.code_hash and j is not job and j not in job.followers and not j.finished
                       for j in svc.jobs.values())
        if not busy:
            shutil.rmtree(folder, ignore_errors=True)
