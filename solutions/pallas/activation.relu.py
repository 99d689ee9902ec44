"""Pallas candidate for activation.relu: the flattened tensor in 4096-element blocks, one grid step each.

Written against Pallas' portable subset (BlockSpec + grid + ref loads/stores), so the same kernel lowers
for the GPU (Triton) and runs in the TPU dialect's interpret mode. Torch tensors cross through
multikernelbench.interop.pallas (DLPack, zero copy, on the GPU)."""

import functools

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch

BLOCK = 4096


def _relu_kernel(x_ref, o_ref):
    o_ref[...] = jnp.maximum(x_ref[...], 0.0)


@functools.partial(jax.jit, static_argnames=("n",))
def _relu(x_flat, n):
    padded = pl.cdiv(n, BLOCK) * BLOCK
    if padded != n:
        x_flat = jnp.pad(x_flat, (0, padded - n))
    out = pl.pallas_call(
        _relu_kernel,
        out_shape=jax.ShapeDtypeStruct((padded,), x_flat.dtype),
        grid=(padded // BLOCK,),
        in_specs=[pl.BlockSpec((BLOCK,), lambda i: (i,))],
        out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)),
    )(x_flat)
    return out[:n]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        y = _relu(to_jax(x.reshape(-1)), n=x.numel())
        return to_torch(y, x.device).reshape(shape)
