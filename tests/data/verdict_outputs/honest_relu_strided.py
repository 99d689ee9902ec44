# task: activation.relu
# expect: correct
"""Honest control of lazy_output_observer.py: the same extension shape, computing in the forward, and returning a
non-contiguous output (a transposed view of a column-major buffer), which the raw-bytes reader must handle."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor relu_strided(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.is_contiguous() && x.dim() == 2, "2-D float32 only");
    const int64_t rows = x.size(0), cols = x.size(1);
    auto out = torch::empty({cols, rows}, x.options()).t();
    const float* a = x.data_ptr<float>();
    float* c = out.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
            const float v = a[i * cols + j];
            c[j * rows + i] = v > 0.f ? v : 0.f;
        }
    return out;
}
"""

_ext = load_inline(name="mkb_cpu_honest_relu_strided", cpp_sources=_CPP, functions=["relu_strided"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_strided(x)
