"""Merge measurements into a baseline file: rows of later files replace the same task's row.

    python scripts/merge_baseline_rows.py BASE.jsonl --replace NEW.jsonl [--replace ...] \
        [--replace-if-less-skewed QUIET.jsonl ...] --out MERGED.jsonl

Why a script: a baseline is measured in several device calls (a re-measure of suspect rows, reshaped tasks, a
quiet one-lane pass), and the shipped file must say which row came from where. ``--replace`` files win
outright, in the order given. A ``--replace-if-less-skewed`` row (the quiet pass re-measures rows whose median
sat far above their fastest sample) replaces the current row only when its own worst median/fastest ratio is
lower: the choice is made on the measurement's internal consistency, never on which time is smaller. Every
row keeps its own provenance keys (``measured_on``, ``mkb_commit``, ``lanes_per_gpu``); suspect marks are
dropped here and made again by scripts/mark_suspect_baseline.py over the merged file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mark_suspect_baseline import read as _rows  # the sibling script (scripts/ is on sys.path)
from mark_suspect_baseline import skew


def worst_skew(row: dict) -> float:
    """The larger median/fastest ratio of the row's eager and compiled stats (inf without any)."""
    ratios = [r for r in (skew(row.get("eager")), skew(row.get("compiled"))) if r is not None]
    return max(ratios) if ratios else float("inf")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("--replace", type=Path, action="append", default=[])
    ap.add_argument("--replace-if-less-skewed", type=Path, action="append", default=[])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    rows = _rows(args.base)
    counts: dict[str, int] = {}
    for path in args.replace:
        new = _rows(path)
        rows.update(new)
        counts[str(path)] = len(new)
    for path in args.replace_if_less_skewed:
        taken = 0
        for task_id, row in _rows(path).items():
            if task_id not in rows or "error" in rows[task_id] or worst_skew(row) < worst_skew(rows[task_id]):
                rows[task_id], taken = row, taken + 1
        counts[f"{path} (less skewed)"] = taken
    with args.out.open("w") as fh:
        for task_id in sorted(rows):
            fh.write(json.dumps({k: v for k, v in rows[task_id].items() if k != "suspect"}, sort_keys=True) + "\n")
    for what, n in counts.items():
        print(f"{n:4d} rows from {what}")
    print(f"{len(rows)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
