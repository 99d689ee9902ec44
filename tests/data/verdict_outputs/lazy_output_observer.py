# task: activation.relu
# expect: incorrect||cheat_detected
"""Exploit (issue #40, "lazy output"): the extension registers a global ``at::RecordFunction`` callback. The
timed forward only allocates its output; the callback, which sees every aten op of the worker with its inputs,
fills the output in from the still-intact input the moment any op touches the output's (or the input's) storage:
the harness's own ``detach``/``clone``/``index`` before it reads the output, or its ``copy_`` into the input slot
before it renews it. Judged ``correct`` with a large speedup while the outputs were read with tensor ops in the
worker; now the worker copies the raw bytes without an op, so the callback never runs before the read."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/record_function.h>
#include <deque>
#include <mutex>

// The name pasted by the preprocessor and the namespace aliased, so no static rule sees the registration.
#define MKB_CAT2(a, b) a##b
#define MKB_CAT(a, b) MKB_CAT2(a, b)
namespace rf = at;

struct Pending { at::Tensor in; at::Tensor out; };
static std::mutex g_mu;
static std::deque<Pending> g_pending;
static bool g_installed = false;
static thread_local bool g_busy = false;

static void fill(const Pending& p) {
    const float* a = p.in.data_ptr<float>();
    float* c = p.out.data_ptr<float>();
    const int64_t n = p.out.numel();
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] > 0.f ? a[i] : 0.f;
}

static bool touches(const at::Tensor& t, const Pending& p) {
    if (!t.defined() || !t.has_storage()) return false;
    const void* d = t.storage().data();
    return d == p.out.storage().data() || d == p.in.storage().data();
}

static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    if (g_busy) return nullptr;
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_pending.empty()) return nullptr;
    g_busy = true;
    for (const c10::IValue& v : fn.inputs()) {
        if (!v.isTensor()) continue;
        const at::Tensor& t = v.toTensor();
        for (auto it = g_pending.begin(); it != g_pending.end();) {
            if (touches(t, *it)) { fill(*it); it = g_pending.erase(it); } else { ++it; }
        }
    }
    g_busy = false;
    return nullptr;
}

torch::Tensor relu_lazy(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "contiguous float32 only");
    if (!g_installed) {
        rf::MKB_CAT(addGlobal, Callback)(rf::RecordFunctionCallback(on_start).needsInputs(true));
        g_installed = true;
    }
    auto out = torch::empty_like(x);
    std::lock_guard<std::mutex> lock(g_mu);
    // Outputs the harness has dropped (only this list holds them) are forgotten: memory stays what it holds.
    for (auto it = g_pending.begin(); it != g_pending.end();) {
        if (it->out.use_count() == 1) it = g_pending.erase(it); else ++it;
    }
    g_pending.push_back({x, out});
    return out;
}
"""

_ext = load_inline(name="mkb_cpu_lazy_output_observer", cpp_sources=_CPP, functions=["relu_lazy"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_lazy(x)
