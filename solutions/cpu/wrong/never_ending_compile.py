# task: activation.relu
# expect: timeout
# reason: compiling: no reply
# config: compile_timeout_s=25
"""Fault: a build that never finishes -- the C++ source includes a named pipe nobody writes, so the
compiler blocks on it forever (without burning CPU) until the harness's compile timeout kills it."""

import os

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_PIPE = os.path.join(os.getcwd(), "never_ready.h")
if not os.path.exists(_PIPE):
    os.mkfifo(_PIPE)

_ext = load_inline(name="mkb_cpu_wrong_never_ending_compile", cpp_sources=f'#include "{_PIPE}"\nint f();',
                   functions=["f"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.f(x)
