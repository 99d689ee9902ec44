# task: activation.tanh
# expect: compile_error
# reason: No such file or directory
"""Deliberately broken: the kernel includes a helper header it never wrote (a common slip in generated code),
so the C++ build stops at once with a fatal error. (compile_error.py shows a syntax error instead: GCC keeps
going after one of those, so that build costs seconds more.)"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include "fast_tanh_kernels.h"  // BUG (deliberate): no such header; the helpers were never written

torch::Tensor tanh_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    fast_tanh_kernels::tanh_f32(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel());
    return out;
}
"""

_ext = load_inline(
    name="mkb_cpu_wrong_missing_header",
    cpp_sources=_CPP,
    functions=["tanh_forward"],
    extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.tanh_forward(x)
