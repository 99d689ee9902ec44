# task: matmul.square
# expect: cheat_detected
# reason: in which no thread of the worker could run||than the input renewal takes in the clean worker
"""PARTLY OPEN (2026-12-05). The idle audit (engine/sched_idle.py: the parent reads every worker thread's
schedstat; time in which no worker thread could run is sleep, which load does not produce) catches it in some runs
only: beside 4 busy loops pinned to the 2 dev-host cores, 4 of 7 runs ``cheat_detected`` (idle, confirmed), 3
``correct`` at 5-40x with no finding (the rule changed between them: lower quartile or median, 5 or 3 ms; at
today's, 2 of 3) (benchmarks/verdicts_under_load/README.md, "Idle"). Why not all: the
figure is a lower bound (the reference's own threads running at once count twice and cover as much sleep), and
this padding is only as long as the hidden n=512 product, a few times the reference's own two-thread call.
Found 2026-12-04 (issue #40, the miss of
benchmarks/verdicts_under_load/ Run 2, explained): renew_profile_balanced.py (tests/data/timing_attacks/) made quiet in CPU time. Its hidden work runs on
one thread (no intra-op thread left spinning at a barrier while its partner waits for a core, which is what took
the original's hidden product from ~23 ms to 75-270 ms of CPU per call under load and got it caught), and the
reference's renewal in its worker is padded by *sleeping* as long, not by a busy loop (no CPU time burnt). The
parent's CPU-time figures (engine/clock_audit.py, "CPU time") then see only the product's own cost, ~20 ms per
call at n=512 on the 2-core dev host, under their 40 ms floor and inside the 20-80 ms that the same reference's
CPU time per call varies between clean calibrations under load; what is left is the wall audit against the clean
worker's renewal, which load excuses. Measured (the engine, default timing at --timing-budget 1, the dev host with
another benchmark beside it, 15-25 runnable tasks on 2 cores): 0 of 4 caught. With 8 more busy loops pinned to the
cores, ``correct`` at 227x (no finding), once flagged inconclusive (no speedup) and ``correct`` at 359x the way the
original's miss went (its first timing's wall finding, 278 ms per call against a bound of 207, not found again
in the confirming timing judged by a clean renewal recalibrated at 669 ms per call); without them, ``correct`` at
376x. The true speed is the original's (~0.1-0.2x).
Its busy-waiting sibling (renew_profile_balanced.py) burns CPU instead of sleeping: not this audit's, the CPU-time
audit's."""

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
