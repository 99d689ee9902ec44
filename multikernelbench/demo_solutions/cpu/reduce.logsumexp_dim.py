"""CPU candidate for reduce.logsumexp_dim: log-sum-exp over the last dim, one OpenMP thread per block of rows, SIMD reductions within a row (fp32)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// exp(x) vectorisable by the compiler: x = k*ln2 + r, |r| <= ln2/2, Cephes degree-6 polynomial for exp(r)
// (about 1 ulp), 2^k built in the exponent bits. Inputs are clamped to the finite, normal range.
static inline float mkb_expf(float x) {
    x = std::min(std::max(x, -87.0f), 88.0f);
    const float kf = (x * 1.44269504088896341f + 12582912.f) - 12582912.f;  // round to nearest
    const float r = x - kf * 0.693359375f + kf * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)kf + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}

torch::Tensor logsumexp_dim_forward(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "this kernel handles float32 only");
    auto xc = x.contiguous();
    const int64_t n = xc.size(-1);
    const int64_t rows = xc.numel() / n;
    auto sizes = xc.sizes().vec();
    sizes.pop_back();
    auto out = torch::empty(sizes, xc.options());
    const float* __restrict__ in = xc.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* __restrict__ xr = in + r * n;
        float m = -std::numeric_limits<float>::infinity();
        #pragma omp simd reduction(max:m)
        for (int64_t j = 0; j < n; ++j) m = xr[j] > m ? xr[j] : m;
        float s = 0.f;
        #pragma omp simd reduction(+:s)
        for (int64_t j = 0; j < n; ++j) s += mkb_expf(xr[j] - m);
        o[r] = m + std::log(s);
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_reduce_logsumexp_dim",
    cpp_sources=_CPP,
    functions=["logsumexp_dim_forward"],
    # -fno-trapping-math lets GCC if-convert float compares/selects (same results) so the loops vectorise;
    # -march=native: the extension is compiled on the machine that runs it, so use its full vector width.
    extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.logsumexp_dim_forward(x)
