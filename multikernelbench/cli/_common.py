"""Options and output shared by the subcommands that run the engine (eval, demo)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.records import EvalResult, Status


def add_engine_options(p) -> None:
    p.add_argument("--backend", default="cpu", help="platform to evaluate on (see `mkb backends`)")
    p.add_argument("--db", default="results.sqlite", help="SQLite results store (resumes from it)")
    p.add_argument("--task", action="append", dest="task_ids", help="only these task ids (repeatable)")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--build-root", type=Path, default=None, help="build cache (default ~/.cache/multikernelbench)")
    p.add_argument("--build-cache-gb", type=float, default=20.0,
                   help="at the run's end, remove the least recently used candidates' build folders beyond this "
                        "many GB (0 = no cap; `mkb cache prune` on demand)")
    p.add_argument("--compile-workers", type=int, default=0,
                   help="concurrent builds (default 0 = the engine's build gate: cores / the cores one build is "
                        "measured to keep busy, engine/build_gate.py)")
    p.add_argument("--build-cores-estimate", type=float, default=0.0, metavar="CORES",
                   help="cores one build is taken to keep busy until builds are measured (the gate's first wave; "
                        "default 0 = the backend's own figure)")
    p.add_argument("--no-build-rank-nice", action="store_true",
                   help="run every build at the same nice instead of one step nicer per build already running "
                        "as it enters (engine/build_stage.py)")
    p.add_argument("--no-worker-prefetch", action="store_true",
                   help="keep everything of a candidate's device stage in its own turn: no next worker started "
                        "while the one before is checked (engine/prefetch.py), no clean reference worker started "
                        "or timing-shape models made before the clock turn, no verification reference computed "
                        "while the worker ends its timing (engine/verify_ahead.py); the A/B baseline for issue #44")
    p.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option (repeatable), e.g. pch=false, pch_root=DIR, split_nvcc=false")
    p.add_argument("--gpus", default=None,
                   help="comma-separated GPU indices to spread the device stage over (default: all)")
    p.add_argument("--lanes-per-gpu", type=int, default=None,
                   help="candidates in a GPU's device stage at once: checks side by side, every clock alone "
                        "(0 = from the GPUs' free memory and the cores, docs/lanes.md; 1 = one at a time; "
                        "default: the backend's, 0 for cuda, 1 elsewhere)")
    p.add_argument("--compile-timeout", type=float, default=300.0, help="seconds per candidate build")
    p.add_argument("--policy", choices=["mkb", "kernelbench"], default="mkb",
                   help="mkb (default): the compute must run in the candidate's own kernel; kernelbench: PyTorch "
                        "ops allowed in forward, every other defence on (stored on every result)")
    p.add_argument("--run-timeout", type=float, default=120.0, help="seconds per worker request")
    p.add_argument("--candidate-timeout", type=float, default=900.0,
                   help="seconds for one candidate's whole device stage (load, every check, timing); 0 = no cap")
    p.add_argument("--threads", type=int, default=0, help="threads for CPU kernels and references (0 = all)")
    p.add_argument("--no-timing", action="store_true", help="correctness only")
    p.add_argument("--compile-baseline", action="store_true", help="also time torch.compile of the reference")
    p.add_argument("--adaptive-timing", action="store_true",
                   help="stop timing a candidate once its speedup's interval clears alpha 1.0 and is within 5%% "
                        "(timing/stopping.py; off: each callable stops by its own precision)")
    p.add_argument("--timing-budget-s", "--timing-budget", dest="timing_budget_s", type=float, default=5.0,
                   help="seconds of timing per callable")
    p.add_argument("--seed", type=int, default=None, help="deterministic seeds (default: fresh secret seeds)")
    p.add_argument("--json", action="store_true", help="print one JSON line per result on stdout")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--trace", type=Path, default=None, help="append a timestamped line per phase to this file")
    p.add_argument("--allow-weak-sandbox", action="store_true",
                   help="run untrusted code even where the kernel lacks Landlock or seccomp (see `mkb backends`; "
                        "results record the sandbox level)")


def engine_config(args, allow: bool) -> EngineConfig:
    cfg = EngineConfig(
        backend=args.backend, compile_workers=args.compile_workers, compile_timeout_s=args.compile_timeout,
        run_timeout_s=args.run_timeout, candidate_timeout_s=args.candidate_timeout, threads=args.threads,
        skip_timing=args.no_timing, seed=args.seed,
        allow_code_execution=allow, allow_weak_sandbox=getattr(args, "allow_weak_sandbox", False),
        timing=TimingConfig(compile_baseline=args.compile_baseline, budget_s=args.timing_budget_s,
                            adaptive=getattr(args, "adaptive_timing", False)))
    cfg.build_cores_estimate = getattr(args, "build_cores_estimate", 0.0) or 0.0
    cfg.prefetch_workers = not getattr(args, "no_worker_prefetch", False)
    cfg.lanes_per_gpu = getattr(args, "lanes_per_gpu", None)
    cfg.build_rank_nice = not getattr(args, "no_build_rank_nice", False)
    cfg.backend_options = parse_backend_options(getattr(args, "backend_option", []) or [])
    check_options(cfg.backend, cfg.backend_options)
    if getattr(args, "gpus", None):
        cfg.gpus = tuple(int(g) for g in str(args.gpus).split(",") if g.strip())
    if args.build_root:
        cfg.build_root = args.build_root
    cfg.build_cache_gb = getattr(args, "build_cache_gb", cfg.build_cache_gb)
    cfg.trace_path = getattr(args, "trace", None)
    cfg.policy = getattr(args, "policy", "mkb") or "mkb"
    return cfg


def parse_backend_options(items: list[str]) -> dict:
    """``["pch=false", "max_jobs=8"]`` -> ``{"pch": False, "max_jobs": 8}`` (JSON values, else strings)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--backend-option wants KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def check_options(backend: str, options: dict[str, Any]) -> None:
    """A typo in ``--backend-option`` stops the run before it starts, not silently later (or never)."""
    from multikernelbench.backends.options import BackendOptionError
    from multikernelbench.backends.registry import check_backend_options

    try:
        check_backend_options(backend, options)
    except BackendOptionError as exc:
        raise SystemExit(f"--backend-option: {exc}") from None
    except KeyError:
        return  # an unknown backend: reported where the backend is looked up, with the known names


def json_printer(result: EvalResult, cand) -> None:
    row = result.to_dict()
    row["expect"] = cand.expect.value
    print(json.dumps(row, sort_keys=True), flush=True)


def _fmt(x: float | None, spec: str) -> str:
    return "" if x is None else format(x, spec)


_COMPILER_ERROR = re.compile(r"(?:^|\s)((?:fatal )?error: .*)$")


def _reason_lines(r: EvalResult) -> list[str]:
    """The message's lines; for a compile error the compiler's first ``error:`` line goes first (the message
    starts with the build's Python traceback, which says nothing about the candidate)."""
    lines = (r.message or "").strip().splitlines()
    if r.status == Status.COMPILE_ERROR:
        for line in lines:
            m = _COMPILER_ERROR.search(line)
            if m:
                where = line[:m.start(1)].strip().rsplit("/", 1)[-1]  # main.cpp:8:5: (no build-folder path)
                return [f"compiling: {where} {m.group(1)}".replace("  ", " ")] + lines
    return lines


def speedup_text(r: EvalResult) -> str:
    """``1.36x ±0.05`` (the half width of the 95% interval, timing/interval.py); ``1.36x`` without one."""
    if r.speedup is None:
        return ""
    if r.speedup_low is None or r.speedup_high is None:
        return f"{r.speedup:.2f}x"
    return f"{r.speedup:.2f}x ±{(r.speedup_high - r.speedup_low) / 2:.2f}"


def results_table(pairs: list[tuple[EvalResult, object]], title: str) -> Table:
    policies = sorted({r.policy for r, _ in pairs})  # the rule the verdicts were judged by (anticheat/policy.py)
    table = Table(title=f"{title} (policy {', '.join(policies)})" if policies else title)
    # An expectation only for folders that declare them (``# expect:`` headers, as the demo's do).
    declared = any(getattr(cand, "expect_declared", False) for _, cand in pairs)
    cols = ["task", "candidate", "status"] + (["expected"] if declared else []) + [
        "speedup", "cand ms", "ref ms", "build s", "reason"]
    for col in cols:
        table.add_column(col, overflow="fold")
    for r, cand in pairs:
        expect = getattr(cand, "expect", None) if declared else None
        ok = expect is None or expect == r.status
        style = "green" if r.status == Status.CORRECT else ("yellow" if ok else "red")
        reason = _reason_lines(r)
        row = [r.task_id, r.candidate, f"[{style}]{r.status.value}[/{style}]"]
        row += [expect.value if expect else ""] if declared else []
        row += [speedup_text(r), _fmt(r.candidate_timing.median_ms if r.candidate_timing else None, ".3f"),
                _fmt(r.eager_timing.median_ms if r.eager_timing else None, ".3f"), _fmt(r.compile_time_s, ".1f"),
                escape(reason[0][:240]) if reason else ""]  # messages hold brackets: not markup
        table.add_row(*row)
    return table


def console(stderr: bool = False) -> Console:
    """A console that does not squeeze tables to 80 columns when output goes to a file or a pipe."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)


def print_table(pairs, title: str) -> None:
    console().print(results_table(pairs, title))
