"""Issue #25's attacks, judged by whichever engine this interpreter imports, beside their honest twin.

Run it with today's package and with an older one installed in another environment to see what each
attack was worth before (``correct`` at a speedup it did not earn) and what it gets now; results as JSON
lines (one per candidate) on stdout or in ``--out``. Timing defaults mirror tests/test_timing_integrity.py.

    python scripts/timing_integrity_bench.py --out benchmarks/timing_integrity/cpu_after.jsonl
    /path/to/old/venv/bin/python scripts/timing_integrity_bench.py --out benchmarks/timing_integrity/cpu_before.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ATTACKS = REPO / "tests" / "data" / "timing_attacks"
PYTHON_ONLY = ("renew_profile_hook", "renew_instance_hook", "early_ask_reference_turn",
               "native_thread_between_samples", "starve_reference_threads")
#: The attacks' own kernel timed honestly (no hook): what their speedup would be without the trick.
HONEST_FP64 = '''
import torch
import torch.nn as nn


def honest(a, b):
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    bd = b.double()
    for i in range(0, a.shape[0], 32):
        out[i:i + 32] = (a[i:i + 32].double() @ bd).to(a.dtype)
    return out


class ModelNew(nn.Module):
    def forward(self, a, b):
        return honest(a, b)
'''
HONEST_MM = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.mm(a, b)
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--budget-s", type=float, default=1.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.tasks import load_suite

    (task,) = load_suite(ids=["matmul.square"])
    sources = {"honest_fp64": HONEST_FP64, "honest_mm": HONEST_MM}
    sources.update({n: (ATTACKS / f"{n}.py").read_text() for n in PYTHON_ONLY})
    cands = [Candidate(task_id=task.id, source=src, label=name) for name, src in sources.items()]
    cfg = EngineConfig(backend=args.backend, build_root=Path(tempfile.mkdtemp(prefix="mkb-ti-")),
                       allow_code_execution=True, anticheat=AntiCheatConfig(require_custom_kernel=False),
                       run_timeout_s=300.0, compile_workers=1,
                       timing=TimingConfig(min_runs=8, max_runs=30, budget_s=args.budget_s, warmup=1, target_rse=0.0))
    t0 = time.perf_counter()
    results = evaluate_candidates([task], cands, cfg)
    out = open(args.out, "w") if args.out else sys.stdout
    for c, r in zip(cands, results, strict=True):
        d = r.to_dict()
        row = {"candidate": c.label, "status": d["status"], "speedup": d.get("speedup"),
               "candidate_ms": (d.get("candidate_timing") or {}).get("median_ms"),
               "eager_ms": (d.get("eager_timing") or {}).get("median_ms"),
               "clean_eager_ms": (d.get("clean_eager_timing") or {}).get("median_ms"),
               "speedup_clean": d.get("speedup_clean"), "outside_clock_ms": d.get("outside_clock_ms"),
               "message": d["message"][:400], "flags": d["flags"]}
        print(json.dumps(row), file=out, flush=True)
    print(f"# {len(cands)} candidates in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
