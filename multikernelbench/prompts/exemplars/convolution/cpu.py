"""CPU exemplar: direct 1-D convolution; keeps an nn.Conv1d only as the holder of the (identically seeded) weights."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor conv1d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.dim() == 3 && weight.dim() == 3 && x.size(1) == weight.size(1), "shape mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    const int64_t B = xc.size(0), Cin = xc.size(1), L = xc.size(2);
    const int64_t Cout = wc.size(0), K = wc.size(2), Lout = L - K + 1;
    auto out = torch::empty({B, Cout, Lout}, xc.options());
    const float* __restrict__ px = xc.data_ptr<float>();
    const float* __restrict__ pw = wc.data_ptr<float>();
    const float* __restrict__ pb = bc.data_ptr<float>();
    float* __restrict__ po = out.data_ptr<float>();
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t co = 0; co < Cout; ++co) {
            float* orow = po + (b * Cout + co) * Lout;
            for (int64_t t = 0; t < Lout; ++t) orow[t] = pb[co];
            for (int64_t ci = 0; ci < Cin; ++ci) {
                const float* xrow = px + (b * Cin + ci) * L;
                const float* w = pw + (co * Cin + ci) * K;
                for (int64_t k = 0; k < K; ++k) {
                    const float wk = w[k];
                    #pragma omp simd
                    for (int64_t t = 0; t < Lout; ++t) orow[t] += wk * xrow[t + k];
                }
            }
        }
    }
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cpu_convolution", cpp_sources=_CPP, functions=["conv1d_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
                   extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # Created exactly as in the reference so the seeded initialisation gives the same weights;
        # its forward is never called.
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.conv1d_forward(x, self.conv.weight, self.conv.bias)
