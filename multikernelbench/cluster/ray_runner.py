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

from typing import Any, cast

from multikernelbench.backends.base import Availability, Backend
from multikernelbench.cluster.ray_executor import LANE_WAIT_S, RayExecutor
from multikernelbench.cluster.ray_import import require_ray
from multikernelbench.engine.executor import Executor
from multikernelbench.engine.runner import Runner
from multikernelbench.engine.schedule import Schedule
from multikernelbench.records import EvalResult


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


class RayRunner(Runner):
    """:class:`Runner` whose jobs run on Ray (see the module docstring; the scheduling loop is the local one's,
    engine/scheduler.py, with :class:`~.ray_executor.RayExecutor` moving the jobs). ``rescheduled`` lists the
    candidates put back after a lane died, ``lane_deaths`` counts the lanes lost (tests and reports)."""

    def __init__(self, config, store=None, on_result=None, progress: bool = True) -> None:
        super().__init__(config, store, on_result=on_result, progress=progress)
        if config.reference_only:
            raise ValueError("the suite baseline (reference-only runs) runs locally, not on Ray")
        self.ray = require_ray()
        self.lane_deaths = 0

    # ------------------------------------------------------------------------------------------------
    def evaluate(self, tasks, candidates) -> list[EvalResult]:
        owns = self._connect()
        try:
            # a proxy with Backend's interface (the rest by __getattr__), not a subclass: Backend's own
            # defaults must not shadow the driver's object
            self.backend = cast(Backend, LaneBackend(self.backend, self._probe()))
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

    def lane_options(self) -> dict:
        opts: dict[str, Any] = {"resources": dict(self.backend.ray_resources())}
        if self.backend.device_type == "cuda":
            opts.update(num_gpus=1, num_cpus=0)  # builds get every core; the lane's work is on its GPU
        else:
            opts.update(num_cpus=1)
        return opts

    def _probe(self) -> dict:
        opts = self.lane_options()
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
    def _executor(self, schedule: Schedule) -> Executor:
        return RayExecutor(self, schedule)
