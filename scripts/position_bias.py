"""Does the A/B loop's order within a round favour one side? Two identical CUDA callables, each order, twice.

Why: on an H100 (2026-12-07) ``tests/test_adaptive_timing.py::test_cuda_events_a_clear_speedup_decides_and_one_on_alpha_runs_to_the_cap``
saw the adaptive rule *decide* a pair of identical matmuls after 35 rounds. This prints, per size and dict order,
the median per-round ratio of the callable listed first to the one listed second, the share of rounds it was
slower, and each side's calls per sample. With a loop that keeps one order (before dfdc98d) a ratio that follows the
position, not the callable, is a position bias; unequal calls per sample point at the sampler's per-callable plan.
Measured: a position bias (first in a round 0.03-0.14 % faster at 2048, 0.07-0.23 % slower at 512 under graphs), and
the loop now turns its order round every round (timing/loop.py ``round_order``), which leaves no fixed sign
(benchmarks/timing_order_h100/README.md).
Needs a CUDA GPU (run on the device machine: ``python3 scripts/position_bias.py``).
"""

from __future__ import annotations

import argparse
import math
import statistics


def main(argv: list[str] | None = None) -> int:
    import torch

    from multikernelbench.timing.config import TimingConfig
    from multikernelbench.timing.cuda_events import cuda_event_timer

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2048, 512])
    ap.add_argument("--rounds", type=int, default=60)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing measured")
        return 1
    cfg = TimingConfig(warmup=2, adaptive=False, min_runs=args.rounds, max_runs=args.rounds, budget_s=30.0)
    for size in args.sizes:
        a = torch.randn(size, size, device="cuda")
        calls = {"f": lambda _j, a=a: a @ a, "g": lambda _j, a=a: a @ a}
        for order in (("f", "g"), ("g", "f")):
            for rep in range(2):
                timer = cuda_event_timer(cfg)
                timer.measure({name: calls[name] for name in order})
                first, second = timer.series[order[0]], timer.series[order[1]]
                logs = [math.log(x / y) for x, y in zip(first, second, strict=False)]
                print(f"size {size:5d}  {order[0]} first, {order[1]} second  rep {rep}: rounds {len(logs)}  "
                      f"median first/second {math.exp(statistics.median(logs)):.5f}  "
                      f"rounds first slower {sum(v > 0 for v in logs) / len(logs):.2f}  "
                      f"calls per sample {timer.calls[order[0]]}/{timer.calls[order[1]]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
