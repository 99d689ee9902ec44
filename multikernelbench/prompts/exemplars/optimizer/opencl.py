"""OpenCL exemplar: SGD with momentum; one kernel writes both outputs (new param, new momentum buffer)."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void sgd_momentum(__global const float* param, __global const float* grad, __global const float* buf,
                           __global float* new_param, __global float* new_buf,
                           const float lr, const float momentum, const long n) {
    long i = get_global_id(0);
    if (i < n) {
        float b = momentum * buf[i] + grad[i];
        new_buf[i] = b;
        new_param[i] = param[i] - lr * b;
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


SGD_MOMENTUM = PRG.sgd_momentum


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float):
        super().__init__()
        self.lr = lr
        self.momentum = momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor):
        n = param.numel()
        new_param, new_buf = torch.empty_like(param), torch.empty_like(buf)
        p_out = cl.Buffer(CTX, MF.WRITE_ONLY, new_param.nbytes)
        b_out = cl.Buffer(CTX, MF.WRITE_ONLY, new_buf.nbytes)
        SGD_MOMENTUM(QUEUE, (n,), None, to_device(param), to_device(grad), to_device(buf), p_out, b_out,
                     np.float32(self.lr), np.float32(self.momentum), np.int64(n))
        return to_host(p_out, new_param), to_host(b_out, new_buf)