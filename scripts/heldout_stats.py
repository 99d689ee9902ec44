"""Generate a large held-out set and report what the generator does: how many draws the gates (and the
sizing, range and dedup checks) rejected, the category mix, the op mix and the graph sizes.

    python scripts/heldout_stats.py --seed 2026 --count 500 --out benchmarks/heldout

writes ``<out>/stats-<seed>-<count>.json`` and prints a markdown summary (also ``<out>/stats-<seed>-<count>.md``).
Nothing is written into the source tree unless --out says so.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from multikernelbench.tasks.heldout.generate import generate


def op_kinds(source: str) -> list[str]:
    """The op kinds of a generated file, read back from its forward lines' labels (``tN = ...  # label``)."""
    out = []
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("t") and " = " in line and "  # " in line:
            out.append(line.split("  # ", 1)[1])
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--out", type=Path, default=None, help="folder for the JSON and markdown results")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    report = generate(args.seed, args.count, log=lambda s: print(s, file=sys.stderr, flush=True))
    wall = time.perf_counter() - t0
    summary = report.summary()
    lengths = Counter(len(op_kinds(t.source)) for t in report.tasks)
    labels = Counter(label.split(" (")[0].split(" k")[0] for t in report.tasks for label in op_kinds(t.source))
    dtypes = Counter(len(t.tasks) for t in report.tasks)
    stats = {**summary, "wall_s": round(wall, 1), "ops_per_task": dict(sorted(lengths.items())),
             "with_bf16_variant": dtypes.get(2, 0), "op_labels": dict(labels.most_common())}
    lines = [f"# Held-out generator: seed {args.seed}, {args.count} tasks", "",
             f"Command: `python scripts/heldout_stats.py --seed {args.seed} --count {args.count}"
             f"{' --out ' + str(args.out) if args.out else ''}` ({wall:.0f} s wall)", "",
             f"- drawn {summary['drawn']}, redrawn {summary['redrawn']}: rejection rate "
             f"**{100 * summary['rejection_rate']:.1f} %**",
             "- rejected by: " + ", ".join(f"{k} {v}" for k, v in summary["rejected_by"].items()),
             "- categories: " + ", ".join(f"{k} {v} ({100 * v / args.count:.0f} %)"
                                          for k, v in summary["categories"].items()),
             f"- task records (with bf16 variants): {summary['task_records']}; tasks with a bf16 variant: "
             f"{dtypes.get(2, 0)}",
             "- ops per task: " + ", ".join(f"{k}: {v}" for k, v in sorted(lengths.items())),
             "- most common ops: " + ", ".join(f"{k} {v}" for k, v in labels.most_common(15))]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.out / f"stats-{args.seed}-{args.count}"
        stem.with_suffix(".json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
        stem.with_suffix(".md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
