"""Pallas exemplar: leaky ReLU over 1-D blocks; the slope is a static (compile-time) argument."""

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


BLOCK = 1024


def _leaky_relu_kernel(x_ref, o_ref, *, slope):
    x = x_ref[...]
    o_ref[...] = jnp.where(x > 0, x, x * slope)


@functools.partial(jax.jit, static_argnames="slope")
def _leaky_relu(x, slope):
    n = x.size
    n_pad = _round_up(n, BLOCK)
    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    out = pl.pallas_call(functools.partial(_leaky_relu_kernel, slope=slope),
                         out_shape=jax.ShapeDtypeStruct((n_pad,), x.dtype), grid=(n_pad // BLOCK,),
                         in_specs=[spec], out_specs=spec, interpret=_INTERPRET)(_pad(x.reshape(-1), (n_pad,)))
    return out[:n].reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _to_torch(_leaky_relu(_to_jax(x), float(self.negative_slope)))
