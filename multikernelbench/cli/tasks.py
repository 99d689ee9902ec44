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
from multikernelbench.cli._usage import check_backend, select_tasks

COLUMNS = ("id", "category", "dtype", "bench shape", "GFLOP", "GB", "description")
#: The row fields holding shapes: nested JSON in ``--json`` (the dataset row keeps them as strings, one schema).
SHAPE_KEYS = ("test_shapes", "bench_shape", "cpu_bench_shape")


def add_parser(sub) -> None:
    p = sub.add_parser("tasks", help="list benchmark tasks")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON object per task")
    p.add_argument("--source", action="store_true", help="with --json: include each task's source")
    p.add_argument("--backend", default=None,
                   help="show the bench shape, GFLOP and GB this backend times on (default: the GPU's where torch "
                        "sees one, else the CPU's)")
    p.set_defaults(func=run)
    from multikernelbench.cli._heldout import add_generate_parser, add_task_set_option

    add_task_set_option(p)
    add_generate_parser(p)


def times_on_cpu(backend: str | None) -> bool:
    """Whether the shape shown is the CPU bench shape: the named backend's own choice (a GPU backend running
    on its CPU interpreter times, if at all, on the CPU shape), else whether this machine has no GPU."""
    if backend is None:
        import torch

        return not torch.cuda.is_available()
    from multikernelbench.backends import get_backend

    return bool(get_backend(check_backend(backend)).times_on_cpu_shape)


def json_row(task, source: bool) -> dict:
    row = task.to_row()
    for key in SHAPE_KEYS:
        row[key] = json.loads(row[key])
    if not source:
        row.pop("source")
    return row


def run(args) -> int:
    if args.backend is not None:
        check_backend(args.backend)  # before the suite loads: a wrong name costs no task import
    tasks = tasks_for(args, args.category) if args.task_set != "suite" else select_tasks(args.category)
    if args.json:
        for t in tasks:
            print(json.dumps(json_row(t, args.source), sort_keys=True))
        return 0
    on_cpu = times_on_cpu(args.backend)
    columns = tuple(f"{c} ({'cpu' if on_cpu else 'gpu'})" if c == "bench shape" else c for c in COLUMNS)
    rows = []
    for t in tasks:
        flops, nbytes = t.costs_for_timing(on_cpu)
        rows.append((t.id, t.category, t.dtype, json.dumps(t.shape_for_timing(on_cpu)), f"{flops / 1e9:.2f}",
                     f"{nbytes / 1e9:.2f}", " ".join(t.description.split())))
    if not sys.stdout.isatty():
        print("\t".join(columns))
        for row in rows:
            print("\t".join(row))
        return 0
    table = Table(title=f"{len(tasks)} tasks")
    for col in columns:
        table.add_column(col, no_wrap=col == "id")
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    return 0
