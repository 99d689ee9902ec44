"""``mkb demo``: a real CPU evaluation of shipped solutions, ending in a results table.

By default a quick, representative set (:data:`QUICK`): three correct C++ kernels from two categories, timed
against eager PyTorch, and one deliberately broken candidate per failure outcome (compile error, wrong
result, crash, timeout, runtime error, caught cheat), under demo-sized limits (a hang is stopped after
:data:`QUICK_RUN_TIMEOUT_S` seconds). ``--full`` runs every shipped candidate of the backend with the usual
limits (a source checkout's ``solutions/<backend>/``).

The quick set ships inside the package (``multikernelbench/demo_solutions/``, a copy of the files under
``solutions/cpu/`` kept identical by ``scripts/sync_demo_solutions.py`` and a test), so ``pip install .``
followed by ``mkb demo`` works without the sources.

It runs only this repository's own reviewed solutions, so it opts in to code execution by itself; evaluating
anything else needs the explicit opt-in of ``mkb eval``.
"""

from __future__ import annotations

import filecmp
import math
import shutil
import time
from pathlib import Path

from multikernelbench.cli._common import add_engine_options, engine_config, json_printer, print_table
from multikernelbench.cli._common import console as make_console
from multikernelbench.cli._stop import results_notice
from multikernelbench.cli._usage import check_backend, select_tasks
from multikernelbench.engine.candidates import discover_solutions
from multikernelbench.records import Status
from multikernelbench.store import ResultStore

#: The quick set: paths under ``solutions/cpu/`` -> why each one is in it. Chosen so that every outcome shows
#: at as little cost as possible: 5 real C++ builds with the precompiled header (the 3 correct ones at -O3, ~20 s
#: of CPU each; the 2 broken ones pass no flags, ~12 s) and one that fails at once; the crash, runtime-error and
#: cheat examples need no build (the cheat is caught by the static filter before any build, the other two fail
#: in Python). Cheapest timeout: infinite_loop.py (one build, then
#: QUICK_RUN_TIMEOUT_S of spinning); never_ending_compile.py would need a compile timeout too short for real
#: builds on a cold machine, and it never caches, so it would cost that timeout on every run.
QUICK: dict[str, str] = {
    "activation.relu.py": "correct (activation)",
    "activation.tanh.py": "correct (activation; wrong/missing_header.py is a broken try at the same task)",
    "reduce.logsumexp_dim.py": "correct (reduction)",
    # missing_header.py rather than compile_error.py (a syntax error): a fatal error ends g++ at once, while
    # after a syntax error it goes on through torch's templates (~10 s, and a failed build is never cached).
    "wrong/missing_header.py": "compile_error: includes a header that does not exist",
    "wrong/wrong_result.py": "incorrect: an off-by-one kernel",
    "wrong/os_exit.py": "crash: the worker process dies",
    "wrong/infinite_loop.py": "timeout: a kernel that never returns",
    "wrong/sys_exit.py": "runtime_error: sys.exit in forward",
    "wrong/aten_from_cpp.py": "cheat_detected: the 'kernel' calls ATen's relu",
}
QUICK_BACKEND = "cpu"
#: Demo-sized limits (the usual ones are `mkb eval`'s defaults).
QUICK_RUN_TIMEOUT_S = 3.0
QUICK_TIMING_BUDGET_S = 0.3
FULL_RUN_TIMEOUT_S = 120.0
FULL_TIMING_BUDGET_S = 2.0

PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: The copy of the quick set that ships in the package.
PACKAGED = PACKAGE_DIR / "demo_solutions"


def checkout_solutions(backend: str) -> Path | None:
    """``solutions/<backend>/`` of the source checkout this package runs from, or None (an installed package)."""
    root = PACKAGE_DIR.parent / "solutions" / backend
    return root if root.is_dir() and (PACKAGE_DIR.parent / "pyproject.toml").is_file() else None


def shipped_solutions(backend: str) -> Path:
    root = checkout_solutions(backend)
    if root is None:
        raise SystemExit(
            f"`mkb demo --full` runs every shipped {backend} solution from a source checkout's solutions/{backend}/, "
            "and this installed package carries only the quick set. Run it from a clone of the repository: "
            "`pip install -e .` there, then `mkb demo --full` (or `mkb eval --backend "
            f"{backend} --solutions <clone>/solutions/{backend} --allow-code-execution`).")
    return root


# ---- the packaged copy -------------------------------------------------------------------------------------
def demo_copy_problems() -> list[str]:
    """Why ``multikernelbench/demo_solutions/`` does not match the quick set in ``solutions/`` (empty: it does)."""
    src = checkout_solutions(QUICK_BACKEND)
    if src is None:
        return ["not a source checkout: solutions/ is missing"]
    dst = PACKAGED / QUICK_BACKEND
    problems = []
    for rel in QUICK:
        if not (dst / rel).is_file():
            problems.append(f"{dst / rel} is missing")
        elif not filecmp.cmp(src / rel, dst / rel, shallow=False):
            problems.append(f"{dst / rel} differs from solutions/{QUICK_BACKEND}/{rel}")
    extra = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*.py")) if dst.is_dir() else []
    problems += [f"{dst / rel} is not in the quick set" for rel in extra if rel not in QUICK]
    return problems


def write_demo_copy() -> list[Path]:
    """Refresh the packaged copy from ``solutions/`` (source checkout only); returns the files written."""
    src = checkout_solutions(QUICK_BACKEND)
    if src is None:
        raise RuntimeError("not a source checkout: solutions/ is missing; refusing to write into the package")
    dst = PACKAGED / QUICK_BACKEND
    if dst.is_dir():
        shutil.rmtree(dst)
    written = []
    for rel in QUICK:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dst / rel)
        written.append(dst / rel)
    return written


def quick_solutions() -> Path:
    root = PACKAGED / QUICK_BACKEND
    missing = [rel for rel in QUICK if not (root / rel).is_file()]
    if missing:
        raise SystemExit(f"the package's copy of the demo solutions is incomplete ({root}: {missing[0]} missing); "
                         "reinstall the package, or run `python scripts/sync_demo_solutions.py` in a checkout")
    return root


# ---- the precompiled header, before the first run on a machine ------------------------------------------------
def missing_pch_variants(backend) -> list[tuple[str, ...]]:
    """The backend's PCH flag sets (``WARM_VARIANTS``) whose ``.gch`` is not in its PCH folder yet; [] when the
    backend has no PCH or the probe fails (the run then goes on as the engine would anyway)."""
    variants = tuple(getattr(backend, "WARM_VARIANTS", ()))
    if not variants or not getattr(backend.opts, "pch", True) or not hasattr(backend, "pch_root"):
        return []
    try:
        from multikernelbench.backends.extbuild.cuda_warm import missing_pch_variants as probe

        return probe(backend.pch_root(), variants)
    except Exception:  # noqa: BLE001 - a probe that cannot tell leaves the run as the engine makes it
        return []


#: Wall seconds one flag set's precompiled headers take on one idle core of the 2-core dev host: the full
#: torch/extension.h (43-46 s measured: benchmarks/first_run/) and the light main.cpp header with its analysis
#: (~30 s, 2026-12-06: backends/extbuild/light_main.py). Only for the estimate the demo prints.
PCH_SET_S = 75.0


def pch_estimate_s(n_sets: int, cores: int) -> float:
    """Rough wall time for making ``n_sets`` headers side by side on ``cores`` idle cores."""
    return PCH_SET_S * math.ceil(n_sets / max(1, min(cores, n_sets)))


def warm_pch_first(backend, show_progress: bool, console) -> None:
    """Make the missing precompiled headers before the run, one process per flag set, side by side, not niced.

    The engine never makes a build wait for the PCH: its warmer runs beside the builds, niced. On a machine that
    has never built one (a newcomer's first ``mkb demo``) that means every build of the run reads torch's
    headers as text (~2x the CPU) while the warmer competes for the same cores, and the warmer is stopped
    when the run ends, so the next run starts over. Waiting for it once makes this run faster and leaves the
    headers for every later run. Not niced: nothing of this run competes with it, and a niced warmer on a
    host busy with other people's work took 298 s instead of ~50 (the issue that asked for this).
    """
    missing = missing_pch_variants(backend)
    if not missing:
        return
    from multikernelbench.backends.extbuild.cuda_warm import PchWarmer
    from multikernelbench.engine.progress import Progress
    from multikernelbench.util.procs import usable_cores

    cores = usable_cores()
    est = pch_estimate_s(len(missing), cores)
    console.print(f"  first C++ run on this machine: making torch's precompiled headers (torch/extension.h, full and "
                  f"light) for {len(missing)} compiler-flag set(s) the demo's kernels use, so that each C++ build "
                  f"parses torch's headers in a quarter to a half of the CPU; once per machine, ~{est:.0f} s on {cores} idle "
                  f"core(s), longer on a busy host; kept in {backend.pch_root()}", highlight=False)
    warmers = [PchWarmer(backend.pch_root(), {}, with_cuda=False, variants=(v,), background=False) for v in missing]
    try:
        with Progress(enabled=show_progress) as bar:
            bar.add("pch", len(warmers))
            pending = list(warmers)
            while pending:
                for w in list(pending):
                    if w.wait(timeout=0.5) is not None:
                        pending.remove(w)
                        bar.advance("pch")
    finally:
        for w in warmers:
            w.stop()


# ---- the command -------------------------------------------------------------------------------------------
def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="evaluate shipped CPU solutions end to end (a quick representative set; "
                                    "--full: all of them) and print a table")
    add_engine_options(p)
    p.add_argument("--full", action="store_true",
                   help="every shipped solution of the backend with the usual limits (~15-20 min cold on 2 cores), "
                        "instead of the quick set")
    # None = the mode's own default (quick: demo-sized limits; --full: the usual ones).
    p.set_defaults(func=run, stop_notice=results_notice, db="mkb-demo.sqlite", timing_budget_s=None,
                   run_timeout=None)


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def run(args) -> int:
    started = time.perf_counter()
    quick = not args.full and args.backend == QUICK_BACKEND
    console = make_console(stderr=True)  # notes on stderr: stdout stays the table (or pure JSON lines)
    if args.run_timeout is None:
        args.run_timeout = QUICK_RUN_TIMEOUT_S if quick else FULL_RUN_TIMEOUT_S
    if args.timing_budget_s is None:
        args.timing_budget_s = QUICK_TIMING_BUDGET_S if quick else FULL_TIMING_BUDGET_S
    check_backend(args.backend)
    tasks = select_tasks(args.category, args.task_ids)
    root = quick_solutions() if quick else shipped_solutions(args.backend)
    candidates = discover_solutions(root, {t.id for t in tasks})
    if not candidates:
        raise SystemExit(f"no shipped {args.backend} candidates match the --task/--category filters in {root}")
    config = engine_config(args, allow=True)
    broken = sum(1 for c in candidates if c.expect is not Status.CORRECT)
    what = "a quick, representative set of" if quick else "all"
    console.print(
        f"mkb demo: {what} {len(candidates)} shipped {args.backend} candidates ({len(candidates) - broken} correct, "
        f"{broken} deliberately broken) from {root}", highlight=False)
    if quick:
        console.print(
            f"  demo limits: a request that hangs is stopped after {config.run_timeout_s:g} s (--run-timeout; "
            f"`mkb eval` allows {FULL_RUN_TIMEOUT_S:g} s), {config.timing.budget_s:g} s of timing per kernel "
            f"(--timing-budget). `mkb demo --full` runs every shipped candidate with the usual limits.",
            highlight=False)
    console.print(f"  builds cached in {Path(config.build_root)}; results stored in {args.db} (a rerun resumes)",
                  highlight=False)
    if args.backend == "cpu":  # a newcomer's first run: make torch's precompiled header first (see there)
        from multikernelbench.backends import get_backend

        warm_pch_first(get_backend(config.backend, **config.backend_options), not args.no_progress, console)
    from multikernelbench.engine.runner import Runner  # torch: imported once the arguments are known good

    with ResultStore(args.db) as store:
        runner = Runner(config, store, on_result=json_printer if args.json else None,
                        progress=not args.no_progress)
        results = runner.evaluate(tasks, candidates)
    pairs = list(zip(results, candidates, strict=True))
    wall = time.perf_counter() - started
    if not args.json:
        print_table(pairs, f"mkb demo: {len(results)} shipped {args.backend} candidates, {wall:.0f} s -> {args.db}")
    out = make_console(stderr=args.json)  # keep stdout pure JSON lines under --json
    surprises = [(r, c) for r, c in pairs if r.status is not c.expect]
    for r, c in surprises:
        out.print(f"[red]unexpected:[/red] {c.label}: {r.status.value} (expected {c.expect.value})")
    correct = [r for r, _ in pairs if r.status is Status.CORRECT]
    caught = [r for r, c in pairs if c.expect is not Status.CORRECT and r.status is c.expect]
    gm = _geomean([r.speedup for r in correct if r.speedup])
    speed = f" (geomean speedup {gm:.2f}x over eager PyTorch)" if gm else ""
    out.print(f"{len(correct)} correct{speed}, {len(caught)} of {broken} broken ones caught as expected, "
              f"{len(surprises)} unexpected; wall {wall:.0f} s.", highlight=False)
    nxt = f"`mkb report --db {args.db}` (tables and an HTML page)"
    if quick:
        nxt += ", `mkb demo --full` (every shipped CPU candidate)"
    out.print(f"Next: {nxt}, or your own kernels: `mkb eval --solutions DIR --db results.sqlite "
              f"--allow-code-execution` (README: 'Evaluating your own kernels').", highlight=False)
    return 1 if surprises else 0
