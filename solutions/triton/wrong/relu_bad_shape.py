# task: activation.relu
# expect: runtime_error
"""Deliberately wrong: tl.arange with a non-power-of-two range fails when the kernel is compiled."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1000),)](x, y, x.numel(), BLOCK=1000)
        return y
