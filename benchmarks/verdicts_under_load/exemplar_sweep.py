"""Honest CPU exemplars through the real engine, N times each, one JSON line per result (issue #40).

Why: a false conviction shows as a non-``correct`` status (or a withheld speedup) of a kernel known to be honest.
The prompts' CPU exemplars cover every operator category; their builds are cached in the exemplar tests' build
root, so a sweep is mostly timing. Run it quiet and beside pinned busy loops, e.g.::

    python benchmarks/verdicts_under_load/exemplar_sweep.py all 3 > quiet.jsonl
    taskset -c 0 python -c "while True: pass" & taskset -c 1 python -c "while True: pass" &
    python benchmarks/verdicts_under_load/exemplar_sweep.py all 3 > loaded.jsonl; kill %1 %2
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from multikernelbench.engine import host_load
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.prompts.exemplars import all_exemplars


def main(categories: str, n: int) -> None:
    exs = [e for e in all_exemplars("cpu") if categories == "all" or e.category in categories.split(",")]
    tasks = [e.task() for e in exs]
    for i in range(n):
        cands = [Candidate(task_id=e.task_id, source=e.solution, label=f"honest/{i}") for e in exs]
        # The exemplar test's settings (tests/test_prompt_exemplars.py), a new seed per pass.
        cfg = EngineConfig(backend="cpu", build_root=Path(tempfile.gettempdir()) / "mkb-exemplar-builds",
                           allow_code_execution=True, timing=TimingConfig(min_runs=3, max_runs=8, budget_s=0.3, warmup=1),
                           compile_workers=2, compile_timeout_s=1200.0, run_timeout_s=120.0, seed=7 + i)
        t = time.time()
        for r in evaluate_candidates(tasks, cands, cfg, None):
            print(json.dumps({"pass": i, "task": r.task_id, "status": r.status.value, "speedup": r.speedup,
                              "outside_ms": r.outside_clock_ms, "wall_s": round(time.time() - t, 1),
                              "load": host_load.sample().to_dict(), "message": r.message[:1500],
                              "flag_kinds": [f.kind.value for f in r.flags]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "all", int(sys.argv[2]) if len(sys.argv) > 2 else 1)
