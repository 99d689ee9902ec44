"""relu(x @ W^T + b) + residual fused: a tiled matmul with a float32 accumulator, the epilogue applied to
the tile before its single store."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[32, 64, 32]))
def linear_relu_add_kernel(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor, res: torch.Tensor) -> torch.Tensor:
    batch, fin = x.size()
    fout = w.size(0)
    out = torch.empty([batch, fout], dtype=x.dtype, device=x.device)
    for tb, to in hl.tile([batch, fout]):
        acc = hl.zeros([tb, to], dtype=torch.float32)
        for tk in hl.tile(fin):
            acc = torch.addmm(acc, x[tb, tk], w[to, tk].T)
        out[tb, to] = torch.relu(acc + bias[to][None, :]) + res[tb, to]
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # holds the parameters; never called

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return linear_relu_add_kernel(x.contiguous(), self.linear.weight.detach(), self.linear.bias.detach(),
                                      residual.contiguous())
