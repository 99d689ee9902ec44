"""Pallas exemplar: fused SGD-momentum step; one kernel with three inputs and two outputs."""

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


def _sgd_kernel(p_ref, g_ref, b_ref, new_p_ref, new_b_ref, *, lr, momentum):
    nb = momentum * b_ref[...] + g_ref[...]
    new_b_ref[...] = nb
    new_p_ref[...] = p_ref[...] - lr * nb


@functools.partial(jax.jit, static_argnames=("lr", "momentum"))
def _sgd(param, grad, buf, lr, momentum):
    n = param.size
    n_pad = _round_up(n, BLOCK)
    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    shape = jax.ShapeDtypeStruct((n_pad,), param.dtype)
    new_p, new_b = pl.pallas_call(functools.partial(_sgd_kernel, lr=lr, momentum=momentum), out_shape=(shape, shape),
                                  grid=(n_pad // BLOCK,), in_specs=[spec] * 3, out_specs=(spec, spec),
                                  interpret=_INTERPRET)(*(_pad(t.reshape(-1), (n_pad,)) for t in (param, grad, buf)))
    return new_p[:n].reshape(param.shape), new_b[:n].reshape(buf.shape)


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float):
        super().__init__()
        self.lr = lr
        self.momentum = momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor):
        new_p, new_b = _sgd(_to_jax(param), _to_jax(grad), _to_jax(buf), float(self.lr), float(self.momentum))
        return _to_torch(new_p), _to_torch(new_b)
