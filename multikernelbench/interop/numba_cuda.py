"""How a Numba-CUDA candidate meets PyTorch tensors, on the GPU and in Numba's CUDA simulator.

A ``numba_cuda`` candidate writes ``@cuda.jit`` kernels and launches them on torch tensors:

    from numba import cuda
    from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream

    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        relu_kernel[grid_blocks(n, 256), 256, torch_stream()](as_array(x.view(-1)), as_array(out.view(-1)), n)
        return out

* **GPU: zero copy.** ``as_array`` is ``cuda.as_cuda_array``: torch CUDA tensors expose
  ``__cuda_array_interface__``, so the kernel reads and writes the tensor's own memory. ``torch_stream`` wraps
  torch's *current* stream (``cuda.external_stream``), so the kernel is ordered with torch's work and inside
  the harness's CUDA-event clock (a launch on Numba's own default stream would not be).
* **CPU (CI): the simulator.** With ``NUMBA_ENABLE_CUDASIM=1`` (set by the backend for its workers) kernels
  run as Python threads on numpy arrays; ``as_array`` is the tensor's numpy view (the same memory, no copy),
  ``torch_stream`` Numba's default stream (the simulator has no external streams). Correctness only.

``grid_blocks(n, threads)`` is the block count for a grid-stride kernel over ``n`` items: enough blocks to
fill every SM several times on the GPU, and only two in the simulator, where every simulated thread is a
Python thread (a one-thread-per-element grid over 16k elements takes seconds there, a grid-stride loop over
two blocks a fraction of one). Kernels must therefore loop (``for i in range(cuda.grid(1), n,
cuda.gridsize(1))``), which is also the usual way to write them for the GPU.
"""

from __future__ import annotations

from typing import Any

import torch

#: Resident blocks per SM the GPU grid aims for (256-thread blocks: 8 fill an H100/H200 SM's 2048 threads).
BLOCKS_PER_SM = 8
#: Blocks a grid-stride launch gets in the simulator (each simulated thread is a Python thread).
SIMULATOR_BLOCKS = 2


def simulated() -> bool:
    """True when Numba runs its CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` before numba was imported)."""
    from numba import config

    # numba.config makes its options at import from the environment; its inline types do not list them
    # (unused-ignore: a checkout without numba sees config as Any)
    return bool(config.ENABLE_CUDASIM)  # type: ignore[attr-defined, unused-ignore]


def as_array(t: torch.Tensor) -> Any:
    """The tensor's memory as an array a Numba kernel can take: zero copy on the GPU and in the simulator."""
    from numba import cuda

    t = t.detach()
    if simulated():
        if t.is_cuda:
            raise ValueError("the Numba CUDA simulator runs on CPU tensors")
        return t.numpy()
    if not t.is_cuda:
        raise ValueError("numba_cuda kernels take CUDA tensors (got a CPU tensor)")
    # sync=False: the kernel is launched on torch's current stream (torch_stream), already ordered after the
    # work that produced t; Numba's default would block the host on that stream at every conversion.
    return cuda.as_cuda_array(t, sync=False)


def torch_stream() -> Any:
    """The stream to launch on: torch's current CUDA stream (the default stream in the simulator)."""
    from numba import cuda

    if simulated():
        return cuda.default_stream()
    return cuda.external_stream(torch.cuda.current_stream().cuda_stream)


def sm_count() -> int:
    """Streaming multiprocessors of the current device (1 in the simulator)."""
    if simulated():
        return 1
    from numba import cuda

    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


def grid_blocks(n: int, threads: int) -> int:
    """Blocks for a grid-stride launch over ``n`` items with ``threads`` per block (at least 1)."""
    need = max(1, -(-int(n) // int(threads)))
    cap = SIMULATOR_BLOCKS if simulated() else BLOCKS_PER_SM * sm_count()
    return min(need, cap)
