"""OpenCL exemplar: nearest-neighbour 2x upsampling; one work-item per output pixel reads its source pixel."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void upsample2x(__global const float* x, __global float* y, const int planes, const int h, const int w) {
    int ox = get_global_id(0), oy = get_global_id(1), p = get_global_id(2);
    if (ox >= 2 * w || oy >= 2 * h || p >= planes) return;
    y[((long)p * 2 * h + oy) * 2 * w + ox] = x[((long)p * h + oy / 2) * w + ox / 2];
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


UPSAMPLE2X = PRG.upsample2x


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        out = torch.empty(b, c, 2 * h, 2 * w, dtype=x.dtype)
        out_buf = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        UPSAMPLE2X(QUEUE, (2 * w, 2 * h, b * c), None, to_device(x), out_buf, np.int32(b * c), np.int32(h),
                   np.int32(w))
        return to_host(out_buf, out)