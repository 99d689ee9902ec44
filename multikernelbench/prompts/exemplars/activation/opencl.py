"""OpenCL exemplar: leaky ReLU; one work-item per element, the slope passed as a runtime float."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void leaky_relu(__global const float* x, __global float* y, const float slope, const long n) {
    long i = get_global_id(0);
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? v : v * slope;
    }
}
"""

CTX = cl.create_some_context(interactive=False)  # the harness picks the device (PYOPENCL_CTX)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
PRG = cl.Program(CTX, SRC).build()


def to_device(t: torch.Tensor) -> cl.Buffer:
    """An explicit host -> device copy of a tensor (weights require grad: detach first)."""
    return cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=t.detach().contiguous().numpy())


def to_host(buf: cl.Buffer, out: torch.Tensor) -> torch.Tensor:
    """A blocking device -> host copy into a torch tensor: the result is there when forward returns."""
    cl.enqueue_copy(QUEUE, out.numpy(), buf)
    return out


LEAKY_RELU = PRG.leaky_relu


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        out_buf = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        LEAKY_RELU(QUEUE, (n,), None, to_device(x), out_buf, np.float32(self.negative_slope), np.int64(n))
        return to_host(out_buf, out)