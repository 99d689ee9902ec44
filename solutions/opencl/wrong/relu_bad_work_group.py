# task: activation.relu
# expect: runtime_error
"""Deliberately wrong: the kernel requires work-groups of 64 but is launched with a global size that is not a
multiple of 64 (the OpenCL runtime rejects the enqueue: CL_INVALID_WORK_GROUP_SIZE)."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void relu(__global const float* x, __global float* y, const long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = fmax(x[i], 0.0f);
}
"""

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
RELU = cl.Program(CTX, SRC).build().relu


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=x.numpy())
        yb = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        RELU(QUEUE, (n,), (64,), xb, yb, np.int64(n))
        cl.enqueue_copy(QUEUE, out.numpy(), yb)
        return out
