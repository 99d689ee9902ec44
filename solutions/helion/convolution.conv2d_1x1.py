"""1x1 convolution with bias: per image a (cout x cin) @ (cin x pixels) product, tiled over output channels
and pixels with a float32 accumulator, the bias added before the store."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[1, 32, 64, 32]))
def conv1x1_kernel(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    batch, cin, hw = x.size()
    cout = w.size(0)
    out = torch.empty([batch, cout, hw], dtype=x.dtype, device=x.device)
    for tb, tco, tp in hl.tile([batch, cout, hw]):
        acc = hl.zeros([tco, tp], dtype=torch.float32)
        for tci in hl.tile(cin):
            acc = torch.addmm(acc, w[tco, tci], x[tb.begin, tci, tp])
        out[tb.begin, tco, tp] = acc + bias[tco][:, None]
    return out


class ModelNew(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__()
        if groups != 1:
            raise ValueError("this kernel handles groups=1 (the task's value)")
        self.conv = nn.Conv2d(cin, cout, (1, 1), stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=groups,
                              bias=True)  # holds the weights; never called

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, cin, h, w = x.shape
        weight = self.conv.weight.detach().reshape(self.conv.out_channels, cin)
        y = conv1x1_kernel(x.contiguous().view(b, cin, h * w), weight.contiguous(), self.conv.bias.detach())
        return y.view(b, -1, h, w)
