"""CUDA exemplar: attention with one warp per query row: online softmax over keys, the output row in registers."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor attention_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
constexpr int MAX_D = 256;            // head dims up to 256: each lane keeps MAX_D / 32 output values
constexpr int PER_LANE = MAX_D / 32;

__global__ void attention_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                 float* __restrict__ out, int64_t rows, int64_t seq, int64_t dim, float scale) {
    const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32;  // (batch * seq) query rows
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const int64_t base = (row / seq) * seq * dim;
    const float* qi = q + row * dim;
    float m = -INFINITY, l = 0.f, acc[PER_LANE];
    for (int j = 0; j < PER_LANE; ++j) acc[j] = 0.f;
    for (int64_t key = 0; key < seq; ++key) {
        const float* kr = k + base + key * dim;
        float s = 0.f;
        for (int64_t d = lane; d < dim; d += 32) s += qi[d] * kr[d];
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
        s *= scale;
        const float m_new = fmaxf(m, s), alpha = __expf(m - m_new), p = __expf(s - m_new);
        l = l * alpha + p;
        const float* vr = v + base + key * dim;
        for (int j = 0; j < PER_LANE; ++j) {
            const int64_t d = lane + 32 * j;
            acc[j] = acc[j] * alpha + (d < dim ? p * vr[d] : 0.f);
        }
        m = m_new;
    }
    for (int j = 0; j < PER_LANE; ++j) {
        const int64_t d = lane + 32 * j;
        if (d < dim) out[row * dim + d] = acc[j] / l;
    }
}

torch::Tensor attention_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda() && q.scalar_type() == torch::kFloat32, "q: float32 CUDA tensor expected");
    TORCH_CHECK(k.is_cuda() && k.scalar_type() == torch::kFloat32, "k: float32 CUDA tensor expected");
    TORCH_CHECK(v.is_cuda() && v.scalar_type() == torch::kFloat32, "v: float32 CUDA tensor expected");
    TORCH_CHECK(q.dim() == 3 && q.sizes() == k.sizes() && q.sizes() == v.sizes(), "(B, S, D) q, k, v expected");
    TORCH_CHECK(q.size(2) <= MAX_D, "head dim above 256 not supported by this kernel");
    auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    auto out = torch::empty_like(qc);
    const int64_t rows = qc.size(0) * qc.size(1);
    if (rows == 0) return out;
    const int warps = 4;
    auto stream = at::cuda::getCurrentCUDAStream();
    attention_kernel<<<(unsigned)((rows + warps - 1) / warps), warps * 32, 0, stream>>>(
        qc.data_ptr<float>(), kc.data_ptr<float>(), vc.data_ptr<float>(), out.data_ptr<float>(), rows, qc.size(1),
        qc.size(2), 1.f / sqrtf((float)qc.size(2)));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_attention", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["attention_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return _ext.attention_forward(q, k, v)
