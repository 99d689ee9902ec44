"""Issue #40, items 1 and 3: a candidate's outputs are read without a tensor op in its worker and judged in the
parent; native hooks (RecordFunction callbacks, redirected GOT slots) installed by candidate code are named.

The attack (tests/data/verdict_outputs/lazy_output_observer.py) registers a global RecordFunction callback in
its extension and fills its output in only when the harness touches it with an aten op. At 71030c8 it was
judged ``correct`` with a large speedup (checked with this module against a ``git archive`` of that commit);
now the worker copies each output's raw bytes with ctypes and the callback never fires before the read (and the
callback itself is named). got_clock_shave.py points libpython's GOT slot for ``clock_gettime`` at its own clock,
which subtracts 90 % of the time its forward took; inline_clock_shave.py overwrites the entry of libc's
``clock_gettime`` instead (no slot changes). At 71030c8, in one run on the loaded 2-core host: ``correct`` at
0.12x and 0.23x, their honest twin (honest_relu_loop.py, the same loop) at 0.012x; now ``cheat_detected`` with
the slot or the code named.
The honest control returns a non-contiguous output, which the raw reader must hand over correctly.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
import torch

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.anticheat.native_hooks import NativeSnapshot
from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.raw_outputs import (
    OddOutput,
    gathered_record,
    gathered_values,
    needs_positions,
    read_raw,
    rebuild,
    secret_positions,
    values_at,
)
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import EvalResult, Status

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "verdict_outputs"
TASK = "activation.relu"


def test_raw_read_runs_no_aten_op():
    """What the worker does to an output records no op (a RecordFunction observer would see any)."""
    t = torch.randn(5, 7).t()  # non-contiguous
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        raw = read_raw(t, 0)
    assert [e.name for e in prof.events()] == []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        t.detach().contiguous()  # what the worker did before: seen
    assert any("detach" in e.name for e in prof.events())
    assert torch.equal(rebuild(raw, 0), t)


def test_large_output_values_read_with_numpy_not_aten():
    """Above RAW_LIMIT the worker sends the values at the positions, read through numpy: no op, same values as
    the parent's own indexing of the same positions, strides included."""
    t = torch.randn(900, 700).t()  # 2.5 MB, non-contiguous
    assert needs_positions(t)
    positions = secret_positions(123, 4096, 1024)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        rec = gathered_record(t, 0, positions, 4096 + 2048)
    assert [e.name for e in prof.events()] == []
    values, meta = gathered_values(rec, 0, len(positions))
    assert meta == [[700, 900], "torch.float32"]
    assert torch.equal(values, values_at(t, positions, 4096 + 2048))
    with pytest.raises(ValueError, match="malformed"):
        gathered_values(rec, 0, len(positions) - 1)


def test_rebuild_refuses_malformed_records():
    raw = read_raw(torch.arange(6, dtype=torch.float32), 0)
    with pytest.raises(ValueError, match="reach past"):
        rebuild({**raw, "shape": [7]}, 0)
    with pytest.raises(ValueError, match="malformed"):
        rebuild({**raw, "dtype": "torch.object"}, 0)
    with pytest.raises(ValueError, match="malformed"):
        rebuild({**raw, "stride": [-1]}, 0)


def test_native_snapshot_sees_the_clock_slots_unchanged():
    """The slots the timer's clock goes through are found (libpython's clock_gettime at least) and, untouched,
    hold the value recorded or the address the symbol resolves to."""
    snap = NativeSnapshot.capture()
    symbols = {(Path(slot.library).name, slot.symbol) for slot, _, _ in snap.slots}
    assert any(lib.startswith("libpython") and sym == "clock_gettime" for lib, sym in symbols), symbols
    assert snap.global_callbacks is False
    assert snap.changed() == []


def test_odd_outputs_are_refused_clearly():
    with pytest.raises(OddOutput, match="conjugate"):
        read_raw(torch.randn(3, dtype=torch.complex64).conj(), 0)
    with pytest.raises(OddOutput, match="strided view spanning"):
        read_raw(torch.randn(1 << 20)[::64], 1)
    with pytest.raises(OddOutput, match="dense"):
        read_raw(torch.randn(4, 4).to_sparse(), 2)
    assert ctypes.sizeof(ctypes.c_float) == 4


@pytest.fixture(scope="module")
def results(suite, build_root) -> dict[str, EvalResult]:
    cfg = EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, seed=4040,
                       compile_timeout_s=600.0, run_timeout_s=120.0, compile_workers=2, threads=1,
                       anticheat=AntiCheatConfig(require_custom_kernel=True),
                       timing=TimingConfig(min_runs=5, max_runs=20, budget_s=0.5, warmup=1, target_rse=0.0))
    names = ("lazy_output_observer", "got_clock_shave", "inline_clock_shave", "honest_relu_strided",
             "honest_relu_loop")
    cands = [Candidate(task_id=TASK, source=(DATA / f"{n}.py").read_text(), label=n) for n in names]
    out = {c.label: r for c, r in zip(cands, evaluate_candidates([suite[TASK]], cands, cfg), strict=True)}
    # The lazy output once more with the runtime checks off (no RecordFunction check, no evidence): what the
    # raw-bytes reading alone makes of it (its build is cached).
    cfg.anticheat = AntiCheatConfig(require_custom_kernel=False, runtime_checks=False)
    (out["lazy_unhooked"],) = evaluate_candidates([suite[TASK]], cands[:1], cfg)
    for name, r in out.items():
        print(f"  {name}: {r.status.value} speedup {r.speedup} :: {r.message[:300]} FLAGS {r.flags}")
    return out


@pytest.mark.slow
def test_lazy_output_is_not_judged_correct(results):
    r = results["lazy_output_observer"]
    allowed = read_headers((DATA / "lazy_output_observer.py").read_text())["expect"].split("||")
    assert r.status.value in allowed, f"{r.status.value} at {r.speedup}x: {r.message}"
    assert not r.message.startswith("static check"), r.message


@pytest.mark.slow
def test_lazy_output_is_wrong_without_the_hook_check(results):
    """Item 1 alone: with no evidence judged, the output read without an op is what the forward left."""
    r = results["lazy_unhooked"]
    assert r.status == Status.INCORRECT, f"{r.status.value} at {r.speedup}x: {r.message}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["got_clock_shave", "inline_clock_shave"])
def test_redirected_clock_is_named(results, name):
    r = results[name]
    reason = read_headers((DATA / f"{name}.py").read_text())["reason"]
    assert r.status == Status.CHEAT_DETECTED, f"{r.status.value} at {r.speedup}x: {r.message}"
    assert reason in r.message, r.message


@pytest.mark.slow
@pytest.mark.parametrize("name", ["honest_relu_strided", "honest_relu_loop"])
def test_honest_extensions_stay_correct(results, name):
    """No native hook is seen in an honest extension; a strided output is read through its strides."""
    r = results[name]
    assert r.status == Status.CORRECT, f"{r.status.value}: {r.message}"


def test_sampled_values_of_a_strided_output_are_read_in_place():
    """The positions of a transposed output are gathered through its strides, never by copying it whole (the
    copy was counted as the candidate's time outside the clock: an honest transposed output convicted on the
    H200); the values are the ones of the contiguous layout, position for position."""
    import numpy as np

    from multikernelbench.engine.raw_outputs import secret_positions, values_at

    base = torch.randn(700, 300)
    t = base.t()
    assert not t.is_contiguous()
    pos = secret_positions(1234, 64, 4)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        got = values_at(t, pos, limit=16)
    copies = [e.name for e in prof.events() if e.name in ("aten::clone", "aten::copy_", "aten::contiguous")]
    assert copies == [], f"the whole output was copied to read {len(pos)} values: {copies}"
    want = t.contiguous().reshape(-1)[torch.from_numpy(np.mod(pos, t.numel()))]
    assert torch.equal(got, want)
    sliced = base[::2, 5:]  # a gap between rows and a storage offset
    assert torch.equal(values_at(sliced, pos, limit=16),
                       sliced.contiguous().reshape(-1)[torch.from_numpy(np.mod(pos, sliced.numel()))])
