"""OpenCL exemplar: matmul with 16x16 tiles of A and B staged in local memory; edges padded with zeros."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void matmul(__global const float* A, __global const float* B, __global float* C, const int M, const int K,
            const int N) {
    __local float As[TS][TS], Bs[TS][TS];
    const int col = get_global_id(0), row = get_global_id(1);
    const int lc = get_local_id(0), lr = get_local_id(1);
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        As[lr][lc] = (row < M && k0 + lc < K) ? A[(long)row * K + k0 + lc] : 0.0f;
        Bs[lr][lc] = (k0 + lr < K && col < N) ? B[(long)(k0 + lr) * N + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; ++k) acc += As[lr][k] * Bs[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N) C[(long)row * N + col] = acc;
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


MATMUL = PRG.matmul
TS = 16


def round_up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        (m, k), n = a.shape, b.shape[1]
        out = torch.empty(m, n, dtype=a.dtype)
        out_buf = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        # The global size is rounded up to whole 16x16 work-groups; the kernel guards the edges.
        MATMUL(QUEUE, (round_up(n, TS), round_up(m, TS)), (TS, TS), to_device(a), to_device(b), out_buf,
               np.int32(m), np.int32(k), np.int32(n))
        return to_host(out_buf, out)