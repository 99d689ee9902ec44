"""Triton candidate for optimizer.sgd_momentum: the Nesterov SGD step fused into one pass (fp32)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sgd_kernel(p_ptr, g_ptr, b_ptr, np_ptr, nb_ptr, n, lr, mu, one_minus_damp, wd, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    p = tl.load(p_ptr + offs, mask=m)
    g = tl.load(g_ptr + offs, mask=m) + wd * p
    b = mu * tl.load(b_ptr + offs, mask=m) + one_minus_damp * g
    tl.store(nb_ptr + offs, b, mask=m)
    tl.store(np_ptr + offs, p - lr * (g + mu * b), mask=m)


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float, dampening: float, weight_decay: float):
        super().__init__()
        self.lr, self.momentum, self.dampening, self.weight_decay = lr, momentum, dampening, weight_decay

    def forward(self, param, grad, momentum_buffer):
        p, g, b = param.contiguous(), grad.contiguous(), momentum_buffer.contiguous()
        np_, nb = torch.empty_like(p), torch.empty_like(p)
        n = p.numel()
        BLOCK = 2048
        sgd_kernel[(triton.cdiv(n, BLOCK),)](p, g, b, np_, nb, n, self.lr, self.momentum, 1.0 - self.dampening,
                                            self.weight_decay, BLOCK=BLOCK, num_warps=8)
        return np_, nb
