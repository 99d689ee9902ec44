"""OpenCL candidate for normalization.rms_norm: one work-group of 64 per row, sum of squares reduced in local
memory, then every work-item scales its strided share of the row by rsqrt(mean + eps) and the weight."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
#define WG 64
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rms_norm(__global const float* x, __global const float* w, __global float* y, const int dim, const float eps) {
    __local float part[WG];
    const int lid = get_local_id(0);
    __global const float* r = x + (long)get_group_id(0) * dim;
    __global float* o = y + (long)get_group_id(0) * dim;
    float acc = 0.0f;
    for (int c = lid; c < dim; c += WG) acc += r[c] * r[c];
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float scale = rsqrt(part[0] / (float)dim + eps);
    for (int c = lid; c < dim; c += WG) o[c] = r[c] * scale * w[c];
}
"""

CTX = cl.create_some_context(interactive=False)  # the harness picks the device (PYOPENCL_CTX)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
PRG = cl.Program(CTX, SRC).build()


def to_device(t: torch.Tensor) -> cl.Buffer:
    return cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=t.detach().contiguous().numpy())


def to_host(buf: cl.Buffer, out: torch.Tensor) -> torch.Tensor:
    cl.enqueue_copy(QUEUE, out.numpy(), buf)  # blocking
    return out


RMS_NORM = PRG.rms_norm
WG = 64


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        rows = x.numel() // dim
        out = torch.empty_like(x)
        buf = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        RMS_NORM(QUEUE, (rows * WG,), (WG,), to_device(x), to_device(self.weight), buf, np.int32(dim),
                 np.float32(self.eps))
        return to_host(buf, out)
