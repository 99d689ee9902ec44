"""SGD with momentum, dampening, weight decay and Nesterov: one tile loop, both outputs written once."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[8, 256]))
def sgd_kernel(p: torch.Tensor, g: torch.Tensor, b: torch.Tensor, lr: float, momentum: float, one_minus_damp: float,
               wd: float) -> tuple[torch.Tensor, torch.Tensor]:
    new_p, new_b = torch.empty_like(p), torch.empty_like(b)
    for tile in hl.tile(p.size()):
        gi = g[tile] + wd * p[tile]
        bi = momentum * b[tile] + one_minus_damp * gi
        new_b[tile] = bi
        new_p[tile] = p[tile] - lr * (gi + momentum * bi)
    return new_p, new_b


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float, dampening: float, weight_decay: float):
        super().__init__()
        self.lr, self.momentum, self.dampening, self.weight_decay = lr, momentum, dampening, weight_decay

    def forward(self, param, grad, momentum_buffer):
        return sgd_kernel(param.contiguous(), grad.contiguous(), momentum_buffer.contiguous(), self.lr, self.momentum,
                          1.0 - self.dampening, self.weight_decay)
