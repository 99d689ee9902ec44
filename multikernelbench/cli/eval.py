"""``mkb eval``: evaluate a folder of candidate solutions (or stored generations) on one backend."""

from __future__ import annotations

import sys
from pathlib import Path

from multikernelbench.cli._common import add_engine_options, engine_config, json_printer, print_table
from multikernelbench.engine.candidates import discover_solutions
from multikernelbench.engine.runner import CodeExecutionNotAllowed, Runner
from multikernelbench.store import ResultStore
from multikernelbench.tasks import load_suite


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
    p.set_defaults(func=run)


def collect_candidates(args, known: set[str]) -> list:
    candidates = []
    for folder in args.solutions:
        candidates += discover_solutions(folder, known, model=args.model)
    if args.generations:
        from multikernelbench.sampling.evaluate import to_candidate
        from multikernelbench.sampling.store import iter_generations

        for path in args.generations:
            for rec in iter_generations(path):
                # Failed requests are the sampler's problem (retried by `mkb generate`), not samples; a response
                # with no extractable code is a sample that failed to build, and counts as such.
                if rec.error or rec.task_id not in known or rec.backend != args.backend:
                    continue
                candidates.append(to_candidate(rec))
    return candidates


def run(args) -> int:
    if not args.solutions and not args.generations:
        print("mkb eval: give --solutions DIR and/or --generations FILE", file=sys.stderr)
        return 2
    tasks = load_suite(categories=args.category, ids=args.task_ids)
    candidates = collect_candidates(args, {t.id for t in tasks})
    if not candidates:
        print("mkb eval: no candidates found for the selected tasks", file=sys.stderr)
        return 1
    try:
        with ResultStore(args.db) as store:
            runner = Runner(engine_config(args, args.allow_code_execution), store,
                            on_result=json_printer if args.json else None,
                            progress=not args.no_progress)
            results = runner.evaluate(tasks, candidates)
    except CodeExecutionNotAllowed as exc:
        print(f"mkb eval: {exc}", file=sys.stderr)
        return 3
    if not args.json:
        print_table(list(zip(results, candidates)), f"{len(results)} results on {args.backend} -> {args.db}")
    return 0
