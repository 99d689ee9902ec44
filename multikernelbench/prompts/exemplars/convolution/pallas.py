"""Pallas exemplar: 1-D convolution as K shifted (cout x cin) @ (cin x TB) products per (batch, time block) program."""

import functools

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

# Compiled for the GPU when JAX has one; run by the Pallas interpreter on a CPU-only JAX.
_INTERPRET = jax.default_backend() == "cpu"


def _to_jax(t: torch.Tensor) -> jax.Array:
    return jax.dlpack.from_dlpack(t.detach().contiguous())  # zero-copy; detach: parameters carry autograd


def _to_torch(a: jax.Array) -> torch.Tensor:
    return torch.from_dlpack(a)


def _pad(x: jax.Array, shape, value=0.0) -> jax.Array:
    """Pad trailing edges up to ``shape`` so every block is full (Pallas GPU blocks are power-of-2 sized)."""
    return jnp.pad(x, [(0, s - d) for d, s in zip(x.shape, shape)], constant_values=value)


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


# float32 dots in full precision (the GPU default would round inputs to TF32, outside tolerance).
_HIGHEST = jax.lax.Precision.HIGHEST


TB = 128


def _conv1d_kernel(x_ref, w_ref, b_ref, o_ref, *, ksize):
    t0 = pl.program_id(1) * TB
    acc = jnp.zeros(o_ref.shape, jnp.float32) + b_ref[...][:, None]
    for k in range(ksize):  # static unroll over taps
        xk = x_ref[:, pl.ds(t0 + k, TB)]  # (cin, TB) window shifted by k
        acc += jnp.dot(w_ref[k], xk, precision=_HIGHEST, preferred_element_type=jnp.float32)
    o_ref[...] = acc


@jax.jit
def _conv1d(x, weight, bias):
    batch, cin, length = x.shape
    cout, _, ksize = weight.shape
    out_len = length - ksize + 1
    cip, cop = max(16, _pow2(cin)), max(16, _pow2(cout))  # dot operands need >= 16 rows/cols on GPU
    lob = _round_up(out_len, TB)
    lp = lob + ksize - 1
    w_taps = _pad(jnp.transpose(weight, (2, 0, 1)), (ksize, cop, cip))  # (K, cout, cin): one matrix per tap
    out = pl.pallas_call(functools.partial(_conv1d_kernel, ksize=ksize),
                         out_shape=jax.ShapeDtypeStruct((batch, cop, lob), x.dtype), grid=(batch, lob // TB),
                         in_specs=[pl.BlockSpec((None, cip, lp), lambda b, t: (b, 0, 0)),
                                   pl.BlockSpec((ksize, cop, cip), lambda b, t: (0, 0, 0)),
                                   pl.BlockSpec((cop,), lambda b, t: (0,))],
                         out_specs=pl.BlockSpec((None, cop, TB), lambda b, t: (b, 0, t)),
                         interpret=_INTERPRET)(_pad(x, (batch, cip, lp)), w_taps, _pad(bias, (cop,)))
    return out[:, :cout, :out_len]


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # Created exactly as in the reference so the seeded initialisation gives the same weights;
        # its forward is never called.
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _to_torch(_conv1d(_to_jax(x), _to_jax(self.conv.weight), _to_jax(self.conv.bias)))
