# task: matmul.square
# expect: cheat_detected
# reason: instance attribute renew
"""Exploit (issue #25, "a native thread that does the work between samples"): the candidate's next inputs are
renewed early, in the reference's turn (as in early_ask_reference_turn.py), and a thread started through the
low-level ``_thread`` module (invisible to ``threading.enumerate``; idle by the time any forward returns, so
the busy-thread scan sees nothing) computes the answer while the reference is being timed: on two cores the
work hides beside the reference's sample instead of after it, and the timed call only waits for a result
that is already there. Caught as an instance attribute now; the parent's clock audit would see the
candidate's inputs requested before the reference's sample ran (tests/test_clock_audit.py)."""

import torch
import torch.nn as nn

_sys = __import__("s" + "ys")
_frame = getattr(_sys, "_get" + "frame")
_low = __import__("_th" + "read")
_STATE: dict = {}


def honest(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    bd = b.double()
    for i in range(0, a.shape[0], 32):
        out[i:i + 32] = (a[i:i + 32].double() @ bd).to(a.dtype)
    return out


def _work(a, b, done) -> None:
    _STATE["answer"] = honest(a, b)
    _STATE["key"] = (a.data_ptr(), b.data_ptr())
    done.release()


def _install() -> None:
    f = _frame(1)
    while f is not None:
        for value in list(f.f_locals.values()):
            if type(value).__name__ == "Fresh" + "Inputs" and "renew" not in vars(value):
                real = getattr(value, "re" + "new")

                def hooked(name, calls, *args, _real=real, _obj=value, **kwargs):
                    if name == "candidate" and _STATE.get("ready"):
                        _STATE["ready"] = False
                        return
                    _real(name, calls, *args, **kwargs)
                    if name != "candidate" and _STATE.get("calls"):
                        _real("candidate", _STATE["calls"], *args, **kwargs)  # early, in the reference's turn
                        a, b = _obj.inputs("candidate", 0)[:2]
                        done = _low.allocate_lock()
                        done.acquire()
                        _STATE["done"] = done
                        _low.start_new_thread(_work, (a, b, done))
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
        done = _STATE.pop("done", None)
        if done is not None:
            done.acquire()  # the thread finished during the reference's sample
            answer = _STATE.pop("answer", None)
            if answer is not None and _STATE.get("key") == (a.data_ptr(), b.data_ptr()):
                return answer
        return honest(a, b)
