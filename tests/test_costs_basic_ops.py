"""Independent hand counts of FLOPs and bytes for a few basic-op tasks, checked against the loader's Task."""

import pytest

from multikernelbench.tasks import load_suite

IDS = [
    "activation.softmax", "activation.softmax.bf16", "activation.swiglu", "activation.gelu_tanh",
    "activation.gelu_tanh.bf16", "broadcast.affine_channel_4d", "broadcast.affine_channel_4d.bf16",
    "broadcast.outer_add", "loss.cross_entropy", "loss.nll_weighted_spatial", "math.masked_cumsum",
    "optimizer.adam", "reduce.norm_dim",
]
_TASKS = {}


def _task(task_id):
    if not _TASKS:  # load once: every load_suite call parses the whole suite
        _TASKS.update((t.id, t) for t in load_suite(ids=IDS))
    return _TASKS[task_id]


@pytest.mark.slow
def test_softmax_fp32_and_bf16():
    # [32768, 16384]: read + write once; 5 flops per element (max, sub, exp, sum, divide)
    n = 32768 * 16384
    t32, t16 = _task("activation.softmax"), _task("activation.softmax.bf16")
    assert t32.bytes == 2 * n * 4
    assert t16.bytes == 2 * n * 2
    assert t32.flops == t16.flops == 5 * n


def test_swiglu_reads_twice_the_width_it_writes():
    # input [8192, 2*65536], output [8192, 65536]; 6 flops per output element
    out = 8192 * 65536
    t = _task("activation.swiglu")
    assert t.bytes == (2 * out + out) * 4
    assert t.flops == 6 * out


def test_cross_entropy_counts_int64_targets_at_8_bytes():
    b, c = 32768, 32768
    t = _task("loss.cross_entropy")
    assert t.bytes == b * c * 4 + b * 8 + 4  # logits, int64 targets, scalar loss
    assert t.flops == 4 * b * c + 4 * b


def test_nll_weighted_spatial_bytes():
    b, c, n = 64, 64, 262144
    t = _task("loss.nll_weighted_spatial")
    assert t.bytes == (b * c * n) * 4 + c * 4 + 4 + b * n * 8  # logits, class weights, loss, targets
    assert t.flops == 4 * b * c * n + 5 * b * n + 1


def test_adam_moves_seven_tensors():
    n = 16384 * 16384
    t = _task("optimizer.adam")
    assert t.bytes == 7 * n * 4  # param, grad, m, v read; param, m, v written
    assert t.flops == 13 * n


def test_outer_add_output_dominates():
    m = n = 32768
    t = _task("broadcast.outer_add")
    assert t.bytes == (m + n + m * n) * 4
    assert t.flops == m * n


def test_masked_cumsum_counts_bool_mask_as_one_byte():
    b, n = 65536, 8192
    t = _task("math.masked_cumsum")
    assert t.bytes == 2 * b * n * 4 + b * n
    assert t.flops == 2 * b * n


def test_reduce_middle_dim_and_cpu_shape():
    t = _task("reduce.norm_dim")
    b, r, i = 128, 4096, 2048
    assert t.bytes == (b * r * i + b * i) * 4
    assert t.flops == 2 * b * r * i + b * i
    cb, cr, ci = 16, 512, 512
    assert t.cpu_bytes == (cb * cr * ci + cb * ci) * 4


@pytest.mark.parametrize("task_id", ["activation.gelu_tanh", "broadcast.affine_channel_4d.bf16"])
def test_bf16_variant_halves_bytes(task_id):
    base = _task(task_id.removesuffix(".bf16"))
    if task_id.endswith(".bf16"):
        assert _task(task_id).bytes * 2 == base.bytes
    else:
        assert _task(task_id + ".bf16").bytes * 2 == base.bytes
