"""engine/verify_ahead.py: the verified timed calls' reference computed once the timing loop has ended, while the
worker finishes its request (issue #44), must give the verdicts the plain verification gives.

Real objects throughout: the parent's ReferenceService on the CPU, the FreshPlanner answering the worker's requests
in the loop's order, the worker-side raw-output reader for the outputs it sends back (honest ones, and one scaled
by 1 % on a single verified call)."""

from __future__ import annotations

import pytest
import torch

from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.fresh import FreshPlanner
from multikernelbench.engine.messages import FreshAsk, Timed
from multikernelbench.engine.raw_outputs import read_raw
from multikernelbench.engine.reference import ReferenceService
from multikernelbench.engine.session import Verdict
from multikernelbench.engine.timed_outputs import expected_sample, verify_timed
from multikernelbench.engine.verify_ahead import VerifyAhead
from multikernelbench.records import Status
from multikernelbench.timing.config import TimingConfig
from multikernelbench.wire import Series

SHAPE = {"batch": 16, "dim": 1000}
WEIGHT_SEED = 3


def _timed_run(task, refs: ReferenceService, cfg: EngineConfig, ahead: VerifyAhead | None, wrong_call: int = -1):
    """A worker's requests for one candidate and its reference, 4 samples each, then the final call; the outputs
    it sends are the reference's for the granted seeds (``wrong_call``: that candidate sample's scaled by 1.01).
    Returns the planner, what was computed ahead when the reply came, and the number of reference forwards
    that the plain verification then ran."""
    planner = FreshPlanner(TimingConfig(verify_fraction=1.0), positions=cfg.timed_check_positions,
                           edge=cfg.timed_check_edge)
    answer = planner.answer if ahead is None else ahead.handler(planner.answer, planner.checks)
    outputs: dict[str, list[torch.Tensor]] = {}
    calls = 0

    def ask(fn: str, n: int, phase: str, wrong: bool = False) -> None:
        nonlocal calls
        grant = answer(FreshAsk(fn=fn, calls=n, phase=phase), None)
        if grant.verify:  # the worker sends the wanted held outputs with its next request; here at once
            planner.take([[read_raw(outputs[fn][int(slot)], 0)] for slot, *_ in grant.verify])
        if n:  # the call on the granted seed, its output held
            out = refs.fresh_outputs(task, SHAPE, grant.seeds[0], WEIGHT_SEED)[0]
            outputs[fn] = [out * 1.01 if wrong else out]
            calls += 1

    for k in range(4):
        ask(Series.CANDIDATE, 1, "sample", wrong=k == wrong_call)
        ask(Series.EAGER, 1, "sample")
    ask(Series.CANDIDATE, 1, "final")  # the observed call
    ask(Series.CANDIDATE, 0, "final")
    ask(Series.EAGER, 0, "final")
    known = ahead.join() if ahead is not None else None
    before = refs.computed
    reply = Timed(stats={}, wall_ms=1.0, verified_meta=[], fresh_calls=calls, fresh_ms=0.0)
    try:
        verify_timed(planner, reply, None, refs, task, SHAPE, WEIGHT_SEED, cfg, known)
        verdict = None
    except Verdict as v:
        verdict = (v.status, v.message)
    return planner, known, refs.computed - before, verdict


@pytest.mark.parametrize("wrong_call", [-1, 2])
def test_expected_samples_computed_ahead_give_the_verdict_of_the_plain_verification(suite, wrong_call):
    task, cfg = suite["activation.relu"], EngineConfig()
    refs = ReferenceService("cpu")
    plain, _, plain_forwards, plain_verdict = _timed_run(task, refs, cfg, None, wrong_call)
    ahead = VerifyAhead(lambda check: expected_sample(check, refs, task, SHAPE, WEIGHT_SEED, cfg))
    planner, known, after_reply, verdict = _timed_run(task, refs, cfg, ahead, wrong_call)
    assert len(planner.checks) == len(plain.checks) >= 4
    # Every check granted by the first final request was computed before the reply; only the final call's own
    # (granted by the last requests) is left for after it.
    assert known is not None and len(known) >= len(planner.checks) - 1, (len(known or {}), len(planner.checks))
    assert (verdict is None) == (plain_verdict is None)
    if wrong_call >= 0:  # found at the wrong call's check, one computed ahead: nothing computed after the reply
        assert verdict is not None and verdict[0] == Status.INCORRECT and "timed run is wrong" in verdict[1]
        assert plain_verdict is not None and plain_verdict[0] == Status.INCORRECT and after_reply == 0
    else:
        assert verdict is None
        assert after_reply == len(planner.checks) - len(known) < plain_forwards


def test_nothing_is_computed_before_the_loop_has_ended(suite):
    """Samples' requests never start the computation (it would run on the GPU beside the clock): only a
    ``final`` one does."""
    task, cfg = suite["activation.relu"], EngineConfig()
    refs = ReferenceService("cpu")
    ahead = VerifyAhead(lambda check: expected_sample(check, refs, task, SHAPE, WEIGHT_SEED, cfg))
    planner = FreshPlanner(TimingConfig(verify_fraction=1.0))
    answer = ahead.handler(planner.answer, planner.checks)
    for phase in ("warmup", "plan", "sample", "sample"):
        answer(FreshAsk(fn=Series.CANDIDATE, calls=1, phase=phase), None)
    assert ahead.join() == {} and refs.computed == 0
