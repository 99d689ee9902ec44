# task: activation.relu
# expect: incorrect
"""Deliberately wrong: float4 work-items with no scalar tail, so the last numel % 4 elements are never written."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void relu4(__global const float* x, __global float* y, const long n) {
    long i = get_global_id(0) * 4;
    if (i + 3 < n) vstore4(fmax(vload4(0, x + i), (float4)(0.0f)), 0, y + i);
}
"""

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
RELU4 = cl.Program(CTX, SRC).build().relu4


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        n = x.numel()
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=x.numpy())
        yb = cl.Buffer(CTX, MF.READ_WRITE | MF.COPY_HOST_PTR, hostbuf=out.numpy())
        RELU4(QUEUE, ((n + 3) // 4,), None, xb, yb, np.int64(n))
        cl.enqueue_copy(QUEUE, out.numpy(), yb)
        return out
