"""Cross-check the flops/bytes of normalization, pooling, index, resize and matmul tasks against independent counts.

The bench-shape numbers below are worked out by hand from each task's definition (not by calling the task's
own helpers).  Two broader checks run on the small test shapes: the dense matmul tasks against torch's
FlopCounterMode, and, for every task of these categories, bytes_moved against the sizes of the tensors the
reference actually reads and writes (inputs, floating parameters/buffers, outputs; int64 at 8 bytes).
"""

import functools
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from multikernelbench.tasks import load_suite
from multikernelbench.tasks.gates import flatten_outputs
from multikernelbench.tasks.module import make_inputs, make_model, materialize

CATEGORIES = ["normalization", "pooling", "index", "resize", "matmul"]


@functools.cache
def _suite():
    return {t.id: t for t in load_suite(categories=CATEGORIES)}


def _task(task_id):
    return _suite()[task_id]


def test_matmul_square_costs():
    n = 8192
    t32, t16 = _task("matmul.square"), _task("matmul.square.bf16")
    assert t32.flops == t16.flops == 2 * 8192 * 8192 * 8192 == 1_099_511_627_776
    assert t32.bytes == 3 * n * n * 4  # A, B read, C written
    assert t16.bytes == 3 * n * n * 2


def test_matmul_triangular_useful_flops():
    # Count the multiply-adds touching nonzeros by brute force at a small size, then check the
    # closed forms the tasks use at their bench sizes.
    n = 9
    lower = sum(1 for i in range(n) for j in range(n) for k in range(n) if k <= i)
    upper = sum(1 for i in range(n) for j in range(n) for k in range(n) if i <= k <= j)
    assert 2 * lower == n * n * (n + 1)
    assert 2 * upper == n * (n + 1) * (n + 2) // 3
    n = 10240
    assert _task("matmul.tril_matmul").flops == 2 * (n * n * (n + 1) // 2)
    n = 12288
    assert _task("matmul.triu_matmul").flops == 2 * (n * (n + 1) * (n + 2) // 6)
    assert _task("matmul.triu_matmul").bytes == 3 * 12288 ** 2 * 4


def test_matmul_addmm_and_matvec_costs():
    m = k = n = 8192
    t = _task("matmul.addmm.bf16")
    assert t.flops == 2 * m * k * n + m * n
    assert t.bytes == (n + m * k + k * n + m * n) * 2
    t = _task("matmul.matvec")
    assert t.flops == 2 * 16384 * 65536
    assert t.bytes == (16384 * 65536 + 65536 + 16384) * 4


def test_pooling_max_pool2d_costs():
    # 128 x 128 x 256 x 256, kernel 3 / stride 2 / padding 1 -> floor((256 + 2 - 3) / 2) + 1 = 128.
    nc = 128 * 128
    out = nc * 128 * 128
    t = _task("pooling.max_pool2d")
    assert t.flops == out * 8  # 9 taps -> 8 comparisons
    assert t.bytes == (nc * 256 * 256 + out) * 4
    assert _task("pooling.max_pool2d.bf16").bytes == (nc * 256 * 256 + out) * 2


def test_pooling_adaptive_avg_costs():
    # 113 -> 7: window i spans [floor(113 i / 7), ceil(113 (i + 1) / 7)); sizes computed with floats here.
    sizes = [math.ceil(113 * (i + 1) / 7) - math.floor(113 * i / 7) for i in range(7)]
    assert sum(sizes) == 119  # windows of 17 or 18 that overlap by one at 6 fractional boundaries
    t = _task("pooling.adaptive_avg_pool2d")
    assert t.flops == 128 * 512 * 119 * 119
    assert t.bytes == 128 * 512 * (113 * 113 + 49) * 4


def test_index_embedding_bag_and_gather_costs():
    t = _task("index.embedding_bag")
    vocab, dim, bags, bag = 1048576, 256, 2097152, 8
    assert t.flops == bags * dim * 7
    assert t.bytes == vocab * dim * 4 + bags * dim * 4 + bags * bag * 8
    t = _task("index.gather.bf16")
    # x (16384, 16384) bf16, int64 index (16384, 16384), output (16384, 16384) bf16
    assert t.bytes == 16384 * 16384 * (2 + 8 + 2)
    assert t.flops == 0


def test_resize_costs():
    t = _task("resize.upsample_bilinear")
    out = 64 * 64 * 448 * 448
    assert t.flops == 8 * out
    assert t.bytes == (64 * 64 * 256 * 256 + out) * 4
    t = _task("resize.pixel_unshuffle.bf16")
    # input (32, 32, 768, 768) -> output (32, 288, 256, 256): same element count, both moved once.
    assert t.bytes == 2 * 32 * 32 * 768 * 768 * 2
    t = _task("resize.grid_sample_bilinear")
    points = 64 * 256 * 256
    assert t.flops == points * 12 + points * 128 * 8
    assert t.bytes == (64 * 128 * 256 * 256 + points * 2 + points * 128) * 4


def test_normalization_layer_norm_costs():
    rows, d = 32768, 16384
    t = _task("normalization.layer_norm")
    assert t.flops == rows * d * 7 + rows * 4
    assert t.bytes == (2 * rows * d + 2 * d) * 4


DENSE_MATMULS = ["square", "bmm", "bmm_nt", "matmul_tn", "matmul_nt", "matmul_tt", "tall_skinny", "short_wide",
                 "irregular", "matvec", "vecmat", "large_k", "small_k", "matmul_4d", "einsum_double", "syrk"]


@pytest.mark.parametrize("name", DENSE_MATMULS)
def test_dense_matmul_flops_match_flop_counter(name):
    task = _task(f"matmul.{name}")
    mod = materialize(task)
    shape = task.test_shapes[0]
    model = make_model(mod.Model, mod, shape, 0, "float32")
    inputs = make_inputs(mod, shape, 0, "float32")
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(*inputs)
    assert mod.flops(dict(shape)) == counter.get_total_flops()


def _io_bytes(task, shape, itemsize):
    mod = materialize(task)
    model = make_model(mod.Model, mod, shape, 0, "float32")
    inputs = make_inputs(mod, shape, 0, "float32")
    with torch.no_grad():
        outs = flatten_outputs(model(*inputs))

    def size(t):
        return t.numel() * (itemsize if t.is_floating_point() else t.element_size())

    state = [t for t in list(model.parameters()) + list(model.buffers()) if t.is_floating_point()]
    return sum(size(t) for t in inputs if isinstance(t, torch.Tensor)) + sum(map(size, state)) + sum(map(size, outs))


# Tasks whose compulsory traffic is not "every tensor once": the output of one_hot is float32 whatever the
# itemsize (checked at itemsize 4 only).
FLOAT32_OUTPUT = {"index.one_hot"}


def _float32_tasks():
    """Every float32 task of these categories; the fast tier (``-m "not slow"``) checks the first of each."""
    seen = set()
    for i, t in _suite().items():
        if t.dtype == "float32":
            yield pytest.param(i, marks=() if t.category not in seen else pytest.mark.slow)
            seen.add(t.category)


@pytest.mark.parametrize("task_id", list(_float32_tasks()))
def test_bytes_match_tensors_touched(task_id):
    task = _task(task_id)
    mod = materialize(task)
    for shape in task.test_shapes:
        for itemsize in ((4,) if task_id in FLOAT32_OUTPUT else (4, 2)):
            assert mod.bytes_moved(dict(shape), itemsize) == _io_bytes(task, shape, itemsize), (shape, itemsize)
