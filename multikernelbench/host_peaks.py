"""Roofline peaks of this host's CPU, measured once with torch and cached, so CPU results get roofline fractions.

GPU peak tables are measured on the device and committed (``multikernelbench/hardware/``, see
:mod:`multikernelbench.roofline`); a CPU is whatever machine the user has, so its table is measured where it
is used and kept in ``~/.cache/multikernelbench/hardware/<slug of the hardware name>.json``. The hardware name
is the cpu backend's (``<model name> x<usable cores>``), so a different core allowance is a different table.

What is measured (a few seconds in all, with as many torch threads as the backend gives a candidate):

- copy bandwidth (bytes read plus written, as for the GPU table) at several working-set sizes, from one that
  fits in L2 to one far beyond the last-level cache. A CPU kernel is timed without flushing caches, so a task
  whose bytes fit in cache is bounded by that cache's bandwidth, not DRAM's: :func:`roofline.bound_ms` takes
  the bandwidth measured at the largest working set not above the task's bytes. Using DRAM bandwidth for
  such a task would make an ordinary kernel look faster than the hardware allows;
- matrix-product rates per dtype (fp32, fp64, bf16, fp16) of ``torch.matmul``, the best of a few timed runs.

Each number is the best of its runs: a peak, so noise from other processes can only lower it. A busy machine
therefore gives low peaks (fractions that look better than they are); the table records when and how it was
measured, and deleting the file measures again.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Source-buffer sizes of the copy measurement (bytes touched: twice these).
COPY_SIZES = (128 << 10, 1 << 20, 8 << 20, 64 << 20, 256 << 20)
#: dtype -> (peak key, matrix size): small enough to keep each rate under ~0.3 s on 2 cores.
MATMUL = {"float32": ("fp32_matmul_tflops", 1024), "float64": ("fp64_matmul_tflops", 768),
          "bfloat16": ("bf16_matmul_tflops", 512), "float16": ("fp16_matmul_tflops", 384)}


def cache_dir() -> Path:
    return Path.home() / ".cache" / "multikernelbench" / "hardware"


def cache_path(hardware: str, root: Path | None = None) -> Path:
    from multikernelbench.roofline import slug

    return (root or cache_dir()) / f"{slug(hardware)}.json"


def read_cached(hardware: str, root: Path | None = None) -> dict[str, Any] | None:
    path = cache_path(hardware, root)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def report_peaks(hardware: str) -> dict[str, Any] | None:
    """What ``mkb report`` places results against: the committed table (:func:`roofline.load_peaks`), else
    this host's measured CPU table from the cache (never measured here), else None."""
    from multikernelbench.roofline import load_peaks

    found = load_peaks(hardware)
    return found if found is not None or not hardware else read_cached(hardware)


def _best_seconds(fn: Callable[[], Any], budget_s: float = 0.15, most: int = 50) -> float:
    fn()  # warm-up: first-touch page faults, library dispatch
    best, start, runs = float("inf"), time.perf_counter(), 0
    while runs < 3 or (time.perf_counter() - start < budget_s and runs < most):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        runs += 1
    return best


def measure(threads: int) -> dict[str, Any]:
    """The peak table of this CPU with ``threads`` torch threads (restored afterwards)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        by_bytes = {}
        for size in COPY_SIZES:
            src = torch.ones(size // 4, dtype=torch.float32)
            dst = torch.empty_like(src)
            by_bytes[str(2 * size)] = 2 * size / _best_seconds(functools.partial(dst.copy_, src)) / 1e9
        # A smaller working set is never slower to stream than a larger one; a dip (a run descheduled by
        # another process) is replaced by the rate of the next larger set.
        sizes = sorted(by_bytes, key=int)
        for small, large in zip(reversed(sizes[:-1]), reversed(sizes[1:]), strict=True):
            by_bytes[small] = max(by_bytes[small], by_bytes[large])
        table: dict[str, Any] = {"copy_bandwidth_gbps": by_bytes[str(2 * COPY_SIZES[-1])],
                                 "copy_bandwidth_by_bytes_gbps": by_bytes}
        for dtype, (key, n) in MATMUL.items():
            a = torch.rand(n, n).to(getattr(torch, dtype))
            b = torch.rand(n, n).to(getattr(torch, dtype))
            table[key] = 2 * n ** 3 / _best_seconds(functools.partial(torch.matmul, a, b)) / 1e12
    finally:
        torch.set_num_threads(before)
    table.update(threads=threads, torch=torch.__version__,
                 measured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 method=f"best of timed runs (>= 3, ~0.15 s each) after a warm-up; copy: dst.copy_(src) of fp32 "
                        f"buffers of {', '.join(str(s >> 10) + ' KiB' for s in COPY_SIZES)}, counting read + "
                        "written bytes; matmul: torch.matmul of random n x n matrices per dtype "
                        f"({', '.join(f'{d} n={n}' for d, (_, n) in MATMUL.items())})")
    return table


def cached_or_measure(hardware: str, threads: int, root: Path | None = None) -> dict[str, Any]:
    """The cached table of ``hardware``, measuring and writing it first if there is none. One process measures
    at a time (a file lock), so two runs starting together do not halve each other's peaks."""
    from multikernelbench.util.filelock import file_lock

    path = cache_path(hardware, root)
    found = read_cached(hardware, root)
    if found is not None:
        return found
    with file_lock(path.with_suffix(".lock")):
        found = read_cached(hardware, root)
        if found is not None:
            return found
        table = {"device": hardware, **measure(threads)}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(table, indent=1) + "\n")
        os.replace(tmp, path)
        return table
