# task: activation.relu
# expect: incorrect
"""Deliberately wrong: pads to whole blocks but returns the padded length's last elements as zeros
instead of slicing, i.e. it writes only the first n - n % 128 outputs and zero-fills the rest."""

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch


def _kernel(x_ref, o_ref):
    o_ref[...] = jnp.maximum(x_ref[...], 0.0)


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel()
        full = (n // 128) * 128
        xf = to_jax(x.reshape(-1))
        head = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct((full,), xf.dtype), grid=(full // 128,),
                              in_specs=[pl.BlockSpec((128,), lambda i: (i,))],
                              out_specs=pl.BlockSpec((128,), lambda i: (i,)))(xf[:full]) if full else xf[:0]
        y = jnp.concatenate([head, jnp.zeros((n - full,), xf.dtype)])
        return to_torch(y, x.device).reshape(x.shape)
