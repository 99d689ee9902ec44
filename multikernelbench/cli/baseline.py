"""``mkb baseline``: time every task's reference (eager and torch.compile) through the engine.

    mkb baseline --backend cuda --out ~/mkb/baseline_cuda_h200.jsonl [--budget-s 540] [--shard 0/2]

Each task's reference runs in a worker like a candidate's device stage (``EngineConfig.reference_only``):
the same timer, the same fresh inputs per timed call, ``torch.compile`` in its own request with its own
timeout (a compile that fails or hangs leaves the eager time and a ``compile_error``). Results go to the
engine's results store (``--db``; a rerun skips what it holds) and one JSON line per task to ``--out`` as
each task finishes (tasks already there are skipped, so a run split over several sessions continues where
it stopped). ``--budget-s`` stops starting new tasks after that many seconds, to fit a bounded session.

Throughput: ``--lanes-per-gpu`` workers per GPU take turns on it (one device lock around timing; never
two clocks at once) while the others start and run their ``torch.compile``, which is CPU work and was 94 %
of a task's device-stage time on the H200 (compile p50 6.1 s with a warm cache, timing p50 0.4 s).
``--warmup-workers N`` additionally compiles references ahead in the build pool into a shared inductor
cache (engine/warmup.py); measured, that saves only ~1/3 of the device-stage compile, so it is off by
default.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.flags import FlagKind, of_kind
from multikernelbench.records import EvalResult, Status

DEFAULT_DIR = Path.home() / ".cache" / "multikernelbench"


def add_parser(sub) -> None:
    p = sub.add_parser("baseline", help="time every task's reference (eager and torch.compile)")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--out", type=Path, default=None,
                   help=f"JSONL results file (appended; default {DEFAULT_DIR}/baseline_<backend>.jsonl; the "
                   "committed reference-GPU baseline that `mkb report` reads is "
                   "multikernelbench/baselines/cuda_h200.jsonl)")
    p.add_argument("--db", type=Path, default=None, help="results store (default beside --out, .sqlite)")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--task", action="append", dest="task_ids", help="only these task ids (repeatable)")
    p.add_argument("--budget-s", type=float, default=0.0, help="stop starting tasks after this many seconds")
    p.add_argument("--shard", default="0/1", help="K/N: only every N-th task starting at K")
    p.add_argument("--no-compile", action="store_true", help="eager only")
    p.add_argument("--timing-budget-s", type=float, default=1.0, help="wall budget per timed callable")
    p.add_argument("--warmup-s", type=float, default=None,
                   help="seconds of back-to-back warm-up calls before sampling (default: the timer's own)")
    p.add_argument("--compile-timeout-s", type=float, default=300.0,
                   help="seconds for one reference's torch.compile; past it the task is timed eager only")
    p.add_argument("--lanes-per-gpu", type=int, default=6,
                   help="device workers per GPU taking turns on it (their untimed steps overlap)")
    p.add_argument("--warmup-workers", type=int, default=0,
                   help="concurrent torch.compile warm-ups ahead of timing into a shared cache (0 = none)")
    p.add_argument("--max-runs", type=int, default=100, help="timed calls per callable at most")
    p.add_argument("--trace", type=Path, default=None, help="append one line per warm-up/device phase here")
    p.add_argument("--gpus", default=None, help="comma-separated GPU indices (default: all visible)")
    p.add_argument("--build-root", type=Path, default=None)
    p.add_argument("--seed", type=int, default=None)
    from multikernelbench.cli._heldout import add_task_set_option

    add_task_set_option(p)  # e.g. an imported KernelBench-format folder (docs/bring_your_own.md)
    p.set_defaults(func=run)


def _done_ids(path: Path) -> set[str]:
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                done.add(json.loads(line)["task_id"])
            except (ValueError, KeyError):
                continue
    return done


def provenance() -> dict[str, str]:
    """When and by which harness a row was measured (the commit is read from git where the checkout has one;
    a copied tree without .git, such as the device machine's, passes it as MKB_COMMIT)."""
    import os

    from multikernelbench import __version__

    commit = os.environ.get("MKB_COMMIT", "")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=Path(__file__).parent, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = ""
    return {"measured_on": datetime.date.today().isoformat(), "mkb_version": __version__,
            "mkb_commit": commit or "unknown"}


def _both_ends(text: str) -> str:
    """A message cut to fit a row: the exception's own message is at the end of a traceback, so keep both ends."""
    return text if len(text) <= 1200 else f"{text[:300]} [...] {text[-900:]}"


def row(task, r: EvalResult, on_cpu: bool, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One baseline line (the format `mkb report` and the committed baseline files use)."""
    from multikernelbench.roofline import roofline_fraction

    flops, nbytes = task.costs_for_timing(on_cpu)
    out: dict[str, Any] = {"task_id": task.id, "task_hash": task.content_hash, "backend": r.backend,
                           "hardware": r.hardware, "dtype": task.dtype, "shape": r.timing_shape
                           or task.shape_for_timing(on_cpu), "flops": flops, "bytes": nbytes,
                           **(extra or {})}
    if r.status != Status.CORRECT:
        msg = f"{r.status.value}: {r.message}"
        out["error"] = _both_ends(msg)
        return out
    if r.compile_time_s is not None:
        out["warmup_s"] = round(r.compile_time_s, 2)  # the ahead-of-time torch.compile (engine/warmup.py)
    for name, st in (("eager", r.eager_timing), ("compiled", r.compile_timing)):
        if st is not None:
            out[name] = vars(st)
            out[f"{name}_roofline_fraction"] = roofline_fraction(r.hardware, task.dtype, flops, nbytes, st.median_ms)
    if r.compile_timing is not None and r.eager_timing is not None:
        out["compile_speedup"] = r.eager_timing.median_ms / r.compile_timing.median_ms
    problems = of_kind(r.flags, FlagKind.NO_COMPILE_BASELINE)
    if problems:
        out["compile_error"] = _both_ends(problems[0].text)
    # Not listed: the compile failure has its own field; the other two say how the run went, not what the
    # reference's timing is worth.
    routine = {FlagKind.NO_COMPILE_BASELINE, FlagKind.FRESH_INPUTS, FlagKind.REFERENCE_WARMUP_FAILED}
    other = [f.text for f in r.flags if f.kind not in routine]
    if other:
        out["flags"] = other
    return out


def run(args) -> int:
    from multikernelbench.backends.registry import get_backend
    from multikernelbench.engine.runner import Runner, reference_candidates
    from multikernelbench.store import ResultStore
    from multikernelbench.tasks import load_suite

    t_start = time.perf_counter()
    backend = get_backend(args.backend)
    avail = backend.availability()
    if not avail.ok:
        print(f"backend {args.backend} unavailable: {avail.reason}", file=sys.stderr)
        return 2
    out = args.out or DEFAULT_DIR / f"baseline_{args.backend}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    db = args.db or out.with_suffix(".sqlite")
    try:
        k, n = (int(x) for x in args.shard.split("/"))
    except ValueError:
        k, n = -1, 0
    if not 0 <= k < n:
        print(f"--shard {args.shard}: need K/N with 0 <= K < N", file=sys.stderr)
        return 2
    if getattr(args, "task_set", "suite") != "suite":
        from multikernelbench.tasks.heldout.sets import load_task_set

        tasks = load_task_set(args.task_set, categories=args.category, ids=args.task_ids)[k::n]
    else:
        tasks = load_suite(categories=args.category, ids=args.task_ids)[k::n]  # interleaved: a mix per shard
    done = _done_ids(out)
    todo = [t for t in tasks if t.id not in done]
    print(f"{len(tasks)} tasks, {len(tasks) - len(todo)} already in {out}, {len(todo)} to do", flush=True)
    gpus = tuple(int(g) for g in args.gpus.split(",")) if args.gpus else None
    # The budget counts from this command's start; one spent before the engine starts starts nothing (the
    # engine's own cutoff counts from its pipeline's start, and a task could slip in within a millisecond).
    remaining = args.budget_s - (time.perf_counter() - t_start) if args.budget_s else None
    cfg = EngineConfig(backend=args.backend, reference_only=True, allow_code_execution=True, seed=args.seed,
                       allow_weak_sandbox=True,  # suite references only: no untrusted code
                       lanes_per_gpu=args.lanes_per_gpu, compile_workers=args.warmup_workers, gpus=gpus,
                       reference_warmup=args.warmup_workers > 0,
                       stop_after_s=max(1e-3, remaining) if remaining is not None else 0.0,
                       timing=TimingConfig(warmup=2, warmup_s=args.warmup_s, min_runs=5, max_runs=args.max_runs, budget_s=args.timing_budget_s,
                                           compile_baseline=not args.no_compile,
                                           compile_baseline_timeout_s=args.compile_timeout_s))
    if args.build_root:
        cfg.build_root = args.build_root
    cfg.trace_path = args.trace
    by_id = {t.id: t for t in todo}
    extra = {**provenance(), "lanes_per_gpu": args.lanes_per_gpu}  # lanes that shared the GPU while this ran
    counts = {"done": 0}

    def write(r: EvalResult, _cand) -> None:
        task = by_id[r.task_id]
        line = row(task, r, backend.times_on_cpu_shape, extra)
        with out.open("a") as fh:  # one line as each task finishes: a killed run keeps what it measured
            fh.write(json.dumps(line, sort_keys=True) + "\n")
        counts["done"] += 1
        e = (line.get("eager") or {}).get("median_ms")
        c = (line.get("compiled") or {}).get("median_ms")
        print(f"[{time.perf_counter() - t_start:6.0f}s] {task.id:50s} eager {e} ms  compiled {c} ms "
              f"{line.get('error', '')[:120]}{line.get('compile_error', '')[:100]}", flush=True)

    if todo and (remaining is None or remaining > 0):
        with ResultStore(db) as store:
            Runner(cfg, store, on_result=write, progress=False).evaluate(todo, reference_candidates(todo))
    print(f"measured {counts['done']}; {len(todo) - counts['done']} remaining; results in {out} "
          f"({time.perf_counter() - t_start:.0f} s)", flush=True)
    return 0
