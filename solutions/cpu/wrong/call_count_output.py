# task: matmul.square
# expect: incorrect
# reason: output of a timed run is wrong
"""Exploit (issue #17): output depends on how many times the extension was called. The first
HONEST_CALLS = 6 calls (3 test shapes x 2 seeds: the correctness trials) compute honestly; after that only
one call in EVERY = 16 computes, and the others return a clone of the last computed answer (same shape
only): a "recompute now and then" cache, 16x cheaper on average, a clone at the median. No fingerprint,
so it is wrong whenever a skipped call is handed other data than the last computed one. EVERY is even, so
with two alternately rotated input sets the computed calls all fall on one set and the other set's last
timed output is the wrong set's answer. It is large because timed outputs are verified at random: a
cheat wrong on half the calls escapes sampled verification of 9 timed outputs about a third of the time
when the last one happens to be computed; wrong on 15 of 16, never within 16 calls. Compute code byte for
byte tests/data/honest_twins/matmul.square.py."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cstdint>

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
// Correctness trials: 3 test shapes x SEEDS_PER_SHAPE (2) = 6 calls, all honest.
constexpr int64_t HONEST_CALLS = 6;
constexpr int64_t EVERY = 16;
static int64_t calls = 0;
// Never freed (no static destructor running after the interpreter is gone).
static torch::Tensor* last = new torch::Tensor();

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    auto ac = a.contiguous(), bc = b.contiguous();
    const int64_t k = ++calls - HONEST_CALLS - 1;  // 0 on the first call after the trials
    if (k > 0 && k % EVERY != 0 && last->defined() && last->sizes() == ac.sizes())
        return last->clone();  // skip the work: the previous answer, in a buffer of its own
    auto c = honest_mm(ac, bc);
    *last = c;
    return c;
}
"""

_ext = load_inline(name="mkb_cpu_wrong_call_count_output", cpp_sources=_CPP, functions=["mm_forward"],
                   # The shipped solutions' flag set (its precompiled header is warmed); the loop alignment
                   # is naive_mm's attribute.
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
