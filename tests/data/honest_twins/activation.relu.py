# task: activation.relu
"""Honest twin of solutions/cpu/activation.relu.py that allocates its output in Python (``torch.empty_like``)
and has the extension fill it: the shape of the honest relu that issue #40 saw convicted on the 2-core host at
load ~5 ("work in the reference's turn", confirmed under the same load). The same OpenMP loop, no trick; run
beside host load by scripts/verdicts_under_load.py and tests/test_timing_evidence.py."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

void relu_into(torch::Tensor x, torch::Tensor out) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous() && x.numel() == out.numel(), "contiguous, same size");
    const float* __restrict__ in = x.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        o[i] = v > 0.f ? v : 0.f;
    }
}
"""

_ext = load_inline(name="mkb_cpu_twin_relu_into", cpp_sources=_CPP, functions=["relu_into"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        out = torch.empty_like(xc)
        _ext.relu_into(xc, out)
        return out
