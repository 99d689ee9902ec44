"""Numba-CUDA exemplar: RMS norm; each block takes rows of a grid-stride loop, reduces the sum of squares in
shared memory, then every thread scales its strided share of the row by rsqrt(mean + eps) and the weight."""

import math

import numba
import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream

THREADS = 128


@cuda.jit
def _rms_norm_kernel(x, w, out, rows, dim, eps):
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
        scale = 1.0 / math.sqrt(buf[0] / dim + eps)
        for j in range(tid, dim, THREADS):
            out[r, j] = x[r, j] * scale * w[j]
        cuda.syncthreads()  # everyone has read buf[0] before the next row overwrites it


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, dim = x.shape
        out = torch.empty_like(x)
        _rms_norm_kernel[grid_blocks(rows, 1), THREADS, torch_stream()](
            as_array(x), as_array(self.weight.detach()), as_array(out), rows, dim, self.eps)
        return out
