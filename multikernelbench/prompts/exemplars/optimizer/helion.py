"""Helion exemplar: one SGD-with-momentum step; one tile loop reads param, grad and buffer once and writes
both outputs (the inputs are left unmodified)."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[1024]))
def _sgd(param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor, lr: float,
         momentum: float) -> tuple[torch.Tensor, torch.Tensor]:
    new_param, new_buf = torch.empty_like(param), torch.empty_like(buf)
    for tile in hl.tile(param.size(0)):
        b = momentum * buf[tile] + grad[tile]
        new_buf[tile] = b
        new_param[tile] = param[tile] - lr * b
    return new_param, new_buf


class ModelNew(nn.Module):
    def __init__(self, lr: float, momentum: float):
        super().__init__()
        self.lr = lr
        self.momentum = momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor):
        return _sgd(param.contiguous(), grad.contiguous(), buf.contiguous(), self.lr, self.momentum)
