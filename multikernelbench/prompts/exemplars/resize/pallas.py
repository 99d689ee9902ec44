"""Pallas exemplar: nearest 2x upsampling; each program writes one plane (leading dim squeezed by a None block size) through four stride-2 stores."""

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


def _upsample_kernel(x_ref, o_ref, *, hp, wp):
    x = x_ref[...]
    for dy in range(2):
        for dx in range(2):
            o_ref[pl.ds(dy, hp, 2), pl.ds(dx, wp, 2)] = x


@jax.jit
def _upsample2x(x):
    planes, h, w = x.shape
    hp, wp = _pow2(h), _pow2(w)
    out = pl.pallas_call(functools.partial(_upsample_kernel, hp=hp, wp=wp),
                         out_shape=jax.ShapeDtypeStruct((planes, 2 * hp, 2 * wp), x.dtype), grid=(planes,),
                         in_specs=[pl.BlockSpec((None, hp, wp), lambda i: (i, 0, 0))],
                         out_specs=pl.BlockSpec((None, 2 * hp, 2 * wp), lambda i: (i, 0, 0)),
                         interpret=_INTERPRET)(_pad(x, (planes, hp, wp)))
    return out[:, :2 * h, :2 * w]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        out = _upsample2x(_to_jax(x.reshape(n * c, h, w)))
        return _to_torch(out).reshape(n, c, 2 * h, 2 * w)
