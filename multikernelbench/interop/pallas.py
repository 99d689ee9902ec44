"""How a JAX Pallas candidate meets PyTorch tensors.

The harness calls ``ModelNew.forward`` with torch tensors and compares torch tensors, as for every backend.
A Pallas candidate converts at its edges with these two functions:

    from multikernelbench.interop.pallas import to_jax, to_torch

    def forward(self, x):                 # x: torch.Tensor
        y = my_pallas_fn(to_jax(x))       # jax.Array on the same device
        return to_torch(y)                # torch.Tensor on x's device

* **GPU (the gpu dialect on an NVIDIA device): zero copy through DLPack.** ``to_jax`` hands JAX the
  tensor's memory (``jax.dlpack.from_dlpack``); ``to_torch`` hands torch the array's memory
  (``torch.from_dlpack``). Both run in one process on one CUDA context. Because torch and XLA queue work on
  different streams, ``to_jax`` first waits for torch's current stream and ``to_torch`` waits until the
  array is ready; those host waits are part of the candidate's measured time (they are the price of
  crossing frameworks, and they make sure no work escapes the clock).
* **CPU (the tpu dialect in interpret mode, CI): through numpy.** One copy each way; bfloat16 travels as
  its 16-bit pattern, since numpy and torch do not share a bfloat16 type.

Tensors are made contiguous first (DLPack and numpy need a plain strided layout; JAX arrays are dense).
"""

from __future__ import annotations

from typing import Any

import torch


def to_jax(t: torch.Tensor) -> Any:
    import jax
    import jax.numpy as jnp

    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.is_cuda:
        torch.cuda.current_stream(t.device).synchronize()
        return jax.dlpack.from_dlpack(t)
    if t.dtype == torch.bfloat16:
        bits = jnp.asarray(t.view(torch.int16).numpy())
        return jax.lax.bitcast_convert_type(bits, jnp.bfloat16)
    return jnp.asarray(t.numpy())


def to_torch(a: Any, device: torch.device | str | None = None) -> torch.Tensor:
    import jax
    import jax.numpy as jnp
    import numpy as np

    platform = next(iter(a.devices())).platform if hasattr(a, "devices") else "cpu"
    if platform in ("gpu", "cuda"):
        a.block_until_ready()
        out = torch.from_dlpack(a)
    else:
        if a.dtype == jnp.bfloat16:
            bits = np.asarray(jax.lax.bitcast_convert_type(a, jnp.int16))
            out = torch.from_numpy(bits.copy()).view(torch.bfloat16)
        else:
            out = torch.from_numpy(np.array(a))
    if device is not None and out.device != torch.device(device):
        out = out.to(device)
    return out
