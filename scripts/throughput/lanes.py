"""Where a cold run's device lane spent its time, from the JSON files ``scripts/throughput_bench.py`` writes.

Why: candidates/hour alone does not say whether builds or the device lane held a run back. This reads the
trace events the bench keeps (build ends, device-stage starts and ends) and prints, per file: candidates done,
when the first result came, how many were done by a common cut (``--at``, so runs cut at different caps
compare), the lane's busy and idle seconds between its first and last stage, the device stage's mean and p50,
and when the last build ended.

    python scripts/throughput/lanes.py benchmarks/throughput/h200_2026-12-03/*.json --at 149
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

if __package__:
    from .common import trace_line
else:  # run as a script: the package's parent folder (scripts/) on the path, as throughput_bench.py has it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from throughput.common import trace_line


def lane_summary(mkb: dict, at: float) -> dict:
    build_end: dict[str, float] = {}
    start: dict[str, float] = {}
    end: dict[str, float] = {}
    for line in mkb.get("trace_events") or []:
        parsed = trace_line(line)
        if parsed is None:
            continue
        at_s, who, what = parsed
        if what.startswith("build end") and what.rstrip().endswith(": ok"):
            build_end[who] = at_s
        elif what.startswith("device stage start"):
            start[who] = at_s
        elif what.startswith("end_workers end"):
            end[who] = at_s
    busy = idle = 0.0
    last = None
    for h, t0 in sorted(start.items(), key=lambda kv: kv[1]):
        if last is not None:
            idle += max(0.0, t0 - last)
        if h in end:
            busy += end[h] - t0
            last = end[h]
    device = [r["device_s"] for r in mkb.get("rows", []) if r.get("device_s")]
    done = sorted(r["t_done_s"] for r in mkb.get("rows", []) if r.get("t_done_s") is not None)
    return {"done": mkb.get("n"), "of": mkb.get("n_candidates"), "wall_s": mkb.get("wall_s"),
            "cand_per_h": mkb.get("candidates_per_hour"), "first_result_s": done[0] if done else None,
            f"done_by_{at:g}s": sum(1 for t in done if t <= at), "lane_busy_s": round(busy, 1),
            "lane_idle_s": round(idle, 1), "device_mean_s": round(statistics.mean(device), 2) if device else None,
            "device_p50_s": round(statistics.median(device), 2) if device else None,
            "last_build_end_s": max(build_end.values()) if build_end else None,
            "cores_busy": (mkb.get("cpu") or {}).get("mean_busy")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--at", type=float, default=149.0, help="count the candidates done by this second")
    args = ap.parse_args(argv)
    for f in args.files:
        mkb = json.loads(f.read_text()).get("mkb")
        if not mkb:
            continue
        print(json.dumps({"file": f.name, **lane_summary(mkb, args.at)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
