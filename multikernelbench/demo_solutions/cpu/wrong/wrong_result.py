# task: activation.leaky_relu
# expect: incorrect
# reason: values outside atol
"""Deliberately wrong: an off-by-one shift, every output takes its neighbour's input (and the last is never written correctly)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor wrong_leaky_forward(torch::Tensor x, double negative_slope) {
    auto xc = x.contiguous();
    auto out = torch::zeros_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = xc.numel();
    const float s = (float)negative_slope;
    for (int64_t i = 0; i < n - 1; ++i) {
        const float v = in[i + 1];  // BUG: reads the next element
        o[i] = v > 0.f ? v : v * s;
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_wrong_result",
    cpp_sources=_CPP,
    functions=["wrong_leaky_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.wrong_leaky_forward(x, float(self.negative_slope))
