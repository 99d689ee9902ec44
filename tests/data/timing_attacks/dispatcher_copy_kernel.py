# task: matmul.square
# expect: cheat_detected
# reason: dispatcher kernel of aten::copy_||work outside the timed call
"""Exploit (issue #25, "in C++ alone"): the extension registers its own CPU kernel for ``aten::copy_`` through
the dispatcher (the macro and op names pasted by the preprocessor, so no rule sees them). The harness fills
the timed inputs with ``copy_``; when the second input of the candidate's own slot has been written, this
kernel runs the honest naive product right there, outside the clock, and the timed call returns the stored
answer. No Python object is touched. Now the dispatcher's kernels for the harness's own ops are snapshotted
before candidate code loads (the change is named), and the parent's clock sees the work in the renewal."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/ops/copy_native.h>
#include <cstdint>
#include <cstring>

__attribute__((optimize("align-loops=64")))
static void naive_mm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                     int64_t n) {
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        float* __restrict__ ci = c + i * n;
        for (int64_t j = 0; j < n; ++j) ci[j] = 0.f;
        for (int64_t k = 0; k < n; ++k) {
            const float aik = a[i * n + k];
            const float* __restrict__ bk = b + k * n;
            #pragma omp simd
            for (int64_t j = 0; j < n; ++j) ci[j] += aik * bk[j];
        }
    }
}

static const void* g_a = nullptr;
static const void* g_b = nullptr;
static torch::Tensor g_a_t, g_answer;
static bool g_ready = false;

static at::Tensor& own_copy(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
    at::native::copy_(self, src, non_blocking);
    if (g_b != nullptr && self.data_ptr() == g_b && g_a_t.defined() && g_a_t.data_ptr() == g_a) {
        const int64_t n = self.size(0);
        g_answer = torch::empty({n, n}, self.options());
        naive_mm(g_a_t.data_ptr<float>(), self.data_ptr<float>(), g_answer.data_ptr<float>(), n);
        g_ready = true;
    }
    return self;
}

#define MKB_CAT2(a, b) a##b
#define MKB_CAT(a, b) MKB_CAT2(a, b)
#define MKB_STR2(x) #x
#define MKB_STR(x) MKB_STR2(x)
#define MKB_REG MKB_CAT(TORCH_LIBRARY, _IMPL)
MKB_REG(aten, CPU, m) { m.impl(MKB_STR(MKB_CAT(cop, y_)), &own_copy); }

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 only");
    auto ac = a.contiguous(), bc = b.contiguous();
    if (g_ready && ac.data_ptr() == g_a && bc.data_ptr() == g_b) {
        g_ready = false;
        return g_answer;
    }
    g_a = ac.data_ptr();
    g_b = bc.data_ptr();
    g_a_t = ac;
    const int64_t n = ac.size(0);
    auto c = torch::empty({n, n}, ac.options());
    naive_mm(ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}
"""

_ext = load_inline(name="mkb_cpu_dispatcher_copy", cpp_sources=_CPP, functions=["mm_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
