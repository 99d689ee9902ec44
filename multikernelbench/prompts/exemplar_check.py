"""A direct correctness check of exemplar solutions, for platforms the engine cannot run on this machine.

The evaluation engine is the judge wherever its backend is available (the CPU exemplars are evaluated by
it in the tests). Triton and Pallas exemplars can additionally be checked without a GPU in their
interpreters (``TRITON_INTERPRET=1``, ``interpret=True``), which the engine's GPU backends do not offer;
this module runs reference and solution side by side on the reference's test shapes for that purpose.
Run it in a fresh process so the interpreter switch is set before triton is imported::

    TRITON_INTERPRET=1 python -m multikernelbench.prompts.exemplar_check --backend triton
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
import types
from pathlib import Path

import torch

from multikernelbench.prompts.exemplars import all_exemplars
from multikernelbench.tasks.module import make_inputs, make_model, materialize


def _flatten(out) -> list[torch.Tensor]:
    return [out] if isinstance(out, torch.Tensor) else [t for o in out for t in _flatten(o)]


def check(ex, device: str = "cpu") -> list[str]:
    """Problems found (empty = every test shape and seed matched the reference within tolerance)."""
    task = ex.task()
    ref_mod = materialize(task)
    # A real file, as the engine does: @triton.jit reads its kernel's source back through inspect.
    folder = Path(tempfile.mkdtemp(prefix="mkb-exemplar-"))
    path = folder / f"exemplar_{ex.backend}_{ex.category}.py"
    path.write_text(ex.solution)
    sol = types.ModuleType(path.stem)
    sol.__file__ = str(path)
    sys.modules[path.stem] = sol
    try:
        exec(compile(ex.solution, str(path), "exec"), sol.__dict__)  # noqa: S102 - our own exemplar
    except Exception:
        return [f"import failed:\n{traceback.format_exc(limit=3)}"]
    problems = []
    for i, shape in enumerate(task.test_shapes):
        ref = make_model(ref_mod.Model, ref_mod, shape, 0, task.dtype, device)
        new = make_model(sol.ModelNew, ref_mod, shape, 0, task.dtype, device)
        for seed in range(task.seeds_per_shape):
            inputs = make_inputs(ref_mod, shape, 1000 * i + seed, task.dtype, device)
            originals = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            with torch.no_grad():
                want = _flatten(ref(*inputs))
                try:
                    got = _flatten(new(*inputs))
                except Exception:
                    problems.append(f"shape {shape}: raised\n{traceback.format_exc(limit=3)}")
                    continue
            for x, y in zip(inputs, originals):
                if isinstance(x, torch.Tensor) and not torch.equal(x, y):
                    problems.append(f"shape {shape}: modified an input")
            if len(got) != len(want):
                problems.append(f"shape {shape}: {len(got)} outputs, expected {len(want)}")
                continue
            for j, (g, w) in enumerate(zip(got, want)):
                if g.shape != w.shape or g.dtype != w.dtype:
                    problems.append(f"shape {shape} output {j}: got {tuple(g.shape)} {g.dtype}, "
                                    f"expected {tuple(w.shape)} {w.dtype}")
                elif not torch.allclose(g.cpu(), w.cpu(), atol=task.atol, rtol=task.rtol):
                    err = (g.cpu() - w.cpu()).abs().max().item()
                    problems.append(f"shape {shape} output {j}: max abs error {err:.3g}")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", required=True)
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    # What the backend's worker does before a candidate loads on this machine (e.g. helion's interpreter
    # support for libdevice math), so exemplars are checked as the engine would run them.
    from multikernelbench.backends.registry import get_backend

    prepare = getattr(get_backend(args.backend), "prepare_worker", None)
    if prepare is not None:
        prepare()
    failed = 0
    for ex in all_exemplars(args.backend):
        if args.category and ex.category not in args.category:
            continue
        problems = check(ex, args.device)
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'ok  '} {ex.backend}/{ex.category}", flush=True)
        for prob in problems[:3]:
            print("    " + prob.replace("\n", "\n    "), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Every verdict is printed; skip interpreter teardown, where XLA's runtime threads sometimes abort
    # ("terminate called without an active exception", SIGABRT) after a run of Pallas exemplars.
    os._exit(code)
