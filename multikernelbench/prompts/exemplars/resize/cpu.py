"""CPU exemplar: nearest-neighbour 2x upsampling; each output row reads one input row."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor upsample2x_forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 4 && x.scalar_type() == torch::kFloat32, "(N, C, H, W) float32 input expected");
    auto xc = x.contiguous();
    const int64_t planes = xc.size(0) * xc.size(1), h = xc.size(2), w = xc.size(3);
    auto out = torch::empty({xc.size(0), xc.size(1), 2 * h, 2 * w}, xc.options());
    const float* __restrict__ in = xc.data_ptr<float>();
    float* __restrict__ o = out.data_ptr<float>();
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
        for (int64_t oy = 0; oy < 2 * h; ++oy) {
            const float* src = in + (p * h + oy / 2) * w;
            float* dst = o + (p * 2 * h + oy) * 2 * w;
            #pragma omp simd
            for (int64_t ox = 0; ox < 2 * w; ++ox) dst[ox] = src[ox / 2];
        }
    }
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cpu_resize", cpp_sources=_CPP, functions=["upsample2x_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
                   extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.upsample2x_forward(x)
