"""The clean reference's steps of a device stage: the reference timed by a worker that never loaded candidate code,
once per task, timing shape and run, and again beside a confirming timing (split from engine/device_stage.py,
which mixes them in). Why apart: the clean worker is the evidence the candidate cannot reach (the speedup's
denominator, the renewal's calibration: anticheat/README.md), so its steps are read in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING

from multikernelbench.anticheat.clock_audit import AskLog
from multikernelbench.anticheat.timing_records import CleanTiming, HostLoad
from multikernelbench.engine import host_load
from multikernelbench.engine.fresh import FreshPlanner
from multikernelbench.engine.messages import Time, Timed
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.engine.timed_outputs import logged
from multikernelbench.engine.timing_verdict import clean_timing

if TYPE_CHECKING:
    from multikernelbench.backends.base import Backend
    from multikernelbench.engine.clean_reference import CleanReference
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.reference import ReferenceService, SeedSource
    from multikernelbench.tasks.record import Task


class CleanSteps:
    """Mixed into :class:`~multikernelbench.engine.device_stage.CandidateEvaluation`, which provides these."""

    config: EngineConfig
    task: Task
    backend: Backend
    seeds: SeedSource
    refs: ReferenceService
    clean: CleanReference
    sessions: list[WorkerSession]
    _session: Callable[..., WorkerSession]
    _ask_log: Callable[[WorkerSession], AskLog]

    def _clean_key(self, shape: dict, weight_seed: int) -> tuple:
        """What the run's clean-reference timings are kept under (one per task, timing shape and weight seed)."""
        return (self.task.id, tuple(sorted(shape.items())), weight_seed)

    def _clean_key_pending(self) -> bool:
        """Whether this candidate's timing will need a clean reference worker (none timed yet for its key)."""
        ac, cfg = self.config.anticheat, self.config
        if cfg.reference_only or cfg.skip_timing or not self.backend.timing_available:
            return False
        key = self._clean_key(self.task.shape_for_timing(self.backend.times_on_cpu_shape),
                              self.seeds.for_task(self.task).weight)
        return ac.clean_reference and ac.runtime_checks and not self.clean.has(key)

    def _clean_timing(self, shape: dict, weight_seed: int) -> CleanTiming | None:
        """The reference timed by a worker that never loads candidate code: once per task, shape and run
        (cached across lanes), in the exclusive turn the caller holds. None when switched off; a clean worker
        that fails leaves the audit without its noise floor and the result without the cross-check (flagged)."""
        if not self._clean_wanted():
            return None
        return self.clean.get(self._clean_key(shape, weight_seed), lambda: self._time_clean(shape, weight_seed))

    def _clean_wanted(self) -> bool:
        ac = self.config.anticheat
        return ac.clean_reference and ac.runtime_checks

    def _time_clean(self, shape: dict, weight_seed: int) -> CleanTiming:
        """One timing of the reference in a fresh clean worker (uncached), in the caller's exclusive turn."""
        cfg = self.config
        try:
            session = self._session(load=False)
        except Verdict as v:
            return CleanTiming.failed(f"{v.status.value}: {v.message[:300]}")
        try:
            log = self._ask_log(session)
            load_before = self._load()
            planner = FreshPlanner(cfg.timing, next_seed=lambda: self.seeds.next("clean", self.task.id))
            reply, _ = session.call(
                Time(shape=shape, weight_seed=weight_seed, timing=asdict(cfg.timing), reference_only=True),
                timeout=cfg.run_timeout_s + 2 * cfg.timing.budget_s,
                what="timing the reference in a clean worker", expect=Timed, on_fresh=logged(log, planner))
            log.close()
            return clean_timing(log, reply, host_load.worst(load_before, self._load()))
        except Verdict as v:
            return CleanTiming.failed(f"{v.status.value}: {v.message[:300]}")
        finally:
            self.sessions.remove(session)
            session.close()

    def _load(self) -> HostLoad:
        """The host's load now, with the other processes on this lane's GPU (engine/gpu_neighbours.py)."""
        return host_load.sample(self.refs.neighbours)
