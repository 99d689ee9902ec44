"""Issue #40: the timing's evidence comes from processes the candidate cannot reach, through the real engine on
the CPU backend with real C++ extensions.

* **balanced renewal** (tests/data/timing_attacks/record_function_balanced_renewal.py): a native RecordFunction
  callback runs the real kernel in the harness's ``copy_`` into the candidate's input slot and pads the
  reference's renewal by the same time. At 843e731 (round differences against the in-worker reference only) it
  was ``correct`` with a speedup its kernel does not have; the renewal judged against the clean worker's
  calibration convicts it (or the native-hook check names the callback).
* **slowed reference** (record_function_slowed_reference.py): a callback that busy-waits after the reference's
  op in the candidate's worker. At 843e731 its speedup was taken against that reference; now it is always the
  clean worker's, so the speedup is the honest twin's (same kernel) within noise, or the hook is named.
* **balanced renewal in Python** (renew_profile_balanced.py): the same through a profile function, which no
  worker-side check sees: only the clean worker's renewal calibration convicts it (``correct`` with the audit of
  843e731).
* **random pauses** (tests/data/timing_attacks/renew_random_pauses.py, the open hole of 2026-12-03): hidden work
  plus random pauses that widened the audit's noise estimate. The noise now comes from the reference's intervals
  and the clean worker, never from the candidate's own spread: convicted.

The honest twin runs in the same batch and must stay ``correct`` with no clock flag.

* **honest beside load**: the shipped relu and its twin that allocates its output in Python (the shape the
  issue saw convicted at load ~5 on 2 cores), beside busy loops pinned to every core, twice over: never
  ``cheat_detected`` (a finding load can produce is re-timed at a quieter moment, and under oversubscription
  convicts only beyond the load's factor). Many more evaluations: benchmarks/verdicts_under_load/.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.anticheat.timing_records import MAX_FACTOR
from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.flags import FlagKind
from multikernelbench.records import EvalResult, Status

pytestmark = [pytest.mark.timing, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
ATTACKS = REPO / "tests" / "data" / "timing_attacks"
TWIN = REPO / "tests" / "data" / "honest_twins" / "matmul.square.py"
#: A load factor (engine/host_load.py) from which an honest result may carry load's notes (not a verdict).
OVERSUBSCRIBED = 1.5
TASK = "matmul.square"


def _config(build_root: Path, custom_kernel: bool, run_timeout_s: float = 120.0) -> EngineConfig:
    return EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, seed=4040,
                        compile_timeout_s=600.0, run_timeout_s=run_timeout_s, compile_workers=2,
                        anticheat=AntiCheatConfig(require_custom_kernel=custom_kernel, quiet_wait_s=5.0),
                        timing=TimingConfig(min_runs=8, max_runs=30, budget_s=1.0, warmup=1, target_rse=0.0))


def _run(task, paths: dict[str, Path], cfg: EngineConfig) -> dict[str, EvalResult]:
    cands = [Candidate(task_id=TASK, source=p.read_text(), label=name) for name, p in paths.items()]
    return {c.label: r for c, r in zip(cands, evaluate_candidates([task], cands, cfg), strict=True)}


@pytest.fixture(scope="module")
def results(suite, build_root) -> dict[str, EvalResult]:
    task = suite[TASK]
    out = _run(task, {"twin": TWIN, "balanced": ATTACKS / "record_function_balanced_renewal.py",
                      "slowed": ATTACKS / "record_function_slowed_reference.py"}, _config(build_root, True))
    # Its pauses reach 150x its hidden work: on a loaded 2-core host one timing can take minutes.
    out.update(_run(task, {"pauses": ATTACKS / "renew_random_pauses.py",
                           "balanced_py": ATTACKS / "renew_profile_balanced.py"}, _config(build_root, False, 600.0)))
    for name, r in out.items():
        print(f"  {name}: {r.status.value} speedup {r.speedup} clean {r.speedup_clean} outside "
              f"{r.outside_clock_ms} load {r.host_load} :: {r.message[:300]} FLAGS {r.flags}")
    return out


def _caught(name: str, r: EvalResult) -> None:
    """Convicted with the evidence named; or, on a host so oversubscribed that even this finding is within what
    load can stretch, flagged inconclusive with no speedup: the attack earns nothing either way."""
    assert not r.message.startswith("static check"), f"the attack never ran: {r.message}"
    factor = ((r.host_load or {}).get("timing") or {}).get("factor", 1.0)
    if r.status == Status.CORRECT and factor >= MAX_FACTOR:
        # The stated limit (anticheat README): at the factor's cap the renewal intervals are scheduling latency
        # (hundreds of ms on the 2-core dev host at load 12+), and hidden work under half of that passes; so does
        # a confirming timing whose recalibration came out wider than the first timing's (the first one's
        # "clock audit" flag is then on the result: benchmarks/verdicts_under_load/README.md, Run 2).
        pytest.skip(f"host at the load cap ({r.host_load}): too busy to judge work hidden in the renewal")
    if r.status == Status.CORRECT and any(f.kind is FlagKind.CLOCK_INCONCLUSIVE for f in r.flags):
        assert r.speedup is None and r.host_load and r.host_load["timing"]["oversubscribed"], (r.speedup, r.host_load)
        return
    assert r.status == Status.CHEAT_DETECTED, f"{r.status.value} at {r.speedup}x: {r.message}"
    assert _reason_in(name, r.message), r.message


def _reason_in(name: str, message: str) -> bool:
    expected = read_headers((ATTACKS / f"{name}.py").read_text())["reason"]
    return any(alt.strip() in message for alt in expected.split("||"))


def test_honest_twin_stays_correct_with_its_load_recorded(results):
    r = results["twin"]
    assert r.status == Status.CORRECT, r.message
    assert r.speedup is not None and r.speedup == r.speedup_clean, "the speedup is the clean worker's"
    assert r.host_load and r.host_load["timing"] and r.host_load["timing"]["cores"] >= 1, r.host_load
    # On an oversubscribed host (either timing's factor over OVERSUBSCRIBED) load alone may leave notes: a
    # first-timing finding that the confirmation did not hold, the reference slower in this worker than in the
    # clean one (seen at factor 1.55/1.64 in a suite run beside other jobs). The verdict must hold regardless.
    factors = [(r.host_load.get(k) or {}).get("factor", 1.0) for k in ("timing", "clean")]
    if max(factors) < OVERSUBSCRIBED:
        noted = {FlagKind.CLOCK_RETIMED, FlagKind.CLOCK_RECALIBRATED, FlagKind.CLOCK_INCONCLUSIVE,
                 FlagKind.REFERENCE_SLOWED}
        assert not [f for f in r.flags if f.kind in noted], (r.flags, factors)


def test_balanced_renewal_is_caught(results):
    _caught("record_function_balanced_renewal", results["balanced"])


def test_balanced_renewal_in_python_is_caught_by_the_clock(results):
    """The same balance through a profile function: no hook for the worker to see, only the clean calibration."""
    _caught("renew_profile_balanced", results["balanced_py"])


def test_slowed_reference_earns_nothing(results):
    r, twin = results["slowed"], results["twin"]
    assert not r.message.startswith("static check"), r.message
    if r.status == Status.CHEAT_DETECTED:  # the native-hook check named the callback
        assert "RecordFunction" in r.message, r.message
        return
    assert r.status == Status.CORRECT, r.message
    assert r.speedup is not None and twin.speedup is not None
    # Same kernel, same clean reference: the same speedup within the noise of two timings on a shared host
    # (the slowed in-worker reference made it ~2.5x).
    assert r.speedup < 1.6 * twin.speedup, (r.speedup, twin.speedup, r.flags)


def test_random_pauses_in_the_renewal_are_caught(results):
    _caught("renew_random_pauses", results["pauses"])


def _burners(per_core: int) -> list[subprocess.Popen]:
    """Busy loops pinned round-robin to this process's cores: deterministic CPU load, ended by the test."""
    cores = sorted(os.sched_getaffinity(0))
    procs = []
    for i in range(per_core * len(cores)):
        core = cores[i % len(cores)]
        procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                      preexec_fn=lambda c=core: os.sched_setaffinity(0, {c})))
    return procs


def test_honest_relu_beside_pinned_burners_is_not_convicted(suite, build_root):
    relu = suite["activation.relu"]
    paths = {"shipped": REPO / "solutions" / "cpu" / "activation.relu.py",
             "twin": REPO / "tests" / "data" / "honest_twins" / "activation.relu.py"}
    cands = [Candidate(task_id=relu.id, source=p.read_text(), label=name) for name, p in paths.items()]
    cfg = _config(build_root, True)
    procs = _burners(2)
    try:
        got = dict(zip(paths, evaluate_candidates([relu], cands, cfg), strict=True))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for name, r in got.items():
        print(f"  relu {name}: {r.status.value} speedup {r.speedup} load {r.host_load} :: {r.message[:300]} "
              f"FLAGS {r.flags}")
        assert r.status != Status.CHEAT_DETECTED, f"{name}: {r.message}"
        assert r.host_load and r.host_load["timing"], r.host_load


MARKS_REASON = "of CPU time per call more in the renewals before candidate's timed calls"


def test_balanced_renewal_beside_pinned_burners_is_caught_by_the_renewals_cpu_time(suite, build_root):
    """The open class of issue #40 until the start marks (anticheat/call_marks.py): the balanced renewal with a
    busy-wait padding (renew_profile_balanced.py) and with a sleeping one and a one-thread hidden product
    (renew_profile_quiet_balanced.py), beside busy loops pinned to every core twice over, where the wall audit is
    blind and the whole interval's CPU time under its floor (``correct`` at 5-376x before). The renewal's CPU time,
    read by the parent at the request and at the start mark, shows the hidden product in every sample at any load:
    convicted, named by it, no skip at the load factor's cap. The honest twin in the same batch stays ``correct``.
    Measured before this test: 3 of 3 runs of each convicted at factor 4.0, the renewals 10-36 ms of CPU per call
    against the clean worker's 5.7-7.9 (bounds 2.9-3.9); the honest twin's 6.5 against 6.7."""
    task = suite[TASK]
    paths = {"twin": TWIN, "balanced": ATTACKS / "renew_profile_balanced.py",
             "quiet": ATTACKS / "renew_profile_quiet_balanced.py"}
    procs = _burners(2)
    try:
        got = _run(task, paths, _config(build_root, False, 600.0))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for name, r in got.items():
        print(f"  {name}: {r.status.value} speedup {r.speedup} load {r.host_load} :: {r.message[:400]}")
    assert got["twin"].status == Status.CORRECT, got["twin"].message
    for name in ("balanced", "quiet"):
        r = got[name]
        assert r.status == Status.CHEAT_DETECTED, f"{name}: {r.status.value} at {r.speedup}x: {r.message}"
        assert MARKS_REASON in r.message and "confirmed" in r.message, r.message


def test_load_that_arrives_after_the_clean_calibration_convicts_no_honest_kernel(suite, build_root):
    """CI, 2026-12-04: the clean worker calibrated the relu's input renewal on a quiet moment (12 ms per call);
    the candidate's timing ran once the other test process had started its compilers, and every renewal there
    took 28 ms, the candidate's and eager's alike, in both timings: ``cheat_detected`` ("work hidden in the
    renewal"). Here the same: a run calibrates the clean worker on a quiet host, busy loops start, and a second
    run with that calibration times the honest relu. The confirming timing recalibrates the clean worker beside
    it (anticheat/clock_audit.py, "Against the clean worker"), so what load did to the renewal it did to both."""
    from multikernelbench.engine.clean_reference import CleanReference
    from multikernelbench.engine.runner import Runner

    class Kept(CleanReference):
        def release(self, task_id: str) -> None:  # kept past the quiet run's end for the busy one
            pass

    relu = suite["activation.relu"]
    source = (REPO / "solutions" / "cpu" / "activation.relu.py").read_text()
    cfg = _config(build_root, True)
    quiet = Runner(cfg, progress=False)
    quiet.clean_refs = Kept()
    first = quiet.evaluate([relu], [Candidate(task_id=relu.id, source=source, label="quiet")])[0]
    assert first.status == Status.CORRECT, first.message
    procs = _burners(2)
    try:
        busy = Runner(cfg, progress=False)
        busy.clean_refs = quiet.clean_refs  # the calibration made before the load
        r = busy.evaluate([relu], [Candidate(task_id=relu.id, source=source, label="busy")])[0]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert r.host_load["clean"]["factor"] == 1.0 or r.host_load["clean"] != r.host_load["timing"], r.host_load
    print(f"  relu after load arrived: {r.status.value} load {r.host_load} :: {r.message[:400]} FLAGS {r.flags}")
    assert r.status != Status.CHEAT_DETECTED, r.message
