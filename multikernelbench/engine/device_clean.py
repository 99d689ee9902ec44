"""The clean reference's steps of a device stage: the reference timed by a worker that never loaded candidate code,
once per task, timing shape and run, and again beside a confirming timing (split from engine/device_stage.py,
which mixes them in). Why apart: the clean worker is the evidence the candidate cannot reach (the speedup's
denominator, the renewal's calibration: anticheat/README.md), so its steps are read in one place.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING

from multikernelbench.anticheat.clock_audit import AskLog
from multikernelbench.anticheat.timing_records import CleanTiming, HostLoad
from multikernelbench.engine import host_load
from multikernelbench.engine.fresh import FreshPlanner
from multikernelbench.engine.messages import Done, Prepare, Time, Timed
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.engine.timed_outputs import logged
from multikernelbench.engine.timing_verdict import clean_timing

if TYPE_CHECKING:
    from multikernelbench.backends.base import Backend
    from multikernelbench.engine.clean_reference import CleanReference
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.gpu_turns import Turns
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
    turns: Turns
    _prepared_clean: WorkerSession | None
    _clean_ahead: threading.Thread | None
    _session: Callable[..., WorkerSession]
    _start_worker: Callable[..., WorkerSession]
    _ask_log: Callable[[WorkerSession], AskLog]

    def _start_clean_ahead(self) -> None:
        """Start the task's clean worker now, in a thread of its own, while this candidate loads and is checked,
        when its clean timing is still to be made and no worker was started ahead for it (engine/prefetch.py
        does that only for a lane alone on its GPU). Why: lanes that share a GPU started it inside the exclusive
        clock turn, fork, harness set-up and CUDA context (~0.2-0.3 s on an H100/H200) while every other lane's
        clock waited (issue #44). Its device context is made in a shared turn, as a load's is: never beside
        another lane's clock; the worker never loads candidate code, so it is never stopped for one either.
        Its timing and its end stay in the turn (ending it frees the GPU memory its timing held before this
        candidate's own timing). ``prefetch_workers`` off (``--no-worker-prefetch``): started in the turn."""
        if self._prepared_clean is not None or not self.config.prefetch_workers or not self._clean_key_pending():
            return
        self._clean_ahead = threading.Thread(target=self._clean_ahead_start, daemon=True,
                                             name=f"clean-ahead-{self.task.id}")
        self._clean_ahead.start()

    def _clean_ahead_start(self) -> None:
        """The clean worker, its device context and the reference's model at the timing shape (a Prepare request:
        a heavy model's weights took ~1 s of a clock turn), all in one shared turn."""
        shape = self.task.shape_for_timing(self.backend.times_on_cpu_shape)
        session = None
        try:
            with self.turns.shared():
                session = self._start_worker(warm_device=True)
                session.call(Prepare(shape=shape, weight_seed=self.seeds.for_task(self.task).weight,
                                     reference_only=True), timeout=self.config.run_timeout_s,
                             what="making the reference's model in a clean worker", expect=Done)
        except Exception:  # noqa: BLE001 - the clean timing then starts its own worker and reports its failure
            if session is not None:
                self._prepared_clean = session  # started: ended with the others (in a shared turn), never leaked
            return
        self._prepared_clean = session

    def _join_clean_ahead(self) -> None:
        """Before this candidate's first clock, its end, or its discard: the clean worker has started (or failed
        to). Called holding no turn (the thread may be waiting for a shared one)."""
        thread, self._clean_ahead = self._clean_ahead, None
        if thread is not None:
            thread.join()

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
