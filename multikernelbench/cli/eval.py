"""``mkb eval``: evaluate a folder of candidate solutions (or stored generations) on one backend."""

from __future__ import annotations

import sys
from pathlib import Path

from multikernelbench.cli._common import add_engine_options, engine_config, json_printer, print_table
from multikernelbench.cli._heldout import add_task_set_option, tasks_for
from multikernelbench.cli._stop import results_notice
from multikernelbench.cli._usage import UsageError, check_backend, check_dir, check_file, did_you_mean, select_tasks
from multikernelbench.cluster import make_runner
from multikernelbench.engine.candidates import discover_solutions
from multikernelbench.store import ResultStore


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="evaluate candidate kernels (compile, check, time) into a results store")
    p.add_argument("--solutions", type=Path, action="append", default=[],
                   help="folder of <task id>.py / <task id>/<name>.py candidates (repeatable)")
    p.add_argument("--generations", type=Path, action="append", default=[],
                   help="generations store written by `mkb generate` (repeatable)")
    p.add_argument("--model", default="shipped", help="model label for --solutions candidates")
    p.add_argument("--allow-code-execution", action="store_true",
                   help="required (or MKB_ALLOW_CODE_EXECUTION=1): candidates are untrusted code")
    add_engine_options(p)
    p.add_argument("--no-zygote-prestart", action="store_true",
                   help="start the worker zygote only once the tasks and candidates are read (an A/B switch: "
                        "by default it imports torch beside that)")
    p.add_argument("--fresh-shapes", type=int, default=0, metavar="K",
                   help="also check each candidate on K shapes drawn now from the task's SHAPE_RANGES "
                        "(never shown in prompts); tasks without ranges are flagged, not checked")
    add_task_set_option(p)
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="builds as Ray tasks, device stages as Ray actors; ADDRESS of a running cluster "
                        "(auto, host:6379, ray://host:10001), none = a Ray instance on this machine "
                        "(needs the ray extra)")
    p.set_defaults(func=run, stop_notice=results_notice)


def _solution_candidates(folder: Path, suite_ids: set[str], selected: set[str], model: str,
                         skipped: list[str]) -> list:
    """A folder's candidates for the selected tasks; a file naming no task of the suite (a typo'd file name or
    ``# task:`` header) is described in ``skipped`` with the closest task ids, never dropped silently."""
    from multikernelbench.cli._solution_files import non_candidates

    skipped += non_candidates(folder)
    out = []
    for cand in discover_solutions(folder, None, model=model):
        if cand.task_id not in suite_ids:
            skipped.append(f"{folder / cand.label}: no task {cand.task_id!r}{did_you_mean(cand.task_id, suite_ids)}")
        elif cand.task_id in selected:
            out.append(cand)
    return out


def _generation_candidates(path: Path, suite_ids: set[str], selected: set[str], backend: str,
                           skipped: list[str]) -> list:
    from multikernelbench.sampling.evaluate import to_candidate
    from multikernelbench.sampling.store import iter_generations

    bad_lines: list[str] = []
    out, failed, other_backend = [], 0, 0
    for rec in iter_generations(path, skipped=bad_lines):
        # Failed requests are the sampler's problem (retried by `mkb generate`), not samples; a response with no
        # extractable code is a sample that failed to build, and counts as such.
        if rec.task_id not in suite_ids:
            skipped.append(f"{path}: {rec.generation_id}: no task {rec.task_id!r}"
                           f"{did_you_mean(rec.task_id, suite_ids)}")
        elif rec.error:
            failed += 1
        elif rec.backend != backend:
            other_backend += 1
        elif rec.task_id in selected:
            out.append(to_candidate(rec))
    skipped += [f"{path}: {line}" for line in bad_lines]
    if failed:
        skipped.append(f"{path}: {failed} failed request(s) (no answer; `mkb generate` retries them)")
    if other_backend:
        _note(f"{path}: {other_backend} record(s) for other backends than {backend} left out")
    return out


def _note(text: str) -> None:
    print(f"mkb eval: {text}", file=sys.stderr)


def collect_candidates(args, selected: set[str], suite_ids: set[str] | None = None) -> list:
    """Candidates from every --solutions folder and --generations file; what was passed over is reported on
    stderr as ``skipped N ...`` with one line per file or line and why."""
    suite_ids = suite_ids if suite_ids is not None else selected
    skipped: list[str] = []
    candidates = []
    for folder in args.solutions:
        candidates += _solution_candidates(folder, suite_ids, selected, args.model, skipped)
    for path in args.generations:
        candidates += _generation_candidates(path, suite_ids, selected, args.backend, skipped)
    if skipped:
        _note(f"skipped {len(skipped)}:" + "".join(f"\n  {line}" for line in skipped))
    return candidates


def check_arguments(args) -> None:
    """The arguments that need no task list, checked before anything starts (a wrong one raises UsageError)."""
    if not args.solutions and not args.generations:
        raise UsageError("give --solutions DIR and/or --generations FILE")
    for folder in args.solutions:
        check_dir(folder, "solutions folder")
    for path in args.generations:
        check_file(path, "generations file")
    check_backend(args.backend)  # last: the backend registry imports torch


def selected_tasks(args) -> tuple[list, list]:
    """(the task set's tasks, the selected ones); the set is read once (the suite's 351 files take ~1.3 s)."""
    if args.task_set != "suite":
        return tasks_for(args), tasks_for(args, args.category, args.task_ids)
    from multikernelbench.tasks import load_suite  # torch: imported once the arguments are known good

    suite = load_suite()
    return suite, select_tasks(args.category, args.task_ids, suite=suite)


def run(args) -> int:
    check_arguments(args)
    from multikernelbench.engine.runner import CodeExecutionNotAllowed, check_opt_in  # torch, after the checks

    config = engine_config(args, args.allow_code_execution)
    config.fresh_shapes = max(0, args.fresh_shapes)
    config.ray_address = args.ray
    try:
        check_opt_in(config)  # before the results store exists: a refused run leaves no file behind
    except CodeExecutionNotAllowed as exc:
        print(f"mkb eval: {exc}", file=sys.stderr)
        return 3
    if config.ray_address:
        from multikernelbench.cluster import RayNotInstalled, require_ray

        try:
            require_ray()  # before anything is written
        except RayNotInstalled as exc:
            raise UsageError(str(exc)) from None
    runner = make_runner(config, None, on_result=json_printer if args.json else None, progress=not args.no_progress)
    if not args.no_zygote_prestart:
        runner.prestart()  # the zygote imports torch while the tasks and candidates are read
    try:
        everything, tasks = selected_tasks(args)
        suite_ids = {t.id for t in everything} if (args.category or args.task_ids) else {t.id for t in tasks}
        candidates = collect_candidates(args, {t.id for t in tasks}, suite_ids)
        if not candidates:
            print("mkb eval: no candidates found for the selected tasks", file=sys.stderr)
            return 1
        with ResultStore(args.db) as store:
            runner.store = store
            results = runner.evaluate(tasks, candidates)
    finally:
        runner.discard_prestart()
    if not args.json:
        print_table(list(zip(results, candidates, strict=True)), f"{len(results)} results on {args.backend} -> {args.db}")
    return 0
