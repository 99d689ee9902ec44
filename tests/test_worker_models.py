"""The worker's models for a shape (engine/worker_main.py ``model_for``): what a Prepare request builds.

What could go wrong: the reference model of a shape built again as the source of the candidate's parameters
(a layer's initialisation is CPU random numbers whatever the device: 1.7 s of a shared turn for the nine-layer
2048-wide MLP on an H100 host, where every other lane's clock waited for it), or, once it is reused, the candidate
not getting the reference's parameters, or the reference and the candidate sharing one object.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from multikernelbench.backends import get_backend
from multikernelbench.engine.worker_main import WorkerState
from multikernelbench.tasks.module import materialize

TASK = "architecture.deep_mlp"
SHAPE = {"batch": 4, "input": 24, "width": 40, "output": 8}


def _worker(task, counted: type, candidate: type) -> WorkerState:
    state = WorkerState("device", channel=None)  # type: ignore[arg-type]  # no request is read: model_for only
    state.backend = get_backend("cpu")
    state.task = task
    state.task_mod = types.ModuleType("task")
    vars(state.task_mod).update(vars(materialize(task)), Model=counted)
    state.module = types.ModuleType("candidate")
    vars(state.module).update(ModelNew=candidate)
    return state


def _counted(base: Any, built: list[str], name: str, shift: float = 0.0) -> type:
    """``base`` whose every construction appends ``name`` to ``built``; ``shift``: its parameters drawn otherwise
    (a candidate reproducing the reference's layers, with other numbers until they are copied)."""

    class Counted(base):
        def __init__(self, *args):
            built.append(name)
            super().__init__(*args)
            with torch.no_grad():
                for p in self.parameters():
                    p.add_(shift)

    return Counted


def test_a_prepare_builds_the_reference_once_and_the_candidate_gets_its_parameters(suite):
    task = suite[TASK]
    base: Any = materialize(task).Model
    built: list[str] = []

    state = _worker(task, _counted(base, built, "reference"), _counted(base, built, "candidate", shift=1.0))
    ref = state.model_for("reference", SHAPE, 11)  # what on_prepare asks for, in its order
    cand = state.model_for("candidate", SHAPE, 11)
    assert built == ["reference", "candidate"]
    assert cand is not ref
    for (name, a), (_, b) in zip(ref.state_dict().items(), cand.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
        assert a.data_ptr() != b.data_ptr(), name
    assert state.model_for("candidate", SHAPE, 11) is cand and built == ["reference", "candidate"]


def test_a_candidate_asked_first_builds_the_reference_it_copies_once(suite):
    """A check asks for the candidate alone; the Time request's reference at that shape is then the same one."""
    task = suite[TASK]
    base: Any = materialize(task).Model
    built: list[str] = []

    state = _worker(task, _counted(base, built, "reference"), base)
    cand = state.model_for("candidate", SHAPE, 5)
    ref = state.model_for("reference", SHAPE, 5)
    assert built == ["reference"]
    assert all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), cand.state_dict().values(), strict=True))
    other = state.model_for("reference", SHAPE, 6)  # another weight seed: another model, other numbers
    assert built == ["reference", "reference"]
    assert not torch.equal(next(iter(other.state_dict().values())), next(iter(ref.state_dict().values())))
