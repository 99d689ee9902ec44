"""One candidate evaluated KernelBench-style in its own process (``throughput_bench.py _kb_eval SPEC``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .common import RESULT


def _outputs(x) -> list:
    import torch

    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out += _outputs(v)
        return out
    return [x]


def _compare(ref, new, atol: float, rtol: float) -> str:
    """'' when the outputs match (KernelBench: shape check, then allclose), else why not."""
    import torch

    r, c = _outputs(ref), _outputs(new)
    if len(r) != len(c):
        return f"{len(c)} outputs, expected {len(r)}"
    for i, (a, b) in enumerate(zip(r, c, strict=True)):
        if not isinstance(a, torch.Tensor):
            continue
        if not isinstance(b, torch.Tensor):
            return f"output {i} is {type(b).__name__}, not a tensor"
        if tuple(a.shape) != tuple(b.shape):
            return f"output {i} shape {tuple(b.shape)}, expected {tuple(a.shape)}"
        a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
        if not torch.allclose(b64, a64, atol=atol, rtol=rtol):
            err = (b64 - a64).abs().max().item()
            return f"output {i} differs: max abs error {err:.3g}"
    return ""


def kb_eval_child(spec_path: str) -> int:
    """One candidate, KernelBench-style: load, 5 correctness trials, CUDA-event (or host-clock) timing."""
    t_start = time.perf_counter()
    spec = json.loads(Path(spec_path).read_text())
    import torch

    from multikernelbench.tasks.module import exec_source, make_inputs, make_model

    task, backend = spec["task"], spec["backend"]
    on_gpu = backend == "cuda"
    device = torch.device("cuda", 0) if on_gpu else torch.device("cpu")
    phases: dict[str, float] = {"import": time.perf_counter() - t_start}
    res: dict = {"label": spec["label"]}

    def finish(status: str, message: str = "") -> int:
        res.update(status=status, message=message, phases_s={k: round(v, 3) for k, v in phases.items()})
        print(RESULT + json.dumps(res), flush=True)
        return 0

    if on_gpu and task["dtype"] == "float32":  # fp32 means fp32 on both sides, as the engine checks it
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    t0 = time.perf_counter()
    try:
        ns: dict = {"__name__": "kb_eval_candidate"}
        exec(compile(Path(spec["path"]).read_text(), spec["path"], "exec"), ns)  # noqa: S102
        model_new_cls = ns["ModelNew"]
    except BaseException as exc:
        phases["load"] = time.perf_counter() - t0
        return finish("runtime_error", f"loading: {type(exc).__name__}: {str(exc)[-300:]}")
    phases["load"] = time.perf_counter() - t0
    mod = exec_source(task["source"], task["id"])
    dtype, atol, rtol = task["dtype"], float(task["atol"]), float(task["rtol"])
    seed = int(spec.get("seed", 42))

    def sync() -> None:
        if on_gpu:
            torch.cuda.synchronize(device)

    # ---- correctness: 5 trials over the test shapes; models built with one seed, inputs with one per trial ----
    t0 = time.perf_counter()
    trials = 5
    with torch.no_grad():
        for trial in range(trials):
            shape = task["test_shapes"][trial % len(task["test_shapes"])]
            try:
                inputs = make_inputs(mod, shape, seed + 1000 + trial, dtype, device)
                ref = make_model(mod.Model, mod, shape, seed, dtype, device)
                expect = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                sync()
            except BaseException as exc:  # the harness's own reference failed: not the candidate's fault
                phases["correctness"] = time.perf_counter() - t0
                return finish("harness_error", f"reference: {exc!r}"[:300])
            try:
                new = make_model(model_new_cls, mod, shape, seed, dtype, device)
                got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                sync()
            except BaseException as exc:
                phases["correctness"] = time.perf_counter() - t0
                return finish("runtime_error", f"trial {trial}: {type(exc).__name__}: {str(exc)[-300:]}")
            why = _compare(expect, got, atol, rtol)
            if why:
                phases["correctness"] = time.perf_counter() - t0
                return finish("incorrect", f"trial {trial} shape {shape}: {why}")
    phases["correctness"] = time.perf_counter() - t0
    # ---- timing on the bench shape: 3 warm-up calls, 100 timed calls each, mean (KernelBench) ----
    t0 = time.perf_counter()
    shape = task["bench_shape"] if on_gpu else task["cpu_bench_shape"]

    def time_calls(fn, args, warmup: int = 3, n: int = 100) -> list[float]:
        for _ in range(warmup):
            fn(*args)
            sync()
        times = []
        for _ in range(n):
            if on_gpu:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(*args)
                end.record()
                torch.cuda.synchronize(device)
                times.append(start.elapsed_time(end))
            else:
                s = time.perf_counter()
                fn(*args)
                times.append((time.perf_counter() - s) * 1e3)
        return times

    try:
        with torch.no_grad():
            inputs = make_inputs(mod, shape, seed, dtype, device)
            new = make_model(model_new_cls, mod, shape, seed, dtype, device)
            cand = time_calls(new, inputs)
            del new
            ref = make_model(mod.Model, mod, shape, seed, dtype, device)
            refs = time_calls(ref, inputs)
    except BaseException as exc:
        phases["timing"] = time.perf_counter() - t0
        return finish("runtime_error", f"timing: {type(exc).__name__}: {str(exc)[-300:]}")
    phases["timing"] = time.perf_counter() - t0
    cand_ms, ref_ms = sum(cand) / len(cand), sum(refs) / len(refs)
    res.update(cand_ms=cand_ms, ref_ms=ref_ms, speedup=ref_ms / cand_ms if cand_ms > 0 else None)
    phases["total"] = time.perf_counter() - t_start
    return finish("correct")
