"""``mkb tasks``: list the suite (a table, or one JSON object per line)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from multikernelbench.tasks import load_suite


def add_parser(sub) -> None:
    p = sub.add_parser("tasks", help="list benchmark tasks")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON object per task")
    p.add_argument("--source", action="store_true", help="with --json: include each task's source")
    p.set_defaults(func=run)


def run(args) -> int:
    tasks = load_suite(categories=args.category)
    if args.json:
        for t in tasks:
            row = t.to_row()
            if not args.source:
                row.pop("source")
            print(json.dumps(row, sort_keys=True))
        return 0
    table = Table(title=f"{len(tasks)} tasks")
    for col in ("id", "category", "dtype", "bench shape", "GFLOP", "GB", "description"):
        table.add_column(col)
    for t in tasks:
        table.add_row(t.id, t.category, t.dtype, json.dumps(t.bench_shape), f"{t.flops / 1e9:.2f}",
                      f"{t.bytes / 1e9:.2f}", t.description)
    Console().print(table)
    return 0
