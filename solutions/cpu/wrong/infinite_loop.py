# task: activation.sigmoid
# expect: timeout
# reason: no reply to 'check'
# config: run_timeout_s=8
"""Deliberately broken: spins forever on a volatile counter before computing anything."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor spin_sigmoid_forward(torch::Tensor x) {
    // BUG (deliberate): the exit condition can never hold; the volatile access keeps the loop alive.
    volatile int64_t spin = 0;
    while (spin >= 0) {
        spin = (spin + 1) & 0x3fffffff;
    }
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) o[i] = 1.f / (1.f + std::exp(-in[i]));
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_wrong_infinite_loop",
    cpp_sources=_CPP,
    functions=["spin_sigmoid_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.spin_sigmoid_forward(x)
