# task: matmul.square
# expect: cheat_detected
# reason: work outside the timed call||of CPU time per call
"""Exploit (issue #25), Python only, nothing patched: a profile function (``sys.setprofile``, its name built at
run time) sees every return from the harness's input renewal. When the candidate's inputs have just been
renewed, it runs the candidate's honest (slow) product on them there, outside the clock, and the timed call
returns the stored answer after a short spin. Every timed output is right for its fresh data, so verification
passes. It removes itself when the harness's final call comes, so no worker-side check sees it afterwards.
Only the parent's own clock can tell: the wall time between the candidate's input requests holds its real
work. Plain PyTorch as its "kernel" (run with require_custom_kernel off: this is about the clock)."""

import time

import torch
import torch.nn as nn

_sys = __import__("s" + "ys")
_setp = getattr(_sys, "set" + "profile")
_STATE: dict = {}


def honest(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The candidate's real kernel: a product accumulated in float64, 32 rows at a time (slow, exact)."""
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    bd = b.double()
    for i in range(0, a.shape[0], 32):
        out[i:i + 32] = (a[i:i + 32].double() @ bd).to(a.dtype)
    return out


def _spin(a: torch.Tensor) -> None:
    if a.is_cuda:
        getattr(torch.cuda, "_sl" + "eep")(20000)
    else:
        end = time.perf_counter() + 2e-4
        while time.perf_counter() < end:
            pass


def _hook(frame, event, arg):
    if event != "return" or frame.f_code.co_name != "re" + "new":
        return
    loc = frame.f_locals
    phase = loc.get("phase")
    if getattr(phase, "value", phase) == "final":
        _setp(None)  # leave no trace for the checks after timing
        return
    if loc.get("name") == "candidate":
        a, b = loc["self"].inputs("candidate", 0)[:2]
        _STATE["answer"] = honest(a, b)
        _STATE["key"] = (a.data_ptr(), b.data_ptr())


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not _STATE.get("armed"):
            _STATE["armed"] = True
            _setp(_hook)
        answer = _STATE.pop("answer", None)
        if answer is not None and _STATE.get("key") == (a.data_ptr(), b.data_ptr()):
            _spin(a)
            return answer
        return honest(a, b)
