"""The copy plan behind large CUDA outputs' sampled values (engine/raw_outputs.py, ``gather_plan``).

The CUDA copies themselves run on the H200 (tests/test_verdict_outputs_gpu.py); the plan is plain numpy and is
checked here against direct indexing, the way the worker applies it: ranges copied back to back, values picked
from the copy."""

from __future__ import annotations

import numpy as np
import pytest

from multikernelbench.engine.raw_outputs import element_offsets, gather_plan, secret_positions


def _through_plan(memory: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    lo, hi, where = gather_plan(offsets, memory.itemsize)
    copy = np.concatenate([memory[a:b] for a, b in zip(lo, hi)])
    assert len(copy) == int((hi - lo).sum())
    return copy[where]


@pytest.mark.parametrize("item", [1, 2, 4, 8])
def test_plan_returns_the_value_at_every_offset_in_order(item):
    rng = np.random.default_rng(item)
    memory = rng.integers(0, 2**31, size=1 << 20).astype(f"u{item}")
    offsets = secret_positions(7, 4096, 1024) % memory.size  # edges: two contiguous runs; repeats possible
    assert np.array_equal(_through_plan(memory, offsets), memory[offsets])


def test_plan_merges_runs_and_keeps_sparse_positions_apart():
    offsets = np.array([10, 11, 12, 5000, 13, 9000, 9001], dtype=np.int64)
    lo, hi, _ = gather_plan(offsets, 4)
    assert list(zip(lo.tolist(), hi.tolist())) == [(10, 14), (5000, 5001), (9000, 9002)]
    assert int((hi - lo).sum()) == 7  # nothing but the values asked for (and gaps under 256 bytes)


def test_plan_through_the_strides_of_a_transposed_output():
    base = np.arange(700 * 300, dtype=np.float32).reshape(700, 300)
    t = base.T
    flat = secret_positions(3, 256, 8) % t.size
    offsets = element_offsets(flat, t.shape, [s // 4 for s in t.strides])
    assert np.array_equal(_through_plan(base.reshape(-1), offsets), t.reshape(-1)[flat])
