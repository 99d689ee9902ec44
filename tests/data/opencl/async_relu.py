"""Attack on the host clock (tests/test_backend_opencl.py): a correct ReLU whose kernel writes straight into the
output tensor's host memory (a zero-copy USE_HOST_PTR buffer on PoCL's CPU device) and whose forward returns
right after the enqueue, without waiting. A host clock around the call alone measures only the enqueue; the
kernel itself (made slow here by a long dependent loop that ends in a no-op) runs after the clock stopped."""

import numpy as np
import pyopencl as cl
import torch
import torch.nn as nn

SRC = r"""
__kernel void slow_relu(__global const float* x, __global float* y, const long n, const int spin) {
    long i = get_global_id(0);
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
    for (int k = 0; k < spin; ++k) acc = acc * 0.5f + 1.0f;  /* converges to 2: v + (acc - acc) == v */
    y[i] = fmax(v + (acc - acc), 0.0f);
}
"""

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
MF = cl.mem_flags
SLOW_RELU = cl.Program(CTX, SRC).build().slow_relu
SPIN = 50000


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        xb = cl.Buffer(CTX, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=x.numpy())
        yb = cl.Buffer(CTX, MF.WRITE_ONLY | MF.USE_HOST_PTR, hostbuf=out.numpy())
        SLOW_RELU(QUEUE, (x.numel(),), None, xb, yb, np.int64(x.numel()), np.int32(SPIN))
        self._keep = (xb, yb)  # buffers must outlive the kernel
        return out  # no QUEUE.finish(): the kernel is still running
