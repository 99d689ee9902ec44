# task: activation.relu
# expect: incorrect||cheat_detected
"""GPU version of lazy_output_observer.py: the forward only allocates its CUDA output; a global RecordFunction
callback computes it (``at::clamp_min_out`` on the device) when an op of the harness touches the output's or the
input's storage. Trials now read the output with ``cudaMemcpy`` through ctypes, which no callback sees."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/record_function.h>
#include <deque>
#include <mutex>

#define MKB_CAT2(a, b) a##b
#define MKB_CAT(a, b) MKB_CAT2(a, b)
namespace rf = at;

struct Pending { at::Tensor in; at::Tensor out; };
static std::mutex g_mu;
static std::deque<Pending> g_pending;
static bool g_installed = false;
static thread_local bool g_busy = false;

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
            if (touches(t, *it)) { at::clamp_min_out(it->out, it->in, 0); it = g_pending.erase(it); } else { ++it; }
        }
    }
    g_busy = false;
    return nullptr;
}

torch::Tensor relu_lazy(torch::Tensor x) {
    if (!g_installed) {
        rf::MKB_CAT(addGlobal, Callback)(rf::RecordFunctionCallback(on_start).needsInputs(true));
        g_installed = true;
    }
    auto out = torch::empty_like(x);
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto it = g_pending.begin(); it != g_pending.end();) {
        if (it->out.use_count() == 1) it = g_pending.erase(it); else ++it;
    }
    g_pending.push_back({x, out});
    return out;
}
"""

_ext = load_inline(name="mkb_cuda_lazy_output_observer", cpp_sources=_CPP, functions=["relu_lazy"],
                   extra_cflags=["-O2", "-DNDEBUG"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_lazy(x)
