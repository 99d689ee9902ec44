"""Build what a candidate builds in ``ModelNew.__init__`` during the build stage.

KernelBench-format candidates often call ``load_inline`` in ``__init__``. The compile worker constructs the
model once (CPU, the task's init inputs at its first test shape, weights from a fixed seed) right after the
module compiled, so that build runs in the build stage, under its timeout and in the build folder the device
worker loads from, instead of inside the device stage's first check. Best effort: a constructor that fails
here (it wants the GPU, say) is judged where the device worker constructs the model, as before.
"""

from __future__ import annotations

import json
from typing import Any


def is_jsonable(value: Any) -> bool:
    try:
        return json.loads(json.dumps(value)) == value
    except (TypeError, ValueError):
        return False


def init_args_for(task: Any, source: str) -> tuple | None:
    """The task's init inputs at its first test shape when they can travel as JSON (ints, floats, lists...)
    and the candidate builds an extension at all (``load_inline`` / ``cpp_extension``), else None (nothing is
    constructed in the build stage then)."""
    from multikernelbench.tasks.module import materialize

    if "load_inline" not in source and "cpp_extension" not in source:
        return None
    try:
        args = list(materialize(task).get_init_inputs(dict(task.test_shapes[0])))
    except Exception:  # the device stage reports a broken task
        return None
    return tuple(args) if is_jsonable(args) else None  # tuples travel as lists


def construct_once(module: Any, init_args: tuple) -> str:
    """Construct ``module.ModelNew(*init_args)``; returns "" or why it could not (not a verdict)."""
    import torch

    if not hasattr(module, "ModelNew"):
        return "no ModelNew"
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            module.ModelNew(*init_args)
    except Exception as exc:  # judged in the device stage, where the model is built for real
        return f"{type(exc).__name__}: {exc}"[:200]
    return ""
