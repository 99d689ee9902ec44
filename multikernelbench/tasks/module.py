"""Turn a task's source text into a live module (reference Model, generators, cost functions).

Tasks are executed from their stored source rather than imported by path, so a task read back from the
published dataset behaves exactly like the file it was built from.
"""

from __future__ import annotations

import threading
import types
from typing import Any

import torch

from multikernelbench.tasks.record import Task, torch_dtype

# nn.Module initialisers draw from torch's process-global RNG: two threads seeding and constructing at once
# (the engine's parallel device workers compute references in the parent) would interleave their draws.
_GLOBAL_RNG_LOCK = threading.Lock()

REQUIRED = ("Model", "get_init_inputs", "get_inputs", "TEST_SHAPES", "BENCH_SHAPE", "flops", "bytes_moved")


def exec_source(source: str, name: str) -> types.ModuleType:
    mod = types.ModuleType(f"mkb_task_{name.replace('.', '_')}")
    mod.__file__ = f"<task {name}>"
    code = compile(source, mod.__file__, "exec")
    exec(code, mod.__dict__)  # noqa: S102 - task sources are the benchmark's own, reviewed code
    return mod


def materialize(task: Task) -> types.ModuleType:
    return exec_source(task.source, task.id)


def cast_inputs(values: list[Any], dtype: torch.dtype) -> list[Any]:
    """Floating tensors take the task dtype; integer tensors (indices, labels) and scalars are untouched."""
    out = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            v = v.to(dtype)
        out.append(v)
    return out


def make_inputs(mod: types.ModuleType, shape: dict[str, Any], seed: int, dtype: str,
                device: str | torch.device = "cpu") -> list[Any]:
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    values = list(mod.get_inputs(dict(shape), gen))
    return cast_inputs(values, torch_dtype(dtype))


def make_model(model_cls: type, mod: types.ModuleType, shape: dict[str, Any], weight_seed: int,
               dtype: str, device: str | torch.device = "cpu") -> torch.nn.Module:
    """Construct a model exactly as the reference is constructed: same seed, same init args, same dtype.

    Candidates follow the KernelBench convention of re-creating the reference's layers in ``__init__``; the
    shared seed gives them identical parameters.
    """
    init_args = list(mod.get_init_inputs(dict(shape)))
    with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(weight_seed)
        model = model_cls(*init_args)
    return model.to(device=device, dtype=torch_dtype(dtype)).eval()
