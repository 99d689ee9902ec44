"""Triton candidate for attention.causal_softmax: fused causal flash attention forward (fp32).

One program per (64-query block, batch*head); key/value blocks are streamed up to the diagonal only
(the masked half is never computed), with an online softmax, so the S x S score matrix never touches
memory. Dots use input_precision="ieee" (full fp32), as the fp32 tolerance requires; head_dim is padded
to a power of two with masked loads."""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def flash_causal_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, D, scale, BM: tl.constexpr, BN: tl.constexpr,
                        DP: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * D
    rm = pid_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, DP)
    dmask = rd[None, :] < D
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=(rm[:, None] < S) & dmask, other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, DP], dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BM, S)
    for n0 in range(0, hi, BN):
        rn = n0 + tl.arange(0, BN)
        kv_mask = (rn[:, None] < S) & dmask
        k = tl.load(k_ptr + base + rn[:, None] * D + rd[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where((rn[None, :] <= rm[:, None]) & (rn[None, :] < S), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], out, mask=(rm[:, None] < S) & dmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        b, h, s, d = q.shape
        o = torch.empty_like(q)
        BM = BN = 64
        DP = max(16, triton.next_power_of_2(d))
        grid = (triton.cdiv(s, BM), b * h)
        flash_causal_kernel[grid](q, k, v, o, s, d, 1.0 / math.sqrt(d), BM=BM, BN=BN, DP=DP, num_warps=4,
                                  num_stages=2)
        return o
