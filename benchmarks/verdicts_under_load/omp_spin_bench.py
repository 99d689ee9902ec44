"""How much CPU time an honest multi-threaded eager reference burns per call, quiet and beside busy loops, for
several libgomp spin counts (issue #40: the clock audit's CPU-time evidence assumed descheduling adds none).

Each configuration runs in a fresh subprocess (libgomp reads GOMP_SPINCOUNT once, at load): eager
``architecture.deep_mlp`` at its CPU bench shape on every usable core, ``--calls`` calls after a warm-up; it prints
the process's CPU ms and wall ms per call. ``--burners N`` busy loops run beside the loaded rows. Side by side in
one run: ``python benchmarks/verdicts_under_load/omp_spin_bench.py --burners 3``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time

CHILD = r"""
import json, os, sys, time, torch
from multikernelbench.tasks.loader import load_suite
from multikernelbench.tasks.module import materialize
t = [t for t in load_suite() if t.id == "architecture.deep_mlp"][0]
mod = materialize(t)
shape = t.cpu_bench_shape
g = torch.Generator().manual_seed(0)
model = mod.Model(*mod.get_init_inputs(shape))
ins = mod.get_inputs(shape, g)
with torch.no_grad():
    for _ in range(3):
        model(*ins)
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(int(sys.argv[1])):
        model(*ins)
    c1, w1 = time.process_time(), time.perf_counter()
n = int(sys.argv[1])
print(json.dumps({"cpu_ms": (c1 - c0) * 1e3 / n, "wall_ms": (w1 - w0) * 1e3 / n, "threads": torch.get_num_threads()}))
"""


def _burn(stop_at: float) -> None:
    while time.time() < stop_at:
        pass


def run(spin: str | None, calls: int) -> dict:
    env = dict(os.environ)
    env.pop("GOMP_SPINCOUNT", None)
    if spin is not None:
        env["GOMP_SPINCOUNT"] = spin
    out = subprocess.run([sys.executable, "-c", CHILD, str(calls)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burners", type=int, default=3)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--spins", default="default,100000,10000,1000")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    spins = [None if s == "default" else s for s in args.spins.split(",")]
    rows = []
    for rep in range(args.repeats):
        for loaded in (False, True):
            procs = []
            if loaded:
                stop_at = time.time() + 3600
                procs = [mp.Process(target=_burn, args=(stop_at,), daemon=True) for _ in range(args.burners)]
                for p in procs:
                    p.start()
            try:
                for spin in spins:
                    r = run(spin, args.calls)
                    rows.append({"repeat": rep, "loaded": loaded, "spin": spin or "default", **r})
                    print(f"rep {rep} {'loaded' if loaded else 'quiet ':6s} GOMP_SPINCOUNT={spin or 'default':>8s}: "
                          f"cpu {r['cpu_ms']:7.1f} ms/call  wall {r['wall_ms']:7.1f} ms/call  (threads {r['threads']})",
                          flush=True)
            finally:
                for p in procs:
                    p.terminate()
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
