"""``mkb tasks import PATH --format kernelbench [--out DIR]``: KernelBench-format problems -> our task files.

The table it prints says, per problem, whether it imported, how many smaller test shapes were derived and
what was flagged (docs/bring_your_own.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def add_import_parser(sub) -> None:
    p = sub.add_parser("import", help="import a folder of KernelBench-format problems as tasks")
    p.add_argument("path", type=Path, help="a problem file or a folder of them (KernelBench's level1/, "
                                           "MultiKernelBench's reference/, ...)")
    p.add_argument("--format", default="kernelbench", choices=["kernelbench"], help="the problems' format")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for the task files (default: the cache folder --tasks kernelbench:PATH reads)")
    p.add_argument("--prefix", default=None,
                   help="first part of every id (default: kb for KernelBench, mkb_ref for a reference/ folder)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per problem (default 60)")
    p.add_argument("--tolerance", type=float, nargs=2, metavar=("ATOL", "RTOL"), default=None,
                   help="fp32 tolerance written into every task (default: ours, 1e-4 1e-4)")
    p.add_argument("--json", action="store_true", help="print the import table as JSON lines")
    p.set_defaults(func=run_import)


def run_import(args) -> int:
    from multikernelbench.cli._usage import UsageError
    from multikernelbench.tasks.kernelbench.importer import import_folder, table

    if not args.path.exists():
        raise UsageError(f"no such file or folder: {args.path}")

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    if args.out is None:
        from multikernelbench.tasks.kernelbench.cache import imported_folder

        folder = imported_folder(args.path, log=log)
        from multikernelbench.tasks.kernelbench.importer import ImportRow

        rows = [ImportRow(**r) for r in json.loads((folder / "import_table.json").read_text())]
    else:
        folder = args.out
        rows = import_folder(args.path, args.out, prefix=args.prefix, time_limit=args.time_limit,
                             tolerance=tuple(args.tolerance) if args.tolerance else None, log=log)
    if args.json:
        for r in rows:
            print(json.dumps(r.__dict__, sort_keys=True))
        return 0
    print(table(rows))
    print(f"use them with --tasks {folder}" if args.out is not None else
          f"use them with --tasks kernelbench:{args.path}")
    return 0
