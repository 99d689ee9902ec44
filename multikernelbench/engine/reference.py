"""Expected outputs, computed in the trusted parent from the task's own reference model."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import torch

from multikernelbench.engine.precision import strict_fp32
from multikernelbench.tasks.gates import flatten_outputs
from multikernelbench.tasks.module import make_inputs, make_model, materialize
from multikernelbench.tasks.record import Task


class SeedSource:
    """Secret, unpredictable seeds by default; deterministic ones (for reproducing a run) when seeded."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._counter = 0

    def next(self, *context: Any) -> int:
        if self.seed is None:
            return secrets.randbits(62)
        self._counter += 1
        blob = repr((self.seed, self._counter) + context).encode()
        return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little") >> 2


class Reference:
    """The reference model of one task, materialised once per evaluation and cached per shape."""

    def __init__(self, task: Task, device: torch.device) -> None:
        strict_fp32()
        self.task = task
        self.device = device
        self.mod = materialize(task)
        self._models: dict[tuple, torch.nn.Module] = {}

    def inputs(self, shape: dict[str, Any], seed: int) -> list[Any]:
        return make_inputs(self.mod, shape, seed, self.task.dtype, self.device)

    def aliases(self, shape: dict[str, Any], weight_seed: int, inputs: list[Any]) -> list[int]:
        """Indices of the reference's outputs that share memory with its inputs (anti-cheat aliasing rule)."""
        from multikernelbench.anticheat.runtime import aliased_outputs

        self.outputs(shape, weight_seed, inputs)  # builds and caches the model
        model = self._models[(tuple(sorted(shape.items())), weight_seed)]
        clones = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        with torch.no_grad():
            return aliased_outputs(flatten_outputs(model(*clones)), clones)

    def outputs(self, shape: dict[str, Any], weight_seed: int, inputs: list[Any]) -> list[torch.Tensor]:
        key = (tuple(sorted(shape.items())), weight_seed)
        if key not in self._models:
            self._models[key] = make_model(self.mod.Model, self.mod, shape, weight_seed, self.task.dtype, self.device)
        clones = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        with torch.no_grad():
            return [t.detach().to("cpu") for t in flatten_outputs(self._models[key](*clones))]
