"""CPU exemplar: row-broadcast bias add; rows in parallel, the bias row reused from cache by every row."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor bias_add_forward(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.dim() == 2 && bias.dim() == 1 && bias.size(0) == x.size(1), "x (R, C) and bias (C) expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto bc = bias.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty_like(xc);
    const float* __restrict__ px = xc.data_ptr<float>();
    const float* __restrict__ pb = bc.data_ptr<float>();
    float* __restrict__ po = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        #pragma omp simd
        for (int64_t c = 0; c < cols; ++c) po[r * cols + c] = px[r * cols + c] + pb[c];
    }
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cpu_broadcast", cpp_sources=_CPP, functions=["bias_add_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
                   extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return _ext.bias_add_forward(x, bias)
