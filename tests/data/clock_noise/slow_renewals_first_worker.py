# task: matmul.square
# expect: correct
# reason: stands in for a burst of host load during one timing
"""Not a cheat: an honest product whose first device worker loses 250 ms outside every timed call, the way a
burst of load on a shared 2-core host stretches a worker's input renewals for a few seconds (CI, 2026-12-02:
an honest CPU relu judged ``cheat_detected`` for 10.6 ms per call against a 7.8 ms bound). A profile function
sleeps after each of the candidate's renewals in the first worker that times it only; a marker in its build
folder (its own, writable) tells later workers of this candidate not to. The clock audit's first timing sees
the lost time; the confirming timing in a fresh worker does not, so the verdict is ``correct``, judged on the
second timing, with the first one's finding in a flag (engine/clock_audit.py, "Confirmation").

The same shape with the sleep in every worker is a cheat that repeats itself, and the confirming timing
convicts it (tests/data/timing_attacks/renew_profile_hook.py does its work there in every fresh worker)."""

import os
import time

import torch
import torch.nn as nn

_sys = __import__("s" + "ys")
_setp = getattr(_sys, "set" + "profile")
_STATE: dict = {}


def _first_worker() -> bool:
    """True in the first worker that reaches timing (the build worker imports this module too, so not at import)."""
    if "first" not in _STATE:
        marker = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", "."), "mkb_test_timed_once")
        _STATE["first"] = not os.path.exists(marker)
        with open(marker, "w") as fh:
            fh.write("timed\n")
    return _STATE["first"]


def _hook(frame, event, arg):
    if event != "return" or frame.f_code.co_name != "re" + "new":
        return
    phase = frame.f_locals.get("phase")
    if getattr(phase, "value", phase) == "final":
        _setp(None)
        return
    if frame.f_locals.get("name") == "candidate":
        if _first_worker():
            time.sleep(0.25)  # far above the audit's bound even on a loaded host (it widens with the noise: 59 ms seen)
        else:  # a later worker: the burst is over, and the hook goes too. Left on, this profile function ran on
            _setp(None)  # every Python call of every renewal: ~2.5 ms of CPU per call, convicted on CI (2026-12-06)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not _STATE.get("armed"):
            _STATE["armed"] = True
            _setp(_hook)
        return a @ b
