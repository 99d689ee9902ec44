"""Twelve ReLUs in a row on cold inputs, each output held, for ncu to count per kernel (benchmarks/timing_fidelity_h100).

Why: whether a short memory-bound kernel's duration includes writing its predecessors' outputs back to DRAM depends
on ncu's ``--cache-control``; run under ncu with ``all`` and ``none`` and compare ``dram__bytes_write.sum``:

    ncu --csv --profile-from-start off --clock-control none --cache-control none \\
        --metrics gpu__time_duration.sum,dram__bytes_write.sum,dram__bytes_read.sum \\
        python3 scripts/l2_writeback_probe.py 4
"""

from __future__ import annotations

import argparse
import math


def main() -> None:
    import torch

    from multikernelbench.timing.cuda_events import l2_bytes

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mfloats", type=int, help="input size in 2**20 floats")
    ap.add_argument("--calls", type=int, default=12)
    args = ap.parse_args()
    n = args.mfloats << 20
    sets = max(2, math.ceil(3 * l2_bytes() / (n * 4)))  # inputs rotated over 3x the L2: every read is cold
    inputs = [torch.randn(n, device="cuda") + 0.1 for _ in range(sets)]
    outs = [torch.relu(x) for x in inputs]  # warm-up, and one held output slot per input
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for i in range(args.calls):
        outs[i % sets] = torch.relu(inputs[i % sets])  # held: the next call writes memory of its own
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
