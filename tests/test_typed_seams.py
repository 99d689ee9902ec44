"""The engine's typed seams (issue 29): the reuse decision reads a typed field (old stores still answer as they
did), stage outcomes become a record in one place, and the timing-series names keep their wire values."""

from __future__ import annotations

import json

from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.outcomes import BuildOutcome, DeviceOutcome, HarnessError, Skipped, record
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import EvalResult, FailureKind, Status, TimingStats
from multikernelbench.store import ResultStore
from multikernelbench.wire import REFERENCE, Series


def _blank(**kw) -> EvalResult:
    return EvalResult(task_id="t", task_hash="h", backend="cpu", candidate="c", code_hash="x",
                      status=Status.RUNTIME_ERROR, message="harness: evaluation did not finish", **kw)


def test_old_records_keep_their_fresh_shape_answer():
    """A record stored before ``fresh_shapes_checked`` existed says it through its flag; it loads with the field
    derived, so ``--fresh-shapes`` reuses exactly the records it reused before."""
    base = _blank().to_dict()
    del base["fresh_shapes_checked"]
    cases = {"fresh shapes: 3 passed": 3, "fresh shapes: not checked (the task declares no SHAPE_RANGES)": 0,
             "fresh shapes: failed": 0, "suspicious speedup": None}
    for flag, want in cases.items():
        old = {**base, "status": "correct", "flags": ["x", flag]}
        assert EvalResult.from_dict(old).fresh_shapes_checked == want, flag
    assert EvalResult.from_dict({**base, "flags": []}).fresh_shapes_checked is None
    new = {**base, "fresh_shapes_checked": 2, "flags": []}  # the field wins over (absent) text
    assert EvalResult.from_dict(json.loads(json.dumps(new))).fresh_shapes_checked == 2


def test_reuse_reads_the_field_not_the_flag(tmp_path):
    from multikernelbench.engine.runner import Runner

    runner = Runner.__new__(Runner)  # _reusable reads only the config: no backend or sandbox needed
    runner.config = EngineConfig(fresh_shapes=2)
    checked = _blank(fresh_shapes_checked=2)
    checked.status = Status.CORRECT
    unchecked = _blank(flags=[Flag(FlagKind.FRESH_SHAPES, "fresh shapes: 2 passed")])  # the flag alone no longer decides
    unchecked.status = Status.CORRECT
    assert runner._reusable(checked) and not runner._reusable(unchecked)
    runner.config = EngineConfig(fresh_shapes=0)
    assert runner._reusable(unchecked)
    store = ResultStore(str(tmp_path / "r.sqlite"))  # the field survives the store
    store.put(checked)
    got = store.get("t", "h", "cpu", "", "x")
    assert got is not None and got.fresh_shapes_checked == 2


def test_outcomes_become_one_record():
    r = _blank()
    warm, timed = Flag(FlagKind.REFERENCE_WARMUP_FAILED, "warm"), Flag(FlagKind.FRESH_INPUTS, "timed")
    record(r, BuildOutcome(True, compile_time_s=1.5, stdout="built", flags=[warm]))
    assert r.status == Status.RUNTIME_ERROR and r.compile_time_s == 1.5 and r.stdout == "built"
    t = TimingStats(1.0, 1.0, 1.0, 1.0, 0.0, 5, 0.0, "m")
    dev = DeviceOutcome(Status.CHEAT_DETECTED, "caught after timing", candidate_timing=t, speedup=9.0,
                        fresh_shapes_checked=2, flags=[timed])
    record(r, dev)
    assert (r.status, r.message, r.speedup, r.candidate_timing) == (Status.CHEAT_DETECTED, "caught after timing",
                                                                    9.0, t)
    assert r.flags == [warm, timed] and r.stdout == "built" and r.fresh_shapes_checked == 2
    r2 = record(_blank(), BuildOutcome(False, Status.COMPILE_ERROR, FailureKind.EXCEPTION, "no", stdout="log"))
    assert (r2.status, r2.failure, r2.message, r2.stdout) == (Status.COMPILE_ERROR, FailureKind.EXCEPTION, "no", "log")
    partial = Flag(FlagKind.FRESH_SHAPES, "partial")
    r3 = record(_blank(), HarnessError("harness error while evaluating: boom", DeviceOutcome(flags=[partial])))
    assert r3.status == Status.RUNTIME_ERROR and r3.message.endswith("boom") and r3.flags == [partial]
    r4 = record(_blank(), Skipped("not started"))
    assert r4.status == Status.RUNTIME_ERROR and r4.message == "not started"


def test_series_names_on_the_wire():
    assert [s.value for s in Series] == ["candidate", "eager", "compiled"] and REFERENCE is Series.EAGER
    assert json.loads(json.dumps({Series.CANDIDATE: [Series.EAGER]})) == {"candidate": ["eager"]}
    assert {"candidate": 1}[Series.CANDIDATE] == 1 and f"{Series.COMPILED}" == "compiled"
