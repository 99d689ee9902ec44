"""``mkb baseline``: time every task's reference (eager and torch.compile) on a backend's timing shape.

    mkb baseline --backend cuda --out benchmarks/baseline_cuda_h200.jsonl [--budget-s 540]

Resumable: one JSON line per task is appended as soon as it is measured, and tasks already in the file
are skipped, so a run split over several sessions (or killed) continues where it stopped. ``--budget-s``
stops starting new work after that many seconds, to fit a bounded session.

Eager and compiled references are timed by the backend's own timer (CUDA events on a GPU, multikernelbench.timing), in one
A/B-interleaved ``measure`` call, so clock drift hits both alike. ``torch.compile`` is the slow part
(inductor codegen on the CPU); with ``--precompile-workers N`` each chunk of tasks is first compiled by N
spawned processes that fill a shared inductor cache (the GPU is used only for their single warm-up
forward), and then timed one task at a time in this process, which then compiles from that cache. The
two phases never overlap: another process' kernels on the GPU would be inside this one's clock.
A task that fails (eager error, out of memory) gets a line with ``error`` and the reason; a
``torch.compile`` failure keeps the eager time and records ``compile_error``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def add_parser(sub) -> None:
    p = sub.add_parser("baseline", help="time every task's reference (eager and torch.compile)")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--out", help="JSONL results file (appended; default benchmarks/baseline_<backend>.jsonl)")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--task", action="append", help="only these task ids (repeatable)")
    p.add_argument("--budget-s", type=float, default=0.0, help="stop starting tasks after this many seconds")
    p.add_argument("--shard", default="0/1", help="K/N: only every N-th task starting at K (one process per GPU)")
    p.add_argument("--no-compile", action="store_true", help="eager only")
    p.add_argument("--precompile-workers", type=int, default=0, help="parallel torch.compile warm-up processes")
    p.add_argument("--chunk", type=int, default=0, help="tasks per precompile chunk (default 2x workers)")
    p.add_argument("--timing-budget-s", type=float, default=1.0, help="wall budget per timed callable")
    p.add_argument("--inductor-cache", default=None, help="TORCHINDUCTOR_CACHE_DIR shared with workers")
    p.add_argument("--precompile-timeout-s", type=float, default=240.0,
                   help="a chunk's precompile phase ends after this; unfinished tasks are timed eager only")
    p.add_argument("--precompile-threads", type=int, default=2,
                   help="inductor compile threads per precompile worker (N workers x all cores exhausted memory)")
    p.set_defaults(func=run)


def _done_ids(path: Path) -> set[str]:
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                done.add(json.loads(line)["task_id"])
            except Exception:
                continue
    return done


def _build(task, on_cpu: bool, device) -> tuple[Any, list[list[Any]], dict]:
    from multikernelbench.tasks.module import make_inputs, make_model, materialize

    mod = materialize(task)
    shape = task.shape_for_timing(on_cpu)
    model = make_model(mod.Model, mod, shape, 1234, task.dtype, device)
    sets = [make_inputs(mod, shape, 1000 + k, task.dtype, device) for k in range(2)]
    return model, sets, shape


def _precompile_init(threads: int) -> None:
    """In each spawned precompile worker, before torch is imported there."""
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(threads)


def _precompile_chunk(executor, make_executor, payloads: list[dict], timeout_s: float) -> tuple[dict, Any]:
    """Precompile a chunk in a process pool that survives a worker's death or a compile that never ends.

    ``multiprocessing.Pool`` waits forever for a task whose worker died (seen on the H200: whole chunks
    hung until the session's limit). Here a dead worker breaks the pool, which is replaced; the tasks it
    took with it are retried one at a time, and a task still unfinished at the deadline is given up
    (its reference is then timed eager only, with the reason recorded)."""
    from concurrent.futures import wait
    from concurrent.futures.process import BrokenProcessPool

    executor = executor or make_executor()
    results: dict[str, dict] = {}
    futures = {executor.submit(_precompile_one, p): p for p in payloads}
    done, pending = wait(futures, timeout=timeout_s)
    retry = []
    for f in done:
        tid = futures[f]["task"]["id"]
        try:
            results[tid] = f.result()
        except BrokenProcessPool:
            retry.append(futures[f])
        except Exception as exc:  # noqa: BLE001
            results[tid] = _failed(tid, f"{type(exc).__name__}: {exc}", abandoned=False)
    for f in pending:
        tid = futures[f]["task"]["id"]
        results[tid] = _failed(tid, f"precompile did not finish within {timeout_s:.0f} s", seconds=timeout_s)
    if pending or retry:
        _kill_executor(executor)
        for p in retry:  # alone, so a crash is attributed to the task that caused it
            executor = make_executor(1)
            f = executor.submit(_precompile_one, p)
            tid = p["task"]["id"]
            try:
                results[tid] = f.result(timeout=timeout_s)
            except BrokenProcessPool:
                results[tid] = _failed(tid, "precompile worker died (crash or killed for memory)")
            except Exception as exc:  # noqa: BLE001 - includes the timeout
                results[tid] = _failed(tid, f"precompile failed: {type(exc).__name__}: {exc}")
            _kill_executor(executor)
        executor = None
    return results, executor


def _failed(task_id: str, error: str, *, abandoned: bool = True, seconds: float | None = None) -> dict:
    """A precompile record for a task that did not compile; ``abandoned`` ones are then timed eager only."""
    return {"task_id": task_id, "ok": False, "abandoned": abandoned, "seconds": seconds, "error": error[:300]}


def _kill_executor(executor) -> None:
    for proc in list(getattr(executor, "_processes", {}).values()):
        try:
            proc.kill()
        except Exception:  # noqa: BLE001
            pass
    executor.shutdown(wait=False, cancel_futures=True)


def _precompile_one(payload: dict) -> dict:
    """In a spawned worker: compile one task's reference once so the inductor cache holds it."""
    import torch

    from multikernelbench.tasks import Task

    task = Task.from_row(payload["task"])
    t0 = time.perf_counter()
    try:
        model, sets, _ = _build(task, payload["on_cpu"], torch.device(payload["device"]))
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(*sets[0])
        if payload["device"] != "cpu":
            torch.cuda.synchronize()
        ok, err = True, ""
    except Exception as exc:
        ok, err = False, f"{type(exc).__name__}: {exc}"[:500]
    finally:
        torch._dynamo.reset()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return {"task_id": task.id, "ok": ok, "error": err, "seconds": time.perf_counter() - t0}


def _measure(task, backend, args, hardware: str, skip_compile: str = "") -> dict:
    import torch

    from multikernelbench.engine.config import TimingConfig
    from multikernelbench.roofline import roofline_fraction

    on_cpu = backend.times_on_cpu_shape
    dev = backend.device()
    row: dict[str, Any] = {"task_id": task.id, "task_hash": task.content_hash, "backend": backend.name,
                           "hardware": hardware, "dtype": task.dtype}
    try:
        model, sets, shape = _build(task, on_cpu, dev)
        flops, nbytes = task.costs_for_timing(on_cpu)
        row.update(shape=shape, flops=flops, bytes=nbytes)
        fns = {"eager": lambda i: model(*sets[i % 2])}
        if skip_compile:
            row["compile_error"] = skip_compile
        elif not args.no_compile:
            t0 = time.perf_counter()
            try:
                compiled = torch.compile(model)
                with torch.no_grad():
                    compiled(*sets[0])
                backend.synchronize()
                fns["compiled"] = lambda i: compiled(*sets[i % 2])
            except Exception as exc:
                row["compile_error"] = f"{type(exc).__name__}: {exc}"[:800]
            row["compile_s"] = time.perf_counter() - t0
        cfg = TimingConfig(warmup=2, min_runs=5, max_runs=100, target_rse=0.01, budget_s=args.timing_budget_s)
        with torch.no_grad():
            stats = backend.make_timer(cfg).measure(fns)
        for name, st in stats.items():
            row[name] = vars(st)
            row[f"{name}_roofline_fraction"] = roofline_fraction(hardware, task.dtype, flops, nbytes, st.median_ms)
        if "compiled" in stats:
            row["compile_speedup"] = stats["eager"].median_ms / stats["compiled"].median_ms
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"[:800]
        row["traceback"] = traceback.format_exc()[-1500:]
    finally:
        torch._dynamo.reset()
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return row


def run(args) -> int:
    from multikernelbench.backends.registry import get_backend
    from multikernelbench.tasks import load_suite

    t_start = time.perf_counter()
    backend = get_backend(args.backend)
    avail = backend.availability()
    if not avail.ok:
        print(f"backend {args.backend} unavailable: {avail.reason}", file=sys.stderr)
        return 2
    out = Path(args.out or f"benchmarks/baseline_{args.backend}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = load_suite(categories=args.category)
    if args.task:
        tasks = [t for t in tasks if t.id in set(args.task)]
    k, n = (int(x) for x in args.shard.split("/"))
    if not 0 <= k < n:
        print(f"--shard {args.shard}: need 0 <= K < N", file=sys.stderr)
        return 2
    tasks = tasks[k::n]  # interleaved, so every shard gets a mix of cheap and expensive categories
    done = _done_ids(out)
    todo = [t for t in tasks if t.id not in done]
    print(f"{len(tasks)} tasks, {len(done & {t.id for t in tasks})} already in {out}, {len(todo)} to do",
          flush=True)
    if args.inductor_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = args.inductor_cache  # inherited by spawned workers
    import torch

    hardware = backend.hardware()
    dev = backend.device()
    workers = 0 if args.no_compile else args.precompile_workers
    chunk = args.chunk or max(1, 2 * workers) if workers else 1
    executor = None

    def make_executor(n: int = workers):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(n, mp_context=mp.get_context("spawn"), initializer=_precompile_init,
                                   initargs=(args.precompile_threads,))

    n_done = 0
    try:
        for c0 in range(0, len(todo), chunk):
            if args.budget_s and time.perf_counter() - t_start > args.budget_s:
                break
            part = todo[c0:c0 + chunk]
            pre = {}
            if workers:
                payloads = [{"task": t.to_row(), "on_cpu": backend.times_on_cpu_shape, "device": str(dev)}
                            for t in part]
                pre, executor = _precompile_chunk(executor, make_executor, payloads, args.precompile_timeout_s)
            for t in part:
                if args.budget_s and time.perf_counter() - t_start > args.budget_s:
                    break
                skip = ""
                if pre.get(t.id, {}).get("abandoned"):  # compiling it here could hang or kill this process
                    skip = "not compiled: " + pre[t.id]["error"]
                row = _measure(t, backend, args, hardware, skip)
                if t.id in pre:
                    row["precompile_s"] = pre[t.id]["seconds"]
                    if not pre[t.id]["ok"]:
                        row["precompile_error"] = pre[t.id]["error"]
                with out.open("a") as fh:
                    fh.write(json.dumps(row, sort_keys=True) + "\n")
                n_done += 1
                e = row.get("eager", {}).get("median_ms")
                c = row.get("compiled", {}).get("median_ms") if row.get("compiled") else None
                print(f"[{time.perf_counter() - t_start:6.0f}s] {t.id:50s} eager {e if e is None else round(e, 4)} ms"
                      f"  compiled {c if c is None else round(c, 4)} ms {row.get('error', '')[:120]}"
                      f"{(' compile_error: ' + row['compile_error'][:100]) if 'compile_error' in row else ''}",
                      flush=True)
    finally:
        if executor is not None:
            _kill_executor(executor)
    remaining = len(todo) - n_done
    print(f"measured {n_done}; {remaining} remaining; results in {out}", flush=True)
    del torch
    return 0
