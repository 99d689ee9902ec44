"""OpenCL candidate for fusion.linear_relu_residual_add: one tiled GEMM with bias, ReLU and the residual add in its epilogue."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
/* C[b] = act(A[b] (M x K) * B[b] (K x N) + bias) + R[b]; A and B addressed through strides, so B may be a
   transposed nn.Linear weight. 16x16 tiles of A and B staged in local memory, zero-padded at the edges. */
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm(__global const float* A, __global const float* B, __global const float* bias, __global const float* R,
          __global float* C, const int M, const int N, const int K, const long sam, const long sak,
          const long sbk, const long sbn, const long a_batch, const long b_batch, const long c_batch,
          const int bias_mode, const int relu, const int has_res) {
    __local float As[TS][TS], Bs[TS][TS];
    const int col = get_global_id(0), row = get_global_id(1), b = get_global_id(2);
    const int lc = get_local_id(0), lr = get_local_id(1);
    A += b * a_batch; B += b * b_batch;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        As[lr][lc] = (row < M && k0 + lc < K) ? A[row * sam + (k0 + lc) * sak] : 0.0f;
        Bs[lr][lc] = (k0 + lr < K && col < N) ? B[(k0 + lr) * sbk + col * sbn] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; ++k) acc += As[lr][k] * Bs[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N) {
        if (bias_mode == 1) acc += bias[col];
        if (bias_mode == 2) acc += bias[row];
        if (relu) acc = fmax(acc, 0.0f);
        long o = b * c_batch + (long)row * N + col;
        if (has_res) acc += R[o];
        C[o] = acc;
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


GEMM = PRG.gemm
TS = 16
DUMMY = cl.Buffer(CTX, MF.READ_ONLY, 4)  # stands in for an absent bias or residual


def round_up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


def gemm(a, b, c, m, n, k, a_strides, b_strides, bias=None, bias_mode=0, relu=False, res=None, batch=1,
         batch_strides=(0, 0, 0)):
    i64 = np.int64
    GEMM(QUEUE, (round_up(n, TS), round_up(m, TS), batch), (TS, TS, 1), a, b, bias or DUMMY, res or DUMMY, c,
         np.int32(m), np.int32(n), np.int32(k), i64(a_strides[0]), i64(a_strides[1]), i64(b_strides[0]),
         i64(b_strides[1]), *map(i64, batch_strides), np.int32(bias_mode), np.int32(relu), np.int32(res is not None))

class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        batch, fin = x.shape
        fout = self.linear.weight.shape[0]
        out = torch.empty(batch, fout, dtype=x.dtype)
        c = cl.Buffer(CTX, MF.WRITE_ONLY, out.nbytes)
        # B = weight^T: element (k, n) of B is weight[n, k], at n * fin + k.
        gemm(to_device(x), to_device(self.linear.weight), c, batch, fout, fin, (fin, 1), (1, fin),
             bias=to_device(self.linear.bias), bias_mode=1, relu=True, res=to_device(residual))
        return to_host(c, out)
