# task: activation.relu
# expect: correct
"""Honest twin of got_clock_shave.py: the same relu loop, the clock left alone (its speedup is what the shaved one
should have been judged at)."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor relu_loop(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "contiguous float32 only");
    auto out = torch::empty_like(x);
    const float* a = x.data_ptr<float>();
    float* c = out.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] > 0.f ? a[i] : 0.f;
    return out;
}
"""

_ext = load_inline(name="mkb_cpu_honest_relu_loop", cpp_sources=_CPP, functions=["relu_loop"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_loop(x)
