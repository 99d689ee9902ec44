"""Mark the rows of a baseline file whose timing cannot be trusted, and report the spread of a repeat.

    python scripts/mark_suspect_baseline.py BASELINE.jsonl [--repeat REPEAT.jsonl] [--max-skew 1.05]
        [--max-spread 0.03] --out MARKED.jsonl [--report SPREAD.txt]
    python scripts/mark_suspect_baseline.py BASELINE.jsonl --list-skewed [--also MORE.jsonl]

Why: a GPU kernel's time is nearly constant, so a median far above the fastest sample says something else
ran on the device during the clock (H200, 2026-12-01: lanes that overlapped whole torch.compile requests,
whose first call autotunes on the GPU). And an independent second measurement (``mkb baseline`` in another
process, with other seeds) that disagrees by more than ``--max-spread`` on the median says the same. Such
rows stay in the file, with a ``suspect`` reason, so the record is complete; readers
(multikernelbench/baselines) never use them. The report lists the repeat's spread per task, the number #15
asks for.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from multikernelbench.baselines import load_baseline


def read(path: Path) -> dict[str, dict]:
    """Raw rows by task id, parsed by the readers' own parser (a later line replaces an earlier one)."""
    return {task_id: row.raw for task_id, row in load_baseline(path).rows.items()}


def skew(stats: dict | None) -> float | None:
    """Median over fastest sample."""
    if not stats or not stats.get("min_ms"):
        return None
    return stats["median_ms"] / stats["min_ms"]


def spread(a: dict | None, b: dict | None) -> float | None:
    """Relative difference of two medians (second against first)."""
    if not a or not b:
        return None
    return (b["median_ms"] - a["median_ms"]) / a["median_ms"]


def reasons(row: dict, repeat: dict | None, max_skew: float, max_spread: float) -> list[str]:
    out = []
    for name in ("eager", "compiled"):
        s = skew(row.get(name))
        if s is not None and s > max_skew:
            out.append(f"{name} median {s:.2f}x its fastest sample (unstable: device shared during the clock, or a kernel whose time varies between calls)")
        d = spread(row.get(name), (repeat or {}).get(name))
        if d is not None and abs(d) > max_spread:
            out.append(f"{name} median differs by {100 * d:+.1f}% in an independent repeat")
    return out


def repeat_lines(rows: dict[str, dict], repeat: dict[str, dict], max_spread: float) -> list[str]:
    """The report's part on the independent repeat: each task's medians side by side, then per timer."""
    lines: list[str] = []
    lines.append(f"repeat of {len(repeat)} tasks: relative difference of the medians (repeat vs baseline)")
    lines.append(f"{'task':46s} {'eager ms':>18s} {'diff':>8s} {'compiled ms':>18s} {'diff':>8s}")
    per: dict[str, list[float]] = {"eager": [], "compiled": []}
    for task_id, rep in repeat.items():
        row = rows[task_id]
        cells = []
        for name in ("eager", "compiled"):
            d = spread(row.get(name), rep.get(name))
            if d is None:
                cells += ["-", "-"]
                continue
            per[name].append(abs(d))
            cells += [f"{row[name]['median_ms']:.3f} / {rep[name]['median_ms']:.3f}", f"{100 * d:+.1f}%"]
        lines.append(f"{task_id:46s} {cells[0]:>18s} {cells[1]:>8s} {cells[2]:>18s} {cells[3]:>8s}")
    for name, v in per.items():
        if v:
            lines.append(f"{name}: |diff| median {100 * statistics.median(v):.2f}%, max {100 * max(v):.1f}%, "
                         f"{sum(x > max_spread for x in v)}/{len(v)} over {100 * max_spread:.0f}%")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("baseline", type=Path)
    ap.add_argument("--repeat", type=Path, default=None, help="an independent measurement of some tasks")
    ap.add_argument("--max-skew", type=float, default=1.05)
    ap.add_argument("--max-spread", type=float, default=0.03)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--list-skewed", action="store_true",
                    help="only print the ids of the rows (of BASELINE and any --also file) whose median is over "
                         "--max-skew x their fastest sample: the list a quiet re-measure (one lane) takes")
    ap.add_argument("--also", type=Path, action="append", default=[], help="more rows, with --list-skewed")
    ap.add_argument("--report", type=Path, default=None, help="write the spread report here too")
    args = ap.parse_args(argv)
    rows = read(args.baseline)
    if args.list_skewed:
        for path in args.also:
            rows.update(read(path))
        for task_id, row in rows.items():
            if any((skew(row.get(name)) or 0) > args.max_skew for name in ("eager", "compiled")):
                print(task_id)
        return 0
    if args.out is None:
        ap.error("--out is required (unless --list-skewed)")
    repeat = read(args.repeat) if args.repeat else {}
    unknown = sorted(set(repeat) - set(rows))
    if unknown:
        print(f"mark_suspect_baseline: the repeat has tasks the baseline lacks: {unknown[:5]}", file=sys.stderr)
        return 2
    n_suspect = 0
    with args.out.open("w") as fh:
        for task_id, row in rows.items():
            row = {k: v for k, v in row.items() if k != "suspect"}
            why = reasons(row, repeat.get(task_id), args.max_skew, args.max_spread) if "error" not in row else []
            if why:
                row["suspect"] = "; ".join(why)
                n_suspect += 1
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    lines = [f"{len(rows)} rows, {n_suspect} marked suspect (skew > {args.max_skew}, repeat spread > "
             f"{100 * args.max_spread:.0f}%)"]
    if repeat:
        lines += repeat_lines(rows, repeat, args.max_spread)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.report:
        args.report.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
