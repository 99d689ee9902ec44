# task: activation.relu
# expect: incorrect||cheat_detected
"""The lazy output where the harness still read with tensor ops: large CUDA outputs of *timed* calls.

Trials run on small shapes, whose outputs the worker copies whole with ``cudaMemcpy`` (no callback sees it), so
here every call below a million elements is honest. A timed call (the 4096 x 131072 bench shape) only allocates
its output and leaves the input and output with a global RecordFunction callback; until issue #40's IPC read,
the worker sampled a verified output at the parent's positions with ``index``/``cpu``, the callback saw that op
touch the output's storage and computed the whole output right then, outside the clock: ``correct``, at the
speed of ``empty_like``. Judged with the native-hook check off (it names the callback; this is about what the
output check itself sees). With the parent reading the memory through an IPC handle, no op of the worker touches
the output and the values compared are never computed: ``incorrect``.
"""

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
    return d == p.out.storage().data();
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

torch::Tensor relu_lazy_when_timed(torch::Tensor x) {
    if (x.numel() < (1 << 20)) return at::clamp_min(x, 0);
    if (!g_installed) {
        rf::MKB_CAT(addGlobal, Callback)(rf::RecordFunctionCallback(on_start).needsInputs(true));
        g_installed = true;
    }
    auto out = torch::empty_like(x);
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto it = g_pending.begin(); it != g_pending.end();) {
        if (it->out.use_count() == 1) it = g_pending.erase(it); else ++it;
    }
    // The harness reads a verified output before it renews this input slot in place: x still holds its data.
    // Only the last few calls' outputs can still be read; older entries would only hold 2 GiB tensors alive (a
    // harness that never touches them, as after the IPC read, would run out of GPU memory instead of judging).
    while (g_pending.size() >= 4) g_pending.pop_front();
    g_pending.push_back({x, out});
    return out;
}
"""

_ext = load_inline(name="mkb_cuda_lazy_timed_output", cpp_sources=_CPP, functions=["relu_lazy_when_timed"],
                   extra_cflags=["-O2", "-DNDEBUG"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_lazy_when_timed(x)
