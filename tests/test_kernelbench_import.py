"""KernelBench-format problems (tests/data/kernelbench_problems/, written here) imported and evaluated under both
policies through the real engine: real C++ build, real worker processes."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
import torch

from multikernelbench.records import EvalResult, Status

DATA = Path(__file__).resolve().parent / "data" / "kernelbench_problems"
RELU, LINEAR, EMBED, FIXED = ("byo.activation.relu_offset", "byo.matmul.linear_bias", "byo.index.embedding_gather",
                              "byo.fixed.fixed_tanh")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    from multikernelbench.tasks import load_suite
    from multikernelbench.tasks.kernelbench.importer import import_folder

    out = tmp_path_factory.mktemp("kb_tasks")
    rows = import_folder(DATA, out, prefix="byo", time_limit=120)
    return {r.task_id: r for r in rows}, {t.id: t for t in load_suite(out)}


@pytest.mark.slow
def test_import_table_ids_categories_and_flags(imported):
    rows, tasks = imported
    assert set(tasks) == {RELU, LINEAR, EMBED, FIXED}
    assert not rows["byo.fixed.not_a_problem"].imported and "no Model" in rows["byo.fixed.not_a_problem"].why
    for task_id in (RELU, LINEAR, EMBED):
        assert rows[task_id].derived_shapes >= 3 and not rows[task_id].flags, rows[task_id]
        bench = tasks[task_id].bench_shape
        for shape in tasks[task_id].test_shapes:  # smaller than the problem's own sizes, none larger
            assert all(shape[k] <= bench[k] for k in bench) and shape != bench
    assert rows[FIXED].flags and "tests run at the problem's own size" in rows[FIXED].flags[-1]
    assert tasks[LINEAR].category == "byo.matmul"
    assert tasks[LINEAR].description == "A linear layer with bias; the sizes are constructor arguments."
    source = (DATA / "matmul" / "linear_bias.py").read_text()
    import hashlib

    assert hashlib.sha256(source.encode()).hexdigest() in tasks[LINEAR].source  # the hash names the problem text


@pytest.mark.slow
def test_flops_and_bytes_match_the_hand_count(imported):
    _, tasks = imported
    t = tasks[LINEAR]
    b, i = t.bench_shape["batch_size"], t.bench_shape["in_features"]
    o = 2 * i  # out_features = in_features * 2, derived
    assert abs(t.flops - 2 * b * i * o) <= 0.01 * 2 * b * i * o
    assert t.bytes == 4 * (b * i + b * o + i * o + o)  # inputs + outputs + weight + bias at fp32
    e = tasks[EMBED].bench_shape
    ids, out = e["batch_size"] * e["seq_len"], e["batch_size"] * e["seq_len"] * e["embedding_dim"]
    assert tasks[EMBED].bytes == 8 * ids + 4 * (out + e["num_embeddings"] * e["embedding_dim"])


@pytest.mark.slow
def test_inputs_come_from_the_harness_generator(imported):
    from multikernelbench.tasks.module import make_inputs, materialize

    _, tasks = imported
    t = tasks[EMBED]
    mod = materialize(t)
    shape = t.test_shapes[0]
    state = torch.get_rng_state()
    a = make_inputs(mod, shape, 5, t.dtype)[0]
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG (model weights) is untouched
    torch.manual_seed(999)  # the global seed does not decide the inputs: the harness's seed does
    assert torch.equal(a, make_inputs(mod, shape, 5, t.dtype)[0])
    b = make_inputs(mod, shape, 6, t.dtype)[0]
    assert not torch.equal(a, b)
    assert a.dtype == torch.int64 and a.shape == (shape["batch_size"], shape["seq_len"])
    assert int(a.min()) >= 0 and int(a.max()) < shape["num_embeddings"]  # the scaled size reaches the draw


HEAD = "import torch\nimport torch.nn as nn\n"
CPP_RELU = HEAD + textwrap.dedent('''
    from torch.utils.cpp_extension import load_inline

    _ext = load_inline(name="byo_relu_offset", cpp_sources=r"""
    #include <torch/extension.h>
    torch::Tensor relu_offset(torch::Tensor x) {
        auto xc = x.contiguous();
        auto out = torch::empty_like(xc);
        const float* in = xc.data_ptr<float>();
        float* o = out.data_ptr<float>();
        for (int64_t i = 0; i < xc.numel(); ++i) { float v = in[i] + 0.25f; o[i] = v > 0.f ? v : 0.f; }
        return out;
    }
    """, functions=["relu_offset"], verbose=False)


    class ModelNew(nn.Module):
        def forward(self, x):
            return _ext.relu_offset(x)
    ''')

#: The same kernel built in ``__init__`` (common in this format): built before the first forward, so it passes.
CPP_RELU_IN_INIT = CPP_RELU.replace("_ext = load_inline(", "def _build():\n    return load_inline(").replace(
    'name="byo_relu_offset"', 'name="byo_relu_offset_init"').replace(
    "class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.relu_offset(x)",
    "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.ext = _build()\n\n"
    "    def forward(self, x):\n        return self.ext.relu_offset(x)")

#: The same kernel built at the first forward: refused (a process inside the timed call), with the advice.
CPP_RELU_IN_FORWARD = CPP_RELU.replace("_ext = load_inline(", "def _build():\n    return load_inline(").replace(
    'name="byo_relu_offset"', 'name="byo_relu_offset_fwd"').replace(
    "return _ext.relu_offset(x)", "return _build().relu_offset(x)")

#: label -> (task, source, status under mkb, status under kernelbench)
CASES = {
    "cpp_relu_built_in_forward": (RELU, CPP_RELU_IN_FORWARD, Status.RUNTIME_ERROR, Status.RUNTIME_ERROR),
    "cpp_relu": (RELU, CPP_RELU, Status.CORRECT, Status.CORRECT),
    "cpp_relu_built_in_init": (RELU, CPP_RELU_IN_INIT, Status.CORRECT, Status.CORRECT),
    "torch_relu": (RELU, HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n"
                               "        return torch.relu(x + 0.25)\n", Status.CHEAT_DETECTED, Status.CORRECT),
    "torch_relu_wrong": (RELU, HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n"
                                     "        return torch.relu(x + 0.3)\n", Status.CHEAT_DETECTED, Status.INCORRECT),
    "torch_linear_init_args": (LINEAR, HEAD + textwrap.dedent("""
        class ModelNew(nn.Module):
            def __init__(self, in_features, out_features):
                super().__init__()
                self.linear = nn.Linear(in_features, out_features)

            def forward(self, x):
                return torch.nn.functional.linear(x, self.linear.weight, self.linear.bias)
        """), Status.CHEAT_DETECTED, Status.CORRECT),
    "torch_embedding_int_inputs": (EMBED, HEAD + textwrap.dedent("""
        class ModelNew(nn.Module):
            def __init__(self, num_embeddings, embedding_dim):
                super().__init__()
                self.table = nn.Embedding(num_embeddings, embedding_dim)

            def forward(self, ids):
                return self.table.weight[ids] * 2.0
        """), Status.CHEAT_DETECTED, Status.CORRECT),
    # Other defences stay on under the kernelbench policy: work left running after forward returned.
    "torch_relu_background_thread": (RELU, HEAD + textwrap.dedent("""
        import threading
        import time

        class ModelNew(nn.Module):
            def forward(self, x):
                threading.Thread(target=time.sleep, args=(20,), daemon=True).start()
                return torch.relu(x + 0.25)
        """), Status.CHEAT_DETECTED, Status.CHEAT_DETECTED),
}


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["mkb", "kernelbench"])
def test_candidates_under_both_policies(imported, engine_config, tmp_path, policy):
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.store import ResultStore

    _, tasks = imported
    cands = [Candidate(task_id=task, source=src, label=label) for label, (task, src, _, _) in CASES.items()]
    cfg = engine_config(skip_timing=True, policy=policy)
    with ResultStore(tmp_path / "r.sqlite") as store:
        results = evaluate_candidates([tasks[c.task_id] for c in cands], cands, cfg, store=store)
        got = {c.label: r for c, r in zip(cands, results, strict=True)}
        wrong = {label: (got[label].status, got[label].message[:600]) for label, (_, _, want_mkb, want_kb)
                 in CASES.items() if got[label].status is not (want_mkb if policy == "mkb" else want_kb)}
        assert not wrong
        assert "ModelNew.__init__" in got["cpp_relu_built_in_forward"].message  # says how to write it
        for label in CASES:
            assert got[label].policy == policy
            assert store.get(got[label].task_id, got[label].task_hash, "cpu", got[label].hardware,
                             got[label].code_hash, policy) is not None
            other = "kernelbench" if policy == "mkb" else "mkb"  # never served to a run of the other policy
            assert store.get(got[label].task_id, got[label].task_hash, "cpu", got[label].hardware,
                             got[label].code_hash, other) is None


def test_old_store_migrates_and_policies_stay_apart(tmp_path):
    from multikernelbench.report.policy_compare import compare
    from multikernelbench.store import Label, ResultStore

    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""CREATE TABLE results (task_id TEXT NOT NULL, task_hash TEXT NOT NULL, backend TEXT NOT NULL,
        hardware TEXT NOT NULL, code_hash TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL,
        created REAL NOT NULL, sandbox TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (task_id, task_hash, backend, hardware, code_hash));""")
    old = EvalResult(task_id="a.b", task_hash="h", backend="cpu", candidate="c", code_hash="x",
                     status=Status.CHEAT_DETECTED, message="forward calls library compute op(s) aten::relu").to_dict()
    old.pop("policy")
    con.execute("INSERT INTO results VALUES (?,?,?,?,?,?,?,?,?)",
                ("a.b", "h", "cpu", "", "x", "cheat_detected", json.dumps(old), 0.0, ""))
    con.commit()
    con.close()
    with ResultStore(db) as store:
        (got,) = list(store.results())
        assert got.policy == "mkb" and store.get("a.b", "h", "cpu", "", "x", "mkb") is not None
        kb = EvalResult(task_id="a.b", task_hash="h", backend="cpu", candidate="c", code_hash="x",
                        status=Status.CORRECT, policy="kernelbench")
        store.put(kb, Label("m"))
        store.put_label(got, Label("m"))
        assert store.get("a.b", "h", "cpu", "", "x", "mkb").status is Status.CHEAT_DETECTED  # not replaced
        assert store.get("a.b", "h", "cpu", "", "x", "kernelbench").status is Status.CORRECT
        pairs, diffs, _ = compare(store.labelled())
    assert pairs == 1 and [(d.task_id, d.mkb, d.kernelbench) for d in diffs] == \
        [("a.b", "cheat_detected", "correct")]
    assert "aten::relu" in diffs[0].why


def test_kernelbench_task_set_names_a_missing_folder(tmp_path):
    from multikernelbench.tasks.heldout.sets import TaskSetError, load_task_set

    with pytest.raises(TaskSetError, match="no such KernelBench-format folder"):
        load_task_set(f"kernelbench:{tmp_path / 'absent'}")
