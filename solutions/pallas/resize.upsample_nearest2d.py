"""Pallas candidate for resize.upsample_nearest2d: out[p, i, j] = x[p, i // s, j // s] per (n, c) plane.

The N*C planes are flattened to [P, H*W]. Grid (plane, output-row blocks of BH, output-column blocks of BW):
each step builds the [BH, BW] tile's source offsets from iotas (row i // s, column j // s, clamped to the
plane so padded tile positions stay in bounds), does one gathered load from its plane and one contiguous
store, so output rows are written coalesced and each input element is fetched by its s*s copies from the
same tile (cache hits after the first). Output rows/columns are padded to whole tiles and sliced off (a
no-op at the benchmark shape). Pure data movement: bfloat16 and float32 alike. Power-of-two tiles, as the
Triton lowering requires; compiler_params pins the Triton lowering on a GPU (this JAX otherwise defaults
to Mosaic GPU)."""

import functools

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton

from multikernelbench.interop.pallas import to_jax, to_torch

MAX_BW = 512      # output columns per tile
TILE = 4096       # elements per [BH, BW] tile


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


@functools.partial(jax.jit, static_argnames=("h", "w", "scale"))
def _upsample(x, h, w, scale):
    p = x.shape[0]                       # x: [P, H*W]
    ho, wo = h * scale, w * scale
    bw = min(MAX_BW, max(16, _pow2(wo)))
    bh = min(TILE // bw, _pow2(ho))
    hp, wp = pl.cdiv(ho, bh) * bh, pl.cdiv(wo, bw) * bw

    def kernel(x_ref, o_ref):
        r = pl.program_id(1) * bh + jax.lax.broadcasted_iota(jnp.int32, (bh, bw), 0)
        c = pl.program_id(2) * bw + jax.lax.broadcasted_iota(jnp.int32, (bh, bw), 1)
        src_r = jnp.minimum(jax.lax.div(r, scale), h - 1)     # r, c >= 0: truncation is floor
        src_c = jnp.minimum(jax.lax.div(c, scale), w - 1)
        o_ref[...] = x_ref[src_r * w + src_c]

    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((p, hp, wp), x.dtype),
        grid=(p, hp // bh, wp // bw),
        in_specs=[pl.BlockSpec((None, h * w), lambda n, i, j: (n, 0))],
        out_specs=pl.BlockSpec((None, bh, bw), lambda n, i, j: (n, i, j)),
        compiler_params=pltriton.CompilerParams(num_warps=4, num_stages=1),
    )(x)
    return out[:, :ho, :wo]


class ModelNew(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = int(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        s = self.scale
        y = _upsample(to_jax(x.reshape(n * c, h * w)), h=h, w=w, scale=s)
        return to_torch(y, x.device).reshape(n, c, h * s, w * s)
