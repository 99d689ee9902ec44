"""The process-wide settings that decide how fast the reference runs, pinned to what the harness set up.

Why: the reference is timed in the candidate's worker, so the candidate can slow it without touching it:
``torch.set_num_threads(1)`` at import (its own OpenMP loop still uses every core) made eager PyTorch 1.65x
slower on 2 cores, and the candidate was judged with the inflated speedup (issue #25; ~16x on 16 cores).
cuDNN, TF32, matmul-precision and deterministic-algorithm switches, CPU affinity and niceness are the same
kind of lever. The worker captures them before any candidate code runs (:meth:`SpeedState.capture`), and
before every reference or ``torch.compile``-baseline sample puts them back (:meth:`SpeedState.restore`);
whatever it had to put back is evidence the parent turns into ``cheat_detected``.

What this cannot do: a native thread that keeps resetting a setting between the restore and the sample
still slows the reference. That is what the parent's clean reference (anticheat/clock_audit.py) is for.
Functions are bound at import, before candidate code can replace them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

import torch

_get_threads, _set_threads = torch.get_num_threads, torch.set_num_threads
_get_interop = torch.get_num_interop_threads
_get_precision, _set_precision = torch.get_float32_matmul_precision, torch.set_float32_matmul_precision
_det_enabled = torch.are_deterministic_algorithms_enabled
_det_warn_only = torch.is_deterministic_algorithms_warn_only_enabled
_use_det = torch.use_deterministic_algorithms
_cudnn = torch.backends.cudnn
_cuda_matmul = torch.backends.cuda.matmul
_getaffinity = getattr(os, "sched_getaffinity", None)
_setaffinity = getattr(os, "sched_setaffinity", None)
_getpriority, _setpriority = os.getpriority, os.setpriority


@dataclass(frozen=True)
class SpeedState:
    threads: int
    interop_threads: int
    float32_matmul_precision: str
    deterministic_algorithms: bool
    deterministic_warn_only: bool
    cudnn_enabled: bool
    cudnn_benchmark: bool
    cudnn_deterministic: bool
    cudnn_allow_tf32: bool
    cuda_matmul_allow_tf32: bool
    affinity: tuple[int, ...]
    niceness: int

    @classmethod
    def capture(cls) -> SpeedState:
        return cls(threads=_get_threads(), interop_threads=_get_interop(),
                   float32_matmul_precision=_get_precision(), deterministic_algorithms=_det_enabled(),
                   deterministic_warn_only=_det_warn_only(), cudnn_enabled=bool(_cudnn.enabled),
                   cudnn_benchmark=bool(_cudnn.benchmark), cudnn_deterministic=bool(_cudnn.deterministic),
                   cudnn_allow_tf32=bool(_cudnn.allow_tf32), cuda_matmul_allow_tf32=bool(_cuda_matmul.allow_tf32),
                   affinity=tuple(sorted(_getaffinity(0))) if _getaffinity else (),
                   niceness=_getpriority(os.PRIO_PROCESS, 0))

    def restore(self) -> list[str]:
        """Put every setting back; return one line per setting that had changed ("name: before -> now",
        with "(could not restore)" where the process lacks the right, e.g. lowering its niceness)."""
        now = SpeedState.capture()
        changed = []
        for f in fields(self):
            want, got = getattr(self, f.name), getattr(now, f.name)
            if want == got:
                continue
            note = "" if _put(self, f.name, want) else " (could not restore)"
            changed.append(f"{f.name}: {_short(want)} -> {_short(got)}{note}")
        return changed


def _put(target: SpeedState, name: str, value) -> bool:
    try:
        if name == "threads":
            _set_threads(value)
        elif name == "interop_threads":
            return False  # fixed once any inter-op work ran: reported, not restorable
        elif name == "float32_matmul_precision":
            _set_precision(value)
        elif name in ("deterministic_algorithms", "deterministic_warn_only"):
            _use_det(target.deterministic_algorithms, warn_only=target.deterministic_warn_only)
        elif name.startswith("cudnn_"):
            setattr(_cudnn, name[len("cudnn_"):], value)
        elif name == "cuda_matmul_allow_tf32":
            _cuda_matmul.allow_tf32 = value
        elif name == "affinity":
            if _setaffinity is None or not value:
                return False
            _setaffinity(0, value)
        elif name == "niceness":
            _setpriority(os.PRIO_PROCESS, 0, value)
        return True
    except (OSError, RuntimeError, ValueError, TypeError):
        return False


def _short(value) -> str:
    if isinstance(value, tuple) and len(value) > 8:
        return f"{len(value)} cpus"
    return repr(value)
