"""scripts/timing_fidelity.py's reading of ncu's CSV: kernels between marker kernels summed per timed call, or, in the
steady mode (``--ncu-cache none``), only the last of the calls in a row after each marker, the one that starts with
the earlier calls' outputs dirty in L2 (benchmarks/timing_fidelity_h100). The ncu run itself needs a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import timing_fidelity as tf  # noqa: E402


def _csv(chunks: list[list[tuple[str, float, str]]]) -> str:
    """ncu's --csv layout: a preamble, then one row per kernel and metric; each chunk follows a marker kernel."""
    lines = ["==PROF== Connected to process 1", '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
    rows: list[tuple[str, float, str]] = []
    for chunk in chunks:
        rows.append(("void at::native::(anonymous namespace)::spin_kernel(long)", 1.0, "usecond"))
        rows.extend(chunk)
    rows.append(("void at::native::(anonymous namespace)::spin_kernel(long)", 1.0, "usecond"))
    for i, (name, value, unit) in enumerate(rows):
        lines.append(f'"{i}","{name}","gpu__time_duration.sum","{unit}","{value:,.3f}"')
    return "\n".join(lines) + "\n"


def _chunks(per_call: list[float], unit: str = "usecond") -> list[list[tuple[str, float, str]]]:
    """CALLS timed calls per kernel of KERNELS, each call the kernels ``per_call`` (durations)."""
    return [[("relu_kernel", d, unit) for d in per_call] for _ in range(tf.CALLS * len(tf.KERNELS))]


def test_a_call_of_several_kernels_is_their_sum():
    got = tf.parse_ncu(_csv(_chunks([3.0, 4.0])), list(tf.KERNELS))
    assert set(got) == set(tf.KERNELS)
    assert abs(got["relu_4M"] - 0.007) < 1e-9  # 7 us, in ms


def test_the_steady_mode_keeps_only_the_last_kernel_after_each_marker():
    durations = [11.0, 13.5, 13.9, 14.1, 13.8, 14.0]  # the first calls find room in L2; the last one is measured
    got = tf.parse_ncu(_csv(_chunks(durations)), list(tf.KERNELS), last=True)
    assert abs(got["matmul_bf16_8192"] - 0.014) < 1e-9


def test_units_and_thousands_separators_are_read():
    got = tf.parse_ncu(_csv(_chunks([1500.0], unit="nsecond")), list(tf.KERNELS))
    assert abs(got["softmax_8192x8192"] - 0.0015) < 1e-9
