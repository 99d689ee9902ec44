"""The parent's side of a Time request's fresh inputs: stamping each request on its own clock, and checking the
outputs of the timed calls it chose to verify (split from engine/device_stage.py).

Why here and not in the worker: the seeds of a timed call's fresh inputs and the positions of its output that
are compared are the parent's secrets, and the expected values are computed on the parent's device after the
worker has finished timing, so nothing a candidate does during timing can see or shape them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from multikernelbench.anticheat.clock_audit import AskLog
from multikernelbench.engine.checking import compare_outputs, meta_mismatch
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.fresh import FreshPlanner, TimedCheck
from multikernelbench.engine.messages import FreshAsk, FreshGrant, Timed
from multikernelbench.engine.raw_outputs import secret_positions, values_at
from multikernelbench.engine.reference import ReferenceService
from multikernelbench.engine.session import Verdict
from multikernelbench.records import FailureKind, Status
from multikernelbench.tasks.record import Task
from multikernelbench.wire import TimedPayload


def logged(log: AskLog, planner: FreshPlanner) -> Callable[[FreshAsk, Any], FreshGrant]:
    """The FreshAsk handler of a Time request: stamp the request with the parent's clock, then answer it (and
    sample the raw outputs it carries)."""

    def answer(ask: FreshAsk, raws: Any = None) -> FreshGrant:
        log.record(ask)
        grant = planner.answer(ask, raws)
        log.answered()  # the worker waited on this much of the parent (anticheat/sched_idle.py)
        return grant

    return answer


@dataclass
class ExpectedSample:
    """One verified call's expected outputs as the comparison needs them: each output's shape and dtype (a tensor on
    the meta device, no memory) and its values at the call's secret positions; the full outputs are dropped."""

    shapes: list[torch.Tensor]
    values: list[torch.Tensor]
    sampled: bool  # some output was larger than the positions' limit (only a sample of it is compared)


def expected_sample(check: TimedCheck, refs: ReferenceService, task: Task, shape: dict, weight_seed: int,
                    cfg: EngineConfig) -> ExpectedSample:
    """The reference for ``check``'s fresh seed, computed on the parent's device and sampled at its positions."""
    expected = refs.fresh_outputs(task, shape, check.seed, weight_seed)
    limit = cfg.timed_check_positions + 2 * cfg.timed_check_edge
    positions = secret_positions(check.positions_seed, cfg.timed_check_positions, cfg.timed_check_edge)
    return ExpectedSample([torch.empty(e.shape, dtype=e.dtype, device="meta") for e in expected],
                          [values_at(e, positions, limit) for e in expected], any(e.numel() > limit for e in expected))


def verify_timed(planner: FreshPlanner, reply: Timed, payload: TimedPayload | None, refs: ReferenceService,
                 task: Task, shape: dict, weight_seed: int, cfg: EngineConfig,
                 ahead: dict[int, ExpectedSample] | None = None) -> None:
    """Compare the sampled outputs of the verified timed calls with the reference for the same fresh seeds,
    computed now on the parent's device (never while the worker was timing). ``ahead``: the expected samples of
    ``planner.checks[i]`` already computed after the timing loop ended (engine/verify_ahead.py); the rest now."""
    timed: TimedPayload | None = payload if isinstance(payload, dict) else None
    planner.take(timed.get("verified") if timed else None)  # the last raw outputs came with the reply
    missing = sum(c.values is None for c in planner.checks)
    if planner.errors or missing:
        raise Verdict(Status.CHEAT_DETECTED, f"the worker's raw timed outputs: {missing} of {len(planner.checks)} "
                      f"verified call(s) missing{'; ' if planner.errors else ''}{'; '.join(planner.errors[:3])} "
                      "(tampered with?)")
    for i, check in enumerate(planner.checks):
        values, meta = check.values or [], check.meta or []
        known = (ahead or {}).get(i)
        expected = known if known is not None else expected_sample(check, refs, task, shape, weight_seed, cfg)
        message = meta_mismatch(meta, expected.shapes)
        if message is None:  # the same secret positions, drawn in this process, on both sides
            outcome = compare_outputs(values, expected.values, task.atol, task.rtol, shape)
            if outcome.ok:
                continue
            message = outcome.message
            if expected.sampled:
                message += " (flat positions of a sample of the output)"
        raise Verdict(Status.INCORRECT, f"output of a timed run is wrong (fresh inputs, verified after the "
                      f"call): {message}", FailureKind.TIMED_OUTPUT_MISMATCH)
