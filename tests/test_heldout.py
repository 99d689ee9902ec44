"""Held-out tasks (issue #16): a generated set is deterministic, gated, deduplicated, costed right, and its
references pass the engine's self-check on the CPU backend; ``--fresh-shapes`` catches a shape-specialised
candidate that the test shapes let through.

Cost on 2 cores: generating 50 tasks twice (~2 min; the suite's graph signatures are traced once and cached),
the gates again on the written files, and one engine run over all references with two compile and two
device workers.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.flags import Flag, FlagKind
from multikernelbench.records import Status
from multikernelbench.tasks import load_suite
from multikernelbench.tasks.gates import check_task
from multikernelbench.tasks.heldout.generate import generate, write
from multikernelbench.tasks.heldout.signature import graph_signature, signatures
from multikernelbench.tasks.loader import tasks_from_source
from multikernelbench.tasks.module import make_inputs, make_model, materialize

pytestmark = pytest.mark.slow

SEED, COUNT = 2026, 50
SELF_CHECK_SUFFIX = "\n\n# self-check: the reference itself, as a candidate\nclass ModelNew(Model):\n    pass\n"


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The set written twice by two independent generation runs; (report, folder, tasks)."""
    a, b = tmp_path_factory.mktemp("heldout-a"), tmp_path_factory.mktemp("heldout-b")
    report = generate(SEED, COUNT)
    write(report, a)
    write(generate(SEED, COUNT), b)
    return report, a, b, load_suite(a)


def test_fifty_tasks_byte_identical_across_runs(generated):
    report, a, b, tasks = generated
    assert len(report.tasks) == COUNT
    assert len({t.name for t in report.tasks}) == COUNT
    assert _digest(a) == _digest(b)
    assert len(list(a.glob("heldout_*/*.py"))) == COUNT


def test_every_generated_task_passes_the_gates(generated):
    _, _, _, tasks = generated
    failing = {t.id: problems for t in tasks if (problems := check_task(t))}
    assert not failing


def test_no_generated_graph_equals_a_suite_task_or_another(generated):
    report, _, _, tasks = generated
    mine = [t.signature for t in report.tasks]
    assert len(set(mine)) == len(mine)
    suite = set(signatures(load_suite()).values())
    assert not suite & set(mine)
    # the signature is what the written file computes, not a value the generator only remembers
    by_name = {t.name: t.signature for t in report.tasks}
    for t in [t for t in tasks if t.dtype == "float32"][:5]:
        assert graph_signature(t) == by_name[t.name], t.id


def test_signature_ignores_names_but_not_constants(generated):
    report, _, _, _ = generated
    src = next(t.source for t in report.tasks if "self.conv1" in t.source)
    (task,) = tasks_from_source(src, "heldout_conv", "a")[:1]
    renamed = re.sub(r"\bt1\b", "hidden", re.sub(r"\bx\b", "inp", src.replace("self.conv1", "self.stem")))
    assert renamed != src
    (other,) = tasks_from_source(renamed, "heldout_conv", "b")[:1]
    assert graph_signature(other) == graph_signature(task)
    changed = src.replace("-> torch.Tensor:\n", "-> torch.Tensor:\n        x = x * 1.5\n", 1)
    (third,) = tasks_from_source(changed, "heldout_conv", "c")[:1]
    assert graph_signature(third) != graph_signature(task)


def test_costs_match_flop_counter_and_real_sizes(generated):
    """At the first test shape: the steps marked as counted by torch equal FlopCounterMode's total (matmuls and
    convolutions), the rest is elementwise work of at least one flop per output element, and bytes_moved is
    exactly the size of the inputs, parameters, floating buffers and output."""
    _, _, _, tasks = generated
    for t in tasks:
        if t.dtype != "float32":
            continue
        mod = materialize(t)
        shape = dict(t.test_shapes[0])
        model = make_model(mod.Model, mod, shape, 0, "float32")
        inputs = make_inputs(mod, shape, 0, "float32")
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            out = model(*inputs)
        steps = mod.flops_by_step(shape)
        assert sum(f for _, f, counted in steps if counted) == fc.get_total_flops(), t.id
        assert mod.flops(shape) - fc.get_total_flops() >= out.numel(), t.id
        n = sum(x.numel() for x in inputs) + sum(p.numel() for p in model.parameters())
        n += sum(b.numel() for b in model.buffers() if b.is_floating_point()) + out.numel()
        assert mod.bytes_moved(shape, 4) == 4 * n, t.id
        assert tuple(out.shape) == tuple(list(mod.sizes(shape).values())[-1]), t.id  # sizes() ends with the output


def _config(root: Path, fresh: int = 0) -> EngineConfig:
    # Four device workers: a self-check candidate's worker is mostly asleep in the thread check's window
    # (anticheat.runtime.busy_threads), as in test_suite_selfcheck.
    return EngineConfig(backend="cpu", build_root=root, skip_timing=True, allow_code_execution=True,
                        device_workers=4, compile_workers=2, threads=1, seed=20261201, fresh_shapes=fresh,
                        anticheat=AntiCheatConfig(require_custom_kernel=False))


def test_reference_as_candidate_is_correct_on_every_generated_task(generated, tmp_path):
    _, _, _, tasks = generated
    cands = [Candidate(task_id=t.id, source=t.source + SELF_CHECK_SUFFIX, label=f"self-check/{t.id}") for t in tasks]
    results = evaluate_candidates(tasks, cands, _config(tmp_path, fresh=2))
    wrong = {r.task_id: f"{r.status.value} {r.message[:300]}" for r in results if r.status != Status.CORRECT}
    assert not wrong
    assert all(Flag(FlagKind.FRESH_SHAPES, "fresh shapes: 2 passed") in r.flags for r in results)


# A candidate written for the shapes it was shown: exact on them, a wrong fallback anywhere else (what a kernel
# with sizes baked in as constants does on a size it was never run at).
SPECIALISED = '''

class ModelNew(Model):
    SEEN = {tuple(sizes(s)["x"]) for s in TEST_SHAPES}

    def forward(self, x, *rest):
        out = super().forward(x, *rest)
        if tuple(x.shape) in self.SEEN:
            return out
        return out * 0.5
'''


def test_fresh_shapes_catch_a_shape_specialised_candidate(generated, tmp_path):
    report, _, _, tasks = generated
    task = next(t for t in tasks if t.dtype == "float32")
    cand = Candidate(task_id=task.id, source=task.source + SPECIALISED, label="specialised")
    (plain,) = evaluate_candidates([task], [cand], _config(tmp_path / "a"))
    assert plain.status == Status.CORRECT, plain.message
    (fresh,) = evaluate_candidates([task], [cand], _config(tmp_path / "b", fresh=3))
    assert fresh.status == Status.INCORRECT
    assert "fresh shape" in fresh.message and Flag(FlagKind.FRESH_SHAPES, "fresh shapes: failed") in fresh.flags


def test_a_stored_result_without_fresh_shapes_is_judged_again(generated, tmp_path):
    """Results are keyed by code: a correct result stored by a plain run is not reused by a --fresh-shapes
    run on the same store (it would skip the very check asked for); it is evaluated again and replaced."""
    from multikernelbench.store import ResultStore

    _, _, _, tasks = generated
    task = next(t for t in tasks if t.dtype == "float32")
    cand = Candidate(task_id=task.id, source=task.source + SPECIALISED, label="specialised")
    with ResultStore(tmp_path / "r.sqlite") as store:
        (plain,) = evaluate_candidates([task], [cand], _config(tmp_path / "b"), store=store)
        assert plain.status == Status.CORRECT, plain.message
        (fresh,) = evaluate_candidates([task], [cand], _config(tmp_path / "b", fresh=3), store=store)
        assert fresh.status == Status.INCORRECT, fresh.message
        (again,) = evaluate_candidates([task], [cand], _config(tmp_path / "b", fresh=3), store=store)
        assert again.status == Status.INCORRECT and again.started_at == fresh.started_at  # now reused
