# task: activation.relu
# expect: incorrect
# reason: output of a timed run is wrong
"""Exploit: a correct C++ kernel, but results are cached per input tensor (pointer + shape) so repeated
timed calls on the same buffers cost nothing. Holding the input keeps its pointer from being reused."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor cached_relu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) o[i] = in[i] > 0.f ? in[i] : 0.f;
    return out;
}
"""

_ext = load_inline(name="mkb_cpu_wrong_caches_outputs", cpp_sources=_CPP, functions=["cached_relu"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape))
        if key not in self.cache:
            self.cache[key] = (x, _ext.cached_relu(x))
        return self.cache[key][1]
