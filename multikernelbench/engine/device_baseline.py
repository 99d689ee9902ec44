"""The suite baseline's steps of a device stage: torch.compile of the reference as its own request (taking turns
on a shared GPU), and the reference timed alone (split from engine/device_stage.py, which mixes them in).

Why apart: they concern the harness's own baseline, not the candidate's checks and timing, and they are what
``mkb baseline`` and ``--compile-baseline`` add to a candidate's device stage.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from multikernelbench.engine.fresh import FreshPlanner
from multikernelbench.engine.messages import BaselineCompiled, CompileBaseline, DeviceTurn, Time, Timed, TurnGranted
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import Status, TimingStats
from multikernelbench.wire import Series

if TYPE_CHECKING:
    from multikernelbench.backends.base import Backend
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.gpu_turns import Turns
    from multikernelbench.engine.reference import SeedSource
    from multikernelbench.engine.trace import Trace
    from multikernelbench.tasks.record import Task


class BaselineSteps:
    """Mixed into :class:`~multikernelbench.engine.device_stage.CandidateEvaluation`, which provides these."""

    config: EngineConfig
    backend: Backend
    task: Task
    seeds: SeedSource
    trace: Trace
    who: str
    shares_device: bool
    _turn_held: bool
    turns: Turns

    def _session(self, load: bool = True) -> WorkerSession:
        raise NotImplementedError

    def _roofline(self, on_cpu: bool, median_ms: float) -> float | None:
        raise NotImplementedError

    def _time_reference(self, session: WorkerSession, out: DeviceOutcome, weight_seed: int, shape: dict,
                        compiled: bool, planner: FreshPlanner) -> None:
        """The suite baseline: the reference (and its torch.compile form) timed alone, by the same timer on
        the same fresh inputs as candidates are; the roofline fraction is the eager reference's."""
        cfg = self.config
        on_cpu = self.backend.times_on_cpu_shape
        reply, _ = session.call(
            Time(shape=shape, weight_seed=weight_seed, timing=asdict(cfg.timing), compiled=compiled,
                 reference_only=True),
            timeout=cfg.run_timeout_s + 4 * cfg.timing.budget_s, what=f"timing the reference on shape {shape}",
            expect=Timed, on_fresh=planner.answer)
        stats = {name: TimingStats(**st) for name, st in reply.stats.items()}
        out.timing_shape = dict(shape)
        out.eager_timing = stats[Series.EAGER]
        out.compile_timing = stats.get(Series.COMPILED)
        out.roofline_fraction = self._roofline(on_cpu, out.eager_timing.median_ms)

    def _compile_baseline(self, session: WorkerSession, out: DeviceOutcome, shape: dict,
                          weight_seed: int) -> tuple[WorkerSession, bool]:
        """torch.compile of the reference, as its own request. The harness's baseline failing is not the
        candidate's failure: the result is flagged and timed against eager alone (in a fresh worker, with the
        candidate loaded again, when the compile had to be killed). Evidence of the candidate's own doing in
        the reply is still judged."""
        cfg = self.config
        try:
            try:
                reply, _ = session.call(CompileBaseline(shape=shape, weight_seed=weight_seed,
                                                        seed=self.seeds.next("compile", self.task.id),
                                                        take_turns=self.shares_device),
                                        timeout=cfg.timing.compile_baseline_timeout_s,
                                        what="compiling the torch.compile baseline", expect=BaselineCompiled,
                                        on_turn=self._turn if self.shares_device else None)
            finally:
                if self._turn_held:  # whatever the worker did, the GPU is free again when its request ends
                    self._turn_held = False
                    self.turns.release_exclusive()
            if reply.torch_rebinds:
                out.flags.append(Flag(FlagKind.BASELINE_TORCH_REBOUND,
                                      "torch API rebound while the baseline compiled (not judged): "
                                      + ", ".join(reply.torch_rebinds[:20])))
            return session, True
        except Verdict as v:
            if v.status == Status.CHEAT_DETECTED:
                raise
            out.flags.append(Flag(FlagKind.NO_COMPILE_BASELINE,
                                  f"no torch.compile baseline: {v.status.value}: {v.message[:2000]}"))
            if v.status in (Status.TIMEOUT, Status.CRASH):  # the worker is gone: a fresh one for timing
                session = self._session()
            return session, False

    def _turn(self, ask: DeviceTurn) -> TurnGranted:
        """The worker's GPU steps inside its compile request take the GPU's exclusive turn (worker side:
        engine/device_turns.py): the compiled graph's first call autotunes, and autotuning is a clock (its
        choice of kernel is what the compile baseline is timed with)."""
        if ask.take and not self._turn_held:
            self.turns.acquire_exclusive(self)
            self._turn_held = True
            self.trace(self.who, "device turn taken")
        elif not ask.take and self._turn_held:
            self.trace(self.who, "device turn given back")  # before the release: the trace stays ordered
            self._turn_held = False
            self.turns.release_exclusive()
        return TurnGranted()
