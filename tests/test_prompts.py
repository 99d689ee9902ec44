"""Prompts for every task x backend x strategy: the contract is stated, test shapes and seeds never leak."""

from __future__ import annotations

import json

import pytest

from multikernelbench.prompts import build_prompt, contract_backends, get_contract, strategy_names, task_view
from multikernelbench.prompts.exemplars import BACKENDS, CATEGORIES
from multikernelbench.tasks import load_suite


@pytest.fixture(scope="module")
def tasks():
    return load_suite()


def test_registries_cover_backends_and_strategies():
    assert set(BACKENDS) <= set(contract_backends())
    assert {"zero_shot", "one_shot", "category_shot"} <= set(strategy_names())


@pytest.mark.slow
def test_every_task_backend_strategy_builds_a_clean_prompt(tasks):
    for task in tasks:
        hidden = [json.dumps(s, sort_keys=True) for s in task.test_shapes]
        for backend in BACKENDS:
            for strategy in strategy_names():
                p = build_prompt(task, backend, strategy)
                text = p.text()
                assert p.messages[0]["role"] == "system" and p.messages[-1]["role"] == "user"
                assert "class ModelNew(nn.Module)" in text and f"`{task.id}`" in text
                for name in ("TEST_SHAPES", "SEEDS_PER_SHAPE", "def flops", "def bytes_moved", "manual_seed(1"):
                    assert name not in text, (task.id, backend, strategy, name)
                for shape in hidden:  # the timed shape shown is never a correctness shape
                    assert shape not in text, (task.id, backend, strategy, shape)
                if strategy == "zero_shot":
                    assert p.exemplar is None and "## Example" not in text
                elif strategy == "one_shot":
                    assert p.exemplar == f"generic/{backend}"
                elif strategy == "category_shot":
                    want = task.category if task.category in CATEGORIES else "generic"
                    assert p.exemplar == f"{want}/{backend}"


def test_task_view_keeps_the_reference_and_drops_hidden_names():
    src = '''"""Doc."""
import torch.nn as nn

TEST_SHAPES = [{"n": 37}]
# Long sums: rounding.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def forward(self, x):
        return x


def _out(shape):
    return shape["n"]


def _used(shape):
    return shape["n"] + 1


def get_inputs(shape, gen):
    return [_used(shape)]


def flops(shape):
    return _out(shape)
'''
    view = task_view(src)
    assert "class Model" in view and "def get_inputs" in view and "def _used" in view
    for gone in ("TEST_SHAPES", "TOLERANCE", "Long sums", "def flops", "def _out", "37"):
        assert gone not in view, gone


@pytest.mark.slow
def test_contract_states_platform_rules():
    for backend in BACKENDS:
        c = get_contract(backend)
        assert c.language and c.build and c.not_allowed
    p = build_prompt(load_suite(ids=["activation.relu"])[0], "pallas", "category_shot").text()
    assert "dlpack" in p and "power-of-2" in p and "interpret" in p


@pytest.mark.slow
def test_bf16_prompt_states_dtype(tasks):
    bf16 = [t for t in tasks if t.dtype == "bfloat16"][:1]
    if not bf16:
        pytest.skip("no bf16 tasks")
    text = build_prompt(bf16[0], "cuda", "zero_shot").text()
    assert "bfloat16" in text and "atol=0.02" in text


@pytest.mark.slow
def test_mkb_prompt_cli(capsys):
    from multikernelbench.cli.main import main

    assert main(["prompt", "reduce.sum_dim", "--backend", "cpu", "--strategy", "category_shot"]) == 0
    out = capsys.readouterr().out
    assert "=== user ===" in out and "row_sum_forward" in out  # the reduce exemplar is shown
    assert main(["prompt", "reduce.sum_dim", "--backend", "triton", "--strategy", "one_shot", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exemplar"] == "generic/triton" and data["messages"][1]["role"] == "user"


def test_refinement_feedback_is_chosen_by_typed_status():
    from multikernelbench.prompts.feedback import feedback_message, summary_status
    from multikernelbench.records import Status

    assert summary_status({"status": "incorrect"}) is Status.INCORRECT
    assert summary_status({"status": "no_code"}) is None and summary_status(None) is None
    mismatch = feedback_message({"status": Status.INCORRECT.value, "failed_shape": {"n": 3}, "max_abs_err": 0.5})
    assert "does not match" in mismatch and '{"n": 3}' in mismatch and "Fix the problem" in mismatch
    correct = feedback_message({"status": Status.CORRECT.value, "speedup": 2.0})
    assert "It is correct" in correct and "2x" in correct and "Fix the problem" not in correct
    assert "failed to build" in feedback_message({"status": "compile_error", "message": "error: x"})
    unknown = feedback_message({"status": "no_code", "message": "?"})  # falls back to the runtime message
    assert "raised an error" in unknown and "Fix the problem" in unknown
