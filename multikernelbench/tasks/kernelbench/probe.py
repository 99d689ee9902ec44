"""Import one KernelBench-format problem: find its sizes, derive test shapes, measure its costs.

Runs in a child process (importer.py drives it and kills it past a time limit), because a problem's reference
is arbitrary user code at arbitrary sizes. Everything it learns comes back as one JSON-able dict; the parent
writes the task file.

Sizes are the module-level integer assignments (literal arithmetic only: ``dim = 16384 * 2``) that
``get_inputs``/``get_init_inputs`` read, directly or through other globals. Sizes >= 16 are scaled down by
powers of two (never below min(size, 8)); smaller ones (kernel sizes, strides, axes, head counts) are kept,
so divisibility between sizes mostly survives. Each candidate shape is kept only if the reference runs on the
CPU within the time limit and its outputs pass the task gates (tasks/gates.py); the first try of each shape
makes the scaled sizes odd (odd sizes catch kernels that assume a multiple of a block), the second keeps them.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import sys
import time
import types
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from multikernelbench.tasks.kernelbench.runtime import (
    KernelBenchProblem,
    assigned_names,
    measure_cost,
    shape_key,
    size_assignments,
)
from multikernelbench.util import pyast

#: (input+output+parameter elements, FLOPs) a test shape may reach, smallest first: three test shapes.
BUDGETS = ((1.5e4, 1.5e7), (8e4, 8e7), (4e5, 4e8))
MIN_SCALED = 16
FLOOR = 8


@dataclass(frozen=True)
class Limits:
    forward_s: float = 2.0  # one reference forward at a test shape on this CPU
    cpu_bench_elems: float = 4e8  # measure the problem's own shape on the CPU only below this (meta otherwise)


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def find_sizes(source: str, ns: dict[str, Any]) -> list[str]:
    """The size names, in source order (see the module docstring)."""
    tree = pyast.parse(source)
    assigns = size_assignments(tree)
    frontier: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            frontier |= _names_read(node)
    seen: set[str] = set()
    while frontier:
        name = frontier.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in assigns:
            frontier |= _names_read(assigns[name].value)
    out = []
    for node in tree.body:
        for name in assigned_names(node):
            value = ns.get(name)
            if name in seen and assigns.get(name) is node and isinstance(value, int) \
                    and not isinstance(value, bool) and not _names_read(node.value) and name not in out:
                out.append(name)
    return out


def description(source: str, ns: dict[str, Any], fallback: str) -> str:
    doc = ast.get_docstring(pyast.parse(source)) or inspect.getdoc(ns.get("Model")) or ""
    if ns.get("Model") is not None and doc == inspect.getdoc(torch.nn.Module):
        doc = ""
    lines = [ln.strip() for ln in doc.strip().splitlines() if ln.strip()]
    return lines[0] if lines else fallback


def scaled_shapes(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Shapes from slightly smaller to the floor, largest first (each large size halved per step)."""
    out: list[dict[str, int]] = []
    for k in range(1, 24):
        shape = {n: (max(min(v, _floor(n)), round(v / 2 ** k)) if v >= MIN_SCALED else v) for n, v in sizes.items()}
        if shape != sizes and shape not in out:
            out.append(shape)
    return out


def _floor(name: str) -> int:
    """A batch may shrink to 2 (a model often fixes every other size); other sizes stop at 8."""
    return 2 if "batch" in name.lower() else FLOOR


def odd(shape: dict[str, int], sizes: dict[str, int]) -> dict[str, int]:
    return {n: (v + 1 if sizes[n] >= MIN_SCALED and v % 2 == 0 and v != sizes[n] else v) for n, v in shape.items()}


def _shape_task(source: str, shape: dict[str, Any]):
    """A throwaway Task holding ``shape`` as its one test shape, for the gates."""
    from multikernelbench.tasks.record import DTYPE_TOLERANCE, Task

    atol, rtol = DTYPE_TOLERANCE["float32"]
    return Task(id="probe", name="probe", category="probe", description="", dtype="float32", source=source,
                test_shapes=(shape,), bench_shape=shape, cpu_bench_shape=shape, atol=atol, rtol=rtol,
                flops=0, bytes=1, cpu_flops=0, cpu_bytes=1)


def check_shape(problem: KernelBenchProblem, shape: dict[str, Any], limits: Limits,
                tolerance: tuple[float, float]) -> tuple[str, list[str]]:
    """('ok' | 'gates' | 'fails', problems): the reference at ``shape`` on the CPU, judged by the task gates."""
    from multikernelbench.tasks import gates
    from multikernelbench.tasks.module import cast_inputs, make_model

    mod = types.ModuleType("kernelbench_probe")  # what make_model reads: Model and get_init_inputs
    mod.Model, mod.get_init_inputs = problem.Model, problem.init_inputs  # type: ignore[attr-defined]

    def forward(weight_seed: int, seed: int) -> list[torch.Tensor]:
        model = make_model(problem.Model, mod, shape, weight_seed, "float32")
        gen = torch.Generator()
        gen.manual_seed(seed)
        inputs = cast_inputs(problem.inputs(shape, gen), torch.float32)
        with torch.no_grad():
            return gates.flatten_outputs(model(*inputs))

    try:
        t0 = time.perf_counter()
        outs = forward(0, 11)
        took = time.perf_counter() - t0
        if took > limits.forward_s:
            return "fails", [f"forward took {took:.1f} s on this CPU (limit {limits.forward_s:g} s)"]
        other = forward(0, 1011)
        model = make_model(problem.Model, mod, shape, 0, "float32")
        reweighted = forward(7, 11) if list(model.parameters()) else None
    except Exception as exc:  # the user's reference at a shape it was not written for: a reason, not a crash
        return "fails", [f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"]
    task = replace(_shape_task("", shape), atol=tolerance[0], rtol=tolerance[1])
    problems: list[str] = []
    for j, out in enumerate(outs):
        problems += gates._spread_problems(out, f"output {j}")
        problems += gates._trivial_guess_problems(out, task, f"output {j}")
    if not gates._differs(outs, other):
        problems.append("outputs do not change when inputs change")
    if reweighted is not None and not gates._differs(outs, reweighted):
        problems.append("outputs do not change when weights change")
    return ("gates" if problems else "ok"), problems


def _cost(problem: KernelBenchProblem, shape: dict[str, Any], cpu_ok: bool) -> list[int] | None:
    try:
        return measure_cost(problem, shape, "meta")
    except Exception:
        if not cpu_ok:
            return None
        try:
            return measure_cost(problem, shape, "cpu")
        except Exception:
            return None


def probe(path: Path, tolerance: tuple[float, float], limits: Limits = Limits()) -> dict[str, Any]:
    """Everything the task file needs, or ``{"error": why}``."""
    source = path.read_text()
    info: dict[str, Any] = {"sha256": hashlib.sha256(source.encode()).hexdigest(), "flags": []}
    try:
        ns: dict[str, Any] = {"__name__": "kernelbench_problem"}
        exec(compile(source, str(path), "exec"), ns)  # noqa: S102 - the user's own problem file
    except Exception as exc:
        return {**info, "error": f"the file does not run: {type(exc).__name__}: {str(exc)[:160]}"}
    missing = [a for a in ("Model", "get_inputs", "get_init_inputs") if a not in ns]
    if missing:
        return {**info, "error": "not a KernelBench problem: no " + ", ".join(missing)}
    names = find_sizes(source, ns)
    sizes = {n: int(ns[n]) for n in names}
    info["description"] = description(source, ns, f"KernelBench-format problem {path.stem}")
    info["size_names"] = names
    # A problem with no size still needs a named shape (the task format): one that changes nothing.
    own = dict(sizes) or {"as_written": 1}
    info["bench_shape"] = own
    try:
        problem = KernelBenchProblem(source, names, path.stem)
    except Exception as exc:
        return {**info, "error": f"the sizes cannot be rewritten: {type(exc).__name__}: {exc}"}
    bench_cost = _cost(problem, own, cpu_ok=False)
    if bench_cost is None:
        info["flags"].append("FLOPs/bytes at the problem's own size not measured (no meta run)")
    costs: dict[str, list[int]] = {}
    if bench_cost is not None:
        costs[shape_key(own)] = bench_cost
    tests: list[dict[str, Any]] = []
    fallback: list[tuple[dict[str, Any], list[str]]] = []
    scalable = scalable_sizes(problem, sizes, bench_cost is not None)
    fixed = [n for n, v in sizes.items() if v >= MIN_SCALED and n not in scalable]
    candidates = [{**sizes, **s} for s in scaled_shapes({n: sizes[n] for n in scalable})]
    if not candidates:
        info["flags"].append("no module-level size >= 16 read by get_inputs/get_init_inputs scales alone"
                             + (f" ({', '.join(fixed)} fixed by the model)" if fixed else ""))
    elif fixed:
        info["flags"].append(f"kept at the problem's value (the model fixes them): {', '.join(fixed)}")
    _derive(problem, sizes, candidates, limits, tolerance, tests, fallback)
    info["derived_shapes"] = len(tests)
    tests = three_tests(tests, fallback, own, bool(candidates), info["flags"])
    for s in tests:
        c = _cost(problem, s, cpu_ok=True)
        if c is not None:
            costs[shape_key(s)] = c
    info["test_shapes"] = tests
    info["costs"] = costs
    return info


def three_tests(tests: list[dict[str, Any]], fallback: list[tuple[dict[str, Any], list[str]]],
                own: dict[str, Any], scaled: bool, flags: list[str]) -> list[dict[str, Any]]:
    """At least three test shapes, smallest first: the derived ones that pass the gates, then ones that run
    but fail them, then other seeds at a shape already there, and the problem's own size when nothing scaled
    runs. Each stand-in is said in ``flags``."""
    tests = list(tests)
    if len(tests) < 3 and fallback:
        flags.append(f"only {len(tests)} scaled shape(s) pass the task gates; kept "
                     f"{min(3 - len(tests), len(fallback))} that run but fail them: {fallback[0][1][0]}")
        for shape, _ in fallback:
            if len(tests) < 3 and shape not in tests:
                tests.append(shape)
    if 0 < len(tests) < 3 and not fallback:
        flags.append(f"only {len(tests)} scaled shape(s) run and pass the gates: repeated with other seeds")
    if not tests:
        flags.append(("no scaled shape runs" if scaled else "nothing scaled") + ": tests run at the problem's own size")
        tests = [dict(own)]
    while len(tests) < 3:
        tests.append(dict(tests[-1]))  # other seeds at the same shape
    tests.sort(key=lambda s: sum(v for v in s.values()))
    return tests


def scalable_sizes(problem: KernelBenchProblem, sizes: dict[str, int], meta_ok: bool) -> list[str]:
    """The sizes >= 16 that can shrink alone (a quarter) with the reference still running on the meta device:
    a size the model also fixes elsewhere (an image side behind a hard-coded Linear) stays as written."""
    large = [n for n, v in sizes.items() if v >= MIN_SCALED]
    if not meta_ok:
        return large
    out = []
    for n in large:
        shape = {**sizes, n: max(min(sizes[n], _floor(n)), round(sizes[n] / 4))}
        if _cost(problem, shape, cpu_ok=False) is not None:
            out.append(n)
    return out


def _derive(problem: KernelBenchProblem, sizes: dict[str, int], candidates: list[dict[str, Any]], limits: Limits,
            tolerance: tuple[float, float], tests: list[dict[str, Any]],
            fallback: list[tuple[dict[str, Any], list[str]]]) -> None:
    """Add to ``tests`` (up to 3) the candidate shapes, biggest within each budget first, that pass."""
    measured = [(s, _cost(problem, s, cpu_ok=False)) for s in candidates]  # never a big shape on the CPU
    picks: list[dict[str, Any]] = []
    if all(c is None for _, c in measured):  # no meta run: the smallest shapes, each under the time limit
        picks = list(reversed(candidates))[:4]
    for elems, flops in BUDGETS:
        fit = [s for s, c in measured if c is not None and c[1] + c[2] // 8 <= elems and c[0] <= flops]
        for s in fit:
            if s not in picks:
                picks.append(s)
                break
    top_elems, top_flops = BUDGETS[-1]
    small = [s for s, c in reversed(measured) if c is not None and s not in picks
             and c[1] <= 4 * top_elems and c[0] <= 4 * top_flops]
    picks += small or [s for s, c in reversed(measured) if c is not None][:1]  # smallest next; else one try
    for shape in picks[:5]:
        if len(tests) >= 3:
            break
        for variant in dict.fromkeys(map(shape_key, (odd(shape, sizes), shape))):
            variant = json.loads(variant)
            if variant in tests:
                break
            verdict, why = check_shape(problem, variant, limits, tolerance)
            if verdict == "ok":
                tests.append(variant)
                break
            if verdict == "gates":
                fallback.append((variant, why))



def serve() -> int:
    """One JSON request per stdin line ({"path", "tolerance"}), one JSON answer per stdout line."""
    torch.set_num_threads(1)
    out = sys.stdout
    sys.stdout = sys.stderr  # a problem's prints must not corrupt the answers
    from multikernelbench.tasks import gates, module  # noqa: F401 - imported before the first clock starts

    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            ans = probe(Path(req["path"]), tuple(req["tolerance"]), Limits(forward_s=req.get("forward_s", 2.0)))
        except Exception as exc:  # noqa: BLE001 - every problem gets an answer
            ans = {"error": f"import failed: {type(exc).__name__}: {str(exc)[:200]}"}
        out.write(json.dumps(ans) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
