"""Pallas exemplar: RMSNorm; each program normalises BR whole rows (padding zeros add nothing to the sum of squares)."""

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


def _rms_norm_kernel(x_ref, w_ref, o_ref, *, dim, eps):
    x = x_ref[...]
    inv = jax.lax.rsqrt(jnp.sum(x * x, axis=1, keepdims=True) / dim + eps)  # divide by the true width
    o_ref[...] = x * inv * w_ref[...][None, :]


@functools.partial(jax.jit, static_argnames="eps")
def _rms_norm(x, weight, eps):
    rows, dim = x.shape
    rp, dp = _round_up(rows, BR), _pow2(dim)
    spec = pl.BlockSpec((BR, dp), lambda i: (i, 0))
    out = pl.pallas_call(functools.partial(_rms_norm_kernel, dim=dim, eps=eps),
                         out_shape=jax.ShapeDtypeStruct((rp, dp), x.dtype), grid=(rp // BR,),
                         in_specs=[spec, pl.BlockSpec((dp,), lambda i: (0,))], out_specs=spec,
                         interpret=_INTERPRET)(_pad(x, (rp, dp)), _pad(weight, (dp,)))
    return out[:rows, :dim]


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        # Same expression, same order as the reference: the harness seeds both, so the values match.
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        out = _rms_norm(_to_jax(x.reshape(-1, shape[-1])), _to_jax(self.weight), float(self.eps))
        return _to_torch(out).reshape(shape)
