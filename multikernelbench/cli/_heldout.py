"""``mkb tasks generate`` and the ``--tasks SET`` option that lets every command use a held-out set.

``--tasks`` names a task set (tasks/heldout/sets.py): ``suite`` (default), ``heldout-<seed>[:<count>]``
(generated on first use, cached by seed, count and generator version) or a folder of task files. Commands
call :func:`tasks_for` instead of loading the suite themselves, so the held-out set is one flag everywhere.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def add_task_set_option(p) -> None:
    p.add_argument("--tasks", dest="task_set", default="suite", metavar="SET",
                   help="task set: suite (default), heldout-<seed>[:<count>] (generated, default 50 tasks), "
                        "kernelbench:<folder> (KernelBench-format problems, imported on first use), or a folder of task files / a built dataset folder")


def tasks_for(args, categories=None, ids=None) -> list:
    """The selected tasks of ``args.task_set`` (unknown sets, categories and ids are usage errors)."""
    from multikernelbench.cli._usage import UsageError, unknown
    from multikernelbench.tasks.heldout.sets import TaskSetError, load_task_set

    def log(line: str) -> None:
        print(f"generating {args.task_set}: {line}", file=sys.stderr)

    try:
        tasks = load_task_set(getattr(args, "task_set", None), log=log)
    except TaskSetError as exc:
        raise UsageError(str(exc)) from exc
    cats = sorted({t.category for t in tasks})
    for cat in categories or ():
        if cat not in cats:
            raise unknown("category", cat, cats)
    known = [t.id for t in tasks]
    for task_id in ids or ():
        if task_id not in known:
            raise unknown("task", task_id, known, listing=f"`mkb tasks --tasks {args.task_set}` lists them")
    return [t for t in tasks if (not categories or t.category in categories) and (not ids or t.id in ids)]


def add_generate_parser(tasks_parser) -> None:
    sub = tasks_parser.add_subparsers(dest="tasks_command", metavar="ACTION")
    g = sub.add_parser("generate", help="generate held-out tasks from a seed (deterministic)")
    g.add_argument("--seed", type=int, required=True, help="the set's seed: the same seed gives the same files")
    g.add_argument("--count", type=int, default=50, help="number of tasks (default 50)")
    g.add_argument("--out", type=Path, default=None,
                   help="folder to write <category>/<name>.py and heldout.json into "
                        "(default: the cache folder `--tasks heldout-<seed>:<count>` reads)")
    g.add_argument("--json", action="store_true", help="print the generation summary as JSON")
    g.set_defaults(func=run_generate)
    from multikernelbench.cli._kb_import import add_import_parser

    add_import_parser(sub)


def run_generate(args) -> int:
    from multikernelbench.cli._usage import UsageError
    from multikernelbench.tasks.heldout.generate import generate, write
    from multikernelbench.tasks.heldout.sets import heldout_folder

    if args.count < 1:
        raise UsageError("--count must be at least 1")
    def log(line: str) -> None:
        print(line, file=sys.stderr)

    if args.out is None:
        folder = heldout_folder(args.seed, args.count, log=log)
        summary = json.loads((folder / "heldout.json").read_text())
    else:
        report = generate(args.seed, args.count, log=log)
        write(report, args.out)
        folder, summary = args.out, {**report.summary(), "files": [t.relpath for t in report.tasks]}
    summary.pop("files", None)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
        return 0
    print(f"{summary['tasks']} tasks ({summary['task_records']} with dtype variants) in {folder}")
    why = ", ".join(f"{k} {v}" for k, v in summary["rejected_by"].items())
    print(f"drawn {summary['drawn']}, redrawn {summary['redrawn']} ({100 * summary['rejection_rate']:.1f} %)"
          + (f": {why}" if why else ""))
    print("categories: " + ", ".join(f"{k} {v}" for k, v in summary["categories"].items()))
    print(f"use them with --tasks heldout-{args.seed}:{args.count}" if args.out is None else
          f"use them with --tasks {folder}")
    return 0


def add_dataset_option(p) -> None:
    p.add_argument("--heldout", action="append", default=[], metavar="SEED[:COUNT]",
                   help="also build config heldout-<SEED> from a generated held-out set (default 50 tasks; "
                        "repeatable); it is not part of the 'all' config")


def heldout_configs(specs: list[str]) -> dict[str, list]:
    """``["7", "8:100"]`` -> ``{"heldout-7": <50 tasks>, "heldout-8": <100 tasks>}`` for the dataset builder."""
    from multikernelbench.cli._usage import UsageError
    from multikernelbench.tasks.heldout.sets import load_task_set, parse_heldout

    out = {}
    for spec in specs:
        parsed = parse_heldout(f"heldout-{spec}")
        if parsed is None:
            raise UsageError(f"--heldout wants SEED or SEED:COUNT, got {spec!r}")
        seed, count = parsed
        out[f"heldout-{seed}"] = load_task_set(f"heldout-{seed}:{count}",
                                               log=lambda line, seed=seed: print(f"heldout-{seed}: {line}", file=sys.stderr))
    return out
