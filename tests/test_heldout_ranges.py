"""SHAPE_RANGES (the task-format addition for fresh shapes), the held-out CLI and the report's suite vs
held-out table: cheap checks that need no generated set of 50."""

from __future__ import annotations

import json

import pytest

from multikernelbench.cli.main import main
from multikernelbench.records import CorrectnessReport, EvalResult, Status
from multikernelbench.report import build_report_data
from multikernelbench.report.tables import task_set_table
from multikernelbench.store import Label, ResultStore
from multikernelbench.tasks import load_suite
from multikernelbench.tasks.loader import TaskFormatError, tasks_from_source
from multikernelbench.tasks.ranges import RangeError, draw_shapes, parse_ranges, task_ranges

SHAPES = [{"batch": 3, "dim": 37}, {"batch": 16, "dim": 1000}, {"batch": 7, "dim": 4099}]


@pytest.mark.parametrize("decl, why", [
    ({"dim": (0, 10)}, "below 1"), ({"dim": (10, 5)}, "empty"), ({"dim": (1, 5000, 2)}, "outside"),
    ({"dim": (1, 100)}, "outside"), ({"nope": (1, 5)}, "does not have"), ({"dim": [1.0, 5.0]}, "ints"), ({}, "non-empty"),
])
def test_malformed_ranges_are_refused(decl, why):
    with pytest.raises(RangeError, match=why):
        parse_ranges(decl, SHAPES)


def test_drawn_shapes_lie_in_the_ranges_and_differ_from_the_test_shapes():
    ranges = parse_ranges({"batch": (1, 24), "dim": (5, 5000, 5)}, [{"batch": 3, "dim": 35}, {"batch": 1, "dim": 5}])
    shapes = draw_shapes(ranges, [{"batch": 3, "dim": 35, "eps": 1}], 50, seed=1)
    assert len(shapes) == 50 and all(s["eps"] == 1 for s in shapes)
    assert all(s["batch"] in ranges["batch"] and s["dim"] in ranges["dim"] for s in shapes)
    assert {"batch": 3, "dim": 35, "eps": 1} not in shapes
    assert draw_shapes(ranges, [{"batch": 3, "dim": 35}], 5, seed=1) == draw_shapes(ranges, [{"batch": 3, "dim": 35}], 5, seed=1)
    assert parse_ranges(None) is None


@pytest.mark.slow
def test_the_loader_rejects_a_task_whose_ranges_exclude_a_test_shape():
    (relu,) = load_suite(ids=["activation.relu"])
    assert task_ranges(relu) is not None
    bad = relu.source.replace('"dim": (1, 5000)', '"dim": (1, 999)')
    assert bad != relu.source
    with pytest.raises(TaskFormatError, match="outside SHAPE_RANGES"):
        tasks_from_source(bad, "activation", "relu")


@pytest.mark.slow
def test_several_suite_tasks_declare_ranges_and_the_rest_have_none():
    declared = [t.id for t in load_suite() if t.dtype == "float32" and task_ranges(t) is not None]
    assert len(declared) >= 5
    assert task_ranges(load_suite(ids=["activation.tanh"])[0]) is None


@pytest.mark.slow
def test_tasks_generate_writes_a_folder_every_command_reads(tmp_path, capsys):
    out = tmp_path / "set"
    assert main(["tasks", "generate", "--seed", "11", "--count", "2", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tasks"] == 2 and summary["drawn"] == 2 + summary["redrawn"]
    assert main(["tasks", "--tasks", str(out), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == summary["task_records"] and all(r["id"].startswith("heldout_") for r in rows)
    assert main(["prompt", "--tasks", str(out), rows[0]["id"], "--backend", "cpu", "--strategy", "zero_shot"]) == 0
    assert rows[0]["id"] in capsys.readouterr().out
    assert main(["tasks", "--tasks", "heldout-x"]) == 2  # a usage error, not a traceback


def test_report_separates_suite_from_heldout_results(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    cases = [("activation.relu", True), ("activation.tanh", True), ("heldout_conv.s1_0000_conv2d_gelu", False),
             ("heldout_gemm.s1_0001_linear_add", True)]
    for i, (tid, ok) in enumerate(cases):
        store.put(EvalResult(task_id=tid, task_hash="h", backend="cpu", candidate=f"c{i}", code_hash=f"k{i}",
                             status=Status.CORRECT if ok else Status.INCORRECT, speedup=1.5 if ok else None,
                             correctness=CorrectnessReport(trials=1, passed=int(ok))),
                  Label(model="m", sample_index=0, category=tid.split(".")[0]))
    data = build_report_data(list(store.labelled()))
    store.close()
    table = task_set_table(data)
    assert table is not None
    assert table.rows == [["m / cpu", "2", "100.0", "100.0", "2", "50.0", "50.0", "+50.0"]]
    suite_only = build_report_data([s for s in data.groups[0].group.tasks["activation.relu"]])
    assert task_set_table(suite_only) is None


@pytest.mark.slow
def test_dataset_build_publishes_a_heldout_config(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from multikernelbench.tasks import load_from_dataset
    from multikernelbench.tasks.heldout.sets import load_task_set

    assert main(["dataset", "build", "--out", str(tmp_path), "--no-package", "--heldout", "11:2"]) == 0
    assert "config heldout-11 (" in capsys.readouterr().out
    (folder,) = tmp_path.iterdir()
    card = (folder / "README.md").read_text()
    assert "config_name: heldout-11" in card
    (data,) = folder.glob("data/heldout-11-*.parquet")
    import pyarrow.parquet as pq

    got = load_from_dataset(pq.read_table(data))
    assert [t.id for t in got] == [t.id for t in load_task_set("heldout-11:2")]
