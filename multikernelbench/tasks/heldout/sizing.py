"""Choose a generated task's shapes: three small odd test shapes, a GPU and a CPU bench shape, and ranges.

Sizes come from each shape key's role (draft.Role). The bench shape is scaled along its batch (or row) key
until the roofline estimate on a datacenter GPU is a few milliseconds at every dtype the task declares,
within a memory budget that counts every intermediate tensor of the eager reference. The ranges' lower
bound for spatial sizes is the smallest size at which the reference still runs (strided convolutions and
pools shrink their input), found by trying it.
"""

from __future__ import annotations

import math
import random
import types

import torch

from multikernelbench.tasks.gates import H100_BYTES_PER_S, H100_FLOPS
from multikernelbench.tasks.heldout.codegen import ShapePlan
from multikernelbench.tasks.heldout.draft import Draft

SPATIAL_TEST = {"1d": (17, 75), "2d": (7, 23), "3d": (5, 9)}
SPATIAL_RANGE_HIGH = {"1d": 96, "2d": 28, "3d": 11}
SPATIAL_BENCH = {"1d": (2048, 4096, 8192), "2d": (32, 56, 64, 112), "3d": (16, 24, 32)}
SPATIAL_CPU = {"1d": (512, 1024), "2d": (32, 48), "3d": (8, 12)}
TARGET_GPU_MS = 2.0
TARGET_CPU_MS = 4.0
GPU_MEMORY_BUDGET = 40e9  # every tensor of the eager forward at once, fp32
CPU_MEMORY_BUDGET = 0.6e9
TEST_FLOP_BUDGET = 3e7  # keeps a test-shape forward far below 50 ms on one core
TEST_NUMEL_BUDGET = 2e5


class SizingError(ValueError):
    """No shape of this graph fits the budgets (the draw is rejected)."""


def _layout(d: Draft) -> str:
    return d.values[0].layout


def _round(value: float, multiple: int, low: int = 1) -> int:
    return max(low, multiple * max(1, round(value / multiple)))


def _test_value(role, layout: str, rng: random.Random, spatial_low: int) -> int:
    m = role.multiple
    if role.kind == "batch":
        return rng.choice((1, 2, 3))
    if role.kind == "spatial":
        lo, hi = SPATIAL_TEST[layout]
        return rng.randint(max(lo, spatial_low), max(hi, spatial_low + 4))
    lo, hi = {"channels": (3, 24), "features": (5, 100), "seq": (3, 33)}[role.kind]
    if m == 1:
        return rng.randint(lo, hi) | 1  # odd
    return m * rng.randint(max(1, math.ceil(lo / m)), max(1, hi // m, math.ceil(lo / m)))


def _numel(size) -> int:
    return math.prod(size)


def _all_numel(mod: types.ModuleType, shape: dict) -> int:
    return sum(_numel(s) for s in mod.sizes(shape).values())


def runs(mod: types.ModuleType, shape: dict) -> bool:
    """The reference runs at ``shape`` and every tensor has a positive size."""
    try:
        if any(x < 1 for s in mod.sizes(shape).values() for x in s):
            return False
        gen = torch.Generator().manual_seed(0)
        with torch.no_grad():
            mod.Model(*mod.get_init_inputs(shape)).eval()(*mod.get_inputs(shape, gen))
        return True
    except (RuntimeError, ValueError, ZeroDivisionError):
        return False


def low_corner(d: Draft, spatial: int) -> dict:
    return {k: {"batch": 1, "spatial": spatial}.get(r.kind, r.multiple) for k, r in d.keys.items()}


def spatial_low(d: Draft, mod: types.ModuleType) -> int:
    for s in range(1, 64):
        if runs(mod, low_corner(d, s)):
            return s
    raise SizingError("no spatial size below 64 runs")


def test_shapes(d: Draft, mod, rng: random.Random, low: int) -> tuple[dict, ...]:
    shapes = []
    for _ in range(3):
        for _attempt in range(20):
            shape = {k: _test_value(r, _layout(d), rng, low) for k, r in d.keys.items()}
            if mod.flops(shape) <= TEST_FLOP_BUDGET and _all_numel(mod, shape) <= TEST_NUMEL_BUDGET:
                break
        else:
            raise SizingError("no test shape within the CPU budget")
        shapes.append(shape)
    return tuple(shapes)


def ranges(d: Draft, tests: tuple[dict, ...], low: int) -> dict:
    out: dict[str, tuple[int, ...]] = {}  # (low, high) or (low, high, multiple)
    for k, r in d.keys.items():
        top = max(t[k] for t in tests)
        if r.kind == "batch":
            out[k] = (1, max(4, top))
        elif r.kind == "spatial":
            out[k] = (low, max(SPATIAL_RANGE_HIGH[_layout(d)], top))
        else:
            high = {"channels": 24, "features": 128, "seq": 40}[r.kind]
            hi = max(top, r.multiple * max(1, high // r.multiple))
            out[k] = (r.multiple, hi) if r.multiple == 1 else (r.multiple, hi, r.multiple)
    return out


def _scale_key(d: Draft) -> str:
    for kind in ("batch", "seq"):
        for k, r in d.keys.items():
            if r.kind == kind:
                return k
    return next(iter(d.keys))


def _base(d: Draft, rng: random.Random, cpu: bool, low: int) -> dict:
    shape = {}
    for k, r in d.keys.items():
        if r.kind == "batch":
            shape[k] = 1
        elif r.kind == "spatial":
            shape[k] = max(low, rng.choice((SPATIAL_CPU if cpu else SPATIAL_BENCH)[_layout(d)]))
        else:
            pick = {"channels": ((16, 32), (64, 128, 256)), "features": ((256, 512), (1024, 2048, 4096)),
                    "seq": ((64, 128), (256, 512, 1024))}[r.kind][0 if cpu else 1]
            shape[k] = _round(rng.choice(pick), r.multiple)
    return shape


def gpu_ms(mod, shape: dict, dtype: str) -> float:
    itemsize = 2 if dtype == "bfloat16" else 4
    return 1e3 * max(mod.bytes_moved(shape, itemsize) / H100_BYTES_PER_S, mod.flops(shape) / H100_FLOPS[dtype])


def cpu_ms(mod, shape: dict) -> float:
    return 1e3 * max(mod.bytes_moved(shape, 4) / 10e9, mod.flops(shape) / 50e9)


def _scaled(d: Draft, mod, base: dict, estimate, target: float, memory: float) -> dict:
    key = _scale_key(d)
    shape = dict(base)
    for _ in range(8):  # shrink the base when one row alone is over the memory budget
        if 4 * _all_numel(mod, shape) <= memory:
            break
        others = [k for k, r in d.keys.items() if r.kind in ("spatial", "seq", "channels") and shape[k] > 8]
        if not others:
            break
        k = max(others, key=lambda k: shape[k])
        shape[k] = _round(shape[k] // 2, d.keys[k].multiple)
    factor = 1
    for _ in range(6):  # costs are affine in the scale key (weights do not grow): a few fixed-point steps
        shape[key] = base[key] * factor
        step = target / max(estimate(shape), 1e-12)
        if 0.9 <= step <= 1.2:
            break
        factor = max(1, math.ceil(factor * step))
    shape[key] = base[key] * factor
    while factor > 1 and 4 * _all_numel(mod, shape) > memory:
        factor = max(1, factor // 2)
        shape[key] = base[key] * factor
    if 4 * _all_numel(mod, shape) > memory:
        raise SizingError(f"no shape within {memory / 1e9:.1f} GB")
    return shape


def plan(d: Draft, mod: types.ModuleType, rng: random.Random, dtypes: tuple[str, ...]) -> ShapePlan:
    low = spatial_low(d, mod)
    tests = test_shapes(d, mod, rng, low)
    bench = _scaled(d, mod, _base(d, rng, False, low), lambda s: min(gpu_ms(mod, s, t) for t in dtypes),
                    TARGET_GPU_MS, GPU_MEMORY_BUDGET)
    cpu = _scaled(d, mod, _base(d, rng, True, low), lambda s: cpu_ms(mod, s), TARGET_CPU_MS, CPU_MEMORY_BUDGET)
    heavy = any(s.kind.startswith("conv") or s.kind in ("linear", "matmul") for s in d.steps)
    amplifies = any(s.kind in ("layer_norm", "group_norm", "instance_norm", "rms_norm", "batch_norm", "softmax",
                               "l2_normalize", "reduce_channels", "reduce_spatial") for s in d.steps)
    tol = {}
    if heavy:
        tol["float32"] = (1e-3, 1e-3)
    if "bfloat16" in dtypes and amplifies:
        tol["bfloat16"] = (3e-2, 3e-2)
    return ShapePlan(tests, bench, cpu, ranges(d, tests, low), dtypes, tol)
