"""Pallas candidate for architecture.deep_mlp: each Linear(+ReLU) is one Pallas tiled matmul with bias and
ReLU fused in the kernel (fp32 HIGHEST); activations stay padded to whole tiles between layers, so only
the input is padded once and the output sliced once."""

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch

HIDDEN_LAYERS = 8
BM, BN, BK = 128, 128, 32


def _rup(n, m):
    return pl.cdiv(n, m) * m


def _linear(x, w, b, relu):
    """x: [Mp, Kp] padded; w: [N, K] torch layout; returns [Mp, Np] padded."""
    mp, kp = x.shape
    n, k = w.shape
    np_ = _rup(n, BN)
    wt = jnp.pad(w.T, ((0, kp - k), (0, np_ - n)))
    bb = jnp.pad(b, (0, np_ - n)).reshape(1, np_)
    steps = kp // BK

    def kernel(x_ref, w_ref, b_ref, o_ref):
        def body(s, acc):
            return acc + jnp.dot(x_ref[:, pl.ds(s * BK, BK)], w_ref[pl.ds(s * BK, BK), :],
                                 preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)

        acc = jax.lax.fori_loop(0, steps, body, jnp.zeros((BM, BN), jnp.float32)) + b_ref[...]
        o_ref[...] = jnp.maximum(acc, 0.0) if relu else acc

    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((mp, np_), jnp.float32), grid=(mp // BM, np_ // BN),
        in_specs=[pl.BlockSpec((BM, kp), lambda i, j: (i, 0)), pl.BlockSpec((kp, BN), lambda i, j: (0, j)),
                  pl.BlockSpec((1, BN), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((BM, BN), lambda i, j: (i, j)),
    )(x, wt, bb)


@jax.jit
def _mlp(x, params):
    m, k = x.shape
    h = jnp.pad(x, ((0, _rup(m, BM) - m), (0, _rup(k, BN) - k)))  # BN == multiple of BK: valid K padding
    for idx, (w, b) in enumerate(params):
        h = _linear(h, w, b, relu=idx < len(params) - 1)
    return h[:m, :params[-1][0].shape[0]]


class ModelNew(nn.Module):
    def __init__(self, input_size: int, width: int, output: int):
        super().__init__()
        layers = []
        fin = input_size
        for _ in range(HIDDEN_LAYERS):
            lin = nn.Linear(fin, width)
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            layers += [lin, nn.ReLU()]
            fin = width
        layers.append(nn.Linear(width, output))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        params = tuple((to_jax(m.weight), to_jax(m.bias)) for m in self.net if isinstance(m, nn.Linear))
        return to_torch(_mlp(to_jax(x), params), x.device)
