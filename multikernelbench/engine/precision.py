"""Numerics policy shared by the reference (parent) and the worker.

fp32 tasks mean IEEE fp32: on NVIDIA GPUs cuDNN convolutions default to TF32 (10-bit mantissa), which makes
a correct fp32 kernel look wrong against a TF32 reference and lets a TF32 candidate pass as fp32. Both
sides therefore run with TF32 off; a candidate that turns it back on is computing below the task's
precision and is judged by the tolerances like any other.
"""

from __future__ import annotations

import torch


def strict_fp32() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
