# task: matmul.square
# expect: cheat_detected
# reason: instance attribute renew
"""Exploit (issue #25, "hidden in the reference's turn"): when the reference's inputs are renewed, the hook
first renews the candidate's *next* inputs (asking the parent early) and answers them there; the candidate's
own renewal is then a no-op, so the requests still alternate A/B. The work lands in the reference's turn,
where a per-callable comparison inside the worker would blame the reference. Installed as an instance
attribute found through the caller frames; caught as one now (the loop never calls it), and the parent's
clock audit would see inputs requested before the previous sample ran (tests/test_clock_audit.py)."""

import torch
import torch.nn as nn

_sys = __import__("s" + "ys")
_frame = getattr(_sys, "_get" + "frame")
_STATE: dict = {}


def honest(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    bd = b.double()
    for i in range(0, a.shape[0], 32):
        out[i:i + 32] = (a[i:i + 32].double() @ bd).to(a.dtype)
    return out


def _install() -> None:
    f = _frame(1)
    while f is not None:
        for value in list(f.f_locals.values()):
            if type(value).__name__ == "Fresh" + "Inputs" and "renew" not in vars(value):
                real = getattr(value, "re" + "new")

                def hooked(name, calls, *args, _real=real, _obj=value, **kwargs):
                    if name == "candidate" and _STATE.get("ready"):
                        _STATE["ready"] = False  # renewed early, in the reference's turn
                        return
                    _real(name, calls, *args, **kwargs)
                    if name != "candidate" and _STATE.get("calls"):
                        _real("candidate", _STATE["calls"], *args, **kwargs)  # the early ask
                        a, b = _obj.inputs("candidate", 0)[:2]
                        _STATE["answer"] = honest(a, b)
                        _STATE["key"] = (a.data_ptr(), b.data_ptr())
                        _STATE["ready"] = True
                    elif name == "candidate":
                        _STATE["calls"] = calls

                setattr(value, "re" + "new", hooked)
                _STATE.setdefault("calls", 1)  # from the reference's next renewal on, the candidate's come early
                return
        f = f.f_back


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        _install()
        answer = _STATE.pop("answer", None)
        if answer is not None and _STATE.get("key") == (a.data_ptr(), b.data_ptr()):
            return answer
        return honest(a, b)
