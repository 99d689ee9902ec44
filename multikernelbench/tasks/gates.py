"""Degeneracy gates: a task whose output barely depends on its input can be "solved" by a constant.

Each gate runs the trusted reference on the small test shapes only (cheap enough for the whole suite in CI)
and returns human-readable problems; an empty list means the task passes.
"""

from __future__ import annotations

from typing import Any

import torch

from multikernelbench.tasks.module import make_inputs, make_model, materialize
from multikernelbench.tasks.record import Task

# Rough H100-class peaks, used only to check that a benchmark shape is big enough to time (>= ~1 ms).
H100_BYTES_PER_S = 3.35e12
H100_FLOPS = {"float32": 67e12, "bfloat16": 990e12, "float16": 990e12, "float64": 67e12}


def flatten_outputs(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        tensors: list[torch.Tensor] = []
        for o in out:
            tensors.extend(flatten_outputs(o))
        return tensors
    raise TypeError(f"reference output must be a tensor or a tuple of tensors, got {type(out).__name__}")


def _forward(mod, model: torch.nn.Module, task: Task, shape: dict, seed: int) -> list[torch.Tensor]:
    inputs = make_inputs(mod, shape, seed, task.dtype)
    with torch.no_grad():
        return flatten_outputs(model(*inputs))


def _spread_problems(t: torch.Tensor, label: str) -> list[str]:
    problems: list[str] = []
    x = t.detach().double()
    if not torch.isfinite(x).all():
        return [f"{label}: output has non-finite values"]
    if x.numel() < 2:
        return problems
    std = x.std().item()
    scale = x.abs().mean().item()
    if std <= 1e-3 * max(scale, 1e-30) or std == 0.0:
        problems.append(f"{label}: output nearly constant (std {std:.3g}, mean |x| {scale:.3g})")
        return problems
    for dim in range(x.dim()):
        if x.shape[dim] < 2:
            continue
        along = x.std(dim=dim).mean().item()
        if along <= 1e-3 * std:
            problems.append(f"{label}: output ~constant along dim {dim} (mean std {along:.3g} vs {std:.3g})")
    return problems


def _trivial_guess_problems(t: torch.Tensor, task: Task, label: str) -> list[str]:
    """A task is degenerate if a cheap guess (zeros, the mean, a mean along one axis) passes its tolerance.

    The spread gates above are relative; this one is in the task's own tolerance units, which is what the
    checker uses. A guess counts as caught when at least 1 % of the elements, or 16 of them (sparse outputs
    such as one-hot rows), fall outside tolerance: then it fails the checker on every seed, not by luck.
    """
    if not t.is_floating_point() or t.numel() < 2:
        return []
    x = t.detach().double()
    bound = task.atol + task.rtol * x.abs()
    guesses = {"zeros": torch.zeros_like(x), "global mean": torch.full_like(x, x.mean().item())}
    for dim in range(x.dim()):
        if x.shape[dim] > 1:
            guesses[f"mean along dim {dim}"] = x.mean(dim=dim, keepdim=True).expand_as(x)
    problems = []
    for name, guess in guesses.items():
        outside = int(((guess - x).abs() > bound).sum())
        caught = outside / x.numel()
        if outside < max(1, min(0.01 * x.numel(), 16)):
            problems.append(f"{label}: guessing {name} passes the tolerance on {100 - 100 * caught:.1f}% of "
                            f"elements (atol={task.atol:g}, rtol={task.rtol:g})")
    return problems


def _differs(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    for x, y in zip(a, b, strict=True):
        x, y = x.double(), y.double()
        if x.shape != y.shape:
            return True
        scale = max(x.abs().max().item(), 1e-30)
        if (x - y).abs().max().item() > 1e-3 * scale:
            return True
    return False


def check_task(task: Task) -> list[str]:
    """All gate violations for one task (empty = passes)."""
    problems: list[str] = []
    mod = materialize(task)
    for i, shape in enumerate(task.test_shapes):
        model = make_model(mod.Model, mod, shape, 0, task.dtype)
        outs = _forward(mod, model, task, shape, seed=11 + i)
        for j, out in enumerate(outs):
            problems += _spread_problems(out, f"shape {i} output {j}")
            problems += _trivial_guess_problems(out, task, f"shape {i} output {j}")
        # A fresh model: a forward may update buffers (batch-norm statistics) that change the next output.
        other = _forward(mod, make_model(mod.Model, mod, shape, 0, task.dtype), task, shape, seed=1011 + i)
        if not _differs(outs, other):
            problems.append(f"shape {i}: outputs do not change when inputs change")
        if list(model.parameters()):
            reweighted = _forward(mod, make_model(mod.Model, mod, shape, 7, task.dtype), task, shape, seed=11 + i)
            if not _differs(outs, reweighted):
                problems.append(f"shape {i}: outputs do not change when weights change")
    problems += sizing_problems(task)
    return problems


def estimated_gpu_ms(task: Task) -> float:
    return 1e3 * max(task.bytes / H100_BYTES_PER_S, task.flops / H100_FLOPS[task.dtype])


def sizing_problems(task: Task) -> list[str]:
    problems = []
    est = estimated_gpu_ms(task)
    if est < 0.25:
        problems.append(f"bench shape too small to time: roofline estimate {est:.3f} ms on an H100")
    if task.bytes > 60e9:
        problems.append(f"bench shape moves {task.bytes / 1e9:.1f} GB: too big for one GPU")
    if task.cpu_bytes > 1.5e9:
        problems.append(f"cpu bench shape moves {task.cpu_bytes / 1e9:.2f} GB: too big for CPU timing")
    return problems
