# task: activation.relu
# expect: cheat_detected
# reason: line 17: embedded kernel source calls library op `at::relu`
# runtime-expect: cheat_detected
# runtime-reason: aten::relu
"""Exploit: a real extension, but its "kernel" just calls ATen's relu (library compute from C++)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor fast_relu(torch::Tensor x) {
    // looks like a custom kernel, but the work is done by the library
    return at::relu(x);
}
"""

_ext = load_inline(name="mkb_cpu_wrong_aten_from_cpp", cpp_sources=_CPP, functions=["fast_relu"],
                   verbose=False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.fast_relu(x)
