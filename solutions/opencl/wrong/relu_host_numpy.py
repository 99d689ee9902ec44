# task: activation.relu
# expect: cheat_detected
"""Deliberately cheating: numpy computes the ReLU on the host; an OpenCL kernel only copies the result."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void copy(__global const float* x, __global float* y, const long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = x[i];
}
"""

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
COPY = cl.Program(CTX, SRC).build().copy


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        host = np.maximum(x.numpy(), 0.0)
        out = torch.empty_like(x)
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=host)
        yb = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        COPY(QUEUE, (x.numel(),), None, xb, yb, np.int64(x.numel()))
        cl.enqueue_copy(QUEUE, out.numpy(), yb)
        return out
