"""Pallas exemplar: row-wise prefix sum; each program scans BR whole rows (zero padding does not change the prefix)."""

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


def _cumsum_kernel(x_ref, o_ref):
    o_ref[...] = jnp.cumsum(x_ref[...], axis=1)


@jax.jit
def _cumsum(x):
    rows, cols = x.shape
    rp, cp = _round_up(rows, BR), _pow2(cols)
    spec = pl.BlockSpec((BR, cp), lambda i: (i, 0))
    out = pl.pallas_call(_cumsum_kernel, out_shape=jax.ShapeDtypeStruct((rp, cp), x.dtype), grid=(rp // BR,),
                         in_specs=[spec], out_specs=spec, interpret=_INTERPRET)(_pad(x, (rp, cp)))
    return out[:rows, :cols]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _to_torch(_cumsum(_to_jax(x)))
