# task: matmul.square
# expect: cheat_detected
# reason: instance attribute renew
"""Exploit (issue #25, as measured on 4854a3f): the forward walks its caller frames (names built at run time),
finds the harness object that renews the timed inputs, and sets an instance attribute ``renew`` that calls
the real one and then runs the candidate's honest (slow) product on the fresh inputs, outside the clock; the
timed call returns that answer after a short spin. Defeated twice over now: the timing loop resolves
``renew`` on the class (the hook is never called), and the snapshot of the harness objects alive during
timing names the attribute."""

import time

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


def _spin(a: torch.Tensor) -> None:
    if a.is_cuda:
        getattr(torch.cuda, "_sl" + "eep")(20000)
    else:
        end = time.perf_counter() + 2e-4
        while time.perf_counter() < end:
            pass


def _install() -> None:
    f = _frame(1)
    while f is not None:
        for value in list(f.f_locals.values()):
            if type(value).__name__ == "Fresh" + "Inputs" and "renew" not in vars(value):
                real = getattr(value, "re" + "new")

                def hooked(name, calls, *args, _real=real, _obj=value, **kwargs):
                    _real(name, calls, *args, **kwargs)
                    if name == "candidate" and calls:
                        a, b = _obj.inputs(name, 0)[:2]
                        _STATE["answer"] = honest(a, b)
                        _STATE["key"] = (a.data_ptr(), b.data_ptr())

                setattr(value, "re" + "new", hooked)
                return
        f = f.f_back


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        _install()
        answer = _STATE.pop("answer", None)
        if answer is not None and _STATE.get("key") == (a.data_ptr(), b.data_ptr()):
            _spin(a)
            return answer
        return honest(a, b)
