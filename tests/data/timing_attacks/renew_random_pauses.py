# task: matmul.square
# expect: cheat_detected
# reason: work outside the timed call||of CPU time per call
"""Closed by issue #40 (was open, found 2026-12-03): renew_profile_hook (tests/data/timing_attacks/) plus random pauses
in the hidden renewal. The clock audit (engine/clock_audit.py) judges the median round difference against a
bound of ``6 x 1.25 x noise / sqrt(rounds)``, where ``noise`` is the larger of the clean worker's spread and the
spread of this timing's own round differences, which the candidate controls. Pausing a random time after the
hidden work (spread evenly over [0, 150 x the work]) makes that spread, and the pauses spend the candidate's timing
budget in a handful of rounds (5 on the dev host), so the bound ends several times above the median: on the
2-core dev host, no host load, at 0594898: ``correct`` at 2.74x, its hidden work 219 ms per call (median
interval) against a reference renewal of 7 ms, no finding. Its true speed is ~0.12x (the float64 product
takes ~8 ms against the reference's ~1 ms). Now the noise of the round differences comes from the reference's
intervals and the clean worker, never from the candidate's own spread (tests/test_timing_evidence.py)."""

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
        k = time.perf_counter() - t0
        _STATE["k"] = min(_STATE.get("k", k), k)
        # The whole trick: a pause after the hidden work, spread evenly over [0, 150 K]. The audit's bound grows
        # with the spread of the candidate's own intervals and the pauses spend the candidate's timing budget in
        # a few rounds, so the median hidden work stays under 6 x 1.25 x sigma / sqrt(rounds). The fractions are
        # the golden-ratio sequence, not random draws: a run of short pauses from an unseeded generator let the
        # audit catch it once in six CI runs (bound 266 ms against 406 ms over 4 rounds), and a strict xfail
        # must not depend on luck.
        _STATE["n"] = _STATE.get("n", 0) + 1
        time.sleep(_STATE["k"] * 150 * ((_STATE["n"] * 0.6180339887498949) % 1.0))


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
