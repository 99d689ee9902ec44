"""CPU candidate for activation.prelu: per-feature slope PReLU over rows (fp32, OpenMP)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor prelu_forward(torch::Tensor x, torch::Tensor weight) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "this kernel handles float32 only");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t d = xc.size(-1);
    TORCH_CHECK(wc.numel() == d, "one slope per feature");
    const int64_t rows = xc.numel() / d;
    auto out = torch::empty_like(xc);
    const float* __restrict__ in = xc.data_ptr<float>();
    const float* __restrict__ w = wc.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* __restrict__ xr = in + r * d;
        float* __restrict__ orow = o + r * d;
        #pragma omp simd
        for (int64_t j = 0; j < d; ++j) {
            const float v = xr[j];
            orow[j] = v >= 0.f ? v : v * w[j];
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_activation_activation_prelu",
    cpp_sources=_CPP,
    functions=["prelu_forward"],
    # -fno-trapping-math lets GCC if-convert float compares/selects (same results) so the loops vectorise;
    # -march=native: the extension is compiled on the machine that runs it, so use its full vector width.
    extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        # Same construction as the reference so the shared weight seed gives identical slopes.
        self.weight = nn.Parameter(torch.rand(dim) * 0.5 + 0.05)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.prelu_forward(x, self.weight)
