"""What a device worker's start costs on a GPU, and whether starting one disturbs another process's clock.

Why: the device lane's per-candidate time (~2.5 s on the H200) holds ~0.4 s in the first correctness check that
is the worker's CUDA start, not the candidate's work. Preparing the next candidate's worker ahead of time
shortens the lane only if that start can overlap something; this probe says (1) what the start is made of
(context, first allocation, first kernel, first profiler session) in a fresh process, and (2) whether starting
workers in other processes moves CUDA-event timings taken in this one. The engine never overlaps a worker's
start with a running clock whatever (2) says: (2) tells whether that rule costs or buys anything.

Usage (on a GPU host): ``python scripts/cuda_neighbour_probe.py --out probe.json``; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

_START = r"""
import time, json
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
torch.cuda.init()
t2 = time.perf_counter()
x = torch.empty(1, device="cuda")
torch.cuda.synchronize()
t3 = time.perf_counter()
y = torch.randn(1024, device="cuda") * 2
torch.cuda.synchronize()
t4 = time.perf_counter()
from torch.profiler import ProfilerActivity, profile
with profile(activities=[ProfilerActivity.CUDA]):
    (y + 1).sum().item()
t5 = time.perf_counter()
print(json.dumps({"import_torch": t1 - t0, "cuda_init": t2 - t1, "first_alloc": t3 - t2,
                  "first_kernels": t4 - t3, "first_profile": t5 - t4}))
"""


def start_costs(n: int) -> dict:
    rows = []
    for _ in range(n):
        out = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {k: round(statistics.median(r[k] for r in rows), 4) for k in rows[0]}


def _timings(seconds: float, big, small) -> dict:
    """CUDA-event times of a bandwidth-bound and a launch-bound kernel, sampled for ``seconds``."""
    import torch

    big_ms, small_ms = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for x, reps, out in ((big, 5, big_ms), (small, 50, small_ms)):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(reps):
                x.mul_(1.0)
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) / reps)

    def summary(v: list[float]) -> dict:
        v = sorted(v)
        return {"n": len(v), "p50_ms": round(v[len(v) // 2], 5), "p90_ms": round(v[int(len(v) * 0.9)], 5),
                "max_ms": round(v[-1], 5)}

    return {"big": summary(big_ms), "small": summary(small_ms)}


def disturbed(phases: int, seconds: float) -> list[dict]:
    """Quiet and disturbed phases in turn: in a disturbed one, fresh processes start CUDA one after another."""
    import torch

    big = torch.randn(64 * 2**20, device="cuda")  # 256 MiB
    small = torch.randn(1024, device="cuda")
    _timings(1.0, big, small)  # warm
    out = []
    for i in range(phases):
        for kind in ("quiet", "worker_starts"):
            procs: list[subprocess.Popen] = []
            starts = 0
            if kind == "worker_starts":
                stop_at = time.monotonic() + seconds
                loop = (f"import subprocess,sys,time\nn=0\nwhile time.monotonic()<{stop_at}:\n"
                        f"    subprocess.run([sys.executable,'-c',{_START!r}],capture_output=True); n+=1\nprint(n)")
                procs = [subprocess.Popen([sys.executable, "-c", loop], stdout=subprocess.PIPE, text=True)
                         for _ in range(2)]
            row = {"phase": i, "kind": kind, **_timings(seconds, big, small)}
            for p in procs:
                starts += int((p.communicate()[0] or "0").strip() or 0)
            row["worker_starts"] = starts
            out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=5, help="fresh processes timed for the start breakdown")
    ap.add_argument("--phases", type=int, default=3)
    ap.add_argument("--phase-s", type=float, default=5.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    result = {"start_costs_p50_s": start_costs(args.starts), "phases": disturbed(args.phases, args.phase_s)}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
