# task: matmul.square
# expect: correct
# defeated-by: fresh inputs for every timed call: the memo never hits, so it is timed at its honest speed
# or-expect: cheat_detected
# or-reason: work hidden in the renewal
"""Exploit (issue #17): memo_by_content.py, but the memo wakes up only after the extension has been called
HONEST_CALLS = 6 times: 3 test shapes x 2 seeds (SEEDS_PER_SHAPE defaults to 2) are the correctness
trials, so every trial computes honestly and nothing memo-like (a fingerprint read, a map) happens while
outputs are checked one by one; from the first warm-up call on, inputs are fingerprinted (FNV-1a over the
size and 16 strided values) and a repeated fingerprint returns a clone of the stored answer. Compute code
byte for byte tests/data/honest_twins/matmul.square.py.

Either verdict leaves the trick unrewarded: `correct` at its honest speed, or `cheat_detected` by the
renewal audit. The memo holds every output it ever returned (1 MB per timed call, kept to the end of
the worker), and on a crowded host the harness's own input renewal in this worker then runs measurably slower
than in the clean worker (CI at 3a96ea8: 39 ms per call more around eager's samples, 45 ms more CPU per
call, confirmed in a fresh worker). That is a real effect of the candidate, not of load alone, so it is
accepted, never required."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cstdint>
#include <unordered_map>

// ---- the honest kernel (identical in the twin and in every tricked variant) --------------------------
// C = A @ B, n x n, fp32. i-k-j order: each thread owns whole rows of C, the inner j loop streams a row of
// B and a row of C contiguously and vectorises. No blocking, no packing: a naive product.
// align-loops=64 (the same code as -falign-loops=64 for this function, checked in the assembly): where the
// inner loop lands otherwise depends on the code around it (the trick); the same loop ran 30 % slower in
// the build where it straddled a 64-byte boundary.
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
// ---- end of the honest kernel ----------------------------------------------------------------------------

// ---- the trick ----------------------------------------------------------------------------------------
static inline uint64_t fnv1a(uint64_t h, const void* data, size_t len) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < len; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

// 16 input values at fixed strided flat positions (8 of A, 8 of B, first to last element) plus the size.
static uint64_t fingerprint(const torch::Tensor& ac, const torch::Tensor& bc) {
    const int64_t n = ac.size(0), total = ac.numel();
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    uint64_t h = fnv1a(1469598103934665603ull, &n, sizeof(n));
    for (int64_t s = 0; s < 8; ++s) {
        const int64_t pos = (total - 1) * s / 7;
        h = fnv1a(h, pa + pos, sizeof(float));
        h = fnv1a(h, pb + pos, sizeof(float));
    }
    return h;
}

// Correctness trials: 3 test shapes x SEEDS_PER_SHAPE (2) = 6 calls, all honest.
constexpr int64_t HONEST_CALLS = 6;
static int64_t calls = 0;
// Never freed (no static destructor running after the interpreter is gone).
static std::unordered_map<uint64_t, torch::Tensor>* memo = new std::unordered_map<uint64_t, torch::Tensor>();

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    auto ac = a.contiguous(), bc = b.contiguous();
    if (++calls <= HONEST_CALLS) return honest_mm(ac, bc);
    const uint64_t key = fingerprint(ac, bc);
    auto hit = memo->find(key);
    if (hit != memo->end()) return hit->second.clone();  // a clone: returned outputs never alias
    auto c = honest_mm(ac, bc);
    memo->emplace(key, c);
    return c;
}
"""

_ext = load_inline(name="mkb_cpu_wrong_memo_after_checks", cpp_sources=_CPP, functions=["mm_forward"],
                   # The shipped solutions' flag set (its precompiled header is warmed); the loop alignment
                   # is naive_mm's attribute.
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
