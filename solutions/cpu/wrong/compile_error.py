# task: activation.tanh
# expect: compile_error
# reason: error
"""Deliberately broken: the C++ source has a syntax error (missing semicolon and brace), so the build fails."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor broken_tanh_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc)
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) {
        o[i] = std::tanh(in[i]);
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_wrong_compile_error",
    cpp_sources=_CPP,
    functions=["broken_tanh_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.broken_tanh_forward(x)
