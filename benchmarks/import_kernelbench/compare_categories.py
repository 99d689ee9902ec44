"""Eager roofline fractions per category: imported MultiKernelBench reference tasks beside our own suite.

    python benchmarks/import_kernelbench/compare_categories.py IMPORTED.jsonl [OURS.jsonl]

IMPORTED.jsonl is what `mkb baseline --tasks .carry/mkb_ref_tasks` wrote on the GPU; OURS defaults to the
committed H200 baseline of our suite. Rows are fp32 only on both sides (the imported tasks are fp32). The
reference suite's categories map onto ours by name (arch -> architecture, fuse -> fusion).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = ROOT / "multikernelbench" / "baselines" / "cuda_h200.jsonl"
RENAME = {"arch": "architecture", "fuse": "fusion"}


def fractions(path: Path, imported: bool) -> tuple[dict[str, list[float]], dict[str, int]]:
    by_cat: dict[str, list[float]] = defaultdict(list)
    failed: dict[str, int] = defaultdict(int)
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row.get("dtype", "float32") != "float32":
            continue
        parts = row["task_id"].split(".")
        cat = RENAME.get(parts[1], parts[1]) if imported else parts[0]
        frac = row.get("eager_roofline_fraction")
        if isinstance(frac, (int, float)) and frac > 0:
            by_cat[cat].append(float(frac))
        else:
            failed[cat] += 1
    return by_cat, failed


def main(argv: list[str]) -> int:
    imported, imp_failed = fractions(Path(argv[0]), True)
    ours, _ = fractions(Path(argv[1]) if len(argv) > 1 else OURS, False)
    print("| category | MultiKernelBench reference: tasks | median eager roofline fraction | no fraction "
          "(error, no FLOPs/bytes) | our suite: tasks | median eager roofline fraction |")
    print("|---|---|---|---|---|---|")
    for cat in sorted(set(imported) | set(imp_failed)):
        a, b = imported.get(cat, []), ours.get(cat, [])
        med = f"{statistics.median(a):.2f}" if a else "-"
        ours_med = f"{statistics.median(b):.2f}" if b else "-"
        print(f"| {cat} | {len(a)} | {med} | {imp_failed.get(cat, 0)} | {len(b)} | {ours_med} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
