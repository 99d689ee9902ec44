"""The ``evaluate`` module: its card's and its docstring's doctests, offline loading, agreement with the
library scorer after the Arrow round trip, and the executing mode's opt-in."""

from __future__ import annotations

import doctest
import random
import sys
import tempfile
from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")

from multikernelbench.scoring import compute_scores  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "metrics" / "mkb_speedup"


@pytest.fixture
def at_repo_root(monkeypatch):
    """The doctests load the metric by the path relative to the repository root, as the card shows."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("MKB_ALLOW_CODE_EXECUTION", raising=False)


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(METRIC_DIR))


@pytest.mark.slow
def test_card_doctests_pass(at_repo_root):
    result = doctest.testfile(str(METRIC_DIR / "README.md"), module_relative=False, verbose=False,
                              optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 15
    assert result.failed == 0


@pytest.mark.slow
def test_module_docstring_doctests_pass(at_repo_root, metric):
    module = sys.modules[type(metric).__module__]
    result = doctest.testmod(module, verbose=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5
    assert result.failed == 0


def test_card_has_required_sections():
    text = (METRIC_DIR / "README.md").read_text()
    for heading in ("## Description", "### Inputs", "### Output values", "### Examples",
                    "## Limitations and bias", "## Citation"):
        assert heading in text


@pytest.mark.slow
def test_module_matches_library_after_arrow_round_trip(metric):
    rng = random.Random(5)
    preds, cats = [], []
    for _ in range(12):
        task = []
        for _ in range(rng.randint(3, 5)):
            compiled = rng.random() < 0.8
            correct = compiled and rng.random() < 0.5
            task.append({"compiled": compiled, "correct": correct,
                         "speedup": rng.lognormvariate(0, 1) if correct else None})
        preds.append(task)
        cats.append(rng.choice(["activation", "reduce", "loss"]))
    refs = [f"task.{i}" for i in range(12)]
    got = metric.compute(predictions=preds, references=refs, k=[1, 3], alphas=[0.8, 1.0, 1.5], categories=cats)
    want = compute_scores(preds, refs, k=[1, 3], alphas=[0.8, 1.0, 1.5], categories=cats)
    assert got == want
    assert set(got) >= {"compilation@1", "pass@3", "speedup_1.5@3", "fast_0.8", "geomean_speedup", "num_tasks"}


@pytest.mark.slow
def test_module_defaults_are_k1_alpha1(metric):
    rec = {"compiled": True, "correct": True, "speedup": 1.0}
    got = metric.compute(predictions=[[rec]], references=["a"])
    assert {k for k in got if "@" in k or k.startswith("fast")} == {"compilation@1", "pass@1", "speedup_1.0@1",
                                                                      "fast_1.0"}
    assert got["speedup_1.0@1"] == 1.0  # >= alpha, not >


@pytest.mark.slow
def test_module_raises_on_too_few_samples(metric):
    rec = {"compiled": True, "correct": False, "speedup": None}
    with pytest.raises(ValueError, match="fewer than k=2"):
        metric.compute(predictions=[[rec, rec], [rec]], references=["a", "b"], k=[2])


@pytest.mark.slow
def test_executing_mode_refuses_without_opt_in(metric, monkeypatch):
    from multikernelbench.engine.runner import CodeExecutionNotAllowed

    monkeypatch.delenv("MKB_ALLOW_CODE_EXECUTION", raising=False)
    with pytest.raises(CodeExecutionNotAllowed, match="MKB_ALLOW_CODE_EXECUTION=1"):
        metric.compute(predictions=[["raise SystemExit('must never run')"]], references=["activation.relu"])


_RAISES_IN_FORWARD = '''
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("this candidate builds but fails at run time")
'''
_SYNTAX_ERROR = "def broken(:\n"


@pytest.mark.slow
def test_executing_mode_runs_the_engine_with_opt_in(metric):
    """Sources go through the engine and come back as records in task and sample order.

    Only outcomes that do not depend on timing or on the anti-cheat's judgement of plain-PyTorch code are
    used (a candidate that loads but raises, and a syntax error), so the test is fast and deterministic.
    """
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.sampling.evaluate import records_from_sources

    with tempfile.TemporaryDirectory() as tmp:
        config = EngineConfig(backend="cpu", build_root=Path(tmp), compile_workers=1, threads=1,
                              timing=TimingConfig(warmup=1, min_runs=3, max_runs=5, budget_s=1.0))
        sources = [[_RAISES_IN_FORWARD, _SYNTAX_ERROR], [_SYNTAX_ERROR, _RAISES_IN_FORWARD]]
        ids = ["activation.relu", "activation.tanh"]
        records = records_from_sources(sources, ids, allow_code_execution=True, config=config)
        assert [[r["compiled"] for r in task] for task in records] == [[True, False], [False, True]]
        assert not any(r["correct"] for task in records for r in task)
        got = metric.compute(predictions=[[_RAISES_IN_FORWARD, _SYNTAX_ERROR], [_SYNTAX_ERROR]],
                             references=ids, allow_code_execution=True, config=config)
    assert got["compilation@1"] == 0.25  # (1/2 + 0) / 2: per task, so sample order across tasks matters
    assert got["pass@1"] == 0.0 and got["num_samples"] == 3
    # per-sample details beside the scores, in task and sample order, saying why each sample failed
    details = got["details"]
    assert [[(d["task_id"], d["sample"]) for d in task] for task in details] == [
        [("activation.relu", 0), ("activation.relu", 1)], [("activation.tanh", 0)]]
    assert details[0][1]["status"] == "compile_error" and details[1][0]["status"] == "compile_error"
    assert details[0][0]["status"] == "runtime_error"
    assert "fails at run time" in details[0][0]["message"]


@pytest.mark.parametrize("record, field", [
    ({"correct": False}, "'compiled'"),
    ({"compiled": True, "correct": "yes"}, "'correct'"),
    ({"compiled": True, "correct": True, "speedup": "2x"}, "'speedup'"),
    ({"compiled": True, "correct": False, "speedups": 2.0}, "speedups"),
    (["not", "a", "record"], "expected a record dict"),
])
def test_malformed_records_name_the_field(metric, record, field):
    ok = {"compiled": True, "correct": False}
    with pytest.raises(ValueError, match=r"predictions\[1\]\[1\].*" + field):
        metric.compute(predictions=[[ok], [ok, record]], references=["a", "b"])


@pytest.mark.slow
def test_records_may_leave_out_the_optional_fields(metric):
    got = metric.compute(predictions=[[{"compiled": True, "correct": False},
                                       {"compiled": True, "correct": True, "speedup": 3.0}]], references=["a"])
    assert got["pass@1"] == 0.5 and got["geomean_speedup"] == pytest.approx(3.0)


def test_a_task_that_is_not_a_list_is_named(metric):
    with pytest.raises(ValueError, match=r"predictions\[0\]: expected the list"):
        metric.compute(predictions=[{"compiled": True, "correct": True}], references=["a"])


_WITHOUT_LIST = """
import sys
import datasets
if hasattr(datasets, "List"):
    del datasets.List  # datasets 3.x has no List feature type (it came with 4.0)
import evaluate
metric = evaluate.load(sys.argv[1])
rec = {"compiled": True, "correct": True, "speedup": 2.0}
print(metric.compute(predictions=[[rec]], references=["a"])["pass@1"])
"""


@pytest.mark.slow
def test_module_does_not_need_datasets_List(tmp_path):
    """pyproject allows datasets 3.x, which has no ``datasets.List``: the module must not touch it."""
    import os
    import subprocess

    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", _WITHOUT_LIST, str(METRIC_DIR)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "1.0"


@pytest.mark.slow
def test_folder_is_a_space_whose_widget_scores(metric):
    """The Space's files are there and consistent, and the data path of evaluate's Gradio widget (what app.py
    launches) scores a record typed into it; only the Gradio UI itself is not run here (no gradio installed)."""
    import ast

    import pandas as pd
    import yaml
    from evaluate.utils.gradio import infer_gradio_input_types, parse_gradio_data

    header = yaml.safe_load((METRIC_DIR / "README.md").read_text().split("---\n", 2)[1])
    assert header["sdk"] == "gradio" and header["app_file"] == "app.py" and "evaluate" in header["tags"]
    app = ast.parse((METRIC_DIR / "app.py").read_text())
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "launch_gradio_widget" for n in ast.walk(app))
    requirements = (METRIC_DIR / "requirements.txt").read_text().split()
    assert "multikernelbench[metrics]" in requirements
    names, types = zip(*metric.features[0].items(), strict=True)
    assert names == ("predictions", "references")
    table = pd.DataFrame({"predictions": ['[{"compiled": true, "correct": true, "speedup": 2.0}]'],
                          "references": ['"activation.relu"']})
    scores = metric.compute(**parse_gradio_data(table, infer_gradio_input_types(types)))
    assert scores["pass@1"] == 1.0 and scores["geomean_speedup"] == 2.0
