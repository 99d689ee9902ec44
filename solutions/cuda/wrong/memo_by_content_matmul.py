# task: matmul.square
# expect: correct
# defeated-by: fresh inputs for every timed call: the memo never hits, so it is timed at its honest speed
# gpu-only
"""Exploit (issue #17), CUDA version of solutions/cpu/wrong/memo_by_content.py: an honest 32x32-tiled fp32
SGEMM, but the C++ wrapper first copies 16 input values to the host (cudaMemcpyAsync on the current stream at
fixed strided positions, 8 of A and 8 of B, then a stream sync), hashes them with FNV-1a together with the
size, and keeps every answer in a static map; a fingerprint seen before returns a clone of the stored answer
(one 256 MB device copy at n = 8192 instead of a 1.1 TFLOP product). Right for the data it is handed on every
call, so correctness trials never see it; it is fast only when timed calls repeat input data. Compute code
byte for byte tests/data/honest_twins/cuda/matmul.square.py: with fresh data on every timed call it must
time at that speed (plus 16 tiny copies and one host sync per call)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <unordered_map>

// ---- the honest kernel (identical in the twin) ----------------------------------------------------------
// C = A @ B, n x n, fp32 FMA (no TF32). One 32x32 output tile per block, one output per thread; A and B
// tiles staged through shared memory, zero-padded at the edges, so any n works.
constexpr int TILE = 32;

__global__ void tiled_mm32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                           int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && ka < n) ? A[(long)row * n + ka] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (kb < n && col < n) ? B[(long)kb * n + col] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < n && col < n) C[(long)row * n + col] = acc;
}

static torch::Tensor honest_mm(const torch::Tensor& ac, const torch::Tensor& bc) {
    const int n = (int)ac.size(0);
    auto c = torch::empty({n, n}, ac.options());
    if (n == 0) return c;
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    tiled_mm32<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(ac.data_ptr<float>(), bc.data_ptr<float>(),
                                                                     c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}

static void check_inputs(const torch::Tensor& a, const torch::Tensor& b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "CUDA tensors only");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(0) == a.size(1) && b.size(0) == a.size(0) &&
                b.size(1) == a.size(0), "two square matrices of one size");
}
// ---- end of the honest kernel ----------------------------------------------------------------------------

// ---- the trick ----------------------------------------------------------------------------------------
static inline uint64_t fnv1a(uint64_t h, const void* data, size_t len) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < len; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

// 16 input values at fixed strided flat positions (8 of A, 8 of B, first to last element), copied to the
// host on the current stream (so they are the values the harness just wrote), plus the size.
static uint64_t fingerprint(const torch::Tensor& ac, const torch::Tensor& bc) {
    const int64_t n = ac.size(0), total = ac.numel();
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    float host[16];
    for (int64_t s = 0; s < 8; ++s) {
        const int64_t pos = (total - 1) * s / 7;
        C10_CUDA_CHECK(cudaMemcpyAsync(&host[2 * s], ac.data_ptr<float>() + pos, sizeof(float),
                                       cudaMemcpyDeviceToHost, stream));
        C10_CUDA_CHECK(cudaMemcpyAsync(&host[2 * s + 1], bc.data_ptr<float>() + pos, sizeof(float),
                                       cudaMemcpyDeviceToHost, stream));
    }
    C10_CUDA_CHECK(cudaStreamSynchronize(stream));
    uint64_t h = fnv1a(1469598103934665603ull, &n, sizeof(n));
    return fnv1a(h, host, sizeof(host));
}

// Never freed (no static destructor running after the CUDA context is gone).
static std::unordered_map<uint64_t, torch::Tensor>* memo = new std::unordered_map<uint64_t, torch::Tensor>();

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    auto ac = a.contiguous(), bc = b.contiguous();
    if (ac.numel() == 0) return honest_mm(ac, bc);
    const uint64_t key = fingerprint(ac, bc);
    auto hit = memo->find(key);
    if (hit != memo->end()) return hit->second.clone();  // a clone: returned outputs never alias
    auto c = honest_mm(ac, bc);
    memo->emplace(key, c);
    return c;
}
"""

cpp_src = "torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(name="mkb_cuda_wrong_memo_by_content_matmul", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["mm_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
