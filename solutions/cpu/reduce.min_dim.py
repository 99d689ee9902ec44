"""CPU candidate for reduce.min_dim: minimum (keepdim) over the last dim, one OpenMP thread per block of rows, SIMD reductions within a row (fp32)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>

torch::Tensor min_dim_forward(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "this kernel handles float32 only");
    auto xc = x.contiguous();
    const int64_t n = xc.size(-1);
    const int64_t rows = xc.numel() / n;
    auto sizes = xc.sizes().vec();
    sizes.back() = 1;
    auto out = torch::empty(sizes, xc.options());
    const float* __restrict__ in = xc.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* __restrict__ xr = in + r * n;
        float m = std::numeric_limits<float>::infinity();
        #pragma omp simd reduction(min:m)
        for (int64_t j = 0; j < n; ++j) m = xr[j] < m ? xr[j] : m;
        o[r] = m;
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_reduce_min_dim",
    cpp_sources=_CPP,
    functions=["min_dim_forward"],
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
        return _ext.min_dim_forward(x)
