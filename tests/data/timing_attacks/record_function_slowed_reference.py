# task: matmul.square
# expect: correct
# reason: timed at the honest speed
"""Exploit (issue #40, "slowed reference"): a global ``at::RecordFunction`` callback from native code busy-waits
after the reference's own ``aten::mm`` in the candidate's worker (1.5x its duration), leaving every 5th call
alone so that the reference's fastest sample, and with it the cross-check's spread bound
``max(1.25, 1 + 4 x (median - min) / median)``, stays where a noisy host would put it. At 843e731 the speedup was
taken against that slowed reference (not flagged: ratio 2.5 under a bound of ~3.4), ~2.5x what the same kernel
earns. Now the speedup is always taken against the reference timed in the clean worker; the in-worker one is a
cross-check. Its kernel is the honest twin's: the speedup must be the twin's, within noise."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/record_function.h>
#include <chrono>
#include <cstdint>
#include <cstring>

// The registration's name pasted by the preprocessor: no static rule sees it.
#define MKB_CAT2(a, b) a##b
#define MKB_CAT(a, b) MKB_CAT2(a, b)
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

static torch::Tensor honest_mm(const torch::Tensor& ac, const torch::Tensor& bc) {
    const int64_t n = ac.size(0);
    auto c = torch::empty({n, n}, ac.options());
    naive_mm(ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}

static void check_inputs(const torch::Tensor& a, const torch::Tensor& b) {
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(0) == a.size(1) && b.size(0) == a.size(0) &&
                b.size(1) == a.size(0), "two square matrices of one size");
}

static bool g_in_forward = false;
static int64_t g_count = 0;
static thread_local std::chrono::steady_clock::time_point t_start;

static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    if (std::strcmp(fn.name(), "aten::mm") == 0 && !g_in_forward) t_start = std::chrono::steady_clock::now();
    return nullptr;
}

static void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
    if (std::strcmp(fn.name(), "aten::mm") != 0 || g_in_forward) return;
    if (++g_count % 5 == 0) return;  // every 5th left alone: the minimum stays the eager one
    auto took = std::chrono::steady_clock::now() - t_start;
    auto end = std::chrono::steady_clock::now() + took + took / 2;
    while (std::chrono::steady_clock::now() < end) {}
}

static bool g_registered = false;

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    if (!g_registered) {
        g_registered = true;
        at::MKB_CAT(addGlobal, Callback)(at::RecordFunctionCallback(&on_start, &on_end)
                                  .scopes({at::RecordScope::FUNCTION}));
    }
    g_in_forward = true;
    auto ac = a.contiguous(), bc = b.contiguous();
    auto c = honest_mm(ac, bc);
    g_in_forward = false;
    return c;
}
"""

_ext = load_inline(name="mkb_cpu_rf_slowed_ref", cpp_sources=_CPP, functions=["mm_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
