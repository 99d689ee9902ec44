"""Triton exemplar: fused SGD-momentum step; reads three tensors and writes two new ones in one pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sgd_momentum_kernel(p_ptr, g_ptr, b_ptr, new_p_ptr, new_b_ptr, n, lr, momentum, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    nb = momentum * b + g
    tl.store(new_b_ptr + offs, nb, mask=mask)
    tl.store(new_p_ptr + offs, p - lr * nb, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float):
        super().__init__()
        self.lr = lr
        self.momentum = momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor):
        param, grad, buf = param.contiguous(), grad.contiguous(), buf.contiguous()
        new_param, new_buf = torch.empty_like(param), torch.empty_like(buf)
        n = param.numel()
        BLOCK = 1024
        _sgd_momentum_kernel[(triton.cdiv(n, BLOCK),)](param, grad, buf, new_param, new_buf, n,
                                                       float(self.lr), float(self.momentum), BLOCK=BLOCK)
        return new_param, new_buf
