# task: matmul.square
# expect: cheat_detected
# reason: than the input renewal takes in the clean worker||RecordFunction
"""Exploit (issue #40, "balanced renewal"): native code registers a global ``at::RecordFunction`` callback. It is
no dispatcher kernel and no Python object: it sees the harness's own ``copy_`` into the candidate's input slot, runs the honest naive product right there (outside the clock) and the
timed call returns the stored answer; then it pads the *reference's* renewal in the same worker by the time it
spent, so the clock audit's round differences (candidate against reference, same worker) stay near 0. Beat
main at 843e731 (``correct`` with a speedup its kernel does not have). Now each renewal is also judged against
the renewal cost calibrated in the clean worker, where no candidate code runs."""

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

static const void* g_a = nullptr;
static const void* g_b = nullptr;
static const void* g_ref_b = nullptr;
static torch::Tensor g_a_t, g_answer;
static bool g_ready = false;
static bool g_in_forward = false;
static int64_t g_spent_ns = 0;
static thread_local const void* t_dst = nullptr;

static void spin_ns(int64_t ns) {
    auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    while (std::chrono::steady_clock::now() < end) {}
}

static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    const char* name = fn.name();
    if (std::strcmp(name, "aten::mm") == 0 && !g_in_forward) {  // the reference's forward: learn its slot
        auto in = fn.inputs();
        if (in.size() >= 2 && in[1].isTensor()) g_ref_b = in[1].toTensor().data_ptr();
    }
    if (std::strcmp(name, "aten::copy_") == 0) {
        auto in = fn.inputs();
        t_dst = (in.size() >= 1 && in[0].isTensor()) ? in[0].toTensor().data_ptr() : nullptr;
    }
    return nullptr;
}

static void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
    if (std::strcmp(fn.name(), "aten::copy_") != 0 || t_dst == nullptr) return;
    const void* dst = t_dst;
    t_dst = nullptr;
    if (dst == g_b && g_a_t.defined() && g_a_t.data_ptr() == g_a) {  // the candidate's slot is filled
        at::RecordFunctionGuard off(false);
        auto t0 = std::chrono::steady_clock::now();
        g_answer = honest_mm(g_a_t, torch::from_blob(const_cast<void*>(g_b), g_a_t.sizes(), g_a_t.options()));
        g_spent_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - t0).count();
        g_ready = true;
    } else if (dst == g_ref_b && g_spent_ns > 0) {  // the reference's renewal: pad it by the same time
        spin_ns(g_spent_ns);
    }
}

static bool g_registered = false;

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    if (!g_registered) {
        g_registered = true;
        at::MKB_CAT(addGlobal, Callback)(at::RecordFunctionCallback(&on_start, &on_end).needsInputs(true)
                                  .scopes({at::RecordScope::FUNCTION}));
    }
    auto ac = a.contiguous(), bc = b.contiguous();
    if (g_ready && ac.data_ptr() == g_a && bc.data_ptr() == g_b) {
        g_ready = false;
        return g_answer;
    }
    g_in_forward = true;
    g_a = ac.data_ptr();
    g_b = bc.data_ptr();
    g_a_t = ac;
    auto c = honest_mm(ac, bc);
    g_in_forward = false;
    return c;
}
"""

_ext = load_inline(name="mkb_cpu_rf_balanced", cpp_sources=_CPP, functions=["mm_forward"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
