"""Expected outputs, computed by the trusted parent on its own device, once per (task, shape, seed).

Why on the device: the expected output of a GPU task at its benchmark shape took ~50 s for a relu on the
host's CPU (longer for an 8192^3 matmul), in the parent, while builds loaded every core; nothing else in a
run cost as much. The parent has its own CUDA context (it never runs candidate code; workers are forked
from a zygote that never touched CUDA), computes references there and compares there.

Why once per (task, shape, seed): every candidate of a task in one run is checked on the same secret
trial seeds, so the reference runs once per task, not once per candidate. A task's references are freed
when its last candidate is done (:meth:`ReferenceService.release`), which bounds parent and GPU memory.
Timed calls are different: their inputs are fresh for every call (engine/fresh.py) and their references
are computed per verified call, never cached.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass
from typing import Any

import torch

from multikernelbench.engine.gpu_neighbours import GpuNeighbours
from multikernelbench.engine.precision import strict_fp32
from multikernelbench.tasks.gates import flatten_outputs
from multikernelbench.tasks.module import make_inputs, make_model, materialize
from multikernelbench.tasks.record import Task


class SeedSource:
    """Secret, unpredictable seeds by default; deterministic ones (for reproducing a run) when seeded."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._counter = 0
        self._lock = threading.Lock()
        self._tasks: dict[str, TaskSeeds] = {}
        self._fresh_shapes: dict[tuple[str, int], list[tuple[dict[str, Any], int]] | None] = {}

    def next(self, *context: Any) -> int:
        if self.seed is None:
            return secrets.randbits(62)
        with self._lock:
            self._counter += 1
            counter = self._counter
        blob = repr((self.seed, counter) + context).encode()
        return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little") >> 2

    def derived(self, *context: Any) -> int:
        """A seed that depends only on the run's seed and ``context`` (secret when the run is unseeded)."""
        if self.seed is None:
            return secrets.randbits(62)
        blob = repr((self.seed, "derived") + context).encode()
        return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little") >> 2

    def for_task(self, task: Task) -> TaskSeeds:
        """The weight seed and trial seeds of a task, drawn once per run and shared by all its candidates."""
        with self._lock:
            if task.id not in self._tasks:
                trials = [(dict(shape), self.derived("trial", task.id, i, k))
                          for i, shape in enumerate(task.test_shapes) for k in range(task.seeds_per_shape)]
                self._tasks[task.id] = TaskSeeds(self.derived("weights", task.id), trials)
            return self._tasks[task.id]

    def fresh_shape_trials(self, task: Task, count: int) -> list[tuple[dict[str, Any], int]] | None:
        """``count`` shapes drawn now from the task's ``SHAPE_RANGES`` (tasks/ranges.py), each with a trial seed;
        drawn once per run and task, so every candidate of the task meets the same ones and the reference runs
        once per shape. None when the task declares no ranges."""
        from multikernelbench.tasks.ranges import draw_shapes, task_ranges

        with self._lock:
            key = (task.id, count)
            if key not in self._fresh_shapes:
                ranges = task_ranges(task)
                self._fresh_shapes[key] = None if ranges is None else [
                    (shape, self.derived("fresh-shape-trial", task.id, i)) for i, shape in
                    enumerate(draw_shapes(ranges, task.test_shapes, count, self.derived("fresh-shapes", task.id)))]
            return self._fresh_shapes[key]


@dataclass(frozen=True)
class TaskSeeds:
    weight: int
    trials: list[tuple[dict[str, Any], int]]


def _key(shape: dict[str, Any]) -> tuple:
    return tuple(sorted(shape.items()))


class _TaskRefs:
    def __init__(self, task: Task, device: torch.device) -> None:
        self.task = task
        self.device = device
        self.mod = materialize(task)
        self.models: dict[tuple, torch.nn.Module] = {}
        self.expected: dict[tuple, list[torch.Tensor]] = {}
        self.inputs: dict[tuple, list[Any]] = {}
        self.aliases: list[int] | None = None

    def model(self, shape: dict[str, Any], weight_seed: int) -> torch.nn.Module:
        key = (_key(shape), weight_seed)
        if key not in self.models:
            self.models[key] = make_model(self.mod.Model, self.mod, shape, weight_seed, self.task.dtype, self.device)
        return self.models[key]


class ReferenceService:
    """The reference side of every check, on one device (see the module docstring). Not thread-safe: the
    engine gives each device lane its own service, so GPU work of the parent and of that lane's worker
    never overlap (a reference computed while a candidate is timed would be inside its clock)."""

    def __init__(self, device: torch.device | str) -> None:
        strict_fp32()
        self.device = torch.device(device)
        #: Other processes on this device's GPU, read beside every timing of the lane (engine/gpu_neighbours.py).
        self.neighbours = (GpuNeighbours(self.device.index or 0) if self.device.type == "cuda" else None)
        self._tasks: dict[str, _TaskRefs] = {}
        self.computed = 0  # reference forwards run (tests check reuse with it)

    def _refs(self, task: Task) -> _TaskRefs:
        if task.id not in self._tasks:
            self._tasks[task.id] = _TaskRefs(task, self.device)
        return self._tasks[task.id]

    def inputs(self, task: Task, shape: dict[str, Any], seed: int) -> list[Any]:
        """Inputs of a trial, as CPU tensors ready to send (cached with the task)."""
        refs = self._refs(task)
        key = (_key(shape), seed)
        if key not in refs.inputs:
            made = make_inputs(refs.mod, shape, seed, task.dtype, self.device)
            refs.inputs[key] = [t.to("cpu") if isinstance(t, torch.Tensor) else t for t in made]
        return refs.inputs[key]

    def expected(self, task: Task, shape: dict[str, Any], seed: int, weight_seed: int) -> list[torch.Tensor]:
        """Expected outputs of a trial, on the device (cached with the task)."""
        refs = self._refs(task)
        key = (_key(shape), seed, weight_seed)
        if key not in refs.expected:
            refs.expected[key] = self._forward(refs, shape, weight_seed, self.inputs(task, shape, seed))
        return refs.expected[key]

    def fresh_outputs(self, task: Task, shape: dict[str, Any], seed: int, weight_seed: int) -> list[torch.Tensor]:
        """Expected outputs for inputs generated from ``seed`` on the device (not cached: timed calls)."""
        refs = self._refs(task)
        inputs = make_inputs(refs.mod, shape, seed, task.dtype, self.device)
        return self._forward(refs, shape, weight_seed, inputs)

    def aliases(self, task: Task, shape: dict[str, Any], seed: int, weight_seed: int) -> list[int]:
        """Indices of the reference's outputs that share memory with its inputs (anti-cheat aliasing rule)."""
        from multikernelbench.anticheat.runtime import aliased_outputs

        refs = self._refs(task)
        if refs.aliases is None:
            model = refs.model(shape, weight_seed)
            inputs = [t.to(self.device) if isinstance(t, torch.Tensor) else t for t in self.inputs(task, shape, seed)]
            with torch.no_grad():
                refs.aliases = aliased_outputs(flatten_outputs(model(*inputs)), inputs)
        return refs.aliases

    def _forward(self, refs: _TaskRefs, shape: dict[str, Any], weight_seed: int,
                 inputs: list[Any]) -> list[torch.Tensor]:
        model = refs.model(shape, weight_seed)
        on_device = [t.to(self.device).clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        with torch.no_grad():
            out = [t.detach() for t in flatten_outputs(model(*on_device))]
        self.computed += 1
        return out

    def release(self, task_id: str) -> None:
        """Forget a task's models, inputs and expected outputs (its last candidate is done)."""
        if self._tasks.pop(task_id, None) is not None and self.device.type == "cuda":
            torch.cuda.empty_cache()

    def held_tasks(self) -> list[str]:
        return sorted(self._tasks)
