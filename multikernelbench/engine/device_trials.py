"""The correctness steps of a device stage: the task's trials (test shapes and secret seeds) and the fresh shapes,
each checked in the parent against the reference (split from engine/device_stage.py, which mixes them in).

Why apart: a trial's evidence (outputs read as raw bytes, compared here; inputs unchanged; aliasing; the
kernel probe) is the correctness verdict, separate from the timing's, and the confirming timing re-runs these
same steps in its fresh worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from multikernelbench.anticheat import judge
from multikernelbench.engine.checking import compare_outputs, inputs_unchanged
from multikernelbench.engine.messages import Check, Checked
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.raw_outputs import rebuild_check
from multikernelbench.engine.session import Verdict, WorkerSession
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import FailureKind, Status
from multikernelbench.wire import CheckPayload, Evidence

if TYPE_CHECKING:
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.reference import ReferenceService, SeedSource, TaskSeeds
    from multikernelbench.records import CorrectnessReport
    from multikernelbench.tasks.record import Task


class TrialSteps:
    """Mixed into :class:`~multikernelbench.engine.device_stage.CandidateEvaluation`, which provides these."""

    config: EngineConfig
    task: Task
    seeds: SeedSource
    refs: ReferenceService
    report: CorrectnessReport
    expect_probe: bool

    def _trials(self, session: WorkerSession, seeds: TaskSeeds) -> None:
        """The task's correctness trials (test shapes and secret seeds) in ``session``."""
        for k, (shape, seed) in enumerate(seeds.trials):
            self._trial(session, shape, seed, seeds.weight, first=k == 0)

    def _fresh_shapes(self, session: WorkerSession, out: DeviceOutcome, weight_seed: int) -> None:
        """``--fresh-shapes K``: the same trial on K shapes drawn this run from the task's declared ranges
        (never shown in a prompt), so a kernel specialised to the visible test shapes fails here."""
        if self.config.fresh_shapes <= 0:
            return
        trials = self.seeds.fresh_shape_trials(self.task, self.config.fresh_shapes)
        if trials is None:
            out.flags.append(Flag(FlagKind.FRESH_SHAPES,
                                  "fresh shapes: not checked (the task declares no SHAPE_RANGES)"))
            out.fresh_shapes_checked = 0
            return
        for shape, seed in trials:
            try:
                self._trial(session, shape, seed, weight_seed, first=False)
            except Verdict as v:
                out.flags.append(Flag(FlagKind.FRESH_SHAPES, "fresh shapes: failed"))
                v.message = f"on a fresh shape (drawn from the task's SHAPE_RANGES, not a test shape): {v.message}"
                raise
        out.flags.append(Flag(FlagKind.FRESH_SHAPES, f"fresh shapes: {len(trials)} passed"))
        out.fresh_shapes_checked = len(trials)

    def _fail(self, failure: FailureKind | None, message: str, shape: dict) -> Verdict:
        """An INCORRECT verdict on a correctness trial, recorded in the correctness report."""
        self.report.failure = failure
        self.report.failed_shape = dict(shape)
        return Verdict(Status.INCORRECT, message, failure)

    def _trial(self, session: WorkerSession, shape: dict, seed: int, weight_seed: int, first: bool) -> None:
        inputs = self.refs.inputs(self.task, shape, seed)
        expected = self.refs.expected(self.task, shape, seed, weight_seed)
        self.report.trials += 1
        reply, payload = session.call(Check(shape=shape, weight_seed=weight_seed, report_busy=first), inputs,
                                      timeout=self.config.run_timeout_s, what=f"running on shape {shape}",
                                      expect=Checked)
        got: CheckPayload = payload
        try:  # raw bytes read without a tensor op in the worker, rebuilt here (engine/raw_outputs.py)
            outputs, after = rebuild_check(got)
        except ValueError as exc:
            raise Verdict(Status.CHEAT_DETECTED, f"on shape {shape}: the worker's raw outputs are malformed "
                          f"({exc}; tampered with?)") from None
        outcome = compare_outputs(outputs, expected, self.task.atol, self.task.rtol, shape)
        self._track(outcome)
        if not outcome.ok:
            raise self._fail(outcome.failure, outcome.message, shape)
        ok, why = inputs_unchanged(inputs, after)
        if not ok:
            raise self._fail(FailureKind.INPUT_MODIFIED, f"{why} (shape {shape})", shape)
        self._judge_kernel(reply.evidence, f"on shape {shape}")
        if self.config.anticheat.runtime_checks:
            ref_aliases = self.refs.aliases(self.task, shape, seed, weight_seed)
            found = judge.alias_findings(reply.evidence.get("aliases", []), ref_aliases)
            if found:
                raise Verdict(Status.CHEAT_DETECTED, f"on shape {shape}: " + "; ".join(found))
        self.report.passed += 1

    def _judge_kernel(self, evidence: Evidence | None, where: str) -> None:
        found = judge.kernel_findings(evidence, self.config.anticheat, self.expect_probe)
        if found:
            raise Verdict(Status.CHEAT_DETECTED, f"{where}: " + "; ".join(found))

    def _track(self, outcome) -> None:
        self.report.max_abs_err = max(self.report.max_abs_err or 0.0, outcome.max_abs_err)
        self.report.max_rel_err = max(self.report.max_rel_err or 0.0, outcome.max_rel_err)
