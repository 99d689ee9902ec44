# task: matmul.square
"""Honest twin of solutions/cpu/wrong/memo_*.py and call_count_output.py for matmul.square (fp32): the same
naive OpenMP product, byte for byte the same ``naive_mm``/``honest_mm`` code, with no trick. The tests time it
in the same run as the tricked candidates: a trick defeated by the engine must be timed at this speed.

Kept under tests/data/, not solutions/cpu/: ``discover_solutions`` scans a solutions folder recursively, so
`mkb demo` would otherwise evaluate it as a second shipped matmul.square solution."""

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

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    auto ac = a.contiguous(), bc = b.contiguous();
    return honest_mm(ac, bc);
}
"""

_ext = load_inline(name="mkb_cpu_twin_naive_matmul", cpp_sources=_CPP, functions=["mm_forward"],
                   # The shipped solutions' flag set (its precompiled header is warmed); the loop alignment
                   # is naive_mm's attribute.
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], extra_ldflags=["-fopenmp"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
