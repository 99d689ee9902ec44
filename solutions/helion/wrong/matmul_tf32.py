# task: matmul.square
# expect: cheat_detected
"""Deliberately cheating: asks Helion for TF32 dots in a float32 task (faster on the GPU, outside the task's
precision; the harness's IEEE default is overridden by the kernel's own setting)."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[64, 64, 32]), dot_precision="tf32")
def matmul_kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    n = b.size(1)
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tm, tn in hl.tile([m, n]):
        acc = hl.zeros([tm, tn], dtype=torch.float32)
        for tk in hl.tile(k):
            acc = torch.addmm(acc, a[tm, tk], b[tk, tn])
        out[tm, tn] = acc
    return out


class ModelNew(nn.Module):
    def forward(self, a, b):
        return matmul_kernel(a.contiguous(), b.contiguous())
