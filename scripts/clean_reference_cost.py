"""What issue #25's clean reference costs: the same candidates evaluated with and without it, side by side.

The clean reference is one extra worker per task and run that times the eager reference alone (no candidate
code), so its cost is per task, not per candidate. Runs alternate off/on (``--rounds`` pairs) on builds made
once up front, each with a fresh results store, and print the wall time per candidate of each.

    python scripts/clean_reference_cost.py --solutions solutions/cpu --rounds 2 --out benchmarks/timing_integrity/clean_cost_cpu.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--solutions", type=Path, default=Path("multikernelbench/demo_solutions/cpu"))
    ap.add_argument("--limit", type=int, default=4, help="correct candidates to use (the first N by name)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--budget-s", type=float, default=0.5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.candidates import discover_solutions
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.tasks import load_suite

    cands = [c for c in discover_solutions(args.solutions) if "/wrong/" not in c.label and "wrong" not in c.label]
    cands = sorted(cands, key=lambda c: c.label)[:args.limit]
    tasks = load_suite(ids=sorted({c.task_id for c in cands}))
    root = Path(tempfile.mkdtemp(prefix="mkb-clean-cost-"))

    def run(clean: bool) -> tuple[float, list]:
        cfg = EngineConfig(backend=args.backend, build_root=root / "builds", allow_code_execution=True,
                           anticheat=AntiCheatConfig(clean_reference=clean),
                           timing=TimingConfig(budget_s=args.budget_s))
        t0 = time.perf_counter()
        results = evaluate_candidates(tasks, cands, cfg)
        return time.perf_counter() - t0, [r.status.value for r in results]

    run(False)  # builds, once
    walls: dict[str, list[float]] = {"off": [], "on": []}
    statuses = {}
    for _ in range(args.rounds):
        for key, clean in (("off", False), ("on", True)):
            wall, st = run(clean)
            walls[key].append(wall / len(cands))
            statuses[key] = st
    report = {"backend": args.backend, "candidates": [c.label for c in cands], "tasks": len(tasks),
              "seconds_per_candidate": {k: [round(x, 3) for x in v] for k, v in walls.items()},
              "median_added_s_per_candidate": round(statistics.median(walls["on"]) - statistics.median(walls["off"]), 3),
              "statuses": statuses}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
