"""Workers of runs on sufferance at a lower CPU priority (``ServiceConfig.sufferance_nice``, ``--sufferance-nice``).

Why: the lanes are work-conserving, so a lane that no client within its share wants goes to a client over its
share (a flooder with work always queued, a client of low weight), and that run is stopped only once a cheaper
client waits for a lane (serve/sched.py, "Runs on sufferance"). Until then its workers took the CPU at the
same priority as the honest clients' evaluations and above the HTTP front, which runs at ``http_nice``
(serve/priority.py): on the soak's one pinned core (issue #42, benchmarks/serve/README.md) the flooder's
failing sources and the honest kernels' evaluations split the core, and where other work took most of it the
niced front starved. A run taken on sufferance (every job on the lane was taken while its client was over its
share, on probation, or after outlasting ``preempt_after_s``: ``FairQueue.on_sufferance``) now forks its
workers at ``sufferance_nice`` (default 19, the lowest) and their session's autogroup with them
(util/procs.py ``lower_priority``): they get the core when the front and the protected runs leave it.

What the nice would do to a verdict, and what is done about it:

* **Timing.** A niced worker beside busy ones gets far less than the ``cores / runnable`` share the clock
  audit's host-load factor allows for (engine/host_load.py counts runnable tasks, not their weights: at nice 19
  against one nice-0 task a worker gets ~1.5 % of the core, not 50 %), so its timed intervals would stretch
  beyond what that factor excuses: a slower speedup, or an honest kernel convicted by the wall-clock audit.
  Where the service times (not ``skip_timing``, and the backend can time), only the **compile** worker is
  niced; the device worker (load, checks, timing, the clean reference's timing) keeps the lane's priority.
  A build's wall time is reported (``compile_time_s``) but judges nothing.
* **Timeouts.** Compile and run timeouts are wall-clock; a niced worker starved past one would report
  ``timeout``, which the service would cache as the candidate's answer. So a ``timeout`` of a niced run is
  not reported: the lane hands the job back to its client's queue like a stopped run (no result, no cache
  entry, no results-store row; one stop counted, not a preemption), marked ``full_priority``, and its next run
  keeps the lane's priority whatever its client's share; that run's ``timeout`` is the answer. Cost: a
  candidate that really times out runs twice when it was taken on sufferance, both charged to its client.
* **Fixed for the run.** The nice is set when a worker forks and is not raised or lowered as the run goes: a
  run taken on sufferance stays niced if its client falls within its share meanwhile (it then only waits for
  the core longer), and a protected run is never niced. A lane without a live zygote when its run starts (Ray,
  ``zygote=False``) runs at full priority, timeouts reported as they come; a worker the zygote failed to fork
  and a fresh interpreter started instead keeps the lane's priority (its run's timeout is still retried once).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from multikernelbench.records import EvalResult, Status
from multikernelbench.util.procs import Limits

#: Roles of the workers a run forks (engine/build_stage.py, engine/device_stage.py).
COMPILE, DEVICE = "compile", "device"


@dataclass(frozen=True)
class RunPriority:
    """The nice a lane's run forks workers of ``roles`` at (0: the lane's own priority)."""

    nice: int = 0
    roles: frozenset[str] = frozenset()

    def limits(self, role: str, limits: Limits) -> Limits:
        """``limits`` for a worker of ``role`` of this run: at least this run's nice where it applies."""
        if self.nice > limits.nice and role in self.roles:
            return dataclasses.replace(limits, nice=self.nice)
        return limits

    def retries(self, result: EvalResult) -> bool:
        """Whether ``result`` is a timeout of a niced run: no verdict, the job runs again at full priority."""
        return self.nice > 0 and bool(self.roles) and result.status is Status.TIMEOUT


FULL = RunPriority()


def niced_roles(skip_timing: bool, backend: Any) -> frozenset[str]:
    """The roles whose workers may be niced: every one where nothing is timed, else only the compile worker
    (module docstring, "Timing")."""
    if skip_timing or not getattr(backend, "timing_available", False):
        return frozenset({COMPILE, DEVICE})
    return frozenset({COMPILE})


def run_priority(nice: int, sufferance: bool, full_priority: bool, roles: frozenset[str]) -> RunPriority:
    """A run's priority: niced when it was taken on sufferance, ``nice`` > 0, and none of its jobs is to run at
    full priority (a niced run of it timed out before)."""
    if nice <= 0 or not sufferance or full_priority:
        return FULL
    return RunPriority(min(19, nice), roles)
