"""Op-graph signatures for deduplication: two tasks are the same task when their references run the same
graph of ATen ops on the same constants, whatever their variables, modules or sizes are called.

The reference is traced below autograd (a TorchDispatchMode sees every ATen op with its arguments), once at
each of two test shapes: an argument that differs between the two is a size and becomes ``?``; one that is
equal (a kernel size, a stride, an eps, a reduction axis) is part of the graph. Tensor arguments become the
index of the op that produced them, or ``in`` for inputs and parameters. So ``F.gelu`` and ``nn.GELU()``,
``x + r`` named any way, and the same chain at other sizes all hash alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from multikernelbench.tasks.module import make_inputs, make_model, materialize
from multikernelbench.tasks.record import Task


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[tuple[str, tuple]] = []
        self._producer: dict[int, int] = {}
        self._alive: list[torch.Tensor] = []  # keeps ids unique while tracing

    def _arg(self, a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return ("t", self._producer.get(id(a), "in"))
        if isinstance(a, float):
            return round(a, 6)
        if isinstance(a, (int, bool, str)) or a is None:
            return a
        return str(a)  # dtypes, devices, layouts, memory formats

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        leaves = pytree.tree_leaves((args, kwargs))
        self.nodes.append((str(func), tuple(self._arg(a) for a in leaves)))
        for o in pytree.tree_leaves(out):
            if isinstance(o, torch.Tensor):
                self._producer[id(o)] = len(self.nodes) - 1
                self._alive.append(o)
        return out


def trace(task: Task, shape: dict) -> list[tuple[str, tuple]]:
    mod = materialize(task)
    model = make_model(mod.Model, mod, shape, 0, "float32")
    inputs = make_inputs(mod, shape, 0, "float32")
    rec = _Recorder()
    with torch.no_grad(), rec:
        model(*inputs)
    return rec.nodes


def graph_signature(task: Task) -> str:
    """A short hash of the task's op graph with size arguments blanked (see the module docstring)."""
    a, b = (trace(task, s) for s in task.test_shapes[:2])
    if [n for n, _ in a] != [n for n, _ in b] or any(len(x) != len(y) for (_, x), (_, y) in zip(a, b, strict=True)):
        # data-dependent control flow: keep the op sequence only
        nodes: list = [n for n, _ in a]
    else:
        nodes = [(n, [x if x == y else "?" for x, y in zip(xa, xb, strict=True)]) for (n, xa), (_, xb) in zip(a, b, strict=True)]
    return hashlib.sha256(json.dumps(nodes, default=str).encode()).hexdigest()[:16]


def cache_path() -> Path:
    return Path.home() / ".cache" / "multikernelbench" / "heldout" / "graph-signatures.json"


def signatures(tasks: Iterable[Task], cache: Path | None = None) -> dict[str, str]:
    """task id -> graph signature for the float32 tasks, cached on disk by content hash (tracing the whole
    suite takes a while; the cache is a pure function of the task sources)."""
    cache = cache or cache_path()
    try:
        known: dict[str, str] = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    out, fresh = {}, False
    for t in tasks:
        if t.dtype != "float32":
            continue
        if t.content_hash not in known:
            known[t.content_hash] = graph_signature(t)
            fresh = True
        out[t.id] = known[t.content_hash]
    if fresh:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text(json.dumps(known, sort_keys=True))
            tmp.replace(cache)
        except OSError:
            pass  # a read-only home only costs the next run the tracing time
    return out
