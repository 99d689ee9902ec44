"""Independent hand counts for a few fusion tasks, checked against the loader's Task.flops / Task.bytes.

Convention used by the fusion tasks: a multiply-add is 2 flops, each simple elementwise op 1 flop per element,
eval batch norm 4, layer/group/instance norm 7, softmax 5 per element; max pooling one compare per window
element. Bytes are the compulsory traffic of a fused kernel: inputs, parameters (and BN running stats), output.
"""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from multikernelbench.tasks import load_suite
from multikernelbench.tasks.module import make_inputs, make_model, materialize


def _task(task_id):
    (task,) = load_suite(ids=[task_id])
    return task


@pytest.mark.slow
def test_linear_gelu_scale_costs():
    # GEMM-based: x(32768 x 128) @ W^T + b, GELU, * 2.0 (short K: the epilogue dominates eager time)
    t = _task("fusion.linear_gelu_scale")
    b, i, o = 32768, 128, 32768
    assert t.bench_shape == {"batch": b, "in_features": i, "out_features": o}
    assert t.flops == 2 * b * i * o + 3 * b * o  # GEMM + bias, GELU, scale
    assert t.bytes == 4 * (b * i + o * i + o + b * o)
    bf16 = _task("fusion.linear_gelu_scale.bf16")
    assert bf16.bytes == 2 * (b * i + o * i + o + b * o)
    assert bf16.flops == t.flops


@pytest.mark.slow
def test_linear_seq_residual_layernorm_costs():
    # GEMM-based on a (batch, seq, features) tensor: linear, + residual input, LayerNorm(out_features)
    t = _task("fusion.linear_seq_residual_layernorm")
    b, s, i, o = 64, 512, 128, 16384
    assert t.bench_shape == {"batch": b, "seq": s, "in_features": i, "out_features": o}
    tokens = b * s
    assert t.flops == 2 * tokens * i * o + tokens * o * (1 + 1 + 7)  # bias, residual add, layer norm
    assert t.bytes == 4 * (tokens * i + tokens * o + (o * i + o) + 2 * o + tokens * o)


@pytest.mark.slow
def test_matmul_softmax_scale_residual_costs():
    # GEMM-based, no parameters: softmax(A @ B) * 10 + R
    t = _task("fusion.matmul_softmax_scale_residual")
    m, k, n = 8192, 128, 16384
    assert t.bench_shape == {"m": m, "k": k, "n": n}
    assert t.flops == 2 * m * k * n + m * n * (5 + 1 + 1)
    assert t.bytes == 4 * (m * k + k * n + m * n + m * n)


@pytest.mark.slow
def test_conv2d_bn_relu_maxpool_costs():
    # conv-based: 3x3 'same' conv 256 -> 512 at 32x32, eval BN, ReLU, 2x2 max pool -> 16x16
    t = _task("fusion.conv2d_bn_relu_maxpool")
    n, ci, co, hw = 512, 256, 512, 32
    assert t.bench_shape == {"batch": n, "in_channels": ci, "out_channels": co, "height": hw, "width": hw}
    y = n * co * hw * hw
    pooled = n * co * 16 * 16
    assert t.flops == 2 * y * ci * 9 + y * (1 + 4 + 1) + pooled * 4
    params = co * ci * 9 + co + 4 * co  # conv weight + bias, BN weight/bias/running mean/var
    assert t.bytes == 4 * (n * ci * hw * hw + params + pooled)


@pytest.mark.slow
def test_convt3d_bn_gelu_costs():
    # conv-based: ConvTranspose3d k3 s2 p1 op1 doubles each of 8x16x16 -> 16x32x32, then eval BN and GELU
    t = _task("fusion.convt3d_bn_gelu")
    n, ci, co = 64, 512, 512
    assert t.bench_shape == {"batch": n, "in_channels": ci, "out_channels": co, "depth": 8, "height": 16, "width": 16}
    x = n * ci * 8 * 16 * 16
    y = n * co * 16 * 32 * 32
    assert t.flops == 2 * x * co * 27 + y * (1 + 4 + 1)  # every input element meets every tap of every output channel
    assert t.bytes == 4 * (x + ci * co * 27 + co + 4 * co + y)


@pytest.mark.slow
def test_conv1d_stride2_leakyrelu_lengthmax_costs():
    # conv-based: Conv1d k3 stride 2 (no padding), leaky ReLU, max over the length
    t = _task("fusion.conv1d_stride2_leakyrelu_lengthmax")
    n, ci, co, L = 512, 512, 512, 4096
    assert t.bench_shape == {"batch": n, "in_channels": ci, "out_channels": co, "length": L}
    lo = (L - 3) // 2 + 1
    y = n * co * lo
    assert t.flops == 2 * y * ci * 3 + y + y + y  # conv, bias, leaky ReLU, max reduction
    assert t.bytes == 4 * (n * ci * L + co * ci * 3 + co + n * co)


@pytest.mark.slow
def test_fusion_bytes_and_matmul_flops_match_the_reference():
    """On the smallest test shape of every fp32 fusion task: bytes_moved equals the real input + parameter +
    output sizes, and the GEMM/conv flops PyTorch counts are at most the task's total (the rest is epilogue)."""
    for t in load_suite(categories=["fusion"]):
        if t.dtype != "float32":
            continue
        mod = materialize(t)
        shape = t.test_shapes[0]
        model = make_model(mod.Model, mod, shape, 0, "float32")
        inputs = make_inputs(mod, shape, 0, "float32")
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            out = model(*inputs)
        n_in = sum(x.numel() for x in inputs)
        n_par = sum(p.numel() for p in model.parameters())
        n_par += sum(b.numel() for b in model.buffers() if b.is_floating_point())
        assert mod.bytes_moved(dict(shape), 4) == 4 * (n_in + n_par + out.numel()), t.id
        total = mod.flops(dict(shape))
        assert fc.get_total_flops() > 0, t.id
        assert out.numel() <= total - fc.get_total_flops() <= 40 * fc.get_total_flops(), t.id
