"""OpenCL candidate for activation.relu: one work-item per float4 (16-byte loads), a scalar tail for the rest."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void relu4(__global const float* x, __global float* y, const long n) {
    long i = get_global_id(0) * 4;
    if (i + 3 < n) {
        vstore4(fmax(vload4(0, x + i), (float4)(0.0f)), 0, y + i);
    } else {
        for (; i < n; ++i) y[i] = fmax(x[i], 0.0f);
    }
}
"""

CTX = cl.create_some_context(interactive=False)  # the harness picks the device through PYOPENCL_CTX
QUEUE = cl.CommandQueue(CTX)
RELU4 = cl.Program(CTX, SRC).build().relu4
MF = cl.mem_flags


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=x.numpy())
        yb = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        RELU4(QUEUE, ((n + 3) // 4,), None, xb, yb, np.int64(n))
        cl.enqueue_copy(QUEUE, out.numpy(), yb)  # blocking: the result is on the host when forward returns
        return out
