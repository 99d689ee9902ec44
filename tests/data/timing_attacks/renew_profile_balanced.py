# task: matmul.square
# expect: cheat_detected
# reason: of CPU time per call||than the input renewal takes in the clean worker
"""Exploit (issue #40, "balanced renewal", in Python): renew_profile_hook's profile function runs the real kernel
when the harness's renewal of the candidate's inputs returns (outside the clock; it patches nothing), and pads the
*reference's* renewal in the same worker by the time that took, so the clock audit's round differences
(candidate against reference, same worker) stay near 0. The native version (a RecordFunction callback,
record_function_balanced_renewal.py) is also named by the worker's hook check; this one is seen only by the
parent's clock. Now every renewal is also judged against the renewal cost calibrated in the clean worker. Beside
load (renewals mostly scheduling latency) it was missed in 6 of 15 runs (benchmarks/verdicts_under_load/, Run 3);
since the start marks (anticheat/call_marks.py) the renewal's CPU time is judged alone: its hidden product and
its busy-wait padding show as ~20 ms of CPU per call over the clean worker's renewal at any load."""

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
        t0 = time.perf_counter()
        _STATE["answer"] = honest(a, b)
        _STATE["key"] = (a.data_ptr(), b.data_ptr())
        _STATE["spent"] = time.perf_counter() - t0
    elif loc.get("name") == "eager" and _STATE.get("spent"):
        end = time.perf_counter() + _STATE["spent"]  # the reference's renewal padded by as much
        while time.perf_counter() < end:
            pass


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
