# task: reduce.sum_dim
# expect: incorrect
# reason: has shape
"""Deliberately wrong: sums the right values but drops the kept dimension ([B, I] instead of [B, 1, I])."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor squeezed_sum_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    const int64_t B = xc.size(0), R = xc.size(1), I = xc.size(2);
    auto out = torch::empty({B, I}, xc.options());  // BUG: keepdim=True wants {B, 1, I}
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t b = 0; b < B; ++b) {
        float* ob = o + b * I;
        for (int64_t i = 0; i < I; ++i) ob[i] = 0.f;
        for (int64_t r = 0; r < R; ++r) {
            const float* xr = in + (b * R + r) * I;
            for (int64_t i = 0; i < I; ++i) ob[i] += xr[i];
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_wrong_shape",
    cpp_sources=_CPP,
    functions=["squeezed_sum_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.squeezed_sum_forward(x)
