"""Causal attention as a flash-attention loop: per (batch*head, query tile), stream key/value tiles with an
online softmax (running max and sum, float32 accumulator); keys after the query are masked to -inf."""

import math

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[1, 32, 32]))
def causal_attention_kernel(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    planes, seq, dim = q.size()
    out = torch.empty_like(q)
    for tp, tq in hl.tile([planes, seq]):
        m_i = hl.full([tp, tq], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tp, tq], dtype=torch.float32)
        acc = hl.zeros([tp, tq, dim], dtype=torch.float32)
        qt = q[tp, tq, :]
        for tk in hl.tile(seq):
            s = torch.bmm(qt, k[tp, tk, :].transpose(1, 2)) * scale
            future = tk.index[None, None, :] > tq.index[None, :, None]
            s = torch.where(future, float("-inf"), s)
            m_new = torch.maximum(m_i, torch.amax(s, 2))
            p = torch.exp(s - m_new[:, :, None])
            corr = torch.exp(m_i - m_new)
            l_i = l_i * corr + torch.sum(p, 2)
            acc = torch.baddbmm(acc * corr[:, :, None], p, v[tp, tk, :])
            m_i = m_new
        out[tp, tq, :] = acc / l_i[:, :, None]
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        b, h, s, d = q.shape
        out = causal_attention_kernel(q.contiguous().view(b * h, s, d), k.contiguous().view(b * h, s, d),
                                      v.contiguous().view(b * h, s, d), 1.0 / math.sqrt(d))
        return out.view(b, h, s, d)
