"""The adaptive timing stop (timing/stopping.py) against the per-callable rule, on shipped solutions, in one run.

Each candidate is evaluated twice through the real engine, once per rule, the two runs taking turns (which
goes first alternates per repeat) so that both see the same host. Printed per candidate and rule: the timed
samples of the candidate and of the reference beside it, why timing stopped, the device stage's seconds
(from the engine's trace: first device event to the candidate's last line, 0.1 s resolution), the speedup and
its interval; then totals and whether the two rules agree on status and on the side of each alpha.

    python scripts/adaptive_timing_bench.py --backend cpu --n 6
    python scripts/adaptive_timing_bench.py --backend cuda --n 20 --out adaptive_h200.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_TRACE = re.compile(r"^\S+ \+\s*([0-9.]+)s (.+? \[[0-9a-f]+\]): (.*)$")


def device_seconds(trace: Path) -> dict[str, float]:
    """Trace label -> seconds from its first device-stage line to its last line."""
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for line in trace.read_text(errors="replace").splitlines() if trace.exists() else []:
        m = _TRACE.match(line)
        if not m:
            continue
        t, who, what = float(m.group(1)), m.group(2), m.group(3)
        if who not in first and "device" in what:
            first[who] = t
        last[who] = t
    return {w: round(last[w] - first[w], 1) for w in first}


def run_once(tasks, cands, backend: str, timing, build_root: Path, trace: Path, seed: int):
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.engine.trace import trace_label

    cfg = EngineConfig(backend=backend, build_root=build_root, allow_code_execution=True, seed=seed,
                       timing=timing, trace_path=trace, device_workers=1)
    results = evaluate_candidates(tasks, cands, cfg)
    secs = device_seconds(trace)
    rows = {}
    for c, r in zip(cands, results, strict=True):
        ct, et = r.candidate_timing, r.eager_timing
        rows[c.label] = {
            "status": r.status.value, "cand_runs": ct.runs if ct else None, "ref_runs": et.runs if et else None,
            "stop": ct.stop.value if ct and ct.stop else None,
            "device_s": secs.get(trace_label(r.task_id, r.code_hash)),
            "speedup": r.speedup, "low": r.speedup_low, "high": r.speedup_high}
    return rows


def _fmt(row: dict) -> str:
    iv = f"[{row['low']:.2f},{row['high']:.2f}]" if row["low"] is not None else "[-]"
    sp = f"{row['speedup']:.2f}x" if row["speedup"] is not None else "-"
    return (f"{row['status'][:8]:8} {row['cand_runs'] or 0:>4}/{row['ref_runs'] or 0:<4} {row['stop'] or '-':9} "
            f"{row['device_s'] if row['device_s'] is not None else '-':>5}s {sp:>7} {iv:15}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu")
    p.add_argument("--n", type=int, default=6, help="the first N shipped solutions of the backend")
    p.add_argument("--tasks", nargs="*", help="task ids instead of the first N")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=None, help="TimingConfig.budget_s (default: its default)")
    p.add_argument("--max-runs", type=int, default=None)
    p.add_argument("--resolution", type=float, default=0.05)
    p.add_argument("--alpha", type=float, action="append", help="decision alphas (default 1.0)")
    p.add_argument("--build-root", type=Path, default=None)
    p.add_argument("--out", type=Path, default=None, help="write every row as JSON here")
    args = p.parse_args(argv)

    from multikernelbench.engine.candidates import discover_solutions
    from multikernelbench.tasks import load_suite
    from multikernelbench.timing.config import TimingConfig

    cands = [c for c in discover_solutions(ROOT / "solutions" / args.backend)
             if not c.label.startswith("wrong/") and "/wrong/" not in c.label]
    cands = [c for c in cands if c.task_id in set(args.tasks)] if args.tasks else cands[:args.n]
    ids = {c.task_id for c in cands}
    tasks = [t for t in load_suite() if t.id in ids]
    base = TimingConfig()
    over = {k: v for k, v in {"budget_s": args.budget_s, "max_runs": args.max_runs}.items() if v is not None}
    alphas = tuple(args.alpha or [1.0])
    rules = {"off": dataclasses.replace(base, **over, adaptive=False),
             "on": dataclasses.replace(base, **over, adaptive=True, decision_alphas=alphas,
                                       speedup_resolution=args.resolution)}
    build_root = args.build_root or Path(tempfile.mkdtemp(prefix="mkb-adaptive-"))
    build_root.mkdir(parents=True, exist_ok=True)
    out: list[dict] = []
    for rep in range(args.repeats):
        order = ["off", "on"] if rep % 2 == 0 else ["on", "off"]
        got = {}
        for rule in order:
            trace = build_root / f"trace-{rule}-{rep}.txt"
            got[rule] = run_once(tasks, cands, args.backend, rules[rule], build_root, trace, seed=11 + rep)
        print(f"repeat {rep} (order {' then '.join(order)}); per rule: status cand/ref samples stop device_s "
              "speedup interval")
        for c in cands:
            off, on = got["off"][c.label], got["on"][c.label]
            print(f"  {c.label[-40:]:40} off {_fmt(off)} | on {_fmt(on)}")
            out.append({"repeat": rep, "label": c.label, "off": off, "on": on})
    _summary(out, alphas)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


def _summary(rows: list[dict], alphas: tuple[float, ...]) -> None:
    for rule in ("off", "on"):
        samples = sum((r[rule]["cand_runs"] or 0) + (r[rule]["ref_runs"] or 0) for r in rows)
        dev = sum(r[rule]["device_s"] or 0.0 for r in rows)
        stops: dict[str, int] = {}
        for r in rows:
            stops[r[rule]["stop"] or "-"] = stops.get(r[rule]["stop"] or "-", 0) + 1
        print(f"{rule:3}: {samples} samples (candidate + reference), device stages {dev:.1f} s in all, stops {stops}")
    same_status = sum(r["off"]["status"] == r["on"]["status"] for r in rows)
    both = [r for r in rows if r["off"]["speedup"] is not None and r["on"]["speedup"] is not None]
    same_side = sum(all((r["off"]["speedup"] >= a) == (r["on"]["speedup"] >= a) for a in alphas) for r in both)
    print(f"status agrees {same_status}/{len(rows)}; side of every alpha {alphas} agrees {same_side}/{len(both)}")


if __name__ == "__main__":
    sys.exit(main())
