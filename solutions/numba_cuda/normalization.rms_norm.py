"""RMS norm over the last dimension: one block per row in a grid-stride loop; sum of squares reduced in
shared memory, then every thread scales its share of the row."""

import math

import numba
import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream

THREADS = 128


@cuda.jit
def rms_norm_kernel(x, w, y, rows, dim, eps):
    buf = cuda.shared.array(THREADS, numba.float32)
    tid = cuda.threadIdx.x
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        acc = numba.float32(0.0)
        for j in range(tid, dim, THREADS):
            acc += x[r, j] * x[r, j]
        buf[tid] = acc
        cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                buf[tid] += buf[tid + step]
            cuda.syncthreads()
            step //= 2
        inv = 1.0 / math.sqrt(buf[0] / dim + eps)
        for j in range(tid, dim, THREADS):
            y[r, j] = x[r, j] * inv * w[j]
        cuda.syncthreads()


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        dim = x.shape[-1]
        rows = x.numel() // dim
        y = torch.empty_like(x)
        rms_norm_kernel[grid_blocks(rows, 1), THREADS, torch_stream()](
            as_array(x.view(rows, dim)), as_array(self.weight.detach()), as_array(y.view(rows, dim)), rows, dim, self.eps)
        return y
