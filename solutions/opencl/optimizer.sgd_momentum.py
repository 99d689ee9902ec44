"""OpenCL candidate for optimizer.sgd_momentum (Nesterov, dampening, weight decay): one fused elementwise kernel
writing both outputs."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void sgd(__global const float* p, __global const float* g, __global const float* b,
                  __global float* new_p, __global float* new_b, const float lr, const float mu, const float damp,
                  const float wd, const long n) {
    long i = get_global_id(0);
    if (i < n) {
        float gi = g[i] + wd * p[i];
        float bi = mu * b[i] + (1.0f - damp) * gi;
        new_b[i] = bi;
        new_p[i] = p[i] - lr * (gi + mu * bi);
    }
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


SGD = PRG.sgd


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float, dampening: float, weight_decay: float):
        super().__init__()
        self.lr, self.momentum, self.dampening, self.weight_decay = lr, momentum, dampening, weight_decay

    def forward(self, param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor):
        n = param.numel()
        new_p, new_b = torch.empty_like(param), torch.empty_like(param)
        bp = cl.Buffer(CTX, MF.WRITE_ONLY, new_p.nbytes)
        bb = cl.Buffer(CTX, MF.WRITE_ONLY, new_b.nbytes)
        f32 = np.float32
        SGD(QUEUE, (n,), None, to_device(param), to_device(grad), to_device(momentum_buffer), bp, bb, f32(self.lr),
            f32(self.momentum), f32(self.dampening), f32(self.weight_decay), np.int64(n))
        return to_host(bp, new_p), to_host(bb, new_b)
