"""CPU exemplar: fused SGD-momentum step writing two new tensors in one pass (inputs left untouched)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <vector>

std::vector<torch::Tensor> sgd_momentum_forward(torch::Tensor param, torch::Tensor grad, torch::Tensor buf,
                                                double lr, double momentum) {
    TORCH_CHECK(param.sizes() == grad.sizes() && param.sizes() == buf.sizes(), "shapes must match");
    TORCH_CHECK(param.scalar_type() == torch::kFloat32, "float32 only");
    auto p = param.contiguous(), g = grad.contiguous(), b = buf.contiguous();
    auto new_p = torch::empty_like(p), new_b = torch::empty_like(b);
    const float* __restrict__ pp = p.data_ptr<float>();
    const float* __restrict__ pg = g.data_ptr<float>();
    const float* __restrict__ pb = b.data_ptr<float>();
    float* __restrict__ op = new_p.data_ptr<float>();
    float* __restrict__ ob = new_b.data_ptr<float>();
    const float flr = (float)lr, fm = (float)momentum;
    const int64_t n = p.numel();
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float nb = fm * pb[i] + pg[i];
        ob[i] = nb;
        op[i] = pp[i] - flr * nb;
    }
    return {new_p, new_b};
}
"""

_ext = load_inline(name="mkb_exemplar_cpu_optimizer", cpp_sources=_CPP, functions=["sgd_momentum_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
                   extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float):
        super().__init__()
        self.lr = lr
        self.momentum = momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor):
        new_param, new_buf = _ext.sgd_momentum_forward(param, grad, buf, float(self.lr), float(self.momentum))
        return new_param, new_buf
