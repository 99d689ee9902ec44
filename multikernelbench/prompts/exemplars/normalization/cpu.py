"""CPU exemplar: RMSNorm, one row per OpenMP iteration; the weight is a Parameter created like the reference's."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t dim = xc.size(-1);
    const int64_t rows = xc.numel() / dim;
    auto out = torch::empty_like(xc);
    const float* __restrict__ in = xc.data_ptr<float>();
    const float* __restrict__ w = wc.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = in + r * dim;
        float ss = 0.f;
        #pragma omp simd reduction(+:ss)
        for (int64_t c = 0; c < dim; ++c) ss += row[c] * row[c];
        const float inv = 1.f / std::sqrt(ss / (float)dim + (float)eps);
        #pragma omp simd
        for (int64_t c = 0; c < dim; ++c) o[r * dim + c] = row[c] * inv * w[c];
    }
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cpu_normalization", cpp_sources=_CPP, functions=["rms_norm_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
                   extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        # Same expression, same order as the reference: the harness seeds both, so the values match.
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.rms_norm_forward(x, self.weight, float(self.eps))
