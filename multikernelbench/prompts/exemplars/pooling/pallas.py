"""Pallas exemplar: 1-D max pooling; strided ref slices (pl.ds with a stride) read each window tap for a whole block."""

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


BR = 8


def _max_pool_kernel(x_ref, o_ref, *, kernel, stride, out_block):
    m = x_ref[:, pl.ds(0, out_block, stride)]
    for k in range(1, kernel):  # unrolled at trace time: kernel is static
        m = jnp.maximum(m, x_ref[:, pl.ds(k, out_block, stride)])
    o_ref[...] = m


@functools.partial(jax.jit, static_argnames=("kernel", "stride"))
def _max_pool1d(x, kernel, stride):
    rows, length = x.shape
    out_len = (length - kernel) // stride + 1
    rp, ob = _round_up(rows, BR), _pow2(out_len)
    lp = _pow2(stride * (ob - 1) + kernel)  # every tap of every (padded) output stays inside the block
    out = pl.pallas_call(functools.partial(_max_pool_kernel, kernel=kernel, stride=stride, out_block=ob),
                         out_shape=jax.ShapeDtypeStruct((rp, ob), x.dtype), grid=(rp // BR,),
                         in_specs=[pl.BlockSpec((BR, lp), lambda i: (i, 0))],
                         out_specs=pl.BlockSpec((BR, ob), lambda i: (i, 0)),
                         interpret=_INTERPRET)(_pad(x, (rp, lp), -jnp.inf))
    return out[:rows, :out_len]


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, length = x.shape
        out = _max_pool1d(_to_jax(x.reshape(n * c, length)), self.kernel_size, self.stride)
        return _to_torch(out).reshape(n, c, -1)
