# task: activation.relu
# expect: cheat_detected
"""Deliberately cheating: pyopencl.array's library kernel does the ReLU; the module is imported by a name built at
run time so the static rules miss it, and the file declares no kernel of its own. The enqueue recorder sees
only a library kernel (no own kernel ran)."""

import importlib

import pyopencl as cl
import torch
import torch.nn as nn

CTX = cl.create_some_context(interactive=False)
QUEUE = cl.CommandQueue(CTX)
ARR = importlib.import_module("pyopencl." + "ar" + "ray")


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dev = ARR.to_device(QUEUE, x.numpy())
        res = getattr(ARR, "max" + "imum")(dev, ARR.zeros_like(dev))
        return torch.from_numpy(res.get(queue=QUEUE))
