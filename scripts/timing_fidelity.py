"""Timing-fidelity benchmark: the same kernels timed in N fresh processes, and against ncu.

    python scripts/timing_fidelity.py --procs 5 [--out FILE.json] [--ncu]

Each child process times a fixed set of kernels (ReLU over 4M..256M floats, a softmax, fp32 and bf16
matrix products) with :func:`~multikernelbench.timing.cuda_events.cuda_event_timer`, all interleaved A/B in one ``measure`` call. Short kernels
rotate over enough input sets to exceed 3x the L2, so every call reads cold data (as ncu's
``--cache-control all`` does). The parent reports, per kernel, the median of each process' median, the
spread (max-min)/median across processes, and — with ``--ncu`` — the ratio to ncu's median
``gpu__time_duration.sum`` for the same kernel (``--clock-control none``: the card's clocks are left alone).
A child also times the short ReLU the naive way (one event pair per call, no graph) to show the noise the
graph mode removes.

``--ncu-cache none`` (or ``both``) also runs ncu without its cache control: the kernels then start with the
previous calls' outputs still dirty in L2 (each marker is followed by ``STEADY`` calls in a row and the last one is
measured), as back-to-back calls in a timed sample do. ncu's default flush writes
those lines back *between* kernels, outside any kernel's duration, so for an output that fits in L2 its number
leaves out write-back that a sample of k calls in a row pays: the cause of the CUDA-graph ReLUs' 10-16 % over ncu
on an H100 (benchmarks/timing_fidelity_h100/); the two ncu columns side by side measure that part.
"""

from __future__ import annotations

import argparse
import collections
import csv
import io
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

from multikernelbench.util.results_dir import default_out

KERNELS = {  # name -> (kind, size)
    "relu_4M": ("relu", 4 << 20),
    "relu_16M": ("relu", 16 << 20),
    "relu_64M": ("relu", 64 << 20),
    "relu_256M": ("relu", 256 << 20),
    "softmax_8192x8192": ("softmax", 8192),
    "matmul_fp32_4096": ("mm32", 4096),
    "matmul_bf16_8192": ("mm16", 8192),
}


#: Timed calls per kernel under ncu, each after a marker kernel (the child makes them, parse_ncu reads them back).
CALLS = 5

#: Calls in a row before the one ncu's steady mode measures: enough to fill a 50-60 MB L2 with dirty outputs of
#: the 4M ReLU (16 MB each), the shortest kernel here.
STEADY = 6


def _make(kind: str, size: int, l2: int):
    import torch

    if kind == "relu":
        per_set = size * 4
        sets = [torch.randn(size, device="cuda") + 0.1 for _ in range(max(2, math.ceil(3 * l2 / per_set)))]
        return lambda i: torch.relu(sets[i % len(sets)])
    if kind == "softmax":
        sets = [torch.randn(size, size, device="cuda") for _ in range(2)]
        return lambda i: torch.softmax(sets[i % 2], dim=-1)
    dt = torch.float32 if kind == "mm32" else torch.bfloat16
    a = [torch.randn(size, size, device="cuda").to(dt) for _ in range(2)]
    b = [torch.randn(size, size, device="cuda").to(dt) for _ in range(2)]
    return lambda i: a[i % 2] @ b[i % 2]


def child(mode: str, graphs: bool = True) -> None:
    import torch

    from multikernelbench.engine.config import TimingConfig
    from multikernelbench.timing.cuda_events import cuda_event_timer, l2_bytes

    torch.backends.cuda.matmul.allow_tf32 = False
    l2 = l2_bytes()
    fns = {name: _make(kind, size, l2) for name, (kind, size) in KERNELS.items()}
    if mode in ("ncu", "ncu_steady"):
        # ncu_steady: STEADY calls in a row after each marker, the last one measured (parse_ncu, last=True): with
        # --cache-control none it starts with the L2 full of earlier calls' dirty outputs, as inside a sample.
        # The last STEADY + 1 outputs are held, so each call writes memory of its own (as the graph's held outputs
        # do) instead of the block the allocator just freed, whose lines are still in L2.
        repeat = STEADY if mode == "ncu_steady" else 1
        held: collections.deque = collections.deque(maxlen=repeat + 1)
        for fn in fns.values():
            for i in range(3):
                fn(i)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for _name, fn in fns.items():
            for i in range(CALLS):
                torch.cuda._sleep(1000)  # marker kernel ("spin_kernel") delimiting one timed call
                for r in range(repeat):
                    held.append(fn(i * repeat + r))
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(json.dumps({"order": list(fns)}))
        return
    cfg = TimingConfig(warmup=3, min_runs=20, max_runs=400, target_rse=0.002, budget_s=1.0)
    timer = cuda_event_timer(cfg, allow_graphs=graphs)
    stats = timer.measure(fns)
    # The naive way, for contrast: one event pair per call, no flush, no graph.
    naive = []
    f = fns["relu_4M"]
    for i in range(200):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f(i)
        e.record()
        e.synchronize()
        naive.append(s.elapsed_time(e))
    out = {name: {"median_ms": st.median_ms, "runs": st.runs, "rse": st.rel_std_err, "method": st.method,
                  "cv": st.std_ms / st.mean_ms if st.mean_ms else None} for name, st in stats.items()}
    out["_naive_relu_4M"] = {"median_ms": statistics.median(naive),
                             "cv": statistics.stdev(naive) / statistics.fmean(naive)}
    out["_timer"] = timer.sampler.details
    print("MKB_JSON " + json.dumps(out))


def parse_ncu(text: str, order: list[str], last: bool = False) -> dict[str, float]:
    """Sum kernel durations between marker kernels (``last``: only the last kernel's); median per op (ms)."""
    rows = [r for r in csv.DictReader(io.StringIO(text[text.find('"ID"'):]))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}
    calls: list[float] = []
    cur = None
    for r in rows:
        if "spin_kernel" in r["Kernel Name"]:
            if cur is not None:
                calls.append(cur)
            cur = 0.0
            continue
        if cur is not None:
            ms = float(r["Metric Value"].replace(",", "")) * scale.get(r["Metric Unit"], 1e-6)
            cur = ms if last else cur + ms
    out = {}
    for k, name in enumerate(order):
        chunk = calls[CALLS * k:CALLS * (k + 1)]
        if chunk:
            out[name] = statistics.median(chunk)
    return out


def _run_ncu(cache: str) -> dict:
    """ncu's median duration per kernel of the ``ncu`` child, with ``--cache-control`` ``cache`` (``none``: in
    steady state, the last of STEADY calls in a row)."""
    child_mode = "ncu_steady" if cache == "none" else "ncu"
    cmd = ["ncu", "--csv", "--profile-from-start", "off", "--clock-control", "none", "--cache-control", cache,
           "--metrics", "gpu__time_duration.sum", sys.executable, __file__, "--child", child_mode]
    res = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return parse_ncu(res.stdout, list(KERNELS), last=cache == "none")
    except Exception as exc:
        return {"_error": repr(exc), "_stdout_tail": res.stdout[-2000:], "_stderr_tail": res.stderr[-2000:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", choices=["time", "ncu", "ncu_steady"])
    ap.add_argument("--procs", type=int, default=5)
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--no-graphs", action="store_true",
                    help="children time short kernels as k eager calls between two events, not a CUDA graph")
    ap.add_argument("--ncu-cache", choices=["all", "none", "both"], default="all",
                    help="ncu's --cache-control: all (flush before every kernel), none, or both runs")
    ap.add_argument("--out", type=Path, default=None,
                    help="result JSON (default: $OUT or ~/.cache/multikernelbench/benchmarks)")
    args = ap.parse_args()
    if args.child:
        return child(args.child, graphs=not args.no_graphs)
    per_proc = []
    for p in range(args.procs):
        res = subprocess.run([sys.executable, __file__, "--child", "time", *(["--no-graphs"] if args.no_graphs else [])],
                             capture_output=True, text=True)
        line = [ln for ln in res.stdout.splitlines() if ln.startswith("MKB_JSON ")]
        if not line:
            print(res.stdout[-3000:], res.stderr[-3000:])
            raise SystemExit("child failed")
        per_proc.append(json.loads(line[0][9:]))
        print(f"process {p}: done", flush=True)
    modes = ["all", "none"] if args.ncu_cache == "both" else [args.ncu_cache]
    by_mode = {mode: _run_ncu(mode) for mode in modes} if args.ncu else {}
    ncu, ncu_none = by_mode.get("all", {}), by_mode.get("none", {})
    table = {}
    for name in KERNELS:
        meds = [pp[name]["median_ms"] for pp in per_proc]
        m = statistics.median(meds)
        row = {"median_ms": m, "process_medians_ms": meds, "spread": (max(meds) - min(meds)) / m,
               "method": per_proc[0][name]["method"], "runs": [pp[name]["runs"] for pp in per_proc],
               "cv_within_process": [pp[name]["cv"] for pp in per_proc]}
        if name in ncu:
            row["ncu_ms"] = ncu[name]
            row["ratio_vs_ncu"] = m / ncu[name]
        if name in ncu_none:
            row["ncu_none_ms"] = ncu_none[name]
            row["ratio_vs_ncu_none"] = m / ncu_none[name]
        table[name] = row
    result = {"kernels": table, "naive_relu_4M": [pp["_naive_relu_4M"] for pp in per_proc],
              "timer": per_proc[0]["_timer"], "ncu_raw": ncu if "_error" in ncu else None,
              "ncu_none_raw": ncu_none if "_error" in ncu_none else None}
    out = args.out or default_out("timing_fidelity.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", out)
    nan = float("nan")
    print(f"{'kernel':22s} {'median_ms':>10s} {'spread%':>8s} {'ncu_ms':>10s} {'vs ncu':>7s} {'ncu_none':>10s} "
          f"{'vs none':>7s}  method")
    for name, r in table.items():
        print(f"{name:22s} {r['median_ms']:10.4f} {100 * r['spread']:8.2f} {r.get('ncu_ms', nan):10.4f} "
              f"{r.get('ratio_vs_ncu', nan):7.3f} {r.get('ncu_none_ms', nan):10.4f} "
              f"{r.get('ratio_vs_ncu_none', nan):7.3f}  {r['method']}")
    print("naive relu_4M cv per process:", [round(x["cv"], 3) for x in result["naive_relu_4M"]])


if __name__ == "__main__":
    main()
