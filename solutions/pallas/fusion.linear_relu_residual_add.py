"""Pallas candidate for fusion.linear_relu_residual_add: one tiled matmul (x @ W^T, K walked in slices,
fp32 HIGHEST precision) with bias, ReLU and the residual add in the same kernel, so the linear output
never goes to memory. Operands are zero-padded to whole tiles (no-op at the 8192^3 benchmark shape)."""

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch

BM, BN, BK = 128, 128, 32


@jax.jit
def _fused(x, w, b, r):
    m, k = x.shape
    n = w.shape[0]
    mp, np_, kp = pl.cdiv(m, BM) * BM, pl.cdiv(n, BN) * BN, pl.cdiv(k, BK) * BK
    x = jnp.pad(x, ((0, mp - m), (0, kp - k)))
    wt = jnp.pad(w.T, ((0, kp - k), (0, np_ - n)))
    b = jnp.pad(b, (0, np_ - n)).reshape(1, np_)
    r = jnp.pad(r, ((0, mp - m), (0, np_ - n)))
    steps = kp // BK

    def kernel(x_ref, w_ref, b_ref, r_ref, o_ref):
        def body(s, acc):
            return acc + jnp.dot(x_ref[:, pl.ds(s * BK, BK)], w_ref[pl.ds(s * BK, BK), :],
                                 preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)

        acc = jax.lax.fori_loop(0, steps, body, jnp.zeros((BM, BN), jnp.float32))
        o_ref[...] = jnp.maximum(acc + b_ref[...], 0.0) + r_ref[...]

    out = pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((mp, np_), jnp.float32), grid=(mp // BM, np_ // BN),
        in_specs=[pl.BlockSpec((BM, kp), lambda i, j: (i, 0)), pl.BlockSpec((kp, BN), lambda i, j: (0, j)),
                  pl.BlockSpec((1, BN), lambda i, j: (0, j)), pl.BlockSpec((BM, BN), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((BM, BN), lambda i, j: (i, j)),
    )(x, wt, b, r)
    return out[:m, :n]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        y = _fused(to_jax(x), to_jax(self.linear.weight), to_jax(self.linear.bias), to_jax(residual))
        return to_torch(y, x.device)
