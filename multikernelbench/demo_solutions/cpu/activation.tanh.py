"""CPU candidate for activation.tanh: one OpenMP-parallel, vectorisable pass over the data (fp32)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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

// tanh from one exp of -2|x|; absolute error ~1e-7 near 0, ~1 ulp elsewhere.
static inline float mkb_tanhf(float x) {
    const float e = mkb_expf(-2.f * std::fabs(x));
    const float t = (1.f - e) / (1.f + e);
    return x < 0.f ? -t : t;
}

torch::Tensor tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "this kernel handles float32 only");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* __restrict__ in = xc.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    const int64_t n = xc.numel();
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        o[i] = mkb_tanhf(v);
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_activation_tanh",
    cpp_sources=_CPP,
    functions=["tanh_forward"],
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
        return _ext.tanh_forward(x)
