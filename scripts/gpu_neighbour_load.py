"""A second process on the GPU (issue #40, item 6: "the shipped CUDA set beside a second GPU process").

Another user's job on a shared GPU: bursts of matrix products (bf16, ``--n`` square) for ``--burst-ms``, then
idle for as long as the duty cycle leaves, until killed. The GPU time-slices between the two processes'
contexts, so every clock of the evaluation beside it may include this process's kernels; an honest kernel must
still not be convicted (its speedup may move, its status must not). Prints one line per 10 s (bursts, the
fraction of wall time spent in bursts) so the log shows it ran.

    python3 scripts/gpu_neighbour_load.py --duty 0.5 &
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duty", type=float, default=0.5, help="fraction of wall time the GPU is kept busy")
    ap.add_argument("--burst-ms", type=float, default=20.0, help="mean length of one busy burst")
    ap.add_argument("--n", type=int, default=4096, help="size of the square bf16 products")
    ap.add_argument("--device", default="cuda:0")
    args = ap.parse_args()
    import torch

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    a = torch.randn(args.n, args.n, device=args.device, dtype=torch.bfloat16)
    b = torch.randn_like(a)
    rng = random.Random(0)
    busy = bursts = 0.0
    t_start = last = time.perf_counter()
    while not stop:
        burst = rng.expovariate(1.0 / args.burst_ms) / 1e3
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < burst:
            torch.mm(a, b)
            torch.cuda.synchronize(args.device)
        spent = time.perf_counter() - t0
        busy, bursts = busy + spent, bursts + 1
        if args.duty < 1.0:
            time.sleep(spent * (1.0 - args.duty) / max(args.duty, 1e-3))
        now = time.perf_counter()
        if now - last >= 10.0:
            print(f"{now - t_start:7.1f} s: {bursts:.0f} bursts, busy {busy / (now - t_start):.2f} of wall",
                  flush=True)
            last = now
    return 0


if __name__ == "__main__":
    sys.exit(main())
