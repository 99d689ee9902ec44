"""Cross-check the hand-written flops/bytes of convolution and attention tasks against independent counts.

Bench-shape numbers below are worked out by hand from the layer definitions (not by calling the task's own
helpers); for the convolutions we additionally compare against torch's FlopCounterMode on the test shapes.
"""

import functools

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from multikernelbench.tasks import load_suite
from multikernelbench.tasks.module import make_inputs, make_model, materialize


@functools.cache
def _tasks():
    return {t.id: t for t in load_suite(categories=["convolution", "attention"])}


def _task(task_id):
    return _tasks()[task_id]  # one suite load shared by every case


@pytest.mark.slow
def test_lookup_by_id_matches():
    ids = ["convolution.conv2d_3x3", "convolution.conv2d_transposed", "attention.mha_softmax.bf16"]
    for task in load_suite(ids=ids):
        assert task == _task(task.id)


def test_conv2d_3x3_costs():
    # N=64, Cin=Cout=256, 112x112, 3x3, stride 1, padding 1 -> output 112x112; bias.
    n, ci, co, h, w = 64, 256, 256, 112, 112
    out = n * co * h * w
    flops = 2 * out * ci * 3 * 3 + out
    elems = n * ci * h * w + co * ci * 9 + co + out
    t32, t16 = _task("convolution.conv2d_3x3"), _task("convolution.conv2d_3x3.bf16")
    assert t32.flops == flops == t16.flops
    assert t32.bytes == 4 * elems
    assert t16.bytes == 2 * elems


def test_conv2d_transposed_costs():
    # N=64, Cin=256 -> Cout=128, 112x112 input, 4x4 kernel, stride 2, padding 1 -> (112-1)*2 - 2 + 3 + 1 = 224.
    n, ci, co, h, w = 64, 256, 128, 112, 112
    ho = wo = 224
    flops = 2 * (n * ci * h * w) * co * 16 + n * co * ho * wo  # each input scatters into co*16 outputs; bias
    elems = n * ci * h * w + ci * co * 16 + co + n * co * ho * wo
    task = _task("convolution.conv2d_transposed")
    assert task.flops == flops
    assert task.bytes == 4 * elems


def test_conv2d_depthwise_costs():
    # N=64, C=512, 112x112, 3x3 depthwise (groups=512), padding 1; bias. Each output: 9 multiply-adds + bias.
    n, c, h, w = 64, 512, 112, 112
    flops = n * c * h * w * (2 * 9 + 1)
    elems = n * c * h * w * 2 + c * 9 + c
    task = _task("convolution.conv2d_depthwise")
    assert task.flops == flops
    assert task.bytes == 4 * elems


def test_conv3d_transposed_asym_costs():
    # N=8, Cin=128 -> Cout=64, input 16x64x96, kernel 3x3x5, stride (1,2,2), padding (1,1,2), output_padding
    # (0,1,1), no bias: output (15+0-2+2+0+1, 63*2-2+2+1+1, 95*2-4+4+1+1) = (16, 128, 192).
    n, ci, co = 8, 128, 64
    n_in = n * ci * 16 * 64 * 96
    n_out = n * co * 16 * 128 * 192
    task = _task("convolution.conv3d_transposed_asym")
    assert task.flops == 2 * n_in * co * 45
    assert task.bytes == 4 * (n_in + ci * co * 45 + n_out)


def test_mha_softmax_costs():
    # B=4, H=16, S=4096, D=128: two matmuls of 2*B*H*S*S*D flops, 6 flops per score (scale + softmax).
    b, h, s, d = 4, 16, 4096, 128
    t32, t16 = _task("attention.mha_softmax"), _task("attention.mha_softmax.bf16")
    assert t32.flops == 4 * b * h * s * s * d + 6 * b * h * s * s
    assert t32.bytes == 4 * (4 * b * h * s * d)
    assert t16.bytes == 2 * (4 * b * h * s * d)


def test_causal_and_window_count_only_visible_pairs():
    # causal_softmax: B=6, H=16, S=4096 -> S*(S+1)/2 visible pairs per head.
    b, h, s, d = 6, 16, 4096, 128
    pairs = b * h * (s * (s + 1) // 2)
    assert _task("attention.causal_softmax").flops == 4 * pairs * d + 6 * pairs
    # sliding_window: B=4, H=16, S=8192, window 2048 -> the first 2048 queries see 1..2048 keys, the rest 2048.
    b, h, s, w, d = 4, 16, 8192, 2048, 128
    per_head = sum(min(i + 1, w) for i in range(s))
    pairs = b * h * per_head
    assert _task("attention.sliding_window").flops == 4 * pairs * d + 6 * pairs


def test_block_sparse_pairs_match_mask():
    # Count visible pairs directly from the reference's mask on a small shape with a ragged last block.
    task = _task("attention.block_sparse")
    mod = materialize(task)
    shape = {"batch": 1, "heads": 1, "seq": 37, "block": 4, "head_dim": 8}
    blk = torch.arange(37) // 4
    visible = int(mod._block_allowed(blk[:, None], blk[None, :]).sum())
    assert mod.flops(shape) == 4 * visible * 8 + 6 * visible


_CONV_IDS = sorted(i for i, t in _tasks().items() if t.category == "convolution" and t.dtype == "float32")


@pytest.mark.parametrize("task_id", _CONV_IDS)
def test_conv_flops_match_flop_counter(task_id):
    # FlopCounterMode counts 2 * MACs of convolutions (no bias); the task adds one flop per output for a bias.
    task = _task(task_id)
    mod = materialize(task)
    shape = task.test_shapes[0]
    model = make_model(mod.Model, mod, shape, 0, "float32")
    (x,) = make_inputs(mod, shape, 0, "float32")
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        out = model(x)
    # Bias adds: one per element of each conv's output (convs are applied in module order, e.g. separable).
    bias_flops = 0
    feats = x
    for m in model.modules():
        if isinstance(m, torch.nn.modules.conv._ConvNd):
            with torch.no_grad():
                feats = m(feats)
            if m.bias is not None:
                bias_flops += feats.numel()
    assert feats.shape == out.shape
    assert mod.flops(dict(shape)) == counter.get_total_flops() + bias_flops
