"""``mkb report`` against a baseline: the SOL table and its per-category means (hand-computed), the hardware of
each side, stale / missing / failed baseline rows, the roofline scatter, and the packaged default baseline.

The store is a real SQLite results store written through :class:`ResultStore`; the baseline is a small JSONL
file in the format of ``mkb baseline``. Results are on "NVIDIA H200" (a device with a committed peak table,
so results there can carry roofline fractions) and on a CPU name with none.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest

from multikernelbench.baselines import DEFAULT_BASELINE, Match, load_baseline, parse_baseline
from multikernelbench.records import CorrectnessReport, EvalResult, Status
from multikernelbench.report import build_report_data, load_report_data
from multikernelbench.report.tables import baseline_table, sol_table
from multikernelbench.store import Label, ResultStore

REPO = Path(__file__).resolve().parents[1]
GPU = "NVIDIA H200"
SHAPE = {"batch": 8, "dim": 1024}


def _row(task_id, task_hash, fraction, eager_ms=1.0, **extra):
    row = {"task_id": task_id, "task_hash": task_hash, "backend": "cuda", "hardware": GPU, "dtype": "float32",
           "shape": SHAPE, "flops": 1, "bytes": 1, "eager": {"median_ms": eager_ms},
           "eager_roofline_fraction": fraction, "commit": "abc1234"}
    row.update(extra)
    return row


BASELINE_ROWS = [
    _row("activation.relu", "h-relu", 0.25),
    _row("activation.tanh", "h-tanh-OLD", 0.5),  # stale: the task changed since
    _row("reduce.sum_dim", "h-sum", 1.05),  # eager past the bound: degenerate
    _row("reduce.max_dim", "h-max", 0.1),
    {"task_id": "activation.gelu", "task_hash": "h-gelu", "backend": "cuda", "hardware": GPU,
     "error": "timeout: reference took too long"},  # not timed
]


def _result(task_id, model, index, correct, fraction=None, hardware=GPU, backend="cuda"):
    status = Status.CORRECT if correct else Status.INCORRECT
    return EvalResult(task_id=task_id, task_hash=f"h-{task_id.split('.')[1].split('_')[0]}", backend=backend,
                      candidate=f"{model}/{task_id}/{index}", code_hash=f"{model}-{backend}-{task_id}-{index}",
                      status=status, speedup=(fraction / 0.25) if correct and fraction else None,
                      roofline_fraction=fraction, timing_shape=dict(SHAPE) if correct else None,
                      hardware=hardware, correctness=CorrectnessReport(trials=2, passed=2 if correct else 0))


#: (task, [(correct, candidate roofline fraction)]) for model "m" on the GPU
GPU_SAMPLES = {
    "activation.relu": [(True, 0.5), (False, None)],  # b=0.25: 0.75 and 0 -> 0.375
    "activation.tanh": [(True, 0.4)],  # stale row: no SOL
    "activation.gelu": [(True, 0.3)],  # row not timed: no SOL
    "activation.silu": [(True, 0.3)],  # no row at all
    "reduce.sum_dim": [(True, 0.9)],  # degenerate
    "reduce.max_dim": [(True, 0.1 ** 0.25), (True, 1.2)],  # b=0.1: 0.875 and 1.0 (clamped) -> 0.9375
}


@pytest.fixture
def files(tmp_path):
    baseline = tmp_path / "baseline.jsonl"
    baseline.write_text("".join(json.dumps(r) + "\n" for r in BASELINE_ROWS))
    db = tmp_path / "results.sqlite"
    with ResultStore(db) as store:
        for tid, samples in GPU_SAMPLES.items():
            for i, (ok, f) in enumerate(samples):
                store.put(_result(tid, "m", i, ok, f), Label(model="m", sample_index=i))
        # the same model on a CPU host without a peak table: correct results have no roofline fraction
        for tid, oks in (("activation.relu", (True, False)), ("reduce.max_dim", (False, False))):
            for i, ok in enumerate(oks):
                r = _result(tid, "m", i, ok, None, hardware="AMD EPYC 7B13", backend="cpu")
                store.put(r, Label(model="m", sample_index=i))
        # another model timed on another shape than the baseline row: that row says nothing about it
        other = _result("activation.relu", "m2", 0, True, 0.5)
        other.timing_shape = {"batch": 2, "dim": 64}
        store.put(other, Label(model="m2", sample_index=0))
    return baseline, db


def test_baseline_reader_matches_by_task_hash(files):
    baseline = load_baseline(files[0])
    assert baseline.hardware == [GPU] and len(baseline.rows) == 5
    assert baseline.match("activation.relu", "h-relu")[0] is Match.OK
    assert baseline.match("activation.tanh", "h-tanh")[0] is Match.STALE
    assert baseline.match("activation.gelu", "h-gelu")[0] is Match.FAILED
    assert baseline.match("activation.silu", "h-silu") == (Match.MISSING, None)
    assert baseline.eager_fraction("activation.relu", "h-relu") == 0.25
    assert baseline.eager_fraction("activation.tanh", "h-tanh") is None
    assert baseline.rows["activation.relu"].bound_ms == pytest.approx(0.25)


def test_missing_fraction_comes_from_costs_and_the_peak_table():
    """A row without its fractions (older format) gets them from flops/bytes and the device's measured peaks:
    4215.28 GB/s copy bandwidth on the H200, so 4215.28e6 bytes take 1 ms."""
    peaks = json.loads((REPO / "multikernelbench" / "hardware" / "nvidia_h200.json").read_text())
    nbytes = int(peaks["copy_bandwidth_gbps"] * 1e6)
    row = _row("a.x", "h", None, eager_ms=4.0, bytes=nbytes, compiled={"median_ms": 2.0})
    del row["eager_roofline_fraction"]
    got = parse_baseline([json.dumps(row)]).rows["a.x"]
    assert got.eager_fraction == pytest.approx(0.25, rel=1e-6)
    assert got.compiled_fraction == pytest.approx(0.5, rel=1e-6)
    unknown = parse_baseline([json.dumps({**row, "hardware": "Some GPU"})]).rows["a.x"]
    assert unknown.eager_fraction is None  # no peak table: no fraction, rather than a guess


def test_later_line_replaces_earlier_and_bad_lines_are_errors():
    b = parse_baseline([json.dumps(_row("a.x", "h1", 0.2)), "", json.dumps(_row("a.x", "h2", 0.4))])
    assert b.rows["a.x"].task_hash == "h2" and b.rows["a.x"].eager_fraction == 0.4
    with pytest.raises(ValueError, match="f.jsonl:2"):
        parse_baseline([json.dumps(_row("a.x", "h1", 0.2)), "{not json"], source="f.jsonl")
    with pytest.raises(ValueError, match="task_id"):
        parse_baseline([json.dumps({"task_hash": "h"})])


def test_sol_scores_and_coverage(files):
    data = load_report_data(files[1], baseline=load_baseline(files[0]))
    gpu = data.find("m", "cuda")
    cpu = data.find("m", "cpu")
    s = gpu.scores
    assert s["sol_per_task"] == pytest.approx({"activation.relu": 0.375, "activation.tanh": None,
                                               "activation.gelu": None, "activation.silu": None,
                                               "reduce.sum_dim": None, "reduce.max_dim": 0.9375})
    assert s["sol_mean"] == pytest.approx((0.375 + 0.9375) / 2)
    assert s["per_category"]["activation"]["sol_mean"] == pytest.approx(0.375)
    assert s["per_category"]["reduce"]["sol_mean"] == pytest.approx(0.9375)
    assert (s["sol_tasks_degenerate"], s["sol_tasks_no_baseline"], s["sol_samples_above_bound"]) == (1, 3, 1)
    view = gpu.baseline
    assert view.matches == {Match.OK: 3, Match.STALE: 1, Match.FAILED: 1, Match.MISSING: 1}
    assert view.stale == ["activation.tanh"]
    assert sorted((p.task_id, p.baseline_fraction, p.best_fraction) for p in view.points) == [
        ("activation.relu", 0.25, 0.5), ("reduce.max_dim", 0.1, 1.2), ("reduce.sum_dim", 1.05, 0.9)]
    # a host without a peak table gets no SOL at all (not a 0 from the task where every sample was wrong)
    assert cpu.scores["sol_mean"] is None and cpu.scores["sol_num_tasks"] == 0 and not cpu.baseline.points
    assert cpu.scores["sol_tasks_no_baseline"] == 2
    shape = data.find("m2", "cuda").scores
    assert shape["sol_mean"] is None and shape["sol_tasks_no_baseline"] == 1


def test_tables_name_the_hardware_and_show_sol(files):
    data = load_report_data(files[1], baseline=load_baseline(files[0]))
    sol = sol_table(data)
    assert sol.columns == ["Model / platform", "all", "SOL tasks", "activation", "reduce"]
    rows = {r[0]: r[1:] for r in sol.rows}
    assert rows["m / cuda"] == [f"{(0.375 + 0.9375) / 2:.3f}", "2", "0.375", "0.938"]
    assert GPU in sol.note
    hw = {r[0]: r[1:] for r in baseline_table(data).rows}
    assert hw["m / cuda"] == [GPU, GPU, "6", "3", "1", "1", "1", "0", "2", "1", "1"]  # ..., not timed, suspect, SOL, ...
    # CPU results are never set against the GPU's baseline: no SOL row, no hardware row, a note saying why
    assert "m / cpu" not in rows and "m / cpu" not in hw
    assert not data.find("m", "cpu").baseline.matches
    assert any(n.startswith(f"m / cpu: no baseline file measured on AMD EPYC 7B13 (the baseline is {GPU}")
               for n in data.notes())
    assert any("stale for 1 task(s)" in n and "activation.tanh" in n for n in data.notes())
    assert any(n.startswith("m / cpu: no measured peak table for AMD EPYC 7B13") for n in data.notes())
    assert not any(n.startswith("m / cuda: no measured peak table") for n in data.notes())


@pytest.mark.slow
def test_cli_report_with_baseline_writes_sol_and_scatter(files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from multikernelbench.cli.main import main

    out = tmp_path / "rep"
    assert main(["report", "--db", str(files[1]), "--baseline", str(files[0]), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "### Speed-of-light score per category" in md and "### Hardware and baseline" in md
    assert f"measured on {GPU}, 5 task rows" in md
    assert (out / "plots" / "roofline_scatter.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'id="fig-roofline_scatter"' in (out / "report.html").read_text()
    out2 = tmp_path / "rep2"
    assert main(["report", "--db", str(files[1]), "--no-baseline", "--no-plots", "--out", str(out2)]) == 0
    assert "Speed-of-light" not in (out2 / "report.md").read_text()
    assert main(["report", "--db", str(files[1]), "--baseline", str(tmp_path / "nope.jsonl")]) == 1
    assert "nope.jsonl does not exist" in capsys.readouterr().err


def test_report_without_baseline_scores_no_sol(files):
    with ResultStore(files[1]) as store:
        data = build_report_data(list(store.labelled()))
    assert all(g.scores["sol_mean"] is None for g in data.groups)
    assert data.baseline is None and not any(g.baseline.matches for g in data.groups)


def test_default_baseline_is_package_data_and_the_only_copy():
    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "multikernelbench"]
    rel = DEFAULT_BASELINE.relative_to(REPO / "multikernelbench").as_posix()
    assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), f"{rel} is not in package-data"
    baseline = load_baseline()
    assert baseline.source == str(DEFAULT_BASELINE) and baseline.hardware == [GPU] and baseline.rows
    copies = [p for p in REPO.glob("benchmarks/**/*.jsonl") if "baseline" in p.name and "h200" in p.name]
    assert not copies, f"a second copy of the baseline: {copies}"
