# task: activation.relu
# expect: compile_error
"""Deliberately wrong: the OpenCL C does not compile (undeclared identifier); the build at import time fails."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void relu(__global const float* x, __global float* y, const long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = fmax(x[i], zero);
}
"""

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
RELU = cl.Program(CTX, SRC).build().relu


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        yb = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=x.numpy())
        RELU(QUEUE, (x.numel(),), None, xb, yb, np.int64(x.numel()))
        cl.enqueue_copy(QUEUE, out.numpy(), yb)
        return out
