"""Typed result flags (multikernelbench/flags.py): every producer names its flag's kind, stored rows keep their
texts and read back with their kinds (also rows written before the kinds existed), and the callers that act
on a flag decide by its kind, not by the words its text begins with."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from multikernelbench.anticheat.clock_audit import AskLog
from multikernelbench.anticheat.timing_judge import INCONCLUSIVE, judge
from multikernelbench.anticheat.timing_records import CleanTiming, TimingEvidence
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.timing_verdict import apply_speed, withhold_if_inconclusive
from multikernelbench.flags import Flag, FlagKind, from_row, legacy_kind, to_row
from multikernelbench.records import EvalResult, Status, TimingStats
from multikernelbench.report.samples import reason_of
from multikernelbench.store import Label, ResultStore, StoredResult

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

#: One text of each kind, word for word as its producer writes it today (engine/*.py).
TODAY = {
    FlagKind.TIMING_UNAVAILABLE: "timing unavailable on this backend/device (correctness only)",
    FlagKind.CLOCK_RETIMED: "clock audit: the first timing showed work outside the timed call; timed again in a "
                            "fresh worker",
    FlagKind.CLOCK_RECALIBRATED: "clock audit: renewal judged against the clean worker recalibrated beside this "
                                 "timing (0.120 ms per call there, 0.100 ms at the run's first calibration)",
    FlagKind.CLOCK_INCONCLUSIVE: f"{INCONCLUSIVE}: x; the host had load 5 (factor 2.50), which can stretch an "
                                 "honest difference that far (largest excess 1.20x the quiet bound); no speedup "
                                 "is reported",
    FlagKind.IDLE_AUDIT_OFF: "no idle audit: the worker's threads' /proc/<pid>/task/*/schedstat could not be read",
    FlagKind.FRESH_INPUTS: "fresh inputs: 40 calls, 0.010 ms each outside the clock; 3 timed calls verified",
    FlagKind.FRESH_SHAPES: "fresh shapes: 3 passed",
    FlagKind.NO_CLEAN_REFERENCE: "no clean reference timing (crash): the speedup is taken against the reference "
                                 "in the candidate's worker, not cross-checked",
    FlagKind.REFERENCE_SLOWED: "reference slowed in the candidate's worker: eager 2.000 ms there, 1.000 ms in a "
                               "clean worker (2.00x, bound 1.30x); the speedup is taken against the clean reference",
    FlagKind.REFERENCE_DRIFT: "reference drifted 1.40x between the halves of its 20 samples (bound 1.25x): the "
                              "speedup is uncertain, see its interval",
    FlagKind.NO_COMPILE_BASELINE: "no torch.compile baseline: timeout: compiling took too long",
    FlagKind.BASELINE_TORCH_REBOUND: "torch API rebound while the baseline compiled (not judged): torch.add",
    FlagKind.REFERENCE_WARMUP_FAILED: "reference warm-up compile failed (boom); compiled in the device stage instead",
    FlagKind.REEVALUATED_ALONE: "ran out of device memory beside 3 other lane(s) (running on shape {}: CUDA out of "
                                "memory); this is its evaluation with the device to itself",
}


def _result(*flags: Flag, status: Status = Status.CORRECT) -> EvalResult:
    return EvalResult(task_id="activation.relu", task_hash="h", backend="cpu", candidate="c", code_hash="x",
                      status=status, flags=list(flags))


def _stats(median_ms: float) -> TimingStats:
    return TimingStats(median_ms, median_ms, median_ms, median_ms, 0.0, 20, 0.0, "m")


def test_every_kind_but_unknown_has_a_text_today():
    assert set(TODAY) == set(FlagKind) - {FlagKind.UNKNOWN}


def test_a_new_row_keeps_its_texts_and_stores_the_kinds_beside_them(tmp_path):
    flags = [Flag(k, t) for k, t in TODAY.items()]
    r = _result(*flags)
    row = json.loads(r.to_json())
    assert row["flags"] == list(TODAY.values())  # what the report, the scripts and the service's clients read
    assert row["flag_kinds"] == [k.value for k in TODAY]
    assert EvalResult.from_dict(row).flags == flags
    store = ResultStore(tmp_path / "r.sqlite")
    store.put(r)
    got = store.get("activation.relu", "h", "cpu", "", "x")
    assert got is not None and got.flags == flags


def test_a_row_as_the_code_before_kinds_wrote_it_reads_with_its_kinds():
    old = _result().to_dict()
    del old["flag_kinds"]
    old["flags"] = [*TODAY.values(), "suspicious speedup (a note no producer writes now)"]
    got = EvalResult.from_dict(json.loads(json.dumps(old))).flags
    assert [f.text for f in got] == old["flags"]
    assert [f.kind for f in got] == [*TODAY, FlagKind.UNKNOWN]
    older = {k: v for k, v in old.items() if k != "fresh_shapes_checked"}  # and one older than that field
    assert EvalResult.from_dict(older).fresh_shapes_checked == 3  # its fresh-shape flag answers, as before


def test_a_kind_this_version_does_not_know_keeps_its_text():
    got = from_row(["a note from a newer harness", "fresh inputs: 1 calls"], ["a_newer_kind", "fresh_inputs"])
    assert got == [Flag(FlagKind.UNKNOWN, "a note from a newer harness"),
                   Flag(FlagKind.FRESH_INPUTS, "fresh inputs: 1 calls")]
    assert from_row(None) == [] and to_row([]) == {"flags": [], "flag_kinds": []}
    assert from_row("fresh shapes: failed") == [Flag(FlagKind.FRESH_SHAPES, "fresh shapes: failed")]


def test_producers_name_the_kind_their_text_always_meant():
    """The legacy reader maps what today's producers write to the kinds they now name (so an old row and a new
    one of the same run read alike)."""
    out = DeviceOutcome()
    stats = {"candidate": _stats(1.0), "eager": _stats(2.0)}
    for clean, series in ((CleanTiming.failed("crash"), {"eager": [1.0] * 10 + [2.0] * 10}),
                          (CleanTiming(_stats(1.0), None), {})):
        evidence = TimingEvidence(AskLog(), stats, series, {}, [], clean=clean, drift_bound=1.25)
        apply_speed(evidence, judge(evidence), out)
    assert [f.kind for f in out.flags] == [FlagKind.NO_CLEAN_REFERENCE, FlagKind.REFERENCE_DRIFT,
                                           FlagKind.REFERENCE_SLOWED]
    assert all(legacy_kind(f.text) is f.kind for f in out.flags), out.flags
    assert all(legacy_kind(text) is kind for kind, text in TODAY.items())


def test_the_speedup_is_withheld_by_the_kind_not_the_words():
    def judged(flag: Flag) -> DeviceOutcome:
        out = DeviceOutcome(speedup=3.0, speedup_clean=3.0, speedup_low=2.5, speedup_high=3.5, flags=[flag])
        withhold_if_inconclusive(out)
        return out

    assert judged(Flag(FlagKind.CLOCK_INCONCLUSIVE, "reworded: load could explain it")).speedup is None
    assert judged(Flag(FlagKind.REFERENCE_DRIFT, f"{INCONCLUSIVE}: only the words")).speedup == 3.0


def _relu():
    from multikernelbench.tasks import load_task_file, suite_dir

    return load_task_file(suite_dir() / "activation" / "relu.py")[0]


def test_baseline_row_sorts_flags_by_kind():
    """``mkb baseline``'s line: the torch.compile failure goes to ``compile_error``, the run's routine notes
    (fresh inputs, the warm-up's fallback) are left out, every other flag is listed."""
    from multikernelbench.cli.baseline import row

    task = _relu()
    r = _result(Flag(FlagKind.NO_COMPILE_BASELINE, "the compile baseline failed (reworded)"),
                Flag(FlagKind.FRESH_INPUTS, "fresh inputs: 4 calls"),
                Flag(FlagKind.REFERENCE_WARMUP_FAILED, "warm-up fell back"),
                Flag(FlagKind.REFERENCE_DRIFT, "no torch.compile baseline: only the words"))
    r.eager_timing = _stats(1.0)
    out = row(task, r, on_cpu=True)
    assert out["compile_error"] == "the compile baseline failed (reworded)"
    assert out["flags"] == ["no torch.compile baseline: only the words"]
    quiet = row(task, _result(Flag(FlagKind.FRESH_INPUTS, "fresh inputs: 4 calls")), on_cpu=True)
    assert "flags" not in quiet and "compile_error" not in quiet


def test_report_reason_shows_the_texts():
    r = _result(Flag(FlagKind.FRESH_INPUTS, "fresh inputs: 4 calls"), Flag(FlagKind.REFERENCE_DRIFT, "drifted"))
    assert reason_of(StoredResult(Label(), r)) == "fresh inputs: 4 calls; drifted"


def test_summarize_eval_finds_the_fresh_inputs_note_in_new_and_old_rows(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("summarize_eval", SCRIPTS / "summarize_eval.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    new = _result(Flag(FlagKind.FRESH_INPUTS, "fresh inputs: 7 calls (new row)")).to_dict()
    old = {k: v for k, v in _result().to_dict().items() if k != "flag_kinds"}
    old["flags"] = ["fresh inputs: 9 calls (old row)"]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in (new, old)) + "\n")
    assert script.main([str(path)]) == 0
    printed = capsys.readouterr().out
    assert "fresh inputs: 7 calls (new row)" in printed and "fresh inputs: 9 calls (old row)" in printed
