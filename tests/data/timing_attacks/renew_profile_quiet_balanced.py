# task: matmul.square
# expect: cheat_detected
# reason: of CPU time per call more in the renewals||in which no thread of the worker could run||than the input renewal takes in the clean worker
"""Exploit (issue #40, "balanced renewal", made quiet in CPU time): renew_profile_balanced.py with its hidden
float64 product on one thread (no intra-op thread left spinning at a barrier while its partner waits for a core)
and the reference's renewal in its worker padded by *sleeping* as long (no CPU time burnt). The round differences
stay at 0, the whole interval's CPU time (/proc ticks, the timed call's spinning mixed in) is under its 40 ms floor,
and beside load the wall time is what load explains; the idle audit (anticheat/sched_idle.py) caught it in 4 of 7
runs beside pinned busy loops (benchmarks/verdicts_under_load/README.md, "Idle"): it was in timing_attacks_open/.

CAUGHT since the start marks (anticheat/call_marks.py, 2026-12-05): the parent reads the worker process's CPU
clock (ns) at each request and at the mark the worker sends just before the timed call, so the renewal's CPU time
is judged alone. Beside 4 busy loops pinned to the 2 dev-host cores (factor 4.00): its candidate's renewals ~16 ms
of CPU per call against the reference's ~7 in the same worker and the clean worker's 5.9-7.9, ``cheat_detected``
in both timings of 3 of 3 runs (tests/test_load_verdicts.py on a recorded one; tests/test_timing_evidence.py runs
it). The true speed is the original's (~0.1-0.2x); without the marks it was ``correct`` at 5-376x."""

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


def _one_thread(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The hidden work on one thread, the pool's size put back before the harness looks at it again."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return honest(a, b)
    finally:
        torch.set_num_threads(n)


def _spin() -> None:
    """The timed call takes a little time (a zero-time call would pass the roofline)."""
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
        _STATE["answer"] = _one_thread(a, b)
        _STATE["key"] = (a.data_ptr(), b.data_ptr())
        _STATE["spent"] = time.perf_counter() - t0
    elif loc.get("name") == "eager" and _STATE.get("spent"):
        time.sleep(_STATE["spent"])  # the reference's renewal padded by as much wall time, no CPU time


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not _STATE.get("armed"):
            _STATE["armed"] = True
            _setp(_hook)
        answer = _STATE.pop("answer", None)
        if answer is not None and _STATE.get("key") == (a.data_ptr(), b.data_ptr()):
            _spin()
            return answer
        return honest(a, b)
