# task: activation.relu
# expect: crash
# reason: worker killed by SIGSEGV
"""Deliberately broken: writes its results through a null pointer, so the process dies with SIGSEGV."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor segfault_relu_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    // BUG (deliberate): a volatile null pointer the compiler cannot reason away.
    float* volatile o = nullptr;
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        o[i] = v > 0.f ? v : 0.f;
    }
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_wrong_segfault",
    cpp_sources=_CPP,
    functions=["segfault_relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.segfault_relu_forward(x)
