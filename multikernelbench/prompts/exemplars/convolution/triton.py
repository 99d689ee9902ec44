"""Triton exemplar: direct 1-D convolution; one program per (batch, out channel, output block), looping over cin and taps."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, cin, cout, length, out_len, ksize, BLOCK: tl.constexpr):
    bc = tl.program_id(0)  # batch * cout + co
    b = bc // cout
    co = bc % cout
    t = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = t < out_len
    acc = tl.zeros([BLOCK], dtype=tl.float32) + tl.load(b_ptr + co)
    for ci in range(0, cin):
        x_row = x_ptr + (b * cin + ci) * length
        w_row = w_ptr + (co * cin + ci) * ksize
        for k in range(0, ksize):
            acc += tl.load(w_row + k) * tl.load(x_row + t + k, mask=mask, other=0.0)
    tl.store(out_ptr + bc * out_len + t, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # Created exactly as in the reference so the seeded initialisation gives the same weights;
        # its forward is never called.
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w, bias = self.conv.weight.contiguous(), self.conv.bias.contiguous()
        batch, cin, length = x.shape
        cout, _, ksize = w.shape
        out_len = length - ksize + 1
        out = torch.empty(batch, cout, out_len, device=x.device, dtype=x.dtype)
        BLOCK = 128
        _conv1d_kernel[(batch * cout, triton.cdiv(out_len, BLOCK))](x, w, bias, out, cin, cout, length, out_len,
                                                                    ksize, BLOCK=BLOCK)
        return out
