"""Pallas exemplar: a two-layer MLP from one tiled linear kernel (ReLU is a static switch of its epilogue)."""

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


# float32 dots in full precision (the GPU default would round inputs to TF32, outside tolerance).
_HIGHEST = jax.lax.Precision.HIGHEST


def _dot_t(a, b):
    """a @ b.T, contracting both operands on their last axis (no transpose materialised)."""
    return jax.lax.dot_general(a, b, (((1,), (1,)), ((), ())), precision=_HIGHEST,
                               preferred_element_type=jnp.float32)


BM, BN, BK = 32, 32, 32


def _linear_kernel(x_ref, w_ref, b_ref, o_ref, *, k_steps, relu):
    def body(k, acc):
        x = x_ref[:, pl.ds(k * BK, BK)]
        w = w_ref[:, pl.ds(k * BK, BK)]  # (BN, BK) rows of W: contract both on their last axis
        return acc + _dot_t(x, w)

    acc = jax.lax.fori_loop(0, k_steps, body, jnp.zeros((BM, BN), jnp.float32))
    acc = acc + b_ref[...][None, :]
    o_ref[...] = jnp.maximum(acc, 0.0) if relu else acc


@functools.partial(jax.jit, static_argnames="relu")
def _linear(x, weight, bias, relu):
    m, k = x.shape
    n = weight.shape[0]
    mp, kp, np_ = _round_up(m, BM), _round_up(k, BK), _round_up(n, BN)
    out = pl.pallas_call(functools.partial(_linear_kernel, k_steps=kp // BK, relu=relu),
                         out_shape=jax.ShapeDtypeStruct((mp, np_), x.dtype), grid=(mp // BM, np_ // BN),
                         in_specs=[pl.BlockSpec((BM, kp), lambda i, j: (i, 0)),
                                   pl.BlockSpec((BN, kp), lambda i, j: (j, 0)),
                                   pl.BlockSpec((BN,), lambda i, j: (j,))],
                         out_specs=pl.BlockSpec((BM, BN), lambda i, j: (i, j)),
                         interpret=_INTERPRET)(_pad(x, (mp, kp)), _pad(weight, (np_, kp)), _pad(bias, (np_,)))
    return out[:m, :n]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        # Same layers in the same order as the reference, so seeded initialisation matches.
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = _linear(_to_jax(x), _to_jax(self.fc1.weight), _to_jax(self.fc1.bias), relu=True)
        out = _linear(h, _to_jax(self.fc2.weight), _to_jax(self.fc2.bias), relu=False)
        return _to_torch(out)
