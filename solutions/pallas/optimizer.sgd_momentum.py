"""Pallas candidate for optimizer.sgd_momentum: the Nesterov SGD step fused into one kernel with two outputs."""

import functools

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch

BLOCK = 4096


@functools.partial(jax.jit, static_argnames=("lr", "mu", "damp", "wd"))
def _sgd(p, g, b, lr, mu, damp, wd):
    n = p.shape[0]
    padded = pl.cdiv(n, BLOCK) * BLOCK
    if padded != n:
        p, g, b = (jnp.pad(t, (0, padded - n)) for t in (p, g, b))

    def kernel(p_ref, g_ref, b_ref, np_ref, nb_ref):
        pv = p_ref[...]
        gv = g_ref[...] + wd * pv
        bv = mu * b_ref[...] + (1.0 - damp) * gv
        nb_ref[...] = bv
        np_ref[...] = pv - lr * (gv + mu * bv)

    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    out = jax.ShapeDtypeStruct((padded,), p.dtype)
    new_p, new_b = pl.pallas_call(kernel, out_shape=(out, out), grid=(padded // BLOCK,),
                                  in_specs=[spec, spec, spec], out_specs=(spec, spec))(p, g, b)
    return new_p[:n], new_b[:n]


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float, dampening: float, weight_decay: float):
        super().__init__()
        self.lr, self.momentum, self.dampening, self.weight_decay = lr, momentum, dampening, weight_decay

    def forward(self, param, grad, momentum_buffer):
        shape = param.shape
        p, b = _sgd(to_jax(param.reshape(-1)), to_jax(grad.reshape(-1)), to_jax(momentum_buffer.reshape(-1)),
                    lr=self.lr, mu=self.momentum, damp=self.dampening, wd=self.weight_decay)
        return to_torch(p, param.device).reshape(shape), to_torch(b, param.device).reshape(shape)
