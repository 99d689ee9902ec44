"""``python scripts/throughput_bench.py``: argument parsing, the run of each pipeline within its cap, the result
file."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import common
from .candidates import generate_candidates, known_task_ids, task_specs
from .common import PIPELINES, REPO, Interrupted, _on_signal, log
from .host import cuda_arch, host_info
from .kb_pipeline import run_kernelbench_style
from .mkb_pipeline import mkb_options, run_mkb
from .summary import markdown


def default_out() -> Path:
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"]) / "throughput_h200.json"
    return Path(tempfile.gettempdir()) / "mkb_throughput" / "throughput_h200.json"


def main(argv: list[str] | None = None) -> int:
    t_begin = time.monotonic()
    from_cli = argv is None
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--n", type=int, default=None, help="distinct candidates (default 48; 5 with --per-build)")
    ap.add_argument("--wrong-fraction", type=float, default=0.25, help="share of wrong candidates (default 1/4)")
    ap.add_argument("--solutions-src", type=Path, default=None,
                    help="shipped solutions to make variants of (default solutions/<backend>)")
    ap.add_argument("--compile-workers", type=int, default=0,
                    help="mkb eval --compile-workers (default 0: the engine's build gate, from measured CPU use per build)")
    ap.add_argument("--mkb-args", default="", help='extra arguments passed to mkb eval, e.g. "--timing-budget 2"')
    ap.add_argument("--kb-procs", type=int, default=16, help="KernelBench-style build pool size (default 16)")
    ap.add_argument("--kb-eval-timeout", type=float, default=120.0, help="seconds per KernelBench-style eval")
    ap.add_argument("--kb-build-timeout", type=float, default=300.0,
                    help="KernelBench-style builds: give up when none finishes for this long")
    ap.add_argument("--order", choices=("mkb-first", "kb-first"), default="mkb-first")
    ap.add_argument("--only", choices=PIPELINES, default=None, help="run one pipeline (the other is reported skipped)")
    ap.add_argument("--budget-s", type=float, default=540.0, help="overall deadline in seconds (default 540)")
    ap.add_argument("--pipeline-budget-s", type=float, default=None,
                    help="cap per pipeline (default: what is left after setup, halved)")
    ap.add_argument("--seed", type=int, default=42, help="seed of the KernelBench-style models and inputs")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default $OUT/throughput_h200.json or a temp dir)")
    ap.add_argument("--work", type=Path, default=None, help="work folder (default: a fresh temp dir)")
    ap.add_argument("--mkb-build-root", type=Path, default=None,
                    help="mkb eval --build-root (default: fresh and empty under the work folder); the same folder "
                         "a second time = every build cached (the same --n gives the same candidates)")
    ap.add_argument("--per-build", action="store_true",
                    help="instead of the pipelines: each candidate built stock, by the builder and by the light "
                         "path (scripts/throughput/per_build.py)")
    ap.add_argument("--pch-root", type=Path, default=None,
                    help="--per-build: PCH folder to use (default: made fresh under the work folder, not timed)")
    args = ap.parse_args(argv)
    if args.n is None:
        args.n = 5 if args.per_build else 48
    if args.per_build:
        args.wrong_fraction = 0.0
    command = shlex.join(["python", sys.argv[0] if from_cli else "scripts/throughput_bench.py", *argv])
    out_path = args.out or default_out()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if args.work:
        args.work.mkdir(parents=True, exist_ok=False)
        work = args.work.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="mkb_throughput_"))
    log(f"work folder {work}")

    arch = ""
    if args.backend == "cuda":
        arch = os.environ.get("TORCH_CUDA_ARCH_LIST") or cuda_arch()
        if arch:
            os.environ["TORCH_CUDA_ARCH_LIST"] = arch  # both pipelines build the device's architecture
        log(f"TORCH_CUDA_ARCH_LIST={arch or '(unset: torch picks)'}")

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    args.mkb_help = mkb_options() if args.only in (None, "mkb") and not args.per_build else ""  # which options this engine has
    known = known_task_ids()
    src_root = (args.solutions_src or REPO / "solutions" / args.backend).resolve()
    manifest = generate_candidates(args.backend, args.n, src_root, work / "solutions", known, args.wrong_fraction)
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1))
    (work / "tasks.json").write_text(json.dumps(task_specs({m["task_id"] for m in manifest})))
    kinds: dict[str, int] = {}
    for m in manifest:
        kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
    log(f"{len(manifest)} candidates over {len({m['task_id'] for m in manifest})} tasks: {kinds}")
    host = host_info(args.backend, arch)
    host["candidate_kinds"] = kinds

    if args.per_build:
        return _per_build_main(args, work, manifest, host, command, out_path, t_begin)
    order = ["mkb", "kernelbench_style"] if args.order == "mkb-first" else ["kernelbench_style", "mkb"]
    todo = [p for p in order if args.only in (None, p)]
    margin = 15.0  # kill grace, trace parsing, writing
    deadline = t_begin + args.budget_s
    share = args.pipeline_budget_s or (deadline - time.monotonic() - margin) / max(1, len(todo))
    result: dict = {"mkb": {"skipped": True}, "kernelbench_style": {"skipped": True}, "host": host,
                    "command": command}

    def write() -> None:
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1, default=str))
        os.replace(tmp, out_path)

    for name in todo:
        cap = min(share, deadline - time.monotonic() - margin)
        if common._SIGNALLED or cap < 10:
            why = f"interrupted ({common._SIGNALLED[0]})" if common._SIGNALLED else "budget spent"
            log(f"{name}: skipped: {why}")
            result[name] = {"skipped": True, "reason": why, "n": 0, "complete": False}
            continue
        log(f"{name}: starting with a cap of {cap:.0f} s")
        result[name] = _run_pipeline(name, args, work, manifest, cap)
        p = result[name]
        log(f"{name}: {p.get('n')} / {len(manifest)} in {p.get('wall_s')} s; statuses {p.get('statuses')}")
        write()
    host["total_s"] = round(time.monotonic() - t_begin, 1)
    if common._SIGNALLED:
        host["interrupted_by"] = common._SIGNALLED[0]
    write()
    _print_summary(result, order, args.backend, manifest, kinds, host, out_path, work)
    return 0


def _run_pipeline(name: str, args, work: Path, manifest: list[dict], cap: float) -> dict:
    """One pipeline's result; its failure is recorded, not raised (it must not lose the other's numbers)."""
    try:
        fn = run_mkb if name == "mkb" else run_kernelbench_style
        return fn(args, work, manifest, cap)
    except Interrupted as exc:  # outside a running pipeline's wait (its own kill path handles that one)
        return {"error": f"interrupted ({exc})", "n": 0, "complete": False}
    except Exception as exc:
        return {"error": f"{exc!r}", "traceback": traceback.format_exc()[-3000:], "n": 0, "complete": False}


def _print_summary(result: dict, order: list[str], backend: str, manifest: list[dict], kinds: dict[str, int],
                   host: dict, out_path: Path, work: Path) -> None:
    for name in order:
        p = result[name]
        if p.get("error"):
            print(f"{name}: ERROR {p['error']}")
        if p.get("unexpected"):
            print(f"{name}: {len(p['unexpected'])} unexpected: " + "; ".join(p["unexpected"][:6]))
        if p.get("stderr_tail") and not p.get("n"):
            print(f"{name}: stderr tail:\n" + p["stderr_tail"][-1200:])
    print()
    print(f"Throughput, {backend}, {len(manifest)} candidates ({kinds}), host {host.get('gpu') or host.get('cpu_model', '')}")
    print()
    try:
        print(markdown(result, order))
    except Exception as exc:
        print(f"(table failed: {exc!r})")
    if "mkb" in result and result["mkb"].get("rows"):
        from .mkb_pipeline import account

        print(f"mkb: {account(result['mkb'])}")
    print()
    print(f"wrote {out_path} (total {host['total_s']} s; work folder {work})")


def _per_build_main(args, work: Path, manifest: list[dict], host: dict, command: str, out_path: Path,
                    t_begin: float) -> int:
    from .per_build import markdown_per_build, run_per_build

    cap = args.budget_s - (time.monotonic() - t_begin) - 10.0
    result: dict = {"host": host, "command": command}
    try:
        result["per_build"] = run_per_build(args, work, manifest, cap)
    except Exception as exc:  # write what is known
        result["per_build"] = {"error": f"{exc!r}", "traceback": traceback.format_exc()[-3000:]}
    host["total_s"] = round(time.monotonic() - t_begin, 1)
    out_path.write_text(json.dumps(result, indent=1, default=str))
    p = result["per_build"]
    print(f"Per-build comparison, {len(p.get('candidates', []))} candidates, host {host.get('gpu') or host.get('cpu_model', '')}")
    if "error" in p:
        print(f"ERROR {p['error']}")
    else:
        print(markdown_per_build(p))
        print(f"same exports in every mode: {p['same_exports']}")
    print(f"wrote {out_path} (total {host['total_s']} s; work folder {work})")
    return 0
