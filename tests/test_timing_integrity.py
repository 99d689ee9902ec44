"""Issue #25: numbers a kernel cannot move, through the real engine on the CPU backend.

Each candidate under tests/data/timing_attacks/ beat main at 4854a3f (judged ``correct`` with a speedup it did
not earn, checked by hand against that commit: see benchmarks/timing_integrity/README.md) and must now end
``cheat_detected`` with its header's ``# reason:`` in the message:

* work moved into the harness's input renewal — through a profile function that patches nothing (only the
  parent's clock sees it), through an instance attribute found via the caller frames, in C++ through a
  dispatcher kernel for ``aten::copy_``;
* work hidden in the reference's turn (early requests for the candidate's inputs), also finished on a
  low-level thread while the reference is timed;
* a reference starved of threads.

The honest twin of tests/test_fresh_inputs.py runs beside them with every check on and must stay ``correct``
with no new flag: the clock audit and the clean reference must not fire on an honest kernel. An honest product
whose first timing loses time outside its calls (tests/data/clock_noise/, standing in for a burst of host load)
must end ``correct`` through the confirming timing in a fresh worker; before that confirmation existed it was
``cheat_detected``, as an honest CPU relu once was on CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.flags import FlagKind
from multikernelbench.records import EvalResult, Status

pytestmark = [pytest.mark.timing, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
ATTACKS = REPO / "tests" / "data" / "timing_attacks"
TWIN = REPO / "tests" / "data" / "honest_twins" / "matmul.square.py"
NOISE = REPO / "tests" / "data" / "clock_noise" / "slow_renewals_first_worker.py"
TASK = "matmul.square"
#: Plain-PyTorch attacks: judged with require_custom_kernel off (what they test is the clock, not the kernel).
PYTHON_ONLY = ("renew_profile_hook", "renew_instance_hook", "early_ask_reference_turn",
               "native_thread_between_samples", "starve_reference_threads")
NATIVE = ("dispatcher_copy_kernel",)


def _config(build_root: Path, custom_kernel: bool) -> EngineConfig:
    return EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, seed=2525,
                        compile_timeout_s=600.0, run_timeout_s=120.0, compile_workers=2,
                        anticheat=AntiCheatConfig(require_custom_kernel=custom_kernel),
                        timing=TimingConfig(min_runs=8, max_runs=30, budget_s=1.0, warmup=1, target_rse=0.0))


def _run(task, paths: dict[str, Path], cfg: EngineConfig) -> dict[str, EvalResult]:
    cands = [Candidate(task_id=TASK, source=p.read_text(), label=name) for name, p in paths.items()]
    return {c.label: r for c, r in zip(cands, evaluate_candidates([task], cands, cfg), strict=True)}


@pytest.fixture(scope="module")
def results(suite, build_root) -> dict[str, EvalResult]:
    task = suite[TASK]
    out = _run(task, {**{n: ATTACKS / f"{n}.py" for n in PYTHON_ONLY}, "noise": NOISE},
               _config(build_root, custom_kernel=False))
    out.update(_run(task, {"twin": TWIN, **{n: ATTACKS / f"{n}.py" for n in NATIVE}},
                    _config(build_root, custom_kernel=True)))
    for name, r in out.items():
        print(f"  {name}: {r.status.value} speedup {r.speedup} outside {r.outside_clock_ms} :: {r.message[:300]} FLAGS {r.flags}")
    return out


@pytest.mark.parametrize("name", PYTHON_ONLY + NATIVE)
def test_attack_is_caught(results, name):
    r = results[name]
    expected = read_headers((ATTACKS / f"{name}.py").read_text())["reason"]
    assert r.status == Status.CHEAT_DETECTED, f"{name}: {r.status.value} at {r.speedup}x: {r.message}"
    assert not r.message.startswith("static check"), f"{name}: the attack never ran: {r.message}"
    assert any(alt.strip() in r.message for alt in expected.split("||")), f"{name}: {r.message}"


def test_honest_twin_keeps_its_status(results):
    r = results["twin"]
    assert r.status == Status.CORRECT, r.message
    assert r.clean_eager_timing is not None and r.speedup_clean is not None, "no clean reference was timed"
    assert r.outside_clock_ms is not None
    assert not [f for f in r.flags if f.kind in (FlagKind.REFERENCE_SLOWED, FlagKind.NO_CLEAN_REFERENCE)], r.flags


def test_a_finding_of_one_timing_only_is_not_a_conviction(results):
    """The first timing sees 250 ms lost after each candidate renewal, the confirming one in a fresh worker does
    not: ``correct``, judged on the second timing, the first one's finding kept in a flag. The attacks above
    repeat themselves in the fresh worker and stay convicted (their messages say it was confirmed)."""
    r = results["noise"]
    assert r.status == Status.CORRECT, r.message
    first = [f.text for f in r.flags if f.kind is FlagKind.CLOCK_RETIMED]
    assert all(f.startswith("clock audit: the first timing showed") for f in first), first
    assert first and ("work outside the timed call" in first[0]
                      or "than the input renewal takes in the clean worker" in first[0]), r.flags
    assert r.outside_clock_ms is not None and r.outside_clock_ms < 20.0, r.outside_clock_ms
    assert "confirmed" in results["renew_profile_hook"].message, results["renew_profile_hook"].message


# The open hole of 2026-12-03 (random pauses in the hidden renewal) is closed: tests/test_timing_evidence.py.
