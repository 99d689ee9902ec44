"""CUDA exemplar: RMSNorm; one block per row: block-reduced sum of squares, then a scaling pass."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
// Sum of `v` over the block (blockDim.x a multiple of 32, at most 1024): warp shuffles, then one warp.
__device__ float block_sum(float v) {
    __shared__ float warp_sums[32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[lane] : 0.f;
    if (warp == 0)
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    __syncthreads();  // warp_sums may be reused by the caller's next block_sum
    return v;  // valid in thread 0
}

__global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
                                int64_t dim, float eps) {
    __shared__ float inv_rms;
    const float* row = x + blockIdx.x * dim;
    float ss = 0.f;
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) ss += row[c] * row[c];
    ss = block_sum(ss);
    if (threadIdx.x == 0) inv_rms = rsqrtf(ss / (float)dim + eps);
    __syncthreads();
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) out[blockIdx.x * dim + c] = row[c] * inv_rms * w[c];
}

torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    TORCH_CHECK(weight.is_cuda() && weight.scalar_type() == torch::kFloat32, "weight: float32 CUDA tensor expected");
    auto xc = x.contiguous(), wc = weight.contiguous();
    const int64_t dim = xc.size(-1), rows = xc.numel() / dim;
    auto out = torch::empty_like(xc);
    if (rows == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    rms_norm_kernel<<<(unsigned)rows, 256, 0, stream>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), out.data_ptr<float>(),
                                                        dim, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_normalization", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["rms_norm_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        # Same expression, same order as the reference: the harness seeds both, so the values match.
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.rms_norm_forward(x, self.weight, float(self.eps))
