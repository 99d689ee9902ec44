"""Run a KernelBench-format problem (``Model``, ``get_inputs()``, ``get_init_inputs()``, module-level sizes) as a
task of ours: sizes come from the task's named shape, inputs from the harness's generator.

An imported task file keeps the problem's text verbatim and delegates to :class:`KernelBenchProblem`.

Sizes: the problem's module-level assignments of the size names are rewritten (``ast``) to read the shape's
value first, so a size other globals derive from (``out = in_features * 2``) changes them too. The globals the
problem's functions see are updated to the shape before each call; ``Model``'s methods read the same dict.

Inputs: ``get_inputs()`` draws from torch's global RNG on the CPU. It runs here under a
:class:`OnGenerator` torch-function mode that hands every random factory (``randn``, ``rand``, ``randint``,
``randperm``, ``normal``, the ``*_like`` forms, in-place ``uniform_``...) the harness's generator and its
device, and every other factory the generator's device. Whatever a problem draws some other way (numpy,
``random``) is not ours to redirect, so the call also runs inside ``torch.random.fork_rng`` with the CPU RNG
seeded from the harness's generator: inputs stay a pure function of the harness's secret seed, the global
RNG (model weights are seeded from it) is left as it was, and large inputs are drawn on the device as our
own tasks draw them, not on the host and copied.
"""

from __future__ import annotations

import ast
import json
import types
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from multikernelbench.util import pyast

#: The name the rewritten size assignments read their per-shape value from.
SIZES_NAME = "__mkb_sizes__"

_RANDOM = {torch.randn, torch.rand, torch.randint, torch.randperm, torch.normal, torch.bernoulli,
           torch.multinomial, torch.poisson}
_RANDOM_LIKE = {torch.randn_like: torch.randn, torch.rand_like: torch.rand}
_INPLACE = {torch.Tensor.uniform_, torch.Tensor.normal_, torch.Tensor.random_, torch.Tensor.exponential_,
            torch.Tensor.bernoulli_, torch.Tensor.geometric_, torch.Tensor.log_normal_, torch.Tensor.cauchy_}
_FACTORIES = {torch.zeros, torch.ones, torch.empty, torch.full, torch.arange, torch.tensor, torch.linspace,
              torch.eye, torch.as_tensor, torch.logspace}


class OnGenerator(TorchFunctionMode):
    """Random draws from ``gen`` on ``gen.device``; other factories on ``gen.device``; ``.cuda()`` goes there."""

    def __init__(self, gen: torch.Generator) -> None:
        super().__init__()
        self.gen = gen
        self.device = gen.device

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _RANDOM_LIKE:
            like = args[0]
            return _RANDOM_LIKE[func](*like.shape, generator=self.gen, device=self.device,
                                      dtype=kwargs.get("dtype") or like.dtype)
        if func is torch.randint_like:
            like, rest = args[0], list(args[1:])
            low, high = (0, rest[0]) if len(rest) == 1 else (rest[0], rest[1])
            return torch.randint(low, high, tuple(like.shape), generator=self.gen, device=self.device,
                                 dtype=kwargs.get("dtype") or like.dtype)
        if func in _RANDOM:
            kwargs["generator"] = self.gen
            if func not in (torch.normal, torch.bernoulli, torch.multinomial, torch.poisson):
                kwargs["device"] = self.device
        elif func in _INPLACE:
            kwargs["generator"] = self.gen
        elif func in _FACTORIES:
            kwargs["device"] = self.device
        elif func is torch.Tensor.cuda:
            return args[0].to(self.device)
        return func(*args, **kwargs)


def assigned_names(node: ast.stmt) -> list[str]:
    """The names a module-level ``a = <expr>`` or ``a = b = <expr>`` binds (none for other statements)."""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def size_assignments(tree: ast.Module) -> dict[str, ast.Assign]:
    """Module-level ``name = <expr>`` statements (``height = width = 128`` too), by name; the last one wins,
    as at run time."""
    out = {}
    for node in tree.body:
        for name in assigned_names(node):
            assert isinstance(node, ast.Assign)
            out[name] = node
    return out


def rewrite_sizes(source: str, names: list[str] | tuple[str, ...]) -> str:
    """``batch_size = 16`` -> ``batch_size = __mkb_sizes__.get('batch_size', 16)`` for each size name
    (``height = width = 128`` becomes one such line per name)."""
    tree = pyast.parse(source)
    wanted = set(names)
    body: list[ast.stmt] = []
    for node in tree.body:
        targets = assigned_names(node)
        if not targets or not wanted & set(targets):
            body.append(node)
            continue
        assert isinstance(node, ast.Assign)
        for name in targets:
            value = ast.Call(
                func=ast.Attribute(value=ast.Name(id=SIZES_NAME, ctx=ast.Load()), attr="get", ctx=ast.Load()),
                args=[ast.Constant(value=name), node.value], keywords=[]) if name in wanted else node.value
            body.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value, lineno=node.lineno))
    tree.body = body
    return ast.unparse(ast.fix_missing_locations(tree))


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, tuple, list, dict, torch.dtype))


def shape_key(shape: dict[str, Any]) -> str:
    return json.dumps(shape, sort_keys=True)


class KernelBenchProblem:
    """One problem's live namespace, re-pointed at a shape before each call."""

    def __init__(self, original: str, size_names: tuple[str, ...] | list[str], name: str = "problem") -> None:
        self.size_names = tuple(size_names)
        self._code = compile(rewrite_sizes(original, self.size_names), f"<kernelbench {name}>", "exec")
        self.ns = self._exec({})
        self._globals_by_shape: dict[str, dict[str, Any]] = {}
        for attr in ("Model", "get_inputs", "get_init_inputs"):
            if attr not in self.ns:
                raise AttributeError(f"the problem defines no {attr}")
        self.Model = self.ns["Model"]

    def _exec(self, sizes: dict[str, Any]) -> dict[str, Any]:
        ns: dict[str, Any] = {"__name__": "kernelbench_problem", SIZES_NAME: dict(sizes)}
        exec(self._code, ns)  # noqa: S102 - the user's own reference problem, run as our task files are
        return ns

    def point_at(self, shape: dict[str, Any]) -> None:
        """Set the problem's globals (sizes and everything derived from them) to ``shape``'s values."""
        key = shape_key(shape)
        values = self._globals_by_shape.get(key)
        if values is None:
            scratch = self._exec({k: v for k, v in shape.items() if k in self.size_names})
            values = {k: v for k, v in scratch.items() if not k.startswith("__") and _plain(v)}
            self._globals_by_shape[key] = values
        self.ns.update(values)

    def init_inputs(self, shape: dict[str, Any]) -> list[Any]:
        self.point_at(shape)
        return list(self.ns["get_init_inputs"]())

    def inputs(self, shape: dict[str, Any], gen: torch.Generator) -> list[Any]:
        from multikernelbench.tasks.module import _GLOBAL_RNG_LOCK

        self.point_at(shape)
        seed = int(torch.randint(0, 2**62, (1,), generator=gen, device=gen.device).item())
        with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=[]), OnGenerator(gen):
            torch.manual_seed(seed)
            values = list(self.ns["get_inputs"]())
        return [v.to(gen.device) if isinstance(v, torch.Tensor) and v.device != gen.device else v for v in values]


def cost_from_table(table: dict[str, list[int]], shape: dict[str, Any], itemsize: int,
                    measure: Callable[[dict[str, Any]], list[int]]) -> tuple[int, int]:
    """(FLOPs, bytes at ``itemsize``) of ``shape``: from the import-time table, else measured now (meta)."""
    entry = table.get(shape_key(shape))
    if entry is None:
        entry = measure(shape)
    flops, float_elems, int_bytes = entry
    return int(flops), int(float_elems) * itemsize + int(int_bytes)


def measure_cost(problem: KernelBenchProblem, shape: dict[str, Any], device: str = "meta") -> list[int]:
    """[FLOPs, floating elements, integer bytes] of one forward at ``shape``: FLOPs from
    ``torch.utils.flop_counter.FlopCounterMode``; elements of inputs + outputs + parameters and buffers.

    On the meta device nothing is computed, so the problem's own (often GPU-sized) shape costs nothing here.
    """
    from torch.utils.flop_counter import FlopCounterMode

    init = problem.init_inputs(shape)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(0)
    if device == "meta":
        with torch.device("meta"):
            model = problem.Model(*init)
        inputs = [_to_meta(v) for v in _meta_inputs(problem, shape)]
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = problem.Model(*init)
        inputs = problem.inputs(shape, gen)
    model = model.eval()
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        out = model(*inputs)
    tensors = [t for t in _flatten(out)] + [v for v in inputs if isinstance(v, torch.Tensor)]
    tensors += list(model.parameters()) + list(model.buffers())
    float_elems = sum(t.numel() for t in tensors if t.is_floating_point())
    int_bytes = sum(8 * t.numel() for t in tensors if not t.is_floating_point())
    return [int(counter.get_total_flops()), int(float_elems), int(int_bytes)]


def _meta_inputs(problem: KernelBenchProblem, shape: dict[str, Any]) -> list[Any]:
    """The problem's inputs at ``shape`` as meta tensors: every factory runs on the meta device."""
    problem.point_at(shape)
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        torch.manual_seed(0)
        return list(problem.ns["get_inputs"]())


def _to_meta(v: Any) -> Any:
    return v.to("meta") if isinstance(v, torch.Tensor) else v


def _flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return []


def task_namespace(original: str, size_names: tuple[str, ...], costs: dict[str, list[int]],
                   name: str) -> types.SimpleNamespace:
    """The task-format functions of an imported task file (tasks/loader.py reads them off the module)."""
    problem = KernelBenchProblem(original, size_names, name)

    def measure(shape: dict[str, Any]) -> list[int]:
        return measure_cost(problem, shape)

    return types.SimpleNamespace(
        Model=problem.Model,
        get_init_inputs=problem.init_inputs,
        get_inputs=problem.inputs,
        flops=lambda shape: cost_from_table(costs, shape, 4, measure)[0],
        bytes_moved=lambda shape, itemsize: cost_from_table(costs, shape, itemsize, measure)[1],
        problem=problem,
    )


def reference_text(task_source: str) -> str:
    """A task's source plus, for an imported task, the problem text it keeps in ``ORIGINAL``: the static
    anti-cheat rules read the reference's ops from it (in the task file it is only a string constant)."""
    if "ORIGINAL" not in task_source:
        return task_source
    try:
        tree = pyast.parse(task_source)
    except SyntaxError:
        return task_source
    for node in tree.body:
        if assigned_names(node) == ["ORIGINAL"] and isinstance(node, ast.Assign) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return task_source + "\n" + node.value.value
    return task_source
