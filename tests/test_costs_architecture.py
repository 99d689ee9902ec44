"""Independent hand counts for a few architecture tasks, checked against the loader's Task.flops / Task.bytes."""

import pytest

from multikernelbench.tasks import load_suite


def _task(task_id):
    (task,) = load_suite(ids=[task_id])
    return task


@pytest.mark.slow
def test_resnet_basic_block_costs():
    # batch 128, 256 channels, 56x56, two 3x3 convs without bias, two inference BNs, add, two ReLUs.
    t = _task("architecture.resnet_basic_block")
    assert t.bench_shape == {"batch": 128, "channels": 256, "size": 56}
    elems = 128 * 256 * 56 * 56
    conv_macs = elems * 256 * 9
    expected_flops = 2 * (2 * conv_macs) + 2 * (2 * elems) + 3 * elems  # convs, BNs, ReLU + add + ReLU
    assert t.flops == expected_flops
    weights = 2 * 256 * 256 * 9 + 2 * 4 * 256
    assert t.bytes == 4 * (2 * elems + weights)
    (bf16,) = [x for x in load_suite(ids=["architecture.resnet_basic_block.bf16"])]
    assert bf16.bytes == 2 * (2 * elems + weights)


@pytest.mark.slow
def test_lstm_single_costs():
    t = _task("architecture.lstm_single")
    b, L, i, h = 128, 512, 1024, 1024
    assert t.bench_shape == {"batch": b, "seq": L, "input": i, "hidden": h}
    gate_macs = b * L * 4 * h * (i + h)
    # per step and unit: 8 bias adds, 4 adds, 5 nonlinearities, 4 cell/hidden update ops
    expected = 2 * gate_macs + b * L * h * (8 + 4 + 5 + 4)
    assert t.flops == expected
    n_params = 4 * h * i + 4 * h * h + 2 * 4 * h
    io = b * L * i + 2 * b * h + b * L * h + 2 * b * h  # x, h0, c0, out, hn, cn
    assert t.bytes == 4 * (n_params + io)


@pytest.mark.slow
def test_encoder_prenorm_costs():
    t = _task("architecture.encoder_prenorm")
    b, L, d, h = 32, 1024, 1024, 16
    assert t.bench_shape == {"batch": b, "seq": L, "dim": d, "heads": h}
    tokens = b * L
    matmul_macs = tokens * d * (3 * d + d + 4 * d + 4 * d)   # qkv, out proj, fc1, fc2
    attn_macs = 2 * b * L * L * d                             # QK^T and AV over all heads
    bias = tokens * (3 * d + d + 4 * d + d)
    elementwise = tokens * d * (2 * 5 + 2) + tokens * 4 * d  # 2 LayerNorms, 2 residuals, GELU
    softmax = 5 * b * h * L * L
    assert t.flops == 2 * (matmul_macs + attn_macs) + bias + elementwise + softmax
    n_params = 12 * d * d + (3 * d + d + 4 * d + d) + 4 * d
    assert t.bytes == 4 * (2 * tokens * d + n_params)
