"""``mkb cache``: how much the build cache holds, and pruning it (least recently used candidates' builds first).

Why a command beside the cap at each run's end (``--build-cache-gb``): a user who ran many models wants the disk
back now, or wants every build older than a week gone, without starting an evaluation.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from rich.table import Table

from multikernelbench.cli._common import console
from multikernelbench.cli._usage import UsageError
from multikernelbench.engine.config import EngineConfig


def add_parser(sub) -> None:
    p = sub.add_parser("cache", help="the build cache: its size per backend, and pruning it")
    p.add_argument("action", choices=["list", "prune"], help="list: sizes; prune: remove builds (see options)")
    p.add_argument("--build-root", type=Path, default=None, help="build cache (default ~/.cache/multikernelbench)")
    p.add_argument("--max-gb", type=float, default=None, help="prune: keep at most this many GB (oldest go first)")
    p.add_argument("--older-than-days", type=float, default=None, help="prune: remove builds unused this long")
    p.add_argument("--min-idle-minutes", type=float, default=10.0,
                   help="prune: never remove a build used this recently (a running evaluation may load it)")
    p.set_defaults(func=run)


def run(args) -> int:
    from multikernelbench.engine import build_cache

    root = args.build_root or EngineConfig().build_root
    if args.action == "list":
        found = build_cache.entries(root)
        sizes: dict[str, list[int]] = defaultdict(list)
        for e in found:
            sizes[e.backend].append(e.size_bytes)
        table = Table(title=f"build cache: {root}")
        for col in ("backend", "candidate builds", "MB"):
            table.add_column(col)
        for backend, got in sorted(sizes.items()):
            table.add_row(backend, str(len(got)), f"{sum(got) / 1e6:.1f}")
        console().print(table)
        console().print(f"{len(found)} builds, {sum(e.size_bytes for e in found) / 1e6:.1f} MB", highlight=False)
        return 0
    if args.max_gb is None and args.older_than_days is None:
        raise UsageError("prune needs --max-gb or --older-than-days (what to remove)")
    report = build_cache.prune(root, max_bytes=int(args.max_gb * 1e9) if args.max_gb is not None else None,
                               older_than_s=args.older_than_days * 86400 if args.older_than_days is not None else None,
                               min_idle_s=args.min_idle_minutes * 60)
    console().print(f"removed {len(report.removed)} builds ({report.freed_bytes / 1e6:.1f} MB); "
                    f"{report.kept_bytes / 1e6:.1f} MB kept; {len(report.busy)} in use or used within "
                    f"{args.min_idle_minutes:g} min, kept", highlight=False)
    return 0
