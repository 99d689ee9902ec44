# task: activation.relu
# expect: runtime_error
"""Deliberately wrong: the output BlockSpec does not match the output shape, so pallas_call raises."""

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
        xf = to_jax(x)
        y = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(xf.shape, xf.dtype), grid=(1,),
                           in_specs=[pl.BlockSpec(xf.shape, lambda i: (0, 0))],
                           out_specs=pl.BlockSpec((7, 3, 5), lambda i: (0, 0, 0)))(xf)
        return to_torch(y, x.device)
