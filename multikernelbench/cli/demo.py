"""``mkb demo``: a real CPU evaluation of the shipped solutions, ending in a results table.

It runs only this repository's own reviewed solutions (correct ones and deliberately broken ones), so it
opts in to code execution by itself; evaluating anything else needs the explicit opt-in of ``mkb eval``.
"""

from __future__ import annotations

import time
from pathlib import Path

from multikernelbench.cli._common import add_engine_options, console as make_console, engine_config, json_printer, print_table
from multikernelbench.engine.candidates import discover_solutions
from multikernelbench.engine.runner import Runner
from multikernelbench.records import Status
from multikernelbench.store import ResultStore
from multikernelbench.tasks import load_suite


def shipped_solutions(backend: str) -> Path:
    root = Path(__file__).resolve().parents[2] / "solutions" / backend
    if not root.is_dir():
        raise FileNotFoundError(f"{root} not found: `mkb demo` runs from a source checkout of multikernelbench")
    return root


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="evaluate the shipped CPU solutions end to end and print a table")
    add_engine_options(p)
    p.set_defaults(func=run, db="mkb-demo.sqlite", timing_budget_s=2.0)


def run(args) -> int:
    started = time.perf_counter()
    tasks = load_suite(categories=args.category, ids=args.task_ids)
    candidates = discover_solutions(shipped_solutions(args.backend), {t.id for t in tasks})
    with ResultStore(args.db) as store:
        runner = Runner(engine_config(args, allow=True), store, on_result=json_printer if args.json else None,
                        progress=not args.no_progress)
        results = runner.evaluate(tasks, candidates)
    pairs = list(zip(results, candidates))
    wall = time.perf_counter() - started
    console = make_console(stderr=args.json)  # keep stdout pure JSON lines under --json
    if not args.json:
        print_table(pairs, f"mkb demo: {len(results)} shipped {args.backend} candidates, {wall:.0f} s -> {args.db}")
    surprises = [(r, c) for r, c in pairs if r.status is not c.expect]
    for r, c in surprises:
        console.print(f"[red]unexpected:[/red] {c.label}: {r.status.value} (expected {c.expect.value})")
    correct = [r for r, _ in pairs if r.status is Status.CORRECT]
    console.print(f"{len(correct)} correct, {len(results) - len(correct)} not; "
                  f"{len(surprises)} unexpected; wall {wall:.0f} s. Next: `mkb report --db {args.db}`",
                  highlight=False)
    return 1 if surprises else 0
