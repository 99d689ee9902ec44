"""``mkb tasks``: list the suite (a table on a terminal, tab-separated lines in a pipe, or JSON lines).

Why plain lines in a pipe: a rich table squeezes and folds its cells to a width, so ``mkb tasks | grep`` could
not find an id that had been cut in two; a pipe gets one task per line, whole.
"""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table

from multikernelbench.cli._heldout import tasks_for
from multikernelbench.cli._usage import select_tasks

COLUMNS = ("id", "category", "dtype", "bench shape", "GFLOP", "GB", "description")


def add_parser(sub) -> None:
    p = sub.add_parser("tasks", help="list benchmark tasks")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON object per task")
    p.add_argument("--source", action="store_true", help="with --json: include each task's source")
    p.set_defaults(func=run)
    from multikernelbench.cli._heldout import add_generate_parser, add_task_set_option

    add_task_set_option(p)
    add_generate_parser(p)


def run(args) -> int:
    tasks = tasks_for(args, args.category) if args.task_set != "suite" else select_tasks(args.category)
    if args.json:
        for t in tasks:
            row = t.to_row()
            if not args.source:
                row.pop("source")
            print(json.dumps(row, sort_keys=True))
        return 0
    rows = [(t.id, t.category, t.dtype, json.dumps(t.bench_shape), f"{t.flops / 1e9:.2f}", f"{t.bytes / 1e9:.2f}",
             " ".join(t.description.split())) for t in tasks]
    if not sys.stdout.isatty():
        print("\t".join(COLUMNS))
        for row in rows:
            print("\t".join(row))
        return 0
    table = Table(title=f"{len(tasks)} tasks")
    for col in COLUMNS:
        table.add_column(col, no_wrap=col == "id")
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    return 0
