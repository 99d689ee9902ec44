# task: activation.relu
# expect: cheat_detected
"""Deliberately wrong (precision): builds with -cl-fast-relaxed-math in a float32 task (flagged statically)."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void relu(__global const float* x, __global float* y, const long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = fmax(x[i], 0.0f);
}
"""

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
RELU = cl.Program(CTX, SRC).build(options=["-cl-fast-relaxed-math"]).relu


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=x.numpy())
        yb = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        RELU(QUEUE, (x.numel(),), None, xb, yb, np.int64(x.numel()))
        cl.enqueue_copy(QUEUE, out.numpy(), yb)
        return out
