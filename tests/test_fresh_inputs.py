"""Issue #17: timing that cannot be gamed by recognising inputs.

Three tricked CPU candidates for matmul.square run through the real engine (CPU backend, timing on, every
anti-cheat check on) in the same evaluation as their honest twin, whose compute code they share byte for byte:

* ``memo_by_content``: fingerprints 16 input values inside its C++ extension and returns a stored answer
  when the fingerprint comes back;
* ``memo_after_checks``: the same memo, switched on only after the 6 correctness trials;
* ``call_count_output``: after the trials, computes only one call in sixteen and returns the previous answer
  otherwise.

Each must end either caught (``incorrect`` with its header's ``# reason:``, else "output of a timed run is
wrong": a timed output did not match the reference for that call's data; or ``cheat_detected`` by a runtime
check, not by the static filter) or ``correct`` and timed at its honest speed: not more than 10 % faster than
the twin timed in the same run, both by speedup and by fastest call (see ``_assert_not_gamed``).
When a trick works it is over 100x faster than the twin (a memo hit is a 1 MB clone instead of a 512^3
product), so the bound is one-sided and lenient towards noise: a candidate timed *slower* than its honest
kernel is not a cheat, and on a 2-core machine the twin and the candidate are timed one after the other in
different workers, so load can move either (seen on a shared 2-core box: the same kernel at 0.15x-0.30x of
eager from one run to the next).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import EvalResult, Status

#: Speeds compared against a 10 % margin: under pytest-xdist these tests run alone (tests/conftest.py).
pytestmark = pytest.mark.timing

REPO = Path(__file__).resolve().parents[1]
TASK = "matmul.square"  # CPU bench shape n=512 (CPU_BENCH_SHAPE); 3 test shapes x 2 seeds = 6 trials
TWIN = REPO / "tests" / "data" / "honest_twins" / f"{TASK}.py"
WRONG = REPO / "solutions" / "cpu" / "wrong"
TRICKS = ["memo_by_content", "memo_after_checks", "call_count_output"]
#: "Timed at its honest speed": a correct candidate's speedup may exceed the twin's by at most this factor. A
#: working trick skips the n=512 product (tens of times faster); 1.10 failed three times in one day on the shared
#: 2-core host under load ~12 (memo_by_content 0.57x against the twin's 0.43x: two timings minutes apart).
HONEST_MARGIN = 1.5
#: What an ``incorrect`` verdict must say when the candidate's header names no ``# reason:`` (the memo
#: candidates expect ``correct``: on fresh inputs their memo never hits).
TIMED_OUTPUT_WRONG = "output of a timed run is wrong"


def headers(path: Path) -> dict[str, str]:
    return read_headers(path.read_text())


def reason_matches(expected: str, message: str) -> bool:
    return any(alt.strip() in message for alt in expected.split("||"))


def engine_config(build_root: Path) -> EngineConfig:
    # One OpenMP thread: on a 2-core machine a 2-thread parallel region (the kernel, or ATen's copy inside
    # clone()) stalls for a scheduler slice whenever anything else wants a core, which made the same kernel
    # time 0.5x-0.9x of eager from one run to the next; single-threaded timing is what a 10 % margin needs.
    # No early stop (target_rse 0): every callable runs to 40 samples or its 1 s budget, so medians and
    # minima rest on many samples; and a candidate that skips work on some calls gets many cheap samples,
    # so an engine that verifies a random fraction of timed outputs checks many of them.
    return EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, seed=1717,
                        compile_timeout_s=600.0, run_timeout_s=120.0, compile_workers=2, threads=1,
                        timing=TimingConfig(min_runs=5, max_runs=40, budget_s=1.0, warmup=1, target_rse=0.0))


def run_candidates(task, build_root: Path) -> dict[str, EvalResult]:
    """The twin and the tricked candidates in one evaluation (four builds, two at a time, then one device
    worker each, one after the other: the CPU backend never times while building), then the twin again."""
    paths = {"twin": TWIN, **{name: WRONG / f"{name}.py" for name in TRICKS}}
    cands = [Candidate(task_id=TASK, source=p.read_text(), label=name) for name, p in paths.items()]
    cfg = engine_config(build_root)
    results = evaluate_candidates([task], cands, cfg)
    out = {c.label: r for c, r in zip(cands, results, strict=True)}
    # The twin once more, after the others (its build is cached): the bound uses the faster of its two
    # timings, so a burst of load during one of them cannot turn an honestly timed candidate into a failure.
    (out["twin_again"],) = evaluate_candidates([task], cands[:1], cfg)
    return out


@pytest.fixture(scope="module")
def fresh_results(suite, build_root) -> dict[str, EvalResult]:
    t0 = time.perf_counter()
    out = run_candidates(suite[TASK], build_root)  # the session's build folder: shared with test_anticheat_cpu
    print(f"\nfresh-input candidates (4 builds, 5 device stages): {time.perf_counter() - t0:.0f} s")
    for name, r in out.items():
        speed = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
        ct = r.candidate_timing
        times = f"median {ct.median_ms:.3f} ms, fastest {ct.min_ms:.3f} ms, {ct.runs} runs" if ct else ""
        print(f"  {name}: {r.status.value} speedup {speed} {times} {r.message[:200]}")
    return out


TWINS = ("twin", "twin_again")


def _twin_speedup(results: dict[str, EvalResult]) -> float:
    """The honest twin's speedup: the better of its two timings in this run."""
    for key in TWINS:
        twin = results[key]
        assert twin.status == Status.CORRECT, f"honest twin: {twin.status.value}: {twin.message}"
        assert twin.speedup is not None and twin.speedup > 0, twin
    return max(results[k].speedup for k in TWINS)


def _assert_not_gamed(results: dict[str, EvalResult], name: str) -> None:
    r = results[name]
    h = headers(WRONG / f"{name}.py")
    if r.status == Status.INCORRECT:
        # Caught on timed outputs (not at a correctness trial: the tricks are honest there by design).
        expected = h.get("reason", TIMED_OUTPUT_WRONG)
        assert reason_matches(expected, r.message), f"{name}: incorrect for another reason: {r.message}"
        return
    if r.status == Status.CHEAT_DETECTED:
        # A runtime defence; the static filter rejecting the source would mean the attack never ran.
        assert not r.message.startswith("static check"), f"{name}: {r.message}"
        return
    assert r.status == Status.CORRECT, f"{name}: {r.status.value}: {r.message}"
    assert r.speedup is not None and r.candidate_timing is not None, f"{name}: correct but not timed"
    twin_speedup = _twin_speedup(results)
    twin_best_ms = min(results[k].candidate_timing.min_ms for k in TWINS)
    cand = r.candidate_timing
    # Gamed = faster than the honest kernel both by the reported speedup (median against eager, A/B) and by
    # the fastest single call. A working trick is far past both; requiring both keeps a burst of load during
    # one of the timings (which moves medians much more than minima) from failing an honest timing.
    faster_speedup = r.speedup > HONEST_MARGIN * twin_speedup
    faster_best_call = cand.min_ms * HONEST_MARGIN < twin_best_ms
    assert not (faster_speedup and faster_best_call), (
        f"{name} judged correct at {r.speedup:.2f}x (median {cand.median_ms:.3f} ms, fastest call "
        f"{cand.min_ms:.3f} ms); its honest twin: {twin_speedup:.2f}x (fastest call {twin_best_ms:.3f} ms): "
        "the timing was gamed by recognising inputs")


@pytest.mark.slow
def test_honest_twin_correct(fresh_results):
    _twin_speedup(fresh_results)


@pytest.mark.slow
def test_memo_by_content_not_timed_as_fast(fresh_results):
    _assert_not_gamed(fresh_results, "memo_by_content")


@pytest.mark.slow
def test_memo_after_checks_not_timed_as_fast(fresh_results):
    _assert_not_gamed(fresh_results, "memo_after_checks")


@pytest.mark.slow
def test_call_count_output_not_timed_as_fast(fresh_results):
    _assert_not_gamed(fresh_results, "call_count_output")
