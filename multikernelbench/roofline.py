"""Roofline bound of a task on a device, and the fraction of it a measured time achieves.

Peaks are *measured* on each device by ``scripts/measure_peaks.py`` (a large device-to-device copy counting
bytes read plus written; large matrix products per dtype) and committed as
``multikernelbench/hardware/<slug>.json``; datasheet numbers are never used. For a task with ``flops`` and
compulsory ``bytes`` at the timed shape, the bound is ``max(flops / compute_peak(dtype), bytes / copy_bw)``
and the fraction is ``bound / measured``: 1.0 means at the roofline, small means far from it.

The compute peak for float32 tasks is the plain-fp32 matrix rate (TF32 off): the harness' fp32 tolerance
(1e-4) rules out TF32 arithmetic, so a TF32 peak would overstate what a correct fp32 kernel can reach. The
tf32 rate is recorded in the table for reference.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

HARDWARE_DIR = Path(__file__).with_name("hardware")

# dtype of the task -> key of the peak that bounds its arithmetic
_COMPUTE_KEY = {"float32": "fp32_matmul_tflops", "bfloat16": "bf16_matmul_tflops",
                "float16": "fp16_matmul_tflops", "float64": "fp64_matmul_tflops"}


def slug(hardware: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", hardware.lower()).strip("_")


@cache
def load_peaks(hardware: str) -> dict[str, Any] | None:
    """The measured peak table for this device name (e.g. "NVIDIA H200"), or None if none is committed.

    Only committed tables: the engine's roofline fraction (and the anti-cheat bound on it) rests on numbers
    measured on a quiet device and reviewed, never on a table a busy host measured of itself."""
    path = HARDWARE_DIR / f"{slug(hardware)}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())


def bandwidth_gbps(peaks: dict[str, Any], nbytes: int) -> float | None:
    """Copy bandwidth for a task touching ``nbytes``: a table measured per working set (a CPU's, timed without
    cache flushes) gives the rate of the largest measured set not above ``nbytes`` (the smallest set's below
    that); a single number (a GPU's, timed with L2 flushed) is used as it is."""
    curve = peaks.get("copy_bandwidth_by_bytes_gbps")
    if not curve:
        return peaks.get("copy_bandwidth_gbps")
    sizes = sorted(int(k) for k in curve)
    fitting = [s for s in sizes if s <= nbytes] or sizes[:1]
    return curve[str(fitting[-1])]


def bound_ms(peaks: dict[str, Any], dtype: str, flops: int, nbytes: int) -> float | None:
    bw = bandwidth_gbps(peaks, nbytes)
    rate = peaks.get(_COMPUTE_KEY.get(dtype, "fp32_matmul_tflops")) or peaks.get("fp32_matmul_tflops")
    if not bw or not rate:
        return None
    t_mem = nbytes / (bw * 1e9) * 1e3
    t_cmp = flops / (rate * 1e12) * 1e3
    return max(t_mem, t_cmp)


def roofline_fraction(hardware: str, dtype: str, flops: int, nbytes: int, median_ms: float) -> float | None:
    """bound / measured for a result; None when the device has no committed peak table or time is 0."""
    peaks = load_peaks(hardware)
    if not peaks or not median_ms or median_ms <= 0:
        return None
    b = bound_ms(peaks, dtype, flops, nbytes)
    return None if b is None else b / median_ms
