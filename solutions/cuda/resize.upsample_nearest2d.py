"""CUDA candidate for resize.upsample_nearest2d (integer scale): one thread per input pixel writes its
scale x scale output block; each input element is read once, each output written once (fp32)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void up_nearest(const float* __restrict__ x, float* __restrict__ y, long total_in, int H, int W, int s) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total_in; i += (long)gridDim.x * blockDim.x) {
        int w = i % W;
        long t = i / W;
        int h = t % H;
        long plane = t / H;
        float v = x[i];
        long OW = (long)W * s;
        float* out = y + plane * H * s * OW + (long)h * s * OW + (long)w * s;
        for (int dy = 0; dy < s; ++dy)
            for (int dx = 0; dx < s; ++dx) out[dy * OW + dx] = v;
    }
}

torch::Tensor upsample_nearest(torch::Tensor x, int64_t s) {
    TORCH_CHECK(x.dim() == 4 && x.scalar_type() == torch::kFloat32, "float32 NCHW expected");
    auto xc = x.contiguous();
    int H = xc.size(2), W = xc.size(3);
    auto y = torch::empty({xc.size(0), xc.size(1), H * s, W * s}, xc.options());
    long total = xc.numel();
    long blocks = std::min<long>((total + 255) / 256, 132L * 64);
    if (total) up_nearest<<<blocks, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), total, H, W, (int)s);
    return y;
}
"""

_ext = load_inline(name="mkb_cuda_resize_upsample_nearest2d",
                   cpp_sources="torch::Tensor upsample_nearest(torch::Tensor x, int64_t s);",
                   cuda_sources=cuda_src, functions=["upsample_nearest"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.upsample_nearest(x, self.scale)
