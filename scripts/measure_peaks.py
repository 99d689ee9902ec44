"""Measure a GPU's roofline peaks (copy bandwidth, matrix rates per dtype) and write the table.

Usage (on the device): python scripts/measure_peaks.py [--out DIR]
Writes <slug of device name>.json into DIR (default: $OUT or ~/.cache/multikernelbench/benchmarks/hardware).
multikernelbench.roofline reads the tables in multikernelbench/hardware/: pass that folder as DIR to update
the shipped table on purpose. Each number is the median of repeated CUDA-event-timed runs after warm-up, on
random data (zeros run faster on Hopper matrix units).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from multikernelbench.util.results_dir import default_out


def _time(fn, reps: int = 20, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def copy_bandwidth(nbytes: int = 4 << 30) -> float:
    src = torch.randn(nbytes // 4, device="cuda")
    dst = torch.empty_like(src)
    ms = _time(lambda: dst.copy_(src))
    return 2 * nbytes / (ms * 1e-3) / 1e9  # GB/s, read + write


def matmul_tflops(dtype: torch.dtype, n: int = 8192, tf32: bool = False) -> float:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device="cuda").to(dtype)
    b = torch.randn(n, n, device="cuda").to(dtype)
    ms = _time(lambda: a @ b, reps=10)
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2 * n**3 / (ms * 1e-3) / 1e12


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for <device>.json (default: $OUT or ~/.cache/multikernelbench/benchmarks/hardware)")
    args = ap.parse_args()
    from multikernelbench.roofline import slug

    props = torch.cuda.get_device_properties(0)
    name = torch.cuda.get_device_name(0)
    table = {
        "device": name,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "sm_count": props.multi_processor_count, "l2_bytes": int(getattr(props, "L2_cache_size", 0)),
        "memory_bytes": props.total_memory,
        "copy_bandwidth_gbps": copy_bandwidth(),
        "fp32_matmul_tflops": matmul_tflops(torch.float32),
        "tf32_matmul_tflops": matmul_tflops(torch.float32, tf32=True),
        "bf16_matmul_tflops": matmul_tflops(torch.bfloat16),
        "fp16_matmul_tflops": matmul_tflops(torch.float16),
        "fp64_matmul_tflops": matmul_tflops(torch.float64, n=4096),
        "method": "median of CUDA-event-timed runs after 3 warm-ups; copy counts read+write bytes of a 4 GiB "
                  "buffer; matmul is torch @ on 8192^3 random data (fp64 4096^3)",
    }
    out = args.out or default_out("hardware")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{slug(name)}.json"
    path.write_text(json.dumps(table, indent=1) + "\n")
    print(json.dumps(table, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
